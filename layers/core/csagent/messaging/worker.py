"""The queue use case: process one platform message exactly once and send the reply.

    claim (dedupe)  ─ duplicate ──────────────────────────────────────────► acknowledged, nothing done
        │
        ├─ reply recorded by an earlier attempt? ─ yes ─► resend it (the turn never runs twice)
        ▼
    group chat? ─ yes ─► "message me directly" (account data never goes to a channel)
        ▼
    linked to a customer? ─ no ─► identity verification (asks, verifies, links; no account data)
        ▼
    ConversationService.handle_message(Principal(subject="<platform>:<user>", customer_id), session)
        ▼
    record reply → send → complete

Any exception releases the claim and propagates: the batch reports the record as failed, SQS
delivers it again after the visibility timeout, and after maxReceiveCount it lands in the DLQ.
A retryable send failure (429, 5xx, network) is such an exception; a final one (the user blocked
the bot, a 4xx) completes the message, because sending again cannot succeed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Protocol

from csagent.domain.models import Principal
from csagent.messaging.dedupe import Claim
from csagent.messaging.identity import IdentityVerifier
from csagent.messaging.models import InboundMessage, Platform
from csagent.messaging.outbound import Delivery
from csagent.messaging.replies import Replies
from csagent.service.schemas import MessageIn

logger = logging.getLogger(__name__)


class Outcome(StrEnum):
    REPLIED = "replied"
    DUPLICATE = "duplicate"
    UNDELIVERABLE = "undeliverable"


class DeliveryFailed(Exception):
    """The reply could not be sent yet (429, 5xx, network): the queue should retry."""


class Dedupe(Protocol):
    def claim(self, dedupe_key: str) -> Claim | None: ...
    def record_reply(self, claim: Claim, reply: str) -> Claim: ...
    def complete(self, claim: Claim) -> None: ...
    def release(self, claim: Claim) -> None: ...


class Conversation(Protocol):
    """The part of `csagent.service.conversation.ConversationService` the worker uses."""

    def handle_message(self, principal: Principal, session_id: str, message: Any) -> Any: ...


class Sender(Protocol):
    def send(self, platform: Platform, chat_id: str, text: str) -> Delivery: ...


def session_id_for(message: InboundMessage, customer_id: str) -> str:
    """The conversation session of a chat with a verified customer.

    Derived from platform + chat id (one conversation per chat, across messages and processes)
    and the linked customer, so a chat that is later verified as another customer never
    continues the first customer's history. Hashed: WhatsApp chat ids are phone numbers, and
    session ids appear in logs and table keys.
    """
    digest = hashlib.sha256(f"{message.platform.value}\x1f{message.chat_id}\x1f{customer_id}".encode())
    return f"{message.platform.value}-{digest.hexdigest()[:32]}"


def principal_for(message: InboundMessage, customer_id: str) -> Principal:
    return Principal(subject=f"{message.platform.value}:{message.platform_user_id}", customer_id=customer_id)


class MessageWorker:
    """`process(message)` → what happened; raises when the queue should deliver it again."""

    def __init__(self, dedupe: Dedupe, identity: IdentityVerifier, conversation: Callable[[], Conversation],
                 sender: Sender, replies: Replies, *, max_message_chars: int = 4000) -> None:
        self._dedupe = dedupe
        self._identity = identity
        self._conversation = conversation  # built on first use: unverified users never load the graph
        self._sender = sender
        self._replies = replies
        self._max_chars = max_message_chars

    def process(self, message: InboundMessage) -> Outcome:
        claim = self._dedupe.claim(message.dedupe_key)
        if claim is None:
            logger.info("duplicate %s message acknowledged without processing", message.platform.value)
            return Outcome.DUPLICATE
        try:
            if claim.reply is None:
                claim = self._dedupe.record_reply(claim, self.answer(message))
            delivery = self._sender.send(message.platform, message.chat_id, claim.reply or "")
            if not delivery.ok and delivery.retryable:
                raise DeliveryFailed(f"{message.platform.value} send failed: {delivery.error}")
        except BaseException:
            self._dedupe.release(claim)
            raise
        self._dedupe.complete(claim)
        if not delivery.ok:
            logger.error("%s reply undeliverable (final): %s", message.platform.value, delivery.error)
            return Outcome.UNDELIVERABLE
        return Outcome.REPLIED

    def answer(self, message: InboundMessage) -> str:
        """The reply to one message (no side effects on the platform)."""
        if not message.direct:
            return self._replies.text("direct_only")
        customer_id = self._identity.customer_for(message)
        if customer_id is None:
            return self._identity.verify(message)
        text = message.text.strip()
        if len(text) > self._max_chars:
            return self._replies.text("too_long", limit=self._max_chars)
        turn = self._conversation().handle_message(principal_for(message, customer_id),
                                                   session_id_for(message, customer_id), MessageIn(text=text))
        reply = str((turn.reply or {}).get("text") or "").strip()
        return reply or self._replies.text("no_reply")
