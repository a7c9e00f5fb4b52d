"""Healing one task: call its tool through the dependency's circuit breaker, and act on a
failure as the one policy table says (`csagent.resilience.policy`): retry with the error as a
hint, back off and retry, take the cheaper path, or stop and let the graph clarify, refuse or
hand over. Every step is recorded on the result (`attempts`, `heal`), so the trace and the
reply can say what happened. Never raises.

Cheaper paths (the degradation ladder below the models):
- predefined_cypher (a question no template answered; not the empty answer of the template the
  planner chose) → text2cypher, which itself falls back to the closest template in the local tier;
- knowledge_search / text2cypher → the FAQ and fulltext keyword match (knowledge search
  without embeddings).

Every tool call runs in a tracer subsegment `tool:<tool>` and is measured (ToolLatency,
ToolFailure; Retry and Degradation per heal step): see `csagent.observability`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from csagent.domain.models import ErrorType, Task, TaskStatus, ToolResult
from csagent.observability import record_heal, tool_call
from csagent.resilience.bounds import Bounds
from csagent.resilience.breaker import guard
from csagent.resilience.policy import HealAction, HealDecision, RetryKind, decide
from csagent.tools.context import ToolContext

ToolFn = Callable[[Task, ToolContext], ToolResult]

# Which dependency a tool leans on: one breaker per dependency, not per tool.
BREAKER_OF = {"predefined_cypher": "neo4j", "customer_actions": "neo4j", "text2cypher": "neo4j",
              "knowledge_search": "knowledge_search"}


def _keyword_search(task: Task, ctx: ToolContext, tools: Mapping[str, ToolFn]) -> ToolResult:
    question = task.args.get("question") or task.args.get("hint") or ""
    degraded = task.model_copy(update={"tool": "knowledge_search", "args": {"question": question}})
    return tools["knowledge_search"](degraded, replace(ctx, embedder=None))


def _text2cypher(task: Task, ctx: ToolContext, tools: Mapping[str, ToolFn]) -> ToolResult:
    degraded = task.model_copy(update={"tool": "text2cypher", "args": {"question": task.args["question"]}})
    return tools["text2cypher"](degraded, ctx)


def degraded_path(task: Task, tools: Mapping[str, ToolFn], result: ToolResult | None = None) -> ToolFn | None:
    """The task's cheaper path, if it has one and the tools for it are registered. The template the
    planner chose for an order or account question (`template_id`, `fallback_template`) that ran
    and found nothing ("There is no gift card on your account.") has answered: a generated query
    would only guess at another question."""
    chosen = bool(task.args.get("template_id") or task.args.get("fallback_template"))
    if task.tool == "predefined_cypher" and chosen and result is not None and result.error is not None \
            and result.error.type is ErrorType.NO_RESULTS:
        return None
    if task.tool == "predefined_cypher" and task.args.get("question") and "text2cypher" in tools:
        return lambda t, c: _text2cypher(t, c, tools)
    if task.tool in {"knowledge_search", "text2cypher"} and "knowledge_search" in tools and (
            task.args.get("question")):
        return lambda t, c: _keyword_search(t, c, tools)
    return None


def _unavailable(task: Task, name: str) -> ToolResult:
    return ToolResult.failed(task, ErrorType.TRANSIENT, f"{name} is temporarily unavailable", retryable=False)


def run_healed(task: Task, ctx: ToolContext, tools: Mapping[str, ToolFn], bounds: Bounds, *,
               tool_calls_left: int | None = None, sleep: Callable[[float], None] = time.sleep
               ) -> tuple[ToolResult, list[HealDecision], int]:
    """The task's final result, the heal decisions taken, and how many tool calls it used."""
    tool = tools.get(task.tool)
    if tool is None:
        return ToolResult.failed(task, ErrorType.UNKNOWN, f"no tool named {task.tool!r}"), [], 0
    call: Callable[[Task, ToolContext], ToolResult] = tool
    current, calls = task, 0
    decisions: list[HealDecision] = []
    degraded = False
    while True:
        breaker = BREAKER_OF.get(current.tool, current.tool)
        with tool_call(current.tool, task_type=task.task_type, attempt=calls + 1, degraded=degraded) as span:
            try:
                result = guard(breaker, lambda c=call, t=current: c(t, ctx),  # type: ignore[misc]
                               lambda b=breaker: _unavailable(task, b))  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - failure is data
                result = ToolResult.failed(task, ErrorType.UNKNOWN, f"{type(exc).__name__}: {exc}")
            span.finish(result)  # ToolLatency, ToolFailure; the span's status annotations
        calls += 1
        if degraded and result.status is TaskStatus.SUCCESS:
            result = result.model_copy(update={"status": TaskStatus.FALLBACK})
        left = None if tool_calls_left is None else tool_calls_left - calls
        decision = decide(result, len(decisions), bounds,
                          can_degrade=degraded_path(task, tools, result) is not None and not degraded,
                          tool_calls_left=left)
        if decision.action is HealAction.ACCEPT:
            return result.model_copy(update={"task_id": task.task_id, "task_type": task.task_type,
                                             "tool": task.tool}), decisions, calls
        decisions.append(decision)
        record_heal(decision)  # Retry / Degradation metrics
        if decision.action is HealAction.RETRY:
            sleep(decision.delay_s)
            hint = decision.hint if decision.retry_kind is RetryKind.WITH_HINT else None
            current = task if hint is None else task.model_copy(update={"args": {**task.args, "hint": hint}})
        elif decision.action is HealAction.DEGRADE:
            path = degraded_path(task, tools)
            if path is None:  # cannot happen: decide() only degrades when a path exists
                return result, decisions, calls
            call, current, degraded = path, task, True
        else:
            return result, decisions, calls


def heal_record(decisions: list[HealDecision], calls: int) -> dict[str, Any]:
    """What the result slot carries about healing (read by the trace, the triggers, the reply)."""
    return {"attempts": calls, "heal": [{"action": d.action.value, "reason": d.reason,
                                         "delay_s": round(d.delay_s, 3)} for d in decisions]}
