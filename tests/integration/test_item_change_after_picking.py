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
