"""The one shape of every tool Lambda (`functions/tools/<tool>/app.py`).

One invocation = one Map iteration of the dispatch state machine: parse the event into a
`ToolEvent` (Powertools parser), run the core tool, return the `ToolResult` as JSON. A
malformed event is answered with a failed ToolResult (VALIDATION); every tool failure is a
failed ToolResult too, which the router heals (see `csagent.tools.events`). Logger (session id
as correlation id), Tracer and Metrics as everywhere; results hold customer data, so they are
never captured in traces.

This is a tool Lambda's composition root: fault injection (`FAULTS`, refused in prod; tests,
`make faults`) is wired here and nowhere in the tools, as the router wires it in
`csagent.runtime`: the graph store is wrapped for "neo4j" faults, the tool for faults of its name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csagent.domain.models import Task, ToolResult
from csagent.tools.context import ToolContext

ToolRun = Callable[[Task, ToolContext], ToolResult]
LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def _default_context(event: Any) -> ToolContext:
    from csagent import runtime
    from csagent.nlp.embeddings import get_embedder
    from csagent.resilience.faults import get_fault_plan, wrap_graph_store

    return ToolContext(graph=wrap_graph_store(runtime.graph_store(), get_fault_plan()),
                       customer_id=event.customer_id, embedder=get_embedder(), caches=runtime.tool_caches())


def _with_faults(tool: str, run: ToolRun) -> ToolRun:
    """`run` under the process's fault plan, looked up per call (a test may change it)."""
    from csagent.resilience.faults import faulty_tool, get_fault_plan

    def call(task: Task, ctx: ToolContext) -> ToolResult:
        return faulty_tool(run, get_fault_plan(), tool)(task, ctx)

    return call


def make_tool_handler(tool: str, run: ToolRun, *, env: str,
                      prepare: Callable[[], None] | None = None) -> LambdaHandler:
    """The Lambda handler of `tool`. `env`: the name of the function's configuration model in
    `csagent.env_vars`, validated at the cold start by `init_environment`. `prepare` runs
    before each tool context is built (cached configuration, e.g. Text2Cypher's model spec)."""
    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.metrics import MetricUnit
    from aws_lambda_powertools.utilities.parser import ValidationError, event_parser

    from csagent import coldstart, warmup
    from csagent.env_init import init_environment
    from csagent.tools.events import ToolEvent, malformed_event_result, run_tool_event

    # SnapStart (template.yaml): the tool is warmed before the snapshot, reconnected after restore.
    warmup.register_snapstart_hooks(lambda: warmup.warm_tool(prepare), env=env)
    logger = Logger()
    tracer = Tracer()
    metrics = Metrics()  # dimension "service": POWERTOOLS_SERVICE_NAME, one per tool function (template.yaml)

    faulty_run = _with_faults(tool, run)

    def tool_context(event: ToolEvent) -> ToolContext:
        if prepare is not None:
            prepare()
        return _default_context(event)

    @event_parser(model=ToolEvent)
    def handle(event: ToolEvent, context: Any) -> ToolResult:
        return run_tool_event(event, faulty_run, tool_context)

    @init_environment(env)  # a missing or invalid variable fails here, naming it
    @logger.inject_lambda_context(correlation_id_path="session_id", clear_state=True)
    @tracer.capture_lambda_handler(capture_response=False)  # results hold customer data
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        try:
            result = handle(event, context)
        except ValidationError as exc:
            logger.warning("malformed tool event", extra={"errors": exc.error_count()})
            result = malformed_event_result(event, tool, exc)
        metrics.add_metric(name=f"Tool{result.status.value.title()}", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="ToolLatency", unit=MetricUnit.Milliseconds, value=result.latency_ms)
        return result.model_dump(mode="json")

    # The collector, when the function's module paused it for its cold start (`csagent.coldstart`),
    # frozen and back on once the first result is out.
    return coldstart.resume_gc_after_first_call(handler)
