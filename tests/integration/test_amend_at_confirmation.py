"""Changes asked in passing, through the real HTTP API on the tau-retail store (issue 12).

"oh wait, make it the 1000ml red one instead" while a proposal waits is neither a yes nor a no but
the same exchange with the version now asked for (`grounding.frame.amend_pending`); the yes then
writes that version, never the one first proposed. The proposal's own method named again, with no
yes or no, puts the same proposal again; another item of the same product ("I also want the 8 cup
one ...") joins it. "could the t-shirt order be paid with my gift
card instead?" names the order, the method and the change: it asks for it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "yusuf_lee_5921"  # a delivered Water Bottle (750ml, stainless steel, blue) in #W3631991
ORDER = "#W3631991"
RED_1000 = "2439754078"  # 1000ml, stainless steel, red


def test_a_new_version_named_at_confirmation_replaces_the_proposed_one(tau_api: Any) -> None:
    from devstack.export import export_store

    driver, _, client = tau_api
    session = f"amend-{uuid.uuid4().hex[:8]}"
    first = say(client, CUSTOMER, session, "I'd like to swap my blue water bottle for a red one, "
                                           "keep everything else. PayPal for any difference.")
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    assert "750ml, stainless steel, red" in first["reply"]["text"]
    # When the customer asks for another version instead of answering
    second = say(client, CUSTOMER, session, "hmm actually can you make it the 1000ml red one?")
    # Then the exchange is proposed again, with that version
    assert second["status"] == "awaiting_confirmation", second["reply"]["text"]
    assert "(1000ml, stainless steel, red)" in second["reply"]["text"]
    # And the yes writes exactly that one
    third = say(client, CUSTOMER, session, "yes")
    assert third["status"] == "answered", third["reply"]["text"]
    order = export_store(driver)["orders"][ORDER]
    assert order["exchange_new_items"] == [RED_1000]


def test_the_proposals_own_method_said_again_puts_the_proposal_again(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"amend-{uuid.uuid4().hex[:8]}"
    first = say(client, CUSTOMER, session, "I'd like to swap my blue water bottle for a red one, "
                                           "keep everything else. PayPal for any difference.")
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    # When the customer names the proposal's own method again, with no yes or no
    second = say(client, CUSTOMER, session, "The difference please on my PayPal.")
    # Then the same exchange waits for the yes, with no word of a change set aside
    assert second["status"] == "awaiting_confirmation", second["reply"]["text"]
    assert "750ml, stainless steel, red" in second["reply"]["text"]
    assert "haven't made the change" not in second["reply"]["text"]
    third = say(client, CUSTOMER, session, "yes, only this one, please do")
    assert third["status"] == "answered" and ORDER in third["reply"]["text"], third["reply"]["text"]


def test_a_question_that_names_the_order_and_the_new_method_asks_for_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    customer = "omar_kim_3528"  # a pending T-Shirt order #W1080318 paid by Mastercard; a gift card
    # Given that order / When the customer asks whether it could be paid with the gift card instead
    asked = say(client, customer, f"pay-{uuid.uuid4().hex[:8]}",
                "could the t-shirt order be paid with my gift card instead of my credit card?")
    # Then paying it with the gift card is proposed, not only the payments listed
    assert asked["status"] == "awaiting_confirmation", asked["reply"]["text"]
    assert "#W1080318" in asked["reply"]["text"] and "gift card" in asked["reply"]["text"]
    # And the same words asked as a question about the payment stay a question
    question = say(client, customer, f"pay-{uuid.uuid4().hex[:8]}",
                   "was the t-shirt order paid with my gift card or my credit card?")
    assert question["status"] == "answered", question["reply"]["text"]


def test_a_yes_with_a_question_makes_the_change_and_answers_the_question(tau_api: Any) -> None:
    from devstack.export import export_store

    driver, _, client = tau_api
    customer, order = "harper_lee_2110", "#W4363379"  # a delivered Desk Lamp, a gift card on file
    session = f"yes-and-ask-{uuid.uuid4().hex[:8]}"
    first = say(client, customer, session, "I'd like to return the desk lamp from order #W4363379, please. "
                                           "The refund can go back to my gift card.")
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    # When the yes comes with a question
    second = say(client, customer, session, "Yes, please go ahead. How soon will the money be back on "
                                            "the gift card?")
    # Then the return is made, and the same reply says when the refund shows
    reply = second["reply"]["text"]
    assert second["status"] == "answered", reply
    assert "Return requested for order #W4363379" in reply and "immediately" in reply
    assert export_store(driver)["orders"][order]["status"] == "return requested"


def test_another_item_of_the_same_product_joins_the_proposed_change(tau_api: Any) -> None:
    from devstack.export import export_store

    driver, _, client = tau_api
    session = f"amend-{uuid.uuid4().hex[:8]}"
    # omar_anderson_5940: #W2091016 (pending) holds two Coffee Makers, a 4-cup and an 8-cup one
    first = say(client, "omar_anderson_5940", session, "in #W2091016 please change the 4 cup coffee maker "
                "to the 2 cup one, same black espresso with timer. paypal for the difference")
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    # When the customer adds the other coffee maker of the same order before saying yes
    second = say(client, "omar_anderson_5940", session,
                 "wait, I also want the 8 cup one made the 4 cup espresso with timer, both in one go")
    # Then one proposal changes both (items are modified once per order), and the yes writes both
    assert second["status"] == "awaiting_confirmation", second["reply"]["text"]
    assert "(black, 8 cups, espresso, built-in grinder) -> (black, 4 cups, espresso, timer)" \
        in second["reply"]["text"], second["reply"]["text"]
    third = say(client, "omar_anderson_5940", session, "yes that's everything, go ahead")
    assert third["status"] == "answered", third["reply"]["text"]
    order = export_store(driver)["orders"]["#W2091016"]
    held = [i["item_id"] for i in order["items"]]
    assert "9862136885" in held and "5952720925" in held and "7211586944" not in held, held
