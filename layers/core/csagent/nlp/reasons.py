"""The cancellation reason a customer gave, mapped to the store's fixed list.

Phrases (`data/cancel_reasons.json`) are matched as lower-case words after apostrophes are
dropped from both sides, so "dont need", "don't need" and "don’t need" are the same words: people
type quickly and leave them out. Up to two other words may stand between a phrase's words
("don't really need", "no longer actually need").
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

_APOSTROPHES = re.compile(r"['’‘`´]")


def _normalise(text: str) -> str:
    """Lower case, no apostrophes, single spaces."""
    return " ".join(_APOSTROPHES.sub("", text.lower()).split())


_GAP = r"(?:\s+\S+){0,2}\s+"


def _pattern(phrase: str) -> re.Pattern[str]:
    words = phrase.split()
    if not words or not phrase.isascii():  # Chinese: a plain substring
        return re.compile(re.escape(phrase))
    return re.compile(r"\b" + _GAP.join(re.escape(w) for w in words))


@cache
def _phrases() -> dict[str, tuple[re.Pattern[str], ...]]:
    path = resources.files("csagent.nlp").joinpath("data", "cancel_reasons.json")
    raw = json.loads(path.read_text("utf-8"))
    return {reason: tuple(_pattern(_normalise(p)) for p in phrases) for reason, phrases in raw.items()
            if not reason.startswith("_")}


def find_cancel_reason(text: str) -> str | None:
    """'ordered by mistake' / 'no longer needed' when the text says so, else None."""
    lowered = _normalise(text)
    for reason, patterns in _phrases().items():
        if any(p.search(lowered) for p in patterns):
            return reason
    return None
