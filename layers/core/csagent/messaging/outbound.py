"""Replies out through each platform's send API, with a timeout and bounded retries.

    Slack      POST {slack_api_base}/chat.postMessage            Bearer bot token, {channel, text}
    Telegram   POST {telegram_api_base}/bot<token>/sendMessage   {chat_id, text}
    WhatsApp   POST {whatsapp_api_base}/<phone_number_id>/messages  Bearer access token,
               {messaging_product: "whatsapp", to, type: "text", text: {body}}

429 and 5xx answers and network errors are retried with exponential backoff and jitter (a
`Retry-After` the platform sends is honoured; one longer than the backoff cap ends the attempts,
leaving the retry to the queue). Other failures (a 4xx, Slack's `{"ok": false}`) are final.
The result is data (`Delivery`), never an exception; the worker decides what a failure means.
Only the standard library is used (no HTTP client in the layer), and URLs are never logged: the
Telegram one carries the bot token.
"""

from __future__ import annotations

import json
import logging
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from csagent.messaging.config import OutboundTokens
from csagent.messaging.models import Platform

logger = logging.getLogger(__name__)

# The longest text each platform accepts in one message (Slack truncates beyond 40,000).
MAX_TEXT = {Platform.SLACK: 40_000, Platform.TELEGRAM: 4_096, Platform.WHATSAPP: 4_096}


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    headers: Mapping[str, str]
    body: bytes


class Transport(Protocol):
    def post(self, url: str, headers: Mapping[str, str], body: bytes, timeout_s: float) -> HttpAnswer:
        """POST and return the answer (any status); raise OSError on network errors and timeouts."""
        ...


class UrllibTransport:
    """`Transport` on urllib (stdlib)."""

    def post(self, url: str, headers: Mapping[str, str], body: bytes, timeout_s: float) -> HttpAnswer:
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return HttpAnswer(response.status, dict(response.headers.items()), response.read())
        except urllib.error.HTTPError as error:
            with error:
                return HttpAnswer(error.code, dict(error.headers.items()), error.read())


@dataclass(frozen=True)
class OutboundConfig:
    slack_api_base: str
    telegram_api_base: str
    whatsapp_api_base: str
    whatsapp_phone_number_id: str
    timeout_s: float = 5.0
    max_attempts: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0


@dataclass(frozen=True)
class Delivery:
    """How sending one reply went."""

    ok: bool
    attempts: int
    status: int | None = None
    retryable: bool = False
    error: str | None = None


@dataclass(frozen=True)
class _Post:
    url: str
    headers: dict[str, str]
    payload: dict[str, Any]


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def slack_post(base: str, token: str, channel: str, text: str) -> _Post:
    return _Post(f"{base.rstrip('/')}/chat.postMessage", {"Authorization": f"Bearer {token}"},
                 {"channel": channel, "text": clip(text, MAX_TEXT[Platform.SLACK])})


def telegram_post(base: str, token: str, chat_id: str, text: str) -> _Post:
    return _Post(f"{base.rstrip('/')}/bot{token}/sendMessage", {},
                 {"chat_id": chat_id, "text": clip(text, MAX_TEXT[Platform.TELEGRAM])})


def whatsapp_post(base: str, token: str, phone_number_id: str, to: str, text: str) -> _Post:
    return _Post(f"{base.rstrip('/')}/{phone_number_id}/messages", {"Authorization": f"Bearer {token}"},
                 {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "text",
                  "text": {"preview_url": False, "body": clip(text, MAX_TEXT[Platform.WHATSAPP])}})


class OutboundSender:
    """`send(platform, chat_id, text)` → `Delivery`."""

    def __init__(self, config: OutboundConfig, tokens: Callable[[], OutboundTokens], *,
                 transport: Transport | None = None, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[], float] = random.random) -> None:
        self._config = config
        self._tokens = tokens  # called per send: rotated tokens apply without a restart
        self._transport = transport or UrllibTransport()
        self._sleep = sleep
        self._jitter = jitter

    def send(self, platform: Platform, chat_id: str, text: str) -> Delivery:
        post = self._request(platform, chat_id, text)
        if post is None:
            return Delivery(ok=False, attempts=0, error=f"{platform.value} outbound is not configured")
        body = json.dumps(post.payload).encode("utf-8")
        headers = {"Content-Type": "application/json; charset=utf-8", **post.headers}
        delivery = Delivery(ok=False, attempts=0)
        for attempt in range(1, self._config.max_attempts + 1):
            delivery, wait = self._attempt(platform, post.url, headers, body, attempt)
            if delivery.ok or not delivery.retryable or attempt == self._config.max_attempts:
                break
            if wait is None or wait > self._config.max_backoff_s:
                break  # the platform asks for a longer pause than we hold a worker for: the queue retries
            self._sleep(wait)
        if not delivery.ok:
            logger.warning("%s send failed after %d attempt(s): %s", platform.value, delivery.attempts,
                           delivery.error)
        return delivery

    def _request(self, platform: Platform, chat_id: str, text: str) -> _Post | None:
        config, tokens = self._config, self._tokens()
        if platform is Platform.SLACK and tokens.slack_bot_token:
            return slack_post(config.slack_api_base, tokens.slack_bot_token, chat_id, text)
        if platform is Platform.TELEGRAM and tokens.telegram_bot_token:
            return telegram_post(config.telegram_api_base, tokens.telegram_bot_token, chat_id, text)
        if platform is Platform.WHATSAPP and tokens.whatsapp_access_token and config.whatsapp_phone_number_id:
            return whatsapp_post(config.whatsapp_api_base, tokens.whatsapp_access_token,
                                 config.whatsapp_phone_number_id, chat_id, text)
        return None

    def _attempt(self, platform: Platform, url: str, headers: Mapping[str, str], body: bytes,
                 attempt: int) -> tuple[Delivery, float | None]:
        """One POST: the delivery so far and how long to wait before the next attempt."""
        backoff = min(self._config.max_backoff_s, self._config.backoff_s * 2 ** (attempt - 1))
        backoff *= 0.5 + self._jitter() / 2  # "equal jitter": spreads retries of many workers
        try:
            answer = self._transport.post(url, headers, body, self._config.timeout_s)
        except OSError as exc:  # connection refused, DNS, timeout
            return Delivery(ok=False, attempts=attempt, retryable=True, error=type(exc).__name__), backoff
        if answer.status == 429 or answer.status >= 500:
            wait = _retry_after(answer.headers)
            return (Delivery(ok=False, attempts=attempt, status=answer.status, retryable=True,
                             error=f"HTTP {answer.status}"), backoff if wait is None else wait)
        if answer.status >= 300:
            final = Delivery(ok=False, attempts=attempt, status=answer.status, error=f"HTTP {answer.status}")
            return final, None
        if platform is Platform.SLACK:  # Slack answers 200 with {"ok": false, "error": ...}
            error = _slack_error(answer.body)
            if error is not None:
                return Delivery(ok=False, attempts=attempt, status=answer.status, error=error), None
        return Delivery(ok=True, attempts=attempt, status=answer.status), None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _slack_error(body: bytes) -> str | None:
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        return "slack answered with a body that is not JSON"
    if isinstance(document, dict) and document.get("ok") is True:
        return None
    return str(document.get("error", "unknown")) if isinstance(document, dict) else "unknown"
