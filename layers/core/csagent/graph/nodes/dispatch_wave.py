"""dispatch_wave: run a whole wave of ready tasks through the configured dispatcher (in AWS,
one synchronous execution of the Step Functions state machine: a Map state, one tool Lambda
per task), healed as `run_task` heals one task in-process (`csagent.healing`): a failed or
degraded result that comes back from the state machine goes through the same policy table,
breakers and bounds, and its retry or cheaper path runs as a new execution (a new wave). Used
instead of one `Send` per task when a dispatcher is configured; the dispatcher never raises: a
failed execution becomes a failed result for every task, which is healed like any other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.models import Task, ToolResult
from csagent.graph.context import GraphDeps
from csagent.graph.nodes.dispatch import ready_tasks, tool_calls_left
from csagent.graph.state import State, task_results
from csagent.graph.timing import timed
from csagent.healing import run_healed_waves
from csagent.planning import resolve_args


@timed("dispatch_wave")
def dispatch_wave(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    deps = runtime.context
    dispatcher = deps.dispatcher
    assert dispatcher is not None, "route_tasks routes here only when a dispatcher is configured"
    results = state.get("results") or {}
    done = task_results(state)
    ready = ready_tasks(state)
    tasks = []
    for raw in ready:
        task = Task.model_validate(raw)
        tasks.append(resolve_args(task, {d: done[d] for d in task.depends_on if d in done}))
    # To the tool Lambdas as the state holds them (JSON): `ToolEvent.dependencies` reads them back.
    dependencies = {d: results[d] for t in tasks for d in t.depends_on if d in results}
    customer_id, session_id = state.get("customer_id"), state.get("session_id") or ""

    def run_wave(wave: Sequence[Task]) -> list[ToolResult]:
        return dispatcher.run_wave(wave, customer_id, session_id, dependencies)

    healers = run_healed_waves(tasks, run_wave, deps.tools.keys(), deps.bounds,
                               tool_calls_left=tool_calls_left(state, deps.bounds, len(tasks)))
    return {"results": {h.task.task_id: h.record() for h in healers}}
