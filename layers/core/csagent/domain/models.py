"""The shapes every part of the system agrees on."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from csagent.domain.task_args import (
    AnyToolArgs,
    CustomerActionArgs,
    PredefinedCypherArgs,
    TaskNotes,
    ToolArgs,
    args_model,
    split_notes,
)
from csagent.domain.tool_data import AnyToolData, ToolData, result_data

A = TypeVar("A", bound=ToolArgs)


class ErrorType(StrEnum):
    """Why a task failed; the healer's policy table is keyed by this."""

    PARSE_ERROR = "parse_error"
    TIMEOUT = "timeout"
    TRANSIENT = "transient"
    BUSINESS_RULE_VIOLATION = "business_rule_violation"
    NO_RESULTS = "no_results"
    LOW_CONFIDENCE = "low_confidence"
    PERMISSION_DENIED = "permission_denied"
    VALIDATION = "validation"
    UNKNOWN = "unknown"


class ToolError(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: ErrorType
    message: str
    retryable: bool = False


class TaskStatus(StrEnum):
    SUCCESS = "success"
    FAILED = "failed"
    FALLBACK = "fallback"


class Task(BaseModel):
    """One unit of work the planner emits: `args`, the arguments of its tool as that tool's model
    (`csagent.domain.task_args.ARGS_BY_TOOL`), and `notes`, what the planner noted for the
    router. Arguments given as a mapping are validated into the tool's model; planner notes found
    among them (the earlier shape, e.g. an older checkpoint) are moved into `notes`."""

    # defer_build: built at the first task's validation, not at import (cold starts).
    model_config = ConfigDict(frozen=True, defer_build=True)

    task_id: str
    task_type: str
    tool: str
    args: AnyToolArgs = Field(default_factory=dict, validate_default=True)
    notes: TaskNotes = Field(default_factory=TaskNotes)
    depends_on: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _notes_out_of_args(cls, data: Any) -> Any:
        """The earlier shape: the planner's notes among the arguments, moved into `notes`."""
        if not isinstance(data, Mapping) or not isinstance(data.get("args"), Mapping):
            return data
        args, lifted = split_notes(data["args"])
        if not lifted:
            return data
        notes = data.get("notes")
        given = notes.model_dump() if isinstance(notes, TaskNotes) else dict(notes or {})
        return {**data, "args": args, "notes": {**lifted, **given}}

    @field_validator("args", mode="before")
    @classmethod
    def _args_of_the_tool(cls, value: Any, info: ValidationInfo) -> Any:
        """Arguments as the model of the task's tool (another tool's model is read as this one's)."""
        kind = args_model(str(info.data.get("tool") or ""))
        if isinstance(value, kind):
            return value
        if isinstance(value, ToolArgs):
            value = value.model_dump()
        return kind.model_validate({} if value is None else value)

    @property
    def order_id(self) -> str | None:
        """The order the arguments are for: a template's `params.order_id`, an action's
        `args.order_id` (a rule quoted about an order notes it in `notes.order_id` instead)."""
        args = self.args
        return args.order_id if isinstance(args, PredefinedCypherArgs | CustomerActionArgs) else None

    def args_as(self, kind: type[A]) -> A:
        """The arguments as `kind`, the model of the tool running them (validated from these when
        the task was built for another tool); ValueError, naming no value, when they are not."""
        if isinstance(self.args, kind):
            return self.args
        try:
            return kind.model_validate(self.args.model_dump())
        except ValidationError as exc:
            fields = ", ".join(sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()}))
            raise ValueError(f"the arguments of {self.tool} are not {kind.__name__} ({fields})") from None


class ToolResult(BaseModel):
    """What every tool returns, success or not: failure is data, never an exception. `data` is
    the model of its kind (`csagent.domain.tool_data`), validated from the tool's raw output by
    `result_data` however the result is made; its JSON is the raw output's keys, as before.
    Validation errors name the fields, never the values (they may be the customer's data)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    task_id: str
    task_type: str
    tool: str
    status: TaskStatus
    data: AnyToolData | None = None
    error: ToolError | None = None
    latency_ms: float = 0.0

    @field_validator("data", mode="before")
    @classmethod
    def _data_of_its_kind(cls, value: Any, info: ValidationInfo) -> Any:
        """The one validation point of a tool's output (`tool_data.result_data`)."""
        return result_data(str(info.data.get("tool") or ""), value)

    @classmethod
    def ok(cls, task: Task, data: Mapping[str, Any] | ToolData, latency_ms: float = 0.0) -> ToolResult:
        return cls.model_validate({"task_id": task.task_id, "task_type": task.task_type, "tool": task.tool,
                                   "status": TaskStatus.SUCCESS, "data": data, "latency_ms": latency_ms})

    @classmethod
    def failed(cls, task: Task, error_type: ErrorType, message: str, *, retryable: bool = False,
               latency_ms: float = 0.0) -> ToolResult:
        return cls(task_id=task.task_id, task_type=task.task_type, tool=task.tool,
                   status=TaskStatus.FAILED,
                   error=ToolError(type=error_type, message=message, retryable=retryable),
                   latency_ms=latency_ms)

    def with_data(self, **given: Any) -> ToolResult:
        """This result with keys added to its data (validated again, as the tool's output is)."""
        raw = self.data.model_dump() if self.data is not None else {}
        return self.model_copy(update={"data": result_data(self.tool, {**raw, **given})})


class HealStep(BaseModel):
    """One step the healer took (`csagent.healing.heal_record`)."""

    model_config = ConfigDict(frozen=True)

    action: str
    reason: str = ""
    delay_s: float = 0.0
    #: What failed before this step (None for a step that answers nothing failed).
    error_type: ErrorType | None = None


class TaskResult(ToolResult):
    """A task's result slot in the graph state: its final `ToolResult` and what healing did
    (`attempts`: tool calls made, `heal`: the steps), as `csagent.healing.heal_record` writes them.
    The state holds it as JSON; `csagent.graph.state.task_results` reads it as this model."""

    attempts: int = 1
    heal: list[HealStep] = Field(default_factory=list)


class Principal(BaseModel):
    """Who is calling, as established by the edge (JWT claims, or dev auth locally)."""

    model_config = ConfigDict(frozen=True)

    subject: str
    customer_id: str | None = None
    roles: frozenset[str] = frozenset({"customer"})

    @property
    def is_agent(self) -> bool:
        return bool(self.roles & {"agent", "admin"})

    @property
    def is_admin(self) -> bool:
        """The store's staff who manage the knowledge base (not every agent)."""
        return "admin" in self.roles


class TurnStatus(StrEnum):
    ANSWERED = "answered"
    PARTIAL = "partial"
    NEEDS_CLARIFICATION = "needs_clarification"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    AWAITING_APPROVAL = "awaiting_approval"
    HANDED_OFF = "handed_off"
    REFUSED = "refused"
