"""Processes our team runs, through the real HTTP API on the tau-retail store (issue 12).

The knowledge base says warranty claims and carrier investigations are handled by people: the
assistant gathers the order, the item and the problem, answers what it can, and hands over
(`handoff.triggers.asks_for_staff_process`). An angry question that gets its answer is answered;
a person takes over when the anger persists (`frustrated_turns`)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "olivia_ito_3591"  # delivered #W5866402 (Espresso Machine, Sneakers), processed #W5353646


def test_a_warranty_claim_is_answered_then_handed_to_our_team_with_the_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a warranty claim about a product of a delivered order, without its number
    body = say(client, CUSTOMER, f"claim-{uuid.uuid4().hex[:8]}",
               "the espresso machine stopped heating after two months, I'd like to file a warranty claim")
    text = body["reply"]["text"]
    # Then the order is found, the turn answered, and our team takes the claim over
    assert body["status"] == "handed_off", text
    assert "#W5866402" in text and "warranty claims" in text.lower()


def test_a_carrier_investigation_asked_in_a_follow_up_goes_to_our_team_not_a_refusal(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"probe-{uuid.uuid4().hex[:8]}"
    say(client, CUSTOMER, session, "where is my skateboard order?")
    # When the customer asks for an investigation in words the examples do not know
    body = say(client, CUSTOMER, session, "It never came. Could you please open an investigation?")
    # Then our team takes it over (never "that's outside what I can help with")
    assert body["status"] == "handed_off", body["reply"]["text"]


def test_an_angry_question_is_answered_and_persisting_anger_goes_to_a_person(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"angry-{uuid.uuid4().hex[:8]}"
    # Given an angry status question the assistant can answer
    first = say(client, CUSTOMER, session, "this is ridiculous, where is my skateboard order?!")
    # Then it is answered, not passed on
    assert first["status"] == "answered" and "#W5353646" in first["reply"]["text"], first["reply"]["text"]
    # And when the anger persists on the next turn, a person takes over
    second = say(client, CUSTOMER, session, "that's useless, it's been weeks, absolutely unacceptable")
    assert second["status"] == "handed_off", second["reply"]["text"]
