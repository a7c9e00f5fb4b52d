"""plan: turn the understood clauses into structured tasks, capped and de-duplicated.

The task catalogue lives in `csagent.planning`. A message with one request is planned there
alone (no model call: the clause maps to its task exactly). A compound message is read by the
PLANNER model when one is configured: it chooses, per clause, an entry of the task catalogue
and which of the customer's orders it concerns; `planning.clauses_from_steps` validates that
and `planning.plan_tasks` builds the tasks, so a model can never invent a tool, an argument or an
order id. Without a model, or when it is unavailable, the deterministic plan stands.

The plan also sets the turn's model-call budget (tasks + 2, see `csagent.models.usage`).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.models.errors import ModelUnavailable
from csagent.models.roles import Role
from csagent.models.usage import current_usage
from csagent.planning import (
    TASK_CATALOGUE,
    PlannerAnswer,
    actionable,
    clauses_from_steps,
    known_order_ids,
    plan_tasks,
)

PROMPT = "planner"


def _model_clauses(state: State, clauses: list[dict[str, Any]], memory: dict[str, Any],
                   deps: GraphDeps) -> list[dict[str, Any]] | None:
    """The clauses as the planner model reads them (None: keep the deterministic reading)."""
    gateway = deps.models
    if gateway is None or len(actionable(clauses)) < 2 or not gateway.has_model(Role.PLANNER):
        return None
    orders = known_order_ids(clauses, memory)
    variables = {
        "message": state.get("text", ""),
        "clauses": "\n".join(f"{n}. {c.get('text', '')} (intent: {c.get('intent', '')})"
                             for n, c in enumerate(clauses, start=1)),
        "catalogue": "\n".join(f"- {name}: {meaning}" for name, meaning in TASK_CATALOGUE.items()),
        "order_ids": ", ".join(orders) or "none",
    }
    try:
        reply = gateway.structured(Role.PLANNER, PROMPT, variables, PlannerAnswer)
    except ModelUnavailable:
        return None
    return clauses_from_steps(clauses, reply.value.steps, orders)


def planning_options(state: State, deps: GraphDeps) -> dict[str, Any]:
    """What `plan_tasks` needs besides the clauses, for this turn (also `confirm_actions`', which
    plans the questions asked after a yes)."""
    return {"max_tasks": deps.max_tasks, "memory": state.get("memory") or {},
            "confirmation_id": f"{state.get('session_id', '')}:{state.get('turn', 0)}",
            "documents_know": deps.documents_know}


@timed("plan")
def plan(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    clauses = state.get("clauses", [])
    memory = state.get("memory") or {}
    options = planning_options(state, runtime.context)
    planned = plan_tasks(clauses, **options)
    usage = current_usage()
    if usage is not None:
        usage.budget_for_tasks(len(planned.tasks))
    planner = "local"
    proposed = _model_clauses(state, clauses, memory, runtime.context)
    if proposed is not None:
        planned, planner = plan_tasks(proposed, **options), "model"
        if usage is not None:
            usage.budget_for_tasks(len(planned.tasks))
    return {
        "tasks": [t.model_dump(mode="json") for t in planned.tasks],
        "trace": {"missing": planned.missing, "dropped_over_cap": planned.dropped, "planner": planner},
    }
