"""Graph state. `InputState` is what callers may pass; `State` is everything the nodes share.

Parallel task branches write only their own slot in `results` (keyed by task_id) through the
`merge_dict` reducer. Per-turn fields are reset by `load_context` with the RESET sentinel,
so a checkpointed session never mixes one turn's results into the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from csagent.domain.actions import PendingAction
from csagent.domain.models import Task, TaskResult

RESET: dict[str, Any] = {"__reset__": True}


def merge_dict(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """Merge per-key writes from parallel branches; `RESET` clears the slot for a new turn."""
    if new is None:
        return dict(old or {})
    if new.get("__reset__"):
        return {k: v for k, v in new.items() if k != "__reset__"}
    return {**(old or {}), **new}


def append_messages(old: list[dict[str, Any]] | None,
                    new: list[dict[str, Any]] | dict[str, Any] | None) -> list[dict[str, Any]]:
    """Append to the public message list; `{"__replace__": [...]}` replaces it (compression)."""
    if isinstance(new, dict):
        return list(new.get("__replace__") or [])
    return [*(old or []), *(new or [])]


def planned_tasks(state: Mapping[str, Any]) -> list[Task]:
    """The turn's tasks as models. The state holds them as JSON (`Task.model_dump(mode="json")`),
    the form the checkpoint, the Step Functions payload and the HTTP body carry; a node reads them
    here once. A task of the earlier shape (notes among the arguments) is read into this one."""
    return [Task.model_validate(task) for task in state.get("tasks") or []]


def task_results(state: Mapping[str, Any]) -> dict[str, TaskResult]:
    """The turn's results as models, by task id. The state holds each as JSON (its `ToolResult`'s
    `model_dump(mode="json")` with what healing did, `csagent.healing.heal_record`), the form the
    checkpoint and the Step Functions payload carry; a node reads them here once, each tool's data
    as the model of its kind (`csagent.domain.tool_data`)."""
    slots = state.get("results") or {}
    return {task_id: TaskResult.model_validate(slot) for task_id, slot in slots.items()}


def pending_actions(state: Mapping[str, Any]) -> list[PendingAction]:
    """The changes proposed last turn and waiting for the customer's yes, as models. The state holds
    each as JSON (`PendingAction.model_dump(mode="json")`, the keys every checkpoint has held, which
    the understanding step reads as they are); a node reads them here once."""
    return [PendingAction.model_validate(pending) for pending in state.get("pending_actions") or []]


class InputState(TypedDict, total=False):
    session_id: str
    customer_id: str | None
    text: str
    attachments: list[dict[str, Any]]
    order_id_hint: str | None


class State(InputState, total=False):
    # Public conversation: customer text and final replies only (worker scratch never enters).
    messages: Annotated[list[dict[str, Any]], append_messages]
    # Extractive summary of the turns compressed out of `messages` (after `KEEP_TURNS` turns).
    summary: str
    turn: int
    lang: str
    # Routing
    route: str
    confidence: float
    intent: str
    clauses: list[dict[str, Any]]
    # The input guard's understanding of the text it passed on, when it had to read it (a message
    # the injection screen flagged): {"text", "understanding": `Understanding.as_dict()`}, so
    # `route` does not read the same text again; {} otherwise (per turn).
    understood: dict[str, Any]
    # Planning and execution (per turn); the tasks and the results as JSON, read as models by
    # `planned_tasks` and `task_results`
    entities: dict[str, Any]
    tasks: list[dict[str, Any]]
    results: Annotated[dict[str, dict[str, Any]], merge_dict]
    # Requests from the last turn that wait for one parameter ("which order?", "why?").
    awaiting: list[dict[str, Any]]
    # Turns in a row that ended with a system failure (a handoff trigger).
    consecutive_failed_turns: int
    # Answered turns in a row whose words read as frustrated (counted by the summariser): anger
    # that persists is handed off.
    frustrated_turns: int
    # Consequential actions proposed last turn, waiting for the customer's explicit yes; as JSON,
    # read as models by `pending_actions`
    pending_actions: list[dict[str, Any]]
    # What later turns may refer back to ("that order"): kept across turns, merged per key.
    memory: Annotated[dict[str, Any], merge_dict]
    # Outcome (per turn)
    status: str
    reply: dict[str, Any]
    trace: Annotated[dict[str, Any], merge_dict]
    node_timings_ms: Annotated[dict[str, float], merge_dict]


class TaskBranch(TypedDict, total=False):
    """The payload `Send` gives one task branch: the task, the results it depends on, and how
    many tool calls the turn has left for it (retries and cheaper paths count)."""

    task: dict[str, Any]
    customer_id: str | None
    dependencies: dict[str, dict[str, Any]]
    tool_calls_left: int
