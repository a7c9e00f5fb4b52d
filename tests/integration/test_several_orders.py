"""Questions and changes about several of a customer's orders, or about one item of an order,
through the real HTTP API on the tau-retail store (issue 12): what one item cost is its line, not
the order's total; two questions joined by "and whether" are both answered; "tracking numbers" and
"what do I have that hasn't shipped" ask of every order that fits; a whole-order change asked of
several orders ("my pending orders", "both") proposes each, and the account's address, ruled out,
is never proposed; an option every candidate item shares is answered, not asked about; "对，确认取消，
不需要了" (yes, confirm the cancellation, I no longer need it) is a yes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration

PET_BED_OWNER = "juan_sanchez_8249"  # #W6483628 ($3359.07 in all) holds a Pet Bed at $195.11
CLOCK_OWNER = "sofia_moore_9773"  # pending #W1812830: one Wall Clock, 14 inches
TWO_ON_THE_WAY = "harper_ito_5985"  # processed #W3137176 (447687149450) and #W5367110 (152028381741)
TWO_PENDING = "mia_nguyen_6399"  # pending #W4657527 and #W7259788, nothing else
KIT_AND_SHELF = "evelyn_ahmed_3960"  # pending #W3746173 (Makeup Kit), #W1416704 (Bookshelf); lives in Denver
TWO_SUNGLASSES = "amelia_patel_7834"  # Sunglasses in #W2079779 and #W6497157, both polarized lenses
CANCELLER = "fatima_martin_9326"  # pending #W3376947, $1065.93 (over the approval limit)
NEW_ADDRESS = "55 Birch Road, Apt 4, San Antonio, TX 78210"


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="several")


def test_what_one_item_cost_is_its_line_not_the_orders_total(tau_api: Any) -> None:
    _, _, client = tau_api
    for text in ("W6483628: how much was the pet bed?", "what did I pay for the pet bed in #W6483628?"):
        # Given a question about one item of an order of several
        status, reply = ask(client, PET_BED_OWNER, text)
        # Then its own line and price answer, not what the whole order came to
        assert status == "answered", reply
        assert "$195.11" in reply and "3359.07" not in reply, (text, reply)


def test_an_items_option_and_the_orders_progress_asked_together_are_both_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "what size is X in #W1, and whether it has shipped" in one sentence
    status, reply = ask(client, CLOCK_OWNER, "Can you tell me what size the wall clock in #W1812830 is, "
                                             "and whether it has left your warehouse?")
    # Then the clock's size and the order's status are both told
    assert status == "answered", reply
    assert "14 inches" in reply and "pending" in reply, reply


def test_tracking_numbers_asked_in_the_plural_are_given_for_every_order_on_its_way(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, TWO_ON_THE_WAY, "are both my orders shipped? gimme the tracking numbers")
    assert status == "answered", reply
    assert "447687149450" in reply and "152028381741" in reply, reply


def test_what_has_not_shipped_lists_every_such_order_without_asking_which(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, TWO_PENDING, "what do i have that hasn't shipped yet")
    assert status == "answered", reply
    assert "#W4657527" in reply and "#W7259788" in reply, reply


def test_sending_several_orders_elsewhere_proposes_each_and_leaves_the_account_alone(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given two pending orders, both asked to go to a new address, the account's ruled out
    status, reply = ask(client, TWO_PENDING, f"Please send my pending orders to {NEW_ADDRESS}. "
                                             "Don't touch my account address, I'll do that later.")
    # Then a change of each order's address is proposed, and no change of the default address
    assert status == "awaiting_confirmation", reply
    assert reply.count("Change the shipping address of order") == 2, reply
    assert "#W4657527" in reply and "#W7259788" in reply and "default address" not in reply, reply


def test_both_orders_named_before_go_to_the_home_address_when_asked(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, KIT_AND_SHELF, "my makeup kit order is going to DC and my bookshelf order to "
                                               "Charlotte, that's wrong. please send both to my home address")
    assert status == "awaiting_confirmation", reply
    assert reply.count("Change the shipping address of order") == 2, reply
    assert "#W3746173" in reply and "#W1416704" in reply and "400 Willow Lane" in reply, reply


def test_an_option_every_candidate_item_shares_is_answered_not_asked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given two orders with sunglasses, both with polarized lenses
    status, reply = ask(client, TWO_SUNGLASSES, "are my sunglasses polarized or not")
    # Then the answer is the same whichever is meant, so it is given for each: yes, and its item's line
    assert status == "answered", reply
    assert "Yes, your Sunglasses from order #W2079779 have lens type: polarized" in reply, reply
    assert "Yes, your Sunglasses from order #W6497157 have lens type: polarized" in reply, reply
    assert reply.count("polarized") == 4, reply


def test_a_chinese_yes_that_restates_the_reason_confirms_the_cancellation(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"several-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, CANCELLER, "帮我取消订单#W3376947，不想要了", session)
    assert status == "awaiting_confirmation", reply
    # When the customer answers "yes, confirm the cancellation, I no longer need it"
    status, reply = ask(client, CANCELLER, "对，确认取消，不需要了", session)
    # Then it goes ahead (to the team's approval, the refund being over the limit), not asked again
    assert status == "awaiting_approval", reply


def test_the_answer_saying_more_of_a_products_name_picks_its_order(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"several-{uuid.uuid4().hex[:8]}"
    # Given two pending orders with a kettle, a Tea Kettle and an Electric Kettle
    status, reply = ask(client, "liam_ahmed_6523", "cancel my kettle order", session)
    assert status == "needs_clarification" and "#W7534214" in reply and "#W1558044" in reply, reply
    # When the answer says "tea" and "kettle", which only the Tea Kettle's name holds both of
    status, reply = ask(client, "liam_ahmed_6523", "the tea one, the kettle. not needed anymore", session)
    # Then that order's cancellation is proposed
    assert status == "awaiting_confirmation" and "Cancel order #W7534214" in reply, reply


def test_what_is_asked_of_the_one_order_in_a_status_is_answered_not_its_status(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer whose one order is pending
    # When its total is asked, the order named by its status alone
    status, reply = ask(client, "amelia_kim_4338", "the total on my pending order?")
    # Then the total is answered, not the order's status
    assert status == "answered" and "Order #W7634667 comes to $607.65" in reply, reply


def test_each_order_a_message_speaks_of_is_answered_when_asked_of_each_or_of_them(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer with two pending orders, who says so in one clause and asks of "each one" and of
    # "they" in the next
    status, reply = ask(client, TWO_PENDING, "I've got two orders with you. What does each one come to, and "
                                             "have they left yet?")
    # Then both orders' statuses are told, no order asked for and no product looked up
    assert status == "answered", reply
    assert "#W4657527" in reply and "#W7259788" in reply and "pending" in reply, reply
    assert "we don't seem to carry" not in reply, reply


def test_whether_anything_has_shipped_when_nothing_has_tells_each_orders_status(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given only pending orders, and a yes/no question about any of them having shipped
    status, reply = ask(client, TWO_PENDING, "well, did anything of mine ship yet?")
    # Then each order's status answers it (not "which order do you mean?")
    assert status == "answered", reply
    assert "#W4657527" in reply and "#W7259788" in reply and "pending" in reply, reply


def test_where_all_orders_are_going_tells_each_orders_address(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer with three pending orders going to three places
    status, reply = ask(client, KIT_AND_SHELF, "which addresses are my orders going to?")
    # Then each order's address is told, not only the list of orders
    assert status == "answered", reply
    assert "137 Willow Lane" in reply and "479 Park Avenue" in reply and "400 Willow Lane" in reply, reply
