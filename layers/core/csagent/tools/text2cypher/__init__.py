"""Tool: Text2Cypher, for catalogue questions no predefined template covers.

    task.args (Text2CypherArgs) = {"question": str,
                                   "model"?: "local" | "bedrock/<id>" | "openai/<model>@<url>"}

Success (`success`): `{"question", "cypher", "columns", "rows", "row_count", "truncated",
"attempts", "corrections", "examples", "timings"}` - rows of a generated, validated query.
Fallback (`fallback`): the predefined template's result (`cypher_catalogue.run_template` data)
plus `"text2cypher": {"reason", "template_id", "score", "attempts", "errors"}` - in the local tier
(no model) this is the only path. Failures are typed (never raised): refusals (writes, customer
data) -> PERMISSION_DENIED; invalid after every correction -> the last error's type (PARSE_ERROR,
VALIDATION); nothing found -> NO_RESULTS; timeouts -> TIMEOUT; outages -> TRANSIENT.

The model is the TEXT2CYPHER role of the model gateway (`csagent.models.gateway`): the chain
`task.args.model`, else the spec given to `configure(...)`, else "local"; its rungs, breakers,
budget and the data-routing rule are the gateway's. The prompt carries the store's catalogue
(schema, product names, examples), which is not customer data; whether the question carries
some decides which rungs may see it.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from csagent.domain.models import ErrorType, Task, TaskStatus, ToolError, ToolResult
from csagent.domain.task_args import Text2CypherArgs
from csagent.domain.tool_data import result_data
from csagent.models.ladder import LADDER_SEPARATOR, parse_chain

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.tools.context import ToolContext
    from csagent.tools.text2cypher.examples import ensure_example_bank
    from csagent.tools.text2cypher.pipeline import Text2Cypher, Text2CypherOutcome, explain

# The pipeline (its validator's patterns, the schema, the few-shot bank) loads on first use: the
# router configures this tool when it builds its graph, and most first replies never run it
# (about 0.1 s of a fresh process's first reply). The Text2Cypher Lambda loads it at init.
_LAZY = {"MAX_QUESTION_CHARS": "pipeline", "Text2Cypher": "pipeline", "Text2CypherOutcome": "pipeline",
         "explain": "pipeline", "ensure_example_bank": "examples"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["TOOL_NAME", "Text2Cypher", "Text2CypherConfig", "Text2CypherOutcome", "configure",
           "current_config", "ensure_example_bank", "explain", "model_for", "run", "to_tool_result"]

logger = logging.getLogger(__name__)

TOOL_NAME = "text2cypher"


@dataclass(frozen=True)
class Text2CypherConfig:
    """How the tool builds its pipeline; set once by the composition root with `configure`."""

    model: str = "local"  # the TEXT2CYPHER chain; timeouts and credentials are the gateway's settings
    query_timeout_s: float = 5.0
    max_rows: int = 50
    max_corrections: int = 2


_CONFIG = Text2CypherConfig()
_CONFIG_LOCK = threading.Lock()


def configure(model: str | None = None, **options: Any) -> Text2CypherConfig:
    """Set the model spec and limits (validated now, so a bad setting fails at start-up)."""
    global _CONFIG
    from csagent.models.providers import parse_model_spec

    with _CONFIG_LOCK:
        changes: dict[str, Any] = dict(options)
        if model is not None:
            changes["model"] = model
        updated = replace(_CONFIG, **changes)
        for one in updated.model.split(LADDER_SEPARATOR):  # "primary|secondary": a model ladder
            parse_model_spec(one)
        _CONFIG = updated
        return updated


def current_config() -> Text2CypherConfig:
    return _CONFIG


def model_for(spec: str, question: str) -> Any:
    """The TEXT2CYPHER chain `spec` ("primary|secondary") behind the gateway, or None for the
    local tier. Raises ValueError for a malformed spec."""
    from csagent.models.gateway import RoleChat, get_gateway
    from csagent.models.roles import Role
    from csagent.models.sensitivity import carries_customer_data

    rungs = parse_chain(spec)
    if not rungs:
        return None
    gateway = get_gateway().with_chain(Role.TEXT2CYPHER, rungs)
    return RoleChat(gateway, Role.TEXT2CYPHER,
                    customer_data=carries_customer_data(Role.TEXT2CYPHER, question))


def run(task: Task, ctx: ToolContext) -> ToolResult:
    """The tool entry point; never raises."""
    started = time.perf_counter()

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000.0, 3)

    from csagent.tools.text2cypher.pipeline import MAX_QUESTION_CHARS, Text2Cypher

    try:
        args = task.args_as(Text2CypherArgs)  # another tool's arguments: validated as these
    except ValueError as exc:
        return ToolResult.failed(task, ErrorType.VALIDATION, str(exc))
    question = args.question
    if not question.strip():
        return ToolResult.failed(task, ErrorType.VALIDATION, "args.question must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        return ToolResult.failed(task, ErrorType.VALIDATION,
                                 f"args.question is longer than {MAX_QUESTION_CHARS} characters")
    config = current_config()
    spec = args.model or config.model
    try:
        model = model_for(spec, question)
    except ValueError as exc:
        return ToolResult.failed(task, ErrorType.VALIDATION, f"invalid model setting: {exc}",
                                 latency_ms=elapsed())
    except Exception as exc:  # noqa: BLE001 - an unavailable provider degrades to the local tier
        logger.warning("text2cypher model %s unavailable (%s); using the local tier", spec,
                       type(exc).__name__)
        model = None
    try:
        pipeline = Text2Cypher(ctx.graph, model, ctx.embedder, max_corrections=config.max_corrections,
                               timeout_s=config.query_timeout_s, max_rows=config.max_rows, caches=ctx.caches)
        outcome = pipeline.run(question)
    except Exception as exc:  # noqa: BLE001 - the tool contract: never raise
        logger.exception("text2cypher crashed")
        return ToolResult.failed(task, ErrorType.UNKNOWN,
                                 f"The Text2Cypher tool failed unexpectedly ({type(exc).__name__}).",
                                 latency_ms=elapsed())
    return to_tool_result(outcome, task)


def to_tool_result(outcome: Text2CypherOutcome, task: Task) -> ToolResult:
    """The `ToolResult` for an outcome (see the module docstring)."""
    latency = round(outcome.total_ms, 3)
    summary = {"attempts": len(outcome.attempts), "corrections": outcome.corrections,
               "examples": [e.example_id for e in outcome.examples],
               "timings": outcome.to_dict()["timings"]}
    fallback = outcome.fallback
    if fallback is not None and fallback.result is not None:
        note = {"reason": fallback.reason, "template_id": fallback.template_id,
                "score": None if fallback.score is None else round(fallback.score, 4),
                "errors": [e.to_dict() for a in outcome.attempts for e in a.errors], **summary}
        result = fallback.result
        data = {**(result.data.model_dump() if result.data is not None else {}), "text2cypher": note}
        status = TaskStatus.FALLBACK if result.status == TaskStatus.SUCCESS else result.status
        return ToolResult(task_id=task.task_id, task_type=task.task_type, tool=task.tool, status=status,
                          data=result_data(task.tool, data), error=result.error, latency_ms=latency)
    if outcome.status == "success":
        data = {"question": outcome.question, "cypher": outcome.cypher, "columns": outcome.columns,
                "rows": outcome.rows, "row_count": len(outcome.rows), "truncated": outcome.truncated,
                **summary}
        if outcome.rows:
            return ToolResult.ok(task, data, latency_ms=latency)
        return ToolResult(task_id=task.task_id, task_type=task.task_type, tool=task.tool,
                          status=TaskStatus.FAILED, data=result_data(task.tool, data), latency_ms=latency,
                          error=ToolError(type=ErrorType.NO_RESULTS,
                                          message="The catalogue has nothing that matches this question."))
    error = outcome.error
    reason = fallback.reason if fallback is not None else ""
    if error is None:
        return ToolResult.failed(task, ErrorType.LOW_CONFIDENCE,
                                 f"No query could answer this question ({reason}).", latency_ms=latency)
    message = error.message + (f" ({reason})" if reason else "")
    tried = result_data(task.tool, {"question": outcome.question, **summary})
    return ToolResult(task_id=task.task_id, task_type=task.task_type, tool=task.tool,
                      status=TaskStatus.FAILED, data=tried, latency_ms=latency,
                      error=ToolError(type=error.error_type, message=message, retryable=error.retryable))
