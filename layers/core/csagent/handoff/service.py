"""Human handoff: the use cases of the graph (open a handoff, pass later customer messages to
it) and of the agents' desk (list, claim, reply, close), with the Principal checks.

Life of a handoff (and of its session's `status`):

    handoff:  open ──claim──► claimed ──close──► closed
    session:  handed_off ──────────────────────► active
    messages: the customer's, appended by the graph while open or claimed;
              the agent's, appended by the claiming agent only

- `open` stores the package and marks the session `handed_off` in one transaction, then
  sends the package to the handoff queue. A queue failure does not fail the customer's turn
  (agents see the handoff in `list_open` anyway); the next `open` or customer message on the
  session sends it again. `open` on a session that already has its handoff returns that one,
  so a retried turn never opens a second case.
- Claiming is first come, first served: a conditional write, so of two agents one gets the
  case and the other `Conflict`. Claiming again by the same agent is a no-op.
- The customer sees agent replies through `customer_view` (see its docstring).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from csagent.domain.errors import Conflict, DependencyUnavailable, Forbidden, InvalidInput, NotFound
from csagent.domain.models import Principal
from csagent.handoff.codec import Clock, Timestamp, utc_now
from csagent.handoff.package import (
    HANDOFF_ID_PATTERN,
    MAX_TEXT_CHARS,
    HandoffMessage,
    HandoffPackage,
    HandoffStatus,
    MessageRole,
    build_package,
)
from csagent.handoff.triggers import HandoffDecision, Urgency, detect_frustration

logger = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGES = 60  # 60 × 4,000 characters stays well under DynamoDB's 400 KB item limit
MAX_PAGE = 100
_HANDOFF_ID = re.compile(HANDOFF_ID_PATTERN)


@dataclass(frozen=True)
class SessionLink:
    """What the sessions table says about a session's handoffs."""

    session_id: str
    owner: str
    status: str
    handoff_id: str | None  # the open handoff, present exactly while the session is handed_off
    last_handoff_id: str | None  # the handoff closed last


class CloseOutcome(StrEnum):
    CLOSED = "closed"
    NOT_CLAIMED_BY_AGENT = "not_claimed_by_agent"  # not claimed, claimed by another agent, or gone
    SESSION_UNLINKED = "session_unlinked"  # the session item no longer points at this handoff


class HandoffStore(Protocol):
    """What the service needs from storage (`csagent.handoff.repository.DynamoDBHandoffs`)."""

    def get(self, handoff_id: str) -> HandoffPackage | None: ...
    def session_link(self, session_id: str) -> SessionLink | None: ...
    def list_by_status(self, status: HandoffStatus, limit: int,
                       cursor: str | None = None) -> tuple[list[HandoffPackage], str | None]: ...
    def count_by_status(self, status: HandoffStatus) -> int: ...
    def is_published(self, handoff_id: str) -> bool: ...
    def create(self, package: HandoffPackage, *, now: datetime) -> bool: ...
    def claim(self, handoff_id: str, agent: str, now: datetime) -> HandoffPackage | None: ...
    def append_message(self, handoff_id: str, message: HandoffMessage, *, max_messages: int,
                       session_id: str | None = None, claimed_by: str | None = None,
                       urgency: Urgency | None = None) -> HandoffPackage | None: ...
    def close(self, package: HandoffPackage, agent: str, now: datetime) -> CloseOutcome: ...
    def close_unlinked(self, handoff_id: str, agent: str, now: datetime) -> HandoffPackage | None: ...
    def mark_published(self, handoff_id: str, now: datetime) -> None: ...


class HandoffPublisher(Protocol):
    """Where new handoffs are announced (`SqsHandoffPublisher`)."""

    def publish(self, package: HandoffPackage) -> str: ...


class HandoffPage(BaseModel):
    """One page of the agents' work queue, oldest first."""

    items: list[HandoffPackage]
    next_cursor: str | None = None
    total: int | None = None
    """How many are open in all: on the first page only (a cursor continues a listing already counted)."""


class PublicMessage(BaseModel):
    """A message of the handoff thread as the customer sees it (no agent identity)."""

    model_config = ConfigDict(frozen=True)

    role: MessageRole
    text: str
    at: Timestamp


class CustomerHandoffView(BaseModel):
    """What the customer's GET of the session shows of the (current or last) handoff."""

    handoff_id: str
    status: HandoffStatus
    messages: list[PublicMessage]


class _HandoffClosed(Exception):
    """Internal: a customer message met a handoff an agent had just closed."""


def require_agent(principal: Principal) -> str:
    """The agent's id (their subject); Forbidden for anyone without the agent or admin role."""
    if not principal.is_agent:
        raise Forbidden("only support agents can work on handoffs")
    return principal.subject


def check_handoff_id(handoff_id: str) -> str:
    if not _HANDOFF_ID.fullmatch(handoff_id):
        raise InvalidInput("handoff_id must be 32 lowercase hexadecimal characters")
    return handoff_id


def _message_text(text: str) -> str:
    text = (text or "").strip()
    if not text or len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"text must be 1-{MAX_TEXT_CHARS} characters")
    return text


class HandoffService:
    def __init__(self, store: HandoffStore, publisher: HandoffPublisher, *, clock: Clock = utc_now,
                 max_messages: int = DEFAULT_MAX_MESSAGES) -> None:
        self._store = store
        self._publisher = publisher
        self._clock = clock
        self._max_messages = max_messages

    # -- the graph's side ---------------------------------------------------------------------
    def open(self, state: Mapping[str, Any], decision: HandoffDecision) -> HandoffPackage:
        """Hand the turn in `state` to a human: store the package, mark the session handed off,
        queue the package. Idempotent per session: returns the session's handoff if it has one.
        Raises NotFound when the session does not exist or is not the state's customer's."""
        now = self._clock()
        package = build_package(state, decision, handoff_id=uuid.uuid4().hex, now=now)
        if not self._store.create(package, now=now):
            existing = self._existing_for(package.session_id, package.customer_id)
            self._ensure_published(existing)
            return existing
        self._publish(package)
        return package

    def active_for_session(self, session_id: str) -> HandoffPackage | None:
        """The session's handoff that is not closed yet, if any (two reads; the graph uses
        `forward_if_handed_off`, which needs one when the session is not handed off)."""
        link = self._store.session_link(session_id)
        if link is None or link.handoff_id is None:
            return None
        return self._store.get(link.handoff_id)

    def forward_if_handed_off(self, session_id: str, text: str) -> HandoffPackage | None:
        """The graph's first step of a turn: if the session is with a person, add the customer's
        message to the handoff and return it (the graph then replies "passed on" instead of
        answering); None when the session is not handed off (answer as usual). One read when
        it is not."""
        link = self._store.session_link(session_id)
        if link is None or link.handoff_id is None:
            return None
        try:
            return self._append_customer(link.handoff_id, session_id, text)
        except _HandoffClosed:
            return None

    def append_customer_message(self, session_id: str, text: str) -> HandoffPackage:
        """Add a customer message to the session's open handoff. A frustrated message raises the
        case's urgency to high. NotFound when the session has no open handoff; Conflict when an
        agent closed it a moment ago."""
        link = self._store.session_link(session_id)
        if link is None or link.handoff_id is None:
            raise NotFound(f"session {session_id} has no open handoff")
        try:
            return self._append_customer(link.handoff_id, session_id, text)
        except _HandoffClosed:
            raise Conflict("this handoff was closed a moment ago") from None

    def _append_customer(self, handoff_id: str, session_id: str, text: str) -> HandoffPackage:
        message = HandoffMessage(role=MessageRole.CUSTOMER, text=_message_text(text), at=self._clock())
        urgency = Urgency.HIGH if detect_frustration(message.text).frustrated else None
        updated = self._store.append_message(handoff_id, message, max_messages=self._max_messages,
                                             session_id=session_id, urgency=urgency)
        if updated is None:
            refused = self._append_refused(handoff_id, agent=None)
            raise _HandoffClosed() if refused is None else refused
        self._ensure_published(updated)
        return updated

    # -- the agents' side ---------------------------------------------------------------------
    def list_open(self, principal: Principal, *, limit: int = 25, cursor: str | None = None) -> HandoffPage:
        """Open handoffs, oldest first (agents only)."""
        require_agent(principal)
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be 1-{MAX_PAGE}")
        items, next_cursor = self._store.list_by_status(HandoffStatus.OPEN, limit, cursor)
        total = None if cursor else self._store.count_by_status(HandoffStatus.OPEN)
        return HandoffPage(items=items, next_cursor=next_cursor, total=total)

    def get(self, principal: Principal, handoff_id: str) -> HandoffPackage:
        """One handoff with its full package and messages (agents only)."""
        require_agent(principal)
        return self._get(handoff_id)

    def claim(self, principal: Principal, handoff_id: str) -> HandoffPackage:
        """Take an open handoff. Conflict if another agent has it or it is closed; claiming a
        case you already hold returns it unchanged."""
        agent = require_agent(principal)
        claimed = self._store.claim(check_handoff_id(handoff_id), agent, self._clock())
        if claimed is not None:
            return claimed
        current = self._get(handoff_id)
        if current.status is HandoffStatus.CLAIMED and current.claimed_by == agent:
            return current
        raise self._not_yours(current)

    def reply(self, principal: Principal, handoff_id: str, text: str) -> HandoffPackage:
        """Append the claiming agent's reply; the customer sees it on their next GET of the session."""
        agent = require_agent(principal)
        message = HandoffMessage(role=MessageRole.AGENT, text=_message_text(text), at=self._clock(),
                                 author=agent)
        updated = self._store.append_message(check_handoff_id(handoff_id), message,
                                             max_messages=self._max_messages, claimed_by=agent)
        if updated is None:
            raise self._append_refused(handoff_id, agent=agent) or Conflict("this handoff is closed")
        return updated

    def close(self, principal: Principal, handoff_id: str) -> HandoffPackage:
        """Close a handoff you hold; the session goes back to `active` (the assistant answers
        again). Closing a closed handoff is a no-op; Conflict when another agent holds it or
        nobody claimed it."""
        agent = require_agent(principal)
        current = self._get(handoff_id)
        if current.status is HandoffStatus.CLOSED:
            return current
        now = self._clock()
        outcome = self._store.close(current, agent, now)
        if outcome is CloseOutcome.CLOSED:
            return self._get(handoff_id)
        if outcome is CloseOutcome.SESSION_UNLINKED:
            closed = self._store.close_unlinked(handoff_id, agent, now)
            if closed is not None:
                return closed
        latest = self._get(handoff_id)
        if latest.status is HandoffStatus.CLOSED:
            return latest
        raise self._not_yours(latest)

    # -- the customer's view ------------------------------------------------------------------
    def customer_view(self, session_id: str, customer_id: str) -> CustomerHandoffView | None:
        """The session's current handoff, or the one closed last, as its owner sees it: status
        and the thread of later customer messages and agent replies, oldest first. None when
        the session never went to a human. Forbidden for another customer's session."""
        link = self._store.session_link(session_id)
        if link is None:
            return None
        if link.owner != customer_id:
            raise Forbidden("this session belongs to another customer")
        handoff_id = link.handoff_id or link.last_handoff_id
        package = self._store.get(handoff_id) if handoff_id else None
        if package is None or package.customer_id != customer_id:
            return None
        return CustomerHandoffView(
            handoff_id=package.handoff_id, status=package.status,
            messages=[PublicMessage(role=m.role, text=m.text, at=m.at) for m in package.messages])

    # -- helpers ------------------------------------------------------------------------------
    def _get(self, handoff_id: str) -> HandoffPackage:
        package = self._store.get(check_handoff_id(handoff_id))
        if package is None:
            raise NotFound(f"handoff {handoff_id} does not exist")
        return package

    def _existing_for(self, session_id: str, customer_id: str) -> HandoffPackage:
        link = self._store.session_link(session_id)
        if link is None or link.owner != customer_id:
            raise NotFound(f"session {session_id} does not exist for this customer")
        existing = self._store.get(link.handoff_id) if link.handoff_id else None
        if existing is None:
            raise Conflict(f"session {session_id} could not be handed off; retry")
        return existing

    def _publish(self, package: HandoffPackage) -> None:
        try:
            self._publisher.publish(package)
        except DependencyUnavailable:
            logger.warning("handoff %s stored but not queued; it is sent again on the session's next "
                           "message", package.handoff_id)
            return
        self._store.mark_published(package.handoff_id, self._clock())

    def _ensure_published(self, package: HandoffPackage) -> None:
        if not self._store.is_published(package.handoff_id):
            self._publish(package)

    def _append_refused(self, handoff_id: str, agent: str | None) -> Exception | None:
        """Why an append was refused (None: the handoff is closed and the author is the customer)."""
        current = self._get(handoff_id)
        if current.status is HandoffStatus.CLOSED:
            return Conflict("this handoff is closed") if agent is not None else None
        held = current.status is HandoffStatus.CLAIMED and current.claimed_by == agent
        if agent is not None and not held:
            return self._not_yours(current)
        if len(current.messages) >= self._max_messages:
            return Conflict(f"this handoff already holds {self._max_messages} messages; "
                            "close it and open a new one")
        return Conflict("the handoff changed while the message was being added; retry")

    @staticmethod
    def _not_yours(current: HandoffPackage) -> Conflict:
        if current.status is HandoffStatus.OPEN:
            return Conflict("claim this handoff first")
        if current.status is HandoffStatus.CLOSED:
            return Conflict("this handoff is closed")
        return Conflict("another agent has claimed this handoff")
