"""Telegram Bot API webhooks: the secret token and the updates the assistant answers.

Telegram signs nothing: `setWebhook(secret_token=...)` makes it send that token in
`X-Telegram-Bot-Api-Secret-Token` with every update, and the webhook compares it in constant
time. There is no timestamp to check; replays of a real update are caught by the worker's
dedupe (chat id + message id).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from csagent.messaging.errors import ForgedRequest, MalformedRequest
from csagent.messaging.models import (
    Ignored,
    InboundMessage,
    ParseResult,
    Platform,
    header,
    parse_json,
    utc_from_epoch,
)


def verify(headers: Mapping[str, str], raw_body: bytes, secret: str, now: float) -> None:
    """Return if the request carries the bot's secret token; raise `ForgedRequest` otherwise.

    `raw_body` and `now` are unused (Telegram neither signs the body nor stamps the request);
    they keep the same signature as the other platforms'.
    """
    if not secret:
        raise ForgedRequest("no Telegram secret token is configured")
    token = header(headers, "x-telegram-bot-api-secret-token")
    if token is None or not hmac.compare_digest(token.encode("utf-8", "replace"), secret.encode("utf-8")):
        raise ForgedRequest("the Telegram secret token does not match")


class _User(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    is_bot: bool = False


class _Chat(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    type: str


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    message_id: int
    date: int
    chat: _Chat
    sender: _User | None = Field(default=None, alias="from")
    text: str | None = None


class _Update(BaseModel):
    model_config = ConfigDict(extra="ignore")

    update_id: int
    message: _Message | None = None


def parse(raw_body: bytes) -> ParseResult:
    """An authentic update → the text message to answer, or why it is ignored (edits, channel
    posts, callbacks, messages from bots, stickers and photos without text)."""
    try:
        return _parse(_Update.model_validate(parse_json(raw_body)))
    except ValidationError as exc:
        raise MalformedRequest("the body is not a Telegram update") from exc


def _parse(update: _Update) -> ParseResult:
    message = update.message
    if message is None:
        return Ignored(reason="telegram update without a new message")
    if message.sender is None or message.sender.is_bot:
        return Ignored(reason="telegram message not from a person")
    if not message.text or not message.text.strip():
        return Ignored(reason="telegram message without text")
    chat_id = str(message.chat.id)
    return (InboundMessage(
        platform=Platform.TELEGRAM,
        platform_message_id=f"{chat_id}:{message.message_id}",  # message ids are per chat
        platform_user_id=str(message.sender.id),
        chat_id=chat_id,
        text=message.text,
        received_at=utc_from_epoch(message.date),
        direct=message.chat.type == "private",
    ),)
