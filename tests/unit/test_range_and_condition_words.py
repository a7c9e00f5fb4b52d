"""The word readings behind tests/integration/test_ranges_and_conditions.py, one function each (a name
of its own: pytest imports test modules by their basename)."""

from __future__ import annotations

import pytest

from csagent.grounding.frame import asks_the_range, named_change
from csagent.grounding.options import tokens
from csagent.grounding.status import statuses_described
from csagent.nlp.speech_acts import declines_change
from csagent.tools.cypher_catalogue.extraction import sets_aside


@pytest.mark.parametrize(("text", "asks"), [
    ("what piece count does the luggage set come in?", True),
    ("which bottle sizes your perfume comes in?", True),
    ("my bike come in other colors?", True),
    ("what other colours are there", True),
    ("when does my kettle come in?", False),  # its delivery
    ("the package came in damaged", False),
    ("what size did I order", False),  # their own item
])
def test_a_question_asks_the_range_a_product_comes_in(text: str, asks: bool) -> None:
    assert asks_the_range(text) is asks


@pytest.mark.parametrize(("question", "value", "aside"), [
    ("does the black backpack I bought come in other colors?", "black", True),
    ("is there a version that isn't blue?", "blue", True),
    ("do you have the backpack in black?", "black", False),
])
def test_an_option_value_named_only_to_set_it_aside(question: str, value: str, aside: bool) -> None:
    assert sets_aside(question, value) is aside


@pytest.mark.parametrize(("text", "statuses"), [
    ("which of my orders can still be cancelled", ("pending",)),
    ("which orders can't be cancelled anymore", ("processed", "delivered", "cancelled")),
    ("has it been cancelled?", ("cancelled",)),
])
def test_what_can_still_be_done_to_an_order_says_its_status(text: str, statuses: tuple[str, ...]) -> None:
    assert statuses_described(text) == statuses


@pytest.mark.parametrize(("text", "declines"), [
    ("If not, please cancel, I don't need it anymore", False),  # the negation is the condition's
    ("don't cancel it, just tell me where it is", True),
    ("if you can, please don't cancel it", True),
])
def test_a_condition_opened_by_if_not_does_not_rule_the_change_out(text: str, declines: bool) -> None:
    assert declines_change(text) is declines


def test_a_change_asked_of_the_store_names_its_request() -> None:
    assert named_change("can u swap the white one to brown too") == "change_items"
    assert named_change("could you please cancel my order") == "cancel_order"


def test_hours_written_short_are_hours() -> None:
    assert tokens("the green one w 20 hrs") == tokens("the green one w 20 hours")


def test_a_verb_after_a_perfects_auxiliary_tells_what_happened() -> None:
    from csagent.nlp.speech_acts import asks_something

    assert not asks_something("waiting on my tea kettle has put me in a baking mood lol")
    assert asks_something("put it on my visa")


def test_the_current_address_is_the_saved_one() -> None:
    from csagent.nlp.entities.addresses import names_saved_address

    assert names_saved_address("can you ship it to my current address please")
    assert names_saved_address("send it to the one that's on my account")


def test_can_i_get_another_one_instead_asks_for_it() -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change("can i get the same one in a medium instead")
    assert not asks_for_change("can i get the same one in a medium?")  # asks whether there is one


@pytest.mark.parametrize(("text", "missing"), [
    ("My earbuds order #W1 is showing delivered but I don't find the package anywhere", True),
    ("the order with my action camera says it was delivered this morning, but I've looked on the porch, "
     "by the garage, everywhere, and nothing", True),
    ("The tracking for my laptop order say it is delivered, but I never get it.", True),
    ("tracking says delivered, can you tell me when it came?", False),  # nothing said to be missing
    ("I never got an email, is my order delivered yet?", False),  # not received before "delivered"
    ("it says delivered and the box was fine, but the kettle won't turn on", False),
])
def test_a_parcel_marked_delivered_that_never_came(text: str, missing: bool) -> None:
    from csagent.grounding.status import told_delivered_but_not_received

    assert told_delivered_but_not_received(text) is missing


@pytest.mark.parametrize(("text", "declines"), [
    ("不过先别取消", True),  # "but don't cancel yet"
    ("我不想退货了", True),  # "I don't want to return it any more"
    ("帮我取消掉", False),  # "cancel it for me"
    ("不是全部取消，只取消耳机", False),  # "not all of it: cancel only the earbuds"
])
def test_a_chinese_change_named_only_to_rule_it_out(text: str, declines: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert declines_change(text) is declines
    assert asks_for_change(text) is not declines


@pytest.mark.parametrize(("text", "statuses"), [
    ("the hiking boots i already got", ("delivered",)),
    # the orders still coming, ruled out: the delivered ones are meant, which "already got" says
    ("the hiking boots i already got (not the ones still coming) are a lil tight", ("delivered",)),
    ("the ones still coming", ("pending", "processed")),
])
def test_the_orders_already_got_and_those_ruled_out(text: str, statuses: tuple[str, ...]) -> None:
    assert statuses_described(text) == statuses


@pytest.mark.parametrize(("text", "statuses"), [
    # "not" right before the determiner of the orders the status names rules them out
    ("show me my orders, not the canceled ones", ("pending", "processed", "delivered")),
    ("only the ones that actually went thru, not the cancelled ones", ("pending", "processed", "delivered")),
    ("the orders that went through", ("pending", "processed", "delivered")),
    # a determiner after a negated verb: the status names the order, nothing is ruled out
    ("I won't need my pending order anymore", ("pending",)),
])
def test_orders_ruled_out_by_their_status_and_those_that_went_through(
        text: str, statuses: tuple[str, ...]) -> None:
    assert statuses_described(text) == statuses


@pytest.mark.parametrize(("text", "asks"), [
    ("There is one order I send to Seattle, to my brother", False),      # which order: a relative clause
    ("I just noticed that order #W1 is set to ship to 229 Lakeview Drive", False),  # what is planned
    ("it is scheduled to ship to my old place, please send it to my new one", True),
    ("I need it to ship to Denver", True),
    ("I cancel my order", True),                                          # a non-native request stays one
])
def test_where_an_order_is_sent_or_set_to_go_is_told_not_asked(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    ("I'm wondering what other colours that lamp comes in", True),   # an indirect question
    ("i was wondering if it shipped", True),
    ("I have a black desk lamp on order", False),                     # a purchase told
])
def test_wondering_asks_and_a_purchase_told_does_not(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_something

    assert asks_something(text) is asks


@pytest.mark.parametrize(("text", "declines"), [
    ("Just my profile please, I don't want any of my orders touched", True),
    ("dont want it cancelled", True),
    ("I want it cancelled", False),
    ("I don't want the red one, I want it changed to blue", False),   # the wish after it is a request
])
def test_a_change_not_wanted_done_to_something_rules_it_out(text: str, declines: bool) -> None:
    assert declines_change(text) is declines
