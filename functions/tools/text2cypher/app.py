"""Tool Lambda: Text2Cypher (questions no template covers, over the catalogue part of the graph).

One invocation = one Map iteration of the dispatch state machine. Thin by design: parse the
event into `ToolEvent`, run the core tool, return the `ToolResult` as JSON. A malformed event is
answered with a failed ToolResult (VALIDATION); a retryable transient failure is raised as
`TransientToolError` so that the state machine's Retry applies (see csagent.tools.events).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import ValidationError, event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from csagent import runtime
from csagent.domain.models import ToolResult
from csagent.nlp.embeddings import get_embedder
from csagent.tools.context import ToolContext
from csagent.tools.events import ToolEvent, TransientToolError, malformed_event_result, run_tool_event
from csagent.tools.text2cypher import run

TOOL = "text2cypher"

logger = Logger()
tracer = Tracer()
metrics = Metrics()  # dimension "service": POWERTOOLS_SERVICE_NAME, one per tool function (template.yaml)


def _tool_context(event: ToolEvent) -> ToolContext:
    runtime.configure_text2cypher()  # the model spec and limits from the settings (once)
    return ToolContext(graph=runtime.graph_store(), customer_id=event.customer_id, embedder=get_embedder())


@event_parser(model=ToolEvent)
def _handle(event: ToolEvent, context: LambdaContext) -> ToolResult:
    return run_tool_event(event, run, _tool_context)


@logger.inject_lambda_context(correlation_id_path="session_id", clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)  # results hold customer data
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        result = _handle(event, context)
    except ValidationError as exc:
        logger.warning("malformed tool event", extra={"errors": exc.error_count()})
        result = malformed_event_result(event, TOOL, exc)
    except TransientToolError:
        metrics.add_metric(name="ToolTransientError", unit=MetricUnit.Count, value=1)
        raise  # the state machine's Retry (then Catch) handles it
    metrics.add_metric(name=f"Tool{result.status.value.title()}", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="ToolLatency", unit=MetricUnit.Milliseconds, value=result.latency_ms)
    return result.model_dump(mode="json")
