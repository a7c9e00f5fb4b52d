"""WhatsApp Cloud API webhooks: the subscription handshake, the payload signature and the
messages the assistant answers.

- Subscribing: Meta calls `GET ?hub.mode=subscribe&hub.verify_token=...&hub.challenge=...`;
  the webhook echoes the challenge when the verify token is ours.
- Deliveries: `POST` with `X-Hub-Signature-256: sha256=hex(HMAC-SHA256(app_secret, raw body))`.
  There is no timestamp header; replays are caught by the worker's dedupe (message `wamid`).
  One delivery may carry several messages (and status updates, which are ignored).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from csagent.messaging.errors import ForgedRequest, MalformedRequest
from csagent.messaging.models import (
    Challenge,
    Ignored,
    InboundMessage,
    ParseResult,
    Platform,
    header,
    parse_json,
    utc_from_epoch,
)

_PREFIX = "sha256="


def sign(app_secret: str, raw_body: bytes) -> str:
    """The `X-Hub-Signature-256` value Meta sends for this body."""
    return _PREFIX + hmac.new(app_secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()


def verify(headers: Mapping[str, str], raw_body: bytes, secret: str, now: float) -> None:
    """Return if the body is signed with the app secret; raise `ForgedRequest` otherwise.
    (`now` is unused: Meta does not stamp its requests.)"""
    if not secret:
        raise ForgedRequest("no WhatsApp app secret is configured")
    signature = header(headers, "x-hub-signature-256")
    if not signature:
        raise ForgedRequest("the X-Hub-Signature-256 header is missing")
    if not hmac.compare_digest(sign(secret, raw_body).encode("ascii"), signature.encode("utf-8", "replace")):
        raise ForgedRequest("the WhatsApp signature does not match")


def verify_subscription(query: Mapping[str, str], verify_token: str) -> Challenge:
    """The `GET` handshake: the challenge to echo when mode and verify token are right."""
    if not verify_token:
        raise ForgedRequest("no WhatsApp verify token is configured")
    token = query.get("hub.verify_token")
    if query.get("hub.mode") != "subscribe" or token is None:
        raise ForgedRequest("not a WhatsApp subscription request")
    if not hmac.compare_digest(token.encode("utf-8", "replace"), verify_token.encode("utf-8")):
        raise ForgedRequest("the WhatsApp verify token does not match")
    challenge = query.get("hub.challenge")
    if not challenge:
        raise MalformedRequest("the subscription request has no hub.challenge")
    return Challenge(body=challenge)


class _Text(BaseModel):
    body: str


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    sender: str = Field(alias="from")
    timestamp: int
    type: str
    text: _Text | None = None


class _Value(BaseModel):
    model_config = ConfigDict(extra="ignore")

    messages: list[_Message] = Field(default_factory=list)


class _Change(BaseModel):
    model_config = ConfigDict(extra="ignore")

    field: str
    value: _Value


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    changes: list[_Change] = Field(default_factory=list)


class _Notification(BaseModel):
    model_config = ConfigDict(extra="ignore")

    object: str
    entry: list[_Entry] = Field(default_factory=list)


def parse(raw_body: bytes) -> ParseResult:
    """An authentic notification → every text message in it, or why it is ignored (delivery and
    read statuses, media without text, other webhook fields)."""
    try:
        return _parse(_Notification.model_validate(parse_json(raw_body)))
    except ValidationError as exc:
        raise MalformedRequest("the body is not a WhatsApp Cloud API notification") from exc


def _parse(notification: _Notification) -> ParseResult:
    if notification.object != "whatsapp_business_account":
        return Ignored(reason=f"whatsapp {notification.object} notification")
    messages = tuple(
        InboundMessage(
            platform=Platform.WHATSAPP,
            platform_message_id=message.id,  # wamid.…, unique across WhatsApp
            platform_user_id=message.sender,
            chat_id=message.sender,  # Cloud API chats are one-to-one with the sender's number
            text=message.text.body,
            received_at=utc_from_epoch(message.timestamp),
            direct=True,
        )
        for entry in notification.entry
        for change in entry.changes
        if change.field == "messages"
        for message in change.value.messages
        if message.type == "text" and message.text is not None and message.text.body.strip()
    )
    return messages or Ignored(reason="whatsapp notification without text messages")
