"""Questions said in plain words, through the real HTTP API on the tau-retail store (issue 12): a
gift card's balance asked with "it" or "the card" ("how much is still on it?"), two facts of the
account asked together (the email and the home address on file), what a cancellation would give
back asked about the order found by what it holds, a charge "taken twice" for a product that sits
in two separate orders, which orders have not shipped (with what each holds), and the refunds of
orders told as cancelled.

The messages are written for these tests (none is a development conversation's)."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import say_each

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, None, prefix="plainq")


def test_a_gift_cards_balance_asked_with_it_or_the_card(tau_api: Any) -> None:
    _, _, client = tau_api
    # lucas_martin_4549: a gift card holding $68.00 (and a Mastercard)
    status, reply = ask(client, "lucas_martin_4549", "My gift card, how much money is still on it?")
    assert status == "answered", reply
    assert "$68.00" in reply, reply
    _, later = say_each(client, "lucas_martin_4549", "can my pending order go on my gift card instead?",
                        "hmm ok, how much is even left on the card then", prefix="plainq")
    assert later["status"] == "answered", later["reply"]["text"]
    assert "$68.00" in later["reply"]["text"], later["reply"]["text"]


def test_the_email_and_the_home_address_on_file_are_both_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ethan_lopez_6291",
                        "Could you tell me which email and which home address you have on file for me?")
    assert status == "answered", reply
    assert "ethan.lopez8943@example.com" in reply and "103 Hillcrest Drive" in reply, reply


def test_what_a_cancellation_would_give_back_for_the_order_found_by_its_product(tau_api: Any) -> None:
    _, _, client = tau_api
    # mason_lopez_8519: #W7752859 (pending, the Electric Kettle alone), $141.76 on a credit card
    status, reply = ask(client, "mason_lopez_8519",
                        "If I cancelled the order with the electric kettle, how much would I get back? "
                        "Just asking.")
    assert status == "answered", reply
    assert "$141.76" in reply and "#W7752859" in reply, reply
    assert "Cancel order" not in reply, reply


def test_a_charge_taken_twice_for_a_product_in_two_orders_says_so(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_rossi_8776: a Makeup Kit in #W5500815 and in #W2818151 (both pending), each paid once
    status, reply = ask(client, "sofia_rossi_8776",
                        "why was I charged twice for the makeup kit?? I only wanted one")
    assert status == "answered", reply
    assert "2 separate orders with the Makeup Kit" in reply, reply
    assert "#W5500815" in reply and "#W2818151" in reply, reply


def test_which_orders_have_not_shipped_says_what_each_holds(tau_api: Any) -> None:
    _, _, client = tau_api
    # mason_johansson_2485: #W3358610 (pending: Bicycle, Wireless Earbuds); #W9549057 (processed)
    status, reply = ask(client, "mason_johansson_2485", "which of my orders havent shipped yet?")
    assert status == "answered", reply
    assert "#W3358610 (Bicycle, Wireless Earbuds, pending" in reply, reply
    assert "#W9549057" not in reply, reply


def test_orders_told_as_cancelled_are_those_the_money_question_asks_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # noah_patel_6952: #W7043598 and #W6111398 cancelled, refunded $3420.45 and $818.31
    status, reply = ask(client, "noah_patel_6952",
                        "#W7043598 and #W6111398 were both cancelled weeks ago and I'm still waiting on my "
                        "money. where is it??")
    assert status == "answered", reply
    assert "$3420.45" in reply and "$818.31" in reply, reply
