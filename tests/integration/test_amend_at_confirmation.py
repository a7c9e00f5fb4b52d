"""Another version asked for while a proposal waits, through the real HTTP API on the tau-retail
store (issue 12): "oh wait, make it the 1000ml red one instead" is neither a yes nor a no but the
same exchange with the version now asked for (`grounding.frame.amend_pending`); the yes then writes
that version, never the one first proposed."""

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
