"""Webhook Lambda (Function URL, auth NONE: the platforms' signatures are the authentication).

Thin by design: the Function URL event becomes a `WebhookRequest`, the ingress verifies, parses
and queues it, and its answer becomes the Function URL response. Slack, Telegram and WhatsApp
get their 200 as soon as the messages are on the queue; the worker Lambda answers the customer.
The cyclic garbage collector is paused from the first statement to the first response
(`csagent.coldstart`).
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

from typing import Any

from aws_lambda_powertools import Logger

from csagent.env_init import init_environment
from csagent.messaging import runtime
from csagent.messaging.errors import WebhookRejected
from csagent.messaging.models import WebhookRequest, WebhookResponse

logger = Logger(service="webhook")


@coldstart.resume_gc_after_first_call  # frozen and back on once the first response is out
@init_environment("WebhookEnv")  # a missing or invalid variable fails the cold start, naming it
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        request = WebhookRequest.from_function_url_event(event)
    except WebhookRejected as exc:
        return WebhookResponse.error(exc.status_code, exc.code, exc.message).to_function_url()
    return runtime.webhook_ingress().receive(request, now=runtime.now()).to_function_url()
