"""Approvals: the graph asks (`create`), an agent decides (`decide`), the graph reads the
outcome (`get`) when it resumes.

Every change is one conditional write on the record's status, so two agents deciding at once
cannot both win: the loser reads the winner's decision and gets it back (same decision) or a
`Conflict` (the other one). Time comes from an injectable clock; an approval past its
`expires_at` can no longer be decided (`ApprovalExpired`) and is recorded as expired.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Protocol

from pydantic import BaseModel, ValidationError

from csagent.approvals.models import (
    APPROVAL_ID_PATTERN,
    MAX_NOTE_CHARS,
    Approval,
    ApprovalExpired,
    ApprovalStatus,
    Decision,
)
from csagent.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from csagent.domain.models import Principal
from csagent.handoff.codec import Clock, utc_now

DEFAULT_TTL_S = 24 * 3600
MAX_PAGE = 100
# Namespace of idempotent approval ids (uuid5 of session id + caller's key).
APPROVAL_NAMESPACE = uuid.UUID("5b0f3a52-8d1e-4c59-9a43-3f1b8f0e7c21")
_APPROVAL_ID = re.compile(APPROVAL_ID_PATTERN)


class ApprovalStore(Protocol):
    """What the service needs from storage (`csagent.approvals.repository.DynamoDBApprovals`)."""

    def put_new(self, approval: Approval) -> bool: ...
    def get(self, approval_id: str) -> Approval | None: ...
    def decide(self, approval_id: str, status: ApprovalStatus, agent: str, note: str | None,
               now: datetime) -> Approval | None: ...
    def expire(self, approval_id: str, now: datetime) -> Approval | None: ...
    def list_by_status(self, status: ApprovalStatus, limit: int,
                       cursor: str | None = None) -> tuple[list[Approval], str | None]: ...
    def count_by_status(self, status: ApprovalStatus) -> int: ...


class ApprovalPage(BaseModel):
    """One page of pending approvals, oldest first."""

    items: list[Approval]
    next_cursor: str | None = None
    total: int | None = None
    """How many are pending in all: on the first page only (a cursor continues a listing already counted)."""


def check_approval_id(approval_id: str) -> str:
    if not _APPROVAL_ID.fullmatch(approval_id):
        raise InvalidInput("approval_id must be 32 lowercase hexadecimal characters")
    return approval_id


class ApprovalService:
    def __init__(self, store: ApprovalStore, *, clock: Clock = utc_now, ttl_s: int = DEFAULT_TTL_S) -> None:
        self._store = store
        self._clock = clock
        self._ttl = timedelta(seconds=ttl_s)

    def create(self, session_id: str, customer_id: str, action: str, summary: str,
               amount: Decimal | float | str | None = None, expires_at: datetime | None = None, *,
               idempotency_key: str | None = None) -> Approval:
        """A pending approval, expiring at `expires_at` (default: now + the configured TTL).

        With `idempotency_key` (e.g. the task id of the refund), the id is derived from the
        session and the key, so a re-run of the same turn gets the same approval back instead
        of a second one; the same key for a different request is a Conflict.
        """
        now = self._clock()
        approval_id = (uuid.uuid5(APPROVAL_NAMESPACE, f"{session_id}\n{idempotency_key}").hex
                       if idempotency_key else uuid.uuid4().hex)
        try:
            approval = Approval(approval_id=approval_id, session_id=session_id, customer_id=customer_id,
                                action=action, summary=summary,
                                amount=Decimal(str(amount)) if amount is not None else None,
                                created_at=now, expires_at=expires_at or now + self._ttl)
        except (ValidationError, ArithmeticError) as exc:
            raise InvalidInput(f"invalid approval request: {_first_problem(exc)}") from None
        if self._store.put_new(approval):
            return approval
        existing = self._store.get(approval_id)
        if existing is not None and existing.same_request(approval):
            return existing
        raise Conflict("this idempotency key was already used for a different approval request")

    def get(self, approval_id: str) -> Approval:
        """The approval as it stands now: a pending one past its expiry reads as expired (the
        record itself is marked expired by the next `decide`)."""
        approval = self._store.get(check_approval_id(approval_id))
        if approval is None:
            raise NotFound(f"approval {approval_id} does not exist")
        if approval.status is ApprovalStatus.PENDING and approval.is_expired(self._clock()):
            return approval.model_copy(update={"status": ApprovalStatus.EXPIRED})
        return approval

    def decide(self, principal: Principal, approval_id: str, decision: Decision | str,
               note: str | None = None) -> Approval:
        """Approve or reject a pending approval (agents only). Idempotent: the same decision again
        returns the recorded one; the other decision afterwards is a Conflict; past expiry the
        approval is recorded as expired and ApprovalExpired is raised."""
        if not principal.is_agent:
            raise Forbidden("only support agents can decide approvals")
        chosen = _decision(decision)
        note = _note(note)
        current = self._store.get(check_approval_id(approval_id))
        if current is None:
            raise NotFound(f"approval {approval_id} does not exist")
        if current.status is ApprovalStatus.PENDING:
            now = self._clock()
            if current.is_expired(now):
                self._store.expire(approval_id, now)
                raise ApprovalExpired(f"approval {approval_id} expired at {current.expires_at.isoformat()}")
            decided = self._store.decide(approval_id, chosen.outcome, principal.subject, note, now)
            if decided is not None:
                return decided
            # Lost a race with another decision (or the expiry): judge against what won.
            current = self._store.get(approval_id) or current
            if current.status is ApprovalStatus.PENDING:
                self._store.expire(approval_id, now)
                raise ApprovalExpired(f"approval {approval_id} expired at {current.expires_at.isoformat()}")
        return _already_decided(current, chosen)

    def list_pending(self, principal: Principal, *, limit: int = 25,
                     cursor: str | None = None) -> ApprovalPage:
        """Pending approvals, oldest first (agents only); expired ones still listed until decided."""
        if not principal.is_agent:
            raise Forbidden("only support agents can list approvals")
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be 1-{MAX_PAGE}")
        items, next_cursor = self._store.list_by_status(ApprovalStatus.PENDING, limit, cursor)
        total = None if cursor else self._store.count_by_status(ApprovalStatus.PENDING)
        return ApprovalPage(items=items, next_cursor=next_cursor, total=total)


def _already_decided(current: Approval, chosen: Decision) -> Approval:
    if current.status is ApprovalStatus.EXPIRED:
        raise ApprovalExpired(f"approval {current.approval_id} expired at {current.expires_at.isoformat()}")
    if current.status is chosen.outcome:
        return current
    raise Conflict(f"approval {current.approval_id} was already {current.status.value} "
                   f"by {current.decided_by}")


def _decision(value: Decision | str) -> Decision:
    try:
        return Decision(value)
    except ValueError:
        raise InvalidInput("decision must be 'approve' or 'reject'") from None


def _note(note: str | None) -> str | None:
    note = (note or "").strip() or None
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise InvalidInput(f"note must be at most {MAX_NOTE_CHARS} characters")
    return note


def _first_problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error.get("loc", ())) or "request"
        return f"{field}: {error.get('msg', 'invalid')}"
    return "amount is not a number"
