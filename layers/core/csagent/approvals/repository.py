"""Approvals in DynamoDB: the handoffs table, shared.

Why that table and not a new one: approvals are, like handoffs, case records a person works
on; the table is already retained on stack deletion, point-in-time recovered and granted to the
router, and its `by-status` index (status + created_at) gives agents the queue of pending
approvals, oldest first, for free. Items are kept apart by key and by kind:

    {handoff_id: "approval#<approval_id>", kind: "approval", <every Approval field>, updated_at}

Approval statuses (pending, approved, rejected, expired) never meet handoff statuses (open,
claimed, closed) in the index, and every query filters on `kind` as well.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from csagent.approvals.models import Approval, ApprovalStatus
from csagent.handoff.codec import count_status, format_timestamp, from_item, query_status_page, to_item

KIND = "approval"
KEY_PREFIX = "approval#"
_STORAGE_ONLY = frozenset({"handoff_id", "kind", "updated_at"})


def table_key(approval_id: str) -> dict[str, dict[str, str]]:
    return {"handoff_id": {"S": KEY_PREFIX + approval_id}}


class DynamoDBApprovals:
    """Implements `csagent.approvals.service.ApprovalStore`. Writes that meet a failed condition
    return None / False; the service reads the record again and decides what that means."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._ddb = client
        self._table = table_name

    def put_new(self, approval: Approval) -> bool:
        """Store a new approval; False when one with this id exists already."""
        item = {**to_item(approval.model_dump()), **table_key(approval.approval_id), "kind": {"S": KIND},
                "updated_at": {"S": format_timestamp(approval.created_at)}}
        try:
            self._ddb.put_item(TableName=self._table, Item=item,
                               ConditionExpression="attribute_not_exists(handoff_id)")
        except self._ddb.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def get(self, approval_id: str) -> Approval | None:
        item = self._ddb.get_item(TableName=self._table, Key=table_key(approval_id),
                                  ConsistentRead=True).get("Item")
        return self._approval(item) if item and item.get("kind", {}).get("S") == KIND else None

    def decide(self, approval_id: str, status: ApprovalStatus, agent: str, note: str | None,
               now: datetime) -> Approval | None:
        """pending → `status`, only while it is pending and not past its expiry at `now`."""
        update = "SET #status = :status, decided_by = :agent, decided_at = :now, updated_at = :now"
        values: dict[str, Any] = {":status": {"S": status.value}, ":agent": {"S": agent},
                                  ":now": {"S": format_timestamp(now)}}
        if note is not None:
            update += ", note = :note"
            values[":note"] = {"S": note}
        return self._update(approval_id, update, "#status = :pending AND expires_at > :now", values)

    def expire(self, approval_id: str, now: datetime) -> Approval | None:
        """pending → expired, only once `now` has reached its expiry."""
        return self._update(approval_id, "SET #status = :expired, updated_at = :now",
                            "#status = :pending AND expires_at <= :now",
                            {":expired": {"S": ApprovalStatus.EXPIRED.value},
                             ":now": {"S": format_timestamp(now)}})

    def list_by_status(self, status: ApprovalStatus, limit: int,
                       cursor: str | None = None) -> tuple[list[Approval], str | None]:
        """Approvals in `status`, oldest first, one page; the cursor continues the listing."""
        items, next_cursor = query_status_page(self._ddb, self._table, KIND, status.value, limit, cursor)
        return [self._approval(i) for i in items], next_cursor

    def count_by_status(self, status: ApprovalStatus) -> int:
        """How many approvals are in `status` (the whole queue)."""
        return count_status(self._ddb, self._table, KIND, status.value)

    def _update(self, approval_id: str, update: str, condition: str,
                values: dict[str, Any]) -> Approval | None:
        try:
            response = self._ddb.update_item(
                TableName=self._table, Key=table_key(approval_id), UpdateExpression=update,
                ConditionExpression=f"kind = :kind AND {condition}",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":kind": {"S": KIND},
                                           ":pending": {"S": ApprovalStatus.PENDING.value}, **values},
                ReturnValues="ALL_NEW",
            )
        except self._ddb.exceptions.ConditionalCheckFailedException:
            return None
        return self._approval(response["Attributes"])

    @staticmethod
    def _approval(item: dict[str, Any]) -> Approval:
        return Approval.model_validate(from_item(item, drop=_STORAGE_ONLY))
