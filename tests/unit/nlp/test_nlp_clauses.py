"""Clause splitting of compound customer messages."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csagent.nlp.clauses import segment, split_clauses

COMPOUND = ("where is order #W2611340, what is the warranty on those headphones, and ship it to my new "
            "address: 12 Main St, Springfield, IL 62704")


def test_compound_message_splits_into_its_three_requests() -> None:
    # Given a message holding an order question, a warranty question and an address change
    # When it is split
    clauses = split_clauses(COMPOUND)
    # Then there are three clauses, connectors removed, the address left whole
    assert clauses == [
        "where is order #W2611340",
        "what is the warranty on those headphones",
        "ship it to my new address: 12 Main St, Springfield, IL 62704",
    ]


@pytest.mark.parametrize("text", [
    "I want a red and blue shirt",
    "I want to return the red shirt, the blue hat and the water bottle",
    "I ordered shoes, a hat, and a jacket",
    "I want to return and refund the headphones",
    "please send it to 215 River Road, Suite 991, New York, NY 10083",
])
def test_lists_addresses_and_shared_objects_stay_whole(text: str) -> None:
    # Given one request whose commas and "and"s join products, address parts or verbs
    # When it is split / Then it stays a single clause
    assert split_clauses(text) == [text]


@pytest.mark.parametrize(("text", "expected"), [
    ("cancel order #W1234567 and refund me", ["cancel order #W1234567", "refund me"]),
    ("where is my order? Also, what's your return policy.",
     ["where is my order?", "what's your return policy"]),
    ("track my package plus tell me the warranty on the laptop",
     ["track my package", "tell me the warranty on the laptop"]),
    ("is the blue water bottle in stock and also when will my order arrive",
     ["is the blue water bottle in stock", "when will my order arrive"]),
    ("hello i need help, my order hasnt arrived and i want a refund",
     ["hello i need help", "my order hasnt arrived", "i want a refund"]),
    ("Can you check order W1234567; I also need my address changed",
     ["Can you check order W1234567", "I also need my address changed"]),
    # (a longer preamble ending in a colon is no request of its own)
    ("Two quick questions about my blender: could you give me its tracking number, and could you tell me "
     "how long its warranty is?",
     ["Two quick questions about my blender: could you give me its tracking number",
      "could you tell me how long its warranty is?"]),
])
def test_english_connectors_split_between_requests(text: str, expected: list[str]) -> None:
    # Given two requests joined by a sentence end, ";", "and", "also" or "plus"
    # When split / Then each request is its own clause
    assert split_clauses(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我的订单到哪了，另外我要退货", ["我的订单到哪了", "我要退货"]),
    ("帮我查一下物流，还有我想修改地址", ["帮我查一下物流", "我想修改地址"]),
    ("订单到哪了？我要转人工", ["订单到哪了？", "我要转人工"]),
    # "don't cancel yet, first tell me the order's total": what comes first, and what is asked
    ("先别取消，先告诉我那个订单一共多少钱", ["先别取消", "先告诉我那个订单一共多少钱"]),
])
def test_chinese_connectors_split_between_requests(text: str, expected: list[str]) -> None:
    # Given two Chinese requests joined by 另外 / 还有 / a question mark
    # When split / Then each request is its own clause
    assert split_clauses(text) == expected


def test_a_courtesy_opening_stays_with_the_question_after_it() -> None:
    # "may I ask," is no request of its own
    assert split_clauses("请问一下，我买的烤架保修多长时间？燃烧器坏了算不算保修？") == [
        "请问一下，我买的烤架保修多长时间？", "燃烧器坏了算不算保修？"]


@pytest.mark.parametrize("text", ["我的订单还有多久到", "耳机坏了，我要退货"])
def test_chinese_words_that_only_look_like_connectors_do_not_split(text: str) -> None:
    # Given 还有 meaning "still", or a statement followed by its request
    # When split / Then the message stays one clause
    assert split_clauses(text) == [text]


def test_abbreviations_and_decimals_are_not_sentence_ends() -> None:
    # Given "St." and "4.5" inside a request
    text = "Ship it to 9 Elm St. in Denver please, it costs 4.5 dollars"
    # When split / Then no clause ends at those dots
    assert all(not c.endswith(("St", "4")) for c in split_clauses(text))


@pytest.mark.parametrize(("text", "expected"), [
    ("the watch hasn't arrived yet but I like to be prepared 😊 how long is the warranty on it",
     ["the watch hasn't arrived yet but I like to be prepared 😊", "how long is the warranty on it"]),
    ("second-guessing the backlight 😄😄 what options does that keyboard come in?",
     ["second-guessing the backlight 😄😄", "what options does that keyboard come in?"]),
    ("my parcel went to my old place 🤦🏽\u200d♀️ can you send it to the new one",
     ["my parcel went to my old place 🤦🏽\u200d♀️", "can you send it to the new one"]),
    ("thanks so much 👍", ["thanks so much 👍"]),
])
def test_an_emoji_between_two_sentences_ends_the_first(text: str, expected: list[str]) -> None:
    # Given a chat message whose sentences are parted by an emoji, not a full stop
    # When split / Then each sentence is a clause of its own; a closing emoji stays with its clause
    assert split_clauses(text) == expected


def test_greeting_and_thanks_become_their_own_clauses() -> None:
    # Given a greeting, a request and thanks in one message
    # When split / Then the social parts are separate, so the request is classified cleanly
    assert split_clauses("Hi, where is my order, thanks") == ["Hi", "where is my order", "thanks"]


def test_whitespace_only_message_has_no_clauses() -> None:
    # Given only spaces / When split / Then there is nothing to do
    assert split_clauses("   \n ") == []


def test_clause_offsets_point_into_the_message() -> None:
    # Given the compound message / When segmented
    clauses = segment(COMPOUND)
    # Then every clause's raw slice is where its offsets say
    assert all(COMPOUND[c.start:c.end] == c.raw for c in clauses)


_PIECES = st.sampled_from([
    "where is my order", "what is the warranty", "ship it", "12 Main St, Springfield, IL 62704",
    "#W2611340", "a red and blue shirt", "and", "also", "plus", "and also", ",", ", and", ";", ".", "?",
    "!", "。", "，", "另外", "还有", "我要退货", "订单到哪了", " ", "  ", "\n", "I", "cancel", "x@y.com",
    "4.5", "St.", "hi", "thanks",
])
_MESSAGES = st.one_of(st.lists(_PIECES, max_size=25).map(" ".join),
                      st.lists(_PIECES, max_size=25).map("".join),
                      st.text(max_size=80))


@settings(max_examples=400, deadline=None)
@given(_MESSAGES)
def test_splitting_never_loses_a_non_space_character(text: str) -> None:
    # Given any message / When segmented
    clauses = segment(text)
    # Then the raw clauses put back together hold every non-space character, in order
    assert re.sub(r"\s", "", "".join(c.raw for c in clauses)) == re.sub(r"\s", "", text)


@settings(max_examples=400, deadline=None)
@given(_MESSAGES)
def test_splitting_never_returns_an_empty_clause(text: str) -> None:
    # Given any message / When split
    clauses = split_clauses(text)
    # Then every clause has visible text, trimmed, taken from the message
    assert all(c.strip() and c == c.strip() and c in text for c in clauses)


def test_two_requests_each_about_their_own_order_are_split():
    # Given one sentence asking two things about two orders, joined by "as well as"
    text = ("I would appreciate an update on order #W1840144, as well as a list of the items in order "
            "#W2273069.")
    # When split
    clauses = split_clauses(text)
    # Then each request keeps its own order id
    assert clauses == ["I would appreciate an update on order #W1840144",
                       "a list of the items in order #W2273069"]


def test_a_bare_list_of_order_ids_stays_one_clause():
    # Given one request about two orders
    # When split / Then it stays whole (the planner gives each order a task)
    assert split_clauses("Can you check on #W2611340 and #W3632959 for me?") == [
        "Can you check on #W2611340 and #W3632959 for me?"]


def test_two_order_ids_sharing_one_request_and_its_destination_stay_one_clause():
    # Given one change asked of two orders, its destination after the second id
    text = "could you send #W7752859 and #W9892169 to my sister's place instead? 18 Elm Court, Raleigh"
    # Then the ids and where they go stay together (the address is a clause of its own)
    assert split_clauses(text)[0] == "could you send #W7752859 and #W9892169 to my sister's place instead?"
    # ... while a question of its own after the second id still splits
    assert split_clauses("cancel #W7752859 and where is #W9892169") == ["cancel #W7752859",
                                                                        "where is #W9892169"]


def test_requests_about_their_own_orders_split_when_each_names_what_it_asks():
    # Given three requests, the second naming only its request word before its order id
    text = "refund status for #W3899829, tracking for #W2435638, and list my orders"
    # When split
    clauses = split_clauses(text)
    # Then each request keeps its own words and order
    assert clauses == ["refund status for #W3899829", "tracking for #W2435638", "list my orders"]


def test_a_word_after_a_bare_order_id_is_no_request_of_its_own():
    # Given one cancellation of two orders with an adverb after the second id
    # When split / Then it stays one clause (the planner gives each order a task)
    assert split_clauses("cancel #W2611340 and #W3632959 asap") == ["cancel #W2611340 and #W3632959 asap"]


def test_a_verb_that_carries_a_question_opens_a_request_of_its_own():
    # Given a cancellation followed by "and also know how long …" (no request word opens it)
    text = "I'd like to cancel W8343509 (no longer needed) and also know how long refunds to paypal take"
    # When split
    clauses = split_clauses(text)
    # Then the policy question is a clause of its own
    assert clauses == ["I'd like to cancel W8343509 (no longer needed)",
                       "know how long refunds to paypal take"]


def test_a_noun_followed_by_a_question_word_inside_a_list_does_not_split():
    # Given a list of things, not two requests (the left side is no request)
    # When split / Then it stays whole
    text = "the red shirt and sizes when available"
    assert split_clauses(text) == [text]


@pytest.mark.parametrize("text", [
    "my bookshelf order, please send it to my default address",
    "我那个装书架的订单，请改寄到我账户里的默认地址",
    "我那个还没发货的订单，付款方式改成PayPal",
])
def test_a_side_that_only_names_an_order_is_the_topic_of_the_request_after_it(text: str):
    # Given an order named first and the request about it after a comma / When split
    # Then it stays one request (the order is what the request is about, not a question of its own)
    assert split_clauses(text) == [text]


def test_two_requests_each_about_an_order_still_split():
    assert split_clauses("where is my order, and cancel the other order") == [
        "where is my order", "cancel the other order"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Two questions: where is my lamp order, and how long is the warranty on the lamp?",
     ["Two questions: where is my lamp order", "how long is the warranty on the lamp?"]),
    ("quick one - can you check my bike order, and what's the return window?",
     ["quick one - can you check my bike order", "what's the return window?"]),
    ("what does the blue kettle cost + is my mug order shipped yet",
     ["what does the blue kettle cost", "is my mug order shipped yet"]),
])
def test_a_preamble_or_a_plus_between_requests_still_splits(text: str, expected: list[str]) -> None:
    # Given requests announced by a short preamble ("Two questions:") or joined by " + "
    # When split / Then each request is its own clause, the preamble staying with the first
    assert split_clauses(text) == expected


@pytest.mark.parametrize("text", [
    "About my order with the luggage set - I don't want to cancel it, I just need it sent elsewhere",
    "ship it to my new address: 12 Main St, Springfield, IL 62704",
    "the jacket + the scarf, please",
])
def test_a_topic_before_a_dash_or_a_list_joined_by_plus_is_not_split(text: str) -> None:
    # Given a long topic before a dash, an address after a colon, or products joined by "+"
    # When split / Then nothing splits (a topic is not a preamble, products are no requests)
    assert split_clauses(text) == [text]


@pytest.mark.parametrize(("text", "expected"), [
    # a condition belongs to the question or request that follows it
    ("If I cancel order #W6207110, how much would I get back? Don't cancel yet.",
     ["If I cancel order #W6207110, how much would I get back?", "Don't cancel yet"]),
    ("in case the lamp is lost, can you send a new one?",
     ["in case the lamp is lost, can you send a new one?"]),
    # so does a time clause; "when" with an auxiliary asks a question of its own
    ("When I cancel an order paid with PayPal, how many days until the money is back?",
     ["When I cancel an order paid with PayPal, how many days until the money is back?"]),
    ("once it ships, can you send me the tracking number?",
     ["once it ships, can you send me the tracking number?"]),
    ("when is my order arriving, and can I change the address",
     ["when is my order arriving", "can I change the address"]),
    # a condition already followed by its own request does not hold the next request back
    ("If possible, cancel #W1234567, and change the address of #W7654321 to 12 Main St, Springfield, IL",
     ["If possible, cancel #W1234567", "change the address of #W7654321 to 12 Main St, Springfield, IL"]),
    # Chinese: "如果 ..." up to its comma
    ("如果我把台灯的订单取消，能退多少钱？多久到账？",
     ["如果我把台灯的订单取消，能退多少钱？", "多久到账？"]),
])
def test_a_condition_stays_with_what_follows_it(text: str, expected: list[str]) -> None:
    assert split_clauses(text) == expected


@pytest.mark.parametrize("text", [
    "For the vacuum cleaner I received in #W8535951, how often should I replace the HEPA filter?",
    "about the lamp from my last order, does it take normal bulbs?",
    "Regarding the kettle I got last week, is it safe on an induction hob?",
])
def test_a_fronted_topic_belongs_to_the_question_after_it(text: str) -> None:
    # Given a message that opens with a preposition naming what it is about, then asks / When split
    # Then it is one question: the fronted topic asks nothing of its own
    assert split_clauses(text) == [text]


def test_a_fronted_phrase_that_asks_for_something_is_a_request_of_its_own() -> None:
    # Given a side that opens with "for" but holds a request verb, then another request
    # When split / Then the two requests stay apart
    assert split_clauses("for #W1234567 cancel the lamp, what is the warranty on the kettle?") == [
        "for #W1234567 cancel the lamp", "what is the warranty on the kettle?"]


def test_a_request_opened_by_just_after_a_ruled_out_one_is_a_clause_of_its_own() -> None:
    text = ("don't cancel the espresso machine, order #W6217120, just send it to 57 Lakeshore Boulevard, "
            "Apt 5, Chicago, IL 60611")
    assert [c.text for c in segment(text)] == [
        "don't cancel the espresso machine, order #W6217120",
        "just send it to 57 Lakeshore Boulevard, Apt 5, Chicago, IL 60611"]
    # "just" before no request opens none
    assert len(segment("cancel it, just the kettle")) == 1


@pytest.mark.parametrize(("text", "expected"), [
    # a question word after "and" opens a question of its own, even after a verb
    ("tell me what size the clock is, and whether it has shipped yet?",
     ["tell me what size the clock is", "whether it has shipped yet?"]),
    ("let me know if it shipped, and remind me what I paid",
     ["let me know if it shipped", "remind me what I paid"]),
    ("confirm which kettles are in the order, and share the tracking number?",
     ["confirm which kettles are in the order", "share the tracking number?"]),
])
def test_a_second_question_joined_by_and_is_a_clause_of_its_own(text: str, expected: list[str]) -> None:
    assert split_clauses(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a verbless "not the ..." only narrows the sentence before it
    ("If I return something, the money can go to my other card? Not the card I pay with.",
     ["If I return something, the money can go to my other card? Not the card I pay with"]),
    # one with a verb of its own, or alone, stays a clause
    ("Where is my kettle? Not happy about the wait.", ["Where is my kettle?", "Not happy about the wait"]),
    ("Not the first order, the other one.", ["Not the first order, the other one"]),
])
def test_a_sentence_that_only_narrows_the_one_before_stays_with_it(text: str, expected: list[str]) -> None:
    assert split_clauses(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I asked for #W1234567 to be paid with PayPal, not my Visa. Can you change it or not?",
     ["I asked for #W1234567 to be paid with PayPal, not my Visa. Can you change it or not?"]),
    ("the kettle order is going to my old place. fix it already!",
     ["the kettle order is going to my old place. fix it already"]),
])
def test_a_bare_request_after_a_sentence_asks_for_what_that_sentence_named(text: str,
                                                                          expected: list[str]) -> None:
    assert split_clauses(text) == expected


@pytest.mark.parametrize(("text", "clauses"), [
    ("hiii how r u today :) quick q, can i take the earbuds swimming?",
     ["hiii how r u today :)", "quick q, can i take the earbuds swimming?"]),
    ("my order :( it never came", ["my order :(", "it never came"]),
    ("can it come at 10:30 please", ["can it come at 10:30 please"]),  # a time is no smiley
])
def test_a_typed_smiley_ends_a_sentence(text: str, clauses: list[str]) -> None:
    assert [c.text for c in segment(text)] == clauses
