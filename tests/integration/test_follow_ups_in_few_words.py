"""Follow-ups said in few words, through the real HTTP API on the tau-retail store (issue 12):
whether the order just talked about has a status, asked without its verb ("shipped yet?"); a thing
named then asked about in the next breath ("and my laptop then? has that left yet?"); the last
question asked of an order, asked again of another named by two of its items ("same deal?"); an
item change asked for with "still" after a question about cancelling (the change, never the
cancellation); a Chinese return only supposed, what would follow asked (answered, nothing
proposed); the account's address made "that" (the address just proposed for an order), a remark
beside the request asking nothing; an order picked by two of its items for a return of "one of them"
(the item the request was about, not those two); a swap ruled out and the item "taken back" (a
return); and a cancellation ruled out beside a swap asked for ("don't cancel it or anything, just
swap ...": the swap).

The messages are written for these tests (none is a development conversation's)."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import reply_text as _text
from api_support import say_each

pytestmark = pytest.mark.integration


def turns(client: Any, customer: str, *texts: str) -> list[dict[str, Any]]:
    return say_each(client, customer, *texts, prefix="few-words")


def test_a_status_asked_without_its_verb_is_of_the_order_just_talked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_davis_2103: #W2541482 pending (laptop, tea kettle, ...), #W2112666 delivered
    first, second = turns(client, "sofia_davis_2103", "what's in #W2541482?", "cool. shipped yet?")
    assert "#W2541482" in _text(first)
    assert "#W2541482" in _text(second) and "#W2112666" not in _text(second), _text(second)
    assert "pending" in _text(second) or "hasn't shipped" in _text(second), _text(second)


def test_a_thing_named_then_asked_about_is_one_question(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_davis_2103: the bicycle was in #W8494984 (cancelled, refunded 2857.46); the laptop is in
    # #W2541482, pending
    first, second = turns(client, "sofia_davis_2103", "was I refunded for the order with the bicycle?",
                          "ok. and my laptop then? has that left yet?")
    assert "2857.46" in _text(first), _text(first)
    assert "#W2541482" in _text(second) and "refund" not in _text(second).lower(), _text(second)


def test_same_deal_of_an_order_named_by_two_items_asks_the_order_question_again(tau_api: Any) -> None:
    _, _, client = tau_api
    # daiki_silva_5033: #W7142527 cancelled (refunded 234.57); #W6564160 delivered: speaker and luggage
    first, second = turns(client, "daiki_silva_5033",
                          "did the refund for #W7142527 go through? how much was it",
                          "and the one with the speaker and the luggage, same deal?")
    assert "234.57" in _text(first), _text(first)
    assert "#W6564160" in _text(second), _text(second)
    assert "in stock" not in _text(second), _text(second)  # not a catalogue answer


def test_an_item_change_asked_with_still_after_a_cancel_question_is_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_davis_2103: #W2541482 (pending) holds a ceramic 1.5 liters gas Tea Kettle; the ceramic 2
    # liters gas one is in stock
    first, second = turns(client, "sofia_davis_2103",
                          "if i change something in #W2541482 can i still cancel it afterwards?",
                          "ok. i still want the tea kettle in it changed to the 2 liter one, "
                          "same ceramic for gas")
    assert "cancel" in _text(first).lower()
    assert second["status"] in {"awaiting_confirmation", "needs_clarification"}, second
    assert "2 liters" in _text(second) and "Cancel order" not in _text(second), _text(second)
    assert "why" not in _text(second).lower(), _text(second)  # no cancellation reason asked


def test_a_chinese_return_only_supposed_proposes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    # isabella_sanchez_2068: the Hiking Boots are in #W1713682, delivered
    [turn] = turns(client, "isabella_sanchez_2068", "如果我把那双登山鞋退掉，能退给我多少钱？")
    assert turn["status"] == "answered", turn
    assert not turn.get("proposed"), turn
    assert "#W1713682" in _text(turn), _text(turn)


def test_the_accounts_address_made_the_one_just_proposed_for_an_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_davis_2103: #W2541482 is pending; the account's address is not the new one
    first, second = turns(client, "sofia_davis_2103",
                          "please send #W2541482 to 77 Quarry Road, Apt 3, Austin, TX 78701. I moved last "
                          "month and nobody warned me about this",
                          "and change the address on my account to that too while you're at it")
    assert first["status"] == "awaiting_confirmation", first
    assert "Which order" not in _text(first), _text(first)  # the remark asks nothing
    assert "default address" in _text(second) and "77 Quarry Road" in _text(second), _text(second)


def test_an_order_picked_by_two_of_its_items_keeps_the_item_the_request_was_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # fatima_wilson_6873: an Electric Kettle in #W7990410 (with headphones and a bookshelf) and one in
    # #W4556683, both delivered
    first, second = turns(client, "fatima_wilson_6873",
                          "turns out I have the same electric kettle twice. I'd like to send one of them "
                          "back",
                          "the one from the order with the headphones and the bookshelf")
    assert first["status"] == "needs_clarification", first
    assert second["status"] == "awaiting_confirmation", second
    assert "#W7990410" in _text(second) and "Electric Kettle" in _text(second), _text(second)
    assert "Headphones (" not in _text(second) and "Bookshelf (" not in _text(second), _text(second)


def test_a_swap_ruled_out_and_the_item_taken_back_is_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # mason_sanchez_7536: #W6209538 (delivered) holds the Sunglasses and a Bluetooth Speaker
    [turn] = turns(client, "mason_sanchez_7536",
                   "the sunglasses from #W6209538 are scratched. I'm not after a swap, just take them "
                   "back please")
    assert turn["status"] == "awaiting_confirmation", turn
    assert "Return" in _text(turn) and "Sunglasses" in _text(turn), _text(turn)


def test_a_cancellation_ruled_out_beside_a_swap_asked_for_is_the_swap(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_davis_2103: #W2541482 (pending) holds a ceramic 1.5 liters gas Tea Kettle
    [turn] = turns(client, "sofia_davis_2103",
                   "don't cancel #W2541482 or anything, just swap the tea kettle in it to the 2 liter one")
    assert turn["status"] == "awaiting_confirmation", turn
    assert "2 liters" in _text(turn) and "Cancel order" not in _text(turn), _text(turn)
