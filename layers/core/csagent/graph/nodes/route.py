"""route: decide which path a message takes, with a confidence.

Every label `route_by_label` can see has an edge; anything unknown or under the confidence
floor goes to clarification, never to an error or a silent end.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.nlp.confirmation import classify_confirmation
from csagent.understanding import resume_awaiting

ROUTE_TO_NODE = {
    "confirmation": "confirm_actions",
    "handoff": "hand_off",
    "image": "read_image",
    "general": "respond_general",
    "clarify": "clarify",
    "knowledge_and_actions": "plan",
    "out_of_scope": "clarify",
}
MIN_CONFIDENCE = 0.35
# Below this intent confidence, a message the scope check calls out of scope is out of scope.
OUT_OF_SCOPE_DOUBT = 0.5


@timed("route")
def route(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    pending = state.get("pending_actions") or []
    set_aside: dict[str, Any] = {}
    if pending:
        answer = classify_confirmation(state.get("text", ""))
        if answer is not None:
            return {"route": "confirmation", "confidence": 1.0, "intent": f"confirm_{answer}"}
        # Anything but a plain yes or no: the proposed change is not made, and the reply says so.
        set_aside = {"pending_actions": [], "trace": {"set_aside": [p["summary"] for p in pending]}}
    understanding = runtime.context.understand(state.get("text", ""), state)
    resumed = resume_awaiting(understanding, state.get("awaiting") or [])
    if resumed is not None:
        understanding = resumed
    scope = (state.get("trace") or {}).get("scope") or {}
    if scope and not scope.get("in_scope") and understanding.route == "knowledge_and_actions" \
            and understanding.confidence < OUT_OF_SCOPE_DOUBT:
        # Neither the business scope nor the intent examples vouch for it: say what we can do.
        understanding = replace(understanding, route="out_of_scope")
    set_aside = {**set_aside, "awaiting": []}
    if state.get("attachments"):
        # The picture decides what to do; the text says what the customer wants of it.
        return {"route": "image", "confidence": 1.0, "intent": understanding.intent,
                "lang": understanding.lang, "entities": understanding.entities,
                "clauses": understanding.clauses_as_dicts(), **set_aside}
    return {**set_aside,
        "route": understanding.route,
        "confidence": understanding.confidence,
        "intent": understanding.intent,
        "lang": understanding.lang,
        "entities": understanding.entities,
        "clauses": understanding.clauses_as_dicts(),
    }


def route_by_label(state: State) -> str:
    label = state.get("route", "")
    if label not in ROUTE_TO_NODE or float(state.get("confidence") or 0.0) < MIN_CONFIDENCE:
        return "clarify"
    return ROUTE_TO_NODE[label]
