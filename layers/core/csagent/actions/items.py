"""Which of an order's items the customer means, from their own words.

"return the skateboard from #W6344370", "send back the cycling helmets", "return everything":
the customer names items by product name (any case, singular or plural, a small typo), by the
catalogue products the understanding found in the message, or all at once. Matching is done
against the order's own lines only, so a word can never pick an item the order does not hold.

Pure functions, no I/O. The words that mean "all of them" are data (`item_words.yaml`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources
from typing import Protocol

from csagent import yamlio

_WORD = re.compile(r"[a-z0-9]+")
FUZZY_RATIO = 0.88
"""Two words of at least `MIN_FUZZY_CHARS` letters are the same word at this similarity
("skatebord" ~ "skateboard"); shorter words must match exactly ("order" is not "border")."""
MIN_FUZZY_CHARS = 6


class Line(Protocol):
    """What matching needs of an order line."""

    @property
    def name(self) -> str: ...

    @property
    def product_id(self) -> str: ...

    @property
    def option_text(self) -> str: ...


@dataclass(frozen=True)
class Match:
    """The lines the words name. `ambiguous` holds the candidates when the words fit several
    different products equally well (only a shared word such as "kettle"), or several units of
    one product that the words do not tell apart; the caller then asks which."""

    lines: tuple[Line, ...] = ()
    ambiguous: tuple[Line, ...] = ()


@lru_cache(maxsize=1)
def _vocabulary() -> dict[str, tuple[str, ...]]:
    data = yamlio.load_file(resources.files("csagent.actions").joinpath("item_words.yaml"))
    return {key: tuple(str(v).lower() for v in data[key]) for key in ("all_items", "plural_cues")}


def _stem(word: str) -> str:
    """A light singular: "helmets" -> "helmet", "boxes" -> "box", "glass" stays."""
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case word stems of `text`."""
    return [_stem(w) for w in _WORD.findall(text.lower())]


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    return min(len(a), len(b)) >= MIN_FUZZY_CHARS and SequenceMatcher(None, a, b).ratio() >= FUZZY_RATIO


def _contains(said: Sequence[str], wanted: Sequence[str]) -> bool:
    """Every word of `wanted` occurs in `said`."""
    return bool(wanted) and all(any(_same(w, s) for s in said) for w in wanted)


def means_everything(text: str) -> bool:
    """"everything", "all items", "the whole order"... (`item_words.yaml`)."""
    padded = f" {' '.join(_WORD.findall(text.lower()))} "
    return any(f" {phrase} " in padded for phrase in _vocabulary()["all_items"])


def _wants_several(text: str) -> bool:
    padded = f" {' '.join(_WORD.findall(text.lower()))} "
    return any(f" {cue} " in padded for cue in _vocabulary()["plural_cues"])


def _by_name(lines: Sequence[Line], said: Sequence[str]) -> tuple[list[Line], bool]:
    """Lines whose whole product name is in the words; failing that, lines whose head noun (the
    name's last word: "toothbrush", "kettle") is. The flag says the head noun alone decided."""
    full = [x for x in lines if _contains(said, words(x.name))]
    if full:
        return full, False
    return [x for x in lines if words(x.name) and _contains(said, words(x.name)[-1:])], True


def _narrow_units(chosen: list[Line], said: Sequence[str], text: str) -> Match:
    """Several units of the same product: the option words pick one ("the blue one"); "both" or
    "all" takes every unit; otherwise the customer is asked which."""
    by_product: dict[str, list[Line]] = {}
    for line in chosen:
        by_product.setdefault(line.name, []).append(line)
    picked: list[Line] = []
    unclear: list[Line] = []
    for units in by_product.values():
        if len(units) == 1 or _wants_several(text):
            picked.extend(units)
            continue
        scored = [(sum(1 for w in set(words(u.option_text)) if any(_same(w, s) for s in said)), u)
                  for u in units]
        best = max(score for score, _ in scored)
        top = [u for score, u in scored if score == best]
        if best > 0 and len(top) == 1:
            picked.extend(top)
        else:
            unclear.extend(units)
    return Match(lines=tuple(picked), ambiguous=tuple(unclear))


def match_lines(lines: Sequence[Line], text: str, product_ids: Sequence[str] = ()) -> Match:
    """The order lines the customer's words (and the catalogue products found in them) name.

    Empty when nothing fits (the caller lists the order's items and asks).
    """
    if means_everything(text):
        return Match(lines=tuple(lines))
    said = words(text)
    given = set(product_ids)
    chosen = [x for x in lines if x.product_id and x.product_id in given]
    named, head_only = _by_name(lines, said)
    if head_only and len({x.name for x in named}) > 1 and not _wants_several(text):
        # "the kettle" in an order with an Electric Kettle and a Tea Kettle.
        return Match(lines=tuple(chosen), ambiguous=tuple(x for x in named if x not in chosen))
    chosen.extend(x for x in named if x not in chosen)
    return _narrow_units(chosen, said, text)
