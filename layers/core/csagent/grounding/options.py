"""Option words: which of a product's option values a piece of text names.

Everything is derived from the catalogue's own values, so a new product or option works without
code: values and text are compared as normalised token sequences ("15 inch" = "15-inch",
"5 x" = "5x", "2 liters" = "2 liter"); yes/no dimensions are named by the dimension itself
("waterproof", "non-waterproof"); a hyphenated value also written as one word ("wifi" for Wi-Fi);
a `none` value by "no <dimension>" / "without <dimension>";
bare numbers and one-letter sizes ("10", "M") only next to their dimension ("size 10", "in M"), a
one-letter size after "the" too ("the M").
A small synonym table (`data/option_synonyms.json`, data, not code) adds everyday words for
values ("large" for L, "grey" for gray); a Chinese gloss (`nlp.gloss`) turns Chinese
option and function words into those English words first ("换成白色" -> "to white").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from csagent.nlp.gloss import gloss

_WORD = re.compile(r"[a-z0-9%]+(?:\.[0-9]+)?[a-z%]*")
_NUM_UNIT = re.compile(
    r"(\d)\s+(?=(?:x|mm|ml|l|gb|tb|mp|ft|feet|foot|w|k|mah|inch|inches|hours?|hrs?|liters?|litres?|"
    r"cups?|degrees?|lbs?|piece|bar|p)\b)"
)
_NEGATORS = frozenset({"no", "not", "non", "without", "nope", "never", "isnt", "arent", "wasnt", "werent",
                        "dont", "doesnt", "didnt"})
_UNITS_PLURAL = {  # and one spelling per unit: "1 litre" = "1 liter" = "1L"
    "inches": "inch",
    "hours": "hour",
    "hrs": "hour",  # "the one w 20 hrs"
    "hr": "hour",
    "liters": "l",
    "litres": "l",
    "liter": "l",
    "litre": "l",
    "cups": "cup",
    "degrees": "degree",
    "pieces": "piece",
    "lbs": "lb",
    "feet": "ft",
    "foot": "ft",
}
_KEEP = frozenset({"same", "keep", "keeping", "still", "unchanged"})
# Words around a bare number or one-letter size that make it an option value, not a count.
# "if not, then 11", "exchange for 7"
_CONTRACTION = re.compile(r"(?<=[a-z])'(?=[a-z])")
_VALUE_BEFORE = frozenset({"in", "a", "an", "need", "want", "not", "then", "or", "for"})
_VALUE_AFTER = frozenset({"not", "instead"})


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word[0].isalpha():
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Lower-case word tokens with numbers and their units joined ("15 inch" -> "15inch"); Chinese
    option words are read through `gloss`."""
    lowered = gloss(text).lower().replace("-", " ").replace("_", " ").replace("’", "'")
    lowered = _NUM_UNIT.sub(r"\1", lowered)
    # A contraction is one word: the "s" of "let's not" is no size S (no option value holds one).
    lowered = _CONTRACTION.sub("", lowered)
    out: list[str] = []
    for word in _WORD.findall(lowered):
        for plural, single in _UNITS_PLURAL.items():
            if word.endswith(plural):
                word = word[: -len(plural)] + single
                break
        out.append(_singular(word))
    return out


@lru_cache(maxsize=1)
def _synonym_data() -> dict[str, dict[str, list[str]]]:
    """`data/option_synonyms.json`, read once: "values" and "yes_no" (see its `_about` entries)."""
    text = resources.files("csagent.grounding").joinpath("data/option_synonyms.json").read_text("utf-8")
    data: dict[str, dict[str, list[str]]] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def synonyms() -> dict[str, list[str]]:
    """value (lower-case) -> other words customers use for it."""
    return {k.lower(): v for k, v in _synonym_data()["values"].items()}


@lru_cache(maxsize=1)
def yes_no_words() -> dict[str, list[str]]:
    """yes-or-no dimension (lower-case) -> everyday words for it ("waterproof")."""
    return {k.lower(): v for k, v in _synonym_data().get("yes_no", {}).items()}


@dataclass(frozen=True, slots=True)
class OptionHit:
    key: str
    value: str
    position: int  # token index in the text
    length: int = 1  # tokens covered
    synonym: bool = False  # named by an everyday word of `option_synonyms.json`, not the value itself


def _find(seq: Sequence[str], toks: Sequence[str]) -> list[int]:
    n = len(seq)
    return [i for i in range(len(toks) - n + 1) if list(toks[i : i + n]) == list(seq)] if n else []


def _needs_key(value: str) -> bool:
    """A bare number or a one-letter size ("10", "M") could be anything; "XL" or "XS" cannot."""
    return value.isdigit() or (len(value) == 1 and value.isalpha())


def find_option_values(text: str, dimensions: Mapping[str, Iterable[str]]) -> list[OptionHit]:
    """Every option value of `dimensions` ({key: values}) the text names, in text order."""
    toks = tokens(text)
    hits: list[OptionHit] = []
    for key, values in dimensions.items():
        values = list(values)
        key_toks = tokens(key)
        lowered = {v.lower() for v in values}
        if lowered <= {"yes", "no"}:
            hits.extend(_yes_no(key, key_toks, toks))
            continue
        head = key_toks[-1] if key_toks else ""
        for value in values:
            forms = [(tokens(value), False)] + [(tokens(s), True) for s in synonyms().get(value.lower(), [])]
            if value.isdigit() and head:  # "1000-piece" for pieces: 1000
                forms.append(([value + head], False))
            if "-" in value and len(forms[0][0]) > 1:  # "wifi" for Wi-Fi, "usbc" for USB-C
                forms.append((["".join(forms[0][0])], False))
            unit = _UNIT_AFTER_NUMBER.match(forms[0][0][-1]) if len(forms[0][0]) > 1 else None
            if unit and forms[0][0][-2].isdigit():  # "the 30-50 one" for 30-50 lbs: a range says enough
                forms.append(([*forms[0][0][:-1], unit.group(1)], False))
            for form, synonym in forms:
                for i in _find(form, toks):
                    if value.lower() == "none":
                        # "connectivity none", "none for the connectivity": named beside its
                        # dimension; a bare "none" is only a word ("no <dimension>" is below).
                        head_near = toks[max(0, i - 2):i] + toks[i + 1:i + 4]
                        if not head or head not in head_near:
                            continue
                    if (
                        _needs_key(value)
                        and len(form) == 1
                        and form[0] == value.lower()
                        and not _keyed(key_toks, toks, i)
                        and not (value.isalpha() and i > 0 and toks[i - 1] == "the")
                    ):  # a letter after "the" names its size: "I need the M in same black color"
                        continue
                    hits.append(OptionHit(key, value, i, len(form), synonym))
        if "none" in lowered:
            for i in _find(key_toks[-1:], toks):
                if i > 0 and toks[i - 1] in _NEGATORS:
                    hits.append(OptionHit(key, next(v for v in values if v.lower() == "none"), i - 1))
    hits.sort(key=lambda h: h.position)
    if _FIT.search(" ".join(toks)):
        # "my bike helmet is to small, can i get the same one in a medium": words of how it fits make
        # "medium" the size (M), not the helmet's medium ventilation
        sized = {h.position for h in hits if h.key == "size"}
        hits = [h for h in hits if h.key == "size" or h.position not in sized]
    return _drop_shadowed(hits)


# Words of how a thing fits: "too small", "to tight", "a bit big", "a size up", "doesn't fit".
_FIT = re.compile(r"\b(?:too?|way too|bit|little|so)\s+(?:small|big|large|tight|loose|short|long)\b"
                  r"|\b(?:tight|doesnt fit|dont fit|size up|size down)\b")


def other_readings(text: str, dimensions: Mapping[str, Iterable[str]]) -> list[list[OptionHit]]:
    """The text's option words read the other way where a word is a value of one dimension and an
    everyday word for another's ("medium": ventilation medium, or size M), one reading per such
    word: `find_option_values` prefers the value named as itself, and these are what to try when
    that reading names no version the store has ("the blue helmet, same colour just medium")."""
    hits = find_option_values(text, dimensions)
    toks = tokens(text)
    readings = []
    for hit in hits:
        if hit.synonym:
            continue
        said = " ".join(toks[hit.position: hit.position + hit.length])
        for key, values in dimensions.items():
            if key == hit.key:
                continue
            for value in values:
                if said in {" ".join(tokens(w)) for w in synonyms().get(value.lower(), [])}:
                    swapped = OptionHit(key, value, hit.position, hit.length, True)
                    readings.append([swapped if h is hit else h for h in hits])
    return readings


_UNIT_AFTER_NUMBER = re.compile(r"^(\d+)[a-z]+$")


def _keyed(key_toks: Sequence[str], toks: Sequence[str], i: int) -> bool:
    """A bare number or letter size counts only next to its dimension ("size 10", "10 size", "in M")
    or where a wish puts one ("a 12", "I need 9 not 8", "an 11 instead")."""
    head = key_toks[-1] if key_toks else ""
    before = toks[max(0, i - 2) : i]
    after = toks[i + 1 : i + 2]
    return head in before or head in after or (bool(before) and before[-1] in _VALUE_BEFORE) \
        or (bool(after) and after[0] in _VALUE_AFTER)


def yes_no_negated(toks: Sequence[str], i: int) -> bool:
    """Is the yes-or-no option word at `i` negated where it stands ("not waterproof", "won't be
    waterproof"), its hit then "no"?"""
    return (i > 0 and toks[i - 1] in _NEGATORS) \
        or (i > 1 and toks[i - 2] in _NEGATORS and toks[i - 1] in {"be", "a", "very"})


def _yes_no(key: str, key_toks: Sequence[str], toks: Sequence[str]) -> list[OptionHit]:
    """ "waterproof" -> yes; "non-waterproof", "not waterproof", "no water resistance" -> no."""
    out = []
    stems = [key_toks, *(tokens(w) for w in yes_no_words().get(key.lower(), ())),
             [key_toks[0]] if len(key_toks) > 1 else []]
    for form in stems:
        for i in _find(form, toks):
            negated = yes_no_negated(toks, i)
            if i > 0 and toks[i - 1] in _KEEP or i > 2 and toks[i - 3] in _KEEP and toks[i - 1] == "and":
                continue  # "same water resistance": kept as it is, not asked for
            out.append(OptionHit(key, "no" if negated else "yes", i, len(form)))
        if out:
            break
    return out


def _drop_shadowed(hits: list[OptionHit]) -> list[OptionHit]:
    """Overlapping hits: the one covering more words wins ("non-polarized" over "polarized",
    "stainless steel" over "steel"); a value named as itself wins over an everyday word of another
    value ("medium ventilation" is not size M)."""

    def rank(h: OptionHit) -> tuple[int, int]:
        return (h.length, 0 if h.synonym else 1)

    kept: list[OptionHit] = []
    for hit in hits:
        span = range(hit.position, hit.position + hit.length)
        rivals = [
            o for o in hits if o is not hit and set(span) & set(range(o.position, o.position + o.length))
        ]
        if any(rank(o) > rank(hit) for o in rivals):
            continue
        kept.append(hit)
    return kept
