"""Knowledge ingest Lambda: the knowledge bucket's ObjectCreated events (prefix kb/uploads/) ->
one document parsed, embedded and swapped into the index per object (`csagent.knowledge.uploads`).

Thin by design: each object's key goes to one service call; a file the parsers refuse is logged
and reported, not raised (S3's asynchronous invoke would retry it for nothing); a store outage
raises, and the invoke is retried. Locally the same handler runs against moto's S3 with the
event in events/kb_ingest/ (`sam local invoke KnowledgeIngestFunction -e ...` in AWS terms).

The cyclic garbage collector is paused from the first statement until the first invocation has
built what every ingest reuses (the bucket's client and the knowledge-base service on Neo4j;
`csagent.coldstart`), not until its result: a document's parse makes cycles of its own (a PDF
reader's objects point back at the reader, up to a 20 MiB file's worth), which a collector paused
through it could not free, and which freezing would keep for the life of the container.
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

from typing import Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes import S3Event, S3EventBridgeNotificationEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from csagent import observability, runtime
from csagent.env_init import init_environment
from csagent.guardrails.pii import install_pii_filter

install_pii_filter()
logger = observability.get_logger()
tracer = observability.get_tracer()
metrics = observability.get_metrics()


def object_keys(event: dict[str, Any]) -> list[str]:
    """The uploaded keys: an EventBridge "Object Created" event (the template's rule) names one,
    as is; a bucket notification (`sam local generate-event s3 put`) URL-encodes its keys."""
    if "Records" in event:
        return [unquote_plus(record.s3.get_object.key) for record in S3Event(event).records]
    return [S3EventBridgeNotificationEvent(event).detail.object.key]


@init_environment("KnowledgeIngestEnv")  # a missing or invalid variable fails the cold start, naming it
@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        runtime.kb_uploads()  # made once per process (cached): what `ingest_kb_object` uses
        runtime.knowledge_base()
    finally:
        coldstart.resume_gc()  # frozen and back on before the first document is read
    results = []
    for key in object_keys(event):
        outcome = runtime.ingest_kb_object(key)
        if "rejected" in outcome:
            logger.warning("knowledge upload rejected", extra=outcome)
        else:
            logger.info("knowledge document ingested", extra=outcome)
        results.append(outcome)
    return {"results": results}
