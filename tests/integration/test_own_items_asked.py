"""What a customer asks of the things they bought, and requests spread over their orders, through the
real HTTP API on the tau-retail store (issue 12): "are my boots waterproof?" is answered from their
own pair's options, yes or no, not with the versions the store sells; "is it gas or electric?" says
which, and not the other; a later "is it ...?" about the one product named before is the same
question; a return of two products in two orders is a return from each; "which switches did I get?"
and a hope about an option ask nothing to change; a question whether one change would also make
another is answered, not carried out; what the customer keeps naming ("the 8 inch one, same 128gb")
stays in the change or the change is not available; a broken item with the money back asked for is
a return, not a warranty claim; a request for a person near words an attack would use is handed
over; "the one that hasn't come yet" picks the pending order; "what's in it and the total" gets both.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="own")


def test_whether_their_own_item_has_an_option_is_answered_from_its_line(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_rossi_9776: Hiking Boots (waterproof: no) in #W7008160
    status, reply = ask(client, "ivan_rossi_9776", "quick q, are the hiking boots i bought waterproof?")
    assert status == "answered", reply
    assert "No, your Hiking Boots from order #W7008160 are not waterproof" in reply, reply
    assert "available:" not in reply, reply  # not the versions the store sells


def test_an_either_or_question_of_their_item_says_which_and_not_the_other(tau_api: Any) -> None:
    _, _, client = tau_api
    # noah_taylor_8533: an electric portable Grill in #W2286993 (pending)
    status, reply = ask(client, "noah_taylor_8533", "the grill on my order, is that one electric or gas?")
    assert status == "answered" and "#W2286993" in reply and "type: electric, not gas" in reply, reply


def test_a_later_question_about_the_one_product_named_is_about_their_item(tau_api: Any) -> None:
    _, _, client = tau_api
    # yusuf_jackson_7865: a green Bluetooth Speaker (water resistance: yes) in #W7128968
    status, reply = ask(client, "yusuf_jackson_7865",
                        "the speaker i got from you is great. can it get wet at the beach?")
    assert status == "answered", reply
    assert "Yes, your Bluetooth Speaker from order #W7128968 is waterproof" in reply, reply


def test_a_return_of_two_products_in_two_orders_is_a_return_from_each(tau_api: Any) -> None:
    _, _, client = tau_api
    # sophia_garcia_1101: the Tablet in #W8727985, the Pet Bed in #W1023987 (both delivered)
    status, reply = ask(client, "sophia_garcia_1101", "please send back my pet bed and my tablet")
    assert status == "awaiting_confirmation", reply
    assert "Return from order #W8727985: Tablet" in reply, reply
    assert "Return from order #W1023987: Pet Bed" in reply, reply


def test_asking_which_option_they_got_and_hoping_proposes_no_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_garcia_1261: a tactile Mechanical Keyboard in #W9911714 (pending)
    status, reply = ask(client, "ethan_garcia_1261",
                        "what switches does the keyboard in #W9911714 have? I hope I didn't go with linear")
    assert status == "answered" and "tactile" in reply, reply
    assert "Modify the items" not in reply, reply


def test_whether_one_change_would_make_another_is_answered_not_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # fatima_li_5040: #W4155745 pending, going to Seattle; the default address is in Washington, DC
    status, reply = ask(client, "fatima_li_5040",
                        "Can you tell me if changing my account address would also change where "
                        "#W4155745 goes?")
    assert status == "answered" and "Change the shipping address" not in reply, reply


def test_an_option_named_as_it_is_stays_in_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # chen_taylor_6919: an 8-inch 128GB silver Tablet in #W4633848; no black 8-inch 128GB is sold
    status, reply = ask(client, "chen_taylor_6919",
                        "in #W4633848 make the tablet black instead of silver, the 8 inch one, same 128gb")
    assert status == "answered" and "not available in 8-inch, 128GB, black" in reply, reply
    assert "7-inch" not in reply, reply


def test_a_broken_item_with_the_money_back_asked_for_is_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # raj_ito_1740: a Laptop in #W2053532 (delivered)
    status, reply = ask(client, "raj_ito_1740",
                        "#W2053532 - the laptop screen came cracked. refund it to my visa please, "
                        "I'm over it.")
    assert status == "awaiting_confirmation" and "Return from order #W2053532: Laptop" in reply, reply


def test_a_person_asked_for_near_words_of_an_attack_is_handed_over(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "harper_khan_8862",
                        "I don't care what your system says. Put me through to someone who can check it.")
    assert status == "handed_off", reply


def test_the_one_that_has_not_come_picks_the_pending_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # noah_ito_3850: an Air Purifier in #W3445693 (delivered) and in #W6729841 (pending)
    session = f"own-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "noah_ito_3850", "where's my air purifier at", session)
    assert status == "needs_clarification", reply
    status, reply = ask(client, "noah_ito_3850", "the one that hasn't come, obviously", session)
    assert status == "answered" and "#W6729841" in reply and "#W3445693" not in reply, reply


def test_what_an_order_holds_and_its_total_are_both_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    # aarav_santos_4279: #W6111820 holds Hiking Boots, a Coffee Maker, Wireless Earbuds and a Makeup Kit
    status, reply = ask(client, "aarav_santos_4279", "what did i get in #W6111820 and how much was the total")
    assert status == "answered" and "Hiking Boots" in reply and "$1006.19" in reply, reply


def test_the_order_with_the_product_alone_is_found_in_chinese(tau_api: Any) -> None:
    _, _, client = tau_api
    # sophia_garcia_5025: a Bookshelf alone in #W9336725, others beside other items
    status, reply = ask(client, "sophia_garcia_5025", "那个单独买的书架是什么时候送到的？")
    assert status == "answered" and "#W9336725" in reply and "#W5777276" not in reply, reply


def test_a_chinese_word_of_two_products_is_the_one_the_customer_has(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_li_6208: an Espresso Machine (and no Coffee Maker) in #W8783295 (cancelled); "咖啡机" names both
    status, reply = ask(client, "ethan_li_6208", "咖啡机那个订单的钱退到哪里了？")
    assert status == "answered" and "#W8783295" in reply and "3251.08" in reply, reply


def test_what_a_supposed_cancellation_would_give_back_is_that_orders_refund(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_hernandez_6923: #W4284542 pending, paid $2020.61 with a Mastercard ending 4127
    status, reply = ask(client, "ivan_hernandez_6923",
                        "if i cancel #W4284542, how much money do i get and on what card")
    assert status == "answered" and "$2020.61" in reply and "4127" in reply, reply
    assert "Cancel order" not in reply, reply


def test_a_robot_vacuum_is_the_robotic_one_of_two_in_the_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # daiki_johnson_9523: a canister and a robotic Vacuum Cleaner in #W9502127 (delivered)
    status, reply = ask(client, "daiki_johnson_9523", "i'd like to send the robot vacuum back")
    assert status == "awaiting_confirmation" and "type: robotic" in reply and "canister" not in reply, reply


def test_which_order_holds_a_product_is_answered_with_each_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_lee_8857: an Indoor Security Camera in #W7762997 and in #W4143549 (both delivered)
    status, reply = ask(client, "sofia_lee_8857", "the security camera - which order did that come in?")
    assert status == "answered" and "#W7762997" in reply and "#W4143549" in reply, reply


def test_why_none_of_the_open_orders_has_shipped_lists_the_pending_ones(tau_api: Any) -> None:
    _, _, client = tau_api
    # omar_silva_7446: #W9673784 and #W9728773 pending
    status, reply = ask(client, "omar_silva_7446",
                        "why haven't any of my open orders shipped?? this is ridiculous")
    assert status == "answered" and "#W9673784" in reply and "#W9728773" in reply, reply
    assert "no orders with status" not in reply, reply


def test_the_orders_on_their_way_are_answered_with_their_tracking_numbers(tau_api: Any) -> None:
    _, _, client = tau_api
    # harper_kovacs_7861: #W8904134 processed, USPS tracking 172624915783
    status, reply = ask(client, "harper_kovacs_7861",
                        "which orders of mine are on the way right now? and the tracking numbers pls")
    assert status == "answered" and "172624915783" in reply, reply


def test_an_amount_in_a_sentence_the_screen_flags_still_picks_the_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_ahmed_4909: #W2598324 was paid 6305.19
    status, reply = ask(client, "mei_ahmed_4909",
                        "I see 6305.19 from you guys on my card statement. For which things is that?")
    assert status == "answered" and "#W2598324" in reply and "Espresso Machine" in reply, reply


def test_a_change_under_a_negated_condition_is_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # aarav_brown_3744: the Bicycle in #W6584521 (pending)
    status, reply = ask(client, "aarav_brown_3744",
                        "If the bike order is not sent out yet, please change the address to 10 Ocean View "
                        "Avenue, San Francisco CA 94121. Otherwise just let me know.")
    assert status == "awaiting_confirmation", reply
    assert "#W6584521" in reply and "10 Ocean View Avenue" in reply, reply


def test_dimensions_said_to_stay_the_same_are_kept_in_an_exchange(tau_api: Any) -> None:
    _, _, client = tau_api
    # isabella_taylor_7478: a purple crew-neck T-Shirt in #W6717215 (delivered); no purple crew-neck M is sold
    status, reply = ask(client, "isabella_taylor_7478",
                        "could I swap the purple tee I got for a medium? "
                        "colour and style should stay the same")
    assert status == "answered" and "not available in purple, crew neck, M" in reply, reply


def test_the_address_on_the_profile_is_the_new_address_of_the_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # liam_li_5260: #W9653558 (pending) goes to Dallas; the default address is in San Francisco
    status, reply = ask(client, "liam_li_5260",
                        "#W9653558 should go to my home, not Dallas. use the address on my profile")
    assert status == "awaiting_confirmation" and "to 205 Highland Drive" in reply, reply


def test_how_much_got_refunded_is_the_orders_refund_not_a_price(tau_api: Any) -> None:
    _, _, client = tau_api
    # lei_patel_3139: #W9506777 (Tablet and others) cancelled, $1594.43 refunded to a Visa ending 4494
    status, reply = ask(client, "lei_patel_3139", "i cancelled my tablet order. how much did i get refunded?")
    assert status == "answered" and "1594.43" in reply and "4494" in reply, reply


def test_a_question_after_one_about_their_own_item_is_about_that_product(tau_api: Any) -> None:
    _, _, client = tau_api
    # evelyn_moore_6558: a Wi-Fi E-Reader in #W4308578; the store sells Wi-Fi + Cellular versions too
    session = f"own-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "evelyn_moore_6558", "is the e-reader in #W4308578 wifi only?", session)
    assert status == "answered" and "connectivity: Wi-Fi" in reply, reply
    status, reply = ask(client, "evelyn_moore_6558", "do you sell one with cellular? how much?", session)
    assert status == "answered" and "E-Reader" in reply and "Wi-Fi + Cellular" in reply, reply
    assert "don't seem to carry" not in reply, reply


def test_a_bare_change_verb_beside_a_payment_told_asks_for_that_payment_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # amelia_ito_8772: #W3883329 (pending) paid with a Mastercard ending 7517; a PayPal account on file
    status, reply = ask(client, "amelia_ito_8772",
                        "You billed my Mastercard for #W3883329. It was supposed to go on PayPal. Switch it.")
    assert status == "awaiting_confirmation" and "with your PayPal account" in reply, reply
    assert "Which items" not in reply, reply
