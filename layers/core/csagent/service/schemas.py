"""What the conversation service takes and returns: the message, attachment and decision bodies
with their checks, the turn, session and approval outcomes, and the patterns the OpenAPI document
repeats (`csagent.http.contract`). Pydantic models only; no I/O."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from csagent.domain.errors import InvalidInput
from csagent.streaming.progress import Progress

#: The session id rule, also the pattern of `session_id` in the OpenAPI document (`csagent.http.contract`).
SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
SESSION_ID = re.compile(SESSION_ID_PATTERN)
SESSION_ID_RULE = "session_id must be 1-128 characters of letters, digits, '_', '.', ':' or '-'"
ORDER_ID_PATTERN = r"^#?W[0-9]{7}$"  # [0-9], not \d: Python's \d takes any Unicode digit
ORDER_ID = re.compile(ORDER_ID_PATTERN)


MAX_IMAGE_BYTES = 3 * 1024 * 1024
#: Standard base64 with its padding, and nothing else (no whitespace, no stray '='): the check of
#: `Attachment.data` and its pattern in the OpenAPI document.
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


#: "Not blank": a character pydantic's `str_strip_whitespace` keeps. It strips Unicode White_Space
#: (not the same set as Python's `str.isspace` nor as a JSON Schema regex's `\s`), so the set is
#: spelled out. The pattern of every text field whose model strips and then needs one character.
NOT_BLANK_PATTERN = r"[^\t\n\x0b\x0c\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def on_string(**keywords: Any) -> Callable[[dict[str, Any]], None]:
    """`json_schema_extra` that adds JSON Schema keywords (a pattern, a format) to the string
    branch of an optional field's schema (`anyOf: [string, null]`), or to a string's own."""

    def add(schema: dict[str, Any]) -> None:
        for branch in schema.get("anyOf", [schema]):
            if branch.get("type") == "string":
                branch.update(keywords)

    return add


def is_base64(value: str) -> bool:
    """Whether `value` matches BASE64_PATTERN (ten times quicker than the regex on 4 MB):
    whole quanta, at most two '=' and only at the end, the standard alphabet."""
    body = value.rstrip("=")
    if len(value) % 4 or len(value) - len(body) > 2 or "=" in body:
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


class Attachment(BaseModel):
    """An image the customer attached (a shipping label, a screenshot), base64-encoded."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["image"] = "image"
    media_type: Literal["image/png", "image/jpeg", "image/webp", "image/gif"]
    data: str = Field(min_length=8, max_length=MAX_IMAGE_BYTES * 4 // 3 + 4,
                      description="The image bytes, base64-encoded (at most 3 MiB decoded).",
                      json_schema_extra=on_string(pattern=BASE64_PATTERN))

    @field_validator("data")
    @classmethod
    def _base64(cls, value: str) -> str:
        if not is_base64(value):
            raise ValueError("data must be base64-encoded image bytes")
        return value

class MessageIn(BaseModel):
    """The body of POST /v1/sessions/{session_id}/messages."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    text: str = Field(min_length=1, max_length=4000, description="What the customer wrote.",
                      json_schema_extra=on_string(pattern=NOT_BLANK_PATTERN))
    order_id: str | None = Field(
        default=None,
        description="The order the customer is looking at in the app (e.g. '#W2611340'), if any.",
        json_schema_extra=on_string(pattern=ORDER_ID_PATTERN),
    )
    attachments: list[Attachment] = Field(default_factory=list, max_length=3)

    @field_validator("order_id")
    @classmethod
    def _order_id(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not ORDER_ID.fullmatch(value):
            raise ValueError("order_id must look like '#W' followed by 7 digits, e.g. '#W2611340'")
        return value if value.startswith("#") else "#" + value


class TaskOut(BaseModel):
    task_id: str
    task_type: str
    tool: str
    status: str
    latency_ms: float
    error: dict[str, Any] | None = None


class ProposedAction(BaseModel):
    """A change listed back to the customer and waiting for their yes: exactly what will change
    (`summary`, the words of the reply), and whether a person must approve it afterwards."""

    action: str
    order_id: str | None = None
    summary: str
    requires_approval: bool = False
    amount: float | None = None


class TurnOut(BaseModel):
    session_id: str
    turn: int
    status: str
    reply: dict[str, Any]
    tasks: list[TaskOut]
    trace: dict[str, Any]
    proposed: list[ProposedAction] = Field(
        default_factory=list,
        description="With status awaiting_confirmation: the changes a 'yes' will make (else empty).")


# What a turn yields as it runs: progress while the graph works, the TurnOut once it has decided.
TurnEvent = Progress | TurnOut


class SessionOut(BaseModel):
    session_id: str
    status: str
    turn_count: int
    messages: list[dict[str, Any]]
    summary: str = Field(default="", description="Older turns, compressed (after 10 turns).")
    handoff: dict[str, Any] | None = Field(
        default=None, description="The conversation with a person, when the session was handed off.")
    proposed: list[ProposedAction] = Field(
        default_factory=list, description="The changes waiting for the customer's yes, if any.")


class TurnTrace(BaseModel):
    """One turn as the session viewer shows it: why the assistant did what it did."""

    turn: int
    status: str
    text: str = Field(description="What the customer wrote.")
    reply: str
    route: str
    confidence: float
    tasks: list[dict[str, Any]] = Field(
        description="Each task: type, tool, status, latency, attempts, healing steps, error.")
    node_timings_ms: dict[str, float]
    trace: dict[str, Any] = Field(
        description="The turn's notes: guard verdicts, summariser, degradations, model usage and cost.")


class AgentSessionOut(BaseModel):
    """GET /v1/agent/sessions/{session_id} (agent role): the public messages and the turn traces."""

    session_id: str
    customer_id: str | None
    status: str
    messages: list[dict[str, Any]]
    summary: str = ""
    turns: list[TurnTrace] = Field(description="The latest turns' traces, oldest first.")


class DecisionIn(BaseModel):
    """The body of POST /v1/approvals/{approval_id}."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    decision: Literal["approve", "reject"]
    note: str | None = Field(default=None, max_length=1000)


class ApprovalOut(BaseModel):
    approval: dict[str, Any]
    resumed: bool = Field(description="Whether this decision finished the customer's paused turn now.")
    turn: TurnOut | None = None


def check_session_id(session_id: str) -> str:
    """The session id, if it follows the rule (`SESSION_ID_PATTERN`); else `InvalidInput` (422)."""
    if not SESSION_ID.fullmatch(session_id):  # fullmatch: `$` alone would let a trailing newline in
        raise InvalidInput(SESSION_ID_RULE)
    return session_id
