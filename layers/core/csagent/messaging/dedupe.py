"""Exactly-once processing of platform messages: one conditional write per claim on the
idempotency table.

Platforms deliver at least once (Slack retries after 3 s, WhatsApp for days) and SQS does too,
so the same platform message can reach the worker several times, even concurrently. Before doing
anything, the worker *claims* the message's key (`msg#<platform>:<message id>`):

    claim    conditional UpdateItem: succeeds if the key is new, or if an earlier claim was
             released (processing failed) or its lease ran out (the worker died); fails if the
             message is done or another worker holds a live lease → a duplicate, acknowledged
             without processing.
    record   the reply, once the turn has produced it: a retry after a failed send only resends
             it and never runs the turn twice.
    complete marks the message done (the stored reply is dropped: it may hold order data).
    release  on failure: the lease is dropped, so SQS's redelivery can claim it again; after
             maxReceiveCount deliveries SQS moves the message to the DLQ.

Item: {id, expiration (TTL, epoch s), lease_until, token, attempts, reply?, done_at?}. A key is
remembered for `ttl_s` (longer than any platform redelivers), and stays a duplicate even after
its TTL until DynamoDB actually deletes it, which is the right answer for such an old message.
The table is the Powertools idempotency table; the `msg#` prefix keeps these items apart from
the idempotency records of customer actions and from the identity links (`link#`, `verify#`).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KEY_PREFIX = "msg#"


@dataclass(frozen=True)
class Claim:
    """The right to process one message until `lease_until` (epoch seconds)."""

    key: str
    token: str
    lease_until: int
    attempt: int
    reply: str | None = None  # recorded by an earlier attempt that failed to deliver it


class LeaseLost(Exception):
    """The claim expired and another worker took the message over; stop without replying."""


class DynamoDBDedupe:
    def __init__(self, client: Any, table_name: str, *, ttl_s: int, lease_s: int,
                 clock: Callable[[], float] = time.time) -> None:
        self._ddb = client
        self._table = table_name
        self._ttl_s = ttl_s
        self._lease_s = lease_s
        self._clock = clock

    def claim(self, dedupe_key: str) -> Claim | None:
        """Take the message, or None when it is done or being processed elsewhere."""
        now = int(self._clock())
        token = uuid.uuid4().hex
        try:
            item = self._ddb.update_item(
                TableName=self._table,
                Key={"id": {"S": KEY_PREFIX + dedupe_key}},
                UpdateExpression=(
                    "SET #token = :token, lease_until = :lease, "
                    "expiration = if_not_exists(expiration, :expiration), "
                    "attempts = if_not_exists(attempts, :zero) + :one"
                ),
                ConditionExpression=(
                    "attribute_not_exists(id) OR (attribute_not_exists(done_at) AND lease_until < :now)"
                ),
                ExpressionAttributeNames={"#token": "token"},
                ExpressionAttributeValues={
                    ":token": {"S": token}, ":lease": {"N": str(now + self._lease_s)},
                    ":expiration": {"N": str(now + self._ttl_s)}, ":now": {"N": str(now)},
                    ":zero": {"N": "0"}, ":one": {"N": "1"},
                },
                ReturnValues="ALL_NEW",
            )["Attributes"]
        except self._ddb.exceptions.ConditionalCheckFailedException:
            return None
        return Claim(key=dedupe_key, token=token, lease_until=now + self._lease_s,
                     attempt=int(item["attempts"]["N"]), reply=(item.get("reply") or {}).get("S"))

    def record_reply(self, claim: Claim, reply: str) -> Claim:
        """Keep the reply with the claim (before sending it); `LeaseLost` if no longer ours."""
        self._owned_update(claim, "SET reply = :reply", {":reply": {"S": reply}})
        return Claim(key=claim.key, token=claim.token, lease_until=claim.lease_until,
                     attempt=claim.attempt, reply=reply)

    def complete(self, claim: Claim) -> None:
        """The message is done: every later delivery of it is a duplicate."""
        self._owned_update(claim, "SET done_at = :now REMOVE lease_until, #token, reply",
                           {":now": {"N": str(int(self._clock()))}})

    def release(self, claim: Claim) -> None:
        """Processing failed: let the next delivery claim it at once (never raises LeaseLost)."""
        with contextlib.suppress(LeaseLost):  # someone else holds it now: nothing of ours to release
            self._owned_update(claim, "SET lease_until = :zero", {":zero": {"N": "0"}})

    def _owned_update(self, claim: Claim, expression: str, values: dict[str, Any]) -> None:
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key={"id": {"S": KEY_PREFIX + claim.key}},
                UpdateExpression=expression,
                ConditionExpression="#token = :token",
                ExpressionAttributeNames={"#token": "token"},
                ExpressionAttributeValues={":token": {"S": claim.token}, **values},
            )
        except self._ddb.exceptions.ConditionalCheckFailedException as exc:
            raise LeaseLost(f"the claim on {claim.key} was taken over") from exc
