"""From understood clauses to tasks: which tool serves which intent, with which parameters.

Pure logic, no I/O. A clause whose intent needs a parameter the customer did not give
(an order id, say) produces no task but a `missing` entry, so the graph asks for exactly it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from csagent.domain.models import Task

# intent → (task_type, tool, template_id, required entity names)
INTENT_TASKS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    # Status questions get the tracking rows too: "where is my order" wants both.
    "order_status": ("order_status", "predefined_cypher", "order_tracking", ("order_id",)),
    "tracking": ("tracking", "predefined_cypher", "order_tracking", ("order_id",)),
}


@dataclass
class Plan:
    tasks: list[Task] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0


def plan_tasks(clauses: list[dict[str, Any]], *, max_tasks: int = 5) -> Plan:
    """One task per actionable clause, de-duplicated on (tool, args), capped at `max_tasks`."""
    result = Plan()
    seen: set[tuple[str, str]] = set()
    for clause in clauses:
        spec = INTENT_TASKS.get(clause.get("intent", ""))
        if spec is None:
            continue
        task_type, tool, template_id, required = spec
        entities = clause.get("entities") or {}
        absent = [name for name in required if not entities.get(name)]
        if absent:
            result.missing.append({"intent": clause["intent"], "parameter": absent[0],
                                   "invalid": entities.get(f"invalid_{absent[0]}")})
            continue
        params = {name: entities[name] for name in required}
        key = (template_id, repr(sorted(params.items())))
        if key in seen:
            continue
        seen.add(key)
        if len(result.tasks) >= max_tasks:
            result.dropped += 1
            continue
        result.tasks.append(Task(task_id=f"t{len(result.tasks) + 1}", task_type=task_type, tool=tool,
                                 args={"template_id": template_id, "params": params}))
    return result
