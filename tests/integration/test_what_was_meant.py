"""What a customer meant, read from their own orders, through the real HTTP API on the tau-retail
store (issue 12): a warranty question after a statement of what happened asks about that product;
"cancel one of them and keep the other" asks for part of an order; "like the red one" in an item
change names the item as it is; a price seen at another shop, or a question about the store's
products, is no item change; "diff back to my card" is where an exchange's difference goes; "aint
shipped" is not shipped; "also the backpack" widens a proposed return; an order id with its items
in brackets is the whole order; where an order goes now says which order it is; a yes to "which
order?" is asked again; an order is never moved to where it already goes; a statement that tells
more of a complaint asks no question of which order."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="meant")


def test_a_warranty_question_after_what_happened_is_about_that_product(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer whose bike is in a pending order and whose cycling helmet was delivered
    status, reply = ask(client, "olivia_smith_8953", "I came off my bike on Sunday and my cycling helmet "
                                                     "hit the road. Is that covered by the warranty?")
    # Then the helmet's warranty terms answer, not the status of the bike's order
    assert status == "answered", reply
    assert "Cycling Helmet: 1 year" in reply and "#W1348609" not in reply, reply


def test_cancelling_one_of_two_items_and_keeping_the_other_is_the_rule(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "liam_lee_5696",
                        "there are 2 garden hoses in W7208030, can you cancel one of them "
                        "and keep the other?")
    assert status == "answered", reply
    assert "whole order" in reply and "Cancel order" not in reply, reply


def test_like_the_red_one_names_the_item_as_it_is_not_the_wish(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "daiki_silva_2903",
                        "the red tee in my order with the gaming mouse: could it be black instead? "
                        "XXL cotton crew neck like the red one. Use my gift card for any extra.")
    assert status == "awaiting_confirmation", reply
    assert "(black, XXL, cotton, crew neck)" in reply and "$53.27" in reply, reply


@pytest.mark.parametrize(("customer", "text"), [
    # a price seen at another shop, with money asked back
    ("noah_hernandez_4232",
     "The e-reader I ordered is $20 cheaper somewhere else. Refund me the difference."),
    # the store's products asked about, beside a story naming an option
    ("juan_smith_9901", "My mum has an induction hob and I'm thinking of getting her a tea kettle. Which "
                        "stovetop types do your tea kettles come in, please?"),
])
def test_a_question_or_another_shops_price_proposes_no_item_change(tau_api: Any, customer: str,
                                                                   text: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status != "awaiting_confirmation", reply
    assert "Modify the items" not in reply and "Exchange in order" not in reply, reply


def test_the_difference_sent_back_to_a_card_is_the_exchanges_not_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "liam_muller_2178",
                        "my blue earbuds last 4 hrs. can i swap em for the 8 hour IPX4 ones? "
                        "diff back to my card")
    assert status == "awaiting_confirmation", reply
    assert "Exchange in order #W9827806" in reply and "Return from" not in reply and "$226.49" in reply, reply


def test_aint_shipped_is_the_order_not_shipped(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given sunglasses in a pending and in a delivered order
    status, reply = ask(client, "amelia_patel_7834",
                        "the order w my sunglasses that aint shipped, where's it goin")
    assert status == "answered", reply
    assert "#W2079779" in reply and "985 Pine Lane" in reply and "#W6497157" not in reply, reply


def test_also_another_item_widens_the_proposed_return(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"meant-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "mei_jackson_1214", "return the wall clock", session)
    assert status == "awaiting_confirmation" and "Backpack" not in reply, reply
    status, reply = ask(client, "mei_jackson_1214", "also the backpack from that order", session)
    assert status == "awaiting_confirmation", reply
    proposal = reply.split("\n")[-1]
    assert "Wall Clock" in proposal and "Backpack" in proposal and "$393.59" in proposal, reply


def test_an_order_id_with_its_items_in_brackets_is_the_whole_order(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "sophia_thomas_5301",
                        "pls cancel #W4862767 (bookshelf + 2 office chairs). ordered by mistake")
    assert status == "awaiting_confirmation", reply
    assert "Cancel order #W4862767" in reply and "Tablet" in reply, reply


def test_where_an_order_goes_now_says_which_order_it_is(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given two pending orders, one going to Pine Lane and one to Broadway
    status, reply = ask(client, "fatima_nguyen_7539",
                        "one of my orders is heading to my old place on Pine Lane. "
                        "Please send it to 55 Birch Road, Apt 4, San Antonio TX 78210")
    # Then the Pine Lane order is the one proposed, without asking which
    assert status == "awaiting_confirmation", reply
    assert "order #W8808563 from 310 Pine Lane" in reply and "#W2904339" not in reply, reply


def test_a_yes_to_which_order_asks_again_and_never_refuses(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"meant-{uuid.uuid4().hex[:8]}"
    status, first = ask(client, "mia_nguyen_6399", "please send my order to 55 Birch Road, Apt 4, "
                                                   "San Antonio TX 78210", session)
    assert status == "needs_clarification", first
    status, again = ask(client, "mia_nguyen_6399", "Yes perfect, please do that!", session)
    assert status == "needs_clarification", again
    assert "#W4657527" in again and "#W7259788" in again and "[withheld]" not in again, again


def test_an_order_is_never_moved_to_where_it_already_goes(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given #W2904339, which already ships to 592 Broadway
    status, reply = ask(client, "fatima_nguyen_7539",
                        "send #W2904339 to 592 Broadway, Suite 330, Columbus OH 43211")
    assert status != "awaiting_confirmation", reply
    assert "already ships to 592 Broadway" in reply, reply


def test_a_statement_telling_more_of_a_complaint_asks_no_question_of_which_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a delivered red v-neck t-shirt, and another t-shirt order on its way
    status, reply = ask(client, "sofia_hernandez_5364", "the red t-shirt you sent me is a V-neck. I did not "
                                                        "order a v-neck!")
    assert status == "answered", reply
    assert "#W6876713" in reply and "Which one do you mean" not in reply, reply


def test_change_it_after_an_orders_address_was_told_is_that_orders_address(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"meant-{uuid.uuid4().hex[:8]}"
    # Given a customer told where their shipped order #W4744949 goes
    status, reply = ask(client, "mia_smith_1623", "where is order #W4744949 going?", session)
    assert status == "answered" and "817 Spruce Street" in reply, reply
    # When they ask to change "it" to their current address
    status, reply = ask(client, "mia_smith_1623",
                        "that's my old flat! change it to my current address please", session)
    # Then the rule for a shipped order answers at once (no address asked for, no account change)
    assert "can no longer be changed" in reply and "#W4744949" in reply, reply
    assert "Please send the full new address" not in reply and "default address from" not in reply, reply


def test_that_whole_order_is_the_order_the_clause_before_found(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ava_lopez_2676",
                        "where is the order with the white on-ear headphones going, "
                        "and how much was that whole order?")
    assert status == "answered", reply
    assert "$3844.86" in reply and "You have spent" not in reply, reply


def test_the_status_after_a_contrast_says_which_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given two smart watch orders, one delivered and one on its way
    status, reply = ask(client, "noah_khan_5763",
                        "one of my smart watches came ages ago but I'm still waiting for the other one. "
                        "tracking number?")
    assert status == "answered", reply
    assert "950423356222" in reply, reply


def test_an_opened_perfume_asked_about_in_chinese_is_the_unopened_rule_and_the_tablet_is_its_own_return(
        tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"meant-{uuid.uuid4().hex[:8]}"
    # Given "the perfume in my order has been opened and used, can I still return it?"
    status, reply = ask(client, "isabella_brown_3584", "我订单里的香水已经拆开用过了，还能退吗？", session)
    assert status == "answered" and "unopened" in reply, reply
    # When "then can the tablet in the same order go back? refund to PayPal"
    tablet_back = "好吧。那同一个订单里的平板电脑可以退吗？退款退回PayPal。"
    status, reply = ask(client, "isabella_brown_3584", tablet_back, session)
    # Then the tablet's return is proposed, not the perfume's
    assert status == "awaiting_confirmation", reply
    assert "Tablet" in reply and "$951.21" in reply and "Perfume (" not in reply, reply


@pytest.mark.parametrize(("customer", "text", "rule"), [
    # washed clothing is not taken back (returns page, "Condition of returned items")
    ("fatima_johnson_7581",
     "my blue t-shirt shrank the first time I washed it, I want to return it for a refund",
     "washed or altered are not accepted"),
    # a makeup kit asked about before it is opened, as a condition
    ("mia_davis_8827", "if I open the makeup kit and the shade is wrong, can I still send it back?",
     "only be returned unopened"),
])
def test_a_return_the_store_does_not_take_is_the_rule_not_a_proposal(tau_api: Any, customer: str,
                                                                      text: str, rule: str) -> None:
    _, _, client = tau_api
    status, reply = ask(client, customer, text)
    assert status == "answered", reply
    assert rule in reply and "Return from order" not in reply, reply


def test_an_address_abroad_is_the_us_only_rule_at_once(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "noah_martin_5764",
                        "we're moving to Vancouver, Canada. can my laptop order go there instead "
                        "if it hasn't shipped?")
    assert status == "answered", reply
    assert "United States" in reply and "Please send the full new address" not in reply, reply


def test_it_after_an_order_found_by_its_products_is_that_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given an E-Reader in a shipped order to New York and in a pending order to Los Angeles
    status, reply = ask(client, "yusuf_li_7255",
                        "my order with the e-reader and the running shoes is going to New York, "
                        "that's wrong. switch it to my LA place")
    # Then the shipped order is the one meant, and its rule answers
    assert "#W3407479" in reply and "can no longer be changed" in reply, reply
    assert "#W6750959" not in reply, reply


def test_a_statement_naming_a_place_proposes_nothing_and_a_polite_ask_does(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "if it says New York, that's a mistake, I live in Chicago": a condition told, nothing asked
    status, reply = ask(client, "ivan_kim_7727",
                        "Where is order #W6443279 going? If it says New York, that's a mistake, "
                        "I live in Chicago.")
    assert status != "awaiting_confirmation" and "Change the shipping address" not in reply, reply
    # And "would it be possible to pay ... with my Mastercard instead?" is a request, put politely
    status, reply = ask(client, "mia_moore_8366",
                        "Would it be possible to pay for my pending order with my Mastercard "
                        "instead of the gift card?")
    assert status == "awaiting_confirmation" and "with your Mastercard" in reply, reply
