"""Webhook Lambda (Function URL, auth NONE: the platforms' signatures are the authentication).

Thin by design: the Function URL event becomes a `WebhookRequest`, the ingress verifies, parses
and queues it, and its answer becomes the Function URL response. Slack, Telegram and WhatsApp
get their 200 as soon as the messages are on the queue; the worker Lambda answers the customer.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from csagent.env_init import init_environment
from csagent.messaging import runtime
from csagent.messaging.errors import WebhookRejected
from csagent.messaging.models import WebhookRequest, WebhookResponse

logger = Logger(service="webhook")


@init_environment("WebhookEnv")  # a missing or invalid variable fails the cold start, naming it
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        request = WebhookRequest.from_function_url_event(event)
    except WebhookRejected as exc:
        return WebhookResponse.error(exc.status_code, exc.code, exc.message).to_function_url()
    return runtime.webhook_ingress().receive(request, now=runtime.now()).to_function_url()
