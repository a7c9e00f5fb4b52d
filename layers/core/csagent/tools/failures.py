"""The one place a tool's exception becomes its failed `ToolResult`.

Tools never raise out of `run`: what goes wrong below them is raised as a typed error and turned
into data here, so the healer's policy table sees the same error type and retryability whatever
the tool. The store graph's failures arrive already classified by its adapter
(`csagent.adapters.neo4j_graph.classify_neo4j_error` -> `csagent.domain.errors.StoreError`);
anything else is a fault of the tool itself (UNKNOWN, not retryable: the policy table tries it
once more, then the cheaper path, then a person).
"""

from __future__ import annotations

import logging

from csagent.domain.errors import StoreError
from csagent.domain.models import ErrorType, Task, ToolResult

logger = logging.getLogger(__name__)


def failed_result(task: Task, exc: BaseException, *, latency_ms: float = 0.0) -> ToolResult:
    """`exc`, raised while running `task`, as the task's failed result. The message is safe to
    keep in the trace (the server's own text and code stay on the exception)."""
    if isinstance(exc, StoreError):
        logger.warning("%s: store %s (%s)", task.tool, exc.error_type.value, exc.code or type(exc).__name__)
        return ToolResult.failed(task, exc.error_type, exc.message, retryable=exc.retryable,
                                 latency_ms=latency_ms)
    logger.warning("%s failed: %s", task.tool, type(exc).__name__)
    return ToolResult.failed(task, ErrorType.UNKNOWN, f"The {task.tool} tool failed ({type(exc).__name__}).",
                             latency_ms=latency_ms)
