"""Healing a task: call its tool through the dependency's circuit breaker, and act on a failure
as the one policy table says (`csagent.resilience.policy`): retry with the error as a hint, back
off and retry, take the cheaper path, or stop and let the graph clarify, refuse or hand over.
Every step is recorded on the result (`attempts`, `heal`), so the trace and the reply can say
what happened. Never raises.

One healer, two ways of running its attempts (`DISPATCH_MODE`):

- in-process (`run_healed`, the `run_task` node): each attempt is a call of the tool function;
- Step Functions (`run_healed_waves`, the `dispatch_wave` node): each round of attempts is one
  execution of the dispatch state machine (a new wave), which only retries infrastructure
  errors (Lambda service errors, throttling) and hands every tool failure back as a ToolResult.

Both drive the same `TaskHealer`, which does no I/O: it says which task to run next (the task,
the task with the error as a hint, or its cheaper path), takes the result, consults the
breaker and the policy table, and keeps the decisions. So a failed result from a tool Lambda is
healed exactly as a failed result from the same tool called in this process.

Cheaper paths (the degradation ladder below the models) are tasks, so they can be dispatched
like any other:
- predefined_cypher (a question no template answered; not the empty answer of the template the
  planner chose) -> text2cypher, which itself falls back to the closest template in the local tier;
- knowledge_search / text2cypher -> knowledge_search with `mode: keyword` (the FAQ and fulltext
  keyword match, knowledge search without embeddings).

Circuit breakers live in the process that runs the healer (the router), one per dependency, for
both modes: in AWS each router execution environment has its own (see `resilience/breaker.py`).

Every in-process tool call runs in a tracer subsegment `tool:<tool>` and is measured
(ToolLatency, ToolFailure; Retry and Degradation per heal step): see `csagent.observability`.
Tool Lambdas measure their own calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from csagent.domain.models import ErrorType, Task, TaskStatus, ToolResult
from csagent.domain.task_args import KnowledgeSearchArgs, PredefinedCypherArgs, Text2CypherArgs
from csagent.observability import record_heal, tool_call
from csagent.resilience.bounds import Bounds
from csagent.resilience.breaker import BreakerRegistry, breakers, is_dependency_fault
from csagent.resilience.policy import HealAction, HealDecision, RetryKind, decide
from csagent.tools.context import ToolContext
from csagent.tools.failures import failed_result

ToolFn = Callable[[Task, ToolContext], ToolResult]
#: Runs one wave of tasks and returns one ToolResult per task, in task order (never raises).
WaveRunner = Callable[[Sequence[Task]], Sequence[ToolResult]]

# Which dependency a tool leans on: one breaker per dependency, not per tool.
BREAKER_OF = {"predefined_cypher": "neo4j", "customer_actions": "neo4j", "text2cypher": "neo4j",
              "knowledge_search": "knowledge_search"}


def degraded_task(task: Task, tools: Collection[str], result: ToolResult | None = None) -> Task | None:
    """The task's cheaper path as a task, if it has one and its tool is available. The template
    the planner chose for an order or account question (`template_id`, `fallback_template`) that
    ran and found nothing ("There is no gift card on your account.") has answered: a generated
    query would only guess at another question."""
    args = task.args
    chosen = isinstance(args, PredefinedCypherArgs) and bool(args.template_id or args.fallback_template)
    if chosen and result is not None and result.error is not None \
            and result.error.type is ErrorType.NO_RESULTS:
        return None
    question = args.question if isinstance(args, PredefinedCypherArgs | KnowledgeSearchArgs
                                             | Text2CypherArgs) else None
    if isinstance(args, PredefinedCypherArgs) and question and "text2cypher" in tools:
        return task.model_copy(update={"tool": "text2cypher", "args": Text2CypherArgs(question=question)})
    if isinstance(args, KnowledgeSearchArgs | Text2CypherArgs) and "knowledge_search" in tools and question:
        # Without embeddings: the FAQ and fulltext keyword match.
        return task.model_copy(update={"tool": "knowledge_search",
                                       "args": KnowledgeSearchArgs(question=question, mode="keyword")})
    return None


def _unavailable(task: Task, name: str) -> ToolResult:
    return ToolResult.failed(task, ErrorType.TRANSIENT, f"{name} is temporarily unavailable", retryable=False)


class TaskHealer:
    """One task's way through the policy table, one tool call at a time. No I/O: the caller runs
    each attempt (`next_attempt`) however it dispatches tools and reports its result (`report`).

    `tools` are the tool names the caller can run (for the cheaper paths); `tool_calls_left` is
    the task's share of the turn's tool-call budget (None: not tracked).
    """

    def __init__(self, task: Task, tools: Collection[str], bounds: Bounds, *,
                 tool_calls_left: int | None = None, registry: BreakerRegistry | None = None) -> None:
        self.task = task
        self.decisions: list[HealDecision] = []
        self.calls = 0
        self.degraded = False
        self.delay_s = 0.0  # how long to wait before the next attempt (a backoff retry)
        self.result: ToolResult | None = None  # set when healing is over
        self._tools = frozenset(tools)
        self._bounds = bounds
        self._left = tool_calls_left
        self._registry = registry or breakers()
        self._current = task
        self._in_flight: str | None = None  # the breaker of the attempt handed out, until reported

    @property
    def done(self) -> bool:
        return self.result is not None

    def breaker_name(self, tool: str) -> str:
        return BREAKER_OF.get(tool, tool)

    def next_attempt(self) -> Task | None:
        """The task to run now, or None when healing is over (`result` holds the outcome). While
        the dependency's breaker is open, attempts fail fast here without a call (and count)."""
        while self.result is None:
            name = self.breaker_name(self._current.tool)
            if self._registry.get(name).allow():
                self._in_flight = name
                return self._current
            self._settle(_unavailable(self.task, name))
        return None

    def report(self, result: ToolResult, *, raised: bool = False) -> HealDecision:
        """The outcome of the attempt `next_attempt` handed out (`raised`: the call raised and
        `result` stands for the exception). Records it on the breaker, then decides."""
        if self._in_flight is not None:
            breaker = self._registry.get(self._in_flight)
            if raised or is_dependency_fault(result):
                breaker.record_failure()
            else:
                breaker.record_success()
            self._in_flight = None
        return self._settle(result)

    def _settle(self, result: ToolResult) -> HealDecision:
        self.calls += 1
        self.delay_s = 0.0
        if self.degraded and result.status is TaskStatus.SUCCESS:
            result = result.model_copy(update={"status": TaskStatus.FALLBACK})
        left = None if self._left is None else self._left - self.calls
        decision = decide(result, len(self.decisions), self._bounds,
                          can_degrade=not self.degraded and degraded_task(self.task, self._tools, result)
                          is not None, tool_calls_left=left)
        if decision.action is HealAction.ACCEPT:
            self.result = result.model_copy(update={"task_id": self.task.task_id,
                                                    "task_type": self.task.task_type, "tool": self.task.tool})
            return decision
        self.decisions.append(decision)
        record_heal(decision)  # Retry / Degradation metrics
        if decision.action is HealAction.RETRY:
            self.delay_s = decision.delay_s
            if not self.degraded:  # the cheaper path is rebuilt from the task: a hint would not reach it
                hint = decision.hint if decision.retry_kind is RetryKind.WITH_HINT else None
                self._current = self.task if hint is None else self.task.model_copy(
                    update={"args": self.task.args.model_copy(update={"hint": hint})})
        elif decision.action is HealAction.DEGRADE:
            path = degraded_task(self.task, self._tools)
            if path is None:  # cannot happen: decide() only degrades when a path exists
                self.result = result
            else:
                self._current, self.degraded = path, True
        else:
            self.result = result
        return decision

    def record(self) -> dict[str, Any]:
        """The result slot: the final result with what healing did (`attempts`, `heal`)."""
        assert self.result is not None, "healing is not over"
        return {**self.result.model_dump(mode="json"), **heal_record(self.decisions, self.calls)}


def run_healed(task: Task, ctx: ToolContext, tools: Mapping[str, ToolFn], bounds: Bounds, *,
               tool_calls_left: int | None = None, sleep: Callable[[float], None] = time.sleep
               ) -> tuple[ToolResult, list[HealDecision], int]:
    """In-process: the task's final result, the heal decisions taken, and how many tool calls it used."""
    if task.tool not in tools:
        return ToolResult.failed(task, ErrorType.UNKNOWN, f"no tool named {task.tool!r}"), [], 0
    healer = TaskHealer(task, tools.keys(), bounds, tool_calls_left=tool_calls_left)
    while (attempt := healer.next_attempt()) is not None:
        raised = False
        with tool_call(attempt.tool, task_type=task.task_type, attempt=healer.calls + 1,
                       degraded=healer.degraded) as span:
            try:
                result = tools[attempt.tool](attempt, ctx)
            except Exception as exc:  # noqa: BLE001 - failure is data
                result, raised = failed_result(task, exc), True
            span.finish(result)  # ToolLatency, ToolFailure; the span's status annotations
        healer.report(result, raised=raised)
        if healer.delay_s:
            sleep(healer.delay_s)
    assert healer.result is not None
    return healer.result, healer.decisions, healer.calls


def run_healed_waves(tasks: Sequence[Task], run_wave: WaveRunner, tools: Collection[str], bounds: Bounds, *,
                     tool_calls_left: int | None = None, sleep: Callable[[float], None] = time.sleep
                     ) -> list[TaskHealer]:
    """Through a dispatcher: every task's first attempt in one wave, then each round of retries
    and cheaper paths in a new wave, until every task is healed or has failed for good. One
    healer per task, in task order (`TaskHealer.record()` is its result slot).

    A retry's backoff is waited for before the wave that carries it (the longest of the wave's
    delays: the tasks of a wave run together)."""
    healers = [TaskHealer(t, tools, bounds, tool_calls_left=tool_calls_left) for t in tasks]
    while True:
        wave = [(h, a) for h in healers if (a := h.next_attempt()) is not None]
        if not wave:
            return healers
        results = list(run_wave([a for _, a in wave]))
        for index, (healer, attempt) in enumerate(wave):
            result = results[index] if index < len(results) else ToolResult.failed(
                attempt, ErrorType.UNKNOWN, "The dispatch returned no result for this task.")
            healer.report(result)
        delay = max((h.delay_s for h in healers if not h.done), default=0.0)
        if delay:
            sleep(delay)


def heal_record(decisions: list[HealDecision], calls: int) -> dict[str, Any]:
    """What the result slot carries about healing (read by the trace, the triggers, the reply)."""
    return {"attempts": calls, "heal": [{"action": d.action.value, "reason": d.reason,
                                         "delay_s": round(d.delay_s, 3),
                                         "error_type": d.error_type.value if d.error_type else None}
                                        for d in decisions]}
