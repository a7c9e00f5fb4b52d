"""All four tools through the real graph on the tau-retail store (local model tier):
predefined Cypher, knowledge search, customer actions, and Text2Cypher as the cheaper path
of a catalogue question no template answers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from csagent import runtime
from csagent.domain.models import Principal
from csagent.service.schemas import MessageIn

pytestmark = pytest.mark.integration
JAMES = Principal(subject="james", customer_id="james_li_5688")


@pytest.fixture
def service(tau_store: Any, moto_endpoint: str) -> Any:
    runtime.reset()
    yield runtime.conversation_service()
    runtime.reset()


def ask(service: Any, text: str, session: str | None = None) -> tuple[Any, dict[str, Any]]:
    session = session or f"tools-{uuid.uuid4().hex[:8]}"
    out = service.handle_message(JAMES, session, MessageIn(text=text))
    state = runtime.compiled_graph().get_state({"configurable": {"thread_id": session}}).values
    return out, state


def test_predefined_cypher_answers_an_order_question(service):
    out, _ = ask(service, "where is my order #W2611340?")
    assert [(t.tool, t.status) for t in out.tasks] == [("predefined_cypher", "success")]
    assert "357962501027" in out.reply["text"]


def test_knowledge_search_answers_a_policy_question_with_a_citation(service):
    out, _ = ask(service, "how long do I have to return something?")
    assert [(t.tool, t.status) for t in out.tasks] == [("knowledge_search", "success")]
    # The store's policy sets no return window: the answer is when a return can be requested
    assert "once the order has been delivered" in out.reply["text"]
    assert out.reply["citations"] and out.reply["citations"][0]["doc_id"]


def test_customer_actions_lists_a_change_back_before_making_it(service, reseed_tau):
    out, _ = ask(service, "please cancel order #W2611340, I ordered it by mistake")
    # #W2611340 is processed: the policy refuses, with the reason, and a person is offered
    assert [(t.tool, t.status) for t in out.tasks] == [("customer_actions", "failed")]
    assert out.tasks[0].error["type"] == "business_rule_violation"
    assert "shipped" in out.reply["text"]


def test_text2cypher_is_the_cheaper_path_when_no_template_answers(service):
    # Given a catalogue question the predefined templates answer with nothing
    out, state = ask(service, "is the grill available in black?")
    # Then the healer degraded to Text2Cypher (local tier: its template fallback) and said so
    [result] = state["results"].values()
    assert [step["action"] for step in result["heal"]][:1] == ["degrade"]
    assert result["tool"] == "text2cypher"
    assert "grill" in out.reply["text"].lower()
