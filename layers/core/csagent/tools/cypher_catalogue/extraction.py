"""What a question says to a template: identifiers and product mentions, the store's vocabulary,
parameters extracted from the question, and narrowing to an option template.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from csagent.domain.template_rows import OPTION_KEYS_SEPARATOR
from csagent.tools.cypher_catalogue.templates import (
    CATALOGUE_PATH,
    SLOT_RE,
    STATUS_SYNONYMS,
    QueryTemplate,
    name_key,
    singular,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.caching import TTLCache


logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Text helpers (identifiers, product mentions) and the store vocabulary
# ---------------------------------------------------------------------------------------------
_ORDER_ID_RE = re.compile(r"#?\bW\d{7}\b", re.IGNORECASE)
_LONG_ID_RE = re.compile(r"\b\d{10}\b")
#: What a product mention becomes before embedding: the intent, not the product, should decide.
ENTITY_MASK = "product"
_HEAD_NOUN_STOPWORDS = frozenset({"set", "kit", "item", "order", "one", "pack"})


def canonical_question(text: str) -> str:
    """Identifiers replaced by fixed tokens so that their digits never sway the similarity."""
    text = _ORDER_ID_RE.sub("#W0000000", text)
    return _LONG_ID_RE.sub("1234567890", text)


def mask_slots(example: str) -> str:
    """A catalogue example with its `[product]` slots replaced by the entity mask."""
    return SLOT_RE.sub(ENTITY_MASK, example)


def entity_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """One regex for product mentions: each name (spaces or hyphens interchangeable, optional
    plural) and, for multi-word names, its head noun ("chair" for "Office Chair")."""
    return _entity_pattern(tuple(sorted({t for t in terms if isinstance(t, str)})))


@lru_cache(maxsize=64)
def _entity_pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    variants: set[str] = set()
    for term in terms:
        words = [w for w in re.split(r"[\s-]+", term.strip().lower()) if w]
        if not words:
            continue
        variants.add(r"[\s-]*".join(map(re.escape, words)))
        head = words[-1]
        if len(words) > 1 and len(head) >= 4 and head not in _HEAD_NOUN_STOPWORDS:
            variants.add(re.escape(head))
    if not variants:
        return None
    alternatives = "|".join(sorted(variants, key=len, reverse=True))
    return re.compile(r"\b(?:" + alternatives + r")(?:e?s)?\b", re.IGNORECASE)


_VOCABULARY_CYPHER = (
    "MATCH (p:Product) OPTIONAL MATCH (p)-[:HAS_VARIANT]->(v:Variant) "
    "WITH p, collect(DISTINCT v.option_text) AS texts "
    "RETURN p.name AS name, p.category AS category, texts"
)


@dataclass(frozen=True)
class StoreVocabulary:
    """Public catalogue words of the store: product names, categories, options per product."""

    products: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    options: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # name -> (key, value)
    #: Everyday names of the products ("bike" -> ("Bicycle",)), `grounding/data/product_synonyms.json`.
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """Every word that names a product: the catalogue's names and their everyday names."""
        return (*self.products, *self.aliases)

    def product_named(self, mention: str) -> str:
        """The catalogue name an everyday name stands for when it names one product ("bikes" ->
        "Bicycle"); the mention itself otherwise ("cameras" is a word of several products' names)."""
        key = name_key(mention)
        if sum(key in name_key(name) for name in self.products) > 1:
            return mention  # "cameras": the word of several products' names
        owners = {name for alias, names in self.aliases.items() if name_key(alias) == key for name in names}
        return next(iter(owners)) if len(owners) == 1 else mention

    def names_several(self, mention: str) -> bool:
        """Is the mention a whole word of several catalogue names ("cameras": the Action, Digital
        and Indoor Security Camera), not of one ("bike") or only inside compounds ("phones")?"""
        words = mention.lower().replace("-", " ").split()
        if not words:
            return False
        words[-1] = singular(words[-1])
        pattern = re.compile(r"\b" + r"\s+".join(map(re.escape, words)) + r"(?:e?s)?\b")
        return sum(bool(pattern.search(name.lower().replace("-", " "))) for name in self.products) > 1

    def all_option_values(self) -> set[str]:
        return {v for pairs in self.options.values() for _, v in pairs}

    def options_for(self, product_mention: str | None) -> tuple[tuple[str, str], ...]:
        """(key, value) pairs of the products a mention refers to ("chair" -> Office Chair's)."""
        if not product_mention:
            return ()
        key = name_key(product_mention)
        pairs = {pair for name, opts in self.options.items()
                 if key and key in re.sub(r"[^a-z0-9]", "", name.lower()) for pair in opts}
        return tuple(sorted(pairs))


def store_vocabulary(graph: Any, cache: TTLCache[str, StoreVocabulary] | None = None) -> StoreVocabulary:
    """The store's vocabulary (one catalogue query), kept in `cache` for its TTL when given: the
    `ToolCaches.vocabulary` of the tool context, which belongs to `graph`.

    Used to mask product mentions before matching and to read product, category and option
    parameters from the question. Public catalogue data only; on any failure the vocabulary is
    empty and nothing is kept (matching still works, with a little less precision; parameters
    must then be given), so the next call reads again.
    """
    try:
        if cache is None:
            return _read_vocabulary(graph)
        return cache.get_or_load("store", lambda: _read_vocabulary(graph))
    except Exception as exc:  # noqa: BLE001 - degrade to no vocabulary
        logger.warning("store vocabulary unavailable (%s)", type(exc).__name__)
        return StoreVocabulary()


def _read_vocabulary(graph: Any) -> StoreVocabulary:
    rows = graph.read(_VOCABULARY_CYPHER, {}, timeout_s=2.0, max_rows=5000)
    options: dict[str, tuple[tuple[str, str], ...]] = {}
    for row in rows:
        pairs = set()
        for text in row.get("texts") or []:
            for pair in str(text).split(", "):
                k, sep, v = pair.partition(": ")
                if sep:
                    pairs.add((k.strip().lower(), v.strip().lower()))
        options[str(row["name"])] = tuple(sorted(pairs))
    from csagent.grounding.resolve import product_synonyms

    aliases: dict[str, tuple[str, ...]] = {}
    for name, words in product_synonyms().items():
        for word in words if name in options else ():
            aliases[word] = (*aliases.get(word, ()), name)
    return StoreVocabulary(
        products=tuple(sorted(options)),
        categories=tuple(sorted({str(r["category"]) for r in rows if r.get("category")})),
        options=options, aliases=aliases)


# ---------------------------------------------------------------------------------------------
# Parameter extraction from the question
# ---------------------------------------------------------------------------------------------
_EXTRACTORS: dict[str, re.Pattern[str]] = {
    "order_id": re.compile(r"#?\b(W\d{7})\b", re.IGNORECASE),
    "item_id": re.compile(r"\b(\d{10})\b"),
    "product_id": re.compile(r"\b(\d{10})\b"),
    "int": re.compile(r"(?:\$\s*(\d+(?:\.\d+)?)|\b(\d+(?:\.\d+)?)\s*(?:dollars?|usd|bucks)\b|\b(\d{1,6})\b)",
                      re.IGNORECASE),
}
_STATUS_WORDS_RE = re.compile(r"\b(" + "|".join(sorted((re.escape(k) for k in STATUS_SYNONYMS
                                                        if "(" not in k), key=len, reverse=True))
                              + r")\b", re.IGNORECASE)


_COMMON_WORD_VALUES = frozenset({"yes", "none", "low", "high", "medium", "large", "small", "basic",
                                 "plain", "custom", "manual", "fixed", "wired", "fresh", "light"})
_BRITISH = re.compile(r"\bcolour(?=s?\b)")
_KEY_SPELLINGS = {"colour": "color", "colours": "color", "colors": "color", "sizes": "size"}


@lru_cache(maxsize=1)
def _everyday_option_names() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(option name, the everyday words for it), in the data file's order (`catalogue/option_names.json`)."""
    raw = json.loads((CATALOGUE_PATH.parent / "option_names.json").read_text(encoding="utf-8"))
    return tuple((str(key), tuple(str(w).lower() for w in words)) for key, words in raw["names"].items())


def _option_keys_named(question: str, keys: set[str]) -> dict[str, tuple[int, int]]:
    """The options of the product (`keys`) the question names, each with where, first the one it asks
    about most plainly: by its own name ("which sensor types", "what lens colour"), else by an
    everyday word for it ("what sizes does the kettle come in?": its capacity). Words one option's
    name took are not read again for another."""
    lowered = _BRITISH.sub("color", question.lower())
    found: dict[str, tuple[int, int]] = {}

    def take(key: str, pattern: str) -> None:
        for m in re.finditer(pattern, lowered):
            if key not in found and not any(a < m.end() and m.start() < b for a, b in found.values()):
                found[key] = m.span()

    for word, key in _KEY_SPELLINGS.items():
        if key in keys:
            take(key, rf"\b{word}\b")
    for key in sorted(keys, key=len, reverse=True):
        take(key, rf"\b{re.escape(key)}(?:e?s)?\b")
    for key, words in _everyday_option_names():
        if key in keys:
            for w in words:
                take(key, rf"\b{re.escape(w)}\b")
    return found


def _find_option_key(question: str, keys: set[str]) -> str | None:
    """The option of the product the question asks about (`_option_keys_named`'s first)."""
    return next(iter(_option_keys_named(question, keys)), None)


MAX_OPTION_KEYS = 4


def _find_option_keys(question: str, keys: set[str]) -> list[str]:
    """Every option of the product the question asks about, in the order it names them ("which
    sizes and materials does the kettle come in?": capacity, material)."""
    found = _option_keys_named(question, keys)
    return sorted(found, key=lambda k: found[k][0])[:MAX_OPTION_KEYS]


def _wished_option_value(question: str, values: set[str], own: Iterable[str] = ()) -> str | None:
    """The option value the question names, those after its last contrast word first ("the smart
    watch I got is black but i want a gold one": gold is wished, black is what they have), then one
    other than the customer's `own` ("the alexa thermostat - does it come in a homekit version?")."""
    contrast = max((m.end() for m in _CONTRAST.finditer(question)), default=0)
    others = {v for v in values if v.lower() not in {o.lower() for o in own}}
    return (_find_option_value(question[contrast:], values) if contrast else None) \
        or (_find_option_value(question, others) if others != values else None) \
        or _find_option_value(question, values)


def names_option_value(question: str, value: str) -> bool:
    """Do the question's words name `value` (as written, in other units, or by an everyday word)?"""
    return _find_option_value(question, {value}) is not None


def _find_option_value(question: str, values: set[str]) -> str | None:
    lowered = question.lower()
    for value in sorted(values, key=len, reverse=True):
        if re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", lowered):
            return value
    # as the customer's own items are read: "100 feet" is 100ft, "17 inch" 17-inch
    from csagent.grounding.options import tokens

    words = tokens(question)
    for value in sorted(values, key=len, reverse=True):
        said = tokens(value)
        if said and any(words[i:i + len(said)] == said for i in range(len(words) - len(said) + 1)):
            return value
    # and by an everyday word for it (`grounding.options.synonyms`: "homekit" is Apple HomeKit)
    from csagent.grounding.options import synonyms

    for value in sorted(values, key=len, reverse=True):
        for word in synonyms().get(value.lower(), []):
            said = tokens(word)
            if said and any(words[i:i + len(said)] == said for i in range(len(words) - len(said) + 1)):
                return value
    return None


def extract_params(template: QueryTemplate, question: str, *,
                   vocabulary: StoreVocabulary | None = None,
                   given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Rule-based extraction of parameters from the question text (no model call).

    Order ids, item / product ids, statuses and numbers by pattern; with the store's
    `vocabulary`, product names and categories by name, and option keys / values among the
    options of the product the question is about (never guessed without a product).
    """
    vocabulary = vocabulary or StoreVocabulary()
    given = dict(given or {})
    found: dict[str, Any] = {}
    for spec in template.params:
        if spec.type == "product_name":
            pattern = entity_pattern(vocabulary.names)
            m = pattern.search(question) if pattern else None
            if m:
                found[spec.name] = vocabulary.product_named(m.group(0))
        elif spec.type == "category":
            words = {w for c in vocabulary.categories for w in re.findall(r"[a-z]{4,}", c.lower())}
            pattern = entity_pattern(sorted(words)) if words else None
            m = pattern.search(question) if pattern else None
            if m:
                found[spec.name] = m.group(0)
        elif spec.type == "status":
            m = _STATUS_WORDS_RE.search(question)
            if m:
                found[spec.name] = m.group(1)
        elif (pattern := _EXTRACTORS.get(spec.type)) is not None:
            m = pattern.search(question)
            if m:
                found[spec.name] = next(g for g in m.groups() if g is not None)
    product = given.get("product_name") or found.get("product_name")
    pairs = vocabulary.options_for(product if isinstance(product, str) else None)
    if pairs:
        for spec in template.params:
            if spec.type == "option_key":
                keys = {k for k, _ in pairs}
                key = OPTION_KEYS_SEPARATOR.join(_find_option_keys(question, keys)) \
                    if template.id == "product_option_values" else _find_option_key(question, keys)
                if key:
                    found[spec.name] = key
        for spec in template.params:
            if spec.type == "option_value":
                key = given.get("option_key") or found.get("option_key")
                values = {v for k, v in pairs if key is None or k == str(key).lower()}
                # A value this product does not come in ("hiking boots in brown") is still the
                # customer's parameter: look among all the store's values, so the answer is
                # "none in brown" rather than a request to say which option.
                value = _wished_option_value(question, values) or _find_option_value(
                    question, {v for v in vocabulary.all_option_values() if len(v) >= 3}
                    - _COMMON_WORD_VALUES)
                if value:
                    found[spec.name] = value
    return found


# ---------------------------------------------------------------------------------------------
# Narrowing by a named option
# ---------------------------------------------------------------------------------------------
#: Product-level templates that a named option narrows: "the wall clock in wood" asks which
#: versions have that value (variants_by_option), "which sensor types" asks an option's values
#: (product_option_values), whatever the rest of the sentence ("is it in stock?", "tell me about").
OPTION_NARROWED = frozenset({"product_details", "product_availability", "product_options",
                             "product_variants", "products_named"})
#: The lowest score at which such a product template, when it ranks first but below the matching
#: threshold, still answers a question that names a product and one of its options (the product
#: and the option are then the evidence the similarity alone lacks; off-catalogue questions name
#: neither).
OPTION_RANK_FLOOR = 0.35
#: Option values too common as words to read as an option ("no" of "waterproof: no").
_AMBIGUOUS_VALUES = _COMMON_WORD_VALUES | {"no"}


# Words setting a named option value aside: the others are asked ("other colors", "isn't blue").
_OTHER_VALUES = re.compile(r"\b(?:other|another|different|else)\b", re.IGNORECASE)
_RULED_OUT = re.compile(r"\b(?:not|no|isn'?t|aren'?t|except|besides|other than|instead of|but)\s+"
                        r"(?:\w+\s+){0,2}$", re.IGNORECASE)


_CONTRAST = re.compile(r"\b(?:but|instead|rather|although|though)\b", re.IGNORECASE)


# "other" / "different" / "more" just before an option's name: that option's other values are asked.
_OTHER_BEFORE_KEY = re.compile(r"\b(?:other|another|different|else|more)\s+(?:[\w-]+\s+)?$", re.IGNORECASE)


def other_options_asked(question: str, keys: set[str]) -> list[str]:
    """The options whose other values the question asks, named right after "other" ("any other
    colours", "different sizes", "other skin tones too"), in the order it names them."""
    lowered = _BRITISH.sub("color", question.lower())
    found = _option_keys_named(question, keys)
    return sorted((k for k, (at, _) in found.items() if _OTHER_BEFORE_KEY.search(lowered[:at])),
                  key=lambda k: found[k][0])


def sets_aside(question: str, value: str) -> bool:
    """Does the question ask for values other than `value` (ruled out just before it, or "other" /
    "another" asked), not for versions in it?"""
    return bool(_OTHER_VALUES.search(question)) or sets_aside_by_words(question, value)


def held_options(question: str, pairs: Sequence[tuple[str, str]], besides: Sequence[str]) -> str:
    """The options the question keeps while it asks others (`besides`), as a filter ("backrest
    height: high-back"): one value named of each other option, not ruled out."""
    named: dict[str, list[str]] = {}
    for key, value in pairs:
        if key not in besides and value.lower() not in _AMBIGUOUS_VALUES \
                and _find_option_value(question, {value}) and not sets_aside_by_words(question, value):
            named.setdefault(key, []).append(value)
    return "|".join(f"{k}: {v[0]}".lower() for k, v in named.items() if len(v) == 1)


def sets_aside_by_words(question: str, value: str) -> bool:
    """Is `value` ruled out just before it ("not blue", "other than the 5 ft")?"""
    at = question.lower().find(value.lower())
    return at >= 0 and bool(_RULED_OUT.search(question[:at]))


def narrow_by_option(question: str, vocabulary: StoreVocabulary,
                     given: Mapping[str, Any] | None = None,
                     own: Iterable[str] = ()) -> tuple[str, dict[str, Any]] | None:
    """(template id, parameters) when the question names a product and one of ITS options: a value
    ("in wood", "in 5K", "size 11") -> variants_by_option; an option name ("which sensor types",
    "pressure options", "which sizes and materials") -> product_option_values; other values of an
    option ("in other colours") -> product_option_values among the versions keeping the values
    named. None otherwise. Of two values of one option, the one not among the customer's `own`
    (the grounded product's) is asked."""
    given = dict(given or {})
    product = given.get("product_name")
    if not isinstance(product, str) or not product.strip():
        pattern = entity_pattern(vocabulary.names)
        found = pattern.search(question) if pattern else None
        product = vocabulary.product_named(found.group(0)) if found else None
    pairs = vocabulary.options_for(product)
    if not product or not pairs:
        return None
    others = other_options_asked(question, {k for k, _ in pairs})
    if others:
        # "does that chair come in other colours with the same high back?": the colours are asked,
        # among the versions keeping the options named.
        params = {"product_name": product, "option_key": OPTION_KEYS_SEPARATOR.join(others)}
        held = held_options(question, pairs, others)
        return "product_option_values", {**params, "held": held} if held else params
    value = _wished_option_value(question, {v for _, v in pairs} - _AMBIGUOUS_VALUES, own)
    if value:
        keys = {k for k, v in pairs if v == value}
        if len(keys) == 1 and sets_aside(question, value):
            # "does the black backpack I bought come in other colors?", "is there a version that
            # isn't blue?": the value named is the one they have or rule out; the option's other
            # values are asked.
            return "product_option_values", {"product_name": product, "option_key": next(iter(keys))}
        params = {"product_name": product, "option_value": value}
        if len(keys) == 1:
            params["option_key"] = next(iter(keys))
        return "variants_by_option", params
    asked = _find_option_keys(question, {k for k, _ in pairs})
    if asked:
        return "product_option_values", {"product_name": product,
                                         "option_key": OPTION_KEYS_SEPARATOR.join(asked)}
    return None


