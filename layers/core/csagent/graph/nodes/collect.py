"""collect: the join after each wave. A task whose dependency failed cannot run: it gets a
failed result that says why, so nothing is dropped silently."""

from __future__ import annotations

from typing import Any

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.graph.state import State
from csagent.graph.timing import timed


@timed("collect")
def collect(state: State) -> dict[str, Any]:
    results = state.get("results") or {}
    blocked: dict[str, dict[str, Any]] = {}
    for raw in state.get("tasks") or []:
        if raw["task_id"] in results:
            continue
        failed_deps = [d for d in raw.get("depends_on") or () if results.get(d, {}).get("status") == "failed"]
        if failed_deps:
            task = Task.model_validate(raw)
            blocked[task.task_id] = ToolResult.failed(
                task, ErrorType.UNKNOWN, f"skipped: it needed the result of {', '.join(failed_deps)}"
            ).model_dump(mode="json")
    return {"results": blocked} if blocked else {}
