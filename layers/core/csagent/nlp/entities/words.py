"""What the entity extractors share: the word lists of `data/entity_terms.json` (loaded once, on
first use), an alternation of words for a pattern, ASCII word tokens and their singular forms."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Any

from csagent.nlp.script import has_ideographs

# ASCII classes on purpose: Python's \w matches CJK, and "订单#W2611340" must still parse.
TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")


@lru_cache(maxsize=1)
def terms() -> dict[str, Any]:
    """Word lists from `data/entity_terms.json` (loaded once, on first use)."""
    text = resources.files("csagent.nlp").joinpath("data", "entity_terms.json").read_text(encoding="utf-8")
    return json.loads(text)


def says_any(text: str, phrases: Iterable[str]) -> bool:
    """Does the text hold one of the phrases: English ones as whole words (case and apostrophes
    ignored, "haven't" is "havent"), Chinese ones as written?"""
    words = phrase_form(text)
    return any((p in text) if has_ideographs(p) else (phrase_form(p) in words) for p in phrases)


def phrase_form(text: str) -> str:
    """Lower-case words between single spaces, apostrophes dropped ("haven't" -> " havent ")."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower().replace("'", "").replace("’", ""))) + " "


def alternation(words: Iterable[str]) -> str:
    """The words as one regex alternation, longest first (so "Street" wins over "St")."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def singular(word: str) -> str:
    """The lower-case singular of an English word ("batteries" → "battery", "boxes" → "box")."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 5 and w.endswith("lves"):  # bookshelves, halves
        return w[:-3] + "f"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def tokens(text: str) -> list[tuple[str, int, int]]:
    """(singular lower-case token, start, end) for each ASCII word in the text."""
    return [(singular(m.group(0).replace("’", "'")), m.start(), m.end()) for m in TOKEN_RE.finditer(text)]
