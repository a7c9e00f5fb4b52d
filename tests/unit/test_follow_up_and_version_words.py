"""The word readings behind tests/integration/test_follow_ups_in_few_words.py and
test_versions_like_theirs.py, one function each."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from csagent.grounding.frame import points_at_another_order
from csagent.grounding.options import find_option_values, tokens
from csagent.grounding.resolve import _pivot
from csagent.grounding.status import statuses_asked_about
from csagent.understanding import Clause
from csagent.understanding_local.folds import named_then_asked_folded
from csagent.understanding_local.passes import preferences_folded

_CATALOGUE = [{"product_id": "bike", "name": "Bicycle", "options": {}},
              {"product_id": "chair", "name": "Office Chair", "options": {"material": ["fabric", "leather"]}}]


@pytest.mark.parametrize(("text", "asked"), [
    ("shipped yet?", True),
    ("my bad. delivered already?", True),
    ("which ones haven't shipped yet?", False),  # which orders have it: a description
    ("the shipped one", False),
])
def test_a_status_asked_without_its_verb(text: str, asked: bool) -> None:
    assert statuses_asked_about(text) is asked


def test_the_other_order_may_be_named_by_its_status() -> None:
    assert points_at_another_order("other pending one - what's in it")
    assert not points_at_another_order("the pending one - what's in it")


def test_a_thing_named_then_asked_about_pointing_back_is_one_question() -> None:
    read = [SimpleNamespace(intent="refund_status"), SimpleNamespace(intent="out_of_scope")]
    pieces, predictions = named_then_asked_folded(["And my bike then?", "Has that even left yet?"], read,
                                                  _CATALOGUE)
    # one piece, read as the question (not as the last question asked again)
    assert pieces == ["And my bike then? Has that even left yet?"]
    assert [p.intent for p in predictions] == ["out_of_scope"]
    # a question naming a thing of its own is its own
    assert len(named_then_asked_folded(["And my bike then?", "is the office chair in stock?"], read,
                                       _CATALOGUE)[0]) == 2


def test_a_preference_told_after_a_product_question_joins_its_product() -> None:
    chair = {"product_id": "chair", "name": "Office Chair", "options": {}}
    asked = Clause(text="does the office chair come in other colours?", intent="product_info",
                   confidence=0.8, entities={"products": [chair]})
    told = Clause(text="I want to stay with fabric", intent="product_info", confidence=0.7,
                  entities={"products": [{**chair, "options": {"material": "fabric"}, "carried": True}]})
    [clause] = preferences_folded([asked, told])
    assert clause.text == asked.text
    assert clause.entities["products"][0]["options"] == {"material": "fabric"}
    # a question after it is its own
    again = Clause(text="is the fabric one in stock?", intent="product_availability", confidence=0.7,
                   entities=told.entities)
    assert len(preferences_folded([asked, again])) == 2


@pytest.mark.parametrize(("text", "wished"), [
    ("changed to the 2 liter one, same ceramic for gas", {"capacity": "2 liters"}),  # "for" in the wish
    ("swap the 1 liter one for the 2 liter one", {"capacity": "2 liters"}),
    ("want to swap the glass one for ceramic", {"material": "ceramic"}),
])
def test_the_wish_begins_at_to_before_anything_is_described(text: str, wished: dict[str, str]) -> None:
    dims = {"capacity": ["1 liter", "2 liters"], "material": ["ceramic", "glass"], "stovetop": ["gas"]}
    toks, hits = tokens(text), find_option_values(text, dims)
    pivot = _pivot(toks, hits)
    after = {h.key: h.value for h in hits if pivot is not None and h.position > pivot}
    assert {k: v for k, v in after.items() if k in wished} == wished


def test_a_question_may_open_after_a_colon_with_a_wh_word() -> None:
    from csagent.nlp.speech_acts import asks_something

    assert asks_something("I wanted to check: which versions of that phone are currently in stock")
    assert not asks_something("I live in Chicago, where it snows a lot")  # a relative clause


def test_a_remark_read_as_an_order_question_naming_none_is_dropped_beside_a_request() -> None:
    from csagent.understanding_local.passes import without_account_facts_told

    change = Clause(text="I need the address changed on #W1", intent="change_order_address", confidence=0.8,
                    entities={"order_id": "#W1", "asks_for_change": True})
    remark = Clause(text="I moved and nobody told me this would be a problem", intent="order_status",
                    confidence=0.75, entities={})
    assert without_account_facts_told([change, remark]) == [change]
    # a question about an order is kept, even naming none
    asked = Clause(text="has it shipped?", intent="order_status", confidence=0.75, entities={})
    assert without_account_facts_told([change, asked]) == [change, asked]


@pytest.mark.parametrize(("text", "told"), [
    ("I ordered one of your office chairs last week", True),  # read as a change, naming none
    ("I ordered the office chair by mistake", False),  # a reason for a cancellation
    ("#W3611574 has two office chairs", False),  # names its order, which a request beside it may need
])
def test_a_purchase_told_beside_a_question_is_the_scene(text: str, told: bool, monkeypatch: Any) -> None:
    import csagent.grounding.frame as frame
    from csagent.understanding_local.passes import without_purchases_told

    # (the customer owns an office chair: one of their lines is as the words describe it)
    monkeypatch.setattr(frame, "lines_as_described", lambda view, product_id, options: ["a line"])
    chair = {"product_id": "chair", "name": "Office Chair", "options": {}}
    statement = Clause(text=text, intent="cancel_order", confidence=0.7, entities={"products": [chair]})
    question = Clause(text="does it come in other colours?", intent="product_info", confidence=0.8,
                      entities={"products": [chair]})
    kept = without_purchases_told([statement, question], object())
    assert (statement not in kept) is told


@pytest.mark.parametrize(("text", "filtered"), [
    ("can u list all my orders tell me which ones havent shipped yet", False),  # all, each with its status
    ("which orders havent shipped yet", True),
])
def test_every_order_asked_then_which_lists_them_all(text: str, filtered: bool) -> None:
    from csagent.planning import _status_filter

    assert bool(_status_filter(text)) is filtered


@pytest.mark.parametrize(("text", "read"), [
    ("I'm not after a swap, just take them back please", "return_request"),
    ("if not can i swap it for the alexa one, same steel color", "change_items"),  # (read without failing)
])
def test_a_swap_ruled_out_beside_the_item_taken_back_is_a_return(text: str, read: str) -> None:
    from csagent.understanding_local import reconsider_intent

    assert reconsider_intent("change_items", None, text, {}, names_order=False) == read


def test_a_wish_then_whether_a_change_is_possible_asks_for_that_change() -> None:
    from csagent.understanding_local.passes import wishes_asked_if_possible

    wish = Clause(text="My wife want white color, same size", intent="change_items", confidence=0.75,
                  entities={"order_id": "#W1", "item_ids": ["1"], "new_item_ids": ["2"],
                            "payment_method_id": "paypal_1"})
    asked = Clause(text="Is possible to change before you send?", intent="policy_question", confidence=0.6,
                   entities={})
    pays = Clause(text="Pay with my paypal if more expensive", intent="change_payment", confidence=0.7,
                  entities={"order_id": "#W1", "payment_method_id": "paypal_1", "asks_for_change": True})
    [clause] = wishes_asked_if_possible([wish, asked, pays])
    assert clause.text == wish.text and clause.entities["asks_for_change"] is True
    # without the question, the wish stays told
    assert wishes_asked_if_possible([wish, pays]) == [wish, pays]
