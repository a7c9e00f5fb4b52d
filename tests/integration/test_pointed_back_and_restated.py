"""Words that point back at what the conversation was about, requests said without their subject,
and answers that say the proposal again, through the real HTTP API on the tau-retail store (issue
12): "need tracking numbers pls" is a request; "the e-reader in it" and "the address on it" are the
order just talked about; "which one of those is the smart watch?" asks which of their orders holds
it; "when will they get here?" after two order numbers is about both; "and the air purifier from my
other order?" asks the last question again; a yes with a remark about the proposal's own items is a yes,
and an "OK" before a question about another kind of change is no yes; "which are waiting to ship
and which were delivered?" asks for both; an amount in a sentence the attack screen flags still
picks its order; a product asked for "if not" with "one that is" keeps what was asked of theirs.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import new_session

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="back")


def test_a_request_said_without_its_subject_is_a_request(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_kim_1076: #W2768383 and #W9538924 processed (on their way), #W4646940 delivered
    status, reply = ask(client, "emma_kim_1076", "need tracking numbers pls")
    assert status == "answered", reply
    assert "498978631037" in reply and "546471111827" in reply, reply


def test_an_amount_in_a_sentence_the_screen_flags_still_picks_its_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # lucas_martin_4549: #W3929227 was charged 5276.69 (Espresso Machine, E-Reader ...)
    status, reply = ask(client, "lucas_martin_4549",
                        "My credit card statement shows 5276.69 from your shop. What was that for?")
    assert status == "answered", reply
    assert "#W3929227" in reply and "Espresso Machine" in reply, reply


def test_both_sets_of_statuses_asked_for_are_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    # amelia_wilson_4614: #W3062096 pending, #W9077205 delivered, #W4420044 cancelled
    status, reply = ask(client, "amelia_wilson_4614",
                        "which of my orders are still waiting to ship and which ones got delivered already?")
    assert status == "answered", reply
    assert "#W3062096" in reply and "#W9077205" in reply, reply
    assert "#W4420044" not in reply, reply


def test_a_yes_with_a_remark_about_the_proposals_own_items_is_a_yes(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    # amelia_wilson_4614: #W3062096 (pending) holds the T-Shirt, the Smart Watch and a Jigsaw Puzzle
    status, reply = ask(client, "amelia_wilson_4614",
                        "please cancel the order with the smart watch, I ordered it by mistake", session)
    assert status == "awaiting_confirmation" and "Cancel order #W3062096" in reply, reply
    status, reply = ask(client, "amelia_wilson_4614",
                        "oh the t-shirt is in that one too... whatever, cancel the whole order anyway",
                        session)
    assert status == "answered" and "#W3062096 is cancelled" in reply, reply


def test_a_chinese_yes_that_gives_no_longer_needed_as_the_reason_is_a_yes(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    status, reply = ask(client, "amelia_wilson_4614", "请帮我取消订单 #W3062096，我不要了", session)
    assert status == "awaiting_confirmation" and "#W3062096" in reply, reply
    status, reply = ask(client, "amelia_wilson_4614", "嗯，确认取消，原因是我不再需要了", session)
    assert status == "answered" and "#W3062096" in reply, reply
    assert "回复“是”" not in reply, reply  # not proposed again


def test_an_ok_before_a_question_about_another_change_is_no_yes(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    # emma_kim_1076: #W9538924 is processed, so it can no longer be cancelled
    status, reply = ask(client, "emma_kim_1076", "can I still cancel #W9538924?", session)
    assert status == "answered" and "can no longer be cancelled" in reply, reply
    status, reply = ask(client, "emma_kim_1076", "ok. so once it arrives I can send it back?", session)
    assert status == "answered", reply
    assert "could you tell me why" not in reply.lower(), reply  # no cancellation is asked about


def test_an_everyday_word_for_cancel_after_the_list_cancels_that_order(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    status, reply = ask(client, "amelia_wilson_4614", "which of my orders havent shipped", session)
    assert status == "answered" and "#W3062096" in reply, reply
    status, reply = ask(client, "amelia_wilson_4614", "ok nix the smart watch one, ordered it by mistake",
                        session)
    assert status == "awaiting_confirmation" and "Cancel order #W3062096" in reply, reply


def test_a_follow_up_naming_their_other_product_asks_the_warranty_again(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    # lucas_martin_4549: Headphones in #W3929227 (delivered), an Air Purifier in #W9318778 (pending)
    status, reply = ask(client, "lucas_martin_4549", "how long is the warranty on my headphones?", session)
    assert status == "answered" and "1 year" in reply, reply
    status, reply = ask(client, "lucas_martin_4549", "thanks! and the air purifier from my other order?",
                        session)
    assert status == "answered" and "Air Purifier" in reply and "(source: Warranty terms)" in reply, reply
    assert "Yours, from order" not in reply, reply  # the warranty, not the item's options


def test_a_product_in_the_order_just_talked_about_is_their_item(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    # lucas_martin_4549: #W3929227 holds an E-Reader (storage: 8GB)
    status, reply = ask(client, "lucas_martin_4549", "#W3929227 status?", session)
    assert status == "answered", reply
    status, reply = ask(client, "lucas_martin_4549", "k. the e-reader in it - what storage", session)
    assert status == "answered" and "#W3929227" in reply and "8GB" in reply, reply
    assert "versions" not in reply, reply  # not the store's range


def test_the_address_on_it_is_the_order_just_talked_abouts(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    # ava_lopez_2676: #W8327915 (pending) ships to 229 Lakeview Drive, Chicago; her account's address
    # is 836 Hickory Lane
    status, reply = ask(client, "ava_lopez_2676", "status of #W8327915?", session)
    assert status == "answered", reply
    status, reply = ask(client, "ava_lopez_2676", "and what's the address on it", session)
    assert status == "answered" and "229 Lakeview Drive" in reply, reply
    assert "836 Hickory Lane" not in reply, reply


def test_which_of_the_orders_listed_holds_a_product(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("back")
    # amelia_wilson_4614: the Smart Watch is in #W3062096 only
    status, reply = ask(client, "amelia_wilson_4614", "what orders do I have?", session)
    assert status == "answered", reply
    status, reply = ask(client, "amelia_wilson_4614", "which one of those is the smart watch?", session)
    assert status == "answered" and "#W3062096" in reply, reply
    assert "#W9077205" not in reply and "versions" not in reply, reply


def test_they_after_two_order_numbers_is_both_orders(tau_api: Any) -> None:
    _, _, client = tau_api
    # harper_ito_5985: #W3137176 and #W5367110, both processed
    status, reply = ask(client, "harper_ito_5985",
                        "I've got orders #W3137176 and #W5367110 with you. When will they get here?")
    assert status == "answered", reply
    assert "447687149450" in reply and "152028381741" in reply, reply


def test_a_delivered_item_wanted_gone_with_the_money_back_is_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # mia_johansson_7000: #W8346517 (delivered) holds a Yoga Mat and an Office Chair
    status, reply = ask(client, "mia_johansson_7000",
                        "The office chair came with a snapped armrest. I don't want another one, I want it "
                        "gone and my money back.")
    assert status == "awaiting_confirmation", reply
    assert "Return from order #W8346517: Office Chair" in reply, reply


def test_an_address_given_after_the_account_is_named_is_the_accounts(tau_api: Any) -> None:
    _, _, client = tau_api
    # omar_khan_2363: no order pending or on its way
    status, reply = ask(client, "omar_khan_2363",
                        "My account still has my old address. The right one is 40 Quarry Lane, Austin, TX "
                        "78704. Sort it out.")
    assert status == "awaiting_confirmation", reply
    assert "Change your default address" in reply and "40 Quarry Lane" in reply, reply


def test_asking_whether_anything_is_on_its_way_is_a_store_question(tau_api: Any) -> None:
    _, _, client = tau_api
    # omar_khan_2363: two delivered orders and a cancelled one, nothing on its way
    status, reply = ask(client, "omar_khan_2363", "is anything even on the way to me rn?")
    assert status == "answered", reply
    assert "#W6304490" in reply and "#W2421430" in reply, reply


def test_of_two_items_of_a_product_the_one_the_asking_sentence_describes_goes_back(tau_api: Any) -> None:
    _, _, client = tau_api
    # olivia_brown_4616: #W8033354 (delivered) holds a blue and a white Cycling Helmet
    status, reply = ask(client, "olivia_brown_4616",
                        "I got two cycling helmets in one order. The blue one fits great, but the white one "
                        "never left the box. I'd like to send back only the white one.")
    assert status == "awaiting_confirmation", reply
    assert "color: white" in reply and "color: blue" not in reply, reply


def test_a_version_asked_for_if_theirs_lacks_an_option_keeps_that_option(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_kim_1076: a green Bluetooth Speaker (water resistance: no) in #W9538924
    status, reply = ask(client, "emma_kim_1076",
                        "is the bluetooth speaker i ordered waterproof? if not, do u have a black one "
                        "that is")
    assert status == "answered", reply
    assert "No, your Bluetooth Speaker from order #W9538924" in reply, reply
    assert "water resistance yes" in reply or "water resistance: yes" in reply or "/ yes" in reply, reply
    assert "black" in reply, reply


def test_a_refund_method_asked_for_beside_the_one_ruled_out_is_asked_again(tau_api: Any) -> None:
    _, _, client = tau_api
    # lei_khan_6353: #W2787996 (delivered, a T-Shirt) was paid with gift card gift_card_6786837; the
    # account also holds a Visa ending 9288, which a return's refund cannot go to
    status, reply = ask(client, "lei_khan_6353",
                        "I want to return the t-shirt. Can the money go on my visa, not back on the gift "
                        "card?")
    # Then no return is proposed to the gift card ruled out: where the refund may go is asked
    assert status in ("needs_clarification", "partial") and 'Reply "yes"' not in reply, reply
    assert "can go only to its original payment method or to a gift card" in reply, reply
    assert "not to your Visa ending 9288" in reply, reply


def test_orders_said_not_to_go_to_their_own_place_are_the_others(tau_api: Any) -> None:
    _, _, client = tau_api
    # ava_moore_2033: #W4135875 (pending) goes to San Antonio, where she lives; #W2173715
    # (processed) to Phoenix
    status, reply = ask(client, "ava_moore_2033",
                        "are any of my orders NOT going to my place in San Antonio?")
    assert status == "answered" and "#W2173715" in reply and "Phoenix" in reply, reply
    assert "#W4135875" not in reply, reply
    status, reply = ask(client, "ava_moore_2033",
                        "is anything of mine on its way somewhere other than my San Antonio address?")
    assert status == "answered" and "#W2173715" in reply, reply
    assert "#W4135875" not in reply, reply


def test_whether_some_items_may_go_back_said_with_the_refund_method_is_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # lucas_martin_4549: #W3929227 (delivered) holds a Water Bottle and a Wristwatch, among others
    status, reply = ask(client, "lucas_martin_4549",
                        "For #W3929227, would it be possible to return just the water bottle and the "
                        "wristwatch? Refund to the card I paid with.")
    assert status == "awaiting_confirmation", reply
    assert "Return from order #W3929227" in reply and "Water Bottle" in reply and "Wristwatch" in reply, reply
    assert "Espresso Machine" not in reply.split("Refund")[0], reply
