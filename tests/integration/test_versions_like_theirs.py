"""A version of a product like the customer's, with one thing different, through the real HTTP API on
the tau-retail store (issue 12): the other values of one option asked among the versions keeping
what the words hold ("other colours? I want to stay with fabric", after the purchase told), and a
value of an option the customer's own item has another of ("the alexa thermostat I got - is there a
google version of it?").

The messages are written for these tests (none is a development conversation's)."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, None, prefix="versions")


def test_other_colours_are_those_of_the_versions_keeping_the_option_named(tau_api: Any) -> None:
    _, _, client = tau_api
    # noah_patel_6952 ordered a blue fabric Office Chair (#W1845024); fabric chairs come in black,
    # blue and gray; red is sold only in leather
    status, reply = ask(client, "noah_patel_6952",
                        "I ordered one of your office chairs last week. does the fabric office chair "
                        "come in other colours? I want to stay with fabric")
    assert status == "answered", reply
    assert all(colour in reply for colour in ("black", "blue", "gray")), reply
    assert "red" not in reply, reply


def test_a_value_other_than_the_customers_own_is_the_version_asked(tau_api: Any) -> None:
    _, _, client = tau_api
    # ava_moore_4814's Smart Thermostat (#W6257064) works with Amazon Alexa; the Google Assistant
    # ones cost 249.01 (black, in stock), 242.53 and 227.80
    status, reply = ask(client, "ava_moore_4814",
                        "the alexa thermostat I got from you - is there a google version of it?")
    assert status == "answered", reply
    assert "Google Assistant" in reply and "249.01" in reply, reply
    assert "Amazon Alexa / " not in reply, reply  # not the versions they already have
