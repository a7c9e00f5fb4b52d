"""guard_input: refuse what must not reach the planner (size, control characters, empty text)."""

from __future__ import annotations

import unicodedata
from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed


def clean_text(text: str) -> str:
    """Drop control and format characters (except newlines and tabs), trim whitespace."""
    return "".join(
        ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co"}
    ).strip()


@timed("guard_input")
def guard_input(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    text = clean_text(state.get("text", ""))
    limit = runtime.context.max_message_chars
    if not text:
        return {"text": text, "route": "refused", "confidence": 1.0,
                "trace": {"guard": "empty_message"}}
    if len(text) > limit:
        return {"text": text, "route": "refused", "confidence": 1.0,
                "trace": {"guard": "message_too_long"}}
    return {"text": text, "trace": {"guard": "passed"}}


def route_after_guard(state: State) -> str:
    return "respond" if state.get("route") == "refused" else "route"
