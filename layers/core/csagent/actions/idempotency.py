"""Exactly-once execution of customer actions with Powertools idempotency on DynamoDB.

`PowertoolsIdempotency.run_once(key, operation)` runs `operation` at most once per key and
stores what it returned (a JSON-serialisable dict): a second call with the same key returns the
stored dict without calling `operation` (so without touching Neo4j). While a first call is
running, a second raises `IdempotencyAlreadyInProgressError` (the tool reports TRANSIENT,
retryable). When `operation` raises, Powertools deletes the in-progress record and re-raises,
so nothing is stored for failures and a retry runs again.

This is the first of two guards. The second is in Neo4j itself (`csagent.actions.queries`): the
write transaction MERGEs the AuditEvent on the same key under a uniqueness constraint and makes
the change only when it created the event, so a lost or expired DynamoDB record cannot repeat
an effect either (belt and braces).

Table layout (template.yaml `IdempotencyTable`): hash key `id`, TTL attribute `expiration` -
Powertools' defaults. Records are keyed `"<key_prefix>#<md5 of the key>"`, with a fixed prefix so
the router (in-process locally) and the tool Lambda (in AWS) share records for the same key.

In-progress expiry: Powertools uses the Lambda context's remaining time to let an in-progress
record of a crashed invocation expire. Outside a handler there is no Lambda context, and the
record would block the key until its TTL (days). `InProgressBudget` stands in for the context
with a fixed budget (set it to the function's timeout). A real Lambda context is not used: the
runner is cached per process and would keep the first invocation's deadline.

No I/O at import: boto3 and Powertools are imported when a store is built.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

KEY_PREFIX = "csagent.customer_actions"
DEFAULT_EXPIRES_AFTER_S = 7 * 24 * 3600
"""How long a result is replayed: as long as a checkpointed conversation can be resumed."""
DEFAULT_IN_PROGRESS_S = 60
"""How long an unfinished execution blocks its key when there is no Lambda context."""


class IdempotentRunner(Protocol):
    """Runs an operation at most once per key and returns its (stored) result."""

    def run_once(self, key: str, operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        ...


class InProgressBudget:
    """Stands in for a Lambda context: a fixed remaining time, so an in-progress record of a
    crashed execution expires after `seconds` instead of blocking the key until its TTL."""

    def __init__(self, seconds: int = DEFAULT_IN_PROGRESS_S) -> None:
        self._millis = seconds * 1000

    def get_remaining_time_in_millis(self) -> int:
        return self._millis


def _call(*, request: dict[str, Any], operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The function Powertools wraps: `request` carries the key, `operation` does the work."""
    del request  # hashed by Powertools; the work needs nothing from it
    return operation()


class PowertoolsIdempotency:
    """`IdempotentRunner` over a Powertools persistence layer (DynamoDB in production)."""

    def __init__(self, persistence: BasePersistenceLayer, *,
                 expires_after_s: int = DEFAULT_EXPIRES_AFTER_S, in_progress_s: int = DEFAULT_IN_PROGRESS_S,
                 key_prefix: str = KEY_PREFIX) -> None:
        from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

        config = IdempotencyConfig(
            event_key_jmespath="idempotency_key", raise_on_no_idempotency_key=True,
            expires_after_seconds=expires_after_s,
            # Powertools only calls get_remaining_time_in_millis() on it.
            lambda_context=InProgressBudget(in_progress_s),  # type: ignore[arg-type]
        )
        self._once = idempotent_function(_call, data_keyword_argument="request",
                                         persistence_store=persistence, config=config, key_prefix=key_prefix)

    def run_once(self, key: str, operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        if not key:
            raise ValueError("an idempotency key is required")
        result: dict[str, Any] = self._once(request={"idempotency_key": key}, operation=operation)
        return result


def dynamodb_persistence(table_name: str, *, client: Any) -> BasePersistenceLayer:
    """The Powertools DynamoDB persistence layer on the template's table layout."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(table_name=table_name, key_attr="id", expiry_attr="expiration",
                                    boto3_client=client)


@lru_cache(maxsize=4)
def idempotency_store(table_name: str, region: str, endpoint_url: str | None = None,
                      expires_after_s: int = DEFAULT_EXPIRES_AFTER_S) -> PowertoolsIdempotency:
    """A process-wide runner per table (cached; built on first use, never at import).
    Tests call `idempotency_store.cache_clear()` after changing the environment."""
    import boto3

    kwargs: dict[str, Any] = {"region_name": region}
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    client = boto3.client("dynamodb", **kwargs)
    return PowertoolsIdempotency(dynamodb_persistence(table_name, client=client),
                                 expires_after_s=expires_after_s)
