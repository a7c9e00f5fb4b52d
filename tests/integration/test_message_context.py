"""What one clause of a message lends the others, through the real HTTP API on the tau-retail store
(issue 12): a product named in one clause is what "that", "it" and "them" ask about in the next; a
status told in one clause picks the order another clause asks about; questions after a change put
as a condition ask what would come of it; Chinese, which marks no plural, asks about several orders
by their number."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import say

pytestmark = pytest.mark.integration

CHAIR_OWNER = "olivia_smith_5265"  # one Office Chair, in delivered #W5202795
LAMP_OWNER = "noah_patel_1311"  # Desk Lamps in delivered #W9784474 and cancelled #W1659844 ($203.54 refunded)
TWO_CANCELLED = "noah_patel_6952"  # cancelled #W7043598 ($3420.45) and #W6111398 ($818.31), to PayPal
CARD_OWNER = "sofia_rossi_8776"  # pending #W2818151, $1068.63 paid by Mastercard ending 3357


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, prefix="ctx")


def test_a_warranty_question_pointing_back_is_about_the_product_named_before(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer who tells of their chair, then asks "is that under warranty?"
    status, reply = ask(client, CHAIR_OWNER, "The office chair I got from you creaks when I lean back. "
                                             "Is that under warranty?")
    # Then the chair's own warranty terms answer, not the general warranty page
    assert status == "answered", reply
    assert "Office Chair: 2 years" in reply, reply


def test_a_coverage_question_about_a_fault_is_answered_by_the_product_s_own_terms(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a leaking water bottle ("leaks" and "water" also fit another category's terms: "water damage")
    status, reply = ask(client, "yusuf_lee_5921", "the lid on my water bottle leaks a bit now. would your "
                                                  "warranty cover that?")
    # Then the bottle's own warranty terms answer
    assert status == "answered", reply
    assert "Water Bottle: 1 year against leaks" in reply, reply


def test_a_cancellation_told_picks_the_cancelled_order_for_the_refund_question(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given desk lamps in a delivered and a cancelled order, and "I had cancelled my desk lamp order"
    status, reply = ask(client, LAMP_OWNER, "I had cancelled my desk lamp order, was that money refunded?")
    # Then the cancelled order's refund answers, without asking which order
    assert status == "answered", reply
    assert "#W1659844" in reply and "$203.54" in reply and "#W9784474" not in reply, reply


def test_two_cancelled_orders_asked_about_in_chinese_are_each_answered(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "how much did each of my two cancelled orders refund?"
    status, reply = ask(client, TWO_CANCELLED, "我取消的两个订单分别退了多少钱？")
    # Then both refunds are told, not a question back
    assert status == "answered", reply
    assert "$3420.45" in reply and "$818.31" in reply, reply


def test_what_a_cancellation_put_as_a_condition_would_refund_is_told_not_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "say I cancelled it, what would I get back and when?"
    status, reply = ask(client, CARD_OWNER, "Say I cancelled #W2818151, what would I get back and when?")
    # Then the amount, where it would go and when come back, and nothing is proposed
    assert status == "answered", reply
    assert "If you cancelled order #W2818151, $1068.63 would go back to your Mastercard ending 3357 " \
           "within 5 to 7 business days." in reply, reply


def test_an_option_asked_of_the_product_the_conversation_is_about_narrows_its_versions(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"ctx-{uuid.uuid4().hex[:8]}"
    # Given an answer about the largest water bottle
    first = say(client, CHAIR_OWNER, session, "What's the largest water bottle you have?")
    assert "Water Bottle" in first["reply"]["text"], first
    # When the customer asks "is that size in stock in stainless steel?"
    body = say(client, CHAIR_OWNER, session, "is that size in stock in stainless steel?")
    # Then the stainless steel versions of the Water Bottle answer, not "say it another way"
    reply = body["reply"]["text"]
    assert body["status"] == "answered", reply
    assert "the Water Bottle in stainless steel is available" in reply, reply
    assert "1000ml / stainless steel / black" in reply, reply


def test_an_option_named_with_its_dimension_word_is_that_version_in_the_next_clause_too(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "cellular connectivity" (the dimension's word beside part of its value) and a price asked
    # of "those" in the next clause
    status, reply = ask(client, CHAIR_OWNER, "any e-readers with cellular connectivity available? "
                                             "what do those go for?")
    # Then the cellular versions in stock answer both, not the dimension's values nor every price
    assert status == "answered", reply
    assert "Wi-Fi + Cellular / 32GB at $244.95" in reply and "$267.58" in reply, reply
    assert "connectivity options" not in reply and "$243.40" not in reply, reply


def test_a_statement_names_what_the_question_after_it_asks_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a statement naming the desk lamp (in a delivered and a cancelled order of the customer's),
    # read as being about those orders, and a catalogue question about "it" after it
    status, reply = ask(client, LAMP_OWNER, "I got a desk lamp from you a while back. which colours can "
                                            "I get it in?")
    # Then the lamp's colours answer, however many lookups the statement asked for
    assert status == "answered", reply
    assert "The Desk Lamp comes with these color options: black, silver and white." in reply, reply


def test_a_product_named_twice_in_one_question_is_one_product_whose_documents_answer(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a question naming the Espresso Machine twice ("espresso", "espresso machine")
    status, reply = ask(client, CHAIR_OWNER, "How much ground coffee goes into a double espresso "
                                             "with your espresso machine?")
    # Then the machine's user guide answers, as for a product named once
    assert status == "answered", reply
    assert "18 grams" in reply and "Espresso Machine user guide" in reply, reply


def test_a_question_put_after_a_time_clause_in_general_terms_is_answered_without_asking_for_an_order(
        tau_api: Any) -> None:
    _, _, client = tau_api
    # Given "when I cancel an order paid with PayPal, how long until the money is back?" from a
    # customer with several orders
    status, reply = ask(client, TWO_CANCELLED, "When I cancel an order paid with PayPal, how many days "
                                               "until I get the money back?")
    # Then the store's refund times answer it, with no question about which order
    assert status == "answered", reply
    assert "5 to 7" in reply and "Which order" not in reply, reply


@pytest.mark.parametrize("text", ["can I cancel #W2818151? I don't need it anymore",
                                  "could you cancel #W2818151 for me, I bought it by mistake"])
def test_a_cancellation_asked_with_its_reason_is_proposed(tau_api: Any, text: str) -> None:
    _, _, client = tau_api
    # Given a question whether the order can be cancelled, with why the customer wants it cancelled
    body = say(client, CARD_OWNER, f"ctx-{uuid.uuid4().hex[:8]}", text)
    # Then the cancellation is proposed for confirmation, with the reason given
    assert body["status"] == "awaiting_confirmation", body["reply"]["text"]
    assert [t["task_type"] for t in body["tasks"]] == ["cancel_order"], body
    assert "Reason: " in body["reply"]["text"], body["reply"]["text"]


def test_a_question_whether_an_order_can_be_cancelled_alone_is_answered_not_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given the question alone, with no reason and no request
    body = say(client, CARD_OWNER, f"ctx-{uuid.uuid4().hex[:8]}", "can I still cancel #W2818151?")
    # Then whether it can be is answered, and nothing is proposed
    assert body["status"] == "answered", body["reply"]["text"]
    assert "can be cancelled" in body["reply"]["text"], body["reply"]["text"]


def test_what_the_store_has_is_asked_of_the_catalogue_not_of_the_customers_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a customer who bought a blue S t-shirt
    # When they ask which t-shirts the store has now
    status, reply = ask(client, "amelia_gonzalez_4098", "what t-shirt in size M you got at the moment?")
    # Then the catalogue answers, not their own order's line
    assert status == "answered" and "T-Shirt" in reply and "Yours, from order" not in reply, reply


def test_a_question_naming_no_product_after_one_about_a_product_asks_of_it(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a question about the customer's headphones, then one that names nothing
    text = ("about the headphones I got from you: do they fold up for travel? and how many hours does the "
            "battery last?")
    status, reply = ask(client, "amelia_nguyen_5209", text)
    # Then the second is about the headphones too (their guide's battery line), not a failed lookup
    assert status == "answered" and "30 hours" in reply, reply


def test_a_bare_order_id_after_a_tracking_question_asks_it_of_that_order(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"ctx-{uuid.uuid4().hex[:8]}"
    # Given a tracking question about one of two orders on their way
    first = say(client, "harper_ito_5985", session, "tracking for #W3137176 please")
    assert "447687149450" in first["reply"]["text"], first
    # When the next message is only "and" with the other order's id
    second = say(client, "harper_ito_5985", session, "and #W5367110")
    # Then that order's tracking number answers it, as the question was
    assert second["status"] == "answered" and "152028381741" in second["reply"]["text"], second


def test_an_item_placed_in_the_order_just_talked_about_is_of_that_order(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"ctx-{uuid.uuid4().hex[:8]}"
    # Given a customer whose shipped #W9609649 holds T-shirts, as does another order of theirs
    say(client, "sofia_hernandez_5364", session, "is #W9609649 on its way yet?")
    # When they ask to change "the t-shirt in there"
    body = say(client, "sofia_hernandez_5364", session,
               "oh no. could the t-shirt in there still become a large?")
    # Then it is that order's t-shirt (whose order has shipped), not the other order's
    reply = body["reply"]["text"]
    assert "#W9609649" in reply and "#W6876713" not in reply and "shipped" in reply, reply


def test_amounts_to_the_cent_in_an_account_question_name_their_orders(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given two charges named by their amounts, asked about as the account's
    status, reply = ask(client, "lucas_brown_6720", "my card shows two amounts from your shop, 822.50 and "
                                                    "4249.91, why two?")
    # Then each amount's order is told, with what it was charged
    assert status == "answered", reply
    assert "#W9218746" in reply and "#W8660475" in reply, reply
