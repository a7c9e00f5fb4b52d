"""The cancellation reason a customer gave, mapped to the store's fixed list.

Phrases (`data/cancel_reasons.json`) are matched as lower-case words after apostrophes are
dropped from both sides, so "dont need", "don't need" and "don’t need" are the same words: people
type quickly and leave them out. Up to two other words may stand between a phrase's words
("don't really need", "no longer actually need"). One-word phrases of six letters or more are
also read through one typo ("by mistak").
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


@cache
def _long_words() -> dict[str, tuple[str, ...]]:
    """reason -> its one-word phrases long enough to recognise with a typo ("mistak", "acidentally")."""
    path = resources.files("csagent.nlp").joinpath("data", "cancel_reasons.json")
    raw = json.loads(path.read_text("utf-8"))
    return {reason: tuple(p for p in phrases if " " not in p and p.isascii() and len(p) >= TYPO_MIN_LENGTH)
            for reason, phrases in raw.items() if not reason.startswith("_")}


#: Words at least this long are recognised with one letter wrong, missing or extra.
TYPO_MIN_LENGTH = 6


def _one_edit(a: str, b: str) -> bool:
    """At most one letter substituted, dropped or added between `a` and `b`."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def find_cancel_reason(text: str) -> str | None:
    """'ordered by mistake' / 'no longer needed' when the text says so, else None; its long words
    are read through one typo ("bought it by mistak")."""
    lowered = _normalise(text)
    for reason, patterns in _phrases().items():
        if any(p.search(lowered) for p in patterns):
            return reason
    words = [w for w in re.findall(r"[a-z]+", lowered) if len(w) >= TYPO_MIN_LENGTH - 1]
    for reason, phrases in _long_words().items():
        if any(_one_edit(word, phrase) for phrase in phrases for word in words):
            return reason
    return None
