"""A human handoff end to end on the moto server of the local stack (the tables and queues of
template.yaml): a customer turn opens it, the queued message is the stored package, an agent
lists, claims, replies and closes it, the customer sees the reply and the session is active again.

Needs the moto server (`make up`, or MOTO_PORT pointing at one); provisions it idempotently.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from csagent.adapters.sessions_dynamodb import DynamoDBSessions
from csagent.domain.models import Principal
from csagent.handoff.package import HandoffPackage, HandoffStatus, MessageRole
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


def receive_handoff(aws: Any, queue_url: str, handoff_id: str, attempts: int = 10) -> dict[str, Any]:
    """The queued message of `handoff_id`. Other handoffs on a shared server (a long-lived `make up`
    stack keeps those of every earlier run) are left alone: each is hidden for a few seconds while
    the rest of the queue is read, so the search walks the whole queue, however deep."""
    attributes = aws.sqs.get_queue_attributes(QueueUrl=queue_url,
                                              AttributeNames=["ApproximateNumberOfMessages"])
    depth = int(attributes["Attributes"]["ApproximateNumberOfMessages"])
    for _ in range(attempts + depth // 10):
        received = aws.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                           VisibilityTimeout=5, MessageAttributeNames=["All"])
        for message in received.get("Messages", []):
            if HandoffPackage.model_validate_json(message["Body"]).handoff_id == handoff_id:
                aws.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
                return dict(message)
        time.sleep(0.2)
    raise AssertionError(f"handoff {handoff_id} never reached the queue")


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


def test_a_handoff_from_open_to_close(stack: tuple[LocalResources, Any], queue_url: str) -> None:
    resources, aws = stack
    sessions_table = resources.table("SessionsTable").table_name
    sessions = DynamoDBSessions(aws.dynamodb, sessions_table)
    store = DynamoDBHandoffs(aws.dynamodb, resources.table("HandoffsTable").table_name, sessions_table)
    service = HandoffService(store, SqsHandoffPublisher(aws.sqs, queue_url))
    session_id = f"it-handoff-{uuid.uuid4().hex[:12]}"

    # Given a customer turn whose refund was refused by policy, in angry words after an angry turn
    state = {
        "session_id": session_id, "customer_id": "james_li_5688", "lang": "en", "frustrated_turns": 1,
        "text": "This is unacceptable, refund order #W2611340 now",
        "route": "knowledge_and_actions",
        "clauses": [{"text": "refund order #W2611340", "intent": "return_request"}],
        "tasks": [{"task_id": "t1", "task_type": "return_items", "tool": "customer_actions",
                   "args": {"order_id": "#W2611340", "amount": 310.0}}],
        "results": {"t1": {"status": "failed", "latency_ms": 18.2,
                           "error": {"type": "business_rule_violation", "message": "not delivered yet"}}},
    }
    decision = evaluate(signals_from_state(state))
    assert decision is not None
    lease = sessions.begin_turn(session_id, "james_li_5688", None)

    # When the turn opens the handoff
    package = service.open(state, decision)
    sessions.release(lease)

    # Then the queued message is exactly the stored package, and the session is handed off
    message = receive_handoff(aws, queue_url, package.handoff_id)
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
