"""The healer's policy: ONE table from `ErrorType` to what happens next.

Each error type has a ladder of steps taken in order, one per heal attempt of the same task,
and a final action once the ladder is spent:

| error type              | ladder (one step per heal attempt)                  | then    |
|-------------------------|-----------------------------------------------------|---------|
| parse_error             | retry with the error as a hint (x bound), degrade   | fail    |
| timeout, transient      | retry, same arguments, backoff + jitter (x bound)   | fail    |
| business_rule_violation | -                                                   | handoff |
| no_results              | degrade (FAQ / fulltext keyword match)              | fail    |
| low_confidence          | -                                                   | clarify |
| permission_denied       | -                                                   | refuse  |
| validation              | - (the hint names the parameter to ask for)         | clarify |
| unknown                 | retry once, degrade                                 | handoff |

"x bound" is `Bounds.max_retries_per_task`. A retry is never a blind repeat: the decision says
what changes (the parse error as a hint, or the backoff delay and a note that the arguments are
the same because the dependency had a transient fault). `fail` ends healing: the summariser
names the task, the reason and the next step.

Steps are skipped when they cannot help: `degrade` when the tool has no degraded path
(`can_degrade=False`), and backoff retries when the tool marked the timeout / transient fault
not retryable (an open circuit breaker, a missing index). Once the turn's tool-call budget is
spent, any step that needs a tool call gives way to the final action.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from csagent.domain.models import ErrorType, TaskStatus, ToolResult
from csagent.resilience.backoff import full_jitter_delay
from csagent.resilience.bounds import Bounds


class HealAction(StrEnum):
    """What the graph does with a task result."""

    ACCEPT = "accept"      # success or an already degraded answer: nothing to heal
    RETRY = "retry"        # run the task again, with what changes (`hint`, `delay_s`)
    DEGRADE = "degrade"    # run the task's cheaper path (FAQ / fulltext keyword match, templates)
    CLARIFY = "clarify"    # ask the customer (`hint` says what is missing or wrong)
    HANDOFF = "handoff"    # hand the task to a human agent
    REFUSE = "refuse"      # decline politely; retrying cannot change a permission
    FAIL = "fail"          # stop healing; the summary states the failure and the next step


class RetryKind(StrEnum):
    """What differs between the failed attempt and the retry."""

    WITH_HINT = "with_hint"    # the error text is given to the generator as a hint
    BACKOFF = "backoff"        # same arguments after a jittered delay (transient dependency fault)
    SAME_ARGS = "same_args"    # same arguments once more (unknown fault), error noted in the trace


@dataclass(frozen=True)
class Step:
    """One rung of a ladder. `repeat=None` repeats it `Bounds.max_retries_per_task` times."""

    action: HealAction
    retry_kind: RetryKind | None = None
    repeat: int | None = 1


@dataclass(frozen=True)
class Rule:
    """The ladder for one error type, the action once it is spent, and why."""

    steps: tuple[Step, ...]
    final: HealAction
    why: str


_RETRY_WITH_HINT = Step(HealAction.RETRY, RetryKind.WITH_HINT, repeat=None)
_RETRY_BACKOFF = Step(HealAction.RETRY, RetryKind.BACKOFF, repeat=None)
_RETRY_ONCE = Step(HealAction.RETRY, RetryKind.SAME_ARGS, repeat=1)
_DEGRADE = Step(HealAction.DEGRADE)

POLICY: MappingProxyType[ErrorType, Rule] = MappingProxyType({
    ErrorType.PARSE_ERROR: Rule(
        (_RETRY_WITH_HINT, _DEGRADE), HealAction.FAIL,
        "a malformed model output is usually fixed by showing the model its own error; the "
        "predefined templates / local tier are the fallback"),
    ErrorType.TIMEOUT: Rule(
        (_RETRY_BACKOFF,), HealAction.FAIL,
        "a slow dependency often recovers within a second; backoff with jitter avoids a retry storm"),
    ErrorType.TRANSIENT: Rule(
        (_RETRY_BACKOFF,), HealAction.FAIL,
        "a dropped connection or leader switch is gone on the next attempt"),
    ErrorType.BUSINESS_RULE_VIOLATION: Rule(
        (), HealAction.HANDOFF,
        "a policy conflict (e.g. a return outside the window) needs a person who may grant an exception"),
    ErrorType.NO_RESULTS: Rule(
        (_DEGRADE,), HealAction.FAIL,
        "the same query would find nothing again; a broader FAQ / keyword search might"),
    ErrorType.LOW_CONFIDENCE: Rule(
        (), HealAction.CLARIFY,
        "guessing would answer a question the customer did not ask"),
    ErrorType.PERMISSION_DENIED: Rule(
        (), HealAction.REFUSE,
        "no retry changes who owns the data"),
    ErrorType.VALIDATION: Rule(
        (), HealAction.CLARIFY,
        "only the customer can supply the corrected parameter"),
    ErrorType.UNKNOWN: Rule(
        (_RETRY_ONCE, _DEGRADE), HealAction.HANDOFF,
        "an unexplained failure gets one more try, then the cheaper path, then a person"),
})


class HealDecision(BaseModel):
    """What to do with one task result, and what changes if it is tried again."""

    model_config = ConfigDict(frozen=True)

    action: HealAction
    delay_s: float = 0.0
    hint: str | None = None
    reason: str
    error_type: ErrorType | None = None
    retry_kind: RetryKind | None = None

    @property
    def runs_tool(self) -> bool:
        """True when acting on the decision calls a tool again (a retry or a degraded call)."""
        return self.action in (HealAction.RETRY, HealAction.DEGRADE)


def rule_for(error_type: ErrorType) -> Rule:
    """The rule for `error_type` (the `unknown` rule for a type the table does not know)."""
    return POLICY.get(error_type, POLICY[ErrorType.UNKNOWN])


def ladder(error_type: ErrorType, bounds: Bounds, *, can_degrade: bool = True,
           retryable: bool = True) -> list[Step]:
    """The steps that apply to this error type, expanded (repeats unrolled) and filtered."""
    steps: list[Step] = []
    for step in rule_for(error_type).steps:
        if step.action is HealAction.DEGRADE and not can_degrade:
            continue
        if step.retry_kind is RetryKind.BACKOFF and not retryable:
            continue
        repeat = bounds.max_retries_per_task if step.repeat is None else min(step.repeat,
                                                                               bounds.max_retries_per_task)
        steps.extend([step] * (repeat if step.action is HealAction.RETRY else 1))
    return steps


def decide(result: ToolResult, attempts_so_far: int, bounds: Bounds, *, can_degrade: bool = True,
           tool_calls_left: int | None = None, rng: random.Random | None = None) -> HealDecision:
    """Decide what happens after `result`.

    `attempts_so_far` is the number of heal steps already taken for this task (retries and
    degraded calls): 0 when `result` is the task's first attempt. `can_degrade` says whether the
    tool has a degraded path; `tool_calls_left` is the turn's remaining tool-call budget (None:
    not tracked by the caller); `rng` makes the backoff jitter reproducible in tests.
    """
    if result.status is not TaskStatus.FAILED:
        return HealDecision(action=HealAction.ACCEPT, reason=f"{result.status.value}: nothing to heal")
    error_type = result.error.type if result.error else ErrorType.UNKNOWN
    message = result.error.message if result.error else "the tool failed without saying why"
    retryable = result.error.retryable if result.error else True
    rule = rule_for(error_type)
    steps = ladder(error_type, bounds, can_degrade=can_degrade, retryable=retryable)
    if attempts_so_far >= len(steps):
        spent = "no heal step applies" if not steps else f"{len(steps)} heal step(s) spent"
        return _final(rule, error_type, message, f"{error_type.value}: {spent}; {rule.why}")
    if tool_calls_left is not None and tool_calls_left <= 0:
        return _final(rule, error_type, message, f"{error_type.value}: the turn's tool-call budget is spent")
    step = steps[attempts_so_far]
    if step.action is HealAction.DEGRADE:
        return HealDecision(action=HealAction.DEGRADE, error_type=error_type, hint=message,
                            reason=f"{error_type.value}: degrade to the cheaper path; {rule.why}")
    retry_no = sum(1 for s in steps[:attempts_so_far] if s.action is HealAction.RETRY)
    retries = sum(1 for s in steps if s.action is HealAction.RETRY)
    return _retry(step, error_type, message, retry_no, retries, bounds, rng)


def _retry(step: Step, error_type: ErrorType, message: str, retry_no: int, retries: int, bounds: Bounds,
           rng: random.Random | None) -> HealDecision:
    """A retry decision that carries what changes for this kind of retry."""
    label = f"{error_type.value}: retry {retry_no + 1} of {retries}"
    if step.retry_kind is RetryKind.WITH_HINT:
        return HealDecision(action=HealAction.RETRY, retry_kind=RetryKind.WITH_HINT, error_type=error_type,
                            hint=message, reason=f"{label} with the error as a hint")
    if step.retry_kind is RetryKind.BACKOFF:
        delay = full_jitter_delay(retry_no, base_s=bounds.backoff_base_s, cap_s=bounds.backoff_max_s, rng=rng)
        return HealDecision(
            action=HealAction.RETRY, retry_kind=RetryKind.BACKOFF, error_type=error_type, delay_s=delay,
            hint=f"same arguments: the dependency had a transient fault ({message}); retrying after "
                 f"{delay:.3f} s of backoff",
            reason=f"{label} after {delay:.3f} s (exponential backoff, full jitter)")
    return HealDecision(
        action=HealAction.RETRY, retry_kind=RetryKind.SAME_ARGS, error_type=error_type,
        hint=f"same arguments once more: the previous attempt failed unexpectedly ({message})",
        reason=f"{label}: unexplained failure, one more attempt before the cheaper path")


def _final(rule: Rule, error_type: ErrorType, message: str, reason: str) -> HealDecision:
    """The rule's final action; clarifications carry the error as what to ask about."""
    hint = message if rule.final in (HealAction.CLARIFY, HealAction.REFUSE, HealAction.HANDOFF) else None
    return HealDecision(action=rule.final, error_type=error_type, hint=hint, reason=reason)
