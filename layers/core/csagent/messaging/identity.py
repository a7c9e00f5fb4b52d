"""Who a platform user is: the link from a platform account to a store customer, and the
verification that creates it.

A platform user has no JWT, so before any account data the assistant verifies identity the
store's way (tau-retail policy: "authenticate the user identity by locating their user id via
email, or via name + zip code"). Until a link exists the worker never calls the conversation, so
no order data can be returned to an unverified user.

Where the links live: the idempotency table (no new table), under `link#<platform>#<user>` with
the customer id and an `expiration` (TTL), so a link lasts `link_ttl_s` and the user verifies
again after it. Failed attempts are counted under `verify#<platform>#<user>` and lock
verification for a while after `max_attempts`, which stops someone from trying emails or
names until one matches. A dedicated links table (with an index by customer, to list or revoke a
customer's linked accounts) is proposed in infra/template-snippets/webhooks.yaml.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from csagent.messaging.models import InboundMessage, Platform
from csagent.messaging.replies import Replies
from csagent.ports import GraphStore

logger = logging.getLogger(__name__)

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_ZIP = re.compile(r"(?<!\d)(\d{5})(?:-\d{4})?(?!\d)")
_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")
MAX_NAME_WORDS = 12  # a credentials message is short; longer texts are not read as names

# Case-insensitive on both sides: people type emails and names in any case.
BY_EMAIL = (
    "MATCH (c:Customer) WHERE toLower(c.email) = toLower($email) "
    "RETURN c.customer_id AS customer_id LIMIT 2"
)
BY_NAME_AND_ZIP = (
    "MATCH (c:Customer) WHERE c.zip = $zip AND [toLower(c.first_name), toLower(c.last_name)] IN $names "
    "RETURN c.customer_id AS customer_id LIMIT 2"
)


@dataclass(frozen=True)
class Credentials:
    """What a message offers to prove identity: an email, or a zip with candidate names
    (every pair of adjacent words, lower-cased: "I'm Noah Brown, 80279" → (noah, brown) among others)."""

    email: str | None = None
    zip: str | None = None
    names: tuple[tuple[str, str], ...] = ()


def extract_credentials(text: str) -> Credentials | None:
    """The credentials in a message, or None when it offers neither an email nor name + zip."""
    email = _EMAIL.search(text)
    if email:
        return Credentials(email=email.group(0))
    zip_code = _ZIP.search(text)
    words = [w.lower() for w in _WORD.findall(_ZIP.sub(" ", text))]
    if not zip_code or len(words) < 2 or len(words) > MAX_NAME_WORDS:
        return None
    pairs = tuple(dict.fromkeys(zip(words, words[1:], strict=False)))
    return Credentials(zip=zip_code.group(1), names=pairs)


class CustomerDirectory:
    """Finds customers by their credentials with read queries on the store graph."""

    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph

    def find(self, credentials: Credentials) -> list[str]:
        """Customer ids matching (at most two: one is a match, two is ambiguous)."""
        if credentials.email:
            rows = self._graph.read(BY_EMAIL, {"email": credentials.email}, max_rows=2)
        else:
            rows = self._graph.read(BY_NAME_AND_ZIP, {"zip": credentials.zip,
                                                      "names": [list(p) for p in credentials.names]},
                                    max_rows=2)
        return [str(row["customer_id"]) for row in rows]


class LinkStore(Protocol):
    def customer_for(self, platform: Platform, user_id: str) -> str | None: ...
    def link(self, platform: Platform, user_id: str, customer_id: str) -> None: ...
    def failed_attempts(self, platform: Platform, user_id: str) -> int: ...
    def record_failure(self, platform: Platform, user_id: str) -> int: ...


class DynamoDBLinks:
    """`LinkStore` on the idempotency table (`link#…` and `verify#…` items, with TTLs)."""

    def __init__(self, client: Any, table_name: str, *, link_ttl_s: int, lockout_s: int,
                 clock: Callable[[], float] = time.time) -> None:
        self._ddb = client
        self._table = table_name
        self._link_ttl_s = link_ttl_s
        self._lockout_s = lockout_s
        self._clock = clock

    @staticmethod
    def link_key(platform: Platform, user_id: str) -> str:
        return f"link#{platform.value}#{user_id}"

    @staticmethod
    def attempts_key(platform: Platform, user_id: str) -> str:
        return f"verify#{platform.value}#{user_id}"

    def _live_item(self, key: str) -> dict[str, Any] | None:
        item = self._ddb.get_item(TableName=self._table, Key={"id": {"S": key}},
                                  ConsistentRead=True).get("Item")
        # DynamoDB deletes expired items lazily; an expired item is treated as gone.
        if item is None or int(item.get("expiration", {}).get("N", "0")) <= int(self._clock()):
            return None
        return item

    def customer_for(self, platform: Platform, user_id: str) -> str | None:
        item = self._live_item(self.link_key(platform, user_id))
        return item["customer_id"]["S"] if item else None

    def link(self, platform: Platform, user_id: str, customer_id: str) -> None:
        now = int(self._clock())
        self._ddb.put_item(TableName=self._table, Item={
            "id": {"S": self.link_key(platform, user_id)}, "customer_id": {"S": customer_id},
            "linked_at": {"N": str(now)}, "expiration": {"N": str(now + self._link_ttl_s)},
        })
        self._ddb.delete_item(TableName=self._table, Key={"id": {"S": self.attempts_key(platform, user_id)}})

    def failed_attempts(self, platform: Platform, user_id: str) -> int:
        item = self._live_item(self.attempts_key(platform, user_id))
        return int(item["attempts"]["N"]) if item else 0

    def record_failure(self, platform: Platform, user_id: str) -> int:
        """Count a failed attempt; the lockout window starts at the first failure of a series."""
        now = int(self._clock())
        key = {"id": {"S": self.attempts_key(platform, user_id)}}
        try:
            item = self._ddb.update_item(
                TableName=self._table, Key=key,
                UpdateExpression="ADD attempts :one SET expiration = if_not_exists(expiration, :until)",
                ConditionExpression="attribute_not_exists(expiration) OR expiration > :now",
                ExpressionAttributeValues={":one": {"N": "1"}, ":until": {"N": str(now + self._lockout_s)},
                                           ":now": {"N": str(now)}},
                ReturnValues="ALL_NEW",
            )["Attributes"]
        except self._ddb.exceptions.ConditionalCheckFailedException:
            # The previous series expired but is not deleted yet: start a new one.
            self._ddb.put_item(TableName=self._table, Item={
                **key, "attempts": {"N": "1"}, "expiration": {"N": str(now + self._lockout_s)}})
            return 1
        return int(item["attempts"]["N"])


class IdentityVerifier:
    """Links platform users to customers after the store's verification (email, or name + zip)."""

    def __init__(self, links: LinkStore, directory: CustomerDirectory, replies: Replies, *,
                 max_attempts: int, lockout_s: int) -> None:
        self._links = links
        self._directory = directory
        self._replies = replies
        self._max_attempts = max_attempts
        self._lockout_s = lockout_s

    def customer_for(self, message: InboundMessage) -> str | None:
        """The verified customer behind the message's sender, if linked."""
        return self._links.customer_for(message.platform, message.platform_user_id)

    def verify(self, message: InboundMessage) -> str:
        """Try the message as credentials; link on a unique match. Returns the reply to send."""
        platform, user = message.platform, message.platform_user_id
        if self._links.failed_attempts(platform, user) >= self._max_attempts:
            return self._replies.text("locked", minutes=max(1, self._lockout_s // 60))
        credentials = extract_credentials(message.text)
        if credentials is None:
            return self._replies.text("ask_identity")
        matches = self._directory.find(credentials)
        if len(matches) == 1:
            self._links.link(platform, user, matches[0])
            logger.info("linked a %s user to a customer", platform.value)
            return self._replies.text("verified")
        if len(matches) > 1:
            return self._replies.text("ambiguous")
        failures = self._links.record_failure(platform, user)
        logger.info("failed verification on %s (%d of %d)", platform.value, failures, self._max_attempts)
        if failures >= self._max_attempts:
            return self._replies.text("locked", minutes=max(1, self._lockout_s // 60))
        return self._replies.text("not_verified")

