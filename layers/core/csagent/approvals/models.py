"""The approval record and its states.

    pending ──decide(approve)──► approved
       │    ──decide(reject)───► rejected
       └──── past expires_at ──► expired     (deciding then raises ApprovalExpired)

A decision is final: the same decision again returns the record unchanged; the other one is a
`Conflict`.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from csagent.domain.errors import Conflict
from csagent.domain.ids import APPROVAL_ID_PATTERN  # re-exported: the approval id format
from csagent.handoff.codec import Timestamp

MAX_NOTE_CHARS = 1000


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


class Decision(StrEnum):
    """What an agent decides; each leads to one final status."""

    APPROVE = "approve"
    REJECT = "reject"

    @property
    def outcome(self) -> ApprovalStatus:
        return ApprovalStatus.APPROVED if self is Decision.APPROVE else ApprovalStatus.REJECTED


class ApprovalExpired(Conflict):
    """The approval passed its `expires_at` before anyone decided; the action must be asked again."""

    code = "approval_expired"


class Approval(BaseModel):
    """A consequential action waiting for (or carrying) a human decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    approval_id: str = Field(pattern=APPROVAL_ID_PATTERN)
    session_id: str = Field(min_length=1, max_length=128)
    customer_id: str = Field(min_length=1)
    action: str = Field(min_length=1, max_length=64, description="e.g. 'refund', 'cancel_order'.")
    summary: str = Field(min_length=1, max_length=2000, description="What will happen, in plain words.")
    amount: Decimal | None = Field(default=None, ge=0, max_digits=12, decimal_places=2)
    status: ApprovalStatus = ApprovalStatus.PENDING
    created_at: Timestamp
    expires_at: Timestamp
    decided_by: str | None = None
    decided_at: Timestamp | None = None
    note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)

    @model_validator(mode="after")
    def _consistent(self) -> Approval:
        if self.expires_at <= self.created_at:
            raise ValueError("expires_at must be after created_at")
        decided = self.status in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED)
        if decided != (self.decided_by is not None and self.decided_at is not None):
            raise ValueError(f"decided_by / decided_at do not fit status {self.status.value}")
        return self

    def is_expired(self, now: datetime) -> bool:
        """Expired already, or still undecided at `now` but past its expiry."""
        return self.status is ApprovalStatus.EXPIRED or (
            self.status is ApprovalStatus.PENDING and now >= self.expires_at)

    def same_request(self, other: Approval) -> bool:
        """The same action on the same session for the same customer and amount (idempotent create)."""
        keys = ("session_id", "customer_id", "action", "amount")
        return all(getattr(self, k) == getattr(other, k) for k in keys)
