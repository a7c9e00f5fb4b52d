"""Per-customer rate limit on DynamoDB: a fixed-window counter with one conditional write.

    UpdateItem  Key: {pk: "rl#<customer>#<window start>"}
                UpdateExpression: ADD #count :one SET #ttl = if_not_exists(#ttl, :expires)
                ConditionExpression: attribute_not_exists(#count) OR #count < :limit

The condition and the increment are one atomic operation, so concurrent requests (several warm
Lambdas) can never push a window past the limit: the request that would exceed it fails the
condition and gets `RateLimited(retry_after_s)`, which the HTTP edge turns into 429 with a
`Retry-After` header. Each window has its own item, expired by DynamoDB TTL one window after it
ends (nothing ever reads an old window; TTL only keeps the table small).

Why a fixed window and not a token bucket: one write per message and no read, and the failure
mode (up to 2x the limit across a window boundary) is harmless for a chat; API Gateway's stage
throttle still caps the raw request rate.

If DynamoDB itself fails (throttled, unreachable) the limiter lets the message through and logs
a warning (fail open, configurable): a rate limiter outage must not take the assistant down.
The table is `RateLimitTable` in `template.yaml` (hash key `pk`, TTL attribute `ttl`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.domain.errors import DependencyUnavailable, DomainError

logger = logging.getLogger(__name__)


class RateLimited(DomainError):
    """The customer sent more messages in this window than allowed. HTTP 429 + `Retry-After`."""

    status_code = 429
    code = "rate_limited"

    def __init__(self, retry_after_s: int, message: str | None = None) -> None:
        super().__init__(message or f"too many messages; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class RateLimitSettings(BaseSettings):
    """`RATELIMIT_TABLE` (set by the template), `RATE_LIMIT_MAX_MESSAGES`, `RATE_LIMIT_WINDOW_S`,
    `RATE_LIMIT_FAIL_OPEN`."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    ratelimit_table: str = "csagent-local-ratelimits"
    rate_limit_max_messages: int = Field(default=20, ge=1)
    """20 messages a minute: a fast typist in a lively chat sends well under 10; 20 leaves room
    for retries after an error while stopping a script hammering the model tier."""
    rate_limit_window_s: int = Field(default=60, ge=1)
    rate_limit_fail_open: bool = True


@dataclass(frozen=True)
class RateLimitStatus:
    """What is left in the current window (`remaining` is None when the limiter failed open)."""

    limit: int
    remaining: int | None
    reset_in_s: float


class DynamoDBRateLimiter:
    """Fixed-window counters per customer in the rate-limit table."""

    def __init__(self, client: Any, table_name: str, *, limit: int = 20, window_s: int = 60,
                 clock: Callable[[], float] = time.time, fail_open: bool = True) -> None:
        if limit < 1 or window_s < 1:
            raise ValueError("limit and window_s must be at least 1")
        self._ddb = client
        self._table = table_name
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._fail_open = fail_open

    @staticmethod
    def key(customer_id: str, window_start: int) -> str:
        """The item key of one customer's window."""
        return f"rl#{customer_id}#{window_start}"

    def consume(self, customer_id: str) -> RateLimitStatus:
        """Count one message for `customer_id`; raise `RateLimited` if the window is full."""
        from botocore.exceptions import BotoCoreError, ClientError  # botocore is loaded with the client

        now = self._clock()
        window_start = int(now // self.window_s) * self.window_s
        window_end = window_start + self.window_s
        try:
            response = self._ddb.update_item(
                TableName=self._table,
                Key={"pk": {"S": self.key(customer_id, window_start)}},
                UpdateExpression="ADD #count :one SET #ttl = if_not_exists(#ttl, :expires)",
                ConditionExpression="attribute_not_exists(#count) OR #count < :limit",
                ExpressionAttributeNames={"#count": "count", "#ttl": "ttl"},
                ExpressionAttributeValues={":one": {"N": "1"}, ":limit": {"N": str(self.limit)},
                                           ":expires": {"N": str(window_end + self.window_s)}},
                ReturnValues="UPDATED_NEW",
            )
        except self._ddb.exceptions.ConditionalCheckFailedException:
            raise RateLimited(max(1, math.ceil(window_end - now))) from None
        except (ClientError, BotoCoreError) as exc:  # the table refused or could not be reached
            return self._store_failed(exc, window_end - now)
        count = int(response["Attributes"]["count"]["N"])
        return RateLimitStatus(self.limit, self.limit - count, round(window_end - now, 3))

    def _store_failed(self, exc: Exception, reset_in_s: float) -> RateLimitStatus:
        if not self._fail_open:
            raise DependencyUnavailable("the rate limiter is unavailable") from exc
        logger.warning("rate limiter unavailable, letting the message through (%s)", type(exc).__name__)
        return RateLimitStatus(self.limit, None, round(reset_in_s, 3))


@lru_cache(maxsize=1)
def get_rate_limit_settings() -> RateLimitSettings:
    """The process-wide rate-limit settings (cached; tests call `.cache_clear()`)."""
    return RateLimitSettings()


def rate_limiter_from_settings(client: Any, settings: RateLimitSettings | None = None) -> DynamoDBRateLimiter:
    """A limiter over `client` (a boto3 DynamoDB client) configured from the settings."""
    s = settings or get_rate_limit_settings()
    return DynamoDBRateLimiter(client, s.ratelimit_table, limit=s.rate_limit_max_messages,
                               window_s=s.rate_limit_window_s, fail_open=s.rate_limit_fail_open)
