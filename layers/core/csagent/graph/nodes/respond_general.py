"""respond_general: greetings, thanks and small talk, from templates."""

from __future__ import annotations

from typing import Any

from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.replies import render


@timed("respond_general")
def respond_general(state: State) -> dict[str, Any]:
    intent = state.get("intent") or "greeting"
    name = intent if intent in {"greeting", "thanks", "smalltalk"} else "greeting"
    return {"reply": {"text": render(name, state.get("lang", "en")), "citations": []}, "status": "answered"}
