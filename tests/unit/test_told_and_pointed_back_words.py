"""The word readings behind tests/integration/test_told_and_pointed_back.py, one function each (a name
of its own: pytest imports test modules by their basename)."""

from __future__ import annotations

import pytest

from csagent.grounding import frame
from csagent.grounding.resolve import product_mentions
from csagent.grounding.status import ends_in_a_tag_question, statuses_asked_about, statuses_described
from csagent.handoff.triggers import asks_for_staff_process, is_explicit_request
from csagent.nlp.speech_acts import asks_for_change, asks_something, declines_change

_CATALOGUE = [
    {"product_id": "jacket", "name": "Fleece Jacket",
     "variants": {"1": {"options": {"size": "S", "color": "red", "zipper": "half"}}}},
    {"product_id": "bed", "name": "Pet Bed",
     "variants": {"2": {"options": {"size": "small", "material": "fleece", "color": "brown"}}}},
    {"product_id": "laptop", "name": "Laptop", "variants": {"3": {"options": {"color": "black"}}}},
    {"product_id": "backpack", "name": "Backpack",
     "variants": {"4": {"options": {"color": "grey", "compartment": "laptop"}}}},
]


@pytest.mark.parametrize(("text", "names"), [
    ("does the fleece bed come in other colours?", ["Pet Bed"]),
    ("my laptop backpack has a broken strap", ["Backpack"]),
    ("my laptop and my backpack", ["Laptop", "Backpack"]),  # two things, not one describing the other
    ("the fleece jacket", ["Fleece Jacket"]),
])
def test_a_product_word_naming_an_option_of_the_next_describes_it(text: str, names: list[str]) -> None:
    assert [m.name for m in product_mentions(text, _CATALOGUE)] == names


@pytest.mark.parametrize(("text", "options"), [
    ("does the fleece bed come in other colours?", {"material": "fleece"}),
    ("do you have the pet bed in fleece?", {"material": "fleece"}),
    ("my laptop backpack has a broken strap", {"compartment": "laptop"}),
])
def test_the_product_word_describing_another_is_that_products_option(text: str,
                                                                      options: dict[str, str]) -> None:
    # Given a product word that is an option value of the product named beside it
    # When the products are read
    # Then the one described holds that option
    [mention] = product_mentions(text, _CATALOGUE)
    assert mention.options == options


@pytest.mark.parametrize(("text", "asks"), [
    ("k which one's still comin", True),
    ("cool cool what about the lamp", True),
    ("my aunt gave me a gift card for my birthday", False),
])
def test_a_question_after_an_acknowledgement_still_asks(text: str, asks: bool) -> None:
    assert asks_something(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    ("My friend say me that I must return all the items together", False),
    ("someone told me that I have to send everything back", False),
    ("I cannot send back only the sunglasses", False),
    ("You send me wrong perfume?", False),
    ("you sent me the wrong size", False),
    ("can you send me the right one", True),
    ("you need to send me a new one", True),
    ("would it be possible to move the payment onto my Mastercard?", True),
])
def test_what_is_told_or_reported_asks_no_change(text: str, asks: bool) -> None:
    assert asks_for_change(text) is asks


def test_a_but_opening_the_clause_leaves_a_change_ruled_out() -> None:
    assert declines_change("But please DON'T touch the order with the bike and the laptop")
    assert not declines_change("don't cancel the whole order, only the scarf")  # a narrower request


@pytest.mark.parametrize(("text", "tagged"), [
    ("the desk lamp, that one's already out the door, right?", True),
    ("it shipped yesterday, yeah?", True),
    ("has it shipped?", False),
])
def test_a_statement_with_a_question_tagged_on(text: str, tagged: bool) -> None:
    assert ends_in_a_tag_question(text) is tagged


def test_out_the_door_is_shipped_and_a_tag_question_asks_it() -> None:
    text = "that one's already out the door, right?"
    assert statuses_described(text) == ("processed", "delivered")
    assert statuses_asked_about(text)


@pytest.mark.parametrize(("text", "person"), [
    ("just put me thru to whoever does warranty stuff", True),
    ("Get someone to chase this with the carrier", True),
    ("Can you get me to the warranty people please?", True),
    ("where is my order", False),
])
def test_everyday_ways_of_asking_for_a_person(text: str, person: bool) -> None:
    assert is_explicit_request(text) is person


def test_an_item_missing_from_the_box_is_for_staff_but_fix_it_alone_is_not() -> None:
    assert asks_for_staff_process("the earbuds are NOT in the box", whole=False)
    assert not asks_for_staff_process("I got charged twice for ONE bookshelf. Fix it.", whole=False)


def test_money_back_asked_in_one_sentence_is_a_return_whatever_another_declines() -> None:
    # Given a damaged item, a sentence refusing to use it, and the money back asked for (no other item)
    text = ("The red bike helmet showed up with a crack right across the shell. I'm not putting that on "
            "my kid's head. Send it back and put the money back on my Visa, I don't want a replacement.")
    # Then it is a return the assistant proposes, not a claim for staff (delivered order)
    assert not asks_for_staff_process(text, order_statuses=("delivered",))


@pytest.mark.parametrize(("text", "made"), [
    ("i canceled my order with the air purifer but i still see one pending??", True),
    ("I already returned it, where's my money?", True),
    ("If I cancelled the order with the tea kettle, how much would I get back?", False),
    ("how much would I get back if I returned both?", False),
])
def test_a_change_told_as_made_is_not_one_supposed(text: str, made: bool) -> None:
    assert frame._told_as_made(text) is made


@pytest.mark.parametrize(("text", "count"), [
    ("I cancelled two orders with you", 2),
    ("my 3 orders", 3),
    ("one of my orders", 0),
])
def test_how_many_orders_the_words_count(text: str, count: int) -> None:
    assert frame._orders_counted(text) == count


@pytest.mark.parametrize(("text", "points"), [
    ("Has the order shipped at least?", True),
    ("Then I just want to cancel the whole thing.", True),
    ("the order with the kettle", False),
])
def test_words_pointing_at_the_order_talked_about(text: str, points: bool) -> None:
    assert bool(frame._POINTS_AT_ORDER.search(text)) is points
