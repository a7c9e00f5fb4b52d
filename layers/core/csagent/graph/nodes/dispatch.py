"""dispatch: fan tasks out in waves. Independent tasks run concurrently (one `Send` per task);
a task waits until every task it depends on has a result.

`route_tasks` is the routing function used after `plan` and after each wave's `collect`.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from csagent.graph.context import GraphDeps
from csagent.graph.state import State, TaskBranch
from csagent.resilience.bounds import Bounds

USABLE = frozenset({"success", "fallback"})


def ready_tasks(state: State) -> list[dict[str, Any]]:
    """Tasks without a result whose dependencies all have a usable (non-failed) result."""
    results = state.get("results") or {}
    return [
        t for t in state.get("tasks") or []
        if t["task_id"] not in results
        and all(results.get(d, {}).get("status") in USABLE for d in t.get("depends_on") or ())
    ]


def tool_calls_left(state: State, bounds: Bounds, ready: int) -> int:
    """Each of `ready` tasks' share of the turn's tool-call budget (retries and cheaper paths
    count: a result's `attempts`)."""
    used = sum(int(r.get("attempts") or 1) for r in (state.get("results") or {}).values())
    return max(bounds.max_tool_calls_per_turn - used, 0) // max(ready, 1)


def route_tasks(state: State, runtime: Runtime[GraphDeps] | None = None) -> list[Send] | str:
    if not state.get("tasks"):
        return "clarify"
    ready = ready_tasks(state)
    if not ready:
        return "summarise"
    if runtime is not None and runtime.context.dispatcher is not None:
        return "dispatch_wave"  # the whole wave in one Step Functions execution
    results = state.get("results") or {}
    left = None if runtime is None else tool_calls_left(state, runtime.context.bounds, len(ready))
    return [
        Send("run_task", TaskBranch(
            task=task, customer_id=state.get("customer_id"),
            dependencies={d: results[d] for d in task.get("depends_on") or ()},
            **({"tool_calls_left": left} if left is not None else {}),
        ))
        for task in ready
    ]
