"""The tool Lambdas' side of the dispatch contract: what one Map iteration of the dispatch state
machine (`infra/statemachines/tools.asl.json`) sends a tool Lambda, and what the Lambda answers.

    event  {"task": Task, "customer_id": str | null, "session_id": str,
            "dependencies"?: {task_id: ToolResult}}
    answer ToolResult as JSON - success or failure, failure is data (a transient one included)

A tool Lambda never raises for a tool failure: the router heals every failed result with the one
policy table (`csagent.healing`), retrying in a new wave. The state machine retries only what
the router cannot see: Lambda service errors and throttling (`Lambda.*`). An exception that
escapes the handler anyway (a crash) is caught by the state machine into a failed result.

Nothing here knows about Lambda or Powertools: the handlers in `functions/tools/<tool>/app.py`
parse the event into `ToolEvent` (Powertools `event_parser`), call `run_tool_event`, and return
`ToolResult.model_dump(mode="json")`; a malformed event becomes `malformed_event_result`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.tools.failures import failed_result

if TYPE_CHECKING:
    from csagent.tools.context import ToolContext
    from csagent.tools.registry import ToolFn

logger = logging.getLogger(__name__)

#: How many validation problems a malformed-event message lists before "...".
_MAX_LISTED_PROBLEMS = 5


class ToolEvent(BaseModel):
    """One task for one tool Lambda, as the dispatch state machine's Map iteration builds it.

    `customer_id` is the authenticated customer of the session (set by the router, never read
    from message text); `dependencies` holds the results of the tasks of earlier waves, keyed
    by task id (the whole wave's dependencies: a task uses those named in its `depends_on`).
    Unknown keys are ignored so that a newer router can add fields without breaking older tools.
    The task's arguments are validated here into its tool's model (`csagent.domain.task_args`):
    arguments of the wrong shape make the event malformed (`malformed_event_result`).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    task: Task
    customer_id: str | None = None
    session_id: str = Field(min_length=1, max_length=256)
    dependencies: dict[str, ToolResult] = Field(default_factory=dict)

def run_tool_event(event: ToolEvent, tool: ToolFn,
                   make_context: Callable[[ToolEvent], ToolContext]) -> ToolResult:
    """Run `tool` for the event's task and return its ToolResult; never raises.

    A context that cannot be built (the graph store, its secret) is a retryable transient
    failure; any exception of the tool becomes a failed ToolResult (`csagent.tools.failures`),
    as in the in-process dispatcher.
    """
    task = event.task
    started = time.perf_counter()

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000, 3)

    try:
        ctx = make_context(event)
    except Exception as exc:  # noqa: BLE001 - failure is data; the router's healer retries it
        logger.warning("tool context unavailable: %s", type(exc).__name__)
        return ToolResult.failed(task, ErrorType.TRANSIENT, f"the {task.tool} tool could not reach its "
                                 f"dependencies ({type(exc).__name__})", retryable=True, latency_ms=elapsed())
    try:
        result = tool(task, ctx)
    except Exception as exc:  # noqa: BLE001 - tools should not raise; if one does, it is data
        logger.exception("tool %s raised", task.tool)
        result = failed_result(task, exc)
    if not result.latency_ms:
        result = result.model_copy(update={"latency_ms": elapsed()})
    return result


def malformed_event_result(raw: Any, tool: str, exc: ValidationError) -> ToolResult:
    """A failed ToolResult (VALIDATION) for an event the model rejected.

    The ids are taken from the raw event where they are readable, so the router can still put
    the failure in the right result slot. The message names the offending fields only: never
    the input values (they may hold customer data) and never a stack trace.
    """
    raw_task = raw.get("task") if isinstance(raw, Mapping) else None
    raw_task = raw_task if isinstance(raw_task, Mapping) else {}

    def text(key: str, default: str) -> str:
        value = raw_task.get(key)
        return value if isinstance(value, str) and value else default

    problems = [f"{'.'.join(str(p) for p in err['loc']) or 'event'}: {err['msg']}"
                for err in exc.errors(include_url=False, include_input=False, include_context=False)]
    listed = "; ".join(problems[:_MAX_LISTED_PROBLEMS])
    if len(problems) > _MAX_LISTED_PROBLEMS:
        listed += "; ..."
    task = Task(task_id=text("task_id", "unknown"), task_type=text("task_type", "unknown"),
                tool=text("tool", tool))
    return ToolResult.failed(task, ErrorType.VALIDATION, f"Malformed tool event: {listed}.")
