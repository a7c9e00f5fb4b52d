"""The webhook use case: route a platform's HTTP request, verify it, parse it, queue the messages
and answer at once.

Nothing here waits on the conversation: platforms want an answer within a few seconds (Slack
retries after 3 s), so the webhook only checks the request and hands the messages to the queue;
the worker answers the customer. A forged, stale or malformed request is answered with a JSON
error and nothing is queued.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Protocol

from csagent.domain.errors import DependencyUnavailable
from csagent.messaging import slack, telegram, whatsapp
from csagent.messaging.config import VerificationSecrets
from csagent.messaging.errors import MethodNotAllowed, PayloadTooLarge, UnknownPlatform, WebhookRejected
from csagent.messaging.models import (
    Challenge,
    Ignored,
    ParseResult,
    Platform,
    WebhookRequest,
    WebhookResponse,
)
from csagent.messaging.queue import MessageQueue

logger = logging.getLogger(__name__)

# The path each platform is configured to call (one Function URL serves all three).
ROUTES: Mapping[str, Platform] = {
    "/slack/events": Platform.SLACK,
    "/telegram": Platform.TELEGRAM,
    "/whatsapp": Platform.WHATSAPP,
}



class PlatformCodec(Protocol):
    """What each platform module (`slack`, `telegram`, `whatsapp`) provides."""

    def verify(self, headers: Mapping[str, str], raw_body: bytes, secret: str, now: float) -> None: ...
    def parse(self, raw_body: bytes) -> ParseResult: ...


CODECS: Mapping[Platform, PlatformCodec] = {
    Platform.SLACK: slack,
    Platform.TELEGRAM: telegram,
    Platform.WHATSAPP: whatsapp,
}


def secret_for(platform: Platform, secrets: VerificationSecrets) -> str:
    """The secret that authenticates a platform's POSTs."""
    return {
        Platform.SLACK: secrets.slack_signing_secret,
        Platform.TELEGRAM: secrets.telegram_secret_token,
        Platform.WHATSAPP: secrets.whatsapp_app_secret,
    }[platform]


class WebhookIngress:
    """`receive(request, now)` → the HTTP answer; queues the messages of authentic requests."""

    def __init__(self, secrets: Callable[[], VerificationSecrets], queue: MessageQueue, *,
                 max_body_bytes: int = 256 * 1024) -> None:
        self._secrets = secrets  # called per request: rotated secrets apply without a restart
        self._queue = queue
        self._max_body_bytes = max_body_bytes

    def receive(self, request: WebhookRequest, now: float) -> WebhookResponse:
        try:
            return self._receive(request, now)
        except WebhookRejected as exc:
            logger.warning("webhook rejected %s %s: %s", request.method, request.path, exc.code)
            return WebhookResponse.error(exc.status_code, exc.code, exc.message)
        except DependencyUnavailable as exc:
            # Not 2xx, so the platform delivers again later; the worker dedupes if it got through.
            return WebhookResponse.error(exc.status_code, exc.code, exc.message)

    def _receive(self, request: WebhookRequest, now: float) -> WebhookResponse:
        platform = ROUTES.get(request.path.rstrip("/") or "/")
        if platform is None:
            raise UnknownPlatform(f"no messaging platform at {request.path}")
        secrets = self._secrets()
        if platform is Platform.WHATSAPP and request.method == "GET":
            return _challenge(whatsapp.verify_subscription(request.query, secrets.whatsapp_verify_token))
        if request.method != "POST":
            raise MethodNotAllowed(f"{request.method} is not accepted here")
        secret = secret_for(platform, secrets)
        if not secret:
            raise UnknownPlatform(f"{platform.value} is not configured")
        if len(request.body) > self._max_body_bytes:
            raise PayloadTooLarge(f"the body is over {self._max_body_bytes} bytes")
        codec = CODECS[platform]
        codec.verify(request.headers, request.body, secret, now)
        result = codec.parse(request.body)
        if isinstance(result, Challenge):
            return _challenge(result)
        if isinstance(result, Ignored):
            logger.info("webhook %s ignored: %s", platform.value, result.reason)
            return WebhookResponse.of_json(200, {"ok": True, "queued": 0})
        self._queue.enqueue(result)
        retry = slack.retry_number(request.headers) if platform is Platform.SLACK else 0
        logger.info("webhook %s queued %d message(s)%s", platform.value, len(result),
                    f" (platform retry {retry})" if retry else "")
        return WebhookResponse.of_json(200, {"ok": True, "queued": len(result)})


def _challenge(challenge: Challenge) -> WebhookResponse:
    return WebhookResponse(status_code=200, body=challenge.body, content_type=challenge.content_type)
