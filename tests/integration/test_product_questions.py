"""Questions about products, through the real HTTP API on the tau-retail store (issue 12).

A question about one product that no catalogue template comes close to ("how often should I descale
my espresso machine?") is answered from that product's documents, not refused, not asked back and not
answered with the product's price list; the catalogue's facts stand in only when the documents say
nothing. A question about something the store does not sell ("do you carry sofas?") says so and lists
what it does sell, instead of refusing or failing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "mei_gonzalez_4785"


@pytest.mark.parametrize(("text", "fact", "source"), [
    ("how often should i descale my espresso machine", "every 2 months", "Espresso Machine user guide"),
    ("Could you tell me whether the IPX7 wireless earbuds are suitable for swimming laps?",
     "not made for swimming", "Wireless Earbuds user guide"),
])
def test_a_product_question_the_catalogue_cannot_answer_is_answered_from_its_documents(
        tau_api: Any, text: str, fact: str, source: str) -> None:
    _, _, client = tau_api
    body = say(client, CUSTOMER, f"docs-{uuid.uuid4().hex[:8]}", text)
    reply = body["reply"]["text"]
    assert body["status"] == "answered", reply
    assert fact in reply.lower() or fact in reply, reply
    assert source in reply, reply
    # the catalogue's versions and prices are not added when the documents answered
    assert "versions, from $" not in reply, reply


def test_a_catalogue_question_stays_with_the_catalogue(tau_api: Any) -> None:
    _, _, client = tau_api
    body = say(client, CUSTOMER, f"cat-{uuid.uuid4().hex[:8]}", "what material is the hiking boot")
    reply = body["reply"]["text"]
    assert body["status"] == "answered", reply
    assert "leather" in reply and "synthetic" in reply and "user guide" not in reply, reply


@pytest.mark.parametrize("text", ["yall sell air fryers?", "do you carry sofas"])
def test_a_product_the_store_does_not_sell_is_said_and_what_it_sells_listed(tau_api: Any, text: str) -> None:
    _, _, client = tau_api
    body = say(client, CUSTOMER, f"unsold-{uuid.uuid4().hex[:8]}", text)
    reply = body["reply"]["text"]
    assert body["status"] == "answered", reply
    assert "we don't seem to carry it" in reply, reply
    assert "Footwear: Hiking Boots, Running Shoes and Sneakers." in reply, reply


def test_what_a_customer_tells_of_their_own_product_is_answered_from_its_documents(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer with a delivered HEPA air purifier, telling of it without asking a question
    body = say(client, "harper_kovacs_9747", f"told-{uuid.uuid4().hex[:8]}",
               "little orange light just came on on my air purifier and I have no clue what it means, "
               "the manual is somewhere in the recycling lol. help?")
    reply = body["reply"]["text"]
    # Then the product's guide says what the light means, and their own purifier is named; not the
    # order's delivery, nor the catalogue's versions
    assert body["status"] == "answered", reply
    assert "filter light turns orange" in reply and "Air Purifier user guide" in reply
    assert "Yours, from order #W6221400" in reply and "delivered on" not in reply
