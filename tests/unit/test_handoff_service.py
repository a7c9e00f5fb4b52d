"""Human handoff on DynamoDB and SQS (`moto.mock_aws`, tables and queues built from
template.yaml): the package an agent receives, opening a handoff from a turn, later customer
messages, and the agents' list / claim / reply / close, with their permission and conflict
rules."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from csagent.adapters.sessions_dynamodb import DynamoDBSessions
from csagent.approvals.repository import DynamoDBApprovals
from csagent.approvals.service import ApprovalService
from csagent.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from csagent.domain.models import Principal
from csagent.handoff.package import HandoffPackage, HandoffStatus, MessageRole, build_package
from csagent.handoff.repository import DynamoDBHandoffs, SqsHandoffPublisher
from csagent.handoff.service import HandoffService
from csagent.handoff.triggers import HandoffDecision, HandoffReason, Urgency
from devstack.template import LocalResources, create_resources, local_resources

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
CUSTOMER = "james_li_5688"
OTHER_CUSTOMER = "emily_ito_1234"
ALICE = Principal(subject="agent-alice", roles=frozenset({"agent"}))
BOB = Principal(subject="agent-bob", roles=frozenset({"agent"}))
CUSTOMER_PRINCIPAL = Principal(subject=CUSTOMER, customer_id=CUSTOMER)
EXPLICIT = HandoffDecision(reasons=(HandoffReason.EXPLICIT_REQUEST,), urgency=Urgency.LOW)


# ----------------------------------------------------------------------------------------------
# Fixtures
# ----------------------------------------------------------------------------------------------
class FakeClock:
    """A clock that moves only when told to (one second per reading keeps messages ordered)."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@dataclass
class Stack:
    session: boto3.session.Session
    resources: LocalResources
    sessions: DynamoDBSessions
    store: DynamoDBHandoffs
    service: HandoffService
    clock: FakeClock
    queue_url: str

    def service_with(self, publisher: Any) -> HandoffService:
        return HandoffService(self.store, publisher, clock=self.clock)

    def queued(self) -> list[dict[str, Any]]:
        sqs = self.session.client("sqs")
        received = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10,
                                       MessageAttributeNames=["All"])
        return received.get("Messages", [])

    def stored(self, handoff_id: str) -> HandoffPackage:
        package = self.store.get(handoff_id)
        assert package is not None, f"handoff {handoff_id} is not stored"
        return package

    def session_item(self, session_id: str) -> dict[str, Any]:
        return self.session.client("dynamodb").get_item(
            TableName=self.resources.table("SessionsTable").table_name,
            Key={"session_id": {"S": session_id}})["Item"]


@pytest.fixture(scope="module")
def resources() -> LocalResources:
    """Only what handoffs use, resolved from template.yaml: the two tables and the queue + DLQ."""
    everything = local_resources(ROOT / "template.yaml", stack_name="csagent-local")
    return replace(everything, buckets=(),
                   tables=(everything.table("HandoffsTable"), everything.table("SessionsTable")),
                   queues=(everything.queue("HandoffDLQ"), everything.queue("HandoffQueue")))


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch, resources: LocalResources) -> Iterator[Stack]:
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL") or v == "AWS_PROFILE"]:
        monkeypatch.delenv(var)
    with mock_aws():
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="testing",
                                        aws_secret_access_key="testing")
        create_resources(session, resources)
        ddb = session.client("dynamodb")
        queue_url = session.client("sqs").get_queue_url(QueueName="csagent-local-handoffs")["QueueUrl"]
        store = DynamoDBHandoffs(ddb, resources.table("HandoffsTable").table_name,
                                 resources.table("SessionsTable").table_name)
        clock = FakeClock()
        service = HandoffService(store, SqsHandoffPublisher(session.client("sqs"), queue_url), clock=clock)
        yield Stack(session, resources, DynamoDBSessions(ddb, resources.table("SessionsTable").table_name),
                    store, service, clock, queue_url)


@pytest.fixture
def atomic_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB applies each conditional write atomically; moto's in-process backend checks the
    condition and writes in two steps, so two threads can both pass the check. This serialises
    moto's writes with one lock, restoring the guarantee the code relies on in AWS."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.RLock()
    for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
        original: Callable[..., Any] = getattr(DynamoDBBackend, name)

        def locked(self: Any, *args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            with lock:
                return _original(self, *args, **kwargs)

        monkeypatch.setattr(DynamoDBBackend, name, locked)


def turn_state(session_id: str = "s-1", customer_id: str = CUSTOMER, **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "customer_id": customer_id, "lang": "en",
            "text": "I want to talk to a person about order #W2611340", **extra}


def open_handoff(stack: Stack, session_id: str = "s-1", customer_id: str = CUSTOMER,
                 decision: HandoffDecision = EXPLICIT, **state: Any) -> HandoffPackage:
    """A customer turn that ends in a handoff: take the session's lease, open, give the lease back."""
    lease = stack.sessions.begin_turn(session_id, customer_id, None)
    package = stack.service.open(turn_state(session_id, customer_id, **state), decision)
    stack.sessions.release(lease)
    return package


def claimed_handoff(stack: Stack, agent: Principal = ALICE) -> HandoffPackage:
    return stack.service.claim(agent, open_handoff(stack).handoff_id)


# ----------------------------------------------------------------------------------------------
# The package
# ----------------------------------------------------------------------------------------------
BLOCKED_RETURN: dict[str, Any] = {
    "tasks": [{"task_id": "t1", "task_type": "tracking", "tool": "predefined_cypher", "args": {}},
              {"task_id": "t2", "task_type": "return_items", "tool": "customer_actions",
               "args": {"order_id": "#W2611340"}}],
    "results": {
        "t1": {"status": "success", "latency_ms": 41.5,
               "data": {"rows": [{"order_id": "#W2611340", "email": "james.li@example.com",
                                  "note": f"shared cart with {OTHER_CUSTOMER}"}]}},
        "t2": {"status": "failed", "latency_ms": 12.0,
               "error": {"type": "business_rule_violation",
                         "message": "order #W2611340 is not delivered yet, so it cannot be returned"}},
    },
}


def test_the_package_lists_every_task_with_its_outcome_and_suggests_the_next_step() -> None:
    # Given a turn where tracking worked and the return was refused by policy
    state = turn_state(text="Where is #W2611340? And I want to return it.", **BLOCKED_RETURN)
    decision = HandoffDecision(reasons=(HandoffReason.BUSINESS_RULE_CONFLICT,), urgency=Urgency.NORMAL)
    # When the package is built
    package = build_package(state, decision, handoff_id="a" * 32, now=datetime(2025, 3, 1, tzinfo=UTC))
    # Then the agent sees the request, each task, a plain summary and the policy review to do
    assert package.requests == ["Where is #W2611340? And I want to return it."]
    assert [(t.task_id, t.status, t.error_type, t.latency_ms) for t in package.tasks] == [
        ("t1", "success", None, 41.5), ("t2", "failed", "business_rule_violation", 12.0)]
    assert package.summary == (
        "Customer wrote: \u201cWhere is #W2611340? And I want to return it.\u201d "
        "The assistant tried 2 task(s): tracking lookup done; return was blocked by store policy. "
        "Handed off because a store policy blocked a request.")
    assert package.next_action.startswith(
        "Review the policy exception for the return: order #W2611340 is not delivered yet")
    assert (package.status, package.claimed_by, package.messages) == (HandoffStatus.OPEN, None, [])


def test_the_package_never_carries_tool_result_data() -> None:
    # Given a turn whose tool results hold an e-mail address and another customer's id
    state = turn_state(**BLOCKED_RETURN)
    # When the package is built and serialised
    package = build_package(state, EXPLICIT, handoff_id="a" * 32, now=datetime(2025, 3, 1, tzinfo=UTC))
    body = package.model_dump_json()
    # Then neither appears: only statuses and errors are copied, never result data
    assert OTHER_CUSTOMER not in body
    assert "james.li@example.com" not in body
    assert package.customer_id == CUSTOMER


@pytest.mark.parametrize(("reasons", "results", "expected"), [
    ((HandoffReason.REPEATED_FAILURE,),
     {"t1": {"status": "failed", "attempts": 3, "error": {"type": "timeout", "message": "read timed out"}}},
     "Check the tracking system: the tracking lookup timed out 3 time(s)."),
    ((HandoffReason.EXPLICIT_REQUEST,), {"t1": {"status": "success"}},
     "Answer the customer's question: \u201cI want to talk to a person about order #W2611340\u201d."),
    ((HandoffReason.FRUSTRATION,), {"t1": {"status": "success"}},
     "Acknowledge the customer's frustration, then resolve: "
     "\u201cI want to talk to a person about order #W2611340\u201d."),
], ids=["repeated-timeouts", "explicit-request", "frustration"])
def test_the_next_action_follows_from_what_went_wrong(reasons: tuple[HandoffReason, ...],
                                                      results: dict[str, Any], expected: str) -> None:
    # Given a tracking task with the given result, handed off for the given reason
    state = turn_state(tasks=[{"task_id": "t1", "task_type": "tracking", "tool": "predefined_cypher"}],
                       results=results)
    # When the package is built
    package = build_package(state, HandoffDecision(reasons=reasons, urgency=Urgency.HIGH),
                            handoff_id="a" * 32, now=datetime(2025, 3, 1, tzinfo=UTC))
    # Then the suggested next action fits the failure
    assert package.next_action.startswith(expected)


def test_a_package_without_a_customer_is_refused() -> None:
    # Given a state with no signed-in customer
    state = turn_state(customer_id="")
    # When a package is built / Then it is refused
    with pytest.raises(InvalidInput):
        build_package(state, EXPLICIT, handoff_id="a" * 32, now=datetime(2025, 3, 1, tzinfo=UTC))


# ----------------------------------------------------------------------------------------------
# Opening
# ----------------------------------------------------------------------------------------------
def test_opening_stores_the_package_queues_it_and_hands_the_session_off(stack: Stack) -> None:
    # Given a customer turn that needs a person
    # When the handoff is opened
    package = open_handoff(stack)
    # Then the stored package and the queued message are the same, and the session is handed off
    stored = stack.store.get(package.handoff_id)
    messages = stack.queued()
    assert stored == package
    assert len(messages) == 1
    assert HandoffPackage.model_validate_json(messages[0]["Body"]) == stored
    assert messages[0]["MessageAttributes"]["urgency"]["StringValue"] == "low"
    assert stack.service.active_for_session("s-1") == stored


def test_opening_keeps_the_session_item_readable_by_the_sessions_adapter(stack: Stack) -> None:
    # Given a session that has run one turn
    # When that turn opens a handoff
    package = open_handoff(stack)
    # Then the sessions adapter still reads the item: same owner and counters, status handed_off
    record = stack.sessions.get("s-1")
    item = stack.session_item("s-1")
    assert record is not None
    assert (record.owner, record.status, record.turn_count) == (CUSTOMER, "handed_off", 1)
    assert item["handoff_id"] == {"S": package.handoff_id}
    assert "lock_token" not in item


def test_opening_twice_on_a_session_returns_the_same_handoff(stack: Stack) -> None:
    # Given a session already handed off (e.g. the turn is retried after a crash)
    first = open_handoff(stack)
    # When the handoff is opened again
    lease = stack.sessions.begin_turn("s-1", CUSTOMER, None)
    second = stack.service.open(turn_state(), EXPLICIT)
    stack.sessions.release(lease)
    # Then it is the same case, queued once
    assert second.handoff_id == first.handoff_id
    assert len(stack.queued()) == 1


def test_a_handoff_cannot_be_filed_on_another_customers_session(stack: Stack) -> None:
    # Given a session that belongs to another customer
    stack.sessions.release(stack.sessions.begin_turn("s-other", OTHER_CUSTOMER, None))
    # When a handoff for James is opened on it
    with pytest.raises(NotFound):
        stack.service.open(turn_state("s-other", CUSTOMER), EXPLICIT)
    # Then nothing was stored or queued, and the session is untouched
    assert stack.service.active_for_session("s-other") is None
    assert stack.queued() == []
    assert stack.session_item("s-other")["status"] == {"S": "active"}


def test_a_queue_outage_does_not_lose_the_handoff(stack: Stack) -> None:
    # Given the handoff queue is unreachable when the handoff opens
    broken = stack.service_with(SqsHandoffPublisher(stack.session.client("sqs"),
                                                    stack.queue_url.replace("handoffs", "no-such-queue")))
    lease = stack.sessions.begin_turn("s-1", CUSTOMER, None)
    package = broken.open(turn_state(), EXPLICIT)
    stack.sessions.release(lease)
    assert stack.queued() == []
    # When the customer writes again and the queue is back
    stack.service.append_customer_message("s-1", "hello?")
    # Then the handoff was stored all along, agents could list it, and it is now queued
    assert [p.handoff_id for p in stack.service.list_open(ALICE).items] == [package.handoff_id]
    assert [json.loads(m["Body"])["handoff_id"] for m in stack.queued()] == [package.handoff_id]


# ----------------------------------------------------------------------------------------------
# Later customer messages
# ----------------------------------------------------------------------------------------------
def test_later_customer_messages_are_appended_to_the_open_handoff_in_order(stack: Stack) -> None:
    # Given a handed-off session
    package = open_handoff(stack)
    # When the customer writes twice more
    stack.service.append_customer_message("s-1", "It was a gift, by the way.")
    updated = stack.service.append_customer_message("s-1", "  Any news?  ")
    # Then both messages are on the case, oldest first, as customer messages
    assert [(m.role, m.text) for m in updated.messages] == [
        (MessageRole.CUSTOMER, "It was a gift, by the way."), (MessageRole.CUSTOMER, "Any news?")]
    assert updated.messages[0].at < updated.messages[1].at
    assert stack.store.get(package.handoff_id) == updated


def test_a_frustrated_follow_up_makes_the_case_urgent(stack: Stack) -> None:
    # Given a low-urgency handoff
    open_handoff(stack)
    # When the customer follows up angrily
    updated = stack.service.append_customer_message("s-1", "This is ridiculous, nobody answers!!")
    # Then the case becomes urgent
    assert updated.urgency is Urgency.HIGH


def test_appending_to_a_session_without_a_handoff_is_not_found(stack: Stack) -> None:
    # Given a session that was never handed off
    stack.sessions.release(stack.sessions.begin_turn("s-2", CUSTOMER, None))
    # When a customer message is appended / Then there is nothing to append to
    with pytest.raises(NotFound):
        stack.service.append_customer_message("s-2", "hello")


def test_the_graph_forwards_messages_only_on_a_handed_off_session(stack: Stack) -> None:
    # Given one handed-off session and one that is not
    open_handoff(stack, "s-1")
    stack.sessions.release(stack.sessions.begin_turn("s-2", CUSTOMER, None))
    # When the graph starts a turn on each
    forwarded = stack.service.forward_if_handed_off("s-1", "Still waiting for the refund")
    answered = stack.service.forward_if_handed_off("s-2", "Where is my order?")
    # Then the first message goes to the person, the second is the assistant's to answer
    assert forwarded is not None
    assert [m.text for m in forwarded.messages] == ["Still waiting for the refund"]
    assert answered is None


def test_a_message_racing_the_close_goes_back_to_the_assistant(stack: Stack) -> None:
    # Given a session still linked to a handoff that Alice closed a moment ago
    package = claimed_handoff(stack, ALICE)
    stack.store.close_unlinked(package.handoff_id, "agent-alice", stack.clock())
    # When the customer's message arrives
    forwarded = stack.service.forward_if_handed_off("s-1", "Thanks!")
    # Then it is not added to the closed case: the graph answers it (and the direct call says why)
    assert forwarded is None
    with pytest.raises(Conflict, match="closed"):
        stack.service.append_customer_message("s-1", "Thanks!")
    assert stack.stored(package.handoff_id).messages == []


def test_a_full_handoff_refuses_more_messages(stack: Stack) -> None:
    # Given a handoff that holds as many messages as allowed
    package = open_handoff(stack)
    small = HandoffService(stack.store, SqsHandoffPublisher(stack.session.client("sqs"), stack.queue_url),
                           clock=stack.clock, max_messages=2)
    small.append_customer_message("s-1", "one")
    small.append_customer_message("s-1", "two")
    # When one more is appended / Then it is refused, and the record stays within its size limit
    with pytest.raises(Conflict, match="already holds 2 messages"):
        small.append_customer_message("s-1", "three")
    assert [m.text for m in stack.stored(package.handoff_id).messages] == ["one", "two"]


# ----------------------------------------------------------------------------------------------
# The agents' desk
# ----------------------------------------------------------------------------------------------
def test_agents_list_open_handoffs_oldest_first(stack: Stack) -> None:
    # Given three handed-off sessions, the second one already claimed
    first = open_handoff(stack, "s-1")
    second = open_handoff(stack, "s-2")
    third = open_handoff(stack, "s-3")
    stack.service.claim(BOB, second.handoff_id)
    # When an agent lists open handoffs
    page = stack.service.list_open(ALICE)
    # Then the unclaimed ones come oldest first, counted
    assert [p.handoff_id for p in page.items] == [first.handoff_id, third.handoff_id]
    assert page.next_cursor is None and page.total == 2


def test_the_open_list_pages_with_a_cursor(stack: Stack) -> None:
    # Given three open handoffs
    opened = [open_handoff(stack, f"s-{i}").handoff_id for i in range(3)]
    # When an agent reads them two at a time
    first = stack.service.list_open(ALICE, limit=2)
    second = stack.service.list_open(ALICE, limit=2, cursor=first.next_cursor)
    # Then every handoff comes exactly once, in order; the first page tells how many there are in all
    assert [p.handoff_id for p in first.items + second.items] == opened
    assert (first.total, second.total) == (3, None)


def test_a_forged_cursor_is_rejected(stack: Stack) -> None:
    # Given a cursor that this API never returned
    # When it is used / Then the request is invalid
    with pytest.raises(InvalidInput):
        stack.service.list_open(ALICE, cursor="eyJoYW5kb2ZmX2lkIjogIngifQ")


def test_handoffs_and_approvals_share_the_table_but_not_their_queues(stack: Stack) -> None:
    # Given an open handoff and a pending approval in the same table
    handoff = open_handoff(stack)
    approvals = ApprovalService(DynamoDBApprovals(stack.session.client("dynamodb"), "csagent-local-handoffs"),
                                clock=stack.clock)
    approval = approvals.create("s-1", CUSTOMER, "refund", "Refund $250 for #W2611340", "250.00")
    # When agents read each queue, and look each record up by the other's id
    # Then each queue holds only its own kind, and ids never cross over
    assert [p.handoff_id for p in stack.service.list_open(ALICE).items] == [handoff.handoff_id]
    assert [a.approval_id for a in approvals.list_pending(ALICE).items] == [approval.approval_id]
    assert (stack.service.list_open(ALICE).total, approvals.list_pending(ALICE).total) == (1, 1)
    assert stack.store.get(f"approval#{approval.approval_id}") is None
    with pytest.raises(NotFound):
        approvals.get(handoff.handoff_id)


@pytest.mark.parametrize("action", ["list_open", "get", "claim", "reply", "close"])
def test_customers_cannot_use_the_agents_desk(stack: Stack, action: str) -> None:
    # Given an open handoff and a signed-in customer (even its own customer)
    package = open_handoff(stack)
    calls: dict[str, Callable[[], Any]] = {
        "list_open": lambda: stack.service.list_open(CUSTOMER_PRINCIPAL),
        "get": lambda: stack.service.get(CUSTOMER_PRINCIPAL, package.handoff_id),
        "claim": lambda: stack.service.claim(CUSTOMER_PRINCIPAL, package.handoff_id),
        "reply": lambda: stack.service.reply(CUSTOMER_PRINCIPAL, package.handoff_id, "hi"),
        "close": lambda: stack.service.close(CUSTOMER_PRINCIPAL, package.handoff_id),
    }
    # When the customer calls an agent function / Then it is forbidden, and the case is unchanged
    with pytest.raises(Forbidden):
        calls[action]()
    assert stack.store.get(package.handoff_id) == package


def test_an_agent_claims_an_open_handoff(stack: Stack) -> None:
    # Given an open handoff
    package = open_handoff(stack)
    # When Alice claims it
    claimed = stack.service.claim(ALICE, package.handoff_id)
    # Then it is hers, and claiming again changes nothing
    assert (claimed.status, claimed.claimed_by) == (HandoffStatus.CLAIMED, "agent-alice")
    assert stack.service.claim(ALICE, package.handoff_id) == claimed


def test_a_second_agent_cannot_claim_a_claimed_handoff(stack: Stack) -> None:
    # Given a handoff Alice claimed
    package = claimed_handoff(stack, ALICE)
    # When Bob claims it / Then he gets a conflict, and it stays Alice's
    with pytest.raises(Conflict, match="another agent"):
        stack.service.claim(BOB, package.handoff_id)
    assert stack.stored(package.handoff_id).claimed_by == "agent-alice"


@pytest.mark.usefixtures("atomic_moto")
def test_of_two_agents_claiming_at_once_exactly_one_wins(stack: Stack) -> None:
    # Given an open handoff and two agents ready to claim it at the same moment
    package = open_handoff(stack)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def claim(agent: Principal) -> None:
        barrier.wait()
        try:
            outcomes[agent.subject] = stack.service.claim(agent, package.handoff_id).claimed_by or ""
        except Conflict:
            outcomes[agent.subject] = "conflict"

    # When both claim concurrently
    threads = [threading.Thread(target=claim, args=(agent,)) for agent in (ALICE, BOB)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # Then one owns it and the other was told it is taken; the record names the winner
    winner = stack.stored(package.handoff_id).claimed_by or ""
    assert sorted(outcomes.values()) == sorted([winner, "conflict"])
    assert outcomes[winner] == winner


def test_claiming_an_unknown_or_malformed_handoff(stack: Stack) -> None:
    # Given no handoff with this id, and an id of the wrong shape
    # When they are claimed / Then not found, and invalid input
    with pytest.raises(NotFound):
        stack.service.claim(ALICE, "0" * 32)
    with pytest.raises(InvalidInput):
        stack.service.claim(ALICE, "../../etc")


def test_the_claiming_agents_reply_reaches_the_customer(stack: Stack) -> None:
    # Given a handoff Alice claimed, where the customer wrote once more
    package = claimed_handoff(stack, ALICE)
    stack.service.append_customer_message("s-1", "Is anyone there?")
    # When Alice replies
    stack.service.reply(ALICE, package.handoff_id, "Hi James, I'm looking at your order now.")
    # Then the customer's view of the session shows the thread in order, without the agent's identity
    view = stack.service.customer_view("s-1", CUSTOMER)
    assert view is not None
    assert view.status is HandoffStatus.CLAIMED
    assert [(m.role, m.text) for m in view.messages] == [
        (MessageRole.CUSTOMER, "Is anyone there?"),
        (MessageRole.AGENT, "Hi James, I'm looking at your order now.")]
    assert "agent-alice" not in view.model_dump_json()
    assert stack.service.get(ALICE, package.handoff_id).messages[-1].author == "agent-alice"


@pytest.mark.parametrize(("claim_first", "message"), [(False, "claim this handoff first"),
                                                      (True, "another agent")])
def test_only_the_claiming_agent_can_reply(stack: Stack, claim_first: bool, message: str) -> None:
    # Given a handoff nobody claimed, or one Alice claimed
    package = claimed_handoff(stack, ALICE) if claim_first else open_handoff(stack)
    # When Bob replies / Then he is refused, and nothing is added
    with pytest.raises(Conflict, match=message):
        stack.service.reply(BOB, package.handoff_id, "Hello")
    assert stack.stored(package.handoff_id).messages == []


def test_another_customer_cannot_see_the_handoff_thread(stack: Stack) -> None:
    # Given James's handed-off session
    open_handoff(stack)
    # When Emily asks for its handoff view / Then it is forbidden
    with pytest.raises(Forbidden):
        stack.service.customer_view("s-1", OTHER_CUSTOMER)


def test_closing_returns_the_session_to_the_assistant(stack: Stack) -> None:
    # Given a handoff Alice claimed and answered
    package = claimed_handoff(stack, ALICE)
    stack.service.reply(ALICE, package.handoff_id, "Your refund has been approved.")
    # When she closes it
    closed = stack.service.close(ALICE, package.handoff_id)
    # Then the case is closed, the session is active with no open handoff, the customer still
    # sees the reply, and the next turn takes the lease as usual
    item = stack.session_item("s-1")
    assert (closed.status, closed.claimed_by) == (HandoffStatus.CLOSED, "agent-alice")
    assert item["status"] == {"S": "active"} and "handoff_id" not in item
    assert stack.service.active_for_session("s-1") is None
    view = stack.service.customer_view("s-1", CUSTOMER)
    assert view is not None and view.status is HandoffStatus.CLOSED
    assert [m.text for m in view.messages] == ["Your refund has been approved."]
    stack.sessions.release(stack.sessions.begin_turn("s-1", CUSTOMER, None))


def test_closing_twice_is_a_no_op(stack: Stack) -> None:
    # Given a closed handoff
    package = claimed_handoff(stack, ALICE)
    closed = stack.service.close(ALICE, package.handoff_id)
    # When it is closed again / Then the same record comes back
    assert stack.service.close(ALICE, package.handoff_id) == closed


def test_only_the_claiming_agent_can_close(stack: Stack) -> None:
    # Given a handoff Alice claimed
    package = claimed_handoff(stack, ALICE)
    # When Bob closes it / Then he is refused, and the session stays handed off
    with pytest.raises(Conflict, match="another agent"):
        stack.service.close(BOB, package.handoff_id)
    assert stack.session_item("s-1")["status"] == {"S": "handed_off"}


def test_a_customer_message_after_the_close_goes_back_to_the_assistant(stack: Stack) -> None:
    # Given a handoff Alice closed
    package = claimed_handoff(stack, ALICE)
    stack.service.close(ALICE, package.handoff_id)
    # When the customer writes again / Then there is no open handoff to add it to (the graph answers)
    with pytest.raises(NotFound):
        stack.service.append_customer_message("s-1", "thanks!")
    assert stack.stored(package.handoff_id).messages == []
