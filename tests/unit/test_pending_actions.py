"""A change proposed in one turn waits in the graph state for the next turn's yes. The state holds
it as JSON, the keys every checkpoint has held; the nodes read it as `PendingAction`, once
(`graph.state.pending_actions`). The same turns run on the in-memory saver and on the DynamoDB
saver (the `saver` fixture of `conftest.py`)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from csagent.domain.actions import ActionName, ActionProposal, PendingAction
from csagent.domain.models import Task, ToolResult
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.graph.state import pending_actions
from csagent.service.outcome import proposed_actions
from csagent.tools.context import ToolContext
from csagent.understanding import Clause, Understanding

ORDER = "#W1234567"
PROPOSAL = {"action": "cancel_order", "order_id": ORDER, "amount": 54.04,
            "args": {"order_id": ORDER, "reason": "no longer needed"}, "summary": [f"Cancel order {ORDER}."]}
# The proposal as the tool returns it and the execute task carries it.
PROPOSAL_JSON = ActionProposal.model_validate(PROPOSAL).model_dump(mode="json")
# A pending change exactly as the summariser wrote it before the state was read as models: an older
# checkpoint holds this.
CHECKPOINTED = {"action": "cancel_order", "proposal": PROPOSAL_JSON, "confirmation_id": "s:1",
                "summary": f"Cancel order {ORDER}.", "requires_approval": False, "amount": 54.04}


class FakeActions:
    """Proposes the cancellation of `ORDER`; records what it is asked to execute."""

    def __init__(self) -> None:
        self.executed: list[dict[str, Any]] = []

    def __call__(self, task: Task, ctx: ToolContext) -> ToolResult:
        if task.args.phase == "propose":
            return ToolResult.ok(task, {
                "phase": "propose", "action": "cancel_order", "order_id": ORDER, "proposal": PROPOSAL,
                "summary": [f"Cancel order {ORDER}."], "amount": 54.04, "requires_approval": False})
        self.executed.append(task.args.model_dump(mode="json"))
        return ToolResult.ok(task, {"phase": "execute", "message": f"Order {ORDER} is cancelled."})


def understand_cancel(text: str, state: Any) -> Understanding:
    if text.startswith("cancel"):
        clause = Clause(text=text, intent="cancel_order", confidence=0.9,
                        entities={"order_id": ORDER, "reason": "no longer needed"})
        return Understanding("knowledge_and_actions", "cancel_order", 0.9, clauses=(clause,))
    return Understanding("general", "smalltalk", 0.8, clauses=(Clause(text=text, intent="smalltalk",
                                                                        confidence=0.8),))


@pytest.fixture
def session(saver: Any) -> Any:
    graph = build_graph().compile(checkpointer=saver)
    actions = FakeActions()
    deps = GraphDeps(understand=understand_cancel, tools={"customer_actions": actions},
                     make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid))
    config: Any = {"configurable": {"thread_id": "s"}}

    def turn(text: str) -> dict[str, Any]:
        return graph.invoke({"session_id": "s", "customer_id": "c", "text": text}, config, context=deps)

    turn.graph, turn.config, turn.actions = graph, config, actions  # type: ignore[attr-defined]
    return turn


def test_a_proposal_waits_in_the_checkpoint_as_the_json_it_always_was(session: Any) -> None:
    # When a change is proposed
    state = session("cancel my order, I no longer need it")
    # Then the checkpoint holds it with the keys it always had, and it reads back as the model
    saved = session.graph.get_state(session.config).values
    assert saved["pending_actions"] == [CHECKPOINTED]
    assert pending_actions(saved) == [PendingAction(
        action=ActionName.CANCEL_ORDER, proposal=ActionProposal.model_validate(PROPOSAL),
        confirmation_id="s:1", summary=f"Cancel order {ORDER}.", amount=54.04)]
    listed = [(p.action, p.order_id, p.amount) for p in proposed_actions(state)]
    assert listed == [("cancel_order", ORDER, 54.04)]


def test_a_change_checkpointed_before_the_models_is_made_on_yes(session: Any) -> None:
    # Given a session whose checkpoint, written before the state was read as models, waits for a yes
    session.graph.update_state(session.config, {
        "session_id": "s", "customer_id": "c", "turn": 1, "status": "awaiting_confirmation",
        "pending_actions": [CHECKPOINTED],
        "messages": [{"role": "assistant", "text": f"Cancel order {ORDER}. Reply \"yes\" to go ahead."}],
    }, as_node="respond")
    # When the customer says yes
    state = session("yes")
    # Then exactly the proposal checkpointed is executed, under its confirmation id
    assert state["status"] == "answered"
    executed = [(e["action"], e["phase"], e["proposal"], e["confirmation_id"])
                for e in session.actions.executed]
    assert executed == [("cancel_order", "execute", PROPOSAL_JSON, "s:1")]
    assert state["pending_actions"] == []


def test_a_change_checkpointed_before_the_models_is_declined_naming_its_order(session: Any) -> None:
    # Given the same older checkpoint waiting for a yes
    session.graph.update_state(session.config, {
        "session_id": "s", "customer_id": "c", "turn": 1, "status": "awaiting_confirmation",
        "pending_actions": [CHECKPOINTED]}, as_node="respond")
    # When the customer says no
    state = session("no")
    # Then nothing is executed, and the reply names the order that stays as it is
    assert session.actions.executed == []
    assert ORDER in state["reply"]["text"]
    assert state["trace"]["declined"] == [ORDER]


def test_a_pending_change_that_is_no_proposal_is_refused_when_read() -> None:
    # Given pending changes of the wrong shape: an action the store does not make, no proposal
    wrong_action = {**CHECKPOINTED, "action": "teleport_order"}
    no_proposal = {key: value for key, value in CHECKPOINTED.items() if key != "proposal"}
    # When read / Then each is refused, naming the field that is wrong
    with pytest.raises(ValidationError, match="action"):
        pending_actions({"pending_actions": [wrong_action]})
    with pytest.raises(ValidationError, match="proposal"):
        pending_actions({"pending_actions": [no_proposal]})


def test_a_key_a_newer_router_adds_does_not_stop_a_pending_change_loading() -> None:
    # Given a pending change with a key this router does not know
    newer = {**CHECKPOINTED, "expires_at": "2024-07-02T00:00:00Z"}
    # When read / Then it is the same change
    same = pending_actions({"pending_actions": [CHECKPOINTED]})
    assert pending_actions({"pending_actions": [newer]}) == same
