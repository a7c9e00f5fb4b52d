"""What the handoff and approval records share: UTC timestamps that sort as strings, an
injectable clock, the DynamoDB item codec and opaque page cursors.

Timestamps are stored as fixed-width ISO strings (`2025-03-01T09:30:00.000000Z`): the handoffs
table's `by-status` index sorts on `created_at` as a string, so every timestamp must have the
same width or "oldest first" breaks (`...:00Z` would sort after `...:00.5Z`).

boto3 is imported only inside the codec functions, so the models stay cheap to import.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, PlainSerializer

from csagent.domain.errors import InvalidInput

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware. Services take one so tests can fix the time."""

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_now() -> datetime:
    """The wall clock in UTC (the default `Clock`)."""
    return datetime.now(UTC)


def format_timestamp(value: datetime) -> str:
    """A timezone-aware datetime as a fixed-width UTC string that sorts chronologically."""
    return value.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def epoch_ms(value: datetime) -> int:
    """Milliseconds since the epoch (the sessions table stores `updated_at` this way)."""
    return int(value.timestamp() * 1000)


def _aware_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("timestamps must carry a timezone")
    return value.astimezone(UTC)


Timestamp = Annotated[
    datetime, AfterValidator(_aware_utc), PlainSerializer(format_timestamp, return_type=str)
]
"""A timezone-aware datetime, normalised to UTC, serialised with `format_timestamp`."""


def _dynamo_safe(value: Any) -> Any:
    """Floats become Decimals (DynamoDB numbers); containers are converted recursively."""
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, Mapping):
        return {str(k): _dynamo_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_dynamo_safe(v) for v in value]
    return value


def to_item(values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Plain values (a `model_dump()`) → a DynamoDB item in attribute-value form; None is omitted."""
    from boto3.dynamodb.types import TypeSerializer

    serializer = TypeSerializer()
    return {k: serializer.serialize(v) for k, v in _dynamo_safe(values).items()}


def to_value(value: Any) -> dict[str, Any]:
    """One plain value → its DynamoDB attribute-value form (for expression values)."""
    from boto3.dynamodb.types import TypeSerializer

    return TypeSerializer().serialize(_dynamo_safe(value))


def from_item(item: Mapping[str, Mapping[str, Any]], *, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A DynamoDB item → plain values (numbers as Decimal; pydantic converts them), minus `drop`."""
    from boto3.dynamodb.types import TypeDeserializer

    deserializer = TypeDeserializer()
    return {k: deserializer.deserialize(dict(v)) for k, v in item.items() if k not in drop}


# Page cursors: the index's LastEvaluatedKey, opaque to callers. Only string attributes with the
# expected names are accepted back, so a forged cursor cannot widen a query.
_CURSOR_KEYS = frozenset({"handoff_id", "status", "created_at"})


def encode_cursor(last_key: Mapping[str, Mapping[str, str]] | None) -> str | None:
    """DynamoDB's LastEvaluatedKey → an opaque URL-safe string (None when there is no next page)."""
    if not last_key:
        return None
    plain = {k: v["S"] for k, v in last_key.items()}
    return base64.urlsafe_b64encode(json.dumps(plain, sort_keys=True).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, status: str) -> dict[str, dict[str, str]] | None:
    """An opaque cursor → ExclusiveStartKey for a `by-status` query on `status`; InvalidInput if forged."""
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        plain = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error):
        raise InvalidInput("cursor is not one this API returned") from None
    valid = (isinstance(plain, dict) and set(plain) == _CURSOR_KEYS
             and all(isinstance(v, str) for v in plain.values()) and plain["status"] == status)
    if not valid:
        raise InvalidInput("cursor is not one this API returned")
    return {k: {"S": v} for k, v in plain.items()}


STATUS_INDEX = "by-status"


def _status_query(table: str, kind: str, status: str) -> dict[str, Any]:
    return {
        "TableName": table, "IndexName": STATUS_INDEX,
        "KeyConditionExpression": "#status = :status", "FilterExpression": "kind = :kind",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":status": {"S": status}, ":kind": {"S": kind}},
    }


def count_status(ddb: Any, table: str, kind: str, status: str) -> int:
    """How many of the handoffs table's items of `kind` are in `status` (the whole queue, through
    the `by-status` index: a COUNT query, continued past each 1 MB page)."""
    kwargs: dict[str, Any] = {**_status_query(table, kind, status), "Select": "COUNT"}
    total = 0
    while True:
        page = ddb.query(**kwargs)
        total += int(page.get("Count", 0))
        if not page.get("LastEvaluatedKey"):
            return total
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def query_status_page(ddb: Any, table: str, kind: str, status: str, limit: int,
                      cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the handoffs table's items of `kind` in `status`, oldest first, through the
    `by-status` index (handoffs and approvals share the table); the cursor continues it."""
    kwargs: dict[str, Any] = {**_status_query(table, kind, status), "Limit": limit, "ScanIndexForward": True}
    start = decode_cursor(cursor, status)
    if start:
        kwargs["ExclusiveStartKey"] = start
    page = ddb.query(**kwargs)
    return list(page.get("Items", [])), encode_cursor(page.get("LastEvaluatedKey"))
