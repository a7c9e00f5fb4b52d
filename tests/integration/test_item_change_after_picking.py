"""An item change whose order is picked from a list, through the real HTTP API on the tau-retail
store (issues 12 and 13): "a model with a bigger zoom" is asked before the order is known, and the
answer that picks the order ("the one I bought together with the smartphone") continues that very
request: the camera moves one zoom step up, the smartphone that only said which order is not
touched, the difference goes through the order's own payment method, and the yes writes exactly
that exchange."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "yara_moore_6466"  # two delivered orders with a Digital Camera (20MP, 5x zoom, CF card)
ORDER = "#W8336711"  # the one that also holds a Smartphone
CAMERA = "9644439410"
# The only available Digital Camera with a bigger zoom than 5x: 10x (30MP, SD card).
BIGGER_ZOOM = "9228757377"


def _say(client: Any, session: str, text: str) -> dict[str, Any]:
    return say(client, CUSTOMER, session, text)


def test_the_answer_that_picks_the_order_continues_the_item_change_asked(tau_api: Any) -> None:
    from devstack.export import export_store

    driver, _, client = tau_api
    session = f"picked-camera-{uuid.uuid4().hex[:8]}"  # a fresh conversation on every run
    # Given an exchange asked in words, with two orders that fit
    first = _say(client, session,
                 "I would like to exchange my digital camera for a model with a bigger zoom.")
    assert first["status"] == "needs_clarification", first["reply"]["text"]
    assert ORDER in first["reply"]["text"] and "#W1605168" in first["reply"]["text"]
    # When the customer says which order by another product in it
    second = _say(client, session, "the one I bought together with the smartphone")
    # Then the same request continues on that order, proposed at once: the difference goes back
    # through the order's own payment method (PayPal), which the proposal names
    assert second["status"] == "awaiting_confirmation", second["reply"]["text"]
    proposal = second["reply"]["text"]
    assert "10x" in proposal and "Smartphone" not in proposal
    assert "refunded to your PayPal account" in proposal
    # And the yes exchanges exactly the camera, for the bigger zoom
    fourth = _say(client, session, "yes")
    assert fourth["status"] == "answered", fourth["reply"]["text"]
    order = export_store(driver)["orders"][ORDER]
    assert order["status"] == "exchange requested"
    assert order["exchange_items"] == [CAMERA] and order["exchange_new_items"] == [BIGGER_ZOOM]


def test_an_exchange_asked_as_a_question_is_answered_with_what_there_is_and_the_pick_continues_it(
        tau_api: Any) -> None:
    from devstack.export import export_store

    driver, _, client = tau_api
    customer, order = "mia_garcia_4516", "#W5490111"  # delivered; a 750ml black glass Water Bottle
    session = f"asked-exchange-{uuid.uuid4().hex[:8]}"
    # Given an exchange asked as a question, for options no bottle has (750ml stainless steel black)
    first = say(client, customer, session,
                "Could the water bottle in #W5490111 be exchanged for the stainless steel one, same size, "
                "in black?")
    # Then the answer says so and lists what there is, not the store's exchange policy
    assert first["status"] == "needs_clarification", first["reply"]["text"]
    asked = first["reply"]["text"]
    assert "not available" in asked and "750ml, stainless steel, red" in asked
    # When the customer picks one of those by its options alone
    second = say(client, customer, session, "Then the red stainless steel one, please. Any difference can "
                                            "go back to my credit card.")
    # Then that very exchange is proposed, and the yes makes it
    assert second["status"] == "awaiting_confirmation", second["reply"]["text"]
    assert "(750ml, stainless steel, red)" in second["reply"]["text"]
    assert say(client, customer, session, "Yes, please.")["status"] == "answered"
    exported = export_store(driver)["orders"][order]
    assert exported["status"] == "exchange requested"
    assert exported["exchange_items"] == ["4579334072"] and exported["exchange_new_items"] == ["6777246137"]


def test_any_chance_of_swapping_for_a_size_is_a_request(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"any-chance-{uuid.uuid4().hex[:8]}"
    # Given a delivered order with size 11 leather boots, and a question that names the boots wanted
    reply = say(client, "liam_thomas_7882", session,
                "The hiking boots from #W8488728 are just a tad too tight. Any chance of swapping them for a "
                "size 12, same leather?")
    # Then the exchange is proposed (a yes makes it), not the exchange policy recited
    assert reply["status"] == "awaiting_confirmation", reply["reply"]["text"]
    proposal = reply["reply"]["text"]
    assert "Exchange in order #W8488728" in proposal and "(12, leather" in proposal
