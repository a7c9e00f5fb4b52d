"""load_context: start a turn: count it, reset per-turn slots, record the customer's text, and
keep the public history short: after `KEEP_TURNS` turns the older ones are compressed into an
extractive summary (the local tier has no generative model to write one)."""

from __future__ import annotations

import re
from typing import Any

from csagent.graph.state import RESET, State
from csagent.graph.timing import timed

KEEP_TURNS = 10
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


def first_sentence(text: str, limit: int = 160) -> str:
    sentence = _SENTENCE.split(text.strip(), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def compress(messages: list[dict[str, Any]], summary: str, keep_turns: int = KEEP_TURNS
             ) -> tuple[list[dict[str, Any]], str]:
    """Keep the last `keep_turns` customer turns verbatim; fold older ones into the summary:
    one line per turn, the customer's request and the first sentence of the reply."""
    starts = [i for i, m in enumerate(messages) if m.get("role") == "customer"]
    if len(starts) <= keep_turns:
        return messages, summary
    cut = starts[-keep_turns]
    lines = [summary] if summary else []
    old = messages[:cut]
    for i, message in enumerate(old):
        if message.get("role") != "customer":
            continue
        reply = next((m for m in old[i + 1:] if m.get("role") == "assistant"), None)
        line = f"Customer: {first_sentence(message.get('text', ''))}"
        if reply:
            line += f" — Assistant: {first_sentence(reply.get('text', ''))}"
        lines.append(line)
    return messages[cut:], "\n".join(lines)


@timed("load_context")
def load_context(state: State) -> dict[str, Any]:
    text = state.get("text", "")
    history, summary = compress(list(state.get("messages") or []), state.get("summary", ""),
                                KEEP_TURNS - 1)
    update: dict[str, Any] = {
        "turn": int(state.get("turn") or 0) + 1,
        "messages": [{"role": "customer", "text": text}],
        "results": dict(RESET),
        "trace": dict(RESET),
        "node_timings_ms": dict(RESET),
        "tasks": [],
        "clauses": [],
        "understood": {},
        "entities": {},
        "reply": {},
        "status": "",
        "route": "",
        "intent": "",
        "confidence": 0.0,
    }
    if summary != state.get("summary", ""):
        update["messages"] = {"__replace__": [*history, {"role": "customer", "text": text}]}
        update["summary"] = summary
    return update
