"""respond: the last node of every path: record the reply in the public messages."""

from __future__ import annotations

from typing import Any

from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.replies import render


@timed("respond")
def respond(state: State) -> dict[str, Any]:
    reply = dict(state.get("reply") or {})
    status = state.get("status") or ""
    if state.get("route") == "refused":
        reply = {"text": render("refused_" + str((state.get("trace") or {}).get("guard", "")),
                                state.get("lang", "en")), "citations": []}
        status = "refused"
    reply.setdefault("citations", [])
    set_aside = (state.get("trace") or {}).get("set_aside") or []
    if set_aside:
        note = render("confirm_set_aside", state.get("lang", "en"), actions="; ".join(set_aside))
        reply["text"] = f"{note}\n{reply.get('text', '')}".strip()
    return {"reply": reply, "status": status or "answered",
            "messages": [{"role": "assistant", "text": reply.get("text", "")}]}
