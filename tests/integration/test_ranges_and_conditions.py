"""Which versions a product comes in, which item, order and address the customer means, and when a
change is asked, read from the customer's words and their own orders, through the real HTTP API on
the tau-retail store (issue 12): "which sizes does it come in?" asks the store's range even from a
customer who owns one, "other colours" sets the owned colour aside; money asked back beside an
exchange is the exchange's difference, not a return; "return the black one" of two watches sends
back that one; "if not, please cancel it" asks for the cancellation; "can u swap it to white" after
the product was named is the change; "the order that's just the kettle" holds nothing else; "can
still be cancelled" describes pending orders; "every order that had earbuds" is each of them;
another card asked for by a customer with one payment method is told there is none; a purchase told
before a question asks no change; "my current address" is the saved one; an address written after
"could you send it to my friend's house instead?" is the change; a question off the store's topics
beside a story about a purchase is refused; "too tight ... in a medium" is the size; the card the
customer would rather pay with is the new one, not the order's own; thanks after a remark nothing
vouches for is answered, not refused.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="ranges")


@pytest.mark.parametrize(("customer", "text", "values"), [
    # owns a small one: the sizes the store sells, not their own order's line alone
    ("raj_lee_3061", "which sizes does the pet bed come in? mine's the small one",
     ["large", "medium", "small"]),
    # the silver one is theirs; the other colours are asked
    ("amelia_patel_7834", "does the silver smart watch I bought come in other colours?", ["black", "gold"]),
])
def test_which_versions_a_product_comes_in_is_the_stores_range(tau_api: Any, customer: str, text: str,
                                                               values: list[str]) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered" and "comes with these" in reply, reply
    assert all(v in reply for v in values), reply


def test_a_purchase_told_before_a_range_question_asks_no_change(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "amelia_patel_7834",
                        "I bought the silver smart watch and I love it. which colours does it come in? "
                        "thinking of one for my sister")
    assert status == "answered" and "black, gold and silver" in reply, reply
    assert "would you like" not in reply, reply  # no item change asked for


def test_money_asked_back_beside_an_exchange_is_its_difference_not_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "amelia_patel_7834",
                        "can i swap the silver smart watch for a gold one with the same band and display? "
                        "any refund to my gift card")
    assert status == "awaiting_confirmation" and "Exchange in order #W6497157" in reply, reply
    assert "(silver, leather, AMOLED) -> (gold, leather, AMOLED)" in reply and "gift card" in reply, reply
    assert "Return from" not in reply, reply


def test_a_return_of_one_of_two_items_of_a_product_sends_back_the_one_named(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "amelia_patel_7834",
                        "two smart watches came in my last order, a silver one and a black one. "
                        "i'd like to return the black one")
    assert status == "awaiting_confirmation" and "Return from order #W6497157" in reply, reply
    assert "color: black" in reply and "color: silver" not in reply, reply  # and no exchange
    assert "Exchange" not in reply, reply


def test_a_cancellation_asked_on_condition_that_the_order_has_not_shipped_is_proposed(
        tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "evelyn_kovacs_6742",
                        "has my tea kettle order gone out yet? if not, please cancel it, "
                        "I don't need it anymore")
    assert status == "awaiting_confirmation", reply
    assert "is pending" in reply and "Cancel order #W5694685" in reply, reply


def test_a_swap_asked_of_the_store_after_the_product_was_named_is_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "yusuf_khan_7091",
                        "i ordered a black electric kettle. can u swap it to white, same everything else")
    assert status == "awaiting_confirmation" and "Modify the items of order #W3579467" in reply, reply
    assert "(1.5L, plastic, black) -> (1.5L, plastic, white)" in reply, reply


@pytest.mark.parametrize(("text", "order", "other"), [
    # two orders hold a kettle; one holds nothing else
    ("where's the order that's just the kettle?", "#W6310710", "#W6436609"),
    # "can still be cancelled" is the pending one, not orders that were cancelled
    ("which of my kettle orders can still be cancelled?", "#W6436609", "#W6310710"),
])
def test_which_order_is_meant_by_what_it_holds_or_what_can_be_done(tau_api: Any, text: str, order: str,
                                                                   other: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "anya_garcia_3271", text)
    assert status == "answered" and order in reply and other not in reply, reply
    assert "Which one do you mean" not in reply and "status 'cancelled'" not in reply, reply


def test_every_order_that_held_a_product_is_answered_each(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "evelyn_kovacs_6742",
                        "what's the status of every order of mine that had earbuds in it?")
    assert status == "answered" and "Which one do you mean" not in reply, reply
    assert "#W2768683 was delivered" in reply and "#W7398274 is pending" in reply, reply


def test_another_card_asked_for_by_a_customer_with_one_payment_method_is_told_there_is_none(
        tau_api: Any) -> None:
    _, _, client = tau_api
    _, reply = ask(client, "ivan_santos_6635", "please put the office chair order on a different card")
    assert "the only payment method on your account" in reply and "#W8770097" in reply, reply
    assert "can only be changed to a different one" not in reply, reply


def test_an_order_sent_to_the_current_address_goes_to_the_saved_one(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "emma_santos_9753",
                        "my tablet is going to my old place in phoenix, i moved. can you ship it to my "
                        "current address please")
    assert status == "awaiting_confirmation", reply
    assert "Change the shipping address of order #W2918688" in reply and "to 463 Pine Lane" in reply, reply


def test_an_order_already_shipped_sent_to_the_current_address_is_told_it_cannot_change(
        tau_api: Any) -> None:
    _, _, client = tau_api
    _, reply = ask(client, "james_lee_9638",
                   "the bicycle order is headed to the wrong place, please update it to my current address")
    assert "#W7846319 has already shipped" in reply, reply
    assert "Please send the full new address" not in reply, reply


def test_an_address_written_after_asking_to_send_it_elsewhere_is_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"ranges-{uuid.uuid4().hex[:8]}"
    ask(client, "emma_nguyen_5878", "has the tea kettle order shipped?", session)
    status, reply = ask(client, "emma_nguyen_5878",
                        "great, could you send it to my friend's house instead? 401 Oak Street, "
                        "Austin, TX 78701",
                        session)
    assert status == "awaiting_confirmation", reply
    assert "order #W5809689" in reply and "to 401 Oak Street, Austin, TX 78701" in reply, reply


def test_a_question_off_the_stores_topics_beside_a_story_about_a_purchase_is_refused(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "anya_kim_6731",
                        "do you know a good recipe for pancakes? getting my new bookshelf has put me in a "
                        "cleaning mood lol")
    assert status == "refused" and "#W" not in reply, reply


def test_a_size_word_after_a_fit_complaint_is_the_size(tau_api: Any) -> None:
    # "medium" is also a ventilation of the helmet; "too tight" makes it the size (M)
    _, _, client = tau_api
    status, reply = ask(client, "harper_ito_4653",
                        "the cycling helmet i got is way too tight. could i get the same one in a medium "
                        "instead?")
    assert status == "awaiting_confirmation" and "Exchange in order #W5673917" in reply, reply
    assert "(S, blue, high) -> (M, blue, high)" in reply, reply


def test_the_card_the_customer_would_rather_pay_with_is_the_new_one(tau_api: Any) -> None:
    # both cards named; the order's own (the Visa) is the one replaced
    _, _, client = tau_api
    status, reply = ask(client, "lucas_johansson_1090",
                        "the order with the office chair went on my visa, but i'd really rather have it "
                        "on the mastercard. can you change that?")
    assert status == "awaiting_confirmation", reply
    assert "Pay order #W8379216" in reply, reply
    assert "with your Mastercard ending 3088 instead of your Visa" in reply, reply


def test_thanks_after_a_remark_nothing_vouches_for_is_answered_not_refused(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"ranges-{uuid.uuid4().hex[:8]}"
    ask(client, "emma_nguyen_5878", "where is my tea kettle order going?", session)
    status, reply = ask(client, "emma_nguyen_5878", "haha wait thats my moms house. ok nvm all good, ty!",
                        session)
    assert status == "answered" and "You're welcome" in reply, reply
