"""The catalogue's templates: their models, loading with the scoping checks, and parameter
normalisation and validation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

if TYPE_CHECKING:  # pragma: no cover - typing only
    pass


#: The tool the catalogue's templates answer as (`tools.registry`): its results carry `CatalogueData`.
TOOL_NAME = "predefined_cypher"
CATALOGUE_PATH = Path(__file__).resolve().parents[1] / "catalogue" / "templates.yaml"


ParamType = Literal["order_id", "tracking_id", "product_name", "product_id", "item_id", "status",
                    "option_key", "option_value", "option_filter", "category", "int"]
Scope = Literal["customer", "catalogue"]

#: Order statuses of the store (tau-retail plus the statuses the customer actions write).
ORDER_STATUSES: tuple[str, ...] = ("pending", "processed", "delivered", "cancelled",
                                   "return requested", "exchange requested",
                                   "pending (item modified)")
STATUS_SYNONYMS: dict[str, str] = {
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
    "option_key": (r"^[a-z][a-z0-9 /_.-]{0,39}(?:\|[a-z][a-z0-9 /_.-]{0,39}){0,3}$",
                   "an option name like 'color' or 'size' (or up to four joined by '|')"),
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
SLOT_RE = re.compile(r"\[([^\[\]]+)\]")
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
            if SLOT_RE.sub("", example).count("[") or SLOT_RE.sub("", example).count("]"):
                raise ValueError(f"unbalanced [slot] markup in example {example!r}")
        return examples

    @property
    def natural_examples(self) -> tuple[str, ...]:
        """The example questions as a customer would type them (slot brackets removed)."""
        return tuple(SLOT_RE.sub(r"\1", e) for e in self.examples)

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
    if source.suffix == ".json":
        raw = json.loads(source.read_text(encoding="utf-8"))
    else:
        from csagent import yamlio

        raw = yamlio.load_file(source)
    return parse_catalogue(raw)


# ---------------------------------------------------------------------------------------------
# Parameters: normalisation and validation
# ---------------------------------------------------------------------------------------------
class ParamError(ValueError):
    """A parameter value that cannot be used; the message names the parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def name_key(value: str) -> str:
    """'T-Shirts' -> 'tshirt', 'Home & Kitchen' -> 'homeandkitchen': lower-case alphanumerics,
    last word made singular (the Cypher compares against the name with spaces/hyphens removed, so
    a key must be contained in it: 'Pet Supplies' -> 'petsupplie', not 'petsupply')."""
    words = re.findall(r"[a-z0-9]+", value.lower().replace("&", " and "))
    if words:
        words[-1] = words[-1][:-1] if words[-1].endswith("ies") else singular(words[-1])
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
        return name_key(text)
    if spec.type == "status":
        lowered = text.lower()
        return STATUS_SYNONYMS.get(lowered, lowered)
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


