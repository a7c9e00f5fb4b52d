"""Stream function: the router's HTTP API under uvicorn, behind the Lambda Web Adapter, so that
POST /v1/sessions/{session_id}/messages:stream reaches the customer event by event through a
Function URL in RESPONSE_STREAM mode (`run.sh` starts it; docs/streaming.md).

Thin by design, like the router: the same app from the core's composition root, with one
difference - no API Gateway authorizer stands in front of a Function URL, so the app verifies the
customer's Cognito token itself (`csagent.http.tokens`, JWT_ISSUER / JWT_AUDIENCE). There is no
Lambda handler to wrap, so EMF metrics are flushed after each request instead of each invocation.
Nothing connects to Neo4j or DynamoDB until the first request needs it.

The cyclic garbage collector is paused from the first statement until the first request other
than the Lambda Web Adapter's readiness probe has ended (`csagent.coldstart`). Not until the first
request: while the container starts, the adapter sends GETs to its readiness check path (`/`
unless AWS_LWA_READINESS_CHECK_PATH says otherwise) until the app answers, so its probe would
resume it before any customer's turn (and its graph build) ran. A first turn whose
client goes away ends its response while the turn runs on (its own thread, docs/streaming.md):
the collector is back on from then, and that turn's objects, not garbage yet, are frozen.
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

from typing import Any

from csagent import observability, runtime
from csagent.env_init import load_environment
from csagent.guardrails.pii import install_pii_filter
from csagent.http.app import create_app
from csagent.http.tokens import token_verifier
from csagent.http.web_adapter import WebAdapterSettings, is_readiness_probe, streaming_problems

# No Lambda handler to decorate: uvicorn imports this module once per container (the cold start),
# so the environment is checked here; a missing or invalid variable stops the start, naming it.
load_environment("StreamEnv")
install_pii_filter()  # emails, phones, card numbers and street addresses masked in every log line
logger = observability.get_logger()
metrics = observability.get_metrics()
adapter = WebAdapterSettings()
for problem in streaming_problems(adapter):
    logger.warning(problem)


def verify(authorization: str | None) -> dict[str, Any]:
    return token_verifier().claims(authorization)


class FlushMetrics:
    """ASGI wrapper: the metrics a request recorded are written once its response has ended."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await self.inner(scope, receive, send)
        finally:
            if scope.get("type") == "http":
                metrics.flush_metrics()


fastapi_app = create_app(runtime.conversation_service, runtime.health,
                         lambda: runtime.get_settings().auth_mode,
                         get_handoffs=runtime.handoff_service, get_approvals=runtime.approval_service,
                         text2cypher_debug=runtime.text2cypher_debug, verify_token=verify,
                         get_knowledge=runtime.knowledge_base, presign_kb_upload=runtime.presign_kb_upload,
                         get_catalogue=runtime.catalogue_sync)
# frozen and back on once the first request that is not the adapter's readiness probe has ended
app = coldstart.resume_gc_after_first_request(FlushMetrics(fastapi_app),
                                              unless=lambda scope: is_readiness_probe(scope, adapter))
