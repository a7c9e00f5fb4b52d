"""The handoff package: everything a human agent needs to take over a conversation, and the
builder that makes one from a turn's graph state.

The package is built **only** from the turn's state (its customer, its texts, its tasks and
their outcomes); no tool's result data is copied into it, so it cannot carry another
customer's records, nor even this customer's order details beyond what they wrote. The same
JSON is stored in the handoffs table and sent on the handoff queue.

Wording (task names, error phrases, next actions) lives in `data/wording.json`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from csagent.domain.errors import InvalidInput
from csagent.domain.ids import HANDOFF_ID_PATTERN  # re-exported: the handoff id format
from csagent.domain.models import ErrorType
from csagent.handoff.codec import Timestamp
from csagent.handoff.triggers import HandoffDecision, HandoffReason, Urgency

MAX_TEXT_CHARS = 4000
MAX_ERROR_CHARS = 500
MAX_REQUESTS = 10
MAX_TASKS = 25
EXCERPT_CHARS = 300


class HandoffStatus(StrEnum):
    """open (waiting for an agent) → claimed (an agent has it) → closed (back to the assistant)."""

    OPEN = "open"
    CLAIMED = "claimed"
    CLOSED = "closed"


class MessageRole(StrEnum):
    CUSTOMER = "customer"
    AGENT = "agent"


class HandoffMessage(BaseModel):
    """A message exchanged after the handoff: a later customer message or an agent's reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: MessageRole
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    at: Timestamp
    author: str | None = Field(default=None, description="The agent's subject; None for the customer.")


class TaskAttempt(BaseModel):
    """One task the assistant attempted this turn and how it ended (never its result data)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    task_type: str
    tool: str
    status: Literal["success", "failed", "fallback", "skipped"]
    error_type: ErrorType | None = None
    error_message: str | None = Field(default=None, max_length=MAX_ERROR_CHARS)
    latency_ms: float = Field(default=0.0, ge=0)
    attempts: int = Field(default=1, ge=1)


class HandoffPackage(BaseModel):
    """The case a human agent takes over. Immutable; every change is a new stored version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    handoff_id: str = Field(pattern=HANDOFF_ID_PATTERN)
    customer_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1, max_length=128)
    lang: str = "en"
    requests: list[str] = Field(min_length=1, max_length=MAX_REQUESTS,
                                description="The customer's texts of the turn that was handed off.")
    tasks: list[TaskAttempt] = Field(default_factory=list, max_length=MAX_TASKS)
    summary: str = Field(min_length=1)
    next_action: str = Field(min_length=1)
    reasons: list[HandoffReason] = Field(min_length=1)
    urgency: Urgency
    amount_at_stake: float | None = Field(default=None, ge=0)
    created_at: Timestamp
    status: HandoffStatus = HandoffStatus.OPEN
    claimed_by: str | None = None
    claimed_at: Timestamp | None = None
    closed_at: Timestamp | None = None
    messages: list[HandoffMessage] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> HandoffPackage:
        if len({t.task_id for t in self.tasks}) != len(self.tasks):
            raise ValueError("task ids must be unique")
        if any(len(r) > MAX_TEXT_CHARS for r in self.requests):
            raise ValueError(f"a request is longer than {MAX_TEXT_CHARS} characters")
        claimed = self.claimed_by is not None and self.claimed_at is not None
        expected = {HandoffStatus.OPEN: not claimed and self.claimed_by is None and self.closed_at is None,
                    HandoffStatus.CLAIMED: claimed and self.closed_at is None,
                    HandoffStatus.CLOSED: claimed and self.closed_at is not None}
        if not expected[self.status]:
            raise ValueError(f"claimed_by / claimed_at / closed_at do not fit status {self.status.value}")
        return self


# ----------------------------------------------------------------------------------------------
# Building a package from a turn
# ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def wording() -> dict[str, Any]:
    """`data/wording.json` (read once)."""
    path = resources.files("csagent.handoff").joinpath("data", "wording.json")
    return json.loads(path.read_text(encoding="utf-8"))


def build_package(state: Mapping[str, Any], decision: HandoffDecision, *, handoff_id: str, now: datetime,
                  texts: Sequence[str] | None = None) -> HandoffPackage:
    """The package for one turn's state. `texts` overrides the turn's customer texts (default:
    the state's `text`). Raises InvalidInput when the state has no session, customer or text."""
    customer_id, session_id = str(state.get("customer_id") or ""), str(state.get("session_id") or "")
    if not customer_id or not session_id:
        raise InvalidInput("a handoff needs the turn's session and signed-in customer")
    requests = [_clip(t, MAX_TEXT_CHARS) for t in (texts if texts is not None else [state.get("text") or ""])
                if t and t.strip()][:MAX_REQUESTS]
    if not requests:
        raise InvalidInput("a handoff needs the customer's text of the turn")
    attempts = task_attempts(state)
    return HandoffPackage(
        handoff_id=handoff_id, customer_id=customer_id, session_id=session_id,
        lang=str(state.get("lang") or "en"), requests=requests, tasks=attempts,
        summary=summarise(requests, attempts, decision),
        next_action=next_action(requests, attempts, decision),
        reasons=list(decision.reasons), urgency=decision.urgency, amount_at_stake=decision.amount_at_stake,
        created_at=now,
    )


def task_attempts(state: Mapping[str, Any]) -> list[TaskAttempt]:
    """Every planned task with how it ended; a task with no result was not attempted (skipped)."""
    results: Mapping[str, Any] = state.get("results") or {}
    attempts: list[TaskAttempt] = []
    for task in (state.get("tasks") or [])[:MAX_TASKS]:
        result = results.get(task["task_id"]) or {}
        error = result.get("error") or {}
        message = error.get("message")
        attempts.append(TaskAttempt(
            task_id=task["task_id"], task_type=task.get("task_type", ""), tool=task.get("tool", ""),
            status=result.get("status") or "skipped",
            error_type=error.get("type"), error_message=_clip(message, MAX_ERROR_CHARS) if message else None,
            latency_ms=max(0.0, float(result.get("latency_ms") or 0.0)),
            attempts=int(result.get("attempts") or 1),
        ))
    return attempts


def summarise(requests: Sequence[str], attempts: Sequence[TaskAttempt], decision: HandoffDecision) -> str:
    """An extractive summary in plain words: what the customer wrote, what was tried, and why
    a person is needed."""
    words = wording()
    lines = [words["summary"]["request"].format(request=excerpt(r)) for r in requests]
    if attempts:
        outcomes = "; ".join(_outcome(a) for a in attempts)
        lines.append(words["summary"]["tasks"].format(count=len(attempts), outcomes=outcomes))
    else:
        lines.append(words["summary"]["no_tasks"])
    reasons = " and ".join(words["reasons"][r.value] for r in decision.reasons)
    lines.append(words["summary"]["because"].format(reasons=reasons))
    if decision.amount_at_stake is not None:
        lines.append(words["summary"]["at_stake"].format(amount=decision.amount_at_stake))
    return " ".join(lines)


def next_action(requests: Sequence[str], attempts: Sequence[TaskAttempt], decision: HandoffDecision) -> str:
    """What the agent should do first, from the failure types (policy first, then timeouts)."""
    templates = wording()["next_actions"]
    failed = [a for a in attempts if a.status == "failed"]
    request = excerpt(requests[0], 200)
    blocked = next((a for a in failed if a.error_type == ErrorType.BUSINESS_RULE_VIOLATION), None)
    if blocked is not None:
        error = blocked.error_message or _error_phrase(blocked)
        return str(templates["business_rule_violation"].format(task=task_name(blocked.task_type),
                                                                  error=error))
    if HandoffReason.REPEATED_FAILURE in decision.reasons and failed:
        timeouts = [a for a in failed if a.error_type == ErrorType.TIMEOUT]
        if timeouts:
            first = timeouts[0]
            return str(templates["repeated_timeouts"].format(
                system=system_name(first.task_type), task=task_name(first.task_type),
                count=sum(a.attempts for a in timeouts if a.task_type == first.task_type)))
        first = failed[0]
        return str(templates["repeated_failure"].format(task=task_name(first.task_type),
                                                        error=_error_phrase(first), count=first.attempts))
    if HandoffReason.STAFF_PROCESS in decision.reasons:
        return str(templates["staff_process"].format(request=request))
    if HandoffReason.EXPLICIT_REQUEST in decision.reasons:
        return str(templates["explicit_request"].format(request=request))
    if HandoffReason.NODE_BUDGET_EXCEEDED in decision.reasons:
        unfinished = [task_name(a.task_type) for a in attempts if a.status in ("failed", "skipped")]
        tasks = ", ".join(unfinished) or f"\u201c{request}\u201d"
        return str(templates["node_budget_exceeded"].format(tasks=tasks))
    return str(templates["frustration"].format(request=request))


def task_name(task_type: str) -> str:
    words = wording()
    return str(words["task_names"].get(task_type) or words["task_name_default"].format(task_type=task_type))


def system_name(task_type: str) -> str:
    words = wording()
    return str(words["systems"].get(task_type) or words["system_default"])


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The text on one line, cut at a word boundary to at most `limit` characters."""
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= limit:
        return flat
    cut = flat[:limit - 1].rsplit(" ", 1)[0]
    return cut + "\u2026"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _error_phrase(attempt: TaskAttempt) -> str:
    errors = wording()["errors"]
    return str(errors.get(attempt.error_type.value if attempt.error_type else "unknown", errors["unknown"]))


def _outcome(attempt: TaskAttempt) -> str:
    words = wording()["summary"]
    name = task_name(attempt.task_type)
    if attempt.status == "failed":
        phrase = _error_phrase(attempt)
        if attempt.attempts > 1:
            phrase += f" ({attempt.attempts} attempts)"
        return str(words["outcome_with_error"].format(task=name, error=phrase))
    return str(words["outcome"].format(task=name, outcome=wording()["outcomes"][attempt.status]))
