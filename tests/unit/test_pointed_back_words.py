"""The word-level readings behind tests/integration/test_pointed_back_and_restated.py (issue 12):
each status asked for in a question of its own is kept, a request may leave its subject out, a
Chinese "no longer" is a reason and not a no, the everyday words for cancelling name a
cancellation, money "returned" is money back asked for, "already arrive" is delivered, and "my
cancelled stuff" is several orders. Phrases written for these tests."""

from __future__ import annotations

import pytest

from csagent.grounding.frame import _PLURAL_ORDERS, MONEY_BACK_ASKED, named_change, named_changes
from csagent.grounding.status import statuses_described
from csagent.nlp.confirmation import lean
from csagent.nlp.speech_acts import asks_something


def test_each_status_asked_in_a_question_of_its_own_is_kept() -> None:
    both = statuses_described("which ones are still waiting to ship and which have already arrived?")
    assert both is not None and {"pending", "delivered"} <= set(both)
    assert "cancelled" not in both


def test_status_phrases_of_one_question_still_narrow_each_other() -> None:
    narrowed = statuses_described("the one that is not cancelled and not delivered yet")
    assert narrowed == ("pending", "processed")


@pytest.mark.parametrize("text", ["need the tracking numbers", "want my receipt for that order"])
def test_a_request_may_leave_its_subject_out(text: str) -> None:
    assert asks_something(text)


def test_a_statement_that_asks_nothing_stays_a_statement() -> None:
    assert not asks_something("my aunt gave me a gift card for my birthday")


def test_a_chinese_no_longer_is_a_reason_not_a_no() -> None:
    assert lean("好的，确认取消，我不再需要了") == "yes"
    assert lean("不，先别取消") == "no"


@pytest.mark.parametrize("text", ["ok nix the lamp one", "kill the sneakers one", "scrap my kettle order"])
def test_everyday_words_for_cancelling_name_a_cancellation(text: str) -> None:
    assert named_change(text) == "cancel_order"


def test_a_cancel_word_said_of_someone_else_names_no_change() -> None:
    assert named_change("my partner would kill me if this came late") is None


def test_money_returned_is_money_back_asked_for() -> None:
    assert MONEY_BACK_ASKED.search("I want it sent back and my money returned")
    assert not MONEY_BACK_ASKED.search("the money was never the problem")


def test_asking_whether_a_change_may_be_made_names_it() -> None:
    assert named_changes("is it possible to return only the puzzle and the skateboard?") == ["return_request"]
    assert named_changes("would it be ok to cancel it still?") == ["cancel_order"]


def test_already_arrive_said_without_its_past_tense_is_delivered() -> None:
    assert statuses_described("which one already arrive to me") == ("delivered",)


@pytest.mark.parametrize("text", ["did the refunds for my cancelled stuff go thru?",
                                  "where are my new things"])
def test_several_orders_asked_about_in_everyday_words(text: str) -> None:
    assert _PLURAL_ORDERS.search(text)
