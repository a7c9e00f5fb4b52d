"""The word-level readings behind tests/integration/test_questions_that_ask_no_change.py (issue 12):
a wish denied asks nothing, money back ruled out is not asked for, a method said to be the one paid
with after "rather than" is not the one meant, the words grounding reads are never spelled into
others, a return or cancellation only weighed is not fully asked for, "no need to change" rules a
change out, and an option said not to matter is left open. Phrases written for these tests."""

from __future__ import annotations

import pytest

from csagent.grounding.frame import asks_money_back
from csagent.grounding.options import tokens
from csagent.grounding.resolve import _NOT_METHOD, _left_open
from csagent.nlp.speech_acts import asks_something, declines_change, weighs_a_change
from csagent.nlp.spelling import corrector


@pytest.mark.parametrize("text", ["I don't want to lose it", "I really dont want to lose the balance"])
def test_a_wish_denied_asks_nothing(text: str) -> None:
    assert not asks_something(text)


@pytest.mark.parametrize("text", ["I want to cancel the lamp order", "please don't cancel it",
                                  "i don't want to wait any longer, refund me"])
def test_a_wish_or_a_request_beside_it_still_asks(text: str) -> None:
    assert asks_something(text)


def test_money_back_ruled_out_is_not_asked_for() -> None:
    assert not asks_money_back("Honestly I don't want a refund, I just want the one I ordered")
    assert not asks_money_back("no money back please, send me the right colour")


@pytest.mark.parametrize("text", ["I don't want a replacement, I want my money back",
                                  "just refund me", "can I get my money back for the mug?"])
def test_money_back_asked_for(text: str) -> None:
    assert asks_money_back(text)


@pytest.mark.parametrize("text", ["send it to a new Visa rather than the gift card I paid with",
                                  "to my other card, not the card I used for it"])
def test_the_method_paid_with_after_rather_than_is_ruled_out_whole(text: str) -> None:
    kept = _NOT_METHOD.sub(" ", text)
    assert "paid" not in kept and "used" not in kept, kept


def test_words_grounding_reads_are_not_spelled_into_others() -> None:
    fixed = corrector().correct("I swatched it once on my hand and the sleeves got hemmed")
    assert "swatched" in fixed and "hemmed" in fixed, fixed


@pytest.mark.parametrize("text", ["I might send the fleece jacket back",
                                  "I'm thinking of cancelling the kettle order"])
def test_a_change_only_weighed(text: str) -> None:
    assert weighs_a_change(text)


@pytest.mark.parametrize("text", ["No need to change anything", "no need to cancel it"])
def test_a_change_said_to_be_unneeded_is_ruled_out(text: str) -> None:
    assert declines_change(text)


def test_an_option_said_not_to_matter_is_left_open() -> None:
    toks = tokens("blue still pls, dont care if its vneck or not")
    assert _left_open(toks, toks.index("vneck"))
    assert not _left_open(toks, toks.index("blue"))


@pytest.mark.parametrize("text", ["The hiking boots from #W1 fit like a dream, no complaints there",
                                  "the lamp works great"])
def test_praise_is_told_as_praise(text: str) -> None:
    from csagent.understanding_local import _SATISFIED, _SOMETHING_WRONG

    assert _SATISFIED.search(text) and not _SOMETHING_WRONG.search(text)


def test_praise_beside_something_wrong_is_a_complaint() -> None:
    from csagent.understanding_local import _SOMETHING_WRONG

    assert _SOMETHING_WRONG.search("the boots fit great but the sole is cracked")
