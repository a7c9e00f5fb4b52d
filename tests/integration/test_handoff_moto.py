"""A human handoff end to end on the moto server of the local stack (the tables and queues of
template.yaml): a customer turn opens it, the queued message is the stored package, an agent
lists, claims, replies and closes it, the customer sees the reply and the session is active again.
A handoff's message is found however many earlier handoffs are queued ahead of it, and the
others are left for the support team's tooling. Each test publishes to a queue of its own with the
handoff queue's attributes, so it never receives what earlier runs left in the shared one.

Needs the moto server (`make up`, or MOTO_PORT pointing at one); provisions it idempotently.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from csagent.adapters.sessions_dynamodb import DynamoDBSessions
from csagent.domain.models import Principal
from csagent.handoff.package import HandoffPackage, HandoffStatus, MessageRole, build_package
from csagent.handoff.repository import DynamoDBHandoffs, SqsHandoffPublisher
from csagent.handoff.service import HandoffService
from csagent.handoff.triggers import evaluate, signals_from_state
from devstack.aws import clients, provision
from devstack.template import LocalResources

pytestmark = pytest.mark.integration

AGENT = Principal(subject="agent-alice", roles=frozenset({"agent"}))


@pytest.fixture(scope="module")
def stack(moto_endpoint: str) -> tuple[LocalResources, Any]:
    resources = provision(moto_endpoint)
    return resources, clients(moto_endpoint, resources.region)


@pytest.fixture(scope="module")
def queue_url(stack: tuple[LocalResources, Any]) -> str:
    _, aws = stack
    return str(aws.sqs.get_queue_url(QueueName="csagent-local-handoffs")["QueueUrl"])


@pytest.fixture
def own_queue(stack: tuple[LocalResources, Any], queue_url: str) -> Iterator[str]:
    """A queue of its own with the handoff queue's attributes (visibility timeout, retention,
    redrive), deleted after the test: a test neither fills the shared handoff queue nor receives the
    handoffs earlier runs left there (each receive counts toward the redrive policy's
    `maxReceiveCount`, which would move them to the dead-letter queue)."""
    _, aws = stack
    attributes = aws.sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["VisibilityTimeout", "MessageRetentionPeriod", "RedrivePolicy"],
    )["Attributes"]
    url = str(aws.sqs.create_queue(QueueName=f"it-handoffs-deep-{uuid.uuid4().hex[:12]}",
                                   Attributes=attributes)["QueueUrl"])
    yield url
    aws.sqs.delete_queue(QueueUrl=url)


#: The longest `receive_handoff` looks for its message (moto answers a receive from a queue of
#: 400 in about 0.2 s, ten messages each), how long each other message it receives stays hidden
#: meanwhile (longer than the walk, so the walk never meets the same message twice), and how many
#: empty receives in a row (one second's long poll each) mean that no visible message is left.
WALK_S = 120
HOLD_S = WALK_S + 30
EMPTY_RECEIVES = 5


def receive_handoff(aws: Any, queue_url: str, handoff_id: str) -> dict[str, Any]:
    """The queued message of `handoff_id`, taken from the queue. Other handoffs on a shared server
    (a long-lived `make up` stack keeps those of every earlier run, hundreds after an evaluation)
    are received on the way, since SQS receives no message by its content: each is hidden for
    `HOLD_S`, longer than the walk may last (`WALK_S`), so the walk moves on through the queue
    however deep instead of meeting the same messages again once they are visible, and receives
    each once. The walk gives up when `EMPTY_RECEIVES` receives in a row find nothing visible.
    When it ends, found or not, every message it skipped is released at once (visibility 0), so
    the support team's tooling is not kept from them."""
    skipped: dict[str, str] = {}  # message id -> its latest receipt handle
    deadline, empty = time.monotonic() + WALK_S, 0
    try:
        while empty < EMPTY_RECEIVES and time.monotonic() < deadline:
            received = aws.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                               VisibilityTimeout=HOLD_S, MessageAttributeNames=["All"])
            messages = received.get("Messages", [])
            empty = 0 if messages else empty + 1
            for message in messages:
                if HandoffPackage.model_validate_json(message["Body"]).handoff_id == handoff_id:
                    aws.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
                    return dict(message)
                skipped[message["MessageId"]] = message["ReceiptHandle"]
    finally:
        release(aws, queue_url, list(skipped.values()))
    raise AssertionError(f"handoff {handoff_id} not in the queue ({len(skipped)} others received)")


def release(aws: Any, queue_url: str, receipt_handles: list[str]) -> None:
    """Make these received messages visible again now (visibility 0), ten per call."""
    for start in range(0, len(receipt_handles), 10):
        entries = [{"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                   for i, handle in enumerate(receipt_handles[start:start + 10])]
        response = aws.sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)
        failed = response.get("Failed", [])
        assert not failed, f"messages not released: {failed}"


def refused_refund(session_id: str) -> dict[str, Any]:
    """A customer turn whose refund was refused by policy, in angry words after an angry turn."""
    return {
        "session_id": session_id, "customer_id": "james_li_5688", "lang": "en", "frustrated_turns": 1,
        "text": "This is unacceptable, refund order #W2611340 now",
        "route": "knowledge_and_actions",
        "clauses": [{"text": "refund order #W2611340", "intent": "return_request"}],
        "tasks": [{"task_id": "t1", "task_type": "return_items", "tool": "customer_actions",
                   "args": {"action": "return_items", "args": {"order_id": "#W2611340"}}}],
        "results": {"t1": {"status": "failed", "latency_ms": 18.2,
                           "error": {"type": "business_rule_violation", "message": "not delivered yet"}}},
    }


def list_until_found(service: HandoffService, handoff_id: str) -> HandoffPackage:
    cursor = None
    while True:
        page = service.list_open(AGENT, limit=100, cursor=cursor)
        found = [p for p in page.items if p.handoff_id == handoff_id]
        if found:
            return found[0]
        if page.next_cursor is None:
            raise AssertionError(f"handoff {handoff_id} is not in the open list")
        cursor = page.next_cursor


def test_a_handoff_from_open_to_close(stack: tuple[LocalResources, Any], own_queue: str) -> None:
    resources, aws = stack
    sessions_table = resources.table("SessionsTable").table_name
    sessions = DynamoDBSessions(aws.dynamodb, sessions_table)
    store = DynamoDBHandoffs(aws.dynamodb, resources.table("HandoffsTable").table_name, sessions_table)
    service = HandoffService(store, SqsHandoffPublisher(aws.sqs, own_queue))
    session_id = f"it-handoff-{uuid.uuid4().hex[:12]}"

    # Given a customer turn whose refund was refused by policy, in angry words after an angry turn
    state = refused_refund(session_id)
    decision = evaluate(signals_from_state(state))
    assert decision is not None
    lease = sessions.begin_turn(session_id, "james_li_5688", None)

    # When the turn opens the handoff
    package = service.open(state, decision)
    sessions.release(lease)

    # Then the queued message is exactly the stored package, and the session is handed off
    message = receive_handoff(aws, own_queue, package.handoff_id)
    stored = store.get(package.handoff_id)
    assert HandoffPackage.model_validate_json(message["Body"]) == stored == package
    assert message["MessageAttributes"]["urgency"]["StringValue"] == "high"
    assert [r.value for r in package.reasons] == ["business_rule_conflict", "frustration"]
    assert package.next_action.startswith("Review the policy exception for the return: not delivered yet")
    record = sessions.get(session_id)
    assert record is not None and record.status == "handed_off"

    # When the customer writes again, and an agent lists, claims and replies
    service.append_customer_message(session_id, "Hello? Anyone?")
    listed = list_until_found(service, package.handoff_id)
    claimed = service.claim(AGENT, package.handoff_id)
    service.reply(AGENT, package.handoff_id, "Hi James, I have approved the refund as an exception.")

    # Then the agent saw the case with the follow-up, and the customer sees the reply
    assert listed.messages[0].text == "Hello? Anyone?"
    assert (claimed.status, claimed.claimed_by) == (HandoffStatus.CLAIMED, "agent-alice")
    view = service.customer_view(session_id, "james_li_5688")
    assert view is not None
    assert [(m.role, m.text) for m in view.messages] == [
        (MessageRole.CUSTOMER, "Hello? Anyone?"),
        (MessageRole.AGENT, "Hi James, I have approved the refund as an exception.")]

    # When the agent closes the case
    closed = service.close(AGENT, package.handoff_id)

    # Then it is closed, the session is active again, and the next turn takes the lease as usual
    assert closed.status is HandoffStatus.CLOSED
    record = sessions.get(session_id)
    assert record is not None and record.status == "active"
    assert service.active_for_session(session_id) is None
    sessions.release(sessions.begin_turn(session_id, "james_li_5688", None))


#: Handoffs of earlier runs ahead of the one received: more than a walk that hid each message
#: for 5 s could pass (ten messages every 0.2 s) before the first ones were visible again.
EARLIER_HANDOFFS = 300


def test_a_handoff_behind_hundreds_of_others_is_received_and_the_others_are_released(
        stack: tuple[LocalResources, Any], own_queue: str) -> None:
    _, aws = stack
    publisher = SqsHandoffPublisher(aws.sqs, own_queue)
    state = refused_refund(f"it-handoff-{uuid.uuid4().hex[:12]}")
    decision = evaluate(signals_from_state(state))
    assert decision is not None
    now = datetime.now(UTC)
    # Given a handoff queue holding hundreds of handoffs of earlier runs
    for _ in range(EARLIER_HANDOFFS):
        publisher.publish(build_package(state, decision, handoff_id=uuid.uuid4().hex, now=now))

    # When one more handoff is published, and received by its id
    package = build_package(state, decision, handoff_id=uuid.uuid4().hex, now=now)
    publisher.publish(package)
    message = receive_handoff(aws, own_queue, package.handoff_id)

    # Then it is that handoff's message, and every other one is visible again at once (the support
    # team's tooling is not kept from them), none taken from the queue
    assert HandoffPackage.model_validate_json(message["Body"]) == package
    counts = aws.sqs.get_queue_attributes(
        QueueUrl=own_queue,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert (int(counts["ApproximateNumberOfMessages"]),
            int(counts["ApproximateNumberOfMessagesNotVisible"])) == (EARLIER_HANDOFFS, 0)
