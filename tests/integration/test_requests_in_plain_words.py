"""Requests said in plain words, through the real HTTP API on the tau-retail store (issue 12): an
address written as people write it ("Boston, Massachusetts", "apt 12, 45 Elm Street") or said to be
the right one ("it should be ..."), a thing's need to go somewhere ("it needs to go to ..."), "can u"
for "can you", a preference ("I'd much rather it were charged to my Mastercard") and "would that be
possible?" after it, "if so, please refund it" after "I was wondering whether I could return it",
an item taken off an order (never the whole order cancelled), a reason given where an order was
asked for ("the helmet one. no longer needed"), a word of a product's name picking its order
("the electric one"), "em" for the product just talked about, a short question naming one of its
options ("field of view?") about it too, and what an order should hold told beside a question
about it (a control: right before these changes too, kept against the retrained intent model);
and, later, a payment change to a method the account lacks (said missing, the saved ones listed),
a payment asked to be split (one method pays an order), what would follow a return asked as a
condition, one of two items of an order cancelled by its colour (the whole-order rule), and praise
of a product before a question about it (its guide answers, no complaint); and, later still, a
parcel marked delivered that never turned up (the store's rule for it), "use my default one" after
where an order goes (the account's address for that order), and a closing thanks thanked back; and
later still, a fallback after a preference ("if there isn't one, a bigger one will do"), a colour left
to the store ("whichever is cheaper"), the orders not going to the account's address, "leave it like
that then" after an answer, and a statement checked ("..., right?") then agreed to; and, in the stop
after, which of two items an answer names ("the 4K one") before the change it asked for, one more
return asked ("... too?") beside one proposed (both proposed, one yes makes both), a cancellation
and "dont touch the one with the camera" in one clause, "the same card" paying an item change's
difference (no option kept by it), a short question after a warranty answer ("torn straps?"), the
email and the address asked together (both answered), an order's status and total asked in four
words, "the two cancelled ones" (each one's refund), what an item of the order just talked about
cost, an order said to be one the customer ships somewhere (which order, no change), an address
an order is "set to ship to" (told, not the new one), and an item described by its options in an
order whose status allows no change (that order, and the rule); whether a gift card would cover an
order (its balance beside the order's charge), and the account's address asked to become where an
order ships (the account's change; no order touched); an address named by its number and street
("409 elm st"), the shorter of two items returned and the longer kept, and the other colours a
product comes in asked beside a statement of the one bought.

The messages are written for these tests (none is a development conversation's)."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import say_each

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, None, prefix="plain")


def turns(client: Any, customer: str, *texts: str) -> list[dict[str, Any]]:
    return say_each(client, customer, *texts, prefix="plain")


def test_an_address_said_to_be_the_right_one_is_proposed_with_its_state_by_name(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_lopez_6291: the Pet Bed is in #W6779827 (pending), shipping to Columbus, OH
    status, reply = ask(client, "ethan_lopez_6291",
                        "I typed the wrong address for the pet bed order, it should be 77 Pearl Street, "
                        "Unit 2, Boston, Massachusetts 02110")
    assert status == "awaiting_confirmation", reply
    assert "#W6779827" in reply and "77 Pearl Street, Unit 2, Boston, MA 02110" in reply, reply


def test_a_unit_written_before_the_street_is_kept(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ethan_lopez_6291",
                        "please send the pet bed order to apt 12, 45 Elm Street, Boston MA 02118 instead")
    assert status == "awaiting_confirmation", reply
    assert "45 Elm Street, apt 12, Boston, MA 02118" in reply, reply


def test_a_move_told_then_where_it_needs_to_go_asks_for_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    first, second = turns(client, "ethan_lopez_6291", "has my pet bed order shipped?",
                          "ugh, we moved on sunday. it needs to go to 9 lake shore drive, chicago "
                          "illinois 60611")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "awaiting_confirmation", reply
    assert "#W6779827" in reply and "9 Lake Shore Drive, Chicago, IL 60611" in reply, reply
    assert "Your account is in the name of" not in reply, reply  # the move is told, not asked about


def test_can_u_ship_it_elsewhere_asks_for_the_address_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # mason_johansson_2485: #W3358610 (pending: Bicycle, Wireless Earbuds)
    status, reply = ask(client, "mason_johansson_2485",
                        "can u ship the order w the bike and earbuds to my office instead? "
                        "1550 Market St, Floor 3, San Francisco, CA 94102")
    assert status == "awaiting_confirmation", reply
    assert "#W3358610" in reply and "1550 Market St, Floor 3, San Francisco, CA 94102" in reply, reply
    assert "default address" not in reply, reply


def test_a_preference_after_a_statement_is_the_request(tau_api: Any) -> None:
    _, _, client = tau_api
    # lucas_martin_4549: #W9318778 (pending) paid with a gift card; a Visa on the account too
    status, reply = ask(client, "lucas_martin_4549",
                        "The order with the bicycle and the wall clock went on my gift card, and I'd much "
                        "rather it were paid with my credit card. Would that be possible?")
    assert status == "awaiting_confirmation", reply
    assert reply.startswith("Pay order #W9318778"), reply
    assert "can't be returned" not in reply and "contains" not in reply, reply


def test_if_so_please_refund_it_asks_for_the_return_it_follows(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_rossi_8776: the canister Vacuum Cleaner of #W8535951 (delivered), paid by credit card
    status, reply = ask(client, "sofia_rossi_8776",
                        "I was wondering whether I could return the vacuum cleaner, it is far too heavy for "
                        "me. If so, please put the money back on the card I used.")
    assert status == "awaiting_confirmation", reply
    assert "Return from order #W8535951" in reply, reply


def test_an_item_taken_off_an_order_is_explained_not_cancelled(tau_api: Any) -> None:
    _, _, client = tau_api
    for text in ("please remove the earbuds from my order, I found some at home",
                 "can you take the earbuds off and still send me the bike?"):
        status, reply = ask(client, "mason_johansson_2485", text)
        assert status == "answered", (text, reply)
        assert "as a whole" in reply and "Cancel order" not in reply, (text, reply)


def test_a_reason_given_with_the_order_picked_is_no_refusal(tau_api: Any) -> None:
    _, _, client = tau_api
    # mason_lopez_8519: two pending orders, #W9892169 (Cycling Helmet, Tea Kettle) and #W7752859
    # (Electric Kettle)
    first, second = turns(client, "mason_lopez_8519", "cancel one of my orders",
                          "the helmet one. no longer needed")
    assert first["status"] == "needs_clarification", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "awaiting_confirmation", reply
    assert "Cancel order #W9892169" in reply and "no longer needed" in reply, reply


def test_a_word_of_one_products_name_picks_its_order(tau_api: Any) -> None:
    _, _, client = tau_api
    first, second = turns(client, "mason_lopez_8519", "please cancel my kettle",
                          "the electric one. ordered it by mistake")
    assert first["status"] == "needs_clarification", first["reply"]["text"]
    assert "#W9892169" in first["reply"]["text"] and "#W7752859" in first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "awaiting_confirmation", reply
    assert "Cancel order #W7752859" in reply, reply


def test_em_is_the_product_just_talked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # yara_sanchez_1902: one order, #W6015009 (delivered), with a Bluetooth Speaker
    first, second = turns(client, "yara_sanchez_1902", "is the speaker in my order waterproof?",
                          "ok. and how long is the warranty on em")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered", reply
    assert "Bluetooth Speaker" in reply and "Warranty terms" in reply, reply


def test_what_an_order_should_hold_told_beside_a_question_about_it_asks_for_no_change(
        tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "mason_johansson_2485",
                        "Quick check on #W3358610: there should be a bike and some earbuds in there. Which "
                        "colour did I pick for the earbuds?")
    assert status == "answered", reply
    assert "blue" in reply, reply
    assert "can't be returned" not in reply and "changed to" not in reply, reply


def test_a_short_question_naming_an_option_is_about_the_product_just_talked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # fatima_nguyen_7539: the Indoor Security Camera of #W8808563 (2K, 160 degrees, Ethernet)
    first, second = turns(client, "fatima_nguyen_7539", "#W8808563 security cam - is it wifi?",
                          "field of view?")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered", reply
    assert "Indoor Security Camera" in reply and "field of view: 160 degrees" in reply, reply


def test_a_payment_change_to_a_method_the_account_lacks_says_so_and_proposes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    # lei_patel_3139: one payment method, a Visa or Mastercard; #W2403263 pending (Digital Camera, Perfume)
    status, reply = ask(client, "lei_patel_3139",
                        "hello, could the camera order be paid with my paypal and not with my card? "
                        "paypal is easier for me")
    assert status == "answered", reply
    assert "#W2403263" in reply and "There is no PayPal on your account" in reply, reply
    assert "payment methods saved on your account" in reply, reply


def test_a_payment_asked_to_be_split_gets_the_one_method_rule(tau_api: Any) -> None:
    _, _, client = tau_api
    # lucas_martin_4549: #W9318778 (pending) paid with a gift card; a Visa on the account too
    status, reply = ask(client, "lucas_martin_4549",
                        "for the order with the bicycle, can we split it - half on the gift card and the "
                        "rest on my visa?")
    # (read as a question about the store's rule, or as the change the rule answers: the rule, and
    # nothing proposed)
    assert status == "answered", reply
    assert "one payment method" in reply, reply


def test_what_would_follow_a_return_asked_as_a_condition_proposes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    # evelyn_kovacs_6742: #W2768683 delivered (Bookshelf, Espresso Machine, Wireless Earbuds, Digital Camera)
    status, reply = ask(client, "evelyn_kovacs_6742",
                        "The bookshelf from #W2768683 is too tall for my hallway. If I send back only the "
                        "bookshelf, do I have to return the camera too? I'd rather keep that.")
    assert status == "answered", reply
    assert "some or all of them" in reply, reply


def test_cancelling_one_of_two_items_picked_by_its_colour_gets_the_whole_order_rule(tau_api: Any) -> None:
    _, _, client = tau_api
    # lei_ahmed_1705: #W9132840 pending, with a red cycling helmet and a black one
    status, reply = ask(client, "lei_ahmed_1705",
                        "there are 2 helmets in #W9132840, I only need one. cancel the black one please")
    assert status == "answered", reply
    assert "#W9132840" in reply and "whole order" in reply, reply


def test_praise_of_a_product_then_a_question_about_it_gets_its_guide(tau_api: Any) -> None:
    _, _, client = tau_api
    # evelyn_kovacs_6742: one Espresso Machine, in #W2768683 (delivered)
    status, reply = ask(client, "evelyn_kovacs_6742",
                        "Really enjoying the espresso machine, it's been great. A friend said it needs "
                        "descaling now and then but I've no idea how often. What would you suggest?")
    assert status == "answered", reply
    assert "Descale every 2 months" in reply and "Espresso Machine user guide" in reply, reply
    assert "was delivered on" not in reply, reply  # praise is no complaint about the order


def test_a_parcel_marked_delivered_that_never_turned_up_gets_the_stores_rule_for_it(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_lopez_6291: #W8632528 (backpack, hiking boots, dumbbells) was delivered to San Diego
    status, reply = ask(client, "ethan_lopez_6291",
                        "order #W8632528 shows delivered but i don't find the package anywhere")
    assert status == "answered", reply
    # the order's facts and what to do about a parcel gone missing, not a manual of what is inside
    assert "#W8632528" in reply and "48 hours" in reply, reply


def test_the_default_one_asked_for_after_an_orders_address_sends_it_there(tau_api: Any) -> None:
    _, _, client = tau_api
    # #W8073920 (pending) goes to New York; the account's address is in Columbus
    first, second = turns(client, "ethan_lopez_6291", "where is order #W8073920 being shipped to?",
                          "wrong. use my default one")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "awaiting_confirmation", reply
    assert "#W8073920" in reply and "103 Hillcrest Drive" in reply, reply


def test_a_closing_thanks_after_an_answer_is_thanked_back(tau_api: Any) -> None:
    _, _, client = tau_api
    first, second = turns(client, "ethan_lopez_6291", "has the pet bed order shipped yet?",
                          "cool thx, thats all")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered" and "welcome" in reply.lower(), reply


def test_a_fallback_after_a_preference_picks_the_next_size_up(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_jackson_1214: #W6867036 (delivered) holds a white digital 10-inch wall clock; no white analog
    # one comes in 10 inches, the 12-inch one does ($191.55)
    status, reply = ask(client, "mei_jackson_1214",
                        "The clock in #W6867036 should really have been analog. Can it be swapped for a "
                        "white analog one? Ideally the same size, but if there isn't one, a bigger one will "
                        "do. Use PayPal for any difference.")
    assert status == "awaiting_confirmation", reply
    assert "12 inches" in reply and "191.55" in reply, reply


def test_a_colour_left_to_the_store_is_the_cheapest_one(tau_api: Any) -> None:
    _, _, client = tau_api
    # amelia_ito_8772: #W3733909 (delivered) holds a black mountain bike, medium frame; of the medium road
    # bikes the green one is the cheapest ($1917.21)
    status, reply = ask(client, "amelia_ito_8772",
                        "Please swap the bike from my order for the road version in the same frame size. Any "
                        "colour, whichever is cheaper.")
    assert status == "awaiting_confirmation", reply
    assert "#W3733909" in reply and "1917.21" in reply and "green" in reply, reply


def test_orders_not_going_to_the_accounts_address_are_listed_by_it(tau_api: Any) -> None:
    _, _, client = tau_api
    # ava_nguyen_6646: of six orders, three go to the account's address in San Francisco
    status, reply = ask(client, "ava_nguyen_6646", "which of my orders are not going to my home address?")
    assert status == "answered", reply
    for order_id in ("#W8367380", "#W6272294", "#W1242543"):
        assert order_id in reply, reply
    assert "#W9232383" not in reply and "#W8668939" not in reply, reply


def test_leaving_it_as_it_is_after_an_answer_changes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    first, second = turns(client, "ethan_lopez_6291", "where is order #W8073920 being shipped to?",
                          "ah ok thats my sisters place, leave it like that then")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered" and "haven't changed anything" in reply, reply


def test_a_statement_checked_then_agreed_to_proposes_no_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # fatima_nguyen_7539: #W8808563 (pending) goes to Pine Lane; the account's address is on Broadway
    first, second = turns(client, "fatima_nguyen_7539",
                          "#W8808563 ships to my Pine Lane address and not to Broadway, right?",
                          "great, thats right. and what's in that order again?")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered", reply
    assert "Bookshelf" in reply and "Change the shipping address" not in reply, reply


def test_an_answer_naming_one_of_two_items_is_read_before_the_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_rossi_8776: #W5918442 (pending) holds two silver Action Cameras, 5K and 4K; the 4K comes in
    # black (466.75)
    first, second = turns(client, "sofia_rossi_8776",
                          "please change the silver action camera in #W5918442 to black", "the 4K one")
    assert first["status"] == "needs_clarification", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "awaiting_confirmation", reply
    assert "(4K, waterproof: yes, silver) -> (4K, waterproof: yes, black)" in reply, reply
    assert "$466.75" in reply, reply


def test_one_more_return_asked_beside_a_proposed_one_is_proposed_with_it(tau_api: Any) -> None:
    _, _, client = tau_api
    # aarav_garcia_9402: the Jigsaw Puzzle in #W3038897 and the Running Shoes in #W7821216, both delivered
    first, second, third = turns(client, "aarav_garcia_9402", "I'd like to return the jigsaw puzzle",
                                 "can I send back the running shoes from my other order too?",
                                 "yes to both")
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "awaiting_confirmation", reply
    assert "Return from order #W7821216: Running Shoes" in reply and "#W3038897" in reply, reply
    done = third["reply"]["text"]
    assert "Return requested for order #W3038897" in done, done
    assert "Return requested for order #W7821216" in done, done


def test_a_cancellation_and_the_order_left_alone_in_one_clause(tau_api: Any) -> None:
    _, _, client = tau_api
    # fatima_anderson_2157: #W2974929 (pending: Skateboard) and #W4514908 (pending: ..., Digital Camera)
    status, reply = ask(client, "fatima_anderson_2157",
                        "i ordered the skateboard by mistake, pls cancel that order, dont touch the one "
                        "with the camera")
    assert status == "awaiting_confirmation", reply
    assert "Cancel order #W2974929" in reply and "#W4514908" not in reply, reply


def test_the_same_card_for_the_difference_keeps_no_option(tau_api: Any) -> None:
    _, _, client = tau_api
    # yusuf_taylor_7149: #W8268610 (pending) holds a white, high, USB Desk Lamp; in black and high it
    # comes only with an AC adapter (154.17)
    status, reply = ask(client, "yusuf_taylor_7149",
                        "change the desk lamp in #W8268610 to a black one with high brightness, charge the "
                        "difference to the same card")
    assert status == "awaiting_confirmation", reply
    assert "-> (black, high, AC adapter)" in reply and "$154.17" in reply, reply


def test_a_short_question_after_a_warranty_answer_asks_it_again(tau_api: Any) -> None:
    _, _, client = tau_api
    first, second = turns(client, "fatima_muller_6713", "how long is the backpack warranty?", "torn straps?")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered" and "2 years on zippers, seams and straps" in reply, reply


def test_the_email_and_the_address_asked_together_are_both_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ethan_lopez_6291",
                        "can you tell me the email and the address you have for me?")
    assert status == "answered", reply
    assert "ethan.lopez8943@example.com" in reply and "103 Hillcrest Drive" in reply, reply


def test_an_orders_status_and_total_asked_in_a_few_words_are_both_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ethan_lopez_6291", "#W6779827 status and total pls")
    assert status == "answered", reply
    assert "pending" in reply and "$4079.45" in reply, reply


def test_the_two_cancelled_ones_are_each_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_nguyen_6662: #W3906608 and #W9018868 are cancelled (1298.02 and 3446.44 refunded)
    first, second = turns(client, "emma_nguyen_6662", "where is #W3754544?",
                          "and the two cancelled ones - how much did i get refunded")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert second["status"] == "answered", reply
    assert "$1298.02" in reply and "$3446.44" in reply, reply


def test_what_an_item_of_the_order_just_talked_about_cost_is_its_line(tau_api: Any) -> None:
    _, _, client = tau_api
    # raj_davis_2615: #W5463717 holds Headphones at 344.55; the store sells them at other prices too
    first, second = turns(client, "raj_davis_2615", "which card paid for #W5463717?",
                          "and what did the headphones cost")
    assert first["status"] == "answered", first["reply"]["text"]
    reply = second["reply"]["text"]
    assert "$344.55" in reply and "#W5463717" in reply, reply


def test_an_order_the_customer_ships_somewhere_is_which_order_not_a_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_kim_7727: #W6443279 (pending) goes to New York, #W2493472 (pending) to Chicago
    status, reply = ask(client, "ivan_kim_7727",
                        "there's an order i ship to Chicago for my sister, what's in it?")
    assert status == "answered", reply
    assert "#W2493472" in reply and "Laptop" in reply and "#W6443279" not in reply, reply


def test_where_an_order_is_set_to_ship_is_told_and_the_profile_address_is_new(tau_api: Any) -> None:
    _, _, client = tau_api
    # yusuf_ahmed_6232: #W1302858 (pending) goes to 281 Pine Lane, Chicago; the account's address is
    # 409 Elm Street, Los Angeles
    status, reply = ask(client, "yusuf_ahmed_6232",
                        "order #W1302858 is set to ship to 281 Pine Lane in Chicago, please send it to the "
                        "address on my profile instead")
    assert status == "awaiting_confirmation", reply
    assert "to 409 Elm Street, Suite 697, Los Angeles, CA 91075, USA" in reply, reply


def test_an_item_described_by_its_options_picks_its_order_whatever_its_status(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_hernandez_5364: a blue M T-Shirt in #W9609649 (processed), a red L one in #W6876713 (delivered)
    status, reply = ask(client, "sofia_hernandez_5364",
                        "the blue medium t-shirt i got, could you make it a large?")
    assert "#W9609649" in reply and "#W6876713" not in reply, reply
    assert status != "awaiting_confirmation", reply


def test_whether_a_gift_card_covers_an_order_is_its_balance_beside_the_charge(tau_api: Any) -> None:
    _, _, client = tau_api
    # anya_garcia_3271: #W6436609 (pending, Laptop ...) was charged 3005.33; the gift card holds 51.00
    status, reply = ask(client, "anya_garcia_3271",
                        "does my gift card have enough on it to cover the laptop order?")
    assert status == "answered", reply
    assert "$3005.33" in reply and "$51.00" in reply, reply


def test_the_accounts_address_asked_to_become_where_an_order_ships_changes_no_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # yusuf_ahmed_6232: #W1302858 (pending) ships to 281 Pine Lane, Chicago; the account's address is
    # in Los Angeles
    status, reply = ask(client, "yusuf_ahmed_6232",
                        "please make my account's default address the one #W1302858 ships to. I don't want "
                        "any of my orders touched")
    assert status == "awaiting_confirmation", reply
    assert "Change your default address" in reply and "to 281 Pine Lane, Suite 115, Chicago" in reply, reply
    assert "Change the shipping address" not in reply, reply


def test_an_address_named_by_its_number_and_street_is_the_customers_own(tau_api: Any) -> None:
    _, _, client = tau_api
    # yusuf_ahmed_6232: #W1302858 (pending) goes to 281 Pine Lane, Chicago; the account's address is
    # 409 Elm Street, Suite 697, Los Angeles
    status, reply = ask(client, "yusuf_ahmed_6232",
                        "W1302858 is going to 281 pine?? should be my real place, 409 elm st. fix pls")
    assert status == "awaiting_confirmation", reply
    assert "to 409 Elm Street, Suite 697, Los Angeles, CA 91075, USA" in reply, reply


def test_the_shorter_of_two_items_is_returned_and_the_longer_kept(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_ahmed_4909: #W7553978 (delivered) holds a 28 inch and a 34 inch Skateboard
    status, reply = ask(client, "mei_ahmed_4909",
                        "got 2 skateboards in one order, i'll keep the longer one but the shorter one i want "
                        "to return. refund to my mastercard")
    assert status == "awaiting_confirmation", reply
    assert "length: 28 inch" in reply and "34 inch" not in reply, reply


def test_the_other_colours_asked_beside_the_one_bought_are_the_stores_range(tau_api: Any) -> None:
    _, _, client = tau_api
    # mason_li_6934: a black Desk Lamp in #W2392556; the lamp comes in black, silver and white
    status, reply = ask(client, "mason_li_6934",
                        "Hello, I have a black desk lamp on order and I'm wondering what other colours that "
                        "lamp comes in, in case my partner prefers something else. Thanks!")
    assert status == "answered", reply
    assert "silver" in reply and "white" in reply, reply
