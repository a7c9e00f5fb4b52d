"""Fault injection: plan parsing, determinism, the wrappers, and that the tools see injected Neo4j
faults exactly as they would see real ones (the adapter's classification of the driver's error)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from neo4j import exceptions as neo4j_errors
from pydantic import ValidationError

from csagent.domain.errors import StoreError, StoreTimeout, StoreUnavailable
from csagent.domain.models import ErrorType, Task, TaskStatus, ToolResult
from csagent.resilience.faults import (
    Fault,
    FaultKind,
    FaultPlan,
    FaultSettings,
    FaultyGraphStore,
    InjectedCrash,
    crash_point,
    faulty_model,
    faulty_tool,
    parse_fault,
    plan_from_settings,
    wrap_graph_store,
)
from csagent.tools.context import ToolContext
from csagent.tools.failures import failed_result

TASK = Task(task_id="t1", task_type="knowledge", tool="knowledge_search")


class FakeStore:
    """A GraphStore that records calls and answers one row."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        self.calls.append(cypher)
        return [{"ok": 1}]

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        self.calls.append(cypher)
        return [{"ok": 1}]

    def ping(self) -> bool:
        return True


def ok_tool(task: Task, ctx: ToolContext) -> ToolResult:
    return ToolResult.ok(task, {"answer": "fine"})


# -- parsing ---------------------------------------------------------------------------------
def test_the_documented_example_plan_parses() -> None:
    # Given the example from the module documentation
    spec = "neo4j:timeout:0.3,knowledge_search:empty:1.0,model:malformed:0.5,graph:crash_before_summarise:1.0"
    # When it is parsed
    plan = FaultPlan.parse(spec, seed=7)
    # Then every entry is understood, including the crash point
    assert plan.faults == (
        Fault("neo4j", FaultKind.TIMEOUT, 0.3),
        Fault("knowledge_search", FaultKind.EMPTY, 1.0),
        Fault("model", FaultKind.MALFORMED, 0.5),
        Fault("graph", FaultKind.CRASH, 1.0, point="before_summarise"),
    )


def test_a_target_may_contain_colons_and_a_limit_may_follow() -> None:
    # Given a model spec with a colon and a limit of two injections
    # When it is parsed
    fault = parse_fault("model:bedrock/claude:error:1.0:2")
    # Then the target keeps its colon and the limit is read
    assert (fault.target, fault.kind, fault.limit) == ("model:bedrock/claude", FaultKind.ERROR, 2)


@pytest.mark.parametrize("entry", ["neo4j", "neo4j:explode:1.0", "neo4j:timeout:1.5", "neo4j:timeout:x",
                                   "neo4j:timeout:0.5:0"])
def test_malformed_entries_are_refused_with_a_reason(entry: str) -> None:
    # Given an entry with no kind, an unknown kind, or a bad number
    # When it is parsed
    # Then a ValueError names the entry
    with pytest.raises(ValueError, match="fault"):
        parse_fault(entry)


def test_no_faults_setting_means_no_plan() -> None:
    # Given empty settings
    # When the plan is built
    # Then fault injection is off
    assert plan_from_settings(FaultSettings(faults="", stage="local")) is None


def test_faults_are_refused_in_production() -> None:
    # Given FAULTS set in a production stage
    # When the settings are read
    # Then they are refused
    with pytest.raises(ValidationError, match="prod"):
        FaultSettings(faults="neo4j:timeout:1.0", stage="prod")


# -- determinism -----------------------------------------------------------------------------
def test_same_seed_and_calls_inject_the_same_faults() -> None:
    # Given two plans built the same way (two processes)
    first, second = (FaultPlan.parse("neo4j:timeout:0.3", seed=11) for _ in range(2))
    # When each sees the same 200 calls
    a = [first.draw("neo4j", {FaultKind.TIMEOUT}) for _ in range(200)]
    b = [second.draw("neo4j", {FaultKind.TIMEOUT}) for _ in range(200)]
    # Then they inject faults at the same calls, at about the configured rate
    assert a == b
    assert 40 <= sum(k is not None for k in a) <= 80


def test_a_different_seed_injects_at_different_calls() -> None:
    # Given two plans that differ only in the seed
    one, two = FaultPlan.parse("neo4j:error:0.5", seed=1), FaultPlan.parse("neo4j:error:0.5", seed=2)
    # When each sees 64 calls
    # Then the fault patterns differ
    assert [one.draw("neo4j", {FaultKind.ERROR}) for _ in range(64)] != \
        [two.draw("neo4j", {FaultKind.ERROR}) for _ in range(64)]


def test_limit_caps_the_number_of_injections() -> None:
    # Given a certain fault limited to two injections
    plan = FaultPlan.parse("neo4j:timeout:1.0:2")
    # When five calls are made
    drawn = [plan.draw("neo4j", {FaultKind.TIMEOUT}) for _ in range(5)]
    # Then only the first two fail, so a retry can recover
    assert drawn == [FaultKind.TIMEOUT, FaultKind.TIMEOUT, None, None, None]


# -- graph store -----------------------------------------------------------------------------
def test_injected_timeout_is_the_adapters_error_for_the_drivers_transaction_timeout() -> None:
    # Given a store with a certain timeout
    store = FaultyGraphStore(FakeStore(), FaultPlan.parse("neo4j:timeout:1.0"))
    # When it is read
    with pytest.raises(StoreTimeout) as raised:
        store.read("MATCH (n) RETURN n")
    # Then it is what the adapter raises for what Neo4j 5.26 sends when a transaction times out
    assert raised.value.code == "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
    assert isinstance(raised.value.__cause__, neo4j_errors.ClientError)


def test_injected_error_is_the_adapters_error_for_a_driver_transient_error() -> None:
    # Given a store with a certain transient error
    store = FaultyGraphStore(FakeStore(), FaultPlan.parse("neo4j:error:1.0"))
    # When it is read
    with pytest.raises(StoreUnavailable) as raised:
        store.read("MATCH (n) RETURN n")
    # Then the adapter's "unavailable" is raised, caused by the driver's TransientError
    assert isinstance(raised.value.__cause__, neo4j_errors.TransientError)


@pytest.mark.parametrize(("kind", "expected"),
                         [("timeout", ErrorType.TIMEOUT), ("error", ErrorType.TRANSIENT)])
def test_the_tools_see_injected_faults_as_retryable_failures(kind: str, expected: ErrorType) -> None:
    # Given an injected Neo4j fault
    store = FaultyGraphStore(FakeStore(), FaultPlan.parse(f"neo4j:{kind}:1.0"))
    with pytest.raises(StoreError) as raised:
        store.read("RETURN 1")
    # When the one place that turns a tool's exception into a result sees it
    result = failed_result(TASK, raised.value)
    # Then it is a retryable failure of the expected type
    assert result.error is not None and (result.error.type, result.error.retryable) == (expected, True)


def test_injected_empty_read_returns_no_rows_without_querying() -> None:
    # Given a store with certain empty results
    inner = FakeStore()
    store = FaultyGraphStore(inner, FaultPlan.parse("neo4j:empty:1.0"))
    # When it is read
    # Then no rows come back and the database was not asked
    assert store.read("MATCH (n) RETURN n") == [] and inner.calls == []


def test_empty_is_never_injected_into_writes() -> None:
    # Given a store with certain empty results
    inner = FakeStore()
    store = FaultyGraphStore(inner, FaultPlan.parse("neo4j:empty:1.0"))
    # When it writes
    rows = store.write("CREATE (n)")
    # Then the write really happened (no silent fake success)
    assert rows == [{"ok": 1}] and inner.calls == ["CREATE (n)"]


def test_ping_reports_an_injected_fault_as_unhealthy() -> None:
    # Given a store with a certain transient error
    store = FaultyGraphStore(FakeStore(), FaultPlan.parse("neo4j:error:1.0"))
    # When it is pinged
    # Then it says unhealthy instead of raising
    assert store.ping() is False


def test_no_plan_returns_the_store_itself() -> None:
    # Given no plan, and a plan that only covers the model
    inner = FakeStore()
    # When the store is wrapped
    # Then it is the same object (zero overhead)
    assert wrap_graph_store(inner, None) is inner
    assert wrap_graph_store(inner, FaultPlan.parse("model:error:1.0")) is inner


# -- tools, models, crash points -------------------------------------------------------------
@pytest.mark.parametrize(("kind", "expected"), [
    ("timeout", ErrorType.TIMEOUT), ("error", ErrorType.TRANSIENT), ("empty", ErrorType.NO_RESULTS),
    ("malformed", ErrorType.PARSE_ERROR),
])
def test_faulty_tool_returns_the_failure_as_data(kind: str, expected: ErrorType) -> None:
    # Given a tool wrapped with a certain fault
    tool = faulty_tool(ok_tool, FaultPlan.parse(f"knowledge_search:{kind}:1.0"), "knowledge_search")
    # When it runs
    result = tool(TASK, ToolContext(graph=FakeStore(), customer_id="c1"))
    # Then it returns a failed result of the matching type (no exception)
    assert result.status is TaskStatus.FAILED and result.error is not None
    assert result.error.type is expected


def test_faulty_tool_without_a_matching_fault_is_the_tool_itself() -> None:
    # Given a plan for another dependency
    # When a tool is wrapped
    # Then the wrapper is not even created
    assert faulty_tool(ok_tool, FaultPlan.parse("neo4j:timeout:1.0"), "knowledge_search") is ok_tool


def test_model_prefix_target_corrupts_every_model_output() -> None:
    # Given a certain malformed-output fault for all models
    model = faulty_model(lambda prompt: '{"intent": "order_status", "confidence": 0.9}',
                         FaultPlan.parse("model:malformed:1.0"), "model:openai/smollm2@http://127.0.0.1:8000")
    # When the model answers
    text = model("where is my order")
    # Then the output no longer parses as JSON
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_model_timeout_raises_timeout_error() -> None:
    # Given a certain timeout for one model spec
    plan = FaultPlan.parse("model:bedrock/x:timeout:1.0")
    model = faulty_model(lambda prompt: "ok", plan, "model:bedrock/x")
    # When it is called
    # Then it raises as a slow endpoint would
    with pytest.raises(TimeoutError):
        model("hi")


def test_crash_point_raises_only_at_its_point() -> None:
    # Given a crash planned before summarise
    plan = FaultPlan.parse("graph:crash_before_summarise:1.0")
    # When another point is passed, then the planned one
    crash_point("before_plan", plan)
    with pytest.raises(InjectedCrash) as raised:
        crash_point("before_summarise", plan)
    # Then only the planned point crashed
    assert raised.value.point == "before_summarise"


def test_crash_point_without_a_plan_does_nothing() -> None:
    # Given fault injection switched off
    # When a crash point is passed
    # Then nothing happens
    assert crash_point("before_summarise", None) is None


def test_stats_count_calls_and_injections() -> None:
    # Given a plan limited to one injection
    plan = FaultPlan.parse("neo4j:timeout:1.0:1")
    for _ in range(3):
        plan.draw("neo4j", {FaultKind.TIMEOUT})
    # When its stats are read
    # Then they report three calls and one injection
    assert plan.stats() == {"neo4j:timeout": {"calls": 3, "injected": 1}}
