"""dispatch_wave: run a whole wave of ready tasks through the configured dispatcher (in AWS,
one synchronous execution of the Step Functions state machine: a Map state, one tool Lambda
per task). Used instead of one `Send` per task when a dispatcher is configured; the
dispatcher never raises: a failed execution becomes a failed result for every task."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.models import Task
from csagent.graph.context import GraphDeps
from csagent.graph.nodes.dispatch import ready_tasks
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.planning import resolve_args


@timed("dispatch_wave")
def dispatch_wave(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    dispatcher = runtime.context.dispatcher
    assert dispatcher is not None, "route_tasks routes here only when a dispatcher is configured"
    results = state.get("results") or {}
    tasks = []
    for raw in ready_tasks(state):
        task = Task.model_validate(raw)
        tasks.append(resolve_args(task, {d: results[d] for d in task.depends_on if d in results}))
    dependencies = {d: results[d] for t in tasks for d in t.depends_on if d in results}
    wave = dispatcher.run_wave(tasks, state.get("customer_id"), state.get("session_id") or "", dependencies)
    return {"results": {r.task_id: r.model_dump(mode="json") for r in wave}}
