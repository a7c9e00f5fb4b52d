"""summarise: one reply from every task result. Results are merged in dependency order and
grouped by business category (orders, products, policies, changes to the account); every
failed or skipped task is named with the reason and the next step, and every parameter the
customer still has to give is asked for. Nothing is dropped silently."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.nodes.hand_off import wants_handoff
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.handoff.triggers import SYSTEM_FAILURES
from csagent.replies import ask_for, describe_failure, describe_success
from csagent.resilience.faults import crash_point

CATEGORY = {
    "order_status": "orders", "tracking": "orders", "order_items": "orders", "refund_status": "orders",
    "order_list": "orders", "product_info": "products", "product_availability": "products",
    "warranty": "policies", "policy": "policies",
}


def dependency_order(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tasks ordered so that each comes after what it depends on (stable otherwise)."""
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    pending = list(tasks)
    while pending:
        progressed = False
        for task in list(pending):
            if all(d in placed for d in task.get("depends_on") or ()):
                ordered.append(task)
                placed.add(task["task_id"])
                pending.remove(task)
                progressed = True
        if not progressed:  # a cycle cannot come from the planner; keep every task anyway
            ordered.extend(pending)
            break
    return ordered


def grouped(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dependency order, then grouped by category in order of first appearance. A dependant
    always comes after what it depends on, because categories keep first-appearance order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for task in dependency_order(tasks):
        groups.setdefault(CATEGORY.get(task["task_type"], "changes"), []).append(task)
    return [task for group in groups.values() for task in group]


def last_order_id(tasks: list[dict[str, Any]], results: dict[str, Any]) -> str | None:
    """The order this turn was about, for "that order" in the next turn."""
    for task in reversed(tasks):
        result = results.get(task["task_id"]) or {}
        if result.get("status") == "failed":
            continue
        order_id = ((task.get("args") or {}).get("params") or {}).get("order_id") or \
            ((task.get("args") or {}).get("args") or {}).get("order_id") or \
            ((result.get("data") or {}).get("row") or {}).get("order_id")
        if order_id:
            return str(order_id)
    return None


def pending_action(task: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """What the next turn's "yes" will execute: the proposal exactly as listed back."""
    summary = data.get("summary") or []
    return {"action": data.get("action") or task["task_type"], "proposal": data.get("proposal") or {},
            "confirmation_id": (task.get("args") or {}).get("confirmation_id", ""),
            "summary": " ".join(summary) if isinstance(summary, list) else str(summary),
            "requires_approval": bool(data.get("requires_approval")), "amount": data.get("amount")}


@timed("summarise")
def summarise(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    # Fault injection: a crash between dispatch and summarise (the retry resumes from the checkpoint).
    crash_point("before_summarise", runtime.context.fault_plan)
    lang = state.get("lang", "en")
    results = state.get("results") or {}
    tasks = state.get("tasks") or []
    lines: list[str] = []
    citations: list[dict[str, Any]] = []
    proposals: list[dict[str, Any]] = []
    failures = 0
    for task in grouped(tasks):
        result = results.get(task["task_id"])
        if result is None or result.get("status") == "failed":
            failures += 1
            lines.append(describe_failure(task, result, lang))
            continue
        lines.append(describe_success(task, result, lang))
        data = result.get("data") or {}
        citations.extend(data.get("citations") or [])
        if data.get("phase") == "propose":
            proposals.append(pending_action(task, data))
    missing = (state.get("trace") or {}).get("missing") or []
    lines.extend(ask_for(m, lang) for m in missing)
    if proposals:
        status = "awaiting_confirmation"  # the customer has to act first, whatever else happened
    else:
        status = "partial" if failures else ("needs_clarification" if missing else "answered")
    update: dict[str, Any] = {"reply": {"text": "\n".join(lines), "citations": citations}, "status": status,
                              "pending_actions": proposals, "awaiting": missing}
    failed_types = {((results.get(t["task_id"]) or {}).get("error") or {}).get("type") for t in tasks
                    if (results.get(t["task_id"]) or {}).get("status") == "failed"}
    streak = int(state.get("consecutive_failed_turns") or 0)
    update["consecutive_failed_turns"] = streak + 1 if failed_types & SYSTEM_FAILURES else 0
    if wants_handoff({**state, **update}, runtime):  # type: ignore[typeddict-item]
        update["trace"] = {"handoff_wanted": True}
    order_id = last_order_id(tasks, results)
    if order_id:
        update["memory"] = {"last_order_id": order_id}
    return update
