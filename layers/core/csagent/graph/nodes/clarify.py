"""clarify: relevant but missing a parameter → ask for exactly that parameter; not relevant,
unknown or low-confidence → say plainly what the assistant can do."""

from __future__ import annotations

from typing import Any

from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.planning import status_of_asking, still_asked
from csagent.replies import ask_for, render


@timed("clarify")
def clarify(state: State) -> dict[str, Any]:
    lang = state.get("lang", "en")
    missing = (state.get("trace") or {}).get("missing") or []
    if missing:
        text = "\n".join(dict.fromkeys(ask_for(m, lang) for m in missing))
        asked = still_asked(missing)
        return {"reply": {"text": text, "citations": []}, "status": status_of_asking(missing),
                "awaiting": asked}
    if state.get("route") == "out_of_scope":
        text, status = render("out_of_scope", lang), "refused"
    else:
        text, status = render("clarify_generic", lang), "needs_clarification"
    return {"reply": {"text": text, "citations": []}, "status": status}
