"""plan: turn the understood clauses into structured tasks, capped and de-duplicated.

The task catalogue lives in `csagent.planning`; this node only applies it to the state.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.planning import plan_tasks


@timed("plan")
def plan(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    planned = plan_tasks(state.get("clauses", []), max_tasks=runtime.context.max_tasks,
                         memory=state.get("memory") or {},
                         confirmation_id=f"{state.get('session_id', '')}:{state.get('turn', 0)}")
    return {
        "tasks": [t.model_dump(mode="json") for t in planned.tasks],
        "trace": {"missing": planned.missing, "dropped_over_cap": planned.dropped},
    }

