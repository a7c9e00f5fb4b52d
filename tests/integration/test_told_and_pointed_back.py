"""What the customer tells, rules out or points back at, read from their words and their own orders,
through the real HTTP API on the tau-retail store (issue 12): a pending order is not assumed when a
processed one holds the product too; "the order with the 2 kettles" is the one holding two; "But
please don't touch the order with the laptop" rules that order out; a rule someone else told them,
asked "is that true?", is answered, not carried out; "the order" after an order was talked about is
that one; "the fleece bed" is the Pet Bed; "k which one's still coming" after the list is asked;
"put me thru to whoever" is a person; an address left behind is not the new one; "the one that's
just the tablet by itself" picks among the orders listed; "that one's already out the door,
right?" asks the status; "what did I pay for it with" is the payment; "would it be possible to move
the payment" asks for the change; a duplicate charge is a complaint, not a return; the order still
going to an old city is the one asked about; the one other value available is the one meant; a
cancellation the customer made is not asked for again.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="told")


def test_a_cancellation_of_a_product_in_a_pending_and_a_processed_order_asks_which(tau_api: Any) -> None:
    _, _, client = tau_api
    # anya_garcia_3271: a Tea Kettle in #W6310710 (processed) and in #W6436609 (pending)
    status, reply = ask(client, "anya_garcia_3271", "please cancel the order that has my tea kettle in it")
    assert status == "needs_clarification", reply
    assert "#W6310710" in reply and "#W6436609" in reply and "processed" in reply, reply


def test_the_order_with_two_of_a_product_is_the_one_holding_two(tau_api: Any) -> None:
    _, _, client = tau_api
    # lei_ahmed_1705: #W3931703 (pending) holds two electric kettles; #W4432568 one tea kettle
    status, reply = ask(client, "lei_ahmed_1705",
                        "i want to cancel the order with both kettles, ordered by mistake")
    assert status == "awaiting_confirmation" and "Cancel order #W3931703" in reply, reply


def test_an_order_the_customer_says_not_to_touch_is_not_cancelled(tau_api: Any) -> None:
    _, _, client = tau_api
    # aarav_brown_3744: #W5065081 holds the wristwatch, #W6584521 the bicycle and laptop (both pending)
    status, reply = ask(client, "aarav_brown_3744",
                        "We won't be needing the wristwatch after all, so can you cancel that order? "
                        "But please don't touch the order with the laptop, we still want that.")
    assert status == "awaiting_confirmation" and "Cancel order #W5065081" in reply, reply
    assert "#W6584521" not in reply, reply


def test_a_rule_someone_else_told_them_is_answered_not_carried_out(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "evelyn_hernandez_1701",
                        "a friend told me that I have to send back everything from #W9628587 at once and "
                        "that I cannot return only the bookshelf. is that right?")
    assert status == "answered" and "some or all" in reply, reply
    assert "Return from" not in reply, reply


def test_the_order_after_an_order_was_talked_about_is_that_one(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"told-{uuid.uuid4().hex[:8]}"
    ask(client, "mia_moore_8366", "what's in #W3130288?", session)
    status, reply = ask(client, "mia_moore_8366", "ok and has the order left yet?", session)
    assert status == "answered" and "#W3130288" in reply and "#W5544629" not in reply, reply


def test_a_material_before_a_product_name_describes_it(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "liam_lopez_7019", "what colours does your fleece bed come in?")
    assert status == "answered" and "Pet Bed" in reply and "Fleece Jacket" not in reply, reply


def test_which_one_asked_after_the_list_is_answered_not_refused(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"told-{uuid.uuid4().hex[:8]}"
    ask(client, "daiki_silva_5033", "what orders do i have", session)
    # (#W1579160 is the only pending one)
    status, reply = ask(client, "daiki_silva_5033", "k which one hasn't shipped", session)
    assert status == "answered" and "#W1579160" in reply, reply


def test_put_me_thru_to_whoever_is_a_request_for_a_person(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "mia_moore_8366", "just put me thru to whoever handles damaged stuff")
    assert status == "handed_off", reply


def test_an_address_left_behind_is_not_the_new_one(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"told-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "aarav_brown_3744",
                        "we're moving out of San Francisco soon, please update the address on my account",
                        session)
    assert status == "needs_clarification" and "full new address" in reply, reply
    status, reply = ask(client, "aarav_brown_3744", "it's 14 Harbor Road, Apt 3, Monterey, CA 93940",
                        session)
    assert status == "awaiting_confirmation" and "default address" in reply, reply
    assert "14 Harbor Road" in reply, reply


def test_the_one_holding_only_the_product_picks_among_the_orders_listed(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"told-{uuid.uuid4().hex[:8]}"
    # chen_taylor_6919: tablets in #W4111999 (with other items) and #W4633848 (the tablet alone)
    status, reply = ask(client, "chen_taylor_6919", "please cancel my tablet order, ordered by mistake",
                        session)
    assert status == "needs_clarification", reply
    status, reply = ask(client, "chen_taylor_6919", "the order with only the tablet in it", session)
    assert status == "awaiting_confirmation" and "Cancel order #W4633848" in reply, reply


def test_a_status_told_with_a_question_tagged_on_is_asked(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "evelyn_moore_6558", "my desk lamp has shipped already, right?")
    assert status == "answered" and "#W9958106" in reply and "processed" in reply, reply


def test_what_it_was_paid_with_is_the_orders_payment(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "mia_garcia_4516", "what did i pay for my gaming mouse with?")
    assert status == "answered" and "PayPal" in reply, reply


def test_would_it_be_possible_to_move_the_payment_asks_for_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "omar_silva_7446",
                        "would it be possible to put my espresso machine order on the Mastercard instead?")
    assert status == "awaiting_confirmation" and "Mastercard" in reply and "#W9673784" in reply, reply


def test_a_duplicate_charge_is_a_complaint_not_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "fatima_martin_9326",
                        "#W7538230 - you took the money twice, reverse the extra charge")
    assert "charged once" in reply and "cannot be returned" not in reply, reply
    assert status in ("answered", "handed_off"), reply


def test_the_order_still_going_to_an_old_city_is_the_one_asked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ava_lopez_2676",
                        "I live in San Diego now. is one of my orders still heading to Chicago?")
    assert status == "answered" and "#W8327915" in reply and "#W5911003" not in reply, reply


def test_the_one_other_value_available_is_the_one_meant(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "yusuf_rossi_9620",
                        "my robot vacuum from #W2378156 uses bags. any bagless robot one I could exchange "
                        "it for? still cordless please, charge my card for the difference")
    assert status == "awaiting_confirmation" and "(robotic, bagless, cordless)" in reply, reply


def test_a_cancellation_the_customer_made_is_not_asked_for_again(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "liam_moore_4057",
                        "i cancelled the air purifier order last week but one still shows as pending?")
    assert status == "answered" and "could you tell me why" not in reply, reply
    assert "Cancel order" not in reply, reply
