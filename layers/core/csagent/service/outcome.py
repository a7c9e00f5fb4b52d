"""A turn's final graph state as the service's public answers: the `TurnOut` of a turn (its tasks,
its trace with the turn's model usage), the changes waiting for the customer's yes, and one
turn's trace as the agent console's session viewer shows it."""

from __future__ import annotations

from typing import Any

from csagent.graph.state import pending_actions
from csagent.service.schemas import ProposedAction, TaskOut, TurnOut, TurnTrace


def shape_turn(session_id: str, state: dict[str, Any], elapsed_ms: float) -> TurnOut:
    """The public outcome of a turn from the graph's final state (an interrupt under "__interrupt__"
    puts the approval id into the trace), with the current turn's model usage."""
    results = state.get("results") or {}
    tasks = []
    for task in state.get("tasks") or []:
        result = results.get(task["task_id"]) or {}
        tasks.append(TaskOut(task_id=task["task_id"], task_type=task["task_type"], tool=task["tool"],
                             status=result.get("status", "skipped"),
                             latency_ms=float(result.get("latency_ms") or 0.0),
                             error=result.get("error")))
    from csagent.models.usage import TurnUsage, current_usage

    trace = {
        "route": state.get("route", ""),
        "confidence": round(float(state.get("confidence") or 0.0), 3),
        "node_timings_ms": state.get("node_timings_ms") or {},
        # model_calls, input_tokens, output_tokens, cost_usd, model_steps (zeros when unmetered)
        **(current_usage() or TurnUsage()).as_trace(),
        "turn_ms": round(elapsed_ms, 2),
    }
    sources = (state.get("trace") or {}).get("knowledge_sources")
    if sources:  # the document versions the reply's citations come from
        trace["knowledge_sources"] = sources
    if state.get("__interrupt__"):
        trace["approval_id"] = ((state.get("trace") or {}).get("approval") or {}).get("approval_id")
    return TurnOut(session_id=session_id, turn=int(state.get("turn") or 0),
                   status=state.get("status") or "answered", reply=state.get("reply") or {"text": ""},
                   tasks=tasks, trace=trace, proposed=proposed_actions(state))


def proposed_actions(state: dict[str, Any]) -> list[ProposedAction]:
    """The changes a turn listed back and a yes will make: only while it waits for that yes."""
    if state.get("status") != "awaiting_confirmation":
        return []
    return [ProposedAction(action=p.action.value, order_id=p.order_id, summary=p.summary,
                           requires_approval=p.requires_approval, amount=p.amount)
            for p in pending_actions(state)]


def turn_trace(state: dict[str, Any]) -> TurnTrace:
    """One turn as the session viewer shows it, from the state its checkpoint kept."""
    results = state.get("results") or {}
    tasks = []
    for task in state.get("tasks") or []:
        result = results.get(task["task_id"]) or {}
        tasks.append({"task_id": task["task_id"], "task_type": task.get("task_type", ""),
                      "tool": task.get("tool", ""), "depends_on": list(task.get("depends_on") or []),
                      "status": result.get("status", "skipped"),
                      "latency_ms": round(float(result.get("latency_ms") or 0.0), 2),
                      "attempts": int(result.get("attempts") or (1 if result else 0)),
                      "heal": list(result.get("heal") or []), "error": result.get("error")})
    timings = state.get("node_timings_ms") or {}
    return TurnTrace(turn=int(state.get("turn") or 0), status=str(state.get("status") or ""),
                     text=str(state.get("text") or ""),
                     reply=str((state.get("reply") or {}).get("text") or ""),
                     route=str(state.get("route") or ""),
                     confidence=round(float(state.get("confidence") or 0.0), 3), tasks=tasks,
                     node_timings_ms={k: round(float(v), 2) for k, v in timings.items()},
                     trace=dict(state.get("trace") or {}))
