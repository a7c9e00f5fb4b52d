"""The cancellation reason a customer gives, in their own (quickly typed) words."""

from __future__ import annotations

import pytest

from csagent.nlp.reasons import find_cancel_reason


@pytest.mark.parametrize("text", [
    "i dont need order #W4386313 anymore, cancel it",
    "I don't need it anymore",
    "I don’t need it anymore",
    "we won't need this order",
])
def test_no_longer_needed_is_found_with_or_without_apostrophes(text: str) -> None:
    # Given a message that says the order is not needed, typed with or without apostrophes
    # When the reason is looked up
    reason = find_cancel_reason(text)
    # Then it is the store's "no longer needed"
    assert reason == "no longer needed"


def test_ordered_by_mistake_is_found() -> None:
    # Given a message that says the order was a mistake
    # When the reason is looked up
    reason = find_cancel_reason("Please cancel #W5694685 and #W6689278, I ordered both by mistake.")
    # Then it is the store's "ordered by mistake"
    assert reason == "ordered by mistake"


def test_no_reason_is_none() -> None:
    # Given a cancellation request that gives no reason
    # When the reason is looked up
    reason = find_cancel_reason("cancel #W5282037")
    # Then there is none (the assistant asks for it)
    assert reason is None


@pytest.mark.parametrize(("text", "reason"), [
    ("cancel the luggage set order, bought it by mistak", "ordered by mistake"),
    ("ordered it acidentally sorry", "ordered by mistake"),
    ("the mistress of the house placed it", None),  # two letters off: not the word
    ("please cancel my order", None),
    # a phrase of several words, its long words each with one typo
    ("cancel the lamp order pls, got it by acident", "ordered by mistake"),
    ("i chnged my mind about the kettle, cancel it", "no longer needed"),
    ("can you make sure it arrives by monday", None),  # "by" and a long word more than one typo off
])
def test_a_reasons_long_word_is_read_through_one_typo(text: str, reason: str | None) -> None:
    assert find_cancel_reason(text) == reason
