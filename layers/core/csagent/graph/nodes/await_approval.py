"""await_approval: pause the turn until a person decides (LangGraph `interrupt`).

The graph stops here with its state in the DynamoDB checkpoint. `POST /v1/approvals/{id}`
resumes it, possibly in another process, with `Command(resume={"decision", "approved_by"})`:
approved → the confirmed actions run with the approver recorded; rejected or expired →
nothing is changed and the customer is told why.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from csagent.graph.nodes.confirm_actions import execute_task, route_after_confirm
from csagent.graph.state import State, pending_actions
from csagent.graph.timing import timed
from csagent.replies import render


@timed("await_approval")
def await_approval(state: State) -> dict[str, Any]:
    approval = (state.get("trace") or {}).get("approval") or {}
    answer = interrupt({"approval_id": approval.get("approval_id"), "session_id": state.get("session_id")})
    decision = str((answer or {}).get("decision") or "")
    pending = pending_actions(state)
    if decision != "approved":
        name = "approval_rejected" if decision == "rejected" else "approval_expired"
        text = render(name, state.get("lang", "en"))
        return {"pending_actions": [], "tasks": [], "status": "answered",
                "reply": {"text": text, "citations": []}}
    approved_by = str(answer.get("approved_by") or "agent")
    return {"pending_actions": [], "reply": {},
            "tasks": [execute_task(i, p, approved_by=approved_by).model_dump(mode="json")
                      for i, p in enumerate(pending)]}


route_after_approval = route_after_confirm
