"""Sessions table adapter: who owns a session, its status and turn count, and a per-session
lease so two requests on one session never run a turn at the same time (the second gets 409).

Item: {session_id, owner, status, turn_count, created_at, updated_at, lock_token?, lock_until?}
"""

from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import Any

from csagent.domain.errors import Conflict, Forbidden, NotFound


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


class DynamoDBSessions:
    def __init__(self, client: Any, table_name: str, lease_seconds: int = 60) -> None:
        self._ddb = client
        self._table = table_name
        self._lease_ms = lease_seconds * 1000

    @staticmethod
    def _record(item: dict[str, Any]) -> SessionRecord:
        return SessionRecord(
            session_id=item["session_id"]["S"], owner=item["owner"]["S"],
            status=item.get("status", {}).get("S", "active"),
            turn_count=int(item.get("turn_count", {}).get("N", "0")),
            created_at=int(item.get("created_at", {}).get("N", "0")),
            updated_at=int(item.get("updated_at", {}).get("N", "0")),
        )

    def get(self, session_id: str) -> SessionRecord | None:
        item = self._ddb.get_item(TableName=self._table, Key={"session_id": {"S": session_id}},
                                  ConsistentRead=True).get("Item")
        return self._record(item) if item else None

    def get_owned(self, session_id: str, owner: str) -> SessionRecord:
        record = self.get(session_id)
        if record is None:
            raise NotFound(f"session {session_id} does not exist")
        if record.owner != owner:
            raise Forbidden("this session belongs to another customer")
        return record

    def begin_turn(self, session_id: str, owner: str) -> Lease:
        """Create the session on first use, check ownership, and take the turn lease (one write)."""
        now = int(time.time() * 1000)
        token = uuid.uuid4().hex
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key={"session_id": {"S": session_id}},
                UpdateExpression=(
                    "SET #owner = if_not_exists(#owner, :owner), "
                    "created_at = if_not_exists(created_at, :now), "
                    "#status = if_not_exists(#status, :active), lock_token = :token, lock_until = :until"
                ),
                ConditionExpression=(
                    "(attribute_not_exists(#owner) OR #owner = :owner) "
                    "AND (attribute_not_exists(lock_until) OR lock_until < :now)"
                ),
                ExpressionAttributeNames={"#owner": "owner", "#status": "status"},
                ExpressionAttributeValues={
                    ":owner": {"S": owner}, ":now": {"N": str(now)}, ":active": {"S": "active"},
                    ":token": {"S": token}, ":until": {"N": str(now + self._lease_ms)},
                },
            )
        except self._ddb.exceptions.ConditionalCheckFailedException:
            record = self.get(session_id)
            if record is not None and record.owner != owner:
                raise Forbidden("this session belongs to another customer") from None
            raise Conflict("another message on this session is still being answered; retry shortly") from None
        return Lease(session_id, token)

    def end_turn(self, lease: Lease, *, status: str, turn: int) -> None:
        """Record the outcome and release the lease (one write)."""
        now = int(time.time() * 1000)
        # If the lease expired and another turn took it, that turn now owns the record.
        with contextlib.suppress(self._ddb.exceptions.ConditionalCheckFailedException):
            self._ddb.update_item(
                TableName=self._table,
                Key={"session_id": {"S": lease.session_id}},
                UpdateExpression="SET #status = :status, turn_count = :turn, updated_at = :now "
                                 "REMOVE lock_token, lock_until",
                ConditionExpression="lock_token = :token",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":status": {"S": status}, ":turn": {"N": str(turn)},
                                           ":now": {"N": str(now)}, ":token": {"S": lease.token}},
            )

    def release(self, lease: Lease) -> None:
        """Give the lease back after a failed turn, leaving status and counters unchanged."""
        with contextlib.suppress(self._ddb.exceptions.ConditionalCheckFailedException):
            self._ddb.update_item(
                TableName=self._table, Key={"session_id": {"S": lease.session_id}},
                UpdateExpression="REMOVE lock_token, lock_until", ConditionExpression="lock_token = :token",
                ExpressionAttributeValues={":token": {"S": lease.token}},
            )
