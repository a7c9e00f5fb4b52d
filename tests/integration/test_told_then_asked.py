"""What a customer tells before what they ask, through the real HTTP API on the tau-retail store
(issue 12). A problem told, then "any ideas?", is answered from the product's own guide; a wish
told beside "are they still available?" is the question's subject, not a change to ask about; a
wish to do something with a product ("wanna wear them at the pool") asks for no change; "keep it
like before" declines a proposal (and "my mistake" asks for no cancellation); "you take the money
two times" tells what the store did; "that one" in the next turn is the product the last one was
about; the warranty of two products names both; "that exact model in silver" asks about the
silver one.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import new_session, say

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, None, prefix="told")


def test_a_problem_told_then_any_ideas_is_answered_from_the_products_guide(tau_api: Any) -> None:
    _, _, client = tau_api
    # noah_martin_5764: one Electric Kettle (#W1971958, delivered); its guide: "If it switches off
    # before boiling, descale it."
    status, reply = ask(client, "noah_martin_5764",
                        "The silver kettle I got from you clicks itself off before the water is hot. "
                        "Any ideas?")
    assert status == "answered", reply
    assert "descale" in reply.lower(), reply
    assert "Electric Kettle user guide" in reply, reply


def test_a_wish_to_use_a_product_asks_for_no_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # daiki_muller_8062: Wireless Earbuds (water resistance: not resistant) in #W6790887, pending
    status, reply = ask(client, "daiki_muller_8062",
                        "kinda wanna wear my earbuds on rainy runs, are the ones i got waterproof?")
    assert status == "answered", reply
    assert "Modify" not in reply, reply
    assert "not resistant" in reply, reply


def test_a_wish_told_beside_an_availability_question_is_answered_not_asked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # harper_kovacs_9747: Sneakers (size 11, red, leather) in #W3876856 (cancelled); no red leather
    # pair is available
    status, reply = ask(client, "harper_kovacs_9747",
                        "I love the red leather sneakers I ordered but they were a bit tight, I think I need "
                        "a size 12. Do you have those exact ones in a 12?")
    assert status == "answered", reply
    assert "not available" in reply, reply
    assert "returned" not in reply and "exchanged" not in reply, reply


def test_keep_it_like_before_declines_the_proposal(tau_api: Any) -> None:
    _, _, client = tau_api
    # yusuf_garcia_3055: #W6885344 (pending) paid with PayPal; a Mastercard and a gift card on the account
    for answer in ("Sorry my mistake, PayPal is correct. Leave it like it was.",
                   "Oh wait, I check again and the PayPal is okay. Keep it like before please."):
        session = new_session("told")
        first = say(client, "yusuf_garcia_3055", session, "For order #W6885344 I would like to pay with my "
                    "credit card, not the PayPal. Can you change it?")
        assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
        second = say(client, "yusuf_garcia_3055", session, answer)
        assert second["status"] == "answered", second["reply"]["text"]
        assert "haven't changed anything" in second["reply"]["text"], second["reply"]["text"]


def test_money_taken_two_times_is_told_of_the_store_not_a_payment_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_smith_9087: #W6711349 (pending) paid once, $3252.45 with PayPal, the account's only method
    status, reply = ask(client, "ethan_smith_9087",
                        "for order #W6711349 you take the money two times from my paypal. how much was paid?")
    assert "3252.45" in reply, reply
    assert "switch" not in reply, reply


def test_a_change_after_a_dash_is_asked_for(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_santos_6635: one Mechanical Keyboard (linear, no backlight, 80%) in #W5183325, pending
    status, reply = ask(client, "ivan_santos_6635",
                        "keyboard in my order - want tactile switches instead of linear. rest the same. "
                        "paypal for the difference")
    assert status == "awaiting_confirmation", reply
    assert "#W5183325" in reply and "tactile" in reply, reply


def test_that_one_in_the_next_turn_is_the_product_the_last_was_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_santos_6635: one Smart Watch (LCD) in #W3913498, pending; its guide: "LCD models about 4 days"
    session = new_session("told")
    first = say(client, "ivan_santos_6635", session,
                "is my smart watch order still at a stage where I could change things if I wanted to?")
    assert "#W3913498" in first["reply"]["text"], first["reply"]["text"]
    # (not a yes to the change just asked about, either)
    second = say(client, "ivan_santos_6635", session,
                 "ok good to know. before I decide, roughly how long does the battery last on that one?")
    assert second["status"] == "answered", second["reply"]["text"]
    assert "4 days" in second["reply"]["text"], second["reply"]["text"]


def test_the_warranty_of_two_products_names_both(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_smith_9087: #W4635485 (processed) holds the Coffee Maker and the Cycling Helmet, whose
    # terms are in different sections of the warranty page; no other order holds either
    for text in ("could you tell me how long the coffee maker and the helmet are covered under your "
                 "warranty?",
                 "how long is the warranty on my coffee maker and my helmet?"):
        status, reply = ask(client, "ethan_smith_9087", text)
        assert status == "answered", reply
        assert "Coffee Maker" in reply and "Cycling Helmet" in reply, reply


def test_that_exact_model_in_another_colour_asks_about_that_colour(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_santos_6635: a black Smart Watch (metal band, LCD) in #W3913498
    status, reply = ask(client, "ivan_santos_6635",
                        "I can't decide about the watch in my order, the black one with the metal band and "
                        "LCD screen. Do you have that exact model in silver?")
    assert status == "answered", reply
    assert "Smart Watch in silver" in reply, reply
