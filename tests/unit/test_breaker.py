"""Circuit breakers: every state transition with a fake clock, the registry, and `guard`."""

from __future__ import annotations

import threading

import pytest

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.resilience.breaker import (
    BreakerConfig,
    BreakerRegistry,
    BreakerState,
    CircuitBreaker,
    breakers,
    guard,
    model_breaker_name,
)

CONFIG = BreakerConfig(failure_threshold=3, failure_ratio=0.5, window_size=10, min_calls=6, cool_down_s=10.0)
TASK = Task(task_id="t1", task_type="knowledge", tool="knowledge_search")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def breaker(clock: FakeClock) -> CircuitBreaker:
    return CircuitBreaker("neo4j", CONFIG, clock=clock)


def fail_times(breaker: CircuitBreaker, n: int) -> None:
    for _ in range(n):
        breaker.record_failure()


def open_breaker(breaker: CircuitBreaker) -> None:
    fail_times(breaker, CONFIG.failure_threshold)
    assert breaker.state is BreakerState.OPEN


# -- closed ----------------------------------------------------------------------------------
def test_new_breaker_is_closed_and_allows_calls(breaker: CircuitBreaker) -> None:
    # Given a new breaker
    # Then it lets calls through
    assert breaker.state is BreakerState.CLOSED and breaker.allow()


def test_consecutive_failures_below_threshold_keep_it_closed(breaker: CircuitBreaker) -> None:
    # Given two failures (threshold 3)
    fail_times(breaker, 2)
    # Then the breaker is still closed
    assert breaker.state is BreakerState.CLOSED


def test_threshold_consecutive_failures_open_it(breaker: CircuitBreaker) -> None:
    # Given three failures in a row
    fail_times(breaker, 3)
    # Then the breaker is open and refuses calls
    assert breaker.state is BreakerState.OPEN and not breaker.allow()


def test_a_success_resets_the_consecutive_failure_count(breaker: CircuitBreaker) -> None:
    # Given two failures, a success, and two more failures
    fail_times(breaker, 2)
    breaker.record_success()
    fail_times(breaker, 2)
    # Then no three failures were consecutive and the breaker stays closed
    assert breaker.state is BreakerState.CLOSED


def test_failure_ratio_over_the_window_opens_it(breaker: CircuitBreaker) -> None:
    # Given alternating failures and successes (never 3 in a row) reaching 6 calls at 50 % failures
    for _ in range(3):
        breaker.record_failure()
        breaker.record_success()
    assert breaker.state is BreakerState.CLOSED  # the 6th call was a success: 3/6 = 50 % -> judged next
    # When one more failure arrives (4 of 7)
    breaker.record_failure()
    # Then the flapping dependency is cut off
    assert breaker.state is BreakerState.OPEN


def test_ratio_is_not_judged_before_min_calls(breaker: CircuitBreaker) -> None:
    # Given one success and two failures (67 % of only 3 calls)
    breaker.record_success()
    fail_times(breaker, 2)
    # Then the breaker is still closed
    assert breaker.state is BreakerState.CLOSED


# -- open → half-open ------------------------------------------------------------------------
def test_open_breaker_refuses_calls_during_the_cool_down(breaker: CircuitBreaker, clock: FakeClock) -> None:
    # Given an open breaker
    open_breaker(breaker)
    # When 9.9 of 10 cool-down seconds have passed
    clock.advance(9.9)
    # Then calls are still refused
    assert not breaker.allow() and breaker.state is BreakerState.OPEN


def test_after_the_cool_down_it_is_half_open(breaker: CircuitBreaker, clock: FakeClock) -> None:
    # Given an open breaker
    open_breaker(breaker)
    # When the cool-down has elapsed
    clock.advance(10.0)
    # Then it reports half-open
    assert breaker.state is BreakerState.HALF_OPEN


def test_half_open_allows_exactly_one_probe(breaker: CircuitBreaker, clock: FakeClock) -> None:
    # Given a half-open breaker
    open_breaker(breaker)
    clock.advance(10.0)
    # When three callers ask
    allowed = [breaker.allow() for _ in range(3)]
    # Then only the first is let through
    assert allowed == [True, False, False]


def test_successful_probe_closes_it(breaker: CircuitBreaker, clock: FakeClock) -> None:
    # Given a half-open breaker whose probe was let through
    open_breaker(breaker)
    clock.advance(10.0)
    assert breaker.allow()
    # When the probe succeeds
    breaker.record_success()
    # Then the breaker is closed and calls flow again
    assert breaker.state is BreakerState.CLOSED and breaker.allow() and breaker.allow()


def test_failed_probe_reopens_it_for_a_new_cool_down(breaker: CircuitBreaker, clock: FakeClock) -> None:
    # Given a half-open breaker whose probe was let through
    open_breaker(breaker)
    clock.advance(10.0)
    assert breaker.allow()
    # When the probe fails
    breaker.record_failure()
    # Then it is open again, and stays open for a full new cool-down
    assert breaker.state is BreakerState.OPEN
    clock.advance(9.0)
    assert not breaker.allow()
    clock.advance(1.0)
    assert breaker.state is BreakerState.HALF_OPEN


def test_closed_again_after_recovery_needs_a_full_streak_to_reopen(breaker: CircuitBreaker,
                                                                   clock: FakeClock) -> None:
    # Given a breaker that opened and recovered
    open_breaker(breaker)
    clock.advance(10.0)
    breaker.allow()
    breaker.record_success()
    # When two failures happen (the old ones are forgotten)
    fail_times(breaker, 2)
    # Then it is still closed
    assert breaker.state is BreakerState.CLOSED


def test_a_probe_that_never_reports_frees_the_slot_after_a_cool_down(breaker: CircuitBreaker,
                                                                     clock: FakeClock) -> None:
    # Given a half-open breaker whose probe caller vanished without reporting
    open_breaker(breaker)
    clock.advance(10.0)
    assert breaker.allow()
    # When another cool-down passes
    clock.advance(10.0)
    # Then a new probe is allowed (the breaker is not stuck half-open)
    assert breaker.allow()


# -- thread safety ---------------------------------------------------------------------------
def test_concurrent_callers_get_a_single_probe(clock: FakeClock) -> None:
    # Given a half-open breaker
    breaker = CircuitBreaker("neo4j", CONFIG, clock=clock)
    open_breaker(breaker)
    clock.advance(10.0)
    granted: list[bool] = []
    barrier = threading.Barrier(16)

    def ask() -> None:
        barrier.wait()
        granted.append(breaker.allow())

    # When 16 threads ask at the same moment
    threads = [threading.Thread(target=ask) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then exactly one probe was granted
    assert granted.count(True) == 1


# -- registry and guard ----------------------------------------------------------------------
def test_registry_returns_one_breaker_per_name(clock: FakeClock) -> None:
    # Given a registry
    registry = BreakerRegistry(CONFIG, clock=clock)
    # When the same name is asked for twice and a model name once
    a, b = registry.get("neo4j"), registry.get("neo4j")
    model = registry.get(model_breaker_name("bedrock/claude"))
    open_breaker(a)
    # Then the neo4j breaker is shared and independent from the model's
    assert a is b
    assert registry.snapshot() == {"neo4j": "open", "model:bedrock/claude": "closed"}
    assert model.allow()


def test_process_wide_registry_is_a_singleton() -> None:
    # Given the process-wide registry
    # Then every call returns the same one
    assert breakers() is breakers()


def test_guard_routes_around_an_open_breaker_without_calling(clock: FakeClock) -> None:
    # Given an open "knowledge_search" breaker
    registry = BreakerRegistry(CONFIG, clock=clock)
    open_breaker(registry.get("knowledge_search"))
    calls: list[str] = []

    def search() -> str:
        calls.append("called")
        return "answer"

    # When a call is guarded
    result = guard("knowledge_search", search, lambda: "fallback", registry=registry)
    # Then the fallback comes back at once and the dependency is not touched
    assert result == "fallback" and calls == []


def test_guard_counts_timeout_results_as_failures(clock: FakeClock) -> None:
    # Given a tool that keeps timing out
    registry = BreakerRegistry(CONFIG, clock=clock)

    def timing_out() -> ToolResult:
        return ToolResult.failed(TASK, ErrorType.TIMEOUT, "timed out", retryable=True)

    # When it is called through the guard three times
    for _ in range(3):
        guard("knowledge_search", timing_out, lambda: ToolResult.ok(TASK, {}), registry=registry)
    # Then the breaker opened
    assert registry.get("knowledge_search").state is BreakerState.OPEN


def test_guard_does_not_count_no_results_as_a_dependency_failure(clock: FakeClock) -> None:
    # Given a tool that works but finds nothing
    registry = BreakerRegistry(CONFIG, clock=clock)

    def empty() -> ToolResult:
        return ToolResult.failed(TASK, ErrorType.NO_RESULTS, "nothing found")

    # When it is called five times
    for _ in range(5):
        guard("knowledge_search", empty, lambda: ToolResult.ok(TASK, {}), registry=registry)
    # Then the dependency is still considered healthy
    assert registry.get("knowledge_search").state is BreakerState.CLOSED


def test_guard_records_and_reraises_exceptions(clock: FakeClock) -> None:
    # Given a call that raises
    registry = BreakerRegistry(CONFIG, clock=clock)

    def broken() -> str:
        raise ConnectionError("refused")

    # When it is guarded three times
    for _ in range(3):
        with pytest.raises(ConnectionError):
            guard("neo4j", broken, lambda: "fallback", registry=registry)
    # Then each raise counted and the breaker opened
    assert registry.get("neo4j").state is BreakerState.OPEN
