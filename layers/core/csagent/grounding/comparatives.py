"""Comparatives: "a size up", "a bigger zoom", "more storage", "the largest capacity", "two sizes down".

An option's values are ordered when every one reads as a number with its unit ("512GB" < "1TB",
"1.5L" < "2L", "30-50 lbs" < "55-75 lbs") or sits on one scale of `data/comparatives.json`
("small" < "medium" < "large", "S" < "M" < "XL"). A comparative word moves one step (two with
"two sizes up") along the dimension it names ("a bigger zoom", "more storage", "a size up"), or,
when it names none ("a bigger one"), along the first of its usual dimensions the product has; a
superlative ("the largest") goes to the end. Nothing is moved when the words rule it out ("no
longer", "not bigger"), when the dimension's values have no order (colours), or when there is no
step left ("a size up" from the largest): the caller then asks, as for any wish it cannot place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from csagent.grounding.options import tokens

_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)")
_COUNTS = {"a": 1, "one": 1, "1": 1, "two": 2, "2": 2, "three": 3, "3": 3}
_RULED_OUT = frozenset({"no", "not", "never"})


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    text = resources.files("csagent.grounding").joinpath("data/comparatives.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@dataclass(frozen=True)
class Move:
    """A wish to move along one dimension: `steps` values in `direction`, or to its end."""

    key: str
    direction: int
    steps: int = 1
    to_end: bool = False


def ordered_values(values: Sequence[str]) -> list[str] | None:
    """The values in increasing order, or None when they have none."""
    if len(values) < 2:
        return None
    lowered = [v.lower() for v in values]
    for scale in _data()["scales"]:
        if all(v in scale for v in lowered):
            return sorted(values, key=lambda v: scale.index(v.lower()))
    magnitudes: dict[str, float] = {}
    for value in values:
        magnitude = _magnitude(value)
        if magnitude is None:
            return None
        magnitudes[value] = magnitude
    return sorted(values, key=magnitudes.__getitem__)


def _magnitude(value: str) -> float | None:
    m = _NUMBER.match(value.lower())
    if m is None:
        return None
    scale: float = _data()["units"].get(m.group(2), 1)
    return float(m.group(1)) * scale


def _key_named(toks: Sequence[str], keys: Sequence[str]) -> str | None:
    """The product's dimension these words name: its whole name ("screen size"), one of its words
    ("screen", "battery"), or an everyday word for it ("memory" for RAM)."""
    words = {tokens(w)[0]: k for w, k in _data()["dimension_words"].items()}
    lowered = {k.lower(): k for k in keys}
    for tok in toks:
        if tok in words and words[tok] in lowered:
            return lowered[words[tok]]
        exact = [k for k in keys if tokens(k) == [tok]]
        if exact:
            return exact[0]
        partial = [k for k in keys if tok in tokens(k)]
        if partial:
            return partial[0]
    return None


def moves(text: str, keys: Sequence[str]) -> list[Move]:
    """The moves the words ask for, over a product with these option dimensions."""
    data = _data()
    words: dict[str, Any] = data["words"]
    superlatives: dict[str, str] = data["superlatives"]
    toks = tokens(text.replace("n't", " not"))
    out: list[Move] = []
    for i, tok in enumerate(toks):
        word = superlatives.get(tok, tok)
        # "not a bigger one", "no longer", "I don't need it any longer": ruled out, not wished for
        if word not in words or _RULED_OUT & set(toks[max(0, i - 3) : i]) or (i and toks[i - 1] == "any"):
            continue
        # "a size up", "two sizes bigger": the dimension just before; "bigger zoom", "up a size",
        # "more storage": the next word, past a count.
        before = _key_named(toks[i - 1 : i], keys) if i else None
        following = [t for t in toks[i + 1 : i + 3] if t not in _COUNTS][:1]
        after = _key_named(following, keys)
        key = before or after
        if word in ("up", "down") and key is None:
            continue  # "up" and "down" move only along a dimension they name
        if key is None:
            usual = [k for u in words[word]["usual"] for k in keys if k.lower() == u]
            key = usual[0] if usual else None
        if key is None:
            continue
        count_at = i - 2 if before else i - 1
        steps = _COUNTS.get(toks[count_at], 1) if count_at >= 0 else 1
        if after and not before and i + 1 < len(toks) and toks[i + 1] in _COUNTS:
            steps = _COUNTS[toks[i + 1]]  # "up two sizes"
        out.append(Move(key, int(words[word]["direction"]), steps, to_end=tok in superlatives))
    return out


def apply_moves(
    text: str, current: Mapping[str, str], dimensions: Mapping[str, Sequence[str]]
) -> dict[str, str]:
    """The option values the comparatives in `text` ask for, from the item's `current` options."""
    wanted: dict[str, str] = {}
    for move in moves(text, list(dimensions)):
        ordered = ordered_values(dimensions[move.key])
        now = current.get(move.key)
        if ordered is None or now not in ordered:
            continue
        if move.to_end:
            target = ordered[-1] if move.direction > 0 else ordered[0]
            if target != now:
                wanted[move.key] = target
            continue
        index = ordered.index(now) + move.direction * move.steps
        if 0 <= index < len(ordered):
            wanted[move.key] = ordered[index]
    return wanted
