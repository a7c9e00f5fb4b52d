"""Slack Events API: request signing (v0) and the events the assistant answers.

Slack signs every request with the app's signing secret:
`X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:{X-Slack-Request-Timestamp}:{raw body}"))`,
and a timestamp more than five minutes from now (either way) is refused as a possible replay.
Slack retries a delivery it thinks failed with `X-Slack-Retry-Num`; a retry is verified and
queued like the original, and the worker's dedupe (same channel and `ts`) makes sure the message
is answered once whichever copy arrives first.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from csagent.messaging.errors import ForgedRequest, MalformedRequest, StaleRequest
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

TOLERANCE_S = 300
_TIMESTAMP = re.compile(r"\d{1,12}", re.ASCII)


def sign(secret: str, timestamp: str, raw_body: bytes) -> str:
    """The `X-Slack-Signature` value Slack sends for this timestamp and body."""
    base = b"v0:" + timestamp.encode("ascii") + b":" + raw_body
    return "v0=" + hmac.new(secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


def verify(headers: Mapping[str, str], raw_body: bytes, secret: str, now: float) -> None:
    """Return if the request is Slack's and fresh; raise `ForgedRequest` or `StaleRequest`."""
    if not secret:
        raise ForgedRequest("no Slack signing secret is configured")
    timestamp = header(headers, "x-slack-request-timestamp")
    signature = header(headers, "x-slack-signature")
    if not timestamp or not signature:
        raise ForgedRequest("the Slack signature headers are missing")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise ForgedRequest("the Slack request timestamp is not a number of seconds")
    if abs(now - int(timestamp)) > TOLERANCE_S:
        raise StaleRequest(f"the Slack request timestamp is more than {TOLERANCE_S} s from now")
    expected = sign(secret, timestamp, raw_body)
    if not hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace")):
        raise ForgedRequest("the Slack signature does not match")


def retry_number(headers: Mapping[str, str]) -> int:
    """Which retry of a delivery this is (0 for the first attempt)."""
    value = header(headers, "x-slack-retry-num") or "0"
    return int(value) if value.isascii() and value.isdigit() else 0


class _Event(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    subtype: str | None = None
    bot_id: str | None = None
    user: str | None = None
    channel: str | None = None
    channel_type: str | None = None
    text: str | None = None
    ts: str | None = None


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    challenge: str | None = None
    event: _Event | None = None


def parse(raw_body: bytes) -> ParseResult:
    """An authentic Slack body → the message to answer, the URL-verification challenge, or why
    the event is ignored (bot messages, edits and deletions, joins, anything but a user's text)."""
    try:
        return _parse(_Envelope.model_validate(parse_json(raw_body)))
    except ValidationError as exc:
        raise MalformedRequest("the body is not a Slack Events API payload") from exc


def _parse(envelope: _Envelope) -> ParseResult:
    if envelope.type == "url_verification":
        if not envelope.challenge:
            raise MalformedRequest("url_verification without a challenge")
        return Challenge(body=envelope.challenge)
    event = envelope.event
    if envelope.type != "event_callback" or event is None:
        return Ignored(reason=f"slack {envelope.type} envelope")
    if event.type != "message":
        return Ignored(reason=f"slack {event.type} event")
    if event.subtype:
        return Ignored(reason=f"slack message subtype {event.subtype}")  # edits, deletions, bot_message...
    if event.bot_id:
        return Ignored(reason="slack message from a bot")
    if not (event.user and event.channel and event.ts and event.text and event.text.strip()):
        return Ignored(reason="slack message without user, channel, ts or text")
    sent_at = utc_from_epoch(event.ts)
    return (InboundMessage(
        platform=Platform.SLACK,
        platform_message_id=f"{event.channel}:{event.ts}",  # ts is unique within a channel
        platform_user_id=event.user,
        chat_id=event.channel,
        text=event.text,
        received_at=sent_at,
        direct=event.channel_type == "im",
    ),)
