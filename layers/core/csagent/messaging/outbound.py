"""Replies out through each platform's send API, with a timeout and bounded retries.

    Slack      POST {slack_api_base}/chat.postMessage            Bearer bot token, {channel, text}
    Telegram   POST {telegram_api_base}/bot<token>/sendMessage   {chat_id, text}
    WhatsApp   POST {whatsapp_api_base}/<phone_number_id>/messages  Bearer access token,
               {messaging_product: "whatsapp", to, type: "text", text: {body}}

429 and 5xx answers and network errors are retried by tenacity with exponential backoff and
full jitter (`wait_random_exponential`: a wait drawn between 0 and the doubling cap); a
`Retry-After` the platform sends is honoured, and one longer than the backoff cap ends the
attempts, leaving the retry to the queue. Other failures (a 4xx, Slack's `{"ok": false}`) are
final. The result is data (`Delivery`), never an exception; the worker decides what a failure
means. The requests go out through httpx (one pooled client per sender). httpx and tenacity are
imported on the first send, not at import. URLs are never logged: the Telegram one carries the
bot token.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from csagent.messaging.config import OutboundTokens
from csagent.messaging.models import Platform

if TYPE_CHECKING:  # pragma: no cover - typing only
    import httpx
    from tenacity import RetryCallState

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


class HttpxTransport:
    """`Transport` on one pooled httpx client (built on the first POST): a timeout becomes
    `TimeoutError` and any other network failure `ConnectionError`, both `OSError`s."""

    def __init__(self) -> None:
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(follow_redirects=False)
            return self._client

    def post(self, url: str, headers: Mapping[str, str], body: bytes, timeout_s: float) -> HttpAnswer:
        import httpx

        try:
            response = self._http().post(url, headers=dict(headers), content=body, timeout=timeout_s)
        except httpx.TimeoutException as exc:
            raise TimeoutError(type(exc).__name__) from exc
        except httpx.TransportError as exc:
            raise ConnectionError(type(exc).__name__) from exc
        return HttpAnswer(response.status_code, dict(response.headers.items()), response.content)


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
        self._transport = transport or HttpxTransport()
        self._sleep = sleep
        self._jitter = jitter

    def send(self, platform: Platform, chat_id: str, text: str) -> Delivery:
        from tenacity import Retrying, retry_if_result

        post = self._request(platform, chat_id, text)
        if post is None:
            return Delivery(ok=False, attempts=0, error=f"{platform.value} outbound is not configured")
        body = json.dumps(post.payload).encode("utf-8")
        headers = {"Content-Type": "application/json; charset=utf-8", **post.headers}
        config, attempts = self._config, itertools.count(1)

        def stop(state: RetryCallState) -> bool:
            """After max_attempts, or when the platform asks for a longer pause than we hold a
            worker for (the queue retries)."""
            retry_after = state.outcome.result()[1] if state.outcome is not None else None
            return state.attempt_number >= config.max_attempts or (
                retry_after is not None and retry_after > config.max_backoff_s)

        retrying = Retrying(
            stop=stop,
            wait=_Wait(config, self._jitter),
            retry=retry_if_result(lambda outcome: not outcome[0].ok and outcome[0].retryable),
            sleep=self._sleep,
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None)
        outcome = retrying(lambda: self._attempt(platform, post.url, headers, body, next(attempts)))
        delivery: Delivery = outcome[0]
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
        """One POST: the delivery so far and the wait the platform asked for (`Retry-After`)."""
        try:
            answer = self._transport.post(url, headers, body, self._config.timeout_s)
        except OSError as exc:  # connection refused, DNS, timeout
            return Delivery(ok=False, attempts=attempt, retryable=True, error=type(exc).__name__), None
        if answer.status == 429 or answer.status >= 500:
            return (Delivery(ok=False, attempts=attempt, status=answer.status, retryable=True,
                             error=f"HTTP {answer.status}"), _retry_after(answer.headers))
        if answer.status >= 300:
            final = Delivery(ok=False, attempts=attempt, status=answer.status, error=f"HTTP {answer.status}")
            return final, None
        if platform is Platform.SLACK:  # Slack answers 200 with {"ok": false, "error": ...}
            error = _slack_error(answer.body)
            if error is not None:
                return Delivery(ok=False, attempts=attempt, status=answer.status, error=error), None
        return Delivery(ok=True, attempts=attempt, status=answer.status), None


class _Wait:
    """The wait before the next attempt: what the platform asked for (`Retry-After`), else
    tenacity's full jitter (`wait_random_exponential`: a wait between 0 and backoff_s doubling per
    attempt, capped at max_backoff_s)."""

    def __init__(self, config: OutboundConfig, draw: Callable[[], float]) -> None:
        from tenacity import wait_random_exponential

        class FullJitter(wait_random_exponential):
            """`wait_random_exponential` with its uniform draw in [0, 1] injectable (tests)."""

            def __call__(self, state: RetryCallState) -> float:
                cap = super(wait_random_exponential, self).__call__(state)  # the exponential cap
                return float(cap) * draw()

        self._backoff = FullJitter(multiplier=config.backoff_s, max=config.max_backoff_s)

    def __call__(self, state: RetryCallState) -> float:
        retry_after = state.outcome.result()[1] if state.outcome is not None else None
        return float(retry_after) if retry_after is not None else self._backoff(state)


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
