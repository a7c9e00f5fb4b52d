"""Follow-ups that lean on what was just said, through the real HTTP API on the tau-retail store
(issue 12).

"And the grill one?" after a question about an order asks the same question about the order with
the grill (`nlp.speech_acts.is_elliptical`, the summariser's `last_question`); "my other order"
in the clause after one that named an order is the customer's order other than that one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "mei_gonzalez_4785"  # delivered #W7303089 (Backpack, Pet Bed), pending #W2052757 (Grill, …)
DELIVERED, PENDING = "#W7303089", "#W2052757"


def test_a_follow_up_that_only_names_another_purchase_asks_the_same_question(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"follow-{uuid.uuid4().hex[:8]}"
    # Given a question about the order with the pet bed
    first = say(client, CUSTOMER, session, "has my pet bed arrived yet?")
    assert first["status"] == "answered" and DELIVERED in first["reply"]["text"], first["reply"]["text"]
    # When the customer follows up naming only another purchase
    second = say(client, CUSTOMER, session, "cool, and the grill one?")
    # Then the same question is answered about the order with the grill, not the grill's catalogue page
    assert second["status"] == "answered", second["reply"]["text"]
    assert PENDING in second["reply"]["text"] and "pending" in second["reply"]["text"].lower()


def test_my_other_order_after_a_clause_that_named_one_is_the_other_one(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given one message that asks about the order with the backpack, then about "my other order"
    body = say(client, CUSTOMER, f"other-{uuid.uuid4().hex[:8]}",
               "what did I get in the backpack order, and has my other order shipped?")
    # Then both orders are answered, each once
    text = body["reply"]["text"]
    assert body["status"] == "answered", text
    assert DELIVERED in text and PENDING in text


def test_the_tracking_number_after_an_answer_about_one_order_is_that_orders(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"definite-{uuid.uuid4().hex[:8]}"
    # Given an answer about the order with the pet bed
    first = say(client, CUSTOMER, session, "has my pet bed arrived yet?")
    assert DELIVERED in first["reply"]["text"], first["reply"]["text"]
    # When the customer asks for "the tracking number", naming no order
    second = say(client, CUSTOMER, session, "Okay. What is the tracking number?")
    # Then it is that order's, not the store's page about tracking
    text = second["reply"]["text"]
    assert second["status"] == "answered" and DELIVERED in text and "(source:" not in text, text
