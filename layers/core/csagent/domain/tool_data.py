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
can add a key without breaking an older router. The rows keep their JSON too: a catalogue
template's rows are its columns (`catalogue/templates.yaml`, `result.columns`) as the query
returned them, read besides as the template's row model (`template_rows`) when the data is
validated, and refused there, the columns named, when they are not one (`CatalogueData.rows_as`);
a generated query's rows are mappings of the query's own columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from csagent.domain.actions import ActionProposal
from csagent.domain.task_args import AsGiven
from csagent.domain.template_rows import CatalogueRow, OrderOverviewRow, RowsRefused, read_rows

R = TypeVar("R", bound=CatalogueRow)


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


class CatalogueData(RowsData):
    """A catalogue template's answer (`cypher_catalogue.runner.run_template`). Its rows keep the
    template's columns as they were returned (the JSON is the template's); they are read as the
    template's row model (`template_rows.ROW_MODELS`) once, when the data is validated, and a
    reader takes them as that model (`rows_as`, `row_as`)."""

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

    _read: list[CatalogueRow] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _rows_as_the_templates_model(self) -> CatalogueData:
        """The rows read as the template's model, once (`RowsRefused` when they are not)."""
        self._read = read_rows(self.template_id, self.row, self.rows)
        return self

    def rows_as(self, model: type[R]) -> list[R]:
        """The rows (or the one row) as `model`: all of them when it is the template's row model,
        none when it is not (another template's rows, or a template without a model)."""
        return [row for row in self._read if isinstance(row, model)]

    def row_as(self, model: type[R]) -> R | None:
        """The one row of a template whose answer is one record, as `model` (see `rows_as`); None
        when there is none."""
        read = self.rows_as(model)
        return read[0] if self.row is not None and read else None

    @property
    def order_overview(self) -> OrderOverviewRow | None:
        """The row as an order at a glance (`order_overview`, `order_by_tracking`), when the template
        is one of those and it found the order; None otherwise."""
        return self.row_as(OrderOverviewRow)


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
    #: `summary` in each other language the store words actions in ({"zh": [...]}).
    summaries: dict[str, list[str]] = Field(default_factory=dict)
    amount: int | float | None = None
    requires_approval: bool = False
    requires_confirmation: bool = True


class ActionDoneData(ToolData):
    """A change carried out (`tools.customer_actions`, execute; `actions.execute.result_from_audit`)."""

    phase: Literal["execute"]
    action: str | None = None
    order_id: str | None = None
    summary: list[str] = Field(default_factory=list)
    #: `summary` in each other language the store words actions in ({"zh": [...]}).
    summaries: dict[str, list[str]] = Field(default_factory=dict)
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
        fields = ", ".join(sorted({_wrong(e) for e in exc.errors()}))
        raise ValueError(f"the data of a {tool} result is not {kind.__name__} ({fields})") from None


def _wrong(error: Mapping[str, Any]) -> str:
    """Where the data is wrong: the field, or the columns of rows that are not their template's
    model (`template_rows.RowsRefused`)."""
    refused = (error.get("ctx") or {}).get("error")
    if isinstance(refused, RowsRefused):
        return str(refused)
    return ".".join(str(p) for p in error["loc"]) or "(the data)"

