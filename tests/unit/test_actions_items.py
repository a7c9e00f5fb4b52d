"""Which of an order's items the customer's words name (csagent.actions.items)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from csagent.actions.items import match_lines


@dataclass(frozen=True)
class Line:
    name: str
    product_id: str
    option_text: str = ""


ORDER = (
    Line("Skateboard", "p-skate"),
    Line("Electric Kettle", "p-ekettle"),
    Line("Tea Kettle", "p-tkettle"),
    Line("T-Shirt", "p-shirt", "color: blue, size: M"),
    Line("T-Shirt", "p-shirt", "color: red, size: M"),
)


def names(lines: tuple[Line, ...]) -> list[str]:
    return [f"{x.name}/{x.option_text}" if x.option_text else x.name for x in lines]


@pytest.mark.parametrize("text", [
    "I want to return the skateboard from order #W6344370",
    "return the Skateboards",
    "return the skatebord please",  # a typo
])
def test_a_product_named_in_any_case_number_or_with_a_typo_is_matched(text: str) -> None:
    # When the customer names the skateboard
    match = match_lines(ORDER, text)
    # Then only the skateboard is chosen
    assert names(match.lines) == ["Skateboard"] and not match.ambiguous


def test_the_full_name_wins_over_a_shared_head_noun() -> None:
    # When the customer names the electric kettle
    match = match_lines(ORDER, "return the electric kettle")
    # Then the tea kettle is not taken
    assert names(match.lines) == ["Electric Kettle"]


def test_a_head_noun_shared_by_two_products_is_ambiguous() -> None:
    # When the customer says only "the kettle" and the order has two kinds
    match = match_lines(ORDER, "return the kettle")
    # Then nothing is chosen and both are offered
    assert not match.lines and names(match.ambiguous) == ["Electric Kettle", "Tea Kettle"]


def test_option_words_pick_one_of_several_units() -> None:
    # When the customer names the colour of one of two T-shirts
    match = match_lines(ORDER, "return the blue t-shirt")
    # Then that one is chosen
    assert names(match.lines) == ["T-Shirt/color: blue, size: M"]


def test_two_units_not_told_apart_are_ambiguous_unless_both_are_meant() -> None:
    # When the customer names the T-shirt without saying which, then says both
    unclear = match_lines(ORDER, "return the t-shirt")
    both = match_lines(ORDER, "return both t-shirts")
    # Then the first asks, the second takes both
    assert not unclear.lines and len(unclear.ambiguous) == 2
    assert len(both.lines) == 2 and not both.ambiguous


def test_everything_means_every_line() -> None:
    # When the customer wants to return the whole order
    match = match_lines(ORDER, "I want to return everything")
    # Then every line is chosen
    assert len(match.lines) == len(ORDER)


def test_a_catalogue_product_found_in_the_message_is_matched_by_id() -> None:
    # When the understanding found the skateboard product, whatever the words
    match = match_lines(ORDER, "return my board", product_ids=["p-skate"])
    # Then it is chosen
    assert names(match.lines) == ["Skateboard"]


def test_words_that_name_nothing_match_nothing() -> None:
    # When the customer names no item of the order ("order" is not fuzzily "border")
    match = match_lines(ORDER, "return it from my order")
    # Then nothing is chosen
    assert not match.lines and not match.ambiguous
