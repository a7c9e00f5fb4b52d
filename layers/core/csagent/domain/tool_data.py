"""What a tool's result carries: one typed data model per kind of result, validated in one place.

`ToolResult.data` (`csagent.domain.models`) is one of these models, never a plain mapping:

- `CatalogueData`: a catalogue template's rows (`predefined_cypher`; also `text2cypher` when its
  local tier answered with the closest template, its `text2cypher` note beside the rows);
- `GeneratedQueryData`: a generated query and its rows (`text2cypher`);
- `KnowledgeData`: an answer from the store's documents and its citations (`knowledge_search`);
- `ActionProposedData`, `ActionDoneData`: a change proposed, or carried out (`customer_actions`).

`result_data` is the one place a tool's raw output becomes its model. `ToolResult` calls it for
its `data`, so every way a result is made passes through it: a tool's `ToolResult.ok`, a tool
Lambda's answer read back from the Step Functions output (`adapters.stepfunctions_dispatch`),
the dependencies of a tool event (`tools.events.ToolEvent`) and a result slot of the graph state
(`graph.state.task_results`). Data that is not the model of its kind is refused there, with the
fields that are wrong named (a `ValueError`, inside the `ValidationError` of the result).

Which model: the kind the data says it is (its `phase`, `template_id`, `answer` or `citations`,
`cypher` or `question`; rows alone are a catalogue's), among the kinds its tool's results may
carry (`RESULT_KINDS`); data saying none is the tool's first kind. A task healed by its cheaper
path keeps its own tool on the result (`healing.TaskHealer`), so a tool's kinds include its
cheaper path's: `predefined_cypher` may carry a generated query, `text2cypher` an answer from
the documents.

The JSON is unchanged: a model serialises to the keys that were given (the defaults are the
reader's), and keys no model declares are kept as given (`extra="allow"`), so that a newer tool
can add a key without breaking an older router. The rows of a catalogue template or a generated
query stay mappings: their columns are the template's (`catalogue/templates.yaml`, `result.columns`)
or the query's. A template whose row has a clear model is read as it by a property of its data,
the JSON unchanged: `CatalogueData.order_overview` (`OrderOverviewRow`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from csagent.domain.actions import ActionProposal
from csagent.domain.task_args import AsGiven


class _Given(AsGiven):
    """Serialised as given (`task_args.AsGiven`: only the fields that were set), and, unlike a task's
    arguments, the keys no field declares kept as given."""

    model_config = ConfigDict(extra="allow")


class ToolData(_Given):
    """What every kind of result data shares (nothing but the serialisation)."""


# -- rows: a catalogue template's, a generated query's -----------------------------------------------
class RowsData(ToolData):
    """Rows read from the store graph: one (`row`, a template whose answer is one record) or
    several (`rows`, at most the template's `max_rows`; `truncated` when there were more)."""

    row: dict[str, Any] | None = None
    rows: list[dict[str, Any]] | None = None
    row_count: int | None = None
    truncated: bool = False

    @property
    def all_rows(self) -> list[dict[str, Any]]:
        """The rows, or the one row, or none."""
        return list(self.rows or ([self.row] if self.row else []))

    @property
    def has_rows(self) -> bool:
        """Were rows (even none) or a row given?"""
        return self.rows is not None or self.row is not None


class TemplateMatchNote(_Given):
    """How closely the question matched the template that answered (`matcher.TemplateMatch`)."""

    score: float
    margin: float
    runner_up: str | None = None


class ProductNote(_Given):
    """The product an answer about versions is for, and the options named, as the catalogue
    spells them (`runner._versions_with_options`, `runner._ranked_versions`)."""

    name: str = ""
    options: dict[str, str] = Field(default_factory=dict)


class Ranking(_Given):
    """What ranked the versions (`grounding.comparatives`): the option, which way, to the end or
    past a value ("thicker than 5mm")."""

    key: str
    #: +1 up the values (or the price), -1 down.
    direction: int
    to_end: bool = False
    #: The option value the ranked versions share ("2L"); None for price and for a bound.
    value: str | None = None
    #: "thicker than 5mm": the value the wish goes beyond.
    beyond: str | None = None


# -- a catalogue template's row, where its columns have a model ----------------------------------
class _Columns(_Given):
    """Columns read from the store graph: every one may be null (an OPTIONAL MATCH), and an id the
    store keeps as a number reads as its digits."""

    model_config = ConfigDict(coerce_numbers_to_str=True)


class ShipmentColumns(_Columns):
    """One parcel of an order (`shipments` of `order_overview`, `order_by_tracking`)."""

    tracking_id: str | None = None
    carrier: str | None = None
    status: str | None = None
    shipped_at: str | None = None
    estimated_delivery: str | None = None
    delivered_at: str | None = None


class AddressColumns(_Columns):
    """The address an order ships to (`address` of `order_overview`)."""

    address1: str | None = None
    address2: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None
    country: str | None = None


class RefundColumns(_Columns):
    """A refund made on an order, and the payment method it went to, named (`refunds`)."""

    amount: float | None = None
    payment_method: str | None = None


class OrderLineColumns(_Columns):
    """One item of an order (`items` of `order_overview`, `order_by_tracking`)."""

    line_no: int | None = None
    name: str | None = None
    product_id: str | None = None
    item_id: str | None = None
    price: float | None = None
    option_text: str | None = None


class OrderOverviewRow(_Columns):
    """An order at a glance: the row of `order_overview` (and of `order_by_tracking`, without the
    address and the refunds), `catalogue/templates.yaml`. A list the query collected nothing into
    reads as empty."""

    order_id: str | None = None
    order_status: str | None = None
    created_at: str | None = None
    total: float | None = None
    shipments: list[ShipmentColumns] = Field(default_factory=list)
    address: AddressColumns | None = None
    refunds: list[RefundColumns] = Field(default_factory=list)
    items: list[OrderLineColumns] = Field(default_factory=list)

    @field_validator("shipments", "refunds", "items", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


#: The templates whose row is an `OrderOverviewRow`.
ORDER_OVERVIEW_TEMPLATES = frozenset({"order_overview", "order_by_tracking"})


class CatalogueData(RowsData):
    """A catalogue template's answer (`cypher_catalogue.runner.run_template`). Its rows stay the
    mappings of the template's columns (the JSON is the template's); a template whose row has a
    model is read as it by a property (`order_overview`), once."""

    template_id: str | None = None
    description: str | None = None
    scope: str | None = None
    #: The template's parameters as validated (the customer's own only when they were given).
    params: dict[str, Any] = Field(default_factory=dict)
    match: TemplateMatchNote | None = None
    product: ProductNote | None = None
    ranking: Ranking | None = None
    #: The question named nothing the store sells: these are the categories it does sell.
    not_sold: bool = False
    #: Set when `text2cypher`'s local tier answered with this template: why, and what it tried.
    text2cypher: dict[str, Any] | None = None

    @cached_property
    def order_overview(self) -> OrderOverviewRow | None:
        """The row as an order at a glance, when the template is one of `ORDER_OVERVIEW_TEMPLATES`
        and it found the order; None otherwise. ValueError naming the columns that are wrong (never
        their values: they are the customer's) when the row is not one."""
        if self.template_id not in ORDER_OVERVIEW_TEMPLATES or self.row is None:
            return None
        try:
            return OrderOverviewRow.model_validate(self.row)
        except ValidationError as exc:
            columns = ", ".join(sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()}))
            raise ValueError(f"the row of {self.template_id} is not an order overview ({columns})") from None


class GeneratedQueryData(RowsData):
    """A generated query's answer (`tools.text2cypher.to_tool_result`); a failed one carries the
    question and what was tried only."""

    question: str | None = None
    cypher: str | None = None
    columns: list[str] = Field(default_factory=list)
    attempts: int | None = None
    corrections: int | None = None
    examples: list[str] = Field(default_factory=list)
    timings: dict[str, Any] = Field(default_factory=dict)


# -- the store's documents ------------------------------------------------------------------------
class Citation(_Given):
    """One passage an answer rests on (`knowledge.search.Hit.citation`): its document, the version
    and content hash that answered, the section, the text."""

    doc_id: str | None = None
    title: str | None = None
    section: str | None = None
    chunk_id: str | None = None
    score: float | None = None
    text: str | None = None
    products: list[dict[str, Any]] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    version: int | str | None = None
    content_hash: str | None = None


class KnowledgeData(ToolData):
    """An answer from the store's documents (`tools.knowledge_search`)."""

    answer: str = ""
    citations: list[Citation] = Field(default_factory=list)
    #: How it was searched ("hybrid", "keyword": without embeddings, the cheaper path).
    mode: str | None = None


# -- customer actions -----------------------------------------------------------------------------
class ActionProposedData(ToolData):
    """A change proposed, waiting for the customer's yes (`tools.customer_actions`, propose)."""

    phase: Literal["propose"]
    action: str
    order_id: str | None = None
    #: What a yes executes: the proposal exactly as listed back.
    proposal: ActionProposal
    summary: list[str] = Field(default_factory=list)
    amount: int | float | None = None
    requires_approval: bool = False
    requires_confirmation: bool = True


class ActionDoneData(ToolData):
    """A change carried out (`tools.customer_actions`, execute; `actions.execute.result_from_audit`)."""

    phase: Literal["execute"]
    action: str | None = None
    order_id: str | None = None
    summary: list[str] = Field(default_factory=list)
    message: str | None = None
    changes: dict[str, Any] = Field(default_factory=dict)
    audit_id: str | None = None
    at: str | None = None
    idempotency_key: str | None = None


class OtherData(ToolData):
    """The data of a tool no registry knows, kept as given."""


AnyToolData = (CatalogueData | GeneratedQueryData | KnowledgeData | ActionProposedData | ActionDoneData
               | OtherData)

#: The kinds of data each tool's results may carry, its own first (see the module docstring).
RESULT_KINDS: dict[str, tuple[type[ToolData], ...]] = {
    "predefined_cypher": (CatalogueData, GeneratedQueryData),
    "text2cypher": (GeneratedQueryData, CatalogueData, KnowledgeData),
    "knowledge_search": (KnowledgeData,),
    "customer_actions": (ActionProposedData, ActionDoneData),
}

_BY_PHASE: dict[Any, type[ToolData]] = {"propose": ActionProposedData, "execute": ActionDoneData}


def _said_kind(raw: Mapping[str, Any]) -> type[ToolData] | None:
    """The kind the data says it is, by the keys only that kind has."""
    if "phase" in raw:
        return _BY_PHASE.get(raw["phase"], ActionProposedData)  # an unknown phase: refused as a proposal
    if "template_id" in raw:
        return CatalogueData
    if "answer" in raw or "citations" in raw:
        return KnowledgeData
    if "cypher" in raw or "question" in raw:
        return GeneratedQueryData
    if "rows" in raw or "row" in raw:
        return CatalogueData
    return None


def result_data(tool: str, raw: Any) -> AnyToolData | None:
    """The data of a `tool` result as its model; ValueError naming the fields that are wrong (and
    never their values: they are the customer's) when it is not one. See the module docstring."""
    if raw is None:
        return None
    kinds = RESULT_KINDS.get(tool)
    if isinstance(raw, ToolData):
        if kinds is None or isinstance(raw, kinds):
            return raw  # type: ignore[return-value]
        raise ValueError(f"a {tool} result does not carry {type(raw).__name__}")
    if not isinstance(raw, Mapping):
        raise ValueError(f"the data of a {tool} result must be an object, not {type(raw).__name__}")
    if kinds is None:
        return OtherData.model_validate(raw)
    kind = _said_kind(raw) or kinds[0]
    if kind not in kinds:
        allowed = ", ".join(k.__name__ for k in kinds)
        raise ValueError(f"a {tool} result carries {allowed}, not {kind.__name__}")
    try:
        return kind.model_validate(raw)  # type: ignore[return-value]
    except ValidationError as exc:
        fields = ", ".join(sorted({".".join(str(p) for p in e["loc"]) or "(the data)" for e in exc.errors()}))
        raise ValueError(f"the data of a {tool} result is not {kind.__name__} ({fields})") from None

