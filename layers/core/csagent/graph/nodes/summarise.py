"""summarise: one reply from every task result, in dependency order, grouped by business
category; every failed or skipped task is named with the reason and the next step."""

from __future__ import annotations

from typing import Any

from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.replies import describe_failure, describe_success


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


@timed("summarise")
def summarise(state: State) -> dict[str, Any]:
    lang = state.get("lang", "en")
    results = state.get("results") or {}
    lines: list[str] = []
    citations: list[dict[str, Any]] = []
    failures = 0
    for task in dependency_order(state.get("tasks") or []):
        result = results.get(task["task_id"])
        if result is None or result.get("status") == "failed":
            failures += 1
            lines.append(describe_failure(task, result, lang))
            continue
        lines.append(describe_success(task, result, lang))
        citations.extend((result.get("data") or {}).get("citations") or [])
    if failures == 0:
        status = "answered"
    elif failures < len(state.get("tasks") or []):
        status = "partial"
    else:
        status = "partial" if lines else "answered"
    return {"reply": {"text": "\n".join(lines), "citations": citations}, "status": status}
