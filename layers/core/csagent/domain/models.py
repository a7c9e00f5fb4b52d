"""The shapes every part of the system agrees on."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
    """One unit of work the planner emits."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task_type: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    depends_on: tuple[str, ...] = ()


class ToolResult(BaseModel):
    """What every tool returns, success or not: failure is data, never an exception."""

    task_id: str
    task_type: str
    tool: str
    status: TaskStatus
    data: dict[str, Any] | None = None
    error: ToolError | None = None
    latency_ms: float = 0.0

    @classmethod
    def ok(cls, task: Task, data: dict[str, Any], latency_ms: float = 0.0) -> ToolResult:
        return cls(task_id=task.task_id, task_type=task.task_type, tool=task.tool,
                   status=TaskStatus.SUCCESS, data=data, latency_ms=latency_ms)

    @classmethod
    def failed(cls, task: Task, error_type: ErrorType, message: str, *, retryable: bool = False,
               latency_ms: float = 0.0) -> ToolResult:
        return cls(task_id=task.task_id, task_type=task.task_type, tool=task.tool,
                   status=TaskStatus.FAILED,
                   error=ToolError(type=error_type, message=message, retryable=retryable),
                   latency_ms=latency_ms)


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
