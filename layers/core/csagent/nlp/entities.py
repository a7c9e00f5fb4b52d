"""Rule-based entity extraction for the local tier.

What: order ids, tracking numbers, e-mails, US zip codes, postal addresses, product mentions
(with their options) matched against a catalogue passed in as data, and references such as
"those headphones", "that order" or "it" that the caller resolves against the customer's
orders or the conversation.

Why rules: these entities have rigid shapes (`#W` + 7 digits, 12-digit tracking numbers, US
addresses) or come from a closed catalogue, so patterns plus fuzzy matching are exact, cheap and
explainable; no model call, no data leaves the process. This module never touches Neo4j: the
catalogue and the candidate products are arguments.

Fuzzy matching uses `difflib` from the standard library (rapidfuzz is not a dependency).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from csagent.nlp.script import has_ideographs

# -- patterns --------------------------------------------------------------------------------
# ASCII classes on purpose: Python's \w matches CJK, and "订单#W2611340" must still parse.
ORDER_ID_RE = re.compile(r"(?<![A-Za-z0-9])#?[Ww](\d{7})(?![A-Za-z0-9])")
TRACKING_RE = re.compile(r"(?<![A-Za-z0-9#])(\d{12})(?![0-9])")
EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24})(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
ZIP_RE = re.compile(r"(?<![0-9A-Za-z$.,#-])(\d{5}(?:-\d{4})?)(?!\d|-\d|\.\d|,\d)")

_TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")


@lru_cache(maxsize=1)
def terms() -> dict[str, Any]:
    """Word lists from `data/entity_terms.json` (loaded once, on first use)."""
    text = resources.files("csagent.nlp").joinpath("data", "entity_terms.json").read_text(encoding="utf-8")
    return json.loads(text)


def _alt(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@lru_cache(maxsize=1)
def address_pattern() -> re.Pattern[str]:
    """A US postal address: street line, optional unit, city, state, optional zip and country."""
    t = terms()
    suffix = _alt(t["street_suffixes"])
    unit = _alt(u for u in t["unit_designators"] if u != "#")
    states = _alt(t["us_states"])
    countries = _alt(t["countries"])
    return re.compile(
        rf"(?<![A-Za-z0-9])(?P<address1>\d{{1,6}}[A-Za-z]?(?:\s+[A-Za-z0-9.'’-]+){{0,5}}?\s+(?:{suffix})\.?"
        rf"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\.?)?)(?![A-Za-z])"
        rf"(?:\s*,?\s*(?P<address2>(?:(?:{unit})\.?\s*#?\s*|#\s*)[A-Za-z0-9-]+))?"
        rf"\s*,?\s*(?P<city>[A-Za-z][A-Za-z.'’-]*(?:\s+[A-Za-z][A-Za-z.'’-]*){{0,3}}?)"
        rf"\s*,?\s*(?<![A-Za-z])(?P<state>{states})(?![A-Za-z])"
        rf"(?:\s*,?\s*(?P<zip>\d{{5}}(?:-\d{{4}})?)(?!\d))?"
        rf"(?:\s*,?\s*(?P<country>{countries})(?![A-Za-z]))?",
        re.IGNORECASE,
    )


# -- results ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Address:
    """A structured US postal address (the shape the store graph keeps)."""

    address1: str
    city: str
    state: str
    zip: str | None = None
    address2: str | None = None
    country: str = "USA"
    span: tuple[int, int] = (0, 0)

    def as_dict(self) -> dict[str, str | None]:
        """The address as the customer-actions tool expects it."""
        return {"address1": self.address1, "address2": self.address2, "city": self.city,
                "state": self.state, "zip": self.zip, "country": self.country}

    @property
    def complete(self) -> bool:
        """True when every field a shipment needs is present."""
        return bool(self.address1 and self.city and self.state and self.zip)

    def __str__(self) -> str:
        street = f"{self.address1}, {self.address2}" if self.address2 else self.address1
        tail = f"{self.state} {self.zip}" if self.zip else self.state
        return f"{street}, {self.city}, {tail}"


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


@dataclass(frozen=True, slots=True)
class Reference:
    """An anaphoric mention the caller must resolve ("those headphones", "that order", "it").

    `hint` is the product words ("headphones") or None for generic references; `latest` is set
    for "my last order"-style references.
    """

    kind: Literal["product", "order"]
    hint: str | None = None
    surface: str = ""
    span: tuple[int, int] = (0, 0)
    latest: bool = False


@dataclass(frozen=True, slots=True)
class Entities:
    """Everything `extract_entities` found in one text."""

    order_ids: list[str]
    tracking_numbers: list[str]
    emails: list[str]
    zip_codes: list[str]
    addresses: list[Address]
    products: list[ProductMention]
    references: list[Reference]


# -- simple parsers ----------------------------------------------------------------------------
def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def normalise_order_id(raw: str) -> str | None:
    """"#W1234567", "W1234567" or "w1234567" → "#W1234567"; anything else → None."""
    m = re.fullmatch(r"\s*#?[Ww](\d{7})\s*", raw)
    return f"#W{m.group(1)}" if m else None


def find_order_ids(text: str) -> list[str]:
    """Order ids in order of appearance, normalised to "#W" + 7 digits, without duplicates."""
    return _unique(f"#W{m.group(1)}" for m in ORDER_ID_RE.finditer(text))


def find_tracking_numbers(text: str) -> list[str]:
    """12-digit tracking numbers that are not part of a longer number or an order id."""
    return _unique(m.group(1) for m in TRACKING_RE.finditer(text))


def find_emails(text: str) -> list[str]:
    """E-mail addresses, lower-cased."""
    return _unique(m.group(1).lower() for m in EMAIL_RE.finditer(text))


def find_zip_codes(text: str) -> list[str]:
    """US zip codes (5 digits or ZIP+4) that are not part of a longer number."""
    return _unique(m.group(1) for m in ZIP_RE.finditer(text))


def _tidy(value: str) -> str:
    return re.sub(r"\s+", " ", value).strip(" ,")


def find_addresses(text: str) -> list[Address]:
    """US postal addresses: "12 Main St, Springfield, IL 62704" → Address(...).

    The state must be a real two-letter code; the zip is optional (an address without one is
    returned with `zip=None`, so the caller can ask for it: see `Address.complete`).
    """
    found: list[Address] = []
    for m in address_pattern().finditer(text):
        address2 = m.group("address2")
        found.append(Address(
            address1=_tidy(m.group("address1")),
            address2=_tidy(address2) if address2 else None,
            city=_tidy(m.group("city")),
            state=m.group("state").upper(),
            zip=m.group("zip"),
            span=(m.start(), m.end()),
        ))
    return found


# -- fuzzy product matching ----------------------------------------------------------------------
def _singular(word: str) -> str:
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


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(singular lower-case token, start, end) for each ASCII word in the text."""
    return [(_singular(m.group(0).replace("’", "'")), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


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
    h = [t for t, _, _ in _tokens(hint)]
    n = [t for t, _, _ in _tokens(name)]
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


@dataclass(frozen=True, slots=True)
class _CatalogueEntry:
    product_id: str
    name: str
    tokens: tuple[str, ...]
    options: dict[str, tuple[str, ...]]
    exact: bool = False  # named only as written, never by a near spelling ("weights", not "weight")


def _catalogue(products: Sequence[Mapping[str, Any]]) -> list[_CatalogueEntry]:
    entries = []
    for p in products:
        opts = {str(k): tuple(str(v) for v in vals) for k, vals in (p.get("options") or {}).items()}
        entries.append(_CatalogueEntry(str(p["product_id"]), str(p["name"]),
                                       tuple(t for t, _, _ in _tokens(str(p["name"]))), opts,
                                       bool(p.get("exact"))))
    return entries


def find_products(text: str, catalogue: Sequence[Mapping[str, Any]], *, min_score: float = 0.85,
                  window: int = 6) -> list[ProductMention]:
    """Catalogue products mentioned in the text, best first by position, with nearby options.

    `catalogue` items are `{product_id, name, options: {key: [values]}}`. A full-name match
    ("water bottle", "headphnoes" with a typo) scores by string similarity; a bare head noun of
    a multi-word name ("bottle", "camera") scores 0.7 and is flagged `ambiguous` when several
    products share it. Options are values of the matched product found within `window` words
    before the mention or twice that after it ("the blue water bottle", "the helmet, the one with size
    S, color blue, ventilation high"), read by `grounding.options.find_option_values`.
    """
    from csagent.grounding.options import find_option_values  # grounding reads nlp: imported here

    entries = _catalogue(catalogue)
    toks = _tokens(text)
    if not toks or not entries:
        return []
    candidates: list[tuple[float, int, int, _CatalogueEntry]] = []  # score, first tok, end tok, entry
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
                if score >= min_score:
                    candidates.append((score, i, i + size, entry))
    candidates.sort(key=lambda c: (-c[0], c[1], -(c[2] - c[1])))
    taken: list[tuple[int, int]] = []
    mentions: list[tuple[int, int, _CatalogueEntry, float, bool]] = []
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
    heads: dict[str, list[_CatalogueEntry]] = {}
    for entry in entries:
        if len(entry.tokens) > 1 and len(entry.tokens[-1]) >= 4 and entry.tokens[-1] not in _WEAK_HEADS:
            heads.setdefault(entry.tokens[-1], []).append(entry)
    for i, (tok, _, _) in enumerate(toks):
        if tok in heads and not any(ta <= i < tb for ta, tb in taken):
            group = heads[tok]
            taken.append((i, i + 1))
            for entry in group:
                mentions.append((i, i + 1, entry, 0.7, len(group) > 1))
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


def _disambiguate_options(options: dict[str, str], entry: _CatalogueEntry,
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
        shared = set.intersection(*({t for t, _, _ in _tokens(k)} for k in keys))
        named = [k for k in keys if any(t in window_words and t not in shared for t, _, _ in _tokens(k))]
        keep = named[0] if len(named) == 1 else ("color" if "color" in keys else None)
        for k in keys:
            if k != keep:
                result.pop(k, None)
    return result


# -- references ---------------------------------------------------------------------------------
_STOP = frozenset({"is", "are", "was", "were", "to", "for", "on", "in", "at", "of", "with", "and", "or",
                   "i", "you", "it", "please", "be", "been", "has", "have", "had", "under", "still",
                   "from", "by", "about", "that", "this", "those", "these", "there", "here", "a", "an",
                   "the", "so", "but", "if", "do", "does", "did", "can", "could", "will", "would",
                   "what", "when", "where", "how", "why", "which", "who", "not", "no", "yes", "just",
                   "me", "my", "your", "we", "they", "them", "he", "she", "its", "am", "arrive",
                   "arrived", "came", "come", "broke", "broken", "work", "works", "ship", "shipped"})
_NON_PRODUCT = frozenset({"address", "account", "refund", "money", "card", "email", "name", "payment",
                          "profile", "question", "problem", "issue", "time", "day", "week", "month",
                          "year", "way", "case", "policy", "reply", "answer", "message", "chat",
                          "number", "tracking", "status", "one's", "information", "info", "help"})


def _ref_terms() -> dict[str, Any]:
    return terms()["reference"]


def names_saved_address(text: str) -> bool:
    """ "ship it to my default address", "the address on file", "改寄到默认地址": the words point at
    the address saved on the account (`reference.saved_address` of `data/entity_terms.json`)."""
    words = " " + " ".join(re.findall(r"\w+", text.lower())) + " "
    return any((w in text) if has_ideographs(w) else (f" {w} " in words)
               for w in terms()["reference"]["saved_address"])


def find_references(text: str, catalogue: Sequence[Mapping[str, Any]] | None = None) -> list[Reference]:
    """Anaphoric product and order references, in order of appearance.

    English: a demonstrative ("that", "those", "my" …) followed by up to three words ending in a
    noun: an order noun → order reference ("that order", "my last order" with `latest=True`);
    a generic noun → product reference without hint ("that item"); any other noun (or a
    catalogue product) → product reference with that noun as hint ("those headphones").
    Pronouns "it"/"them" are product references unless an order verb governs them ("ship it").
    Chinese: 这个/那个 + 订单 → order, + 商品/东西 → product; 它 → product.
    """
    rt = _ref_terms()
    refs: list[Reference] = []
    lowered = text.lower()
    toks = [(m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]
    demonstratives = {d for d in rt["demonstratives"] if " " not in d}
    generic = set(rt["generic_product_nouns"])
    order_nouns = set(rt["order_nouns"])
    latest_words = {w for w in rt["latest_words"] if " " not in w}
    product_words: set[str] = set()
    for entry in _catalogue(catalogue or []):
        product_words.update(entry.tokens)
    covered: list[tuple[int, int]] = []

    for i, (tok, _, _) in enumerate(toks):
        if tok not in demonstratives:
            continue
        ref = _reference_after(text, toks, i, generic=generic, order_nouns=order_nouns,
                               latest_words=latest_words, product_words=product_words)
        if ref is not None:
            refs.append(ref)
            covered.append(ref.span)

    # Pronouns: "it" / "them", kind decided by the verb just before ("ship it" is an order).
    order_verbs = set(rt["order_verbs"])
    pronouns = set(rt["pronouns"]) - {"they"}
    for i, (tok, start, end) in enumerate(toks):
        if tok not in pronouns or any(a <= start < b for a, b in covered):
            continue
        if tok == "it" and _IDIOMATIC_IT.match(lowered[end:end + 16]):
            continue  # "it's been a week", "it takes", "is it possible": not a thing
        before = [t for t, _, _ in toks[max(0, i - 3):i]]
        kind: Literal["product", "order"] = "order" if any(v in order_verbs for v in before) else "product"
        refs.append(Reference(kind, None, text[start:end], (start, end)))

    refs.extend(_zh_references(text))
    refs.sort(key=lambda r: r.span[0])
    return refs


_IDIOMATIC_IT = re.compile(r"(?:\s*(?:'s|’s|\s+is|\s+has))?\s+(?:been|possible|okay|ok|fine|true|time)\b"
                           r"|\s+(?:takes?|seems?|says?|means?|costs?|depends)\b")


def _reference_after(text: str, toks: Sequence[tuple[str, int, int]], i: int, *, generic: set[str],
                     order_nouns: set[str], latest_words: set[str],
                     product_words: set[str]) -> Reference | None:
    """The reference opened by the demonstrative at toks[i], if the words after it make one."""
    demonstrative, start = toks[i][0], toks[i][1]
    phrase: list[str] = []
    latest = False
    end = toks[i][2]
    for j in range(i + 1, min(i + 5, len(toks))):
        word, w_start, w_end = toks[j]
        if text[toks[j - 1][2]:w_start].strip():
            break  # punctuation ends the noun phrase
        if word in latest_words or word in {"most", "same", "very"}:
            latest = latest or word in latest_words
            end = w_end
            continue
        if word in order_nouns:
            if re.match(r"\s*(?:number|id|no\.?)?\s*#?[Ww]\d{7}", text[w_end:w_end + 16]):
                return None  # "the order #W…" names the order explicitly
            return Reference("order", None, text[start:w_end], (start, w_end), latest)
        if word in generic:
            return Reference("product", " ".join(phrase) or None, text[start:w_end], (start, w_end), latest)
        if word in _STOP or word in _NON_PRODUCT or word.isdigit():
            break
        phrase.append(word)
        end = w_end
    if not phrase:
        return None
    mentions_product = any(_singular(w) in product_words for w in phrase)
    if product_words and not mentions_product:
        return None  # with a catalogue, "that blue thing I like" needs a product word
    if demonstrative == "my" and not mentions_product:
        return None  # "my wife", "my new place": after "my" only catalogue words count
    return Reference("product", " ".join(phrase), text[start:end], (start, end), latest)


def _zh_references(text: str) -> list[Reference]:
    rt = _ref_terms()
    dem = _alt(rt["zh_demonstratives"])
    out: list[Reference] = []
    for m in re.finditer(rf"(?:{dem})(?:个|些|款|件|双|副)?(?:{_alt(rt['zh_order_nouns'])})", text):
        out.append(Reference("order", None, m.group(0), m.span()))
    for m in re.finditer(rf"(?:{dem})(?:个|些|款|件|双|副)?(?:{_alt(rt['zh_product_nouns'])})", text):
        out.append(Reference("product", None, m.group(0), m.span()))
    for m in re.finditer(r"它们?", text):
        out.append(Reference("product", None, m.group(0), m.span()))
    return out


def rank_product_candidates(hint: str | None, candidates: Sequence[Mapping[str, Any]]
                            ) -> list[tuple[float, dict[str, Any]]]:
    """Candidates (deduplicated by product id, first occurrence kept) with their similarity to
    the hint, best first. Without a hint every candidate scores 0."""
    seen: dict[str, dict[str, Any]] = {}
    for c in candidates:
        seen.setdefault(str(c.get("product_id") or c.get("name")), dict(c))
    scored = [(name_similarity(hint, c["name"]) if hint else 0.0, c) for c in seen.values()]
    return sorted(scored, key=lambda sc: -sc[0])


def resolve_product_reference(reference: Reference | None, candidates: Sequence[Mapping[str, Any]], *,
                              min_score: float = 0.6, margin: float = 0.1) -> dict[str, Any] | None:
    """The candidate product a reference points to, or None when it cannot be decided.

    `candidates` are products from the customer's orders: `{product_id, name, order_id}`.
    With a hint ("headphones"), the best name match wins if it scores at least `min_score` and
    beats the next product by `margin`; a hint that fits nothing resolves to None even with a
    single candidate (better to ask than to act on the wrong item). Without a hint, a single
    distinct product is the answer; several are ambiguous (None: the caller asks which).
    """
    ranked = rank_product_candidates(reference.hint if reference else None, candidates)
    if not ranked:
        return None
    if reference is None or not reference.hint:
        return ranked[0][1] if len(ranked) == 1 else None
    best_score, best = ranked[0]
    if best_score < min_score:
        return None
    if len(ranked) > 1 and best_score - ranked[1][0] < margin:
        return None
    return best


def opens_question(text: str) -> bool:
    """Does the text open like a question ("do …", "how long …", "which …")?"""
    m = _TOKEN_RE.search(text)
    return m is not None and m.group(0).lower().replace("’", "'") in terms()["general_question"]["openers"]


def is_general_question(text: str) -> bool:
    """Is this a question about the store in general rather than about the customer's own things?

    "do you deliver to PO boxes?", "how long does a gift card refund take?", "can a pending order
    be cancelled?", "can I exchange an item for a different size?", "if I return something, can the
    money go to my other card?" and "u guys price match?" are; "where is my order?", "can I get the
    tracking number?" and "what's the status of this order?" are not. Why: an order question that
    names no order and points at none is answered by the store's policies, while one that points at
    the customer's order needs that order (so the agent asks for it). The word lists are
    `general_question` in `data/entity_terms.json`; Chinese, which has no opening word to read, is
    general with one of `zh_general` ("一般", "通常") and none of `zh_personal` ("我的", "这单").
    """
    g = terms()["general_question"]
    if has_ideographs(text):  # "退款一般多久能到账？": a general word and nothing of the customer's
        return any(w in text for w in g["zh_general"]) and not any(w in text for w in g["zh_personal"]) \
            and not ORDER_ID_RE.search(text)
    if ORDER_ID_RE.search(text):
        return False
    words = [m.group(0).lower().replace("’", "'") for m in _TOKEN_RE.finditer(text)]
    main = _main_clause(text, g)
    put_as_question = main is not text and _first_sentence(main).endswith(("?", "？"))
    if not opens_question(main) and not _asks_the_store(main, g) and not put_as_question:
        return False  # ("if I return something, the money can go to another card?" is put as one)
    indefinite, deictic = set(g["indefinite"]), set(g["deictic"])
    in_general = bool(indefinite & set(words))
    for i, word in enumerate(words):
        if word in deictic and not indefinite & set(words[:i]):
            return False  # "can I return it?" (but "if I cancel an order, is it refunded?" asks in general)
        owned = set(words[i + 1:i + 3]) & set(g["owned_not_bought"])
        if word in g["possessive"] and not (in_general and owned):
            return False  # "my order", "when will my account show the refund?" (but "if I return
            # something, can the money go to my other card?" asks in general)
    present = set(words)
    return not present & set(g["first_person"]) or bool(present & indefinite)


def _main_clause(text: str, g: Mapping[str, Any]) -> str:
    """The question after a leading condition ("if I return something, can ..." -> "can ...")."""
    first = _TOKEN_RE.search(text)
    if first is None or first.group(0).lower() not in g["conditions"] or "," not in text:
        return text
    return text.split(",", 1)[1]


def _first_sentence(text: str) -> str:
    found = re.search(r"[^.!?？！]*[.!?？！]*", text.strip())
    return found.group(0).strip() if found else ""


def _asks_the_store(text: str, g: Mapping[str, Any]) -> bool:
    """ "u guys price match?", "you ship to Canada?": the store as the subject of a question."""
    sentence = _first_sentence(text)
    lowered = " ".join(m.group(0).lower() for m in _TOKEN_RE.finditer(sentence))
    return sentence.endswith(("?", "？")) and any(
        lowered == s or lowered.startswith(s + " ") for s in g["store_subjects"])


def mentions_catalogue(text: str) -> bool:
    """Does the text speak of the catalogue itself ("how many products do you sell in Electronics?")?"""
    words = {_singular(m.group(0)) for m in _TOKEN_RE.finditer(text)}
    return bool(words & set(terms()["general_question"]["catalogue_words"]))


# -- everything at once ---------------------------------------------------------------------------
def extract_entities(text: str, catalogue: Sequence[Mapping[str, Any]] | None = None) -> Entities:
    """All entities in a text (usually one clause). Zip codes inside a matched address's street
    number are not reported as zip codes; the address's own zip is."""
    addresses = find_addresses(text)
    street_spans = [(a.span[0], a.span[0] + len(a.address1)) for a in addresses]
    zips = [m.group(1) for m in ZIP_RE.finditer(text)
            if not any(s <= m.start() < e for s, e in street_spans)]
    return Entities(
        order_ids=find_order_ids(text),
        tracking_numbers=find_tracking_numbers(text),
        emails=find_emails(text),
        zip_codes=_unique(zips),
        addresses=addresses,
        products=find_products(text, catalogue) if catalogue else [],
        references=find_references(text, catalogue),
    )
