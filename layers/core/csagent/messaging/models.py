"""The shapes the messaging edge works with: an authenticated inbound message, the other things
a webhook call can turn out to be (a challenge to echo, an event to ignore), and the HTTP
request and response of a Lambda Function URL in a form the core can test without Lambda.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from csagent.messaging.errors import MalformedRequest


class Platform(StrEnum):
    SLACK = "slack"
    TELEGRAM = "telegram"
    WHATSAPP = "whatsapp"


class InboundMessage(BaseModel):
    """One text message a platform user sent the store's bot; the body of a webhook queue message.

    Ids are the platform's own, as strings: `platform_message_id` is unique per platform (the
    parsers qualify it with the chat where the platform only numbers messages per chat), so
    `dedupe_key` names one message for exactly-once processing.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    platform: Platform
    platform_message_id: str = Field(min_length=1, max_length=256)
    platform_user_id: str = Field(min_length=1, max_length=128)
    chat_id: str = Field(min_length=1, max_length=128)
    text: str = Field(max_length=40_000, description="As written; the worker enforces the turn limit.")
    received_at: AwareDatetime = Field(description="When the platform received it (its own timestamp).")
    direct: bool = Field(default=True, description="A one-to-one chat with the bot (not a group or channel).")

    @property
    def dedupe_key(self) -> str:
        return f"{self.platform.value}:{self.platform_message_id}"


class Challenge(BaseModel):
    """A subscription handshake: the webhook answers 200 with `body` and nothing is enqueued."""

    model_config = ConfigDict(frozen=True)

    body: str
    content_type: str = "text/plain"


class Ignored(BaseModel):
    """An authentic event the assistant does not answer (bot echo, edit, delivery receipt...)."""

    model_config = ConfigDict(frozen=True)

    reason: str


ParseResult = tuple[InboundMessage, ...] | Challenge | Ignored
"""What a platform's `parse` returns: the messages to enqueue (WhatsApp may batch several into
one delivery; Slack and Telegram send one), a challenge to echo, or an event to ignore."""


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value by case-insensitive name (Function URLs lower-case them; tests may not)."""
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def parse_json(raw_body: bytes) -> dict[str, Any]:
    """The body as a JSON object, or `MalformedRequest` (after the signature was checked)."""
    try:
        document = json.loads(raw_body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedRequest("the body is not valid JSON") from exc
    if not isinstance(document, dict):
        raise MalformedRequest("the body is not a JSON object")
    return document


def utc_from_epoch(seconds: float | str) -> datetime:
    """A platform's epoch timestamp as an aware UTC datetime, or `MalformedRequest`."""
    try:
        return datetime.fromtimestamp(float(seconds), tz=UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise MalformedRequest(f"{seconds!r} is not an epoch timestamp") from exc


class WebhookRequest(BaseModel):
    """An HTTP request as the webhook sees it: header names lower-cased, the body as raw bytes
    (signatures are computed over the exact bytes the platform sent)."""

    model_config = ConfigDict(frozen=True)

    method: str
    path: str
    headers: dict[str, str] = Field(default_factory=dict)
    query: dict[str, str] = Field(default_factory=dict)
    body: bytes = b""

    @classmethod
    def from_function_url_event(cls, event: Mapping[str, Any]) -> WebhookRequest:
        """Read a Lambda Function URL event (payload format 2.0), base64-decoding the body if the
        event says it is encoded."""
        http = (event.get("requestContext") or {}).get("http") or {}
        raw = event.get("body") or ""
        if event.get("isBase64Encoded"):
            try:
                body = base64.b64decode(raw, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise MalformedRequest("the body is not valid base64") from exc
        else:
            body = raw.encode("utf-8")
        headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
        query = {str(k): str(v) for k, v in (event.get("queryStringParameters") or {}).items()}
        return cls(method=str(http.get("method") or "").upper(), path=str(event.get("rawPath") or "/"),
                   headers=headers, query=query, body=body)


class WebhookResponse(BaseModel):
    """What the webhook answers; `to_function_url` is the Lambda Function URL response shape."""

    model_config = ConfigDict(frozen=True)

    status_code: int
    body: str
    content_type: str = "application/json"

    @classmethod
    def of_json(cls, status_code: int, payload: Mapping[str, Any]) -> WebhookResponse:
        return cls(status_code=status_code, body=json.dumps(payload, separators=(",", ":")))

    @classmethod
    def error(cls, status_code: int, code: str, message: str) -> WebhookResponse:
        return cls.of_json(status_code, {"error": {"code": code, "message": message}})

    def to_function_url(self) -> dict[str, Any]:
        return {"statusCode": self.status_code, "headers": {"content-type": self.content_type},
                "body": self.body, "isBase64Encoded": False}
