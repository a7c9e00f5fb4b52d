"""Exactly-once customer actions: the idempotency key, the Powertools idempotency layer on a
DynamoDB table built from `template.yaml` (in `moto.mock_aws`), and `execute` on a fake graph -
a replay never calls the executor or the graph twice, the policy is checked again on the current
facts, and failures are typed results. No network."""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from moto import mock_aws
from neo4j.exceptions import ServiceUnavailable
from pydantic import ValidationError

from csagent.actions import execute as ex
from csagent.actions.idempotency import KEY_PREFIX, PowertoolsIdempotency, dynamodb_persistence
from csagent.actions.policy import ActionName
from csagent.actions.proposals import ActionProposal, idempotency_key
from csagent.adapters.neo4j_graph import classify_neo4j_error
from csagent.config import Settings
from csagent.domain.models import ErrorType, Task, TaskStatus, ToolResult
from csagent.domain.tool_data import ActionDoneData, ActionProposedData
from csagent.resilience.faults import neo4j_timeout
from csagent.tools import customer_actions as tool
from csagent.tools.context import ToolContext
from csagent.tools.events import ToolEvent, malformed_event_result
from devstack.template import create_resources, local_resources

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
NOW = datetime(2024, 7, 1, 12, 0, tzinfo=UTC)
CUSTOMER = "cust_1"
TASK = Task(task_id="t1", task_type="cancel_order", tool=tool.TOOL_NAME)


# ------------------------------------------------------------------------------ test doubles
def pending_order(status: str = "pending") -> dict[str, Any]:
    """Facts of one pending order paid $100.00 by gift card (balance $20.00)."""
    return {
        "customer_id": CUSTOMER,
        "order": {"order_id": "#W1000001", "status": status, "total": 100.0},
        "ship_to": {"address1": "1 Old Road", "address2": "", "city": "Austin", "state": "TX", "zip": "73301",
                    "country": "USA"},
        "lines": [{"line_id": "#W1000001/1", "line_no": 1, "item_id": "111", "name": "Grill",
                   "price": 100.0}],
        "transactions": [{"transaction_id": "#W1000001/1", "seq": 1, "type": "payment", "amount": 100.0,
                          "payment_method_id": "gift_card_1"}],
        "payment_methods": [{"payment_method_id": "gift_card_1", "source": "gift_card", "balance": 20.0}],
    }


class FakeStore:
    """A `GraphStore` holding one order. Reads answer from its facts (scoped to the customer);
    the write follows the real transaction's guard: an existing audit key wins, then the
    compare-and-set on the facts, then the status change. `on_write` runs before each write
    (a concurrent change)."""

    def __init__(self, facts: dict[str, Any]) -> None:
        self.facts = facts
        self.audits: dict[str, dict[str, Any]] = {}
        self.reads = 0
        self.writes = 0
        self.on_write: Callable[[FakeStore], None] | None = None

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        self.reads += 1
        params = params or {}
        done = self.audits.get(params.get("idempotency_key") or "")
        mine = params["customer_id"] == self.facts["customer_id"]
        found = mine and params.get("order_id") == self.facts["order"]["order_id"]
        return [{"facts": copy.deepcopy(self.facts) if found else None,
                 "done": done if done and done["actor_customer_id"] == params["customer_id"] else None}]

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        self.writes += 1
        params = params or {}
        if self.on_write is not None:
            self.on_write(self)
        key = params["idempotency_key"]
        if key in self.audits:
            return [{"found": True, "fresh": False, "audit": self.audits[key]}]
        if params["expected"] != self.facts:
            return [{"found": True, "fresh": False, "audit": None}]
        self.audits[key] = dict(params["audit"])
        self.facts["order"]["status"] = params["order_status"]
        return [{"found": True, "fresh": True, "audit": self.audits[key]}]

    def ping(self) -> bool:
        return True


class CountingRunner:
    """An `IdempotentRunner` wrapper that counts how often the operation really ran."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.executions = 0

    def run_once(self, key: str, operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        def counted() -> dict[str, Any]:
            self.executions += 1
            return operation()

        result: dict[str, Any] = self.inner.run_once(key, counted)
        return result


class DirectRunner:
    """An `IdempotentRunner` that just runs the operation (only the Neo4j guard remains)."""

    def run_once(self, key: str, operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return operation()


def cancel_proposal(customer_id: str = CUSTOMER, *, amount: float = 100.0,
                    confirmation_id: str = "session-1:2") -> ActionProposal:
    args = {"order_id": "#W1000001", "reason": "no longer needed"}
    return ActionProposal(action=ActionName.CANCEL_ORDER, args=args, order_id="#W1000001", amount=amount,
                          refund_payment_method_id="gift_card_1", confirmation_id=confirmation_id,
                          idempotency_key=idempotency_key(customer_id, ActionName.CANCEL_ORDER, args,
                                                          confirmation_id))


def run_execute(store: FakeStore, proposal: ActionProposal, *, runner: Any = None,
                customer_id: str = CUSTOMER, **kwargs: Any) -> ToolResult:
    ctx = ToolContext(graph=store, customer_id=customer_id)
    return ex.execute(TASK, proposal, ctx, now=NOW, idempotency=runner, **kwargs)


# ------------------------------------------------------------------------------- moto tables
RESOURCES = local_resources(TEMPLATE, stack_name="csagent-local")
IDEMPOTENCY_TABLE = RESOURCES.table("IdempotencyTable")


@pytest.fixture
def dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A DynamoDB client inside `mock_aws` with the template's idempotency table (and only it)."""
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL")]:
        monkeypatch.delenv(var)
    with mock_aws():
        session = boto3.session.Session(region_name="us-east-1", aws_access_key_id="testing",
                                        aws_secret_access_key="testing")
        create_resources(session, dataclasses.replace(RESOURCES, tables=(IDEMPOTENCY_TABLE,), buckets=(),
                                                      queues=()))
        yield session.client("dynamodb")


@pytest.fixture
def runner(dynamodb: Any) -> CountingRunner:
    return CountingRunner(PowertoolsIdempotency(dynamodb_persistence(IDEMPOTENCY_TABLE.table_name,
                                                                     client=dynamodb)))


# --------------------------------------------------------------------------- the key itself
def test_the_key_is_the_same_for_the_same_confirmed_request() -> None:
    # Given the same request, with its arguments in another order
    args = {"order_id": "#W1", "reason": "no longer needed"}
    first = idempotency_key("c1", "cancel_order", args, "s:2")
    again = idempotency_key("c1", ActionName.CANCEL_ORDER, dict(reversed(list(args.items()))), "s:2")

    # Then
    assert first == again and len(first) == 64


@pytest.mark.parametrize("change", ["customer", "action", "args", "confirmation"])
def test_the_key_changes_with_anything_that_makes_a_new_request(change: str) -> None:
    # Given
    base = {"customer": "c1", "action": "cancel_order", "args": {"order_id": "#W1"}, "confirmation": "s:2"}
    other = {**base, change: {"customer": "c2", "action": "return_items", "args": {"order_id": "#W2"},
                              "confirmation": "s:3"}[change]}

    # When
    keys = {idempotency_key(v["customer"], v["action"], v["args"], v["confirmation"]) for v in (base, other)}

    # Then
    assert len(keys) == 2


# ------------------------------------------------------------------- Powertools on DynamoDB
def test_the_idempotency_table_has_the_powertools_layout_in_the_template() -> None:
    # When
    table = IDEMPOTENCY_TABLE

    # Then the adapter's defaults fit it
    assert (table.table_name, table.hash_key, table.ttl_attribute) == (tool.DEFAULT_IDEMPOTENCY_TABLE, "id",
                                                                       "expiration")


def test_a_second_run_with_the_same_key_returns_the_stored_result_without_running(
        runner: CountingRunner) -> None:
    # Given a first run
    first = runner.run_once("key-1", lambda: {"done": "cancelled", "amount": 100.5})

    # When the same key runs again with an operation that would do something else
    second = runner.run_once("key-1", lambda: {"done": "something else"})

    # Then the stored result comes back and the operation ran once
    assert second == first == {"done": "cancelled", "amount": 100.5}
    assert runner.executions == 1


def test_another_key_runs_again(runner: CountingRunner) -> None:
    # When
    runner.run_once("key-1", lambda: {"n": 1})
    result = runner.run_once("key-2", lambda: {"n": 2})

    # Then
    assert result == {"n": 2} and runner.executions == 2


def test_a_failed_run_stores_nothing_so_a_retry_runs_again(runner: CountingRunner) -> None:
    # Given a run that fails
    def boom() -> dict[str, Any]:
        raise ConnectionError("neo4j went away")

    with pytest.raises(ConnectionError):
        runner.run_once("key-1", boom)

    # When it is retried
    result = runner.run_once("key-1", lambda: {"n": 1})

    # Then it ran again
    assert result == {"n": 1} and runner.executions == 2


def test_a_run_while_the_same_key_is_in_progress_is_refused(runner: CountingRunner) -> None:
    # Given an operation that, while running, sees the same request arrive again
    def first() -> dict[str, Any]:
        runner.run_once("key-1", lambda: {"n": "second"})
        return {"n": "first"}

    # When / Then
    with pytest.raises(IdempotencyAlreadyInProgressError):
        runner.run_once("key-1", first)


def test_records_expire_and_are_keyed_with_a_fixed_prefix(runner: CountingRunner, dynamodb: Any) -> None:
    # When
    runner.run_once("key-1", lambda: {"n": 1})

    # Then
    items = dynamodb.scan(TableName="csagent-local-idempotency")["Items"]
    assert len(items) == 1
    assert items[0]["id"]["S"].startswith(f"{KEY_PREFIX}#")
    assert items[0]["status"]["S"] == "COMPLETED"
    days = (int(items[0]["expiration"]["N"]) - time.time()) / 86400
    assert 6.9 < days <= 7.0


# ----------------------------------------------------------------- execute: exactly once
def test_a_replayed_execution_never_touches_the_graph_again(runner: CountingRunner) -> None:
    # Given a cancellation carried out once
    store = FakeStore(pending_order())
    first = run_execute(store, cancel_proposal(), runner=runner)
    reads, writes = store.reads, store.writes

    # When the same confirmation is executed again
    second = run_execute(store, cancel_proposal(), runner=runner)

    # Then the stored result comes back, with no read and no write
    assert first.status is TaskStatus.SUCCESS and second.data == first.data
    assert (store.reads, store.writes) == (reads, writes) == (1, 1)
    assert runner.executions == 1


def test_without_the_dynamodb_record_the_audit_event_still_stops_a_repeat() -> None:
    # Given a cancellation carried out once (no DynamoDB runner: as if its record were lost)
    store = FakeStore(pending_order())
    first = run_execute(store, cancel_proposal())

    # When it is executed again
    second = run_execute(store, cancel_proposal())

    # Then the audit event's result is replayed and nothing is written again
    assert second.status is TaskStatus.SUCCESS and second.data == first.data
    assert store.writes == 1 and len(store.audits) == 1


def test_a_new_confirmation_of_the_same_request_is_a_new_execution() -> None:
    # Given
    store = FakeStore(pending_order())
    run_execute(store, cancel_proposal(confirmation_id="session-1:2"))

    # When the customer confirms a second time, in another turn
    again = run_execute(store, cancel_proposal(confirmation_id="session-1:5"))

    # Then it is checked afresh: the order is cancelled now
    assert again.error is not None and again.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "already cancelled" in again.error.message


def test_a_failure_is_not_stored_so_the_same_key_can_succeed_later(runner: CountingRunner) -> None:
    # Given a refund above the threshold executed without an approver
    store = FakeStore(pending_order())
    refused = run_execute(store, cancel_proposal(), runner=runner, approval_threshold=Decimal("50"))

    # When the approver has said yes
    approved = run_execute(store, cancel_proposal(), runner=runner, approval_threshold=Decimal("50"),
                           approved_by="agent-7")

    # Then the first was refused without writing, the second went ahead
    assert refused.error is not None and refused.error.type is ErrorType.PERMISSION_DENIED
    assert "over $50.00" in refused.error.message
    assert approved.status is TaskStatus.SUCCESS and store.writes == 1
    assert store.audits[next(iter(store.audits))]["approved_by"] == "agent-7"


# ------------------------------------------------------------- execute: checked again
def test_an_order_that_shipped_after_the_proposal_is_not_cancelled() -> None:
    # Given the order was proposed for cancellation, then shipped
    store = FakeStore(pending_order(status="processed"))

    # When
    result = run_execute(store, cancel_proposal())

    # Then
    assert result.error is not None and result.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "has already shipped" in result.error.message
    assert store.writes == 0


def test_a_change_between_the_read_and_the_write_is_checked_again() -> None:
    # Given the gift card balance changes once, right before the first write
    store = FakeStore(pending_order())

    def top_up_once(s: FakeStore) -> None:
        s.facts["payment_methods"][0]["balance"] = 25.0
        s.on_write = None

    store.on_write = top_up_once

    # When
    result = run_execute(store, cancel_proposal())

    # Then the first write found other facts and changed nothing; the second applied
    assert result.status is TaskStatus.SUCCESS and store.writes == 2
    assert isinstance(result.data, ActionDoneData) and result.data.changes["refund"]["balance"] == 125.0


def test_facts_that_keep_changing_give_a_retryable_failure() -> None:
    # Given a balance that changes before every write
    store = FakeStore(pending_order())

    def top_up(s: FakeStore) -> None:
        s.facts["payment_methods"][0]["balance"] += 1

    store.on_write = top_up

    # When
    result = run_execute(store, cancel_proposal())

    # Then
    assert result.error is not None and result.error.type is ErrorType.TRANSIENT and result.error.retryable
    assert store.writes == ex.MAX_ATTEMPTS and not store.audits


def test_a_refund_that_differs_from_the_confirmed_one_asks_for_a_new_confirmation() -> None:
    # Given the customer confirmed a refund of $90.00, and the order now refunds $100.00
    store = FakeStore(pending_order())

    # When
    result = run_execute(store, cancel_proposal(amount=90.0))

    # Then
    assert result.error is not None and result.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "refund would now be $100.00" in result.error.message and store.writes == 0


def test_an_altered_proposal_does_not_match_its_key() -> None:
    # Given a proposal whose order id was changed after its key was derived
    altered = {"order_id": "#W1000002", "reason": "no longer needed"}
    proposal = cancel_proposal().model_copy(update={"args": altered})
    store = FakeStore(pending_order())

    # When
    result = run_execute(store, proposal)

    # Then
    assert result.error is not None and result.error.type is ErrorType.VALIDATION
    assert (store.reads, store.writes) == (0, 0)


def test_another_customers_proposal_does_not_match_the_signed_in_customer() -> None:
    # Given a proposal made for cust_1, executed in cust_2's session
    store = FakeStore(pending_order())

    # When
    result = run_execute(store, cancel_proposal(), customer_id="cust_2")

    # Then
    assert result.error is not None and result.error.type is ErrorType.VALIDATION
    assert store.writes == 0 and store.facts["order"]["status"] == "pending"


def test_an_order_not_in_the_customers_account_is_not_found() -> None:
    # Given cust_2's own, well-formed proposal for cust_1's order
    store = FakeStore(pending_order())

    # When
    result = run_execute(store, cancel_proposal("cust_2"), customer_id="cust_2")

    # Then
    assert result.error is not None and result.error.type is ErrorType.NO_RESULTS
    assert result.error.message == "No order #W1000001 was found in your account."
    assert store.writes == 0


def test_execute_needs_a_confirmation_id() -> None:
    # Given a proposal made without one, executed without one
    proposal = cancel_proposal().model_copy(update={"confirmation_id": None, "idempotency_key": None})

    # When
    result = run_execute(FakeStore(pending_order()), proposal)

    # Then
    assert result.error is not None and result.error.type is ErrorType.VALIDATION
    assert "confirmation id" in result.error.message


# ---------------------------------------------------------------------------- the tool
class RaisingRunner:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def run_once(self, key: str, operation: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        raise self.exc


def from_store(driver_error: BaseException) -> BaseException:
    """What the store's adapter raises for a driver error (the store port's errors)."""
    return classify_neo4j_error(driver_error)


def execute_task(proposal: ActionProposal) -> Task:
    return Task(task_id="t2", task_type="cancel_order", tool=tool.TOOL_NAME,
                args={"phase": "execute", "proposal": proposal.model_dump(mode="json")})


@pytest.mark.parametrize(("exc", "error_type"), [
    (IdempotencyAlreadyInProgressError("in progress"), ErrorType.TRANSIENT),
    (from_store(neo4j_timeout()), ErrorType.TIMEOUT),
    (from_store(TimeoutError("slow")), ErrorType.TIMEOUT),
    (from_store(ServiceUnavailable("down")), ErrorType.TRANSIENT),
])
def test_the_tool_turns_infrastructure_failures_into_retryable_results(exc: BaseException,
                                                                      error_type: ErrorType) -> None:
    # Given
    ctx = ToolContext(graph=FakeStore(pending_order()), customer_id=CUSTOMER)

    # When
    result = tool.run(execute_task(cancel_proposal()), ctx, settings=tool.ActionSettings(), now=NOW,
                      idempotency=RaisingRunner(exc))

    # Then
    assert result.error is not None and (result.error.type, result.error.retryable) == (error_type, True)


def test_the_tool_executes_a_proposal_it_made() -> None:
    # Given a proposal from the tool's propose phase
    store = FakeStore(pending_order())
    ctx = ToolContext(graph=store, customer_id=CUSTOMER)
    proposed = tool.run(Task(task_id="t1", task_type="cancel_order", tool=tool.TOOL_NAME, args={
        "action": "cancel_order", "args": {"order_id": "W1000001", "reason": "no longer needed"},
        "confirmation_id": "session-1:2"}), ctx, settings=tool.ActionSettings(), now=NOW)
    assert isinstance(proposed.data, ActionProposedData) and proposed.data.requires_confirmation is True

    # When the customer said yes
    proposal = proposed.data.proposal
    done = tool.run(execute_task(proposal), ctx, settings=tool.ActionSettings(), now=NOW,
                    idempotency=DirectRunner())

    # Then
    assert done.status is TaskStatus.SUCCESS and isinstance(done.data, ActionDoneData)
    assert done.data.phase == "execute"
    assert done.data.message == ("Order #W1000001 is cancelled. $100.00 has been refunded to your "
                                    "gift card (gift_card_1); it is available now.")


@pytest.mark.parametrize("args", [{"phase": "approve"}, {"phase": "execute"}])
def test_an_unknown_phase_or_an_execution_without_its_proposal_never_reaches_the_tool(
        args: dict[str, Any]) -> None:
    # Given the tool Lambda's event for such a task
    raw = {"task": {"task_id": "t1", "task_type": "x", "tool": tool.TOOL_NAME, "args": args},
           "customer_id": CUSTOMER, "session_id": "s-1"}

    # When the task is built (by the planner, or from the event), Then it is refused
    with pytest.raises(ValidationError):
        Task(task_id="t1", task_type="x", tool=tool.TOOL_NAME, args=args)
    with pytest.raises(ValidationError) as refused:
        ToolEvent.model_validate(raw)
    # And the Lambda answers a VALIDATION failure naming the argument
    result = malformed_event_result(raw, tool.TOOL_NAME, refused.value)
    assert result.error is not None and result.error.type is ErrorType.VALIDATION
    assert "task.args" in result.error.message and result.task_id == "t1"


@pytest.mark.parametrize(("args", "customer", "error_type"), [
    ({"action": "delete_account", "args": {}}, CUSTOMER, ErrorType.VALIDATION),
    ({"action": "cancel_order", "args": {"order_id": "#W1000001", "reason": "no longer needed"}}, None,
     ErrorType.PERMISSION_DENIED),
])
def test_the_tool_refuses_requests_it_cannot_serve(args: dict[str, Any], customer: str | None,
                                                   error_type: ErrorType) -> None:
    # Given
    store = FakeStore(pending_order())
    task = Task(task_id="t1", task_type="x", tool=tool.TOOL_NAME, args=args)

    # When
    ctx = ToolContext(graph=store, customer_id=customer)
    result = tool.run(task, ctx, settings=tool.ActionSettings(), now=NOW)

    # Then
    assert result.error is not None and result.error.type is error_type and store.writes == 0


def test_the_store_clock_keeps_the_time_of_day_on_the_store_date() -> None:
    # When
    now = tool.store_now(date(2024, 7, 1), clock=lambda: datetime(2026, 3, 9, 8, 15, tzinfo=UTC))

    # Then
    assert now == datetime(2024, 7, 1, 8, 15, tzinfo=UTC)
    assert tool.store_now(None, clock=lambda: NOW) == NOW


def test_action_settings_come_from_the_settings_with_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given no store clock configured (the real date)
    monkeypatch.delenv("STORE_TODAY", raising=False)
    # When
    settings = tool.ActionSettings.from_settings(Settings(AWS_ENDPOINT_URL="http://127.0.0.1:4592"))

    # Then
    assert settings.idempotency_table == "csagent-local-idempotency"
    assert settings.approval_threshold == Decimal("500.00") and settings.store_today is None
    assert settings.endpoint_url == "http://127.0.0.1:4592"
