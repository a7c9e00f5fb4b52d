"""Adapters for human handoffs: the handoffs table (DynamoDB), the link on the session item, and
the handoff queue (SQS). Low-level boto3 clients, passed in; nothing is created at import.

Handoffs table item (hash key `handoff_id`; GSI `by-status` on `status` + `created_at`):
    {handoff_id, kind: "handoff", <every HandoffPackage field>, updated_at, published_at?}
`messages` is a list of maps, appended with `list_append`. Approvals share the table with
`kind: "approval"` and keys `approval#<id>` (see `csagent.approvals.repository`); their status
vocabulary (pending, approved, rejected, expired) never meets this one (open, claimed, closed),
and every query here also filters on `kind`.

Sessions table item (shape of `csagent.adapters.sessions_dynamodb`), plus two attributes:
    handoff_id       the session's open handoff (present exactly while `status` is handed_off)
    last_handoff_id  the handoff closed most recently (so the customer still sees its replies)

Every state change is one conditional write; opening and closing change the handoff and the
session together in one transaction, so a session is never `handed_off` without its handoff.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from csagent.domain.errors import DependencyUnavailable
from csagent.handoff.codec import (
    count_status,
    epoch_ms,
    format_timestamp,
    from_item,
    query_status_page,
    to_item,
    to_value,
)
from csagent.handoff.package import HandoffMessage, HandoffPackage, HandoffStatus
from csagent.handoff.service import CloseOutcome, SessionLink
from csagent.handoff.triggers import Urgency

KIND = "handoff"
SESSION_HANDED_OFF = "handed_off"
SESSION_ACTIVE = "active"
_STORAGE_ONLY = frozenset({"kind", "updated_at", "published_at"})


class DynamoDBHandoffs:
    """Implements `csagent.handoff.service.HandoffStore`. Methods return None / False when a condition
    fails; the service reads the record again and decides what that means."""

    def __init__(self, client: Any, handoffs_table: str, sessions_table: str) -> None:
        self._ddb = client
        self._table = handoffs_table
        self._sessions = sessions_table

    # -- reads --------------------------------------------------------------------------------
    def get(self, handoff_id: str) -> HandoffPackage | None:
        item = self._ddb.get_item(TableName=self._table, Key={"handoff_id": {"S": handoff_id}},
                                  ConsistentRead=True).get("Item")
        return self._package(item) if item and item.get("kind", {}).get("S") == KIND else None

    def session_link(self, session_id: str) -> SessionLink | None:
        item = self._ddb.get_item(
            TableName=self._sessions, Key={"session_id": {"S": session_id}}, ConsistentRead=True,
            ProjectionExpression="session_id, #owner, #status, handoff_id, last_handoff_id",
            ExpressionAttributeNames={"#owner": "owner", "#status": "status"},
        ).get("Item")
        if not item:
            return None
        return SessionLink(session_id=session_id, owner=item.get("owner", {}).get("S", ""),
                           status=item.get("status", {}).get("S", "active"),
                           handoff_id=item.get("handoff_id", {}).get("S"),
                           last_handoff_id=item.get("last_handoff_id", {}).get("S"))

    def list_by_status(self, status: HandoffStatus, limit: int,
                       cursor: str | None = None) -> tuple[list[HandoffPackage], str | None]:
        """Handoffs in `status`, oldest first, one page; the cursor continues the listing."""
        items, next_cursor = query_status_page(self._ddb, self._table, KIND, status.value, limit, cursor)
        return [self._package(i) for i in items], next_cursor

    def count_by_status(self, status: HandoffStatus) -> int:
        """How many handoffs are in `status` (the whole queue)."""
        return count_status(self._ddb, self._table, KIND, status.value)

    def is_published(self, handoff_id: str) -> bool:
        item = self._ddb.get_item(TableName=self._table, Key={"handoff_id": {"S": handoff_id}},
                                  ConsistentRead=True, ProjectionExpression="published_at").get("Item")
        return bool(item and "published_at" in item)

    # -- writes -------------------------------------------------------------------------------
    def create(self, package: HandoffPackage, *, now: datetime) -> bool:
        """Store the package and mark its session handed off, in one transaction. False when the
        session does not exist, belongs to another customer, or already has a handoff."""
        item = {**to_item(package.model_dump()), "kind": {"S": KIND},
                "updated_at": {"S": format_timestamp(now)}}
        try:
            self._ddb.transact_write_items(TransactItems=[
                {"Put": {"TableName": self._table, "Item": item,
                         "ConditionExpression": "attribute_not_exists(handoff_id)"}},
                {"Update": {
                    "TableName": self._sessions, "Key": {"session_id": {"S": package.session_id}},
                    "UpdateExpression": "SET #status = :handed_off, handoff_id = :hid, updated_at = :now",
                    "ConditionExpression": ("attribute_exists(session_id) AND #owner = :customer "
                                            "AND attribute_not_exists(handoff_id)"),
                    "ExpressionAttributeNames": {"#status": "status", "#owner": "owner"},
                    "ExpressionAttributeValues": {
                        ":handed_off": {"S": SESSION_HANDED_OFF}, ":hid": {"S": package.handoff_id},
                        ":now": {"N": str(epoch_ms(now))}, ":customer": {"S": package.customer_id}},
                }},
            ])
        except self._ddb.exceptions.TransactionCanceledException:
            return False
        return True

    def claim(self, handoff_id: str, agent: str, now: datetime) -> HandoffPackage | None:
        """open → claimed by `agent`; None when the handoff is not open (or does not exist)."""
        stamp = {"S": format_timestamp(now)}
        return self._update(
            handoff_id,
            "SET #status = :claimed, claimed_by = :agent, claimed_at = :now, updated_at = :now",
            "kind = :kind AND #status = :open",
            {":claimed": {"S": HandoffStatus.CLAIMED.value}, ":agent": {"S": agent}, ":now": stamp,
             ":open": {"S": HandoffStatus.OPEN.value}},
        )

    def append_message(self, handoff_id: str, message: HandoffMessage, *, max_messages: int,
                       session_id: str | None = None, claimed_by: str | None = None,
                       urgency: Urgency | None = None) -> HandoffPackage | None:
        """Append to the messages of a handoff that is not closed and has room. With `claimed_by`,
        only while that agent holds the claim; with `session_id`, only on that session's handoff;
        with `urgency`, the urgency is set too. None when a condition fails."""
        update = "SET messages = list_append(messages, :message), updated_at = :now"
        condition = "kind = :kind AND #status IN (:open, :claimed) AND size(messages) < :max"
        values: dict[str, Any] = {
            ":message": {"L": [to_value(message.model_dump())]}, ":now": {"S": format_timestamp(message.at)},
            ":open": {"S": HandoffStatus.OPEN.value}, ":claimed": {"S": HandoffStatus.CLAIMED.value},
            ":max": {"N": str(max_messages)},
        }
        if urgency is not None:
            update += ", urgency = :urgency"
            values[":urgency"] = {"S": urgency.value}
        if session_id is not None:
            condition += " AND session_id = :session"
            values[":session"] = {"S": session_id}
        if claimed_by is not None:
            condition += " AND #status = :claimed AND claimed_by = :agent"
            values[":agent"] = {"S": claimed_by}
        return self._update(handoff_id, update, condition, values)

    def close(self, package: HandoffPackage, agent: str, now: datetime) -> CloseOutcome:
        """claimed by `agent` → closed, and the session back to `active`, in one transaction.

        The session's lease is not consulted: turns never write the session's `status`, and a
        customer message racing the close finds the handoff closed (`append_message` → None)."""
        stamp = {"S": format_timestamp(now)}
        try:
            self._ddb.transact_write_items(TransactItems=[
                {"Update": {
                    "TableName": self._table, "Key": {"handoff_id": {"S": package.handoff_id}},
                    "UpdateExpression": "SET #status = :closed, closed_at = :now, updated_at = :now",
                    "ConditionExpression": "kind = :kind AND #status = :claimed AND claimed_by = :agent",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {
                        ":closed": {"S": HandoffStatus.CLOSED.value},
                        ":claimed": {"S": HandoffStatus.CLAIMED.value},
                        ":agent": {"S": agent}, ":now": stamp, ":kind": {"S": KIND}},
                }},
                {"Update": {
                    "TableName": self._sessions, "Key": {"session_id": {"S": package.session_id}},
                    "UpdateExpression": ("SET #status = :active, last_handoff_id = :hid, "
                                         "updated_at = :now_ms REMOVE handoff_id"),
                    "ConditionExpression": "handoff_id = :hid",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {
                        ":active": {"S": SESSION_ACTIVE}, ":hid": {"S": package.handoff_id},
                        ":now_ms": {"N": str(epoch_ms(now))}},
                }},
            ])
        except self._ddb.exceptions.TransactionCanceledException as exc:
            reasons = exc.response.get("CancellationReasons") or []
            if reasons and reasons[0].get("Code") == "ConditionalCheckFailed":
                return CloseOutcome.NOT_CLAIMED_BY_AGENT
            return CloseOutcome.SESSION_UNLINKED
        return CloseOutcome.CLOSED

    def close_unlinked(self, handoff_id: str, agent: str, now: datetime) -> HandoffPackage | None:
        """Close a handoff whose session no longer points at it (the session item expired or was
        reset): only the handoff record changes."""
        return self._update(
            handoff_id, "SET #status = :closed, closed_at = :now, updated_at = :now",
            "kind = :kind AND #status = :claimed AND claimed_by = :agent",
            {":closed": {"S": HandoffStatus.CLOSED.value}, ":claimed": {"S": HandoffStatus.CLAIMED.value},
             ":agent": {"S": agent}, ":now": {"S": format_timestamp(now)}},
        )

    def mark_published(self, handoff_id: str, now: datetime) -> None:
        self._ddb.update_item(TableName=self._table, Key={"handoff_id": {"S": handoff_id}},
                              UpdateExpression="SET published_at = :now",
                              ConditionExpression="attribute_exists(handoff_id)",
                              ExpressionAttributeValues={":now": {"S": format_timestamp(now)}})

    # -- helpers ------------------------------------------------------------------------------
    def _update(self, handoff_id: str, update: str, condition: str,
                values: dict[str, Any]) -> HandoffPackage | None:
        try:
            response = self._ddb.update_item(
                TableName=self._table, Key={"handoff_id": {"S": handoff_id}},
                UpdateExpression=update, ConditionExpression=condition,
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":kind": {"S": KIND}, **values}, ReturnValues="ALL_NEW",
            )
        except self._ddb.exceptions.ConditionalCheckFailedException:
            return None
        return self._package(response["Attributes"])

    @staticmethod
    def _package(item: dict[str, Any]) -> HandoffPackage:
        return HandoffPackage.model_validate(from_item(item, drop=_STORAGE_ONLY))


class SqsHandoffPublisher:
    """Implements `HandoffPublisher`: sends each new handoff package, as JSON, to the handoff
    queue (consumers: the agents' desk and its notifications). Delivery is at least once:
    consumers dedupe on `handoff_id`.

    `queue_url` is the URL, or a function that looks it up (`GetQueueUrl` by name, where the
    environment names the queue instead: the local stack), called on the first publish and
    remembered: a turn that hands nothing over makes no SQS call."""

    def __init__(self, client: Any, queue_url: str | Callable[[], str]) -> None:
        self._sqs = client
        self._queue_url = queue_url

    def _url(self) -> str:
        if callable(self._queue_url):
            self._queue_url = self._queue_url()
        return self._queue_url

    def publish(self, package: HandoffPackage) -> str:
        """Send the package; return the SQS message id. DependencyUnavailable if SQS fails (the
        queue's lookup included)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._sqs.send_message(
                QueueUrl=self._url(), MessageBody=package.model_dump_json(),
                MessageAttributes={
                    "event": {"DataType": "String", "StringValue": "handoff.opened"},
                    "urgency": {"DataType": "String", "StringValue": package.urgency.value},
                },
            )
        except (BotoCoreError, ClientError) as exc:
            raise DependencyUnavailable("the handoff queue is unavailable") from exc
        return str(response["MessageId"])
