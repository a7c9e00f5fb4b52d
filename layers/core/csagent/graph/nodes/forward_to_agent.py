"""forward_to_agent: a session that is with a person is not answered by the assistant: the
customer's message is appended to the open handoff and the reply says it was passed on."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.nlp.intents import detect_language
from csagent.replies import render

logger = logging.getLogger(__name__)


@timed("forward_to_agent")
def forward_to_agent(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    handoffs = runtime.context.handoffs
    if handoffs is None:
        return {}
    try:
        package = handoffs.forward_if_handed_off(state.get("session_id", ""), state.get("text", ""))
    except Exception as exc:  # noqa: BLE001 - the handoff store being down must not end the turn
        logger.warning("handoff lookup failed (%s); answering as the assistant", type(exc).__name__)
        return {}
    if package is None:
        return {}
    lang = detect_language(state.get("text", ""))
    return {"route": "handed_off", "status": "handed_off", "lang": lang,
            "reply": {"text": render("handoff_forwarded", lang), "citations": []}}


def route_after_forward(state: State) -> str:
    return "respond" if state.get("route") == "handed_off" else "guard_input"
