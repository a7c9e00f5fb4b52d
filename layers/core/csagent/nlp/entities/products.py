"""Catalogue products named in a text, with the options written next to them, and how well a
customer's words fit a product name.

Fuzzy matching uses `difflib` from the standard library (rapidfuzz is not a dependency); the
catalogue is an argument, never read here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from csagent.nlp.entities.words import tokens


@dataclass(frozen=True, slots=True)
class ProductMention:
    """A catalogue product found in the text, with the options mentioned next to it."""

    product_id: str
    name: str
    score: float
    surface: str
    span: tuple[int, int]
    options: dict[str, str] = field(default_factory=dict)
    ambiguous: bool = False


def _is_english(word: str) -> bool:
    """Is `word` an English word (symspellpy's dictionary, `nlp.spelling.english_words`)? False
    when the dictionary cannot be read: near spellings are then read as typos, as before."""
    try:
        from csagent.nlp.spelling import english_words

        return word in english_words()
    except (ImportError, OSError):
        return False


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b).ratio()


def _ratio_at_least(a: str, b: str, floor: float) -> float:
    """`_ratio(a, b)`, or 0.0 when its cheap upper bounds already say it is below `floor` (the
    bounds never under-estimate, so no match above the floor is lost; most pairs stop here)."""
    matcher = SequenceMatcher(None, a, b)
    if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
        return 0.0
    return matcher.ratio()


def name_similarity(hint: str, name: str) -> float:
    """How well a customer's words ("those headphone", "blue bottle") fit a product name, 0..1.

    Best of: whole-string ratio, the no-space ratio ("tshirt" vs "T-Shirt"), and the share of
    the name's words present (fuzzily) in the hint, with the head noun weighing most.
    """
    h = [t for t, _, _ in tokens(hint)]
    n = [t for t, _, _ in tokens(name)]
    if not h or not n:
        return 0.0
    whole = max(_ratio(" ".join(h), " ".join(n)), _ratio("".join(h), "".join(n)))
    hits = [max((_ratio(word, tok) for tok in h), default=0.0) for word in n]
    covered = sum(1.0 for r in hits if r >= 0.8)
    head = 1.0 if hits[-1] >= 0.8 else 0.0
    if len(n) > 1:
        overlap = 0.6 * head + 0.4 * (covered / len(n))
    else:
        overlap = hits[0] if hits[0] >= 0.8 else hits[0] * 0.5
    return round(max(whole, overlap), 4)


_WEAK_HEADS = frozenset({"set", "kit", "maker", "machine", "case", "one", "bed", "mat", "bulb", "pro"})
_DETERMINERS = frozenset({"the", "my", "a", "an", "her", "his", "their", "our", "your", "that", "this",
                          "those", "these"})


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """A catalogue product ready to match: its name's singular tokens and its option values."""

    product_id: str
    name: str
    tokens: tuple[str, ...]
    options: dict[str, tuple[str, ...]]
    exact: bool = False  # named only as written, never by a near spelling ("weights", not "weight")


def catalogue_entries(products: Sequence[Mapping[str, Any]]) -> list[CatalogueEntry]:
    """The catalogue's products with their names' tokens and their options, ready to match."""
    entries = []
    for p in products:
        opts = {str(k): tuple(str(v) for v in vals) for k, vals in (p.get("options") or {}).items()}
        entries.append(CatalogueEntry(str(p["product_id"]), str(p["name"]),
                                      tuple(t for t, _, _ in tokens(str(p["name"]))), opts,
                                      bool(p.get("exact"))))
    return entries


def find_products(text: str, catalogue: Sequence[Mapping[str, Any]], *, min_score: float = 0.85,
                  window: int = 6, weak_heads: bool = False) -> list[ProductMention]:
    """Catalogue products mentioned in the text, best first by position, with nearby options.

    `catalogue` items are `{product_id, name, options: {key: [values]}}`. A full-name match
    ("water bottle", "headphnoes" with a typo) scores by string similarity; a bare head noun of
    a multi-word name ("bottle", "camera") scores 0.7 and is flagged `ambiguous` when several
    products share it. Options are values of the matched product found within `window` words
    before the mention or twice that after it ("the blue water bottle", "the helmet, the one with size
    S, color blue, ventilation high"), read by `grounding.options.find_option_values`.
    """
    from csagent.grounding.options import find_option_values  # grounding reads nlp: imported here

    entries = catalogue_entries(catalogue)
    toks = tokens(text)
    if not toks or not entries:
        return []
    candidates: list[tuple[float, int, int, CatalogueEntry]] = []  # score, first tok, end tok, entry
    for entry in entries:
        n = len(entry.tokens)
        name_joined, name_spaced = "".join(entry.tokens), " ".join(entry.tokens)
        for size in {n, n + 1, max(1, n - 1), 1}:
            for i in range(0, len(toks) - size + 1):
                words = [t for t, _, _ in toks[i:i + size]]
                if not words[0][0].isalnum():
                    continue
                score = max(_ratio_at_least(" ".join(words), name_spaced, min_score),
                            _ratio_at_least("".join(words), name_joined, min_score))
                if min(len(name_joined), len("".join(words))) < 4 and score < 1.0:
                    continue  # short names ("pc") must match exactly
                if entry.exact and " ".join(text[toks[i][1]:toks[i + size - 1][2]].lower().split()) \
                        != entry.name.lower():
                    continue  # as written: tokens are singular, and "weight" is not "weights"
                if score < 1.0 and size == 1 and _is_english(words[0]):
                    continue  # a near spelling is a typo only when it is no word: "those" is not "hose"
                if score < 1.0 and size > n and all(_is_english(w) for w in words):
                    continue  # nor are words run together: "I paid" is not an "ipad"
                if score >= min_score:
                    candidates.append((score, i, i + size, entry))
    candidates.sort(key=lambda c: (-c[0], c[1], -(c[2] - c[1])))
    taken: list[tuple[int, int]] = []
    mentions: list[tuple[int, int, CatalogueEntry, float, bool]] = []
    for score, a, b, entry in candidates:
        tied = [k for k, m in enumerate(mentions)
                if (m[0], m[1], m[3]) == (a, b, score) and m[2].product_id != entry.product_id]
        if tied:
            # The same words name two products equally well ("kettle": the Electric Kettle and the
            # Tea Kettle): both are meant, neither for sure.
            for k in tied:
                mentions[k] = (*mentions[k][:4], True)
            mentions.append((a, b, entry, score, True))
            continue
        if any(a < tb and ta < b for ta, tb in taken):
            continue
        taken.append((a, b))
        mentions.append((a, b, entry, score, False))
    # Head nouns of multi-word names ("those headphones" is exact; "the bottle" is a head noun).
    heads: dict[str, list[CatalogueEntry]] = {}
    for entry in entries:
        # (a weak head names its product among a few known ones: "the bed" of an order's items)
        if len(entry.tokens) > 1 and len(entry.tokens[-1]) >= 3 + (not weak_heads) \
                and (weak_heads or entry.tokens[-1] not in _WEAK_HEADS):
            heads.setdefault(entry.tokens[-1], []).append(entry)
    for i, (tok, _, _) in enumerate(toks):
        if tok in heads and not any(ta <= i < tb for ta, tb in taken):
            group = heads[tok]
            if tok in _WEAK_HEADS and not _DETERMINERS & {t for t, _, _ in toks[max(0, i - 3):i]}:
                continue  # a weak head names a thing only after a determiner: "the bed", not "went to bed"
            taken.append((i, i + 1))
            several = len({entry.product_id for entry in group}) > 1  # (an everyday name is the same one)
            for entry in group:
                mentions.append((i, i + 1, entry, 0.7, several))
    mentions.sort(key=lambda m: (m[0], -m[3]))
    starts = sorted({m[0] for m in mentions})
    out: list[ProductMention] = []
    for a, b, entry, score, ambiguous in mentions:
        # The option window stops at the neighbouring mentions so options attach to the right product.
        prev_end = max([tb for ta, tb in taken if tb <= a], default=0)
        next_start = min([s for s in starts if s >= b], default=len(toks))
        lo, hi = max(prev_end, a - window), min(next_start, b + 2 * window)
        # The grounding's own reading of option words (synonyms, "waterproof", "wifi" for Wi-Fi, a
        # bare size only beside its dimension), over the words around this mention.
        options: dict[str, str] = {}
        window_text = text[toks[lo][1]:toks[hi - 1][2]] if hi > lo else ""
        for hit in find_option_values(window_text, entry.options):
            options.setdefault(hit.key, hit.value)
        options = _disambiguate_options(options, entry, toks, lo, hi)
        span = (toks[a][1], toks[b - 1][2])
        out.append(ProductMention(entry.product_id, entry.name, round(score, 4), text[span[0]:span[1]],
                                  span, options, ambiguous))
    return out


def _disambiguate_options(options: dict[str, str], entry: CatalogueEntry,
                          toks: Sequence[tuple[str, int, int]], lo: int, hi: int) -> dict[str, str]:
    """When one word fills several keys ("black" for frame and lens colour), keep only the key
    whose own words are in the window, or else the plain "color" key."""
    by_value: dict[str, list[str]] = {}
    for key, value in options.items():
        by_value.setdefault(value, []).append(key)
    window_words = {t for t, _, _ in toks[max(lo, 0):hi]}
    result = dict(options)
    for keys in by_value.values():
        if len(keys) < 2:
            continue
        shared = set.intersection(*({t for t, _, _ in tokens(k)} for k in keys))
        named = [k for k in keys if any(t in window_words and t not in shared for t, _, _ in tokens(k))]
        keep = named[0] if len(named) == 1 else ("color" if "color" in keys else None)
        for k in keys:
            if k != keep:
                result.pop(k, None)
    return result
