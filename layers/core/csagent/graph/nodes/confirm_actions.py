"""confirm_actions: the customer answered "shall I go ahead?".

Yes → the proposed actions become execute tasks, dispatched like any other (exactly once:
the confirmation id is the proposing turn, so a retried or replayed execution is a no-op);
a refund above the approval threshold goes to `request_approval` first. Questions asked after
the yes (the route keeps them as the turn's clauses: "yes, go ahead. how soon is the money
back?") are planned beside the execution, their reads only, and answered in the same reply.
No → nothing is changed, and the reply says so.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.actions import PendingAction
from csagent.domain.models import Task
from csagent.domain.task_args import CustomerActionArgs
from csagent.graph.context import GraphDeps
from csagent.graph.nodes.dispatch import route_tasks
from csagent.graph.nodes.plan import planning_options
from csagent.graph.state import State, pending_actions
from csagent.graph.timing import timed
from csagent.planning import plan_tasks
from csagent.replies import render

ACTIONS_TOOL = "customer_actions"


def execute_task(index: int, pending: PendingAction, approved_by: str | None = None) -> Task:
    args = CustomerActionArgs.model_validate({
        "action": pending.action.value, "phase": "execute", "proposal": pending.proposal,
        "confirmation_id": pending.confirmation_id, **({"approved_by": approved_by} if approved_by else {})})
    return Task(task_id=f"t{index + 1}", task_type=pending.action.value, tool=ACTIONS_TOOL, args=args)


def _declined(pending: list[PendingAction], lang: str) -> str:
    """ "No problem, I haven't changed anything: order #W1 stays as it is." (which, when known)."""
    orders = list(dict.fromkeys(p.order_id or "" for p in pending))
    if not orders or not all(orders):
        return render("confirm_declined", lang)
    return render("confirm_declined_orders", lang, orders=", ".join(orders))


def _questions_asked(state: State, deps: GraphDeps, after: int) -> list[Task]:
    """The reads that answer the questions asked after the yes, numbered after the executions."""
    clauses = state.get("clauses") or []
    if not clauses:
        return []
    planned = plan_tasks(clauses, **planning_options(state, deps))
    reads = [t for t in planned.tasks if t.tool != ACTIONS_TOOL]
    renumbered = {t.task_id: f"t{after + i + 1}" for i, t in enumerate(reads)}
    return [t.model_copy(update={"task_id": renumbered[t.task_id],
                                 "depends_on": tuple(renumbered[d] for d in t.depends_on if d in renumbered)})
            for t in reads]


@timed("confirm_actions")
def confirm_actions(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    pending = pending_actions(state)
    if state.get("intent") != "confirm_yes":
        return {"pending_actions": [], "tasks": [], "status": "answered",
                "reply": {"text": _declined(pending, state.get("lang", "en")), "citations": []},
                "trace": {"declined": [p.order_id for p in pending]}}
    if any(p.requires_approval for p in pending):
        return {"tasks": []}  # request_approval takes it from here; the proposals stay pending
    executions = [execute_task(i, p) for i, p in enumerate(pending)]
    tasks = executions + _questions_asked(state, runtime.context, len(executions))
    return {"pending_actions": [], "tasks": [t.model_dump(mode="json") for t in tasks]}


def route_after_confirm(state: State, runtime: Runtime[GraphDeps]) -> Any:
    if state.get("tasks"):
        return route_tasks(state, runtime)
    if state.get("intent") == "confirm_yes" and any(p.requires_approval for p in pending_actions(state)):
        return "request_approval"
    return "respond"
