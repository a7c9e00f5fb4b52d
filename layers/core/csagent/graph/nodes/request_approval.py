"""request_approval: a confirmed refund above the approval threshold goes to a person first.

The approval is recorded (idempotently: a re-run of this turn gets the same approval) and
the customer is told it is under review; `await_approval` then pauses the graph.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.actions import PendingAction
from csagent.graph.context import GraphDeps
from csagent.graph.state import State, pending_actions
from csagent.graph.timing import timed
from csagent.replies import render


def needing_approval(state: State) -> list[PendingAction]:
    return [p for p in pending_actions(state) if p.requires_approval]


@timed("request_approval")
def request_approval(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    lang = state.get("lang", "en")
    approvals = runtime.context.approvals
    waiting = needing_approval(state)
    if approvals is None:  # no approver reachable: the change is not made, and the reply says so
        text = render("approval_unavailable", lang)
        return {"pending_actions": [], "status": "partial", "reply": {"text": text, "citations": []},
                "trace": {"approval": "unavailable"}}
    first = waiting[0]
    approval = approvals.create(
        state.get("session_id", ""), state.get("customer_id") or "", first.action.value,
        "; ".join(p.summary for p in waiting)[:2000], first.amount,
        idempotency_key=first.confirmation_id or f"turn-{state.get('turn', 0)}")
    text = render("refund_needs_approval", lang, amount=f"${float(first.amount or 0):.2f}",
                  order_id=first.order_id or "")
    return {"status": "awaiting_approval", "reply": {"text": text, "citations": []},
            "messages": [{"role": "assistant", "text": text}],
            "trace": {"approval": {"approval_id": approval.approval_id}}}
