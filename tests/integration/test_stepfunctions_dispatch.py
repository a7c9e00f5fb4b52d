"""The dispatch state machine, run locally: the real ASL (infra/statemachines/tools.asl.json) on
moto's interpreter, the real tool Lambda handlers, the real Neo4j seeded with tau-retail - through
`devstack.sfn_bridge` and the same `StepFunctionsDispatcher.run_wave` the router uses in AWS.

Retry, Catch and TimeoutSeconds are proven with faults injected per task id by the bridge
(`Fault`): they fail the invocation the way a tool Lambda fails, then the real handler runs. The
state machine retries only infrastructure errors; a failed ToolResult goes back to the router,
whose healer (`csagent.healing.run_healed_waves`, what the `dispatch_wave` node runs) retries it
in a new wave, takes the cheaper tool, or stops at an open breaker - proven here too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from csagent.domain.models import ErrorType, Task, TaskStatus, ToolResult
from csagent.healing import TaskHealer, run_healed_waves
from csagent.resilience.bounds import Bounds
from csagent.resilience.breaker import breakers
from devstack.sfn_bridge import Fault, LocalStepFunctions, LocalStepFunctionsDispatcher

pytestmark = pytest.mark.integration

CUSTOMER = "james_li_5688"
ORDER = "#W2611340"  # james_li_5688's, processed, one shipment with tracking 357962501027
SESSION = "s-dispatch-it"
SHORT_TIMEOUT_S = 1


def _wave() -> list[Task]:
    """An order lookup, a knowledge-base question and a catalogue query: one wave, three tools' worth."""
    return [
        Task(task_id="t1", task_type="tracking", tool="predefined_cypher",
             args={"template_id": "order_tracking", "params": {"order_id": ORDER}}),
        Task(task_id="t2", task_type="policy_question", tool="knowledge_search",
             args={"question": "How long is the warranty on headphones?"}),
        Task(task_id="t3", task_type="product_price", tool="predefined_cypher",
             args={"template_id": "product_price", "params": {"product_name": "water bottle"}}),
    ]


@pytest.fixture(scope="module")
def bridge(tau_store: Any) -> Iterator[LocalStepFunctions]:
    """moto + the tool handlers in this process, on the seeded store; closed after the module."""
    from csagent import runtime

    runtime.reset()
    with LocalStepFunctions() as sfn:
        yield sfn
    runtime.reset()


@pytest.fixture(scope="module")
def dispatcher(bridge: LocalStepFunctions) -> LocalStepFunctionsDispatcher:
    """The dispatch state machine exactly as template.yaml configures it."""
    return LocalStepFunctionsDispatcher(bridge, bridge.deploy())


@pytest.fixture(scope="module")
def impatient_dispatcher(bridge: LocalStepFunctions) -> LocalStepFunctionsDispatcher:
    """The same, with a 1 s TimeoutSeconds on knowledge search (so a timeout test stays fast)."""
    arn = bridge.deploy("csagent-local-dispatch-short", KnowledgeSearchTimeoutSeconds=SHORT_TIMEOUT_S)
    return LocalStepFunctionsDispatcher(bridge, arn)


@pytest.fixture(autouse=True)
def _clean_faults(bridge: LocalStepFunctions) -> Iterator[None]:
    bridge.faults.clear()
    bridge.invocations.clear()
    bridge.events.clear()
    breakers().reset()
    yield
    bridge.faults.clear()
    breakers().reset()


def _by_id(results: list[ToolResult]) -> dict[str, ToolResult]:
    return {r.task_id: r for r in results}


def _calls(bridge: LocalStepFunctions, task_id: str) -> int:
    return sum(1 for _, tid in bridge.invocations if tid == task_id)


def _water_bottle_prices(tau_data: Path) -> tuple[float, float]:
    products = json.loads((tau_data / "products.json").read_text())
    (bottle,) = [p for p in products.values() if p["name"] == "Water Bottle"]
    prices = [v["price"] for v in bottle["variants"].values()]
    return min(prices), max(prices)


def test_a_three_tool_wave_answers_from_the_store(dispatcher: LocalStepFunctionsDispatcher,
                                                  tau_data: Path) -> None:
    # Given an order lookup, a warranty question and a catalogue query for james_li_5688
    tasks = _wave()

    # When the wave runs on the dispatch state machine
    results = dispatcher.run_wave(tasks, CUSTOMER, SESSION)

    # Then all three succeed, in task order, with the store's real answers
    assert [(r.task_id, r.status) for r in results] == [(t.task_id, TaskStatus.SUCCESS) for t in tasks]
    tracking, warranty, price = results
    assert tracking.data is not None and tracking.data.rows[0]["tracking_id"] == "357962501027"
    assert warranty.data is not None and "warranty" in {c.doc_id for c in warranty.data.citations}
    assert "headphones" in warranty.data.answer.lower() and "1 year" in warranty.data.answer
    assert price.data is not None
    row = price.data.rows[0]
    assert (row["min_price"], row["max_price"]) == _water_bottle_prices(tau_data)
    assert all(r.latency_ms > 0 for r in results)


def test_the_tools_see_the_customer_of_the_session(dispatcher: LocalStepFunctionsDispatcher) -> None:
    # Given james_li_5688's order, asked about in another customer's session
    tasks = _wave()[:1]

    # When the wave runs for that other customer
    (result,) = dispatcher.run_wave(tasks, "someone_else_1234", SESSION)

    # Then the tool found nothing: the order is not reachable from that customer
    assert result.status is TaskStatus.FAILED
    assert result.error is not None and result.error.type is ErrorType.NO_RESULTS


def test_a_lambda_service_error_is_retried_until_the_tool_answers(dispatcher: LocalStepFunctionsDispatcher,
                                                                  bridge: LocalStepFunctions) -> None:
    # Given the knowledge search's Lambda invocations fail with a service error twice
    bridge.faults["t2"] = Fault("service", times=2)

    # When the wave runs
    results = _by_id(dispatcher.run_wave(_wave(), CUSTOMER, SESSION))

    # Then the state machine retried it and its third attempt answered; the others ran once
    assert results["t2"].status is TaskStatus.SUCCESS
    assert results["t2"].data is not None and results["t2"].data.citations
    assert (_calls(bridge, "t1"), _calls(bridge, "t2"), _calls(bridge, "t3")) == (1, 3, 1)


def test_a_service_error_that_outlives_the_retries_is_a_transient_result(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given the order lookup's Lambda invocations fail with a service error every time
    bridge.faults["t1"] = Fault("service")

    # When the wave runs
    results = _by_id(dispatcher.run_wave(_wave(), CUSTOMER, SESSION))

    # Then after three attempts it is a retryable transient failure, and the other tasks succeeded
    assert _calls(bridge, "t1") == 3
    assert results["t1"].status is TaskStatus.FAILED and results["t1"].error is not None
    assert (results["t1"].error.type, results["t1"].error.retryable) == (ErrorType.TRANSIENT, True)
    assert (results["t2"].status, results["t3"].status) == (TaskStatus.SUCCESS, TaskStatus.SUCCESS)


def test_a_permanent_failure_is_caught_and_the_other_tasks_succeed(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given the catalogue query's Lambda crashes on every invocation
    bridge.faults["t3"] = Fault("crash")

    # When the wave runs
    results = _by_id(dispatcher.run_wave(_wave(), CUSTOMER, SESSION))

    # Then the crash was not retried and became a failed result naming the error; the others answered
    assert _calls(bridge, "t3") == 1
    assert results["t3"].status is TaskStatus.FAILED and results["t3"].error is not None
    assert (results["t3"].error.type, results["t3"].error.retryable) == (ErrorType.UNKNOWN, False)
    assert "RuntimeError" in results["t3"].error.message
    assert (results["t1"].status, results["t2"].status) == (TaskStatus.SUCCESS, TaskStatus.SUCCESS)


def test_a_tool_slower_than_its_timeout_is_a_timeout_result(
        impatient_dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given knowledge search has a 1 s TimeoutSeconds and its Lambda stalls for 3 s
    bridge.faults["t2"] = Fault("delay", seconds=3.0)

    # When the wave runs
    started = time.monotonic()
    results = _by_id(impatient_dispatcher.run_wave(_wave(), CUSTOMER, SESSION))
    elapsed = time.monotonic() - started

    # Then the wave did not wait for it: it is a timeout the healer does not wait for again (its
    # whole state budget is spent; a 29 s turn has no room for a second), and the others answered
    assert results["t2"].status is TaskStatus.FAILED and results["t2"].error is not None
    assert (results["t2"].error.type, results["t2"].error.retryable) == (ErrorType.TIMEOUT, False)
    assert elapsed < 3.0
    assert (results["t1"].status, results["t3"].status) == (TaskStatus.SUCCESS, TaskStatus.SUCCESS)


def test_an_unknown_tool_is_a_failed_result_not_a_crash(dispatcher: LocalStepFunctionsDispatcher,
                                                        bridge: LocalStepFunctions) -> None:
    # Given a wave with a task for a tool no Lambda serves
    tasks = [*_wave()[:2], Task(task_id="t3", task_type="teleport", tool="teleporter")]

    # When the wave runs
    results = _by_id(dispatcher.run_wave(tasks, CUSTOMER, SESSION))

    # Then that task failed with a reason, no Lambda was invoked for it, and the others answered
    assert results["t3"].status is TaskStatus.FAILED and results["t3"].error is not None
    assert results["t3"].error.type is ErrorType.UNKNOWN
    assert results["t3"].error.message == "No tool named teleporter."
    assert _calls(bridge, "t3") == 0
    assert (results["t1"].status, results["t2"].status) == (TaskStatus.SUCCESS, TaskStatus.SUCCESS)


def test_a_dispatch_that_cannot_start_fails_every_task_without_raising(bridge: LocalStepFunctions) -> None:
    # Given a dispatcher pointing at a state machine that does not exist
    missing = "arn:aws:states:us-east-1:123456789012:stateMachine:no-such-machine"
    dispatcher = LocalStepFunctionsDispatcher(bridge, missing)

    # When a wave is dispatched
    results = dispatcher.run_wave(_wave(), CUSTOMER, SESSION)

    # Then every task has a failed, typed, non-retryable result, and no tool ran
    assert [(r.task_id, r.status) for r in results] == [(t.task_id, TaskStatus.FAILED) for t in _wave()]
    assert {(r.error.type, r.error.retryable) for r in results if r.error} == {(ErrorType.TRANSIENT, False)}
    assert bridge.invocations == []


# ------------------------------------------------------------------ healing through the state machine
TOOLS = ("predefined_cypher", "knowledge_search", "text2cypher", "customer_actions")
BOUNDS = Bounds(backoff_base_s=0.01, backoff_max_s=0.02)


def _healed(dispatcher: LocalStepFunctionsDispatcher, tasks: list[Task]) -> dict[str, TaskHealer]:
    """The tasks healed as the `dispatch_wave` node heals them: one execution per wave."""
    healers = run_healed_waves(tasks, lambda wave: dispatcher.run_wave(wave, CUSTOMER, SESSION),
                               TOOLS, BOUNDS)
    return {h.task.task_id: h for h in healers}


def _actions(healer: TaskHealer) -> list[str]:
    return [d.action.value for d in healer.decisions]


def test_a_failed_tool_result_is_not_retried_by_the_state_machine(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given the order lookup's tool answers a retryable transient failure (its store was unavailable)
    bridge.faults["t1"] = Fault("result", error=ErrorType.TRANSIENT)

    # When the wave runs on the state machine alone
    results = _by_id(dispatcher.run_wave(_wave(), CUSTOMER, SESSION))

    # Then the state machine handed it back after one invocation: healing it is the router's
    assert _calls(bridge, "t1") == 1
    assert results["t1"].error is not None and results["t1"].error.type is ErrorType.TRANSIENT


def test_a_transient_result_is_retried_after_a_backoff_in_a_new_wave(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given the order lookup's tool fails transiently once
    bridge.faults["t1"] = Fault("result", error=ErrorType.TRANSIENT, times=1)

    # When the wave is healed
    healed = _healed(dispatcher, _wave())

    # Then the retry ran in a second wave of its own, after a backoff, and answered from the store
    assert (_actions(healed["t1"]), healed["t1"].decisions[0].retry_kind) == (["retry"], "backoff")
    assert healed["t1"].result is not None and healed["t1"].result.status is TaskStatus.SUCCESS
    assert healed["t1"].result.data is not None
    assert healed["t1"].result.data.rows[0]["tracking_id"] == "357962501027"
    assert [tid for _, tid in bridge.invocations[3:]] == ["t1"]
    assert healed["t1"].record()["attempts"] == 2 and healed["t2"].record()["attempts"] == 1


def test_a_parse_error_is_retried_with_the_error_as_a_hint(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given a catalogue question for Text2Cypher whose first answer does not parse
    task = Task(task_id="t1", task_type="product_info", tool="text2cypher",
                args={"question": "How many variants does the water bottle have?"})
    bridge.faults["t1"] = Fault("result", error=ErrorType.PARSE_ERROR, times=1)

    # When it is healed through the state machine
    healed = _healed(dispatcher, [task])

    # Then the second execution carried the error to the tool as a hint
    assert _actions(healed["t1"])[0] == "retry"
    first, second = bridge.events[0], bridge.events[1]
    assert "hint" not in first["args"]
    assert "parse_error (injected fault)" in second["args"]["hint"]


def test_a_knowledge_question_with_no_results_takes_the_keyword_search_in_a_new_wave(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given the knowledge search finds nothing with embeddings
    bridge.faults["t2"] = Fault("result", error=ErrorType.NO_RESULTS, times=1)

    # When the wave is healed
    healed = _healed(dispatcher, _wave())

    # Then the cheaper path ran in the knowledge search Lambda without embeddings, and the
    # answer is marked as a fallback (the reply's degradation notice reads that)
    assert _actions(healed["t2"]) == ["degrade"]
    keyword = {"question": "How long is the warranty on headphones?", "mode": "keyword"}
    assert bridge.events[-1]["args"] == keyword
    result = healed["t2"].result
    assert result is not None and result.status is TaskStatus.FALLBACK and result.tool == "knowledge_search"
    assert result.data is not None and result.data.mode == "keyword" and result.data.citations


def test_repeated_transient_failures_open_the_breaker_and_later_waves_fail_fast(
        dispatcher: LocalStepFunctionsDispatcher, bridge: LocalStepFunctions) -> None:
    # Given the store's tools fail transiently every time, until the neo4j breaker opens
    lookup = _wave()[:1]
    bridge.faults["t1"] = Fault("result", error=ErrorType.TRANSIENT)
    for _ in range(3):
        _healed(dispatcher, lookup)
        if breakers().get("neo4j").state.value == "open":
            break
    assert breakers().get("neo4j").state.value == "open"
    bridge.invocations.clear()

    # When another order lookup is healed
    healed = _healed(dispatcher, lookup)

    # Then no Lambda was invoked: it failed at once as temporarily unavailable, not retried
    assert bridge.invocations == []
    result = healed["t1"].result
    assert result is not None and result.error is not None
    assert (result.error.type, result.error.retryable) == (ErrorType.TRANSIENT, False)
    assert _actions(healed["t1"]) == ["fail"]
