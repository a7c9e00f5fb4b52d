"""run_task: run one task's tool and write only that task's result slot.

Arguments that come from earlier tasks (product ids from an order lookup) are filled in from
the dependencies' results first. Exceptions never leave this node: whatever a tool raises
becomes a failed `ToolResult`.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.graph.context import GraphDeps
from csagent.graph.state import TaskBranch
from csagent.planning import resolve_args


def run_task(branch: TaskBranch, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    planned = Task.model_validate(branch["task"])
    started = time.perf_counter()
    tool = runtime.context.tools.get(planned.tool)
    if tool is None:
        result = ToolResult.failed(planned, ErrorType.UNKNOWN, f"no tool named {planned.tool!r}")
    else:
        try:
            task = resolve_args(planned, branch.get("dependencies") or {})
            result = tool(task, runtime.context.make_tool_context(branch.get("customer_id")))
        except Exception as exc:  # noqa: BLE001 - failure is data, never an exception
            result = ToolResult.failed(planned, ErrorType.UNKNOWN, f"{type(exc).__name__}: {exc}")
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    result = result.model_copy(update={"latency_ms": result.latency_ms or elapsed})
    return {"results": {planned.task_id: result.model_dump(mode="json")}}
