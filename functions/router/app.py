"""Router Lambda: the HTTP API (API Gateway HTTP API, payload 2.0) served by FastAPI via Mangum.

Thin by design: the app is assembled from the core's composition root; nothing connects to
Neo4j or DynamoDB until the first request needs it. Under SnapStart the graph, the model and the
fixed texts' vectors are built before the snapshot instead (`csagent.warmup`). Around it, Powertools (from
`csagent.observability`): JSON logs with PII masked, X-Ray (a no-op outside Lambda) and EMF
metrics flushed once per invocation. The correlation id starts as the API request id; a message
turn replaces it with its session id (the session id is in the path, not in a field of the event).
The cyclic garbage collector is paused from the first statement to the first reply
(`csagent.coldstart`): the cold start's objects are long-lived, walking them only cost the reply.
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum

from csagent import observability, runtime, warmup
from csagent.env_init import init_environment
from csagent.guardrails.pii import install_pii_filter
from csagent.http.app import create_app

install_pii_filter()  # emails, phones, card numbers and street addresses masked in every log line
logger = observability.get_logger()  # Powertools Logger with pii_json_serializer
tracer = observability.get_tracer()
metrics = observability.get_metrics()

app = create_app(runtime.conversation_service, runtime.health, lambda: runtime.get_settings().auth_mode,
                 get_handoffs=runtime.handoff_service, get_approvals=runtime.approval_service,
                 text2cypher_debug=runtime.text2cypher_debug, get_knowledge=runtime.knowledge_base,
                 presign_kb_upload=runtime.presign_kb_upload, get_catalogue=runtime.catalogue_sync)
asgi = Mangum(app, lifespan="off")
# SnapStart (template.yaml): warmed once before the snapshot, reconnected after each restore.
warmup.register_snapstart_hooks(warmup.warm_router, env="RouterEnv")


@coldstart.resume_gc_after_first_call  # frozen and back on once the first reply is out
@init_environment("RouterEnv")  # a missing or invalid variable fails the cold start, naming it
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)  # responses hold customer data
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return asgi(event, context)  # type: ignore[arg-type]  # Mangum types the context as its own protocol
