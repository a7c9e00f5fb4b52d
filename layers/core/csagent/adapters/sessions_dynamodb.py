"""Sessions table adapter: who owns a session, how many turns it has had, and a per-session
lease so two requests on one session never run a turn at the same time (the second gets 409).

One write per turn. The lease remembers the checkpoint the turn started from (`lock_head`);
a turn ends by writing its checkpoint (LangGraph, durability "exit"), which moves the head.
So a lease is free when nobody holds it, when it has expired (a crashed turn), or when the
thread's head has moved past `lock_head` (the holder finished): no second write to release it.
A turn that fails with an error releases its lease explicitly.

Item: {session_id, owner, status, turn_count, created_at, updated_at,
       lock_token?, lock_until?, lock_head?}. `status` is the session's standing outside the
conversation (active, handed_off); each turn's own status lives in the checkpoint.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import Any

from csagent.domain.errors import Conflict, Forbidden, NotFound

NO_HEAD = "-"  # the lock_head of a session whose thread has no checkpoint yet


@dataclass(frozen=True)
class SessionRecord:
    session_id: str
    owner: str
    status: str
    turn_count: int
    created_at: int
    updated_at: int


@dataclass(frozen=True)
class Lease:
    session_id: str
    token: str


def _n(item: dict[str, Any], name: str) -> int:
    return int(item.get(name, {}).get("N", "0"))


class DynamoDBSessions:
    def __init__(self, client: Any, table_name: str, lease_seconds: int = 60) -> None:
        self._ddb = client
        self._table = table_name
        self._lease_ms = lease_seconds * 1000

    @staticmethod
    def _record(item: dict[str, Any]) -> SessionRecord:
        return SessionRecord(
            session_id=item["session_id"]["S"], owner=item["owner"]["S"],
            status=item.get("status", {}).get("S", "active"), turn_count=_n(item, "turn_count"),
            created_at=_n(item, "created_at"), updated_at=_n(item, "updated_at"),
        )

    def _item(self, session_id: str) -> dict[str, Any] | None:
        return self._ddb.get_item(TableName=self._table, Key={"session_id": {"S": session_id}},
                                  ConsistentRead=True).get("Item")

    def get(self, session_id: str) -> SessionRecord | None:
        item = self._item(session_id)
        return self._record(item) if item else None

    def get_owned(self, session_id: str, owner: str) -> SessionRecord:
        record = self.get(session_id)
        if record is None:
            raise NotFound(f"session {session_id} does not exist")
        if record.owner != owner:
            raise Forbidden("this session belongs to another customer")
        return record

    def begin_turn(self, session_id: str, owner: str, head: str | None) -> Lease:
        """Check ownership and take the turn lease (one conditional write).

        `head` is the id of the thread's latest checkpoint as the caller sees it now."""
        now = int(time.time() * 1000)
        head = head or NO_HEAD
        item = self._item(session_id)
        if item is not None and item["owner"]["S"] != owner:
            raise Forbidden("this session belongs to another customer")
        held = item is not None and "lock_token" in item
        if item is not None and held and _n(item, "lock_until") > now and \
                item.get("lock_head", {}).get("S") == head:
            raise Conflict("another message on this session is still being answered; retry shortly")
        token = uuid.uuid4().hex
        values: dict[str, Any] = {
            ":owner": {"S": owner}, ":now": {"N": str(now)}, ":active": {"S": "active"},
            ":token": {"S": token}, ":until": {"N": str(now + self._lease_ms)}, ":head": {"S": head},
            ":one": {"N": "1"},
        }
        if item is None:
            condition = "attribute_not_exists(session_id)"
        elif held:
            condition, values[":seen"] = "lock_token = :seen", item["lock_token"]
        else:
            condition = "attribute_not_exists(lock_token)"
        try:
            self._ddb.update_item(
                TableName=self._table, Key={"session_id": {"S": session_id}},
                UpdateExpression=(
                    "SET #owner = if_not_exists(#owner, :owner), "
                    "created_at = if_not_exists(created_at, :now), "
                    "#status = if_not_exists(#status, :active), updated_at = :now, "
                    "lock_token = :token, lock_until = :until, lock_head = :head ADD turn_count :one"
                ),
                ConditionExpression=condition,
                ExpressionAttributeNames={"#owner": "owner", "#status": "status"},
                ExpressionAttributeValues=values,
            )
        except self._ddb.exceptions.ConditionalCheckFailedException:
            raise Conflict("another message on this session is still being answered; retry shortly") from None
        return Lease(session_id, token)

    def release(self, lease: Lease) -> None:
        """Give the lease back after a failed turn (the turn count keeps the attempt)."""
        with contextlib.suppress(self._ddb.exceptions.ConditionalCheckFailedException):
            self._ddb.update_item(
                TableName=self._table, Key={"session_id": {"S": lease.session_id}},
                UpdateExpression="REMOVE lock_token, lock_until, lock_head",
                ConditionExpression="lock_token = :token",
                ExpressionAttributeValues={":token": {"S": lease.token}},
            )
