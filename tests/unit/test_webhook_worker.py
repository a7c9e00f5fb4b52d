"""The webhook worker: exactly-once processing, identity verification before any account data,
the conversation called as the linked customer, and replies sent through the platform API (a
local server records them). DynamoDB is the template's idempotency table in `moto.mock_aws`;
the store and the conversation are fakes here (tests/integration uses the real ones)."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto import mock_aws
from webhook_support import LOCAL_SECRETS, ROOT, LambdaContext, RecordingServer, load_event, recording_server

from csagent.domain.models import Principal
from csagent.messaging.config import OutboundTokens
from csagent.messaging.dedupe import DynamoDBDedupe
from csagent.messaging.identity import CustomerDirectory, DynamoDBLinks, IdentityVerifier
from csagent.messaging.models import InboundMessage, Platform
from csagent.messaging.outbound import OutboundConfig, OutboundSender
from csagent.messaging.replies import load_replies
from csagent.messaging.worker import DeliveryFailed, MessageWorker, Outcome, session_id_for
from devstack.template import create_resources, local_resources

TABLE = "csagent-local-idempotency"
REPLIES = load_replies()
CUSTOMERS = [
    {"customer_id": "noah_brown_6181", "email": "noah.brown7922@example.com", "first_name": "Noah",
     "last_name": "Brown", "zip": "80279"},
    {"customer_id": "ava_lee_1", "email": "ava.lee1@example.com", "first_name": "Ava", "last_name": "Lee",
     "zip": "10001"},
    {"customer_id": "ava_lee_2", "email": "ava.lee2@example.com", "first_name": "Ava", "last_name": "Lee",
     "zip": "10001"},
]


class Clock:
    def __init__(self, now: float = 1_741_774_530.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeStore:
    """The two identity queries over a list of customers (the real Cypher runs in tests/integration)."""

    def __init__(self) -> None:
        self.queries = 0

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *, timeout_s: float | None = None,
             max_rows: int | None = None) -> list[dict[str, Any]]:
        self.queries += 1
        p = dict(params or {})
        if "email" in p:
            found = [c for c in CUSTOMERS if c["email"].lower() == p["email"].lower()]
        else:
            found = [c for c in CUSTOMERS if c["zip"] == p["zip"]
                     and [c["first_name"].lower(), c["last_name"].lower()] in p["names"]]
        return [{"customer_id": c["customer_id"]} for c in found][: max_rows or None]


@dataclass
class Turn:
    reply: dict[str, Any]


class FakeConversation:
    def __init__(self) -> None:
        self.calls: list[tuple[Principal, str, str]] = []
        self.fail_next = False

    def handle_message(self, principal: Principal, session_id: str, message: Any) -> Turn:
        self.calls.append((principal, session_id, message.text))
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("neo4j went away")
        return Turn(reply={"text": f"answer for {principal.customer_id}: {message.text}"})


@pytest.fixture
def ddb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL")]:
        monkeypatch.delenv(var)
    with mock_aws():
        session = boto3.session.Session(region_name="us-east-1")
        resources = local_resources(ROOT / "template.yaml")
        idempotency = resources.table("IdempotencyTable")
        create_resources(session, replace(resources, tables=(idempotency,), buckets=(), queues=()))
        yield session.client("dynamodb")


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    yield from recording_server()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def conversation() -> FakeConversation:
    return FakeConversation()


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


def make_sender(server: RecordingServer, **overrides: Any) -> OutboundSender:
    config = OutboundConfig(slack_api_base=f"{server.url}/slack", telegram_api_base=f"{server.url}/telegram",
                            whatsapp_api_base=f"{server.url}/whatsapp",
                            whatsapp_phone_number_id=LOCAL_SECRETS["WHATSAPP_PHONE_NUMBER_ID"],
                            timeout_s=2.0, backoff_s=0.0, **overrides)
    tokens = OutboundTokens(slack_bot_token=LOCAL_SECRETS["SLACK_BOT_TOKEN"],
                            telegram_bot_token=LOCAL_SECRETS["TELEGRAM_BOT_TOKEN"],
                            whatsapp_access_token=LOCAL_SECRETS["WHATSAPP_ACCESS_TOKEN"])
    return OutboundSender(config, lambda: tokens, sleep=lambda _: None)


@pytest.fixture
def worker(ddb, server, clock, conversation, store) -> MessageWorker:
    links = DynamoDBLinks(ddb, TABLE, link_ttl_s=30 * 86400, lockout_s=900, clock=clock)
    identity = IdentityVerifier(links, CustomerDirectory(store), REPLIES, max_attempts=3, lockout_s=900)
    dedupe = DynamoDBDedupe(ddb, TABLE, ttl_s=8 * 86400, lease_s=120, clock=clock)
    return MessageWorker(dedupe, identity, lambda: conversation, make_sender(server), REPLIES)


_ids = iter(range(1000, 10**6))


def tg(text: str, *, user: str = "700000001", chat: str | None = None, direct: bool = True,
       message_id: int | None = None) -> InboundMessage:
    """A Telegram message from `user` (a new message id each call unless given)."""
    chat = chat or user
    message_id = message_id or next(_ids)
    return InboundMessage(platform=Platform.TELEGRAM, platform_message_id=f"{chat}:{message_id}",
                          platform_user_id=user, chat_id=chat, text=text,
                          received_at=datetime(2025, 3, 12, tzinfo=UTC), direct=direct)


def replies_sent(server: RecordingServer) -> list[str]:
    return [r.body["text"] for r in server.requests]


def link(worker: MessageWorker, user: str = "700000001") -> None:
    assert worker.process(tg("noah.brown7922@example.com", user=user)) is Outcome.REPLIED


# --------------------------------------------------------------------------------------- identity
def test_an_unlinked_user_is_asked_to_verify_and_the_conversation_is_not_called(worker, server, conversation):
    # Given a Telegram user the store has never verified
    # When they ask about an order
    outcome = worker.process(tg("where is my order #W7678072?"))
    # Then the reply asks for their email or name + zip, and no order data was looked up
    assert outcome is Outcome.REPLIED
    assert replies_sent(server) == [REPLIES.text("ask_identity")]
    assert conversation.calls == []


def test_the_email_of_a_customer_links_the_user_and_later_messages_reach_the_conversation_as_them(
        worker, server, conversation):
    # Given an unlinked user who sends the email on a customer's account (in any case)
    worker.process(tg("Sure, it's Noah.Brown7922@Example.com"))
    # When they ask about an order
    worker.process(tg("where is my order #W7678072?"))
    # Then they were told they are verified, and the question went to the conversation as that
    # customer, on the session of this chat
    assert replies_sent(server)[0] == REPLIES.text("verified")
    [(principal, session_id, text)] = conversation.calls
    assert principal == Principal(subject="telegram:700000001", customer_id="noah_brown_6181")
    assert session_id == session_id_for(tg("x"), "noah_brown_6181")
    assert text == "where is my order #W7678072?"
    assert replies_sent(server)[1] == "answer for noah_brown_6181: where is my order #W7678072?"


def test_name_and_zip_in_a_sentence_link_the_user(worker, server):
    # Given an unlinked user who writes their name and zip in a sentence
    # When the worker processes it
    worker.process(tg("Hi! My name is Noah Brown and my zip code is 80279."))
    # Then they are verified
    assert replies_sent(server) == [REPLIES.text("verified")]


def test_name_and_zip_matching_two_customers_asks_for_the_email_and_links_nobody(worker, server,
                                                                                conversation):
    # Given two customers with the same name and zip
    # When a user sends that name and zip, then asks about an order
    worker.process(tg("Ava Lee 10001"))
    worker.process(tg("where is my order?"))
    # Then they are asked for their email instead, and remain unverified
    assert replies_sent(server) == [REPLIES.text("ambiguous"), REPLIES.text("ask_identity")]
    assert conversation.calls == []


def test_unknown_details_are_refused_and_repeated_failures_lock_verification(worker, server, conversation):
    # Given a user who sends wrong emails until the attempt limit (3 here)
    for attempt in range(3):
        worker.process(tg(f"guess{attempt}@example.com"))
    # When they then send a real customer's email
    worker.process(tg("noah.brown7922@example.com"))
    # Then the wrong ones were refused, the limit locked verification, and the real email did not
    # link them while locked
    sent = replies_sent(server)
    assert sent[:2] == [REPLIES.text("not_verified")] * 2
    assert sent[2] == sent[3] == REPLIES.text("locked", minutes=15)
    worker.process(tg("where is my order?"))
    assert conversation.calls == []


def test_verification_unlocks_after_the_lockout(worker, server, clock):
    # Given a user locked out after three failed attempts
    for attempt in range(3):
        worker.process(tg(f"guess{attempt}@example.com"))
    # When the lockout has passed and they send their real email
    clock.now += 901
    worker.process(tg("noah.brown7922@example.com"))
    # Then they are verified
    assert replies_sent(server)[-1] == REPLIES.text("verified")


def test_a_link_expires_and_the_user_verifies_again(worker, server, clock, conversation):
    # Given a user linked 31 days ago (links last 30)
    link(worker)
    clock.now += 31 * 86400
    # When they ask about an order
    worker.process(tg("where is my order?"))
    # Then they are asked to verify again, and the conversation is not called
    assert replies_sent(server)[-1] == REPLIES.text("ask_identity")
    assert conversation.calls == []


def test_links_are_per_platform_user_a_second_user_is_not_linked_by_the_first(worker, server, conversation):
    # Given one Telegram user verified as a customer
    link(worker, user="700000001")
    # When another Telegram user asks about an order
    worker.process(tg("where is my order #W7678072?", user="700000002"))
    # Then the second user is asked to verify; nothing ran as the first user's customer
    assert replies_sent(server)[-1] == REPLIES.text("ask_identity")
    assert conversation.calls == []


def test_a_group_chat_is_told_to_message_directly_and_no_account_data_is_touched(worker, server, store,
                                                                                  conversation):
    # Given a linked user writing in a group chat
    link(worker)
    queries_before = store.queries
    # When they ask about an order there
    worker.process(tg("where is my order #W7678072?", chat="-100123", direct=False))
    # Then they are asked to message directly; neither the store nor the conversation was used
    assert replies_sent(server)[-1] == REPLIES.text("direct_only")
    assert store.queries == queries_before
    assert conversation.calls == []


def test_an_over_long_message_gets_a_shorter_please_reply(worker, server, conversation):
    # Given a linked user
    link(worker)
    # When they send more than 4,000 characters
    worker.process(tg("a" * 4001))
    # Then they are asked for a shorter message and the conversation is not called
    assert replies_sent(server)[-1] == REPLIES.text("too_long", limit=4000)
    assert conversation.calls == []


def test_a_whatsapp_session_id_is_stable_per_chat_and_customer_and_does_not_carry_the_phone_number():
    # Given a WhatsApp message (its chat id is the sender's phone number)
    message = InboundMessage.model_validate_json(load_event("worker/sqs_batch.json")["Records"][1]["body"])
    # When its session id is derived for the linked customer
    session_id = session_id_for(message, "james_li_5688")
    # Then it is stable, names the platform, hides the number, and differs for another customer
    assert session_id == session_id_for(message, "james_li_5688")
    assert session_id.startswith("whatsapp-") and "15555550123" not in session_id
    assert session_id != session_id_for(message, "noah_brown_6181")


# ---------------------------------------------------------------------------------- exactly once
def test_a_duplicate_delivery_is_acknowledged_and_not_processed_again(worker, server, conversation):
    # Given a linked user's message processed once
    link(worker)
    message = tg("where is my order?")
    first = worker.process(message)
    # When the same platform message is delivered again
    second = worker.process(message)
    # Then the second is a duplicate: one turn, one reply
    assert (first, second) == (Outcome.REPLIED, Outcome.DUPLICATE)
    assert len(conversation.calls) == 1
    assert replies_sent(server).count("answer for noah_brown_6181: where is my order?") == 1


def test_a_failed_turn_releases_the_message_so_the_queue_retry_processes_it(worker, server, conversation):
    # Given a linked user and a conversation that fails once
    link(worker)
    message = tg("where is my order?")
    conversation.fail_next = True
    # When the message is processed, fails, and SQS delivers it again
    with pytest.raises(RuntimeError):
        worker.process(message)
    retried = worker.process(message)
    # Then the retry runs the turn and the customer gets exactly one answer
    assert retried is Outcome.REPLIED
    assert len(conversation.calls) == 2
    assert replies_sent(server).count("answer for noah_brown_6181: where is my order?") == 1


def test_a_failed_send_is_retried_by_the_queue_without_running_the_turn_twice(worker, server, conversation):
    # Given a linked user, and Telegram answering 500 to every attempt of the first delivery
    link(worker)
    message = tg("where is my order?")
    server.script = [500, 500, 500, 500]
    # When the message is processed (send fails after 4 attempts) and SQS delivers it again
    with pytest.raises(DeliveryFailed):
        worker.process(message)
    retried = worker.process(message)
    # Then the recorded reply is sent on the retry, and the turn ran once
    assert retried is Outcome.REPLIED
    assert len(conversation.calls) == 1
    assert replies_sent(server)[-1] == "answer for noah_brown_6181: where is my order?"


def test_a_message_held_by_a_live_worker_is_a_duplicate_until_its_lease_runs_out(ddb, clock):
    # Given one worker holding a message
    dedupe = DynamoDBDedupe(ddb, TABLE, ttl_s=86400, lease_s=120, clock=clock)
    first = dedupe.claim("telegram:1:1")
    # When another delivery tries during the lease, and again after it ran out (the first died)
    during = dedupe.claim("telegram:1:1")
    clock.now += 121
    after = dedupe.claim("telegram:1:1")
    # Then only the first and the take-over succeed
    assert first is not None and during is None and after is not None
    assert after.attempt == 2


def test_an_undeliverable_reply_completes_the_message(worker, server):
    # Given Telegram refusing the reply for good (the user blocked the bot: 403)
    message = tg("hello")
    server.script = [403]
    # When the message is processed, and delivered again by the platform
    outcome = worker.process(message)
    again = worker.process(message)
    # Then it is not retried (one attempt) and the redelivery is a duplicate
    assert (outcome, again) == (Outcome.UNDELIVERABLE, Outcome.DUPLICATE)
    assert len(server.requests) == 1


# ------------------------------------------------------------------------------ worker handler
def test_the_worker_handler_reports_only_the_failed_record_of_a_batch(ddb, server, monkeypatch):
    # Given the SQS batch event (a Telegram and a WhatsApp message) and WhatsApp answering 500
    for name, value in {**LOCAL_SECRETS, "SLACK_API_BASE": f"{server.url}/slack",
                        "TELEGRAM_API_BASE": f"{server.url}/telegram",
                        "WHATSAPP_API_BASE": f"{server.url}/whatsapp", "OUTBOUND_BACKOFF_S": "0",
                        "OUTBOUND_MAX_ATTEMPTS": "1"}.items():
        monkeypatch.setenv(name, value)
    from csagent import runtime as core
    from csagent.messaging import runtime

    core.reset()  # the core's cached clients may point at a moto server; here they must use mock_aws
    monkeypatch.setattr(core, "graph_store", functools.lru_cache(maxsize=1)(FakeStore))
    runtime.reset()
    event = load_event("worker/sqs_batch.json")
    server.script = [200, 500]
    spec = importlib.util.spec_from_file_location("worker_app_unit", ROOT / "functions" / "worker" / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # When the worker Lambda handles the batch
    response = module.handler(event, LambdaContext())
    runtime.reset()
    core.reset()
    # Then only the WhatsApp record is reported failed (SQS redelivers just that one), and the
    # Telegram user was asked to verify
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][1]["messageId"]}]}
    assert server.requests[0].path == f"/telegram/bot{LOCAL_SECRETS['TELEGRAM_BOT_TOKEN']}/sendMessage"
    assert server.requests[0].body == {"chat_id": "700000001", "text": REPLIES.text("ask_identity")}
    assert json.loads(event["Records"][1]["body"])["platform"] == "whatsapp"
