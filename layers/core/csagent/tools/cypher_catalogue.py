"""The predefined Cypher tool: a catalogue of parameterised READ queries, chosen by a model trained
on their example questions and run with validated parameters - the no-model path for frequent
questions.

Pieces:
- **Catalogue** (`load_catalogue`): templates read from `catalogue/templates.yaml` (data, not code)
  and checked on load: read-only Cypher, every declared parameter used, every `$name` declared,
  customer-scoped templates anchored on `(:Customer {customer_id: $customer_id})`, catalogue-scoped
  ones never touching customer data, and no template ever declaring `customer_id`.
- **Matcher** (`TemplateMatcher`): embeds each template's examples and description once (lazily);
  a question whose closest template (by similarity) does not clear a threshold is no catalogue
  question; otherwise a logistic regression trained on the examples picks the template, if its
  probability leads the runner-up's by a margin. Defaults measured on the catalogue by 5-fold
  cross-validation (`python -m devstack.template_model_cv`); `evaluate_leave_one_out` reports the
  similarity rule alone.
- **Runner** (`run_template`, `run`): normalises and validates parameters, injects `customer_id`
  from the authenticated session (`ToolContext.customer_id`, never from the message), runs the
  query in a READ transaction with a timeout and a row cap, shapes the rows and returns a
  `ToolResult`. It never raises: every failure is a typed `ToolError`.

Security invariant: customer data is reachable only through customer-scoped templates, whose
Cypher starts at the authenticated customer and follows PLACED / HAS_DEFAULT_ADDRESS /
HAS_PAYMENT_METHOD. Another customer's order id simply matches nothing (NO_RESULTS).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.grounding.comparatives import may_rank, rank_versions
from csagent.nlp.gloss import english_query
from csagent.tools.failures import failed_result

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.caching import TTLCache
    from csagent.ports import Embedder
    from csagent.tools.context import ToolContext

logger = logging.getLogger(__name__)

TOOL_NAME = "cypher_catalogue"
CATALOGUE_PATH = Path(__file__).resolve().parent / "catalogue" / "templates.yaml"

# Matching defaults, measured with all-MiniLM-L6-v2 on this catalogue (1,081 examples, 40 matchable
# templates) by 5-fold cross-validation (`python -m devstack.template_model_cv`): the similarity gate
# at 0.60 passes 91 % of held-out examples; the template model then picks right 916 times and wrong
# 73 (precision 0.926, coverage 0.915), where the closest-examples rule it replaced (margin 0.02 in
# score) picked right 814 times and wrong 83 (precision 0.907, coverage 0.830). Off-catalogue
# questions score at most 0.56; a lower threshold lets policy questions ("what is your return
# policy?") in.
#: Score the best template must reach (cosine similarity, mean of its top_k closest texts).
DEFAULT_THRESHOLD = 0.60
#: How far the chosen template must be ahead of the runner-up in the template model's probability:
#: 0.0, the margin that maximises right minus wrong picks on every fold.
DEFAULT_MARGIN = 0.0
#: A template's score is the mean similarity of its this-many closest texts.
DEFAULT_TOP_K = 2

ParamType = Literal["order_id", "tracking_id", "product_name", "product_id", "item_id", "status",
                    "option_key", "option_value", "option_filter", "category", "int"]
Scope = Literal["customer", "catalogue"]

#: Order statuses of the store (tau-retail plus the statuses the customer actions write).
ORDER_STATUSES: tuple[str, ...] = ("pending", "processed", "delivered", "cancelled",
                                   "return requested", "exchange requested",
                                   "pending (item modified)")
_STATUS_SYNONYMS: dict[str, str] = {
    "canceled": "cancelled", "cancelled": "cancelled",
    "shipped": "processed", "dispatched": "processed", "in transit": "processed",
    "processing": "processed", "processed": "processed",
    "open": "pending", "pending": "pending", "delivered": "delivered",
    "returned": "return requested", "return requested": "return requested",
    "exchanged": "exchange requested", "exchange requested": "exchange requested",
    "pending (item modified)": "pending (item modified)",
    "pending (items modified)": "pending (item modified)",
}

#: Default validation pattern (applied after normalisation) and a readable hint per type.
_TYPE_RULES: dict[str, tuple[str, str]] = {
    "order_id": (r"^#W\d{7}$", "an order number like #W1234567"),
    "product_name": (r"^[a-z0-9]{2,60}$", "a product name like 'water bottle'"),
    "tracking_id": (r"^\d{12}$", "a 12-digit tracking number"),
    "product_id": (r"^\d{10}$", "a 10-digit product id"),
    "item_id": (r"^\d{10}$", "a 10-digit item id"),
    "status": (r"^[a-z ()]{3,40}$", "an order status (" + ", ".join(ORDER_STATUSES) + ")"),
    "option_key": (r"^[a-z][a-z0-9 /_.-]{0,39}$", "an option name like 'color' or 'size'"),
    "option_value": (r"^[a-z0-9][a-z0-9 .,%+/()'-]{0,39}$", "an option value like 'blue' or 'XL'"),
    "option_filter": (r"^[a-z][a-z0-9 /_.-]{0,39}: [^|:]{1,40}"
                      r"(\|[a-z][a-z0-9 /_.-]{0,39}: [^|:]{1,40}){0,7}$",
                      "options like 'capacity: 20000mah|color: blue'"),
    "category": (r"^[a-z0-9]{2,60}$", "a category name like 'electronics'"),
    "int": (r"^-?\d+$", "a whole number"),
}

# Cypher keywords and procedures that write or administer; none may appear in a template.
_WRITE_RE = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|DROP|LOAD\s+CSV|FOREACH|GRANT|REVOKE|DENY|"
    r"TERMINATE|ALTER|RENAME|START\s+DATABASE|STOP\s+DATABASE)\b|\bCALL\b|\bapoc\.|\bdbms\.|\bdb\.",
    re.IGNORECASE)
_PARAM_RE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_CUSTOMER_ANCHOR_RE = re.compile(
    r"^\s*MATCH\s+\((\w+):Customer\s*\{\s*customer_id:\s*\$customer_id\s*\}\)", re.IGNORECASE)
_CUSTOMER_HINT_RE = re.compile(r"\bUSING\s+INDEX\s+\w+:Customer\s*\(\s*customer_id\s*\)", re.IGNORECASE)
_MATCH_RE = re.compile(r"\b(?:OPTIONAL\s+)?MATCH\s+\(([^)]*)\)", re.IGNORECASE)
_SUBQUERY_RE = re.compile(r"\b(EXISTS|COUNT|COLLECT)\s*\{|\bUNION\b", re.IGNORECASE)
_SLOT_RE = re.compile(r"\[([^\[\]]+)\]")
_CUSTOMER_LABELS = ("Customer", "Order", "OrderLine", "Address", "PaymentMethod", "Transaction",
                    "Shipment", "TrackingEvent")


# ---------------------------------------------------------------------------------------------
# Catalogue models
# ---------------------------------------------------------------------------------------------
class ParamSpec(BaseModel):
    """One typed template parameter. `pattern` / `enum` / `min` / `max` override the type's rule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: ParamType
    required: bool = True
    pattern: str | None = None
    enum: tuple[str, ...] | None = None
    min: int | None = None
    max: int | None = None
    default: Any = None
    description: str = ""

    @field_validator("name")
    @classmethod
    def _never_customer_id(cls, name: str) -> str:
        if name == "customer_id":
            raise ValueError("customer_id is injected from the session and can never be a template parameter")
        return name

    @property
    def effective_pattern(self) -> str:
        return self.pattern or _TYPE_RULES[self.type][0]

    @property
    def effective_enum(self) -> tuple[str, ...] | None:
        if self.enum is not None:
            return self.enum
        return ORDER_STATUSES if self.type == "status" else None

    @property
    def hint(self) -> str:
        return _TYPE_RULES[self.type][1]


class ResultSpec(BaseModel):
    """How rows are shaped: which columns (in order), one row or many, a row cap, JSON columns."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shape: Literal["one", "many"]
    columns: tuple[str, ...] = Field(min_length=1)
    max_rows: int = Field(default=50, ge=1, le=500)
    json_columns: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _json_columns_are_columns(self) -> ResultSpec:
        unknown = set(self.json_columns) - set(self.columns)
        if unknown:
            raise ValueError(f"json_columns not among columns: {sorted(unknown)}")
        if self.shape == "one" and self.max_rows != 1:
            raise ValueError("shape 'one' needs max_rows 1")
        return self


class QueryTemplate(BaseModel):
    """One predefined READ query with its examples, typed parameters, scope and result shape."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=10)
    scope: Scope
    examples: tuple[str, ...] = Field(min_length=3)
    params: tuple[ParamSpec, ...] = ()
    cypher: str = Field(min_length=10)
    result: ResultSpec
    timeout_s: float | None = Field(default=None, gt=0, le=60)
    empty_message: str | None = None
    # False for templates only the planner asks for by id (they would shadow a narrower one).
    matchable: bool = True

    @model_validator(mode="after")
    def _check_query(self) -> QueryTemplate:
        names = [p.name for p in self.params]
        if len(names) != len(set(names)):
            raise ValueError(f"{self.id}: duplicate parameter names")
        write = _WRITE_RE.search(self.cypher)
        if write:
            raise ValueError(f"{self.id}: not a read-only query ({write.group(0)!r})")
        used = set(_PARAM_RE.findall(self.cypher))
        if missing := set(names) - used:
            raise ValueError(f"{self.id}: declared parameters not used in the Cypher: {sorted(missing)}")
        if undeclared := used - set(names) - {"customer_id"}:
            raise ValueError(f"{self.id}: Cypher uses undeclared parameters: {sorted(undeclared)}")
        if self.scope == "customer":
            _check_customer_scoping(self.id, self.cypher)
        elif "customer_id" in used or any(re.search(rf":{label}\b", self.cypher)
                                          for label in _CUSTOMER_LABELS):
            raise ValueError(f"{self.id}: a catalogue-scoped template may not touch customer data")
        return self

    @field_validator("examples")
    @classmethod
    def _slots_balanced(cls, examples: tuple[str, ...]) -> tuple[str, ...]:
        for example in examples:
            if _SLOT_RE.sub("", example).count("[") or _SLOT_RE.sub("", example).count("]"):
                raise ValueError(f"unbalanced [slot] markup in example {example!r}")
        return examples

    @property
    def natural_examples(self) -> tuple[str, ...]:
        """The example questions as a customer would type them (slot brackets removed)."""
        return tuple(_SLOT_RE.sub(r"\1", e) for e in self.examples)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)


def _check_customer_scoping(template_id: str, cypher: str) -> None:
    """Customer data only through the authenticated customer.

    The query must open with `MATCH (c:Customer {customer_id: $customer_id})`, mention the
    Customer label nowhere else (but in the anchor's `USING INDEX c:Customer(customer_id)`),
    use no pattern subqueries or UNION, and every later MATCH / OPTIONAL MATCH must start from
    an already bound variable (a bare `(x)`), so no disconnected pattern can reach another
    customer's nodes. That the database plans it from the customer's unique seek is checked on
    the real Neo4j (tests/integration/test_catalogue_plans.py), not here.
    """
    anchor = _CUSTOMER_ANCHOR_RE.match(cypher)
    if not anchor:
        raise ValueError(f"{template_id}: a customer-scoped template must start with "
                         "MATCH (c:Customer {customer_id: $customer_id})")
    if len(re.findall(r":Customer\b", _CUSTOMER_HINT_RE.sub("", cypher))) != 1:
        raise ValueError(f"{template_id}: the Customer label may appear only in the anchor "
                         "(and its index hint)")
    if _SUBQUERY_RE.search(cypher):
        raise ValueError(f"{template_id}: subqueries and UNION are not allowed in customer scope")
    bound = {anchor.group(1)}
    for i, match in enumerate(_MATCH_RE.finditer(cypher)):
        head = match.group(1).strip()
        if i == 0:
            continue
        if not re.fullmatch(r"\w+", head) or head not in _bound_variables(cypher[:match.start()], bound):
            raise ValueError(f"{template_id}: MATCH ({head}) must start from a bound variable")


def _bound_variables(prefix: str, seed: set[str]) -> set[str]:
    """Variables named in node patterns before a point in the query (a conservative over-approx.)."""
    return seed | set(re.findall(r"\((\w+)(?::\w+)?", prefix))


class Catalogue(BaseModel):
    """All templates, by id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    defaults: dict[str, Any] = Field(default_factory=dict)
    templates: tuple[QueryTemplate, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Catalogue:
        ids = [t.id for t in self.templates]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate template ids: {dupes}")
        return self

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.templates)

    @property
    def default_timeout_s(self) -> float:
        return float(self.defaults.get("timeout_s", 5.0))

    def get(self, template_id: str) -> QueryTemplate | None:
        return next((t for t in self.templates if t.id == template_id), None)

    def timeout_for(self, template: QueryTemplate) -> float:
        return template.timeout_s or self.default_timeout_s


def parse_catalogue(raw: Mapping[str, Any]) -> Catalogue:
    """Build and check a catalogue from its parsed YAML/JSON document."""
    return Catalogue.model_validate(raw)


@lru_cache(maxsize=4)
def load_catalogue(path: Path | str | None = None) -> Catalogue:
    """Read the catalogue file (YAML or JSON) once per path; raises on an invalid catalogue."""
    source = Path(path) if path else CATALOGUE_PATH
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".json":
        raw = json.loads(text)
    else:
        from csagent import yamlio

        raw = yamlio.safe_load(text)
    return parse_catalogue(raw)


# ---------------------------------------------------------------------------------------------
# Parameters: normalisation and validation
# ---------------------------------------------------------------------------------------------
class ParamError(ValueError):
    """A parameter value that cannot be used; the message names the parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def _name_key(value: str) -> str:
    """'T-Shirts' -> 'tshirt', 'Home & Kitchen' -> 'homeandkitchen': lower-case alphanumerics,
    last word made singular (the Cypher compares against the name with spaces/hyphens removed, so
    a key must be contained in it: 'Pet Supplies' -> 'petsupplie', not 'petsupply')."""
    words = re.findall(r"[a-z0-9]+", value.lower().replace("&", " and "))
    if words:
        words[-1] = words[-1][:-1] if words[-1].endswith("ies") else _singular(words[-1])
    return "".join(words)


def normalise_param(spec: ParamSpec, value: Any) -> Any:
    """Bring a raw value to the form the Cypher expects (see the catalogue header)."""
    if spec.type == "int":
        if isinstance(value, bool):
            raise ParamError(spec.name, f"Parameter '{spec.name}' must be {spec.hint}.")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        text = str(value).strip().replace(",", "")
        m = re.fullmatch(r"\$?\s*(-?\d+)(?:\.\d+)?\s*(?:dollars?|usd)?", text, re.IGNORECASE)
        if not m:
            raise ParamError(spec.name, f"Parameter '{spec.name}' must be {spec.hint} (got {value!r}).")
        return int(m.group(1))
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ParamError(spec.name, f"Parameter '{spec.name}' must be {spec.hint} (got {value!r}).")
    text = " ".join(str(value).split())
    if spec.type == "order_id":
        compact = text.upper().replace(" ", "")
        if re.fullmatch(r"W\d{7}", compact):
            return "#" + compact
        if re.fullmatch(r"\d{7}", compact):
            return "#W" + compact
        return compact
    if spec.type in ("product_id", "item_id", "tracking_id"):
        return text.replace(" ", "")
    if spec.type in ("product_name", "category"):
        return _name_key(text)
    if spec.type == "status":
        lowered = text.lower()
        return _STATUS_SYNONYMS.get(lowered, lowered)
    return text.lower()  # option_key, option_value, option_filter


def validate_params(template: QueryTemplate, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Normalised, validated parameters for `template` (undeclared keys are dropped).

    Raises `ParamError` naming the first offending parameter.
    """
    given = dict(params or {})
    out: dict[str, Any] = {}
    for spec in template.params:
        raw = given.get(spec.name)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            if spec.required:
                raise ParamError(spec.name, f"Missing required parameter '{spec.name}' ({spec.hint}).")
            out[spec.name] = spec.default
            continue
        value = normalise_param(spec, raw)
        if spec.type == "int":
            if spec.min is not None and value < spec.min:
                raise ParamError(spec.name,
                                 f"Parameter '{spec.name}' must be at least {spec.min} (got {value}).")
            if spec.max is not None and value > spec.max:
                raise ParamError(spec.name,
                                 f"Parameter '{spec.name}' must be at most {spec.max} (got {value}).")
        else:
            allowed = spec.effective_enum
            if allowed is not None and value not in allowed:
                raise ParamError(spec.name, f"Parameter '{spec.name}' must be one of "
                                            f"{', '.join(allowed)} (got {raw!r}).")
            if not re.fullmatch(spec.effective_pattern, str(value)):
                raise ParamError(spec.name, f"Parameter '{spec.name}' must be {spec.hint} (got {raw!r}).")
        out[spec.name] = value
    return out


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
    return _SLOT_RE.sub(ENTITY_MASK, example)


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
        key = _name_key(mention)
        if sum(key in _name_key(name) for name in self.products) > 1:
            return mention  # "cameras": the word of several products' names
        owners = {name for alias, names in self.aliases.items() if _name_key(alias) == key for name in names}
        return next(iter(owners)) if len(owners) == 1 else mention

    def names_several(self, mention: str) -> bool:
        """Is the mention a whole word of several catalogue names ("cameras": the Action, Digital
        and Indoor Security Camera), not of one ("bike") or only inside compounds ("phones")?"""
        words = mention.lower().replace("-", " ").split()
        if not words:
            return False
        words[-1] = _singular(words[-1])
        pattern = re.compile(r"\b" + r"\s+".join(map(re.escape, words)) + r"(?:e?s)?\b")
        return sum(bool(pattern.search(name.lower().replace("-", " "))) for name in self.products) > 1

    def all_option_values(self) -> set[str]:
        return {v for pairs in self.options.values() for _, v in pairs}

    def options_for(self, product_mention: str | None) -> tuple[tuple[str, str], ...]:
        """(key, value) pairs of the products a mention refers to ("chair" -> Office Chair's)."""
        if not product_mention:
            return ()
        key = _name_key(product_mention)
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
_STATUS_WORDS_RE = re.compile(r"\b(" + "|".join(sorted((re.escape(k) for k in _STATUS_SYNONYMS
                                                        if "(" not in k), key=len, reverse=True))
                              + r")\b", re.IGNORECASE)


_COMMON_WORD_VALUES = frozenset({"yes", "none", "low", "high", "medium", "large", "small", "basic",
                                 "plain", "custom", "manual", "fixed", "wired", "fresh", "light"})
_KEY_SPELLINGS = {"colour": "color", "colours": "color", "colors": "color", "sizes": "size"}


@lru_cache(maxsize=1)
def _everyday_option_names() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(option name, the everyday words for it), in the data file's order (`catalogue/option_names.json`)."""
    raw = json.loads((CATALOGUE_PATH.parent / "option_names.json").read_text(encoding="utf-8"))
    return tuple((str(key), tuple(str(w).lower() for w in words)) for key, words in raw["names"].items())


def _find_option_key(question: str, keys: set[str]) -> str | None:
    """The option of the product (`keys`) the question asks about: by its own name ("which sensor
    types"), else by an everyday word for it ("what sizes does the kettle come in?": its capacity)."""
    lowered = question.lower()
    for word, key in _KEY_SPELLINGS.items():
        if key in keys and re.search(rf"\b{word}\b", lowered):
            return key
    for key in sorted(keys, key=len, reverse=True):
        if re.search(rf"\b{re.escape(key)}(?:e?s)?\b", lowered):
            return key
    for key, words in _everyday_option_names():
        if key in keys and any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words):
            return key
    return None


def _find_option_value(question: str, values: set[str]) -> str | None:
    lowered = question.lower()
    for value in sorted(values, key=len, reverse=True):
        if re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", lowered):
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
                key = _find_option_key(question, {k for k, _ in pairs})
                if key:
                    found[spec.name] = key
        for spec in template.params:
            if spec.type == "option_value":
                key = given.get("option_key") or found.get("option_key")
                values = {v for k, v in pairs if key is None or k == str(key).lower()}
                # A value this product does not come in ("hiking boots in brown") is still the
                # customer's parameter: look among all the store's values, so the answer is
                # "none in brown" rather than a request to say which option.
                value = _find_option_value(question, values) or _find_option_value(
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


def narrow_by_option(question: str, vocabulary: StoreVocabulary,
                     given: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]] | None:
    """(template id, parameters) when the question names a product and one of ITS options: a value
    ("in wood", "in 5K", "size 11") -> variants_by_option; an option name ("which sensor types",
    "pressure options") -> product_option_values. None otherwise."""
    given = dict(given or {})
    product = given.get("product_name")
    if not isinstance(product, str) or not product.strip():
        pattern = entity_pattern(vocabulary.names)
        found = pattern.search(question) if pattern else None
        product = vocabulary.product_named(found.group(0)) if found else None
    pairs = vocabulary.options_for(product)
    if not product or not pairs:
        return None
    value = _find_option_value(question, {v for _, v in pairs} - _AMBIGUOUS_VALUES)
    if value:
        keys = {k for k, v in pairs if v == value}
        params = {"product_name": product, "option_value": value}
        if len(keys) == 1:
            params["option_key"] = next(iter(keys))
        return "variants_by_option", params
    key = _find_option_key(question, {k for k, _ in pairs})
    if key:
        return "product_option_values", {"product_name": product, "option_key": key}
    return None


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TemplateMatch:
    """The chosen template, its score, and how far it beat the runner-up."""

    template: QueryTemplate
    score: float
    margin: float
    runner_up: str | None
    runner_up_score: float
    matched_text: str
    #: Parameters read while narrowing to an option template (see `narrow_by_option`).
    narrowed: Mapping[str, Any] | None = None

    @property
    def template_id(self) -> str:
        return self.template.id


@dataclass
class _Index:
    vectors: Any  # numpy array (n_texts, dim), unit rows
    owners: Any  # numpy int array: template index per text
    texts: list[str]
    kinds: list[str]  # "example" | "description"


class TemplateMatcher:
    """Matcher over the catalogue's example questions: similarity says whether a question is one
    the catalogue answers, a model trained on the examples says which.

    Texts are canonicalised before embedding: order / item / product ids become fixed tokens
    and product mentions become "product" (`[slot]` markup in the examples; in questions the
    store's product names given as `entity_terms` and any entity strings passed to `match`), so
    the intent decides, not the product. Score of a template = the mean of its `top_k` closest
    texts (examples and description; `top_k=1` is the plain max): a question whose best score is
    below `threshold` is no catalogue question. Which template it is comes from a multinomial
    logistic regression over the examples' embeddings (`model`; 5-fold cross-validated accuracy
    0.912 on the 1,081 examples against 0.846 for the closest-examples rule it replaced), and its
    probability must lead the runner-up's by `margin`; otherwise `match` returns None and the
    caller degrades (Text2Cypher, clarification). `vectors_name` names the texts' arrays (and the
    model's) built with the layer (`csagent.nlp.fixed_vectors`; `matcher_for` gives it for the
    shipped catalogue): loaded instead of computed when fresh.
    """

    def __init__(self, catalogue: Catalogue, embedder: Embedder, *, threshold: float = DEFAULT_THRESHOLD,
                 margin: float = DEFAULT_MARGIN, top_k: int = DEFAULT_TOP_K, use_descriptions: bool = True,
                 entity_terms: Sequence[str] = (), vectors_name: str | None = None) -> None:
        self.catalogue = catalogue
        self.embedder = embedder
        self._vectors_name = vectors_name  # the shipped catalogue: its vectors ship with the layer
        self.threshold = threshold
        self.margin = margin
        self.top_k = max(1, top_k)
        self.use_descriptions = use_descriptions
        self._entity_re = entity_pattern(entity_terms)
        self._index: _Index | None = None
        self._model: Any = None
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()

    def set_entity_terms(self, terms: Sequence[str]) -> None:
        """Replace the product names masked in questions (for example the store's products)."""
        self._entity_re = entity_pattern(terms)

    def _ensure_index(self) -> _Index:
        if self._index is not None:
            return self._index
        with self._lock:
            if self._index is None:
                import numpy as np

                texts: list[str] = []
                owners: list[int] = []
                kinds: list[str] = []
                for i, template in enumerate(self.catalogue.templates):
                    if not template.matchable:
                        continue
                    for example in template.examples:
                        texts.append(example)
                        owners.append(i)
                        kinds.append("example")
                    if self.use_descriptions:
                        texts.append(template.description)
                        owners.append(i)
                        kinds.append("description")
                prepared = [canonical_question(mask_slots(t)) for t in texts]
                if self._vectors_name:
                    from csagent.nlp.fixed_vectors import fixed_vectors

                    vectors = fixed_vectors(self._vectors_name, prepared, self.embedder)
                else:
                    vectors = np.asarray(self.embedder.embed(prepared), dtype=np.float32)
                vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
                self._index = _Index(vectors, np.asarray(owners), texts, kinds)
        return self._index

    def warm_up(self) -> None:
        """Load or compute the catalogue's vectors and model now (otherwise on the first `match`)."""
        self.model()

    def model(self) -> Any:
        """The template model (`nlp.intents.SoftmaxRegression`) trained on the examples' vectors:
        the layer's arrays for the shipped catalogue when they were trained on these texts, else
        trained now (about a second)."""
        if self._model is not None:
            return self._model
        index = self._ensure_index()
        with self._model_lock:
            if self._model is None:
                from csagent.nlp.intents import SoftmaxRegression

                rows = [i for i, kind in enumerate(index.kinds) if kind == "example"]
                x = index.vectors[rows]
                labels = [self.catalogue.templates[int(index.owners[i])].id for i in rows]
                model = SoftmaxRegression()
                fingerprint = None
                if self._vectors_name:
                    from csagent.nlp.fixed_vectors import fingerprint_of

                    fingerprint = fingerprint_of(self.embedder)
                if fingerprint is None:
                    self._model = model.fit(x, labels)
                else:
                    from csagent.nlp.fixed_vectors import cached_arrays, content_key

                    texts = [canonical_question(mask_slots(index.texts[i])) for i in rows]
                    key = content_key("template-model/1", fingerprint, texts, labels,
                                      f"l2={model.l2!r} steps={model.steps} rate={model.rate!r}")
                    arrays = cached_arrays(f"{self._vectors_name}_model", key,
                                           lambda: SoftmaxRegression().fit(x, labels).arrays())
                    self._model = model.with_arrays(sorted(set(labels)), arrays)
        return self._model

    def probabilities(self, question: str, entities: Sequence[str] = ()) -> dict[str, float]:
        """The model's probability of each template for `question` (canonicalised and masked)."""
        return self._probabilities(self._vector(self.prepare(question, entities)))

    def assess(self, question: str) -> tuple[dict[str, float], dict[str, float]]:
        """(each template's similarity score, the model's probability of each) for `question`."""
        vec = self._vector(self.prepare(question))
        ranked = self._rank_vector(vec, len(self.catalogue.templates))
        return {tid: score for tid, score, _ in ranked}, self._probabilities(vec)

    def _probabilities(self, vec: Any) -> dict[str, float]:
        model = self.model()
        probs = model.predict_proba(vec[None, :])[0]
        return {c: float(p) for c, p in zip(model.classes, probs, strict=True)}

    def prepare(self, question: str, entities: Sequence[str] = ()) -> str:
        """The question as it is embedded: ids canonicalised, product mentions masked."""
        text = canonical_question(question)
        extra = entity_pattern([e for e in entities if isinstance(e, str) and len(e.strip()) >= 3])
        for pattern in (extra, self._entity_re):
            if pattern is not None:
                text = pattern.sub(ENTITY_MASK, text)
        return text

    def _template_scores(self, sims: Any, exclude: int | None = None) -> tuple[Any, list[int]]:
        """Per-template score (mean of the top_k similarities) and the index of its best text."""
        import numpy as np

        index = self._ensure_index()
        n = len(self.catalogue.templates)
        scores = np.full(n, -1.0, dtype=np.float32)
        best_text = [-1] * n
        for t in range(n):
            members = np.flatnonzero(index.owners == t)
            if exclude is not None:
                members = members[members != exclude]
            if members.size == 0:
                continue
            values = sims[members]
            order = np.argsort(-values)
            scores[t] = float(values[order[:self.top_k]].mean())
            best_text[t] = int(members[order[0]])
        return scores, best_text

    def rank(self, question: str, top_n: int = 3,
             entities: Sequence[str] = ()) -> list[tuple[str, float, str]]:
        """Best templates for a question: (template id, score, closest text), best first."""
        return self._rank_prepared(self.prepare(question, entities), top_n)

    def _vector(self, prepared: str) -> Any:
        """The unit vector of a prepared question."""
        import numpy as np

        vec = np.asarray(self.embedder.embed([prepared])[0], dtype=np.float32)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    def _rank_prepared(self, prepared: str, top_n: int) -> list[tuple[str, float, str]]:
        return self._rank_vector(self._vector(prepared), top_n)

    def _rank_vector(self, vec: Any, top_n: int) -> list[tuple[str, float, str]]:
        import numpy as np

        index = self._ensure_index()
        sims = index.vectors @ vec
        scores, best_text = self._template_scores(sims)
        order = np.argsort(-scores)[:top_n]
        return [(self.catalogue.templates[i].id, float(scores[i]), index.texts[best_text[i]]) for i in order]

    def catalogue_score(self, question: str, entities: Sequence[str] = ()) -> float:
        """How close the question comes to any catalogue-scoped template (products, variants,
        categories): low for what a product's documents answer ("how often do I descale it?")."""
        ids = {t.id for t in self.catalogue.templates if t.scope == "catalogue"}
        ranked = self.rank(question, top_n=len(self.catalogue.templates), entities=entities)
        return max((score for template_id, score, _ in ranked if template_id in ids), default=0.0)

    def _store_wide(self, template_id: str) -> bool:
        """A catalogue template that takes no parameter: about the whole store, never one product."""
        template = self.catalogue.get(template_id)
        return template is not None and template.scope == "catalogue" and not template.params

    def match(self, question: str, entities: Sequence[str] = ()) -> TemplateMatch | None:
        """The template for `question`, or None when below the threshold or too close to a rival.

        `entities`: entity strings already extracted from the question (product names ...),
        masked like the catalogue's `[slots]`.
        """
        if not question or not question.strip():
            return None
        prepared = self.prepare(question, entities)
        vec = self._vector(prepared)
        ranked = self._rank_vector(vec, len(self.catalogue.templates))
        if prepared != canonical_question(question):
            # A question that names a product is about that product: the store-wide catalogue
            # questions ("what types of products do you sell?") read alike once it is masked.
            ranked = [r for r in ranked if not self._store_wide(r[0])] or ranked
        if ranked[0][1] < self.threshold:
            return None  # close to no template: not a question the catalogue answers
        probabilities = self._probabilities(vec)
        chosen = sorted(ranked, key=lambda r: -probabilities.get(r[0], 0.0))
        (top_id, top_score, top_text), runner_up = chosen[0], (chosen[1] if len(chosen) > 1 else None)
        margin = probabilities.get(top_id, 0.0) - (probabilities.get(runner_up[0], 0.0) if runner_up else 0.0)
        if margin < self.margin:
            return None
        template = self.catalogue.get(top_id)
        assert template is not None
        return TemplateMatch(template, top_score, margin, runner_up[0] if runner_up else None,
                             runner_up[1] if runner_up else -1.0, top_text)


@dataclass
class LeaveOneOutReport:
    """Leave-one-out over all example questions: each is matched against all other texts."""

    total: int
    correct: int
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (question, expected, got)
    scores: list[tuple[float, float, bool]] = field(default_factory=list)  # (score, margin, correct)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def at(self, threshold: float, margin: float) -> tuple[float, float]:
        """(coverage, precision) if only matches with score >= threshold and margin >= margin count."""
        accepted = [ok for s, m, ok in self.scores if s >= threshold and m >= margin]
        coverage = len(accepted) / self.total if self.total else 0.0
        precision = sum(accepted) / len(accepted) if accepted else 0.0
        return coverage, precision


def evaluate_leave_one_out(matcher: TemplateMatcher) -> LeaveOneOutReport:
    """Hold out each example in turn and match it against every other text of the catalogue."""
    import numpy as np

    index = matcher._ensure_index()
    sims_all = index.vectors @ index.vectors.T
    report = LeaveOneOutReport(total=0, correct=0)
    for i, kind in enumerate(index.kinds):
        if kind != "example":
            continue
        scores, _ = matcher._template_scores(sims_all[i], exclude=i)
        order = np.argsort(-scores)
        got, second = int(order[0]), int(order[1])
        ok = got == int(index.owners[i])
        report.total += 1
        report.correct += int(ok)
        report.scores.append((float(scores[got]), float(scores[got] - scores[second]), ok))
        if not ok:
            report.errors.append((index.texts[i], matcher.catalogue.templates[int(index.owners[i])].id,
                                  matcher.catalogue.templates[got].id))
    return report


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def _shape_row(row: Mapping[str, Any], spec: ResultSpec) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    for column in spec.columns:
        value = row.get(column)
        if column in spec.json_columns and isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        shaped[column] = value
    return shaped


class _Blank(dict):  # type: ignore[type-arg]
    """format_map mapping that renders unknown placeholders as empty text."""

    def __missing__(self, key: str) -> str:
        return ""


def _display_params(template: QueryTemplate, raw: Mapping[str, Any] | None,
                    values: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values as the customer wrote them (order ids normalised) for messages."""
    raw = raw or {}
    shown: dict[str, Any] = {}
    for spec in template.params:
        given = raw.get(spec.name)
        if isinstance(given, str) and given.strip() and spec.type not in ("order_id", "status", "int"):
            shown[spec.name] = " ".join(given.split())
        else:
            shown[spec.name] = values.get(spec.name)
    return shown


def _empty_message(template: QueryTemplate, shown: Mapping[str, Any]) -> str:
    """The readable NO_RESULTS message of a template (its `empty_message`, or a generic one)."""
    fields = _Blank({k: ("" if v is None else v) for k, v in shown.items()})
    fields["status_clause"] = f" with status '{shown['status']}'" if shown.get("status") else ""
    if template.empty_message:
        with contextlib.suppress(IndexError, ValueError, AttributeError):
            return template.empty_message.format_map(fields)
    described = template.description.rstrip(".")
    listed = ", ".join(f"{k}={v}" for k, v in shown.items() if v is not None)
    return f"Nothing found: {described}" + (f" ({listed})." if listed else ".")


def run_template(template_id: str, params: Mapping[str, Any] | None, ctx: ToolContext, task: Task, *,
                 catalogue: Catalogue | None = None, match: TemplateMatch | None = None) -> ToolResult:
    """Validate, scope, run and shape one catalogue query. Never raises."""
    started = time.perf_counter()

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000.0, 3)

    try:
        catalogue = catalogue or load_catalogue()
        template = catalogue.get(template_id)
        if template is None:
            return ToolResult.failed(task, ErrorType.VALIDATION, f"Unknown query template '{template_id}'.",
                                     latency_ms=elapsed())
        try:
            values = validate_params(template, params)
        except ParamError as exc:
            return ToolResult.failed(task, ErrorType.VALIDATION, str(exc), latency_ms=elapsed())
        query_params = dict(values)
        if template.scope == "customer":
            if not ctx.customer_id:
                return ToolResult.failed(task, ErrorType.PERMISSION_DENIED,
                                         "This question is about a customer account; sign in to ask it.",
                                         latency_ms=elapsed())
            query_params["customer_id"] = ctx.customer_id
        spec = template.result
        try:
            rows = ctx.graph.read(template.cypher, query_params, timeout_s=catalogue.timeout_for(template),
                                  max_rows=spec.max_rows + 1)
        except Exception as exc:  # noqa: BLE001 - failures become typed results, in one place
            logger.warning("cypher template %s failed", template.id)
            return failed_result(task, exc, latency_ms=elapsed())
        if not rows:
            return ToolResult.failed(task, ErrorType.NO_RESULTS,
                                     _empty_message(template, _display_params(template, params, values)),
                                     latency_ms=elapsed())
        data: dict[str, Any] = {"template_id": template.id, "description": template.description,
                                "scope": template.scope, "params": values}
        if match is not None:
            data["match"] = {"score": round(match.score, 4), "margin": round(match.margin, 4),
                             "runner_up": match.runner_up}
        if spec.shape == "one":
            data["row"] = _shape_row(rows[0], spec)
        else:
            data["rows"] = [_shape_row(r, spec) for r in rows[:spec.max_rows]]
            data["row_count"] = len(data["rows"])
            data["truncated"] = len(rows) > spec.max_rows
        return ToolResult.ok(task, data, latency_ms=elapsed())
    except Exception as exc:  # noqa: BLE001 - the tool contract: never raise
        logger.exception("cypher template %s crashed", template_id)
        return ToolResult.failed(task, ErrorType.UNKNOWN,
                                 f"The predefined query failed unexpectedly ({type(exc).__name__}).",
                                 latency_ms=elapsed())


def _lacks_required(template: QueryTemplate, params: Mapping[str, Any]) -> bool:
    """Does the template need a parameter the question and the given parameters do not supply?"""
    return any(spec.required and spec.default is None and params.get(spec.name) in (None, "")
               for spec in template.params)


_MATCHERS: dict[tuple[int, int], tuple[Any, TemplateMatcher]] = {}
_MATCHERS_LOCK = threading.Lock()


def matcher_for(embedder: Embedder, catalogue: Catalogue | None = None) -> TemplateMatcher:
    """A process-wide matcher per (embedder, catalogue): the examples are embedded only once (the
    shipped catalogue's are loaded from the layer's arrays, `csagent.nlp.fixed_vectors`)."""
    catalogue = catalogue or load_catalogue()
    key = (id(embedder), id(catalogue))
    with _MATCHERS_LOCK:
        entry = _MATCHERS.get(key)
        if entry is None or entry[0] is not embedder:
            shipped = "cypher_catalogue" if catalogue is load_catalogue() else None
            entry = (embedder, TemplateMatcher(catalogue, embedder, vectors_name=shipped))
            _MATCHERS[key] = entry
        return entry[1]


def _narrowed(matched: TemplateMatch | None, question: str, vocabulary: StoreVocabulary,
              params: Mapping[str, Any], embedder: Embedder, catalogue: Catalogue) -> TemplateMatch | None:
    """The match, narrowed to an option template when the question names one of the product's
    options (`narrow_by_option`). Also answers a product question that ranked a product template
    first but fell short of the threshold ("which sensor types can I choose from?")."""
    if matched is not None and matched.template.id not in OPTION_NARROWED:
        return matched
    if matched is None:
        ranked = matcher_for(embedder, catalogue).rank(question, top_n=1, entities=vocabulary.names)
        top_id, top_score, top_text = ranked[0]
        if top_id not in OPTION_NARROWED | {"product_option_values", "variants_by_option"} or \
                top_score < OPTION_RANK_FLOOR:
            return None
        base = TemplateMatch(catalogue.get(top_id), top_score, 0.0, None, -1.0, top_text)  # type: ignore[arg-type]
    else:
        base = matched
    narrowed = narrow_by_option(question, vocabulary, given=params)
    if narrowed is None:
        return matched
    template = catalogue.get(narrowed[0])
    if template is None:
        return matched
    return TemplateMatch(template, base.score, base.margin, base.template.id, base.score, base.matched_text,
                         narrowed=narrowed[1])


def _names_a_product(question: str, vocabulary: StoreVocabulary) -> bool:
    pattern = entity_pattern(vocabulary.names)
    return bool(pattern and pattern.search(question))


def _allowed_match(args: Mapping[str, Any], ctx: ToolContext) -> str:
    """The allowed template (`args["templates"]`) the template model finds likeliest for the
    question, when its probability (with the templates that answer the same, `SAME_ANSWER`)
    beats that of the intent's own answer (`args["fallback_template"]`, likewise) by
    `ORDER_QUESTION_MARGIN` and the question is close to its examples (`ORDER_QUESTION_MIN_SCORE`:
    the examples name the order by its id, so a question that names it otherwise, "is my water
    bottle order shipped?", is far from them all and keeps the intent's own answer); else the
    fallback. "where will #W1 ship to?" is the shipping address; "where is #W1?" the overview."""
    allowed = {str(t) for t in args.get("templates") or []}
    fallback = str(args["fallback_template"])
    if not allowed or ctx.embedder is None:
        return fallback
    question = english_query(str(args["question"]))  # the templates' examples are English
    scores, probabilities = matcher_for(ctx.embedder, load_catalogue()).assess(question)
    best = max(allowed, key=lambda t: group_probability(probabilities, t))
    similarity = max(scores.get(t, 0.0) for t in {best, *SAME_ANSWER.get(best, ())})
    own = group_probability(probabilities, fallback)
    if similarity >= ORDER_QUESTION_MIN_SCORE \
            and group_probability(probabilities, best) >= own + ORDER_QUESTION_MARGIN:
        return best
    return fallback


def group_probability(probabilities: Mapping[str, float], template: str) -> float:
    """The probability of `template` with the templates that give the same answer (`SAME_ANSWER`)."""
    return sum(probabilities.get(t, 0.0) for t in {template, *SAME_ANSWER.get(template, ())})


#: How close a question must be to an order template's examples to be a question about one order
#: (cosine, MiniLM: `understanding_local.asks_about_an_order`), and to a specific order template's
#: to be answered by it instead of the intent's own (`_allowed_match`).
ORDER_QUESTION_MIN_SCORE = 0.55
#: By how much the template model's probability for a specific question about an order must beat
#: the intent's own answer's; chosen by 5-fold cross-validation (`python -m
#: devstack.order_question_margin`).
ORDER_QUESTION_MARGIN = 0.05
#: Below this `TemplateMatcher.catalogue_score`, a question about one product asks what the product's
#: documents say (use, care, limits, troubleshooting), not what the catalogue lists: the rule the
#: trained reader `nlp.product_question` replaced, kept for when that reader is not available. Chosen
#: by 5-fold cross-validation on the knowledge eval's manual questions against the English catalogue
#: intent examples (`python -m devstack.aspect_threshold`; at 2026-12-04 the folds chose 0.34 to
#: 0.42, held-out balanced accuracy 0.763, catalogue examples 0.50 at the median, manual questions
#: 0.28).
CATALOGUE_QUESTION_MIN_SCORE = 0.42
#: Product templates whose answer the options a customer named narrow to the versions having them.
OPTION_AWARE = OPTION_NARROWED | {"product_price", "variants_by_option", "cheapest_variant",
                                  "most_expensive_variant"}
#: The answer naming the versions of one product a superlative or a "than" ranks ("the largest
#: kettle", "mats thicker than 5mm"): built from `product_variants`, not a template of its own.
RANKED_VERSIONS = "ranked_versions"
#: The answer to a question about one grounded product that no template matches closely enough:
#: the product's versions, price range and the options it comes in.
GROUNDED_FALLBACK = "products_named"


@dataclass(frozen=True)
class GroundedProduct:
    """The catalogue product (and options) the understanding step grounded a question to, as the
    planner passes it in `args["product"]` (or the conversation's last one, `"context_product"`)."""

    product_id: str
    name: str
    options: Mapping[str, str]
    #: The customer's word for it ("phones"), when known.
    surface: str | None = None

    @classmethod
    def read(cls, raw: Any) -> GroundedProduct | None:
        """The product in `raw` (a mapping from the planner), or None when it is not one."""
        if not isinstance(raw, Mapping):
            return None
        product_id, name = raw.get("product_id"), raw.get("name")
        if not (isinstance(product_id, str) and re.fullmatch(r"\d{10}", product_id)
                and isinstance(name, str) and name.strip()):
            return None
        options = raw.get("options")
        kept = {str(k): str(v) for k, v in (options.items() if isinstance(options, Mapping) else ())
                if isinstance(k, str) and isinstance(v, str) and "|" not in k + v and ":" not in k + v}
        surface = raw.get("surface")
        return cls(product_id, name.strip(), kept,
                   surface if isinstance(surface, str) and surface.strip() else None)

    def filter_params(self) -> dict[str, str]:
        """The parameters of `variants_with_options`."""
        return {"product_id": self.product_id,
                "options": "|".join(f"{k}: {v}" for k, v in sorted(self.options.items()))}


def _product_question(question: str, vocabulary: StoreVocabulary, embedder: Embedder,
                      catalogue: Catalogue) -> TemplateMatch | None:
    """The best-ranked template when it is a question about one product scoring at least
    `OPTION_RANK_FLOOR`, for a question whose product is known without the words naming it."""
    top_id, top_score, top_text = matcher_for(embedder, catalogue).rank(
        question, top_n=1, entities=vocabulary.names)[0]
    template = catalogue.get(top_id)
    if template is None or top_score < OPTION_RANK_FLOOR or not _takes_product(template):
        return None
    return TemplateMatch(template, top_score, 0.0, None, -1.0, top_text)


def _takes_product(template: QueryTemplate) -> bool:
    """Is the template about one product (it takes a `product_name`)?"""
    return any(spec.name == "product_name" for spec in template.params)


def _versions_with_options(product: GroundedProduct, ctx: ToolContext, task: Task,
                           catalogue: Catalogue) -> ToolResult:
    """The versions of a grounded product with every option named. None of them is an answer too
    ("we don't have the action camera in 5K"), so it succeeds with no rows; the product and the
    options as the catalogue spells them travel with the rows for the reply."""
    params = product.filter_params()
    result = run_template("variants_with_options", params, ctx, task, catalogue=catalogue)
    grounded = {"name": product.name, "options": dict(product.options)}
    if result.error is not None and result.error.type == ErrorType.NO_RESULTS:
        return ToolResult.ok(task, {"template_id": "variants_with_options", "scope": "catalogue",
                                    "params": params, "rows": [], "row_count": 0,
                                    "truncated": False, "product": grounded})
    if result.data is not None:
        result.data["product"] = grounded
    return result


#: Templates whose answer the fallback already gives (the overview holds status, carrier, tracking).
SAME_ANSWER: dict[str, tuple[str, ...]] = {
    "order_overview": ("order_status", "order_tracking", "delivery_estimate"),
}


def _ranked_versions(question: str, name: Any, subject: GroundedProduct | None, ctx: ToolContext,
                     task: Task, catalogue: Catalogue) -> ToolResult | None:
    """The versions of one product a superlative or a "than" ranks (`comparatives.rank_versions`),
    among those with the options the customer named; None when the words rank nothing or the name
    holds several products."""
    if not may_rank(question):
        return None  # no superlative, no "than": nothing to fetch the versions for
    result = run_template("product_variants", {"product_name": str(name)}, ctx, task, catalogue=catalogue)
    rows = [r for r in ((result.data or {}).get("rows") or []) if isinstance(r, Mapping)]
    if subject is not None:
        rows = [r for r in rows if r.get("product_id") == subject.product_id]
    if not rows or len({r.get("product_id") for r in rows}) != 1:
        return None
    ranked = rank_versions(question, rows, subject.options if subject is not None else None)
    if ranked is None:
        return None
    move = ranked.move
    return ToolResult.ok(task, {
        "template_id": RANKED_VERSIONS, "scope": "catalogue", "params": {"product_name": str(name)},
        "rows": ranked.versions, "row_count": len(ranked.versions), "truncated": False,
        "product": {"name": str(rows[0].get("product_name") or name),
                    "options": dict(subject.options) if subject is not None else {}},
        "ranking": {"key": move.key, "direction": move.direction, "to_end": move.to_end,
                    "value": ranked.value, "beyond": move.beyond}})


def run(task: Task, ctx: ToolContext) -> ToolResult:
    """The tool entry point.

    `task.args` is either `{"template_id": ..., "params": {...}}` or `{"question": ...,
    "params": {...}}`; a question is matched to a template (LOW_CONFIDENCE when nothing matches
    well enough) and identifier-like parameters missing from `params` are read from it.
    """
    started = time.perf_counter()
    try:
        args = dict(task.args or {})
        params = args.get("params") or {}
        if not isinstance(params, Mapping):
            return ToolResult.failed(task, ErrorType.VALIDATION, "'params' must be an object.")
        template_id = args.get("template_id")
        if template_id:
            return run_template(str(template_id), params, ctx, task)
        if args.get("fallback_template") and args.get("question") and ctx.embedder is not None:
            # An order question: the closest of the templates the planner allows for it ("where will
            # #W1 ship to?" -> order_shipping_address), else the intent's own template.
            return run_template(_allowed_match(args, ctx), params, ctx, task)
        question = english_query(str(args.get("question") or "").strip())  # English examples
        if not question:
            return ToolResult.failed(task, ErrorType.VALIDATION, "Give either 'template_id' or 'question'.")
        if ctx.embedder is None:
            return ToolResult.failed(task, ErrorType.UNKNOWN,
                                     "Template matching needs an embedder and none is configured.")
        catalogue = load_catalogue()
        vocabulary = store_vocabulary(ctx.graph, ctx.caches.vocabulary)
        product = GroundedProduct.read(args.get("product"))
        if product is not None and product.surface and vocabulary.names_several(product.surface):
            product = None  # "what cameras do you carry": a word of several products means them all
        if product is not None and not params.get("product_name"):
            # The words were grounded to this product ("phones" is the Smartphone, not every name
            # holding "phone"): it is the product the question is about.
            params = {**params, "product_name": product.name}
        given_entities = [v for v in params.values() if isinstance(v, str)]
        matched = matcher_for(ctx.embedder, catalogue).match(
            question, entities=[*given_entities, *vocabulary.names])
        context = GroundedProduct.read(args.get("context_product"))
        narrowing = params
        if context is not None and not params.get("product_name") \
                and not _names_a_product(question, vocabulary):
            # "is that size in stock in stainless steel?": the option is one of the product the
            # conversation is about.
            narrowing = {**params, "product_name": context.name}
        matched = _narrowed(matched, question, vocabulary, narrowing, ctx.embedder, catalogue)
        if matched is None and (product or context) is not None:
            # The product (named here, or the one the conversation is about) is the evidence the
            # similarity lacks: a product question that ranks first above the floor answers ("what
            # does it cost?"); else a named product's versions, prices and options (below: those
            # with the options named), rather than "say it another way".
            matched = _product_question(question, vocabulary, ctx.embedder, catalogue)
            if matched is None and product is not None:
                matched = TemplateMatch(catalogue.get(GROUNDED_FALLBACK), 0.0, 0.0, None, -1.0, "")  # type: ignore[arg-type]
        if matched is None and args.get("unmatched") == "not_sold":
            # "do you carry sofas?" about nothing the store sells: not found, and what it does sell.
            result = run_template("categories", {}, ctx, task, catalogue=catalogue)
            if result.data is not None:
                result.data["not_sold"] = True
            result.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
            return result
        if matched is None:
            return ToolResult.failed(task, ErrorType.LOW_CONFIDENCE,
                                     "No predefined query matches this question closely enough.",
                                     latency_ms=round((time.perf_counter() - started) * 1000.0, 3))
        extracted = extract_params(matched.template, question, vocabulary=vocabulary, given=params)
        if matched.narrowed:
            extracted = {**extracted, **matched.narrowed}
        # A product question whose words name no product: the one the conversation is about.
        unnamed = _takes_product(matched.template) and not extracted.get("product_name") \
            and not params.get("product_name")
        subject = product or (context if unnamed else None)
        if _takes_product(matched.template):
            # "the largest kettle", "the most cheap bulb", "mats thicker than 5mm": the versions the
            # words rank, whichever product template the question resembles.
            named = subject.name if subject is not None else (params.get("product_name")
                                                              or extracted.get("product_name"))
            ranked = _ranked_versions(question, named, subject, ctx, task, catalogue) if named else None
            if ranked is not None:
                ranked.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
                return ranked
        if subject is not None and subject.options and matched.template.id in OPTION_AWARE:
            # "the price of the 20000mAh charger": the versions with every option named, not the
            # price range of every charger (nor one option of several).
            result = _versions_with_options(subject, ctx, task, catalogue)
            result.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
            return result
        if subject is not None and unnamed:
            # Read the rest ("which colour?") against that product's own options.
            params = {**params, "product_name": subject.name}
            extracted = extract_params(matched.template, question, vocabulary=vocabulary, given=params)
        merged = {**extracted, **{k: v for k, v in params.items() if v is not None}}
        if _lacks_required(matched.template, merged) and matched.runner_up:
            # "which product has the most variants?" reads like the per-product variants question but
            # names no product: the runner-up, when it is close enough and answerable, fits better.
            rival = catalogue.get(matched.runner_up)
            threshold = matcher_for(ctx.embedder, catalogue).threshold
            if rival is not None and matched.runner_up_score >= threshold:
                rival_params = {**extract_params(rival, question, vocabulary=vocabulary, given=params),
                                **{k: v for k, v in params.items() if v is not None}}
                if not _lacks_required(rival, rival_params):
                    matched = TemplateMatch(rival, matched.runner_up_score, 0.0, matched.template.id,
                                            matched.score, matched.matched_text)
                    merged = rival_params
        result = run_template(matched.template.id, merged, ctx, task, catalogue=catalogue, match=matched)
        result.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
        return result
    except Exception as exc:  # noqa: BLE001 - the tool contract: never raise
        logger.exception("cypher catalogue tool crashed")
        return ToolResult.failed(task, ErrorType.UNKNOWN,
                                 f"The predefined query tool failed unexpectedly ({type(exc).__name__}).")
