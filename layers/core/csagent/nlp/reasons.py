"""The cancellation reason a customer gave, mapped to the store's fixed list."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def _phrases() -> dict[str, tuple[str, ...]]:
    path = resources.files("csagent.nlp").joinpath("data", "cancel_reasons.json")
    raw = json.loads(path.read_text("utf-8"))
    return {reason: tuple(p.lower() for p in phrases) for reason, phrases in raw.items()
            if not reason.startswith("_")}


def find_cancel_reason(text: str) -> str | None:
    """'ordered by mistake' / 'no longer needed' when the text says so, else None."""
    lowered = text.lower()
    for reason, phrases in _phrases().items():
        if any(p in lowered for p in phrases):
            return reason
    return None
