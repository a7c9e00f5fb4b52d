"""What a session's latest checkpoint says, for the conversation service: its head (the turn
lease's fence), the approval a turn is paused on and the command that resumes it, whether the
last turn stopped mid-turn on this same message, and whether LangGraph stopped a turn at its
node budget. Reads LangGraph's snapshot objects; no I/O."""

from __future__ import annotations

from typing import Any

from csagent.service.schemas import MessageIn


def resume_command(approval: Any) -> Any:
    """The `Command` that resumes a turn paused for `approval`, with the person's decision."""
    from langgraph.types import Command

    decision = {"approved": "approved", "rejected": "rejected"}.get(approval.status.value, "expired")
    return Command(resume={"decision": decision, "approved_by": approval.decided_by})


def node_budget_spent(exc: BaseException) -> bool:
    """Did LangGraph stop the turn at its recursion limit? Imported here, not at module import:
    langgraph is loaded by the time a turn runs, and a cold import of the handler stays cheap."""
    from langgraph.errors import GraphRecursionError

    return isinstance(exc, GraphRecursionError)


def head(snapshot: Any) -> str | None:
    """The id of the thread's latest checkpoint (None before the first turn)."""
    return (snapshot.config.get("configurable") or {}).get("checkpoint_id") if snapshot else None


def paused_approval(snapshot: Any) -> str | None:
    """The approval id the thread is paused on, if it is paused."""
    for pending in getattr(snapshot, "interrupts", ()) or ():
        value = getattr(pending, "value", None) or {}
        if isinstance(value, dict) and value.get("approval_id"):
            return str(value["approval_id"])
    return None


def crashed_on(snapshot: Any, message: MessageIn) -> bool:
    """Did the thread's last turn stop on a node that raised, while answering this same message?

    With durability "exit" LangGraph still checkpoints the steps that finished when a node
    raises, with the error on the task that did not. A new turn started from there would
    record the message twice and lose what the finished steps did (a confirmed change no
    longer pending, so the repeated "yes" would have nothing to confirm); resuming the
    stopped turn (`invoke(None)`) runs only what did not finish."""
    if snapshot is None or not snapshot.next or not any(task.error for task in snapshot.tasks):
        return False
    values = snapshot.values or {}
    return (values.get("text") == message.text and values.get("order_id_hint") == message.order_id
            and (values.get("attachments") or []) == [a.model_dump() for a in message.attachments])
