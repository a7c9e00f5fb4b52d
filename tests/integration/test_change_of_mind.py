"""A change of mind at confirmation, through the real HTTP API on the tau-retail store (issue 13):
"actually, only the pet bed" re-proposes the return with that item alone, the "yes" that follows
writes exactly that, and a "no" in more words writes nothing and says which order stays as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "mei_gonzalez_4785"  # order #W7303089: a Backpack and a Pet Bed, delivered
ORDER = "#W7303089"


def _say(client: Any, session: str, text: str) -> dict[str, Any]:
    return say(client, CUSTOMER, session, text)


def _order(driver: Any) -> dict[str, Any]:
    from devstack.export import export_store

    return export_store(driver)["orders"][ORDER]


def test_only_some_of_the_items_re_proposes_and_the_yes_writes_just_those(tau_api: Any,
                                                                           tau_data: Path) -> None:
    driver, _, client = tau_api
    # Given a proposed return of both items
    first = _say(
        client,
        "change-of-mind-1",
        "please return the backpack and the pet bed I got, refund to the original payment method",
    )
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    assert "Backpack" in first["reply"]["text"] and "Pet Bed" in first["reply"]["text"]
    # When the customer changes their mind about one of them
    second = _say(client, "change-of-mind-1", "actually, only the pet bed")
    # Then the return is proposed again with the pet bed alone
    assert second["status"] == "awaiting_confirmation", second["reply"]["text"]
    # (the proposal put again, with no word of the first one set aside)
    proposal = second["reply"]["text"]
    assert "Pet Bed" in proposal and "Backpack" not in proposal and "$193.22" in proposal
    assert "haven't made the change" not in proposal
    # And the yes that follows returns exactly that item
    third = _say(client, "change-of-mind-1", "yes please")
    assert third["status"] == "answered", third["reply"]["text"]
    order = _order(driver)
    assert order["status"] == "return requested"
    pet_bed = next(
        i["item_id"]
        for i in json.loads((tau_data / "orders.json").read_text())[ORDER]["items"]
        if i["name"] == "Pet Bed"
    )
    assert list(order["return_items"]) == [pet_bed]


def test_a_no_in_more_words_writes_nothing_and_names_the_order(tau_api: Any) -> None:
    driver, _, client = tau_api
    _say(
        client,
        "change-of-mind-2",
        "please return the backpack and the pet bed I got, refund to the original payment method",
    )
    reply = _say(client, "change-of-mind-2", "no. forget it, don't touch it, I'll sort it out myself")
    assert reply["status"] == "answered"
    assert ORDER in reply["reply"]["text"] and "haven't changed anything" in reply["reply"]["text"]
    assert _order(driver)["status"] == "delivered"
