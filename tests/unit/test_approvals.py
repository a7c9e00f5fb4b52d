"""Human approvals on DynamoDB (`moto.mock_aws`, the handoffs table built from template.yaml):
create, decide (agents only, idempotent, conflicting, expired), read, and the pending queue."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from csagent.approvals.models import Approval, ApprovalExpired, ApprovalStatus, Decision
from csagent.approvals.repository import DynamoDBApprovals
from csagent.approvals.service import ApprovalService
from csagent.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from csagent.domain.models import Principal
from devstack.template import LocalResources, create_resources, local_resources

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
CUSTOMER = "james_li_5688"
ALICE = Principal(subject="agent-alice", roles=frozenset({"agent"}))
BOB = Principal(subject="agent-bob", roles=frozenset({"agent"}))
START = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(scope="module")
def resources() -> LocalResources:
    """The handoffs table (where approvals live), resolved from template.yaml."""
    everything = local_resources(ROOT / "template.yaml", stack_name="csagent-local")
    return replace(everything, buckets=(), queues=(), tables=(everything.table("HandoffsTable"),))


@pytest.fixture
def ddb(monkeypatch: pytest.MonkeyPatch, resources: LocalResources) -> Iterator[Any]:
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL") or v == "AWS_PROFILE"]:
        monkeypatch.delenv(var)
    with mock_aws():
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="testing",
                                        aws_secret_access_key="testing")
        create_resources(session, resources)
        yield session.client("dynamodb")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def approvals(ddb: Any, clock: FakeClock) -> ApprovalService:
    return ApprovalService(DynamoDBApprovals(ddb, "csagent-local-handoffs"), clock=clock, ttl_s=3600)


@pytest.fixture
def atomic_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB applies each conditional write atomically; moto's in-process backend checks and
    writes in two steps, so two threads can both pass a check. One lock restores the guarantee."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.RLock()
    for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
        original: Callable[..., Any] = getattr(DynamoDBBackend, name)

        def locked(self: Any, *args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            with lock:
                return _original(self, *args, **kwargs)

        monkeypatch.setattr(DynamoDBBackend, name, locked)


def refund(approvals: ApprovalService, **overrides: Any) -> Approval:
    args: dict[str, Any] = {"session_id": "s-1", "customer_id": CUSTOMER, "action": "refund",
                            "summary": "Refund $249.99 for order #W2611340 (headphones, damaged)",
                            "amount": "249.99"}
    return approvals.create(**{**args, **overrides})


# ----------------------------------------------------------------------------------------------
# Create and read
# ----------------------------------------------------------------------------------------------
def test_a_new_approval_is_pending_until_its_expiry(approvals: ApprovalService, ddb: Any) -> None:
    # Given a refund that needs a human decision
    # When the approval is created
    approval = refund(approvals)
    # Then it is pending, expires after the configured TTL, and reads back exactly (amount to the cent)
    assert approval.status is ApprovalStatus.PENDING
    assert approval.expires_at == START + timedelta(hours=1)
    assert approvals.get(approval.approval_id) == approval
    assert approval.amount == Decimal("249.99")
    item = ddb.get_item(TableName="csagent-local-handoffs",
                        Key={"handoff_id": {"S": f"approval#{approval.approval_id}"}})["Item"]
    assert (item["kind"], item["amount"]) == ({"S": "approval"}, {"N": "249.99"})


def test_an_explicit_expiry_is_kept(approvals: ApprovalService) -> None:
    # Given an expiry ten minutes out
    expires = START + timedelta(minutes=10)
    # When the approval is created with it / Then that is its expiry
    assert refund(approvals, expires_at=expires).expires_at == expires


@pytest.mark.parametrize("overrides", [
    {"expires_at": START - timedelta(seconds=1)}, {"amount": "-5"}, {"amount": "12.345"},
    {"amount": "lots"}, {"action": ""}, {"summary": ""},
], ids=["expired-already", "negative", "sub-cent", "not-a-number", "no-action", "no-summary"])
def test_an_invalid_approval_request_is_refused(approvals: ApprovalService,
                                                overrides: dict[str, Any]) -> None:
    # Given a request with a past expiry, a bad amount or missing words
    # When it is created / Then it is invalid input
    with pytest.raises(InvalidInput):
        refund(approvals, **overrides)


def test_creating_with_the_same_idempotency_key_returns_the_same_approval(approvals: ApprovalService) -> None:
    # Given an approval created for task t2 of a turn
    first = refund(approvals, idempotency_key="turn-3:t2")
    # When the turn is re-run and asks again with the same key
    second = refund(approvals, idempotency_key="turn-3:t2")
    # Then the same approval comes back (no duplicate for the agents)
    assert second == first
    assert len(approvals.list_pending(ALICE).items) == 1


def test_reusing_an_idempotency_key_for_a_different_request_is_a_conflict(approvals: ApprovalService) -> None:
    # Given an approval created with a key
    refund(approvals, idempotency_key="turn-3:t2")
    # When the same key asks for a different amount / Then it is refused
    with pytest.raises(Conflict):
        refund(approvals, idempotency_key="turn-3:t2", amount="999.00")


def test_an_unknown_or_malformed_approval_id(approvals: ApprovalService) -> None:
    # Given no approval with this id, and an id of the wrong shape
    # When they are read / Then not found, and invalid input
    with pytest.raises(NotFound):
        approvals.get("0" * 32)
    with pytest.raises(InvalidInput):
        approvals.get("approval#x")


# ----------------------------------------------------------------------------------------------
# Deciding
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("decision", "status"), [(Decision.APPROVE, ApprovalStatus.APPROVED),
                                                  ("reject", ApprovalStatus.REJECTED)])
def test_an_agent_decides_a_pending_approval(approvals: ApprovalService, clock: FakeClock,
                                             decision: Decision | str, status: ApprovalStatus) -> None:
    # Given a pending approval
    approval = refund(approvals)
    clock.advance(minutes=5)
    # When Alice decides it, with a note
    decided = approvals.decide(ALICE, approval.approval_id, decision, "  checked the photos  ")
    # Then the decision, who made it, when and why are recorded
    assert (decided.status, decided.decided_by, decided.decided_at, decided.note) == (
        status, "agent-alice", START + timedelta(minutes=5), "checked the photos")
    assert approvals.get(approval.approval_id) == decided


def test_approving_twice_returns_the_recorded_decision(approvals: ApprovalService, clock: FakeClock) -> None:
    # Given an approval Alice approved
    approval = refund(approvals)
    first = approvals.decide(ALICE, approval.approval_id, Decision.APPROVE, "ok")
    clock.advance(minutes=1)
    # When Bob approves it too (a double click, a second agent)
    second = approvals.decide(BOB, approval.approval_id, Decision.APPROVE, "also ok")
    # Then nothing changes: Alice's decision, time and note stand
    assert second == first
    assert approvals.get(approval.approval_id) == first


def test_the_other_decision_after_a_decision_is_a_conflict(approvals: ApprovalService) -> None:
    # Given an approval Alice approved
    approval = refund(approvals)
    approvals.decide(ALICE, approval.approval_id, Decision.APPROVE)
    # When Bob rejects it / Then it is a conflict naming the decision, and it stays approved
    with pytest.raises(Conflict, match="already approved by agent-alice"):
        approvals.decide(BOB, approval.approval_id, Decision.REJECT)
    assert approvals.get(approval.approval_id).status is ApprovalStatus.APPROVED


def test_deciding_after_the_expiry_records_it_expired(approvals: ApprovalService, clock: FakeClock) -> None:
    # Given a pending approval past its expiry
    approval = refund(approvals)
    clock.advance(hours=1)
    # When Alice approves it / Then it has expired, and is recorded so
    with pytest.raises(ApprovalExpired):
        approvals.decide(ALICE, approval.approval_id, Decision.APPROVE)
    expired = approvals.get(approval.approval_id)
    assert (expired.status, expired.decided_by) == (ApprovalStatus.EXPIRED, None)
    # And a later decision is refused the same way
    with pytest.raises(ApprovalExpired):
        approvals.decide(BOB, approval.approval_id, Decision.REJECT)


def test_an_expired_approval_reads_as_expired_before_anyone_decides(approvals: ApprovalService,
                                                                     clock: FakeClock) -> None:
    # Given a pending approval nobody decided
    approval = refund(approvals)
    # When it is read just before and at its expiry
    clock.advance(minutes=59, seconds=59)
    before = approvals.get(approval.approval_id).status
    clock.advance(seconds=1)
    at_expiry = approvals.get(approval.approval_id).status
    # Then it turns expired exactly at expires_at (the graph resuming sees it)
    assert (before, at_expiry) == (ApprovalStatus.PENDING, ApprovalStatus.EXPIRED)


def test_a_decision_stands_after_the_expiry(approvals: ApprovalService, clock: FakeClock) -> None:
    # Given an approval approved in time
    approval = refund(approvals)
    approvals.decide(ALICE, approval.approval_id, Decision.APPROVE)
    # When it is read and approved again after the expiry
    clock.advance(days=2)
    # Then it is still approved
    assert approvals.get(approval.approval_id).status is ApprovalStatus.APPROVED
    assert approvals.decide(ALICE, approval.approval_id, Decision.APPROVE).status is ApprovalStatus.APPROVED


def test_customers_cannot_decide(approvals: ApprovalService) -> None:
    # Given the customer the refund is for
    approval = refund(approvals)
    customer = Principal(subject=CUSTOMER, customer_id=CUSTOMER)
    # When he approves his own refund / Then it is forbidden, and it stays pending
    with pytest.raises(Forbidden):
        approvals.decide(customer, approval.approval_id, Decision.APPROVE)
    assert approvals.get(approval.approval_id).status is ApprovalStatus.PENDING


@pytest.mark.parametrize(("decision", "note"), [("maybe", None), ("approve", "x" * 1001)])
def test_a_malformed_decision_is_invalid(approvals: ApprovalService, decision: str, note: str | None) -> None:
    # Given a pending approval
    approval = refund(approvals)
    # When it is decided with an unknown decision or an overlong note / Then it is invalid input
    with pytest.raises(InvalidInput):
        approvals.decide(ALICE, approval.approval_id, decision, note)
    assert approvals.get(approval.approval_id).status is ApprovalStatus.PENDING


@pytest.mark.usefixtures("atomic_moto")
def test_of_an_approval_and_a_rejection_at_once_exactly_one_wins(approvals: ApprovalService) -> None:
    # Given a pending approval, Alice about to approve and Bob about to reject
    approval = refund(approvals)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def decide(agent: Principal, decision: Decision) -> None:
        barrier.wait()
        try:
            outcomes[agent.subject] = approvals.decide(agent, approval.approval_id, decision).status.value
        except Conflict:
            outcomes[agent.subject] = "conflict"

    # When both decide at the same moment
    threads = [threading.Thread(target=decide, args=(ALICE, Decision.APPROVE)),
               threading.Thread(target=decide, args=(BOB, Decision.REJECT))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # Then one decision is recorded and the other agent is told it lost
    final = approvals.get(approval.approval_id)
    assert sorted(outcomes.values()) == sorted([final.status.value, "conflict"])
    assert outcomes[final.decided_by or ""] == final.status.value


# ----------------------------------------------------------------------------------------------
# The pending queue
# ----------------------------------------------------------------------------------------------
def test_agents_see_pending_approvals_oldest_first(approvals: ApprovalService, clock: FakeClock) -> None:
    # Given three approvals, the middle one already decided
    first = refund(approvals)
    clock.advance(seconds=1)
    second = refund(approvals, amount="10.00")
    clock.advance(seconds=1)
    third = refund(approvals, amount="20.00")
    approvals.decide(ALICE, second.approval_id, Decision.REJECT)
    # When an agent lists pending approvals
    page = approvals.list_pending(BOB)
    # Then the undecided ones come oldest first, counted
    assert [a.approval_id for a in page.items] == [first.approval_id, third.approval_id]
    assert page.total == 2


def test_customers_cannot_list_approvals(approvals: ApprovalService) -> None:
    # Given a pending approval
    refund(approvals)
    # When a customer lists approvals / Then it is forbidden
    with pytest.raises(Forbidden):
        approvals.list_pending(Principal(subject=CUSTOMER, customer_id=CUSTOMER))
