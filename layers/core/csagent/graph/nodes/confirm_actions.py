"""confirm_actions: the customer answered "shall I go ahead?".

Yes → the proposed actions become execute tasks, dispatched like any other (exactly once:
the confirmation id is the proposing turn, so a retried or replayed execution is a no-op);
a refund above the approval threshold goes to `request_approval` first.
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
from csagent.graph.state import State, pending_actions
from csagent.graph.timing import timed
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


@timed("confirm_actions")
def confirm_actions(state: State) -> dict[str, Any]:
    pending = pending_actions(state)
    if state.get("intent") != "confirm_yes":
        return {"pending_actions": [], "tasks": [], "status": "answered",
                "reply": {"text": _declined(pending, state.get("lang", "en")), "citations": []},
                "trace": {"declined": [p.order_id for p in pending]}}
    if any(p.requires_approval for p in pending):
        return {"tasks": []}  # request_approval takes it from here; the proposals stay pending
    return {"pending_actions": [],
            "tasks": [execute_task(i, p).model_dump(mode="json") for i, p in enumerate(pending)]}


def route_after_confirm(state: State, runtime: Runtime[GraphDeps]) -> Any:
    if state.get("tasks"):
        return route_tasks(state, runtime)
    if state.get("intent") == "confirm_yes" and any(p.requires_approval for p in pending_actions(state)):
        return "request_approval"
    return "respond"
