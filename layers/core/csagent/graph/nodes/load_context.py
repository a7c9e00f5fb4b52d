"""load_context: start a turn: count it, reset per-turn slots, record the customer's text."""

from __future__ import annotations

from typing import Any

from csagent.graph.state import RESET, State
from csagent.graph.timing import timed


@timed("load_context")
def load_context(state: State) -> dict[str, Any]:
    text = state.get("text", "")
    return {
        "turn": int(state.get("turn") or 0) + 1,
        "messages": [{"role": "customer", "text": text}],
        "results": dict(RESET),
        "trace": dict(RESET),
        "node_timings_ms": dict(RESET),
        "tasks": [],
        "entities": {},
        "reply": {},
        "status": "",
    }
