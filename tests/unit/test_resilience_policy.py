"""The healer's policy table, backoff with full jitter, and the bounds (no I/O)."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.resilience.backoff import backoff_ceiling, full_jitter_delay
from csagent.resilience.bounds import Bounds
from csagent.resilience.policy import POLICY, HealAction, RetryKind, decide

TASK = Task(task_id="t1", task_type="order_status", tool="predefined_cypher", args={"params": {}})
BOUNDS = Bounds(max_retries_per_task=2, backoff_base_s=0.2, backoff_max_s=2.0)


def failed(error_type: ErrorType, message: str = "boom", *, retryable: bool = True) -> ToolResult:
    return ToolResult.failed(TASK, error_type, message, retryable=retryable)


def actions(error_type: ErrorType, *, can_degrade: bool = True, retryable: bool = True,
            upto: int = 6) -> list[str]:
    """The action taken after each successive failure of the same task."""
    result = failed(error_type, retryable=retryable)
    return [decide(result, n, BOUNDS, can_degrade=can_degrade, rng=random.Random(0)).action.value
            for n in range(upto)]


# -- the table ---------------------------------------------------------------------------------
@pytest.mark.parametrize("error_type", list(ErrorType))
def test_every_error_type_has_a_policy_entry(error_type: ErrorType) -> None:
    # Given the ErrorType enum, iterated so a new member cannot be forgotten
    # When its entry is looked up
    rule = POLICY.get(error_type)
    # Then the table has one, with a final action and a reason
    assert rule is not None, f"POLICY has no entry for {error_type}"
    assert rule.final in HealAction and rule.why


@pytest.mark.parametrize("error_type", list(ErrorType))
def test_every_error_type_ends_in_a_terminal_action(error_type: ErrorType) -> None:
    # Given a task that keeps failing with the same error
    # When the healer has been asked many times
    last = decide(failed(error_type), 50, BOUNDS, rng=random.Random(0))
    # Then it has stopped healing (no endless retry or degrade loop)
    assert not last.runs_tool


@pytest.mark.parametrize(("error_type", "expected"), [
    (ErrorType.PARSE_ERROR, ["retry", "retry", "degrade", "fail", "fail"]),
    (ErrorType.TIMEOUT, ["retry", "retry", "fail", "fail", "fail"]),
    (ErrorType.TRANSIENT, ["retry", "retry", "fail", "fail", "fail"]),
    (ErrorType.BUSINESS_RULE_VIOLATION, ["handoff"] * 5),
    (ErrorType.NO_RESULTS, ["degrade", "fail", "fail", "fail", "fail"]),
    (ErrorType.LOW_CONFIDENCE, ["clarify"] * 5),
    (ErrorType.PERMISSION_DENIED, ["refuse"] * 5),
    (ErrorType.VALIDATION, ["clarify"] * 5),
    (ErrorType.UNKNOWN, ["retry", "degrade", "handoff", "handoff", "handoff"]),
])
def test_each_error_type_follows_its_ladder(error_type: ErrorType, expected: list[str]) -> None:
    # Given a task failing again and again with one error type, with 2 retries allowed
    # When the healer decides after each failure
    # Then the sequence of actions is the documented ladder
    assert actions(error_type, upto=5) == expected


def test_success_is_accepted_without_healing() -> None:
    # Given a successful result
    result = ToolResult.ok(TASK, {"rows": []})
    # When the healer decides
    decision = decide(result, 0, BOUNDS)
    # Then nothing is retried
    assert decision.action is HealAction.ACCEPT


# -- retries are never blind -----------------------------------------------------------------
def test_parse_error_retry_carries_the_error_as_the_hint() -> None:
    # Given a generation that failed to parse
    result = failed(ErrorType.PARSE_ERROR, "Invalid input 'RETRN': expected RETURN (line 1, column 20)")
    # When the healer decides
    decision = decide(result, 0, BOUNDS)
    # Then the retry passes the parser's message on as the hint, with no delay
    assert decision.action is HealAction.RETRY
    assert decision.retry_kind is RetryKind.WITH_HINT
    assert decision.hint == "Invalid input 'RETRN': expected RETURN (line 1, column 20)"
    assert decision.delay_s == 0.0


def test_transient_retry_waits_and_says_the_arguments_are_unchanged() -> None:
    # Given a transient dependency fault
    result = failed(ErrorType.TRANSIENT, "the store database is temporarily unavailable")
    # When the healer decides
    decision = decide(result, 0, BOUNDS, rng=random.Random(42))
    # Then the retry waits a jittered delay within the first ceiling and says why it repeats itself
    assert decision.retry_kind is RetryKind.BACKOFF
    assert 0.0 <= decision.delay_s <= 0.2
    assert "same arguments" in (decision.hint or "")
    assert "transient" in (decision.hint or "")


def test_second_transient_retry_may_wait_longer_than_the_first() -> None:
    # Given a random source that always draws the top of the range
    top = random.Random()
    top.uniform = lambda a, b: b  # type: ignore[method-assign]
    result = failed(ErrorType.TIMEOUT)
    # When the healer decides the first and the second retry
    first, second = decide(result, 0, BOUNDS, rng=top), decide(result, 1, BOUNDS, rng=top)
    # Then the ceiling doubled
    assert (first.delay_s, second.delay_s) == (0.2, 0.4)


def test_unknown_failure_retry_names_the_previous_error() -> None:
    # Given an unexplained failure
    # When the healer decides
    decision = decide(failed(ErrorType.UNKNOWN, "KeyError: 'rows'"), 0, BOUNDS)
    # Then the single retry keeps the arguments and records what went wrong
    assert decision.retry_kind is RetryKind.SAME_ARGS
    assert "KeyError: 'rows'" in (decision.hint or "")


def test_validation_clarification_says_which_parameter_to_ask_for() -> None:
    # Given a task whose order id did not validate
    result = failed(ErrorType.VALIDATION, "order_id must look like #W1234567")
    # When the healer decides
    decision = decide(result, 0, BOUNDS)
    # Then the customer is asked, and the question can name the parameter
    assert decision.action is HealAction.CLARIFY
    assert decision.hint == "order_id must look like #W1234567"


# -- skipped steps and budgets ---------------------------------------------------------------
def test_no_results_without_a_degraded_path_fails_at_once() -> None:
    # Given a tool with no cheaper path
    # When it finds nothing
    # Then the healer stops instead of degrading
    assert actions(ErrorType.NO_RESULTS, can_degrade=False, upto=2) == ["fail", "fail"]


def test_transient_fault_marked_not_retryable_is_not_retried() -> None:
    # Given a transient fault the tool marked not retryable (e.g. an open circuit breaker)
    # When the healer decides
    # Then it does not wait and repeat the same call
    assert actions(ErrorType.TRANSIENT, retryable=False, upto=2) == ["fail", "fail"]


def test_spent_tool_call_budget_turns_a_retry_into_the_final_action() -> None:
    # Given a timeout in a turn that has no tool calls left
    # When the healer decides
    decision = decide(failed(ErrorType.TIMEOUT), 0, BOUNDS, tool_calls_left=0)
    # Then no further call is made and the reason says why
    assert decision.action is HealAction.FAIL
    assert "budget" in decision.reason


def test_zero_retries_bound_skips_straight_to_degrade() -> None:
    # Given bounds that allow no retries
    bounds = Bounds(max_retries_per_task=0)
    # When a parse error happens
    decision = decide(failed(ErrorType.PARSE_ERROR), 0, bounds)
    # Then the cheaper path is taken at once
    assert decision.action is HealAction.DEGRADE


# -- backoff ---------------------------------------------------------------------------------
def test_backoff_ceiling_doubles_until_the_cap() -> None:
    # Given a base of 0.2 s and a cap of 2 s
    # When the ceilings of the first six retries are computed
    ceilings = [backoff_ceiling(n, base_s=0.2, cap_s=2.0) for n in range(6)]
    # Then they double and then stay at the cap
    assert ceilings == pytest.approx([0.2, 0.4, 0.8, 1.6, 2.0, 2.0])


def test_full_jitter_draws_spread_over_the_whole_range() -> None:
    # Given a seeded random source
    rng = random.Random(7)
    # When many delays are drawn for the third retry (ceiling 0.8 s)
    delays = [full_jitter_delay(2, base_s=0.2, cap_s=2.0, rng=rng) for _ in range(500)]
    # Then all are within [0, 0.8] and they cover the low and the high end of the range
    assert all(0.0 <= d <= 0.8 for d in delays)
    assert min(delays) < 0.1 and max(delays) > 0.7


def test_huge_attempt_numbers_stay_at_the_cap() -> None:
    # Given a retry number far beyond any real one
    # When its ceiling is computed
    # Then it is the cap (no overflow)
    assert backoff_ceiling(10_000, base_s=0.2, cap_s=2.0) == 2.0


# -- bounds ----------------------------------------------------------------------------------
def test_bounds_defaults_match_the_documented_limits() -> None:
    # Given no environment overrides
    bounds = Bounds()
    # Then the defaults are the documented ones
    assert (bounds.max_retries_per_task, bounds.max_tool_calls_per_turn,
            bounds.max_node_visits_per_turn, bounds.recursion_limit) == (2, 12, 40, 60)


def test_bounds_are_overridden_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given BOUNDS_ variables in the environment
    monkeypatch.setenv("BOUNDS_MAX_TOOL_CALLS_PER_TURN", "8")
    monkeypatch.setenv("BOUNDS_MAX_RETRIES_PER_TASK", "1")
    # When the bounds are read
    bounds = Bounds()
    # Then the overrides apply
    assert (bounds.max_tool_calls_per_turn, bounds.max_retries_per_task) == (8, 1)


def test_recursion_limit_below_node_visit_bound_is_refused() -> None:
    # Given a recursion limit that LangGraph would hit before our own handoff bound
    # When the bounds are built
    # Then they are refused with the reason
    with pytest.raises(ValidationError, match="recursion_limit"):
        Bounds(recursion_limit=30, max_node_visits_per_turn=40)
