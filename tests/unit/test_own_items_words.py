"""The word-level readings behind what customers ask of the things they bought (issue 12): a negation
reaches the value after it and those joined to it, not a later description; a change verb told in
the past or after someone's "would" asks for nothing; a connector inside one verb phrase, or before a
thing named alone, cuts no clause; the option question of their own item; "hasn't come" describes
orders not yet delivered."""

from __future__ import annotations

import pytest

from csagent.grounding.frame import options_asked_of_own
from csagent.grounding.model import Line, OrderView, Variant
from csagent.grounding.options import OptionHit, tokens
from csagent.grounding.resolve import negated_option
from csagent.grounding.status import statuses_described
from csagent.nlp.clauses import segment
from csagent.nlp.speech_acts import asks_for_change, asks_for_information

BOOTS = "7000000001"
BOOTS_LINE = Line("1", BOOTS, "Hiking Boots", 250.0,
                  {"size": "12", "material": "leather", "waterproof": "no"})
BOOTS_VARIANTS = {BOOTS: [
    Variant("1", {"size": "12", "material": "leather", "waterproof": "no"}, 250.0, True),
    Variant("2", {"size": "11", "material": "leather", "waterproof": "no"}, 259.75, True),
    Variant("3", {"size": "11", "material": "leather", "waterproof": "yes"}, 262.0, True),
]}
ORDER = OrderView("#W1", "delivered", (BOOTS_LINE,))


def _hits(text: str, *values: tuple[str, str]) -> tuple[list[str], list[OptionHit]]:
    toks = tokens(text)
    hits = [OptionHit(key, value, toks.index(value.lower().replace("-", ""))) for key, value in values]
    return toks, hits


def test_a_negation_does_not_reach_a_description_after_the_value_it_negates() -> None:
    toks, hits = _hits("black instead of silver the 8-inch one", ("color", "black"), ("color", "silver"),
                       ("screen size", "8-inch"))
    assert negated_option(toks, hits[1], hits) is True
    assert negated_option(toks, hits[2], hits) is False


def test_a_negation_reaches_values_joined_to_the_one_it_negates() -> None:
    toks, hits = _hits("not black or blue", ("color", "black"), ("color", "blue"))
    assert negated_option(toks, hits[0], hits) and negated_option(toks, hits[1], hits)


@pytest.mark.parametrize("text", [
    "which switches did I go for?",
    "my partner would kill me",
    "tryna take it to the pool",
    "I cancelled it last week",
])
def test_a_verb_told_or_after_a_modal_asks_for_no_change(text: str) -> None:
    assert asks_for_change(text) is False


@pytest.mark.parametrize("text", ["cancel it please", "return the lamp", "you will send it back"])
def test_a_plain_change_verb_still_asks(text: str) -> None:
    assert asks_for_change(text) is True


def test_being_told_whether_a_change_would_happen_is_information() -> None:
    assert asks_for_information("Would you tell me whether changing my address would also move #W1?")


@pytest.mark.parametrize(("text", "expected"), [
    ("please send back my pet bed and my tablet", ["please send back my pet bed and my tablet"]),
    ("whether my account address would also change where #W4155745 goes",
     ["whether my account address would also change where #W4155745 goes"]),
    # (the modal's subject between it and "also": "could I also send back")
    ("could I also send back the bookshelf from my other order?",
     ["could I also send back the bookshelf from my other order?"]),
    ("where is my order, also can you cancel the lamp", ["where is my order", "can you cancel the lamp"]),
])
def test_clauses_are_not_cut_inside_a_verb_phrase_or_before_a_thing_named_alone(
        text: str, expected: list[str]) -> None:
    assert [c.text for c in segment(text)] == expected


def test_a_yes_or_no_option_asked_of_their_own_item_is_read_with_its_value() -> None:
    asked = options_asked_of_own("r my hiking boots waterproof??", ORDER, BOOTS_VARIANTS)
    assert asked == [{"product": "Hiking Boots", "product_id": BOOTS, "key": "waterproof", "asked": ["yes"],
                      "own": "no"}]


def test_an_option_asked_in_a_later_sentence_about_the_one_product_counts() -> None:
    asked = options_asked_of_own("the hiking boots i got are comfy. are they waterproof?", ORDER,
                                 BOOTS_VARIANTS)
    assert [a["key"] for a in asked] == ["waterproof"]


@pytest.mark.parametrize("text", [
    "do you have my hiking boots in a waterproof version?",
    "are the hiking boots i got still in stock?",
    "have my waterproof hiking boots shipped yet?",
])
def test_a_question_of_the_stores_range_or_the_orders_progress_asks_nothing_of_their_item(text: str) -> None:
    assert options_asked_of_own(text, ORDER, BOOTS_VARIANTS) == []


def test_not_come_yet_describes_an_order_not_yet_delivered() -> None:
    assert set(statuses_described("the one that hasnt come yet") or ()) == {"pending", "processed"}


def test_a_chinese_word_of_two_products_names_each_the_customer_holds() -> None:
    from csagent.grounding.resolve import product_mentions

    both = [{"product_id": "1", "name": "Coffee Maker"}, {"product_id": "2", "name": "Espresso Machine"}]
    alone = product_mentions("咖啡机坏了", both[1:])
    assert [(m.name, m.ambiguous) for m in alone] == [("Espresso Machine", False)]
    assert {(m.name, m.ambiguous) for m in product_mentions("咖啡机坏了", both)} == {
        ("Coffee Maker", True), ("Espresso Machine", True)}
    # a longer name still names its own product alone
    assert [m.name for m in product_mentions("意式咖啡机坏了", both)] == ["Espresso Machine"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Why hasn't a SINGLE one of my open orders shipped yet??", {"pending"}),
    ("hasn't the kettle arrived?", {"pending", "processed"}),
    ("has the kettle shipped", {"processed", "delivered"}),
])
def test_a_negated_auxiliary_before_the_subject_negates_the_status_after_it(
        text: str, expected: set[str]) -> None:
    assert set(statuses_described(text) or ()) == expected


@pytest.mark.parametrize(("text", "declines"), [
    ("If the bicycle order is not send yet, please change the address to 10 Ocean View Avenue", False),
    ("If not, please cancel", False),
    ("dont cancel it if it shipped", True),
    ("If it has not shipped, do not cancel it", True),
])
def test_a_negation_inside_a_condition_rules_no_change_out(text: str, declines: bool) -> None:
    from csagent.nlp.speech_acts import declines_change

    assert declines_change(text) is declines
