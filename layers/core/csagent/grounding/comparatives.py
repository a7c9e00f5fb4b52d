"""Comparatives: "a size up", "a bigger zoom", "more storage", "the largest capacity", "two sizes down".

An option's values are ordered when every one reads as a number with its unit ("512GB" < "1TB",
"1.5L" < "2L", "30-50 lbs" < "55-75 lbs") or sits on one scale of `data/comparatives.json`
("small" < "medium" < "large", "S" < "M" < "XL"). A comparative word moves one step (two with
"two sizes up") along the dimension it names ("a bigger zoom", "more storage", "a size up"), or,
when it names none ("a bigger one"), along the first of its usual dimensions the product has; a
superlative ("the largest", "the most affordable") goes to the end. Nothing is moved when the
words rule it out ("no longer", "not bigger"), when the dimension's values have no order (colours),
or when there is no step left ("a size up" from the largest): the caller then asks, as for any wish
it cannot place.

The same words rank a catalogue product's versions for a question about what the store sells
(`rank_versions`): "the largest kettle" is the versions in stock with the largest capacity, "the
most cheap bulb" the cheapest one, "yoga mats thicker than 5mm" those above 5mm. Price is one more
dimension there.
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
    #: "thicker than 5mm": the value (as written) the wish goes beyond.
    beyond: str | None = None


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


def dimension_named(toks: Sequence[str], keys: Sequence[str]) -> str | None:
    """The option dimension of `keys` one of the words names ("colours" -> "color"), or None."""
    return _key_named(toks, keys)


def may_rank(text: str) -> bool:
    """Could `rank_versions` rank anything by these words: a superlative, or a comparative with
    "than"? (What it needs of them, read before the product's versions are fetched.)"""
    data = _data()
    toks = _adjectives_read(tokens(text.replace("n't", " not")))
    return any(tok in data["superlatives"] or (tok in data["words"] and toks[i + 1 : i + 2] == ["than"])
               for i, tok in enumerate(toks))


def moves(text: str, keys: Sequence[str]) -> list[Move]:
    """The moves the words ask for, over a product with these option dimensions."""
    data = _data()
    words: dict[str, Any] = data["words"]
    superlatives: dict[str, str] = data["superlatives"]
    toks = _adjectives_read(tokens(text.replace("n't", " not")))
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
        beyond = toks[i + 2] if (tok not in superlatives and toks[i + 1 : i + 2] == ["than"]
                                 and i + 2 < len(toks) and _magnitude(toks[i + 2]) is not None) else None
        out.append(Move(key, int(words[word]["direction"]), steps, to_end=tok in superlatives, beyond=beyond))
    return out


def _adjectives_read(toks: Sequence[str]) -> list[str]:
    """"most affordable" read as "cheapest", "less pricey" as "cheaper", "least expensive" as
    "cheapest": a plain adjective after more/most/less/least becomes the comparative (or
    superlative) it stands for, its opposite after less/least."""
    data = _data()
    adjectives: dict[str, list[str]] = data["adjectives"]
    superlative_of = {comparative: sup for sup, comparative in data["superlatives"].items()
                      if sup not in ("most", "least", "maximum", "max", "minimum")}
    out: list[str] = []
    i = 0
    while i < len(toks):
        tok, following = toks[i], toks[i + 1] if i + 1 < len(toks) else ""
        if tok in ("more", "most", "less", "least") and following in adjectives:
            comparative = adjectives[following][0 if tok in ("more", "most") else 1]
            to_end = tok in ("most", "least")
            out.append(superlative_of.get(comparative, comparative) if to_end else comparative)
            i += 2
            continue
        out.append(tok)
        i += 1
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


@dataclass(frozen=True)
class Ranked:
    """A catalogue product's versions ranked by what a question asks: those in stock at the end
    of `key` ("price" or an option) in `direction`, or beyond `move.beyond`; cheapest first."""

    move: Move
    #: The option value they share at that end ("2L"); None for price and for a bound.
    value: str | None
    versions: list[Mapping[str, Any]]


def rank_versions(text: str, versions: Sequence[Mapping[str, Any]],
                  named: Mapping[str, str] | None = None) -> Ranked | None:
    """The versions (`{"options": {...}, "price": .., "available": ..}`, every version of one
    product) the superlative or the "than" in `text` picks among those in stock having the options
    `named` ("the cheapest wifi one"; an option of the ranked dimension itself, the "5mm" of
    "thicker than 5mm", does not narrow), or None when the words rank nothing or along a dimension
    whose values have no order."""
    dimensions: dict[str, list[str]] = {}
    for version in versions:
        for key, value in (version.get("options") or {}).items():
            if value not in dimensions.setdefault(str(key), []):
                dimensions[str(key)].append(str(value))
    move = next((m for m in moves(text, [*dimensions, "price"]) if m.to_end or m.beyond), None)
    if move is None:
        return None
    wanted = {k.lower(): v.lower() for k, v in (named or {}).items() if k.lower() != move.key.lower()}
    in_stock = sorted((v for v in versions if v.get("available") and all(
        str(value).lower() == wanted[str(key).lower()]
        for key, value in (v.get("options") or {}).items() if str(key).lower() in wanted)),
        key=lambda v: float(v.get("price") or 0))
    if move.key == "price":
        if move.beyond is not None:
            limit = _magnitude(move.beyond.lstrip("$")) or 0.0
            return Ranked(move, None, [v for v in in_stock
                                       if (float(v.get("price") or 0) - limit) * move.direction > 0])
        return Ranked(move, None, in_stock[:1] if move.direction < 0 else in_stock[-1:])
    ordered = ordered_values(dimensions.get(move.key, []))
    if ordered is None:
        return None
    rank = {value: i for i, value in enumerate(ordered)}
    placed = [(rank[value], v) for v in in_stock
              if (value := str((v.get("options") or {}).get(move.key))) in rank]
    if move.beyond is not None:
        bound = _magnitude(move.beyond)
        if bound is None:
            return None
        return Ranked(move, None, [v for i, v in placed
                                   if ((_magnitude(ordered[i]) or 0.0) - bound) * move.direction > 0])
    if not placed:
        return Ranked(move, None, [])
    end = max(i for i, _ in placed) if move.direction > 0 else min(i for i, _ in placed)
    return Ranked(move, ordered[end], [v for i, v in placed if i == end])


def pick_by_degree(text: str, options: Sequence[Mapping[str, str]]) -> int | None:
    """ "the tall glass bookshelf", "the shorter of my two skateboards", "the bigger one": of several
    items of one product (their `options`) that differ along an ordered dimension, the index of the
    one at the end a degree word points to (a comparative, a superlative or a plain adjective:
    "tall" is the taller of them); None when the words name no degree, rule it out ("not the
    bigger one"), or it does not single one out."""
    data = _data()
    words: dict[str, Any] = data["words"]
    toks = _adjectives_read(tokens(text.replace("n't", " not")))
    keys = [k for k in options[0] if len({o.get(k) for o in options}) > 1] if options else []
    for i, tok in enumerate(toks):
        word = data["superlatives"].get(tok) or (data["adjectives"].get(tok) or [tok])[0]
        if word not in words or _RULED_OUT & set(toks[max(0, i - 3):i]):
            continue
        key = _key_named(toks[i + 1:i + 2], keys) or next(
            (k for u in words[word]["usual"] for k in keys if k.lower() == u), None)
        ordered = ordered_values(list(dict.fromkeys(o.get(key, "") for o in options))) if key else None
        if key is None or ordered is None:
            continue
        end = ordered[-1] if words[word]["direction"] > 0 else ordered[0]
        at_end = [n for n, o in enumerate(options) if o.get(key) == end]
        if len(at_end) == 1:
            return at_end[0]
    return None
