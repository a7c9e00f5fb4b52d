"""hand_off: give the conversation to a person, with everything they need.

Reached when the customer asks for a person (the `handoff` route) or when the turn's outcome
calls for one (a business-rule conflict, repeated failures, frustration, the node budget):
`route_after_summarise` evaluates the triggers. The package (customer, session, requests,
every task with its result or error, summary, next action, urgency) is stored and queued;
the session becomes `handed_off`.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.handoff.triggers import (
    DEFAULT_POLICY,
    HandoffDecision,
    HandoffReason,
    Urgency,
    asks_for_person_now,
    evaluate,
    signals_from_state,
    staff_process_in_turn,
)
from csagent.replies import render

logger = logging.getLogger(__name__)


def decide(state: State, runtime: Runtime[GraphDeps]) -> HandoffDecision | None:
    return evaluate(signals_from_state(state), runtime.context.handoff_policy or DEFAULT_POLICY)


def _routed_reason(state: State) -> HandoffReason:
    """Why `route` sent the turn to a person when the triggers' own evaluation does not say: the
    customer asked for one, asked for a process our team runs, or is frustrated with nothing the
    assistant could act on (never "you asked to talk to a person" when they did not)."""
    if state.get("intent") == "human_handoff" or asks_for_person_now(state.get("clauses") or []):
        return HandoffReason.EXPLICIT_REQUEST
    if staff_process_in_turn(str(state.get("text") or ""), state.get("clauses") or []):
        return HandoffReason.STAFF_PROCESS
    return HandoffReason.FRUSTRATION


@timed("hand_off")
def hand_off(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    lang = state.get("lang", "en")
    decision = decide(state, runtime) or HandoffDecision((_routed_reason(state),), Urgency.LOW)
    before = str((state.get("reply") or {}).get("text") or "")
    handoffs = runtime.context.handoffs
    try:
        if handoffs is None:
            raise RuntimeError("no handoff service is configured")
        package = handoffs.open(state, decision)
    except Exception as exc:  # noqa: BLE001 - failure is data: say so, keep the turn
        logger.warning("handoff failed (%s)", type(exc).__name__)
        text = "\n".join(t for t in (before, render("handoff_unavailable", lang)) if t)
        return {"reply": {"text": text, "citations": (state.get("reply") or {}).get("citations", [])},
                "status": "partial" if before else "needs_clarification"}
    why = render(f"handoff_why_{decision.reason.value}", lang)
    handing = render("handoff_reason", lang, reason=why)
    order_id = (state.get("entities") or {}).get("order_id")
    if order_id and order_id not in before:  # "About order #W1067251: I'm connecting you ..."
        handing = f"{render('handoff_about_order', lang, order_id=order_id)} {handing}"
    text = "\n".join(t for t in (before, handing) if t)
    return {"reply": {"text": text, "citations": (state.get("reply") or {}).get("citations", [])},
            "status": "handed_off", "trace": {"handoff": {"handoff_id": package.handoff_id,
                                                          "reasons": [r.value for r in decision.reasons],
                                                          "urgency": decision.urgency.value}}}


def wants_handoff(state: State, runtime: Runtime[GraphDeps]) -> bool:
    """Does the turn's outcome call for a person? (Not while a change awaits the customer's yes.)"""
    if runtime.context.handoffs is None or state.get("status") == "awaiting_confirmation":
        return False
    return decide(state, runtime) is not None


def route_after_summarise(state: State) -> str:
    return "hand_off" if (state.get("trace") or {}).get("handoff_wanted") else "respond"
