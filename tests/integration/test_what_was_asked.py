"""Whether a customer asked for a change, asked about one, or kept what they have, read from their
words and their own orders, through the real HTTP API on the tau-retail store (issue 12): a change
asked after a comma, with a bare "fix it", or with the address written out is proposed; "please"
inside a question and "do you have ... in stock" ask for nothing; "everything pending except the
office chair" leaves the chair's order alone; "I still want it" keeps an order; a question before
the yes keeps the change proposed; an item's dimension asked of an order is that item's own line;
"what's in" and "the total on" orders answer each order; a customer's orders are all listed.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="asked")


@pytest.mark.parametrize(("customer", "text", "proposed"), [
    # a question opening after a comma
    ("sophia_nguyen_7885", "moving soon, can my phone order go to 500 N State St, Apt 4, Chicago IL 60654 "
                           "instead", "Change the shipping address of order #W4183735"),
    # a bare "fix it" after where the order should go
    ("mei_wilson_1792", "why is #W4498118 going to new york? i live in charlotte, it's the address on my "
                        "account. fix it", "Change the shipping address of order #W4498118"),
    # the new default address written out, as a statement
    ("sophia_nguyen_7885", "My new default address: 77 Lake Shore Dr, Apt 12, Chicago, IL 60611.",
     "Change your default address"),
    # Chinese "only want to return", the rest kept
    ("anya_silva_8688", "我只想退抓绒外套，拼图和哑铃留着，钱退回原来的卡。", "Fleece Jacket"),
    # Chinese "can it be changed to PayPal?" naming the order by its product and the new method
    ("liam_thomas_7882", "那个阅读器的订单能改成用PayPal付款吗？",
     "订单 #W1654931（$787.70）改用您的 PayPal 账户"),
])
def test_a_change_told_in_full_is_proposed(tau_api: Any, customer: str, text: str, proposed: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "awaiting_confirmation" and proposed in reply, reply
    assert "Jigsaw Puzzle" not in reply.splitlines()[0], reply  # (kept, in the Chinese return)


@pytest.mark.parametrize(("customer", "text", "answer"), [
    # "please" inside a question about a return's money
    ("anya_patel_3710", "if I send back the makeup kit from #W6131421, what would the refund be, please?",
     "256.14"),
    # "do you have ... in stock": the catalogue, not an exchange of the customer's own e-reader
    ("juan_kim_6026", "do you have the e-reader with cellular in stock right now?", "E-Reader"),
])
def test_a_question_about_a_change_proposes_nothing(tau_api: Any, customer: str, text: str,
                                                      answer: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered" and answer in reply, reply
    assert 'Reply "yes"' not in reply, reply


def test_everything_pending_except_one_product_is_every_other_pending_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given three pending orders, one of them holding only the office chair
    status, reply = ask(client, "ivan_santos_6635", "please cancel all my pending orders except the one "
                                                    "with the office chair, bought them by mistake")
    # Then the two others are proposed for cancellation, and the chair's is left alone
    assert status == "awaiting_confirmation", reply
    assert "Cancel order #W5183325" in reply and "Cancel order #W3913498" in reply, reply
    assert "Cancel order #W8770097" not in reply, reply


@pytest.mark.parametrize(("customer", "text", "proposed"), [
    # two pending orders paid alike, moved to the customer's other method
    ("harper_santos_8115", "my two orders that haven't shipped went on paypal, could you move both of them "
                           "onto my credit card instead?",
     ["Pay order #W6629830 ($3997.94) with your Visa ending 8643", "Pay order #W4941028"]),
    # Chinese: "both orders not shipped yet" with words between the count and the noun
    ("fatima_johnson_7581", "两个还没发货的订单都帮我改寄到这个地址：2500 Broadway, Apt 12, San Antonio, "
                            "TX 78215",
     ["将订单 #W5199551 的收货地址", "将订单 #W8665881 的收货地址"]),
])
def test_a_whole_order_change_asked_of_both_orders_is_proposed_for_each(
        tau_api: Any, customer: str, text: str, proposed: list[str]) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "awaiting_confirmation" and all(p in reply for p in proposed), reply


@pytest.mark.parametrize(("customer", "text", "cancelled", "kept"), [
    # one verb for two orders, each named by its product, a third kept as it is
    ("evelyn_ahmed_3960", "pls cancel my makeup kit order and the skateboard order, dont need them "
                          "anymore. keep the bookshelf order as is though",
     ("#W3746173", "#W4423731"), "#W1416704"),
    # what follows "but" is kept, not the order meant
    ("fatima_li_5040", "no longer need the laptop so cancel that order, but leave the headphones order "
                       "alone", ("#W3510092",), "#W4155745"),
])
def test_orders_kept_as_they_are_are_not_cancelled(tau_api: Any, customer: str, text: str,
                                                   cancelled: tuple[str, ...], kept: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "awaiting_confirmation", reply
    assert all(f"Cancel order {order_id}" in reply for order_id in cancelled), reply
    assert kept not in reply, reply


def test_i_still_want_it_keeps_the_order_and_its_new_address_is_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "chen_anderson_8078", "don't cancel #W1348788, I still want it. Please "
                                                      "ship it to 9 Oak Street, Apt 1, Columbus, OH 43215 "
                                                      "instead.")
    assert status == "awaiting_confirmation", reply
    assert "Change the shipping address of order #W1348788" in reply, reply
    assert "Before I cancel" not in reply and "Cancel order" not in reply, reply


def test_making_the_written_address_the_default_changes_no_order(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "aarav_lee_1982", "I've moved to 12 Birch Lane, Apt 2, Austin, TX 78701. "
                                                  "Please make that my default address. Is my tablet order "
                                                  "going there?")
    assert status == "awaiting_confirmation", reply
    assert "to 12 Birch Lane, Apt 2, Austin, TX 78701" in reply, reply
    assert "Change the shipping address" not in reply, reply


def test_a_question_before_the_yes_keeps_the_change_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"asked-{uuid.uuid4().hex[:8]}"
    # Given a proposed change of the yellow running shoes to black ones
    status, reply = ask(client, "harper_ito_4653", "can I get my yellow running shoes swapped for black "
                                                   "ones, same size? paypal for any difference", session)
    assert status == "awaiting_confirmation" and "(9, black, synthetic, rubber)" in reply, reply
    # When the customer asks a question before saying yes
    status, reply = ask(client, "harper_ito_4653", "hang on, is the black pair more expensive?", session)
    # Then the change still waits, put again
    assert status == "awaiting_confirmation", reply
    assert "still waiting for your yes" in reply and "#W1941216" in reply, reply
    # And a yes then makes it
    status, reply = ask(client, "harper_ito_4653", "ok go ahead", session)
    assert status == "answered" and "are modified" in reply, reply


def test_a_no_after_a_question_about_the_proposal_calls_it_off(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"asked-{uuid.uuid4().hex[:8]}"
    # Given a proposed cancellation of an order that also holds a kettle and a keyboard
    status, reply = ask(client, "omar_silva_9907", "cancel the order with the running shoes, dont need it "
                                                   "anymore", session)
    assert status == "awaiting_confirmation" and "Cancel order #W6151519" in reply, reply
    # When the customer asks about those items and says no in the same message
    status, reply = ask(client, "omar_silva_9907", "hold on, that would cancel the kettle and the keyboard "
                                                   "as well?? nah, leave it as it is", session)
    # Then nothing is changed, and nothing waits for a yes
    assert status == "answered" and "haven't changed anything" in reply, reply


def test_a_return_narrowed_at_confirmation_keeps_the_item_named_by_its_last_word(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"asked-{uuid.uuid4().hex[:8]}"
    # Given a proposed return of a yoga mat and an office chair
    status, reply = ask(client, "mia_johansson_7000", "i'd like to return the yoga mat and the office chair "
                                                      "from my last delivery, refund to my card", session)
    assert status == "awaiting_confirmation" and "Yoga Mat" in reply and "Office Chair" in reply, reply
    # When the customer keeps "the mat" (a word of several products' names, one of this order's)
    status, reply = ask(client, "mia_johansson_7000", "hmm actually just the chair please, the mat I'll keep",
                        session)
    # Then the return is proposed again with the chair alone
    assert status == "awaiting_confirmation", reply
    assert "Return from order #W8346517: Office Chair" in reply, reply


def test_one_of_two_alike_items_sent_back_is_asked_which(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given an order with two smart watches, and "one of my smart watches ... send it back" ("at all"
    # counting nothing)
    status, reply = ask(client, "amelia_patel_7834", "one of my smart watches stopped charging at all, so "
                                                     "I'd like to send it back")
    # Then which one is asked, and neither is proposed
    assert status == "needs_clarification", reply
    assert "Smart Watch (silver, leather, AMOLED)" in reply, reply
    assert "Smart Watch (black, leather, AMOLED)" in reply, reply
    assert 'Reply "yes"' not in reply, reply


@pytest.mark.parametrize(("customer", "text", "facts"), [
    # where a return's money would go and when, asked before any return
    ("amelia_nguyen_7748", "if I sent the smart watch back, would the money go to my paypal? and how long "
                           "would that take?",
     ["refund would go back to your PayPal within 5 to 7 business days", "$339.85"]),
    # Chinese: a cancellation put as a condition ("要是..."), the question after its comma
    ("ivan_santos_7021", "要是把茶壶那个订单取消了，能退多少钱？",
     ["如果取消订单 #W5801125，$109.58 将退回"]),
])
def test_what_a_change_would_refund_is_answered_without_proposing_it(tau_api: Any, customer: str,
                                                                      text: str, facts: list[str]) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered" and all(fact in reply for fact in facts), reply


@pytest.mark.parametrize(("customer", "text", "facts", "not_said"), [
    # a dimension asked of the item in the order named
    ("sophia_patel_6833", "how much storage does the laptop in #W2923184 have?", ["1TB SSD"], "17 versions"),
    # a dimension asked of the item received, of two orders holding a tablet
    ("yusuf_gonzalez_8900", "the tablet i already received, what screen size is it?", ["7-inch"],
     "Which one do you mean"),
    # what the one order not shipped holds, and its total
    ("sofia_ito_5484", "what does my order that hasn't shipped contain and how much was it altogether?",
     ["Smart Watch", "424.83"], "Here are your orders"),
    # the total of each order not shipped
    ("mia_jackson_5377", "how much are my unshipped orders in total?", ["416.98", "1377.82"],
     "Here are your orders"),
    # every one of seven orders
    ("emma_santos_9753", "list all my orders please", ["#W1620235", "#W8160318", "#W3113816"], "more"),
])
def test_what_the_orders_hold_is_answered_from_them(tau_api: Any, customer: str, text: str,
                                                      facts: list[str], not_said: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered", reply
    assert all(f in reply for f in facts) and not_said not in reply, reply


@pytest.mark.parametrize(("customer", "text", "returned", "kept"), [
    # "everything else in that box stays": the rest of the order kept, the shoes returned
    ("aarav_garcia_9402", "the running shoes from my espresso machine order don't fit. can I send only the "
                          "shoes back? refund to my mastercard, everything else in that box stays",
     "Running Shoes", "Espresso Machine"),
    # "kettle" names two products of the order; "plastic" and "silver" say which
    ("daiki_patel_5953", "please return my plastic kettle, the silver one, money back to paypal",
     "Electric Kettle", "Tea Kettle"),
])
def test_the_items_returned_are_those_the_words_pick(tau_api: Any, customer: str, text: str, returned: str,
                                                      kept: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    proposal = reply.splitlines()[0]
    assert status == "awaiting_confirmation" and proposal.startswith("Return from order"), reply
    assert returned in proposal and kept not in proposal, reply


@pytest.mark.parametrize("text", [
    "I ordered the garden hose twice by mistake. Cancel one, please",
    "my order has 2 garden hoses, I only need one. drop one of them",
])
def test_taking_one_of_two_items_off_is_the_whole_order_rule_not_a_cancellation(tau_api: Any,
                                                                                 text: str) -> None:
    _, _, client = tau_api
    # Given a pending order of two garden hoses
    status, reply = ask(client, "liam_lee_5696", text)
    # Then the rule is said, and no cancellation of the whole order is proposed
    assert status == "answered" and "whole order" in reply, reply
    assert "Cancel order" not in reply, reply


@pytest.mark.parametrize(("customer", "text", "proposed"), [
    # a product the order holds twice names the order, not one of its items
    ("amelia_kim_4338", "please cancel my tea kettle order, I no longer need it", "Cancel order #W7634667"),
    # asking leave politely, "please" at the end
    ("evelyn_ito_7643", "Could I pay for the backpack order with my PayPal instead, please?",
     "Pay order #W6207110"),
    # "my own place", said in a sentence of its own to be the account's address
    ("olivia_lopez_9494", "the smart watch order shouldn't go to Houston. Can you ship it to my own place? "
                          "That's the default address on my account.",
     "Change the shipping address of order #W8955613 from 200 Elm Street"),
])
def test_a_change_asked_in_other_words_is_proposed(tau_api: Any, customer: str, text: str,
                                                    proposed: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "awaiting_confirmation" and proposed in reply, reply


def test_an_exchange_asked_by_its_verb_is_never_proposed_as_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # When a delivered order's item is to be exchanged, the new option not yet said
    status, reply = ask(client, "mia_johansson_7000", "#W8346517 I wanna exchange the office chair")
    # Then what it should become is asked; no return is proposed
    assert status == "needs_clarification" and "Office Chair" in reply, reply
    assert "Return from order" not in reply, reply


def test_asking_to_have_the_address_checked_proposes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    text = ("I just want to double check my yoga mat order is going to Park Avenue in Houston and not to "
            "my LA address?")
    status, reply = ask(client, "harper_thomas_9402", text)
    assert status == "answered" and "426 Park Avenue" in reply, reply
    assert "Change the shipping address" not in reply, reply


@pytest.mark.parametrize(("customer", "text", "said"), [
    # a subject that counts nothing negates "shipped": the pending ones
    ("yusuf_khan_7091", "none of my orders have shipped, what's going on?",
     ["#W1787190", "#W3579467", "pending"]),
    # a product bought and a status word: its order's status, not the store's rules about it
    ("juan_santos_1448", "air purifier delivered?", ["#W2582045", "delivered"]),
])
def test_a_status_asked_of_the_customers_own_orders_is_answered(tau_api: Any, customer: str, text: str,
                                                                 said: list[str]) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered" and all(s in reply for s in said), reply


def test_the_item_change_asked_beside_how_its_difference_is_paid_is_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # When the wish, the reason and how the difference is paid are each a sentence of their own
    text = ("The kettle I ordered is the white 1L plastic one, it is too small for us. I want change to the "
            "1.5L, black, plastic. Pay difference with paypal.")
    status, reply = ask(client, "evelyn_kovacs_6742", text)
    # Then the item change is proposed, the payment sentence paying for it (no payment change)
    assert status == "awaiting_confirmation", reply
    assert "Modify the items of order #W6689278" in reply and "1.5L" in reply, reply
    assert "Pay order" not in reply, reply


def test_money_back_asked_for_a_broken_delivered_item_proposes_its_return(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "juan_santos_1448", "The air purifier you sent me rattles like crazy. Ugh. "
                                                    "I just want my money back for it.")
    assert status == "awaiting_confirmation" and "Return from order #W2582045" in reply, reply


@pytest.mark.parametrize(("customer", "text", "said"), [
    # a product put into the one pending order, the verb bare
    ("ethan_smith_7905", "add a desk lamp to my order pls", "products cannot be added"),
    # inside a sentence about the order, "one more" of what it holds
    ("ava_moore_4814", "My order with the backpack hasn't shipped. I'd like to add one more tablet.",
     "products cannot be added"),
    # an item told by its option taken out of the order named
    ("aarav_santos_2259", "please take the 17-inch one out of #W9672333",
     "individual items cannot be cancelled"),
])
def test_an_item_put_into_or_taken_out_of_an_order_gets_the_rule(tau_api: Any, customer: str, text: str,
                                                                 said: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered" and said in reply, reply


def test_the_product_named_again_as_what_the_item_becomes_is_its_wish(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a delivered order with two cycling helmets, a red M and a blue L
    text = ("I'd like to exchange the red M helmet for the same helmet in white, low ventilation. "
            "The blue one is fine.")
    status, reply = ask(client, "yusuf_johnson_8087", text)
    # Then the red one is exchanged for the white M, and nothing is asked of the blue one
    assert status == "awaiting_confirmation", reply
    assert "Exchange in order #W6735441: Cycling Helmet (M, red, low) -> (M, white, low)" in reply, reply


def test_a_change_naming_only_the_option_to_change_asks_which_value_is_wanted(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"asked-{uuid.uuid4().hex[:8]}"
    # When the customer wants another colour of their red S tee, the size kept
    text = "my t-shirt order: can I get the tee in a different colour? same size"
    status, reply = ask(client, "olivia_khan_9030", text, session)
    # Then the colours available in that size are offered
    assert status == "needs_clarification", reply
    assert "Which color would you like the T-Shirt in: black, blue or purple?" in reply, reply
    # And the colour chosen is proposed in that size
    status, reply = ask(client, "olivia_khan_9030", "purple please", session)
    assert status == "awaiting_confirmation" and "-> (purple, S," in reply, reply


def test_one_of_two_identical_items_is_returned_when_only_one_is_meant(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a delivered order holding two identical tea kettles
    text = "#W4316152 came with two of the same tea kettles and I only want one. please return the extra one"
    status, reply = ask(client, "aarav_anderson_8794", text)
    # Then one kettle is returned, not both
    assert status == "awaiting_confirmation" and "Return from order #W4316152" in reply, reply
    assert reply.count("Tea Kettle") == 1, reply


def test_a_chinese_cancellation_ruled_out_beside_an_address_change_is_not_asked_for(tau_api: Any) -> None:
    _, _, client = tau_api
    # When the customer says not to cancel, only to send the order elsewhere
    text = "手机那个订单别取消，就是收货地址改成 2500 Broadway, Apt 12, San Antonio, TX 78215。"
    status, reply = ask(client, "sophia_nguyen_7885", text)
    # Then the address change is proposed, and no cancellation reason asked
    assert status == "awaiting_confirmation" and "将订单 #W4183735 的收货地址" in reply, reply
    assert "原因" not in reply and "取消订单" not in reply, reply


def test_a_question_naming_an_orders_option_beside_another_question_proposes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer whose delivered order holds a black Wall Clock and whose processed one a white
    # one, asking (with a misspelt "how") their gift card balance and whether the white clock has gone
    status, reply = ask(client, "lei_hernandez_8500", "hw much do i have on my gift card, and has the white "
                                                      "clock gone out yet")
    # Then both are answered, and no exchange to a white clock is proposed
    assert status == "answered", reply
    assert "#W3101067" in reply and "Exchange" not in reply, reply


@pytest.mark.parametrize("text", [
    # the order's Electric Kettle named by another product's name, the Tea Kettle
    "could I trade the tea kettle I got in #W8864622 for some sunglasses, please?",
    "#W8864622: please swap the kettle for a backpack",
])
def test_an_item_for_another_product_gets_the_exchange_rule(tau_api: Any, text: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "mohamed_li_1979", text)
    # Then the store's rule (one product type is not exchanged for another), nothing asked or proposed
    assert status == "answered", reply
    assert "one product type for another" in reply, reply


def test_an_answer_that_only_weighs_the_request_gets_its_facts_not_a_proposal(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"asked-{uuid.uuid4().hex[:8]}"
    # Given a return asked for with no item, and the customer's two delivered orders asked back
    status, reply = ask(client, "olivia_brown_4616", "i want to return something i bought", session)
    assert status == "needs_clarification", reply
    # When the answer names the item but holds the decision back
    status, reply = ask(client, "olivia_brown_4616", "the white helmet. I haven't decided yet, what would "
                                                     "the refund be?", session)
    # Then the order's return facts answer it; nothing is proposed
    assert status == "answered", reply
    assert "#W8033354" in reply and "194.47" in reply, reply


def test_an_address_change_asked_as_a_question_with_the_address_after_it_is_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "can I change ... to my office?" and the full address in the next sentence
    status, reply = ask(client, "sofia_moore_9773", "can i change the delivery address on #W1812830 to my "
                                                    "office? 12 Main St, Springfield, IL 62704")
    # Then the change is proposed (the address written out says what it should become)
    assert status == "awaiting_confirmation", reply
    assert "Change the shipping address of order #W1812830" in reply and "12 Main St" in reply, reply
