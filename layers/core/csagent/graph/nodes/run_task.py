"""run_task: run one task, healed (`csagent.healing`), and write only that task's result slot.

Arguments that come from earlier tasks (product ids from an order lookup) are filled in from
the dependencies' results first. Exceptions never leave this node: whatever goes wrong
becomes a failed `ToolResult`, with the heal steps taken recorded beside it.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.models import ErrorType, Task, TaskResult, ToolResult
from csagent.graph.context import GraphDeps
from csagent.graph.state import TaskBranch
from csagent.healing import heal_record, run_healed
from csagent.planning import resolve_args


def run_task(branch: TaskBranch, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    planned = Task.model_validate(branch["task"])
    started = time.perf_counter()
    deps = runtime.context
    try:
        needed = {d: TaskResult.model_validate(r) for d, r in (branch.get("dependencies") or {}).items()}
        task = resolve_args(planned, needed)
        result, decisions, calls = run_healed(task, deps.make_tool_context(branch.get("customer_id")),
                                              deps.tools, deps.bounds,
                                              tool_calls_left=branch.get("tool_calls_left"))
    except Exception as exc:  # noqa: BLE001 - failure is data, never an exception
        result = ToolResult.failed(planned, ErrorType.UNKNOWN, f"{type(exc).__name__}: {exc}")
        decisions, calls = [], 1
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    result = result.model_copy(update={"latency_ms": elapsed})
    return {"results": {planned.task_id: {**result.model_dump(mode="json"), **heal_record(decisions, calls)}}}
