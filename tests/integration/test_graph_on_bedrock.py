"""The whole graph on Bedrock, through the real client against a Converse protocol peer (issue 8).

CHAT_MODEL=bedrock/<id> with BEDROCK_ENDPOINT_URL pointing at `devstack.model_stubs.BedrockPeer`:
the router asks the peer by tool calling (langchain-aws `ChatBedrockConverse`, boto3 underneath),
and the data-routing rule decides what the peer may see. The store is the real tau-retail graph.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from csagent import runtime
from csagent.domain.models import Principal
from csagent.service.schemas import MessageIn, TurnOut
from devstack.model_stubs import BedrockPeer, ToolCall

pytestmark = pytest.mark.integration

BEDROCK_SPEC = "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0"
JAMES = Principal(subject="james", customer_id="james_li_5688")


@pytest.fixture(scope="module")
def peer() -> Iterator[BedrockPeer]:
    with BedrockPeer() as server:
        yield server


@pytest.fixture
def bedrock_service(peer: BedrockPeer, tau_store: Any, moto_endpoint: str,
                    monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The conversation service built from settings, every role's model on the Bedrock peer."""
    peer.reset()
    monkeypatch.setenv("CHAT_MODEL", BEDROCK_SPEC)
    monkeypatch.setenv("BEDROCK_ENDPOINT_URL", peer.endpoint_url)
    runtime.reset()
    yield runtime.conversation_service()
    runtime.reset()


def ask(service: Any, text: str) -> TurnOut:
    turn: TurnOut = service.handle_message(JAMES, f"bedrock-{uuid.uuid4().hex[:8]}", MessageIn(text=text))
    return turn


def test_a_policy_question_is_routed_by_the_bedrock_model(bedrock_service: Any, peer: BedrockPeer) -> None:
    # Given the Bedrock model labels the one clause a policy question
    peer.script(ToolCall({"clauses": [{"clause": 1, "intent": "policy_question", "confidence": 0.93}]}))
    # When a customer asks how long returns are possible (no customer data in the message)
    turn = ask(bedrock_service, "How many days do I have to return something?")
    # Then the router's prompt went to Bedrock as a forced tool call, and the model's label drove
    # the turn: a knowledge answer with its citation, one metered model call
    assert len(peer.requests) == 1
    assert peer.requests[0].body["toolConfig"]["toolChoice"] == {"tool": {"name": "RouterAnswer"}}
    assert turn.trace["route"] == "knowledge_and_actions"
    assert [task.task_type for task in turn.tasks] == ["policy"]
    assert turn.status == "answered" and "once the order has been delivered" in turn.reply["text"]
    assert turn.trace["model_calls"] == 1 and turn.trace["input_tokens"] > 0
    assert any(step.startswith(f"router {BEDROCK_SPEC}: answered") for step in turn.trace["model_steps"])


def test_a_message_with_an_order_id_never_reaches_bedrock(bedrock_service: Any, peer: BedrockPeer) -> None:
    # Given every role is configured with the Bedrock model only
    # When a customer asks about their order, naming it
    turn = ask(bedrock_service, "where is my order #W2611340?")
    # Then no request reached Bedrock: the router's prompt carries an order id, the summariser's
    # always carries results; the local tier answered the whole turn with the order's real status
    assert peer.requests == []
    assert turn.trace["model_calls"] == 0
    assert any("withheld, customer data" in step for step in turn.trace["model_steps"])
    assert turn.status == "answered" and "#W2611340" in turn.reply["text"]
