"""Where orders go, which order is meant, and when a question asks for the change it names, read from
the customer's words and their own orders, through the real HTTP API on the tau-retail store (issue
12): a city by another of its names ("my philly address", "旧金山") or a saved address ("the one on
my profile") says where an order should go or which order is meant; "being shipped to" asks where,
not how far; a clause's status words rule out the order just talked about; "I forgot to update
something" asks for nothing; a return question that tells why or asks the money back asks for the
return, one that does not asks whether it can be; "do the X come in Y" asks the catalogue; a change
asked about a product in two orders asks which order; "how much did I pay for" is the customer's
item; orders listed in a sentence of their own are those the message speaks of; a return asked after
an exchange is ruled out is a return; which order cost the most is answered by the orders' totals.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="places")


@pytest.mark.parametrize(("customer", "text", "proposed"), [
    # the account's city by its nickname, the order by its product
    ("olivia_sanchez_2914", "the toothbrush order should go to my philly address",
     "to 710 Sunset Drive"),
    # the place the customer needs it, the saved address said after it
    ("harper_khan_9597", "i need the air purifier order at my place in philly, the one on my profile",
     "to 371 River Road"),
])
def test_an_order_sent_to_an_address_named_by_its_city_is_proposed(tau_api: Any, customer: str, text: str,
                                                                    proposed: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "awaiting_confirmation" and "Change the shipping address of order #W" in reply, reply
    assert proposed in reply, reply


@pytest.mark.parametrize(("text", "order", "held"), [
    ("旧金山的那个订单里有什么？", "#W8512927", "Skateboard"),  # San Francisco, by its Chinese name
    ("whats in the order going to san fran", "#W8512927", "Notebook"),
])
def test_an_order_named_by_the_city_it_goes_to_is_found(tau_api: Any, text: str, order: str,
                                                         held: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "liam_li_5260", text)
    assert status == "answered" and order in reply and held in reply, reply
    assert "#W9653558" not in reply, reply  # the Dallas order


def test_where_an_order_with_two_products_goes_is_that_orders_address(tau_api: Any) -> None:
    # the skateboard is in a delivered order too; only the pending one holds both
    _, _, client = tau_api
    status, reply = ask(client, "ava_kovacs_3448",
                        "which address is the order with the skateboard and the tea kettle being shipped to?")
    assert status == "answered" and "#W4184032" in reply and "Phoenix" in reply, reply
    assert "#W6344370" not in reply, reply


def test_the_order_that_has_not_shipped_is_cancelled_not_the_one_that_arrived(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ava_kovacs_3448",
                        "I ended up buying a skateboard twice. The first one arrived ages ago. The other "
                        "order hasn't shipped yet, could you cancel that one? I don't need it anymore.")
    assert status == "awaiting_confirmation" and "Cancel order #W4184032" in reply, reply
    assert "#W6344370 has already been delivered" not in reply, reply


def test_a_change_told_as_forgotten_asks_for_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "olivia_sanchez_2914",
                        "My toothbrush order is going to Washington I think. I moved to Philly and forgot to "
                        "update something. Where is it going?")
    assert status == "answered" and "#W5101035" in reply and "Washington" in reply, reply
    assert "full new address" not in reply, reply


def test_a_return_question_that_tells_why_proposes_the_return(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "olivia_brown_4616",
                        "The desk lamp is way too dim for my office. Can I send it back?")
    assert status == "awaiting_confirmation" and "Return from order #W2912153" in reply, reply
    assert "Desk Lamp" in reply, reply


def test_a_return_question_alone_asks_whether_it_can_be_returned(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "olivia_brown_4616", "can I return the desk lamp?")
    assert status == "answered" and "#W2912153" in reply and "returned" in reply, reply


def test_whether_a_product_comes_in_an_option_asks_the_catalogue(tau_api: Any) -> None:
    # the customer's water bottles are in pending orders, which an item change could change
    _, _, client = tau_api
    status, reply = ask(client, "anya_lee_8315", "do the water bottles come in 1000ml")
    assert status == "answered" and "1000ml" in reply, reply
    assert "Modify the items" not in reply, reply


def test_a_change_asked_about_a_product_in_two_orders_asks_which_order(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "anya_lee_8315", "could i change the water bottle to a red one?")
    assert status == "needs_clarification" and "#W3176007" in reply and "#W2989580" in reply, reply


def test_a_cancellation_in_slang_is_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"places-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "emma_nguyen_5878", "can u nuke the tea kettle order, bought it by accident",
                        session)
    assert status == "awaiting_confirmation" and "Cancel order #W5809689" in reply, reply


def test_what_the_customer_paid_for_a_product_is_their_items_price(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "juan_kim_6026", "how much did I pay for the espresso machine?")
    assert status == "answered" and "3081.91" in reply and "#W5730905" in reply, reply
    assert "costs from" not in reply, reply  # not the catalogue's range


def test_orders_listed_in_a_sentence_of_their_own_are_those_a_double_charge_is_about(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "juan_kim_6026",
                        "You charged me twice!! #W2002172 and #W5730905, same day. What happened?")
    assert status == "answered", reply
    assert "1011.24" in reply and "3695.69" in reply, reply


def test_a_return_asked_after_an_exchange_is_ruled_out_is_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "juan_kim_6026",
                        "The pet bed is too small for my dog. Not worth the hassle of an exchange, I'd just "
                        "like to send it back and get my money back.")
    assert status == "awaiting_confirmation" and "Return from order #W2002172" in reply, reply
    assert "Exchange" not in reply, reply


def test_which_order_cost_the_most_is_answered_by_the_orders_with_their_totals(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "harper_silva_8534",
                        "how many orders have i placed with you, and which one cost the most?")
    assert status == "answered", reply
    assert "#W3323013" in reply and "$1919.62" in reply and "$1117.25" in reply, reply


def test_a_chinese_follow_up_leaving_the_order_unsaid_is_about_the_last_one(tau_api: Any) -> None:
    # the customer's vacuum order has shipped; their other live order is a delivered one
    _, _, client = tau_api
    session = f"places-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "juan_smith_9901", "吸尘器到哪了？", session)
    assert "#W6484127" in reply, reply
    status, reply = ask(client, "juan_smith_9901", "那还能取消吗？", session)
    assert "#W6484127" in reply and "#W3547545" not in reply, reply


def test_a_product_pointed_back_at_with_its_progress_asked_is_its_orders_status(tau_api: Any) -> None:
    # jigsaw puzzles in two orders; the animals one has shipped
    _, _, client = tau_api
    status, reply = ask(client, "harper_johansson_2663",
                        "I ordered a couple of jigsaw puzzles. The animal one, has that one left the "
                        "warehouse yet?")
    assert status == "answered" and "#W9163472" in reply and "303153978999" in reply, reply


def test_a_price_match_question_after_a_product_asks_the_stores_rule(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "juan_kim_6026",
                        "saw the espresso machine way cheaper somewhere else. do u guys price match?")
    assert "match" in reply and "versions" not in reply, reply  # the rule, not the product's range
