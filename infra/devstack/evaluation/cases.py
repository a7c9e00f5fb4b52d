"""The evaluation cases: their schema, the loader, and the coverage check.

A case is one conversation with a signed-in customer of the tau-retail store, turn by turn, with
what must hold after each turn (`Expect`) and in the store afterwards (`EndState`). The binding
contract is `infra/eval/README.md`; the models below enforce it (`extra="forbid"` everywhere, so
a misspelt key is an error, not a silently ignored expectation).

    python -m devstack.evaluation --check      # validate every file, report coverage shortfalls

Errors name the file and the case id (`CaseFileError`), so a broken case is found at once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

ROOT = Path(__file__).resolve().parents[3]
CASES_DIR = ROOT / "infra" / "eval" / "cases"

Category = Literal["single", "compound", "clarify", "out_of_scope", "handoff", "image", "multi_turn",
                   "attack", "fault"]
TurnStatus = Literal["answered", "partial", "needs_clarification", "awaiting_confirmation",
                     "awaiting_approval", "handed_off", "refused"]
# `ok` = the task produced an answer (success, or a fallback path that did); the others are the
# task statuses of the API (`skipped` = planned but never run).
TaskState = Literal["ok", "success", "fallback", "failed", "skipped"]
# trace.route values: the route node's labels (csagent.graph.nodes.route.ROUTE_TO_NODE) plus the
# outcomes the guards and the service report before or instead of routing.
ROUTES = frozenset({"knowledge_and_actions", "general", "clarify", "out_of_scope", "handoff", "image",
                    "confirmation", "refused", "handed_off", "awaiting_approval", "node_budget_exceeded"})
TOOLS = frozenset({"predefined_cypher", "knowledge_search", "customer_actions", "text2cypher"})

# The minimum number of cases per category.
MINIMUMS: dict[str, int] = {"single": 60, "compound": 30, "clarify": 15, "out_of_scope": 15, "handoff": 5,
                            "image": 5, "multi_turn": 10, "attack": 20, "fault": 20}
# Single requests must cover every intent of the local tier except those with a category of their own.
OWN_CATEGORY_INTENTS = {"out_of_scope": "out_of_scope", "human_handoff": "handoff"}
INTENTS_FILE = ROOT / "layers" / "core" / "csagent" / "nlp" / "data" / "intents.jsonl"

CASE_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ORDER_ID = re.compile(r"^#W\d{7}$")
DEV_AUTH = re.compile(r"^dev(?:-agent)?:[A-Za-z0-9_.@-]{1,128}$")

OneOrMany = str | list[str]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskExpect(_Strict):
    """A task that must appear in the turn's `tasks` (subset match, order-free)."""

    task_type: str
    status: TaskState | None = None
    tool: str | None = None

    @field_validator("tool")
    @classmethod
    def _known_tool(cls, value: str | None) -> str | None:
        if value is not None and value not in TOOLS:
            raise ValueError(f"unknown tool {value!r}; one of {sorted(TOOLS)}")
        return value


class Expect(_Strict):
    """What must hold of one turn's HTTP response. Every field is optional; absent = not checked."""

    route: OneOrMany | None = None
    status: TurnStatus | list[TurnStatus] | None = None
    tasks: list[TaskExpect] = Field(default_factory=list)
    reply_contains: list[str] = Field(default_factory=list)
    reply_contains_any: list[Annotated[list[str], Field(min_length=1)]] = Field(default_factory=list)
    reply_not_contains: list[str] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    failed_parts_named: bool | None = None
    http_status: int = Field(default=200, ge=100, le=599)

    @field_validator("route")
    @classmethod
    def _known_route(cls, value: OneOrMany | None) -> OneOrMany | None:
        for route in [value] if isinstance(value, str) else value or []:
            if route not in ROUTES:
                raise ValueError(f"unknown route {route!r}; one of {sorted(ROUTES)}")
        return value

    @property
    def routes(self) -> list[str]:
        return [self.route] if isinstance(self.route, str) else list(self.route or [])

    @property
    def statuses(self) -> list[str]:
        return [self.status] if isinstance(self.status, str) else list(self.status or [])


class ImageSpec(_Strict):
    """A shipping label the runner draws as a PNG (both absent = a blank picture)."""

    order_id: str | None = None
    tracking_number: str | None = None


class Turn(_Strict):
    """One customer message and what must hold of the reply."""

    text: str = Field(min_length=1)
    order_id: str | None = None
    image: ImageSpec | None = None
    approve: bool | Literal["reject"] | None = None
    expect: Expect = Field(default_factory=Expect)

    @property
    def decision(self) -> str | None:
        """The agent's decision on the pending approval after this turn, if any."""
        if self.approve is None or self.approve is False:
            return None
        return "approve" if self.approve is True else "reject"


class EndState(_Strict):
    """One fact of the store after the conversation (checked in Neo4j)."""

    order_id: str | None = None
    customer_id: str | None = None
    status: str | None = None
    shipping_address: dict[str, str] | None = None
    default_address: dict[str, str] | None = None
    refund_recorded: bool | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> EndState:
        if (self.order_id is None) == (self.customer_id is None):
            raise ValueError("an end_state entry names exactly one of order_id or customer_id")
        if self.order_id is not None:
            if not ORDER_ID.match(self.order_id):
                raise ValueError(f"order_id {self.order_id!r} must look like '#W1234567'")
            if self.default_address is not None:
                raise ValueError("default_address belongs to a customer_id entry")
            if self.status is None and self.shipping_address is None and self.refund_recorded is None:
                raise ValueError("an order entry states status, shipping_address or refund_recorded")
        elif self.default_address is None:
            raise ValueError("a customer entry states default_address")
        elif self.status is not None or self.shipping_address is not None or self.refund_recorded is not None:
            raise ValueError("status, shipping_address and refund_recorded belong to an order_id entry")
        return self


class Case(_Strict):
    """One conversation of the suite."""

    id: str
    category: Category
    intent: str = Field(min_length=1)
    slice: bool = False
    customer: str = Field(min_length=1)
    faults: str | None = None
    fault_seed: int | None = None
    auth: str | None = None
    session_owner: str | None = None
    headers: dict[str, str] | None = None
    turns: list[Turn] = Field(min_length=1)
    end_state: list[EndState] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not CASE_ID.match(value):
            raise ValueError(f"id {value!r} must be kebab-case (lowercase letters, digits, '-')")
        return value

    @field_validator("auth")
    @classmethod
    def _dev_auth(cls, value: str | None) -> str | None:
        if value is not None and not DEV_AUTH.match(value):
            raise ValueError(f"auth {value!r} must be 'dev:<customer_id>' or 'dev-agent:<name>'")
        return value

    @model_validator(mode="after")
    def _category_rules(self) -> Case:
        if self.category == "fault" and not self.faults:
            raise ValueError("a fault case sets faults (a FAULTS string)")
        if self.category != "fault" and (self.faults or self.fault_seed is not None):
            raise ValueError("faults and fault_seed are for the fault category only")
        if self.category != "attack" and (self.auth or self.session_owner or self.headers):
            raise ValueError("auth, session_owner and headers are for the attack category only")
        return self


@dataclass(frozen=True)
class LoadedCase:
    """A case and where it came from (for error messages and reports)."""

    case: Case
    path: Path


class CaseFileError(ValueError):
    """A case file that cannot be used; the message names the file and the case."""


def _format(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'case'}: {e['msg']}" for e in error.errors())


def parse_file(path: Path) -> list[LoadedCase]:
    """The cases of one YAML file (a list of mappings). Raises `CaseFileError` naming the first
    case that does not validate (its id when it has one, else its position)."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CaseFileError(f"{path}: not valid YAML: {exc}") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CaseFileError(f"{path}: expected a list of cases, got {type(raw).__name__}")
    cases = []
    for index, item in enumerate(raw):
        name = item.get("id") if isinstance(item, Mapping) else None
        where = f"{path}: case {name!r}" if name else f"{path}: case #{index + 1}"
        if not isinstance(item, Mapping):
            raise CaseFileError(f"{where}: expected a mapping, got {type(item).__name__}")
        try:
            cases.append(LoadedCase(Case.model_validate(item), path))
        except ValidationError as exc:
            raise CaseFileError(f"{where}: {_format(exc)}") from None
    return cases


def load_cases(paths: Iterable[Path]) -> list[LoadedCase]:
    """Every case of every file (a directory means its *.yaml files, sorted); ids must be unique."""
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.yaml")) if path.is_dir() else [path])
    cases: list[LoadedCase] = []
    seen: dict[str, Path] = {}
    for file in files:
        for loaded in parse_file(file):
            if loaded.case.id in seen:
                raise CaseFileError(f"{file}: case {loaded.case.id!r}: "
                                    f"id already used in {seen[loaded.case.id]}")
            seen[loaded.case.id] = file
            cases.append(loaded)
    return cases


def select(cases: Sequence[LoadedCase], *, slice_only: bool = False, categories: Sequence[str] = (),
           ids: Sequence[str] = ()) -> list[LoadedCase]:
    """The cases a run asks for (filters combine with AND; empty = no filter)."""
    return [c for c in cases if (not slice_only or c.case.slice)
            and (not categories or c.case.category in categories) and (not ids or c.case.id in ids)]


# ----------------------------------------------------------------------------- coverage
def local_intents(path: Path = INTENTS_FILE) -> set[str]:
    """The intents of the local tier's labelled examples (the vocabulary "every intent" means)."""
    import json

    lines = path.read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["intent"] for line in lines if line.strip()}


def tool_of(intent: str, tasks: Sequence[TaskExpect]) -> set[str]:
    """The tools a case exercises, from its intent (an intent or a tool name) and expected tasks."""
    from csagent.planning import ACTION_INTENTS, CATALOGUE_QUESTIONS, KNOWLEDGE_QUESTIONS, ORDER_READS

    tools = {t.tool for t in tasks if t.tool}
    if intent in TOOLS:
        tools.add(intent)
    if intent in ORDER_READS or intent in CATALOGUE_QUESTIONS or intent == "order_list":
        tools.add("predefined_cypher")
    if intent in KNOWLEDGE_QUESTIONS:
        tools.add("knowledge_search")
    if intent in ACTION_INTENTS:
        tools.add("customer_actions")
    return tools


@dataclass
class Coverage:
    """How the cases meet the issue's minimums."""

    counts: dict[str, int]
    slice_counts: dict[str, int]
    missing_intents: list[str]
    missing_tools: list[str]
    shortfalls: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.shortfalls


def coverage(cases: Sequence[LoadedCase], intents: set[str] | None = None) -> Coverage:
    """Counts per category (all and slice) against `MINIMUMS`, and the intents and tools no
    single request exercises (intents with a category of their own count from that category)."""
    counts: Counter[str] = Counter(str(c.case.category) for c in cases)
    slice_counts: Counter[str] = Counter(str(c.case.category) for c in cases if c.case.slice)
    intents = local_intents() if intents is None else intents
    covered = {c.case.intent for c in cases if c.case.category == "single"}
    covered |= {intent for intent, category in OWN_CATEGORY_INTENTS.items() if counts[category]}
    tools: set[str] = set()
    for c in cases:
        if c.case.category == "single":
            tools |= tool_of(c.case.intent, [t for turn in c.case.turns for t in turn.expect.tasks])
    report = Coverage(counts=dict(counts), slice_counts=dict(slice_counts),
                      missing_intents=sorted(intents - covered), missing_tools=sorted(TOOLS - tools))
    for category, minimum in MINIMUMS.items():
        if counts[category] < minimum:
            report.shortfalls.append(f"{category}: {counts[category]} cases, the minimum is {minimum}")
        if not slice_counts[category]:
            report.shortfalls.append(f"{category}: no case in the CI slice (slice: true)")
    if report.missing_intents:
        report.shortfalls.append(f"single: no case for intent(s) {', '.join(report.missing_intents)}")
    if report.missing_tools:
        report.shortfalls.append(f"single: no case exercising tool(s) {', '.join(report.missing_tools)}")
    return report


def load_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file holding one mapping (the thresholds file)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise CaseFileError(f"{path}: expected a mapping")
    return data
