"""Writes nobody asked for, one reading each: a return proposed only for words that name one, a
change weighed held back, a change ruled out as a noun, a new size that would change much else
asked about, the orders one answer covered kept for "the electric one" (the readings behind
tests/integration/test_remedies_not_returns.py)."""

from __future__ import annotations

import pytest

from csagent.domain.models import Task, TaskResult, TaskStatus
from csagent.graph.nodes.summarise import orders_answered
from csagent.grounding.frame import names_a_return
from csagent.grounding.model import Line, OrderView, Variant
from csagent.grounding.resolve import ItemChange, choose_variant, resolve_item_changes
from csagent.handoff.triggers import HandoffReason, TurnSignals, evaluate, signals_from_state
from csagent.nlp.speech_acts import declines_change
from csagent.understanding import Clause
from csagent.understanding_local.passes import changes_held_back, returns_named_by_their_words


@pytest.mark.parametrize(("text", "named"), [
    ("i want to return the grill", True),
    ("can you take them back", True),
    ("I'll ship them back to you tomorrow", True),
    ("I don't want it anymore, pls refund", True),
    ("我想退货", True),
    ("This is junk and I want it dealt with", False),
    ("I don't want my money back, I want a new one that works", False),
    ("the lamp flickers, sort it out", False),
])
def test_a_return_is_named_by_its_verb_the_item_sent_back_or_money_back(text: str, named: bool) -> None:
    assert names_a_return(text) is named


def _demand(text: str) -> Clause:
    return Clause(text=text, intent="return_request", confidence=0.7,
                  entities={"order_id": "#W1", "item_ids": ["1"], "asks_for_change": True})


def test_a_demand_naming_no_return_is_a_complaint_about_the_same_order() -> None:
    text = "The desk lamp flickers all evening. Fix this, I am fed up."
    clauses = [Clause(text="The desk lamp flickers all evening", intent="complaint", confidence=0.8),
               _demand("Fix this, I am fed up")]
    read = returns_named_by_their_words(clauses, text)
    assert [c.intent for c in read] == ["complaint", "complaint"]
    assert read[1].entities["order_id"] == "#W1"
    assert "asks_for_change" not in read[1].entities and "item_ids" not in read[1].entities


def test_a_demand_that_names_the_return_stays_a_return() -> None:
    text = "The desk lamp flickers all evening. Take it back, I am fed up."
    clauses = [_demand("Take it back, I am fed up")]
    assert returns_named_by_their_words(clauses, text) == clauses


def test_a_replacement_demanded_instead_of_money_back_is_the_teams() -> None:
    text = ("My new kettle came with a crack in the base and leaks on the counter. I don't want my money "
            "back, I want a replacement kettle that works.")
    read = returns_named_by_their_words([_demand("I want a replacement kettle that works")], text)
    assert read[0].intent == "complaint" and read[0].entities.get("staff_remedy") is True


def test_the_teams_remedy_read_by_the_understanding_step_hands_over() -> None:
    state = {"text": "sort it out", "clauses": [
        {"text": "sort it out", "intent": "complaint", "entities": {"staff_remedy": True}}]}
    signals = signals_from_state(state)
    assert signals.staff_remedy
    decision = evaluate(signals)
    assert decision is not None and HandoffReason.STAFF_PROCESS in decision.reasons
    assert evaluate(TurnSignals(texts=("sort it out",))) is None


@pytest.mark.parametrize("hedge", ["I haven't decided yet, I'm just gathering information.", "I only ask",
                                   "Maybe later, but not now", "我在考虑要不要退"])
def test_a_hedge_naming_nothing_of_its_own_holds_back_the_change_beside_it(hedge: str) -> None:
    change = Clause(text="Would it be possible to exchange it for the 30-50 lb version",
                    intent="change_items", confidence=0.8,
                    entities={"order_id": "#W1", "asks_for_change": True})
    told = Clause(text=hedge, intent="smalltalk", confidence=0.5)
    read = changes_held_back([change, told])
    assert read[0].entities["asks_for_change"] is False


def test_a_hedge_about_something_else_holds_back_nothing() -> None:
    cancel = Clause(text="Cancel the kettle order", intent="cancel_order", confidence=0.9,
                    entities={"order_id": "#W1", "asks_for_change": True})
    told = Clause(text="Still thinking about the rest", intent="smalltalk", confidence=0.5)
    assert changes_held_back([cancel, told])[0].entities["asks_for_change"] is True


@pytest.mark.parametrize(("text", "declines"), [
    ("I'm not asking for a return right now", True),
    ("i dont want a refund on the fleece", True),
    ("I just want my money back on the boots, not a swap", False),  # asks for the other
    ("I want a replacement, not a refund", False),
    ("I want to measure my head again before, so don't do it now please", True),
    ("please tell me which of my orders are not send yet", False),  # what they are, not a change
])
def test_a_change_ruled_out_as_a_noun_and_a_wish_before_the_negation(text: str, declines: bool) -> None:
    assert declines_change(text) is declines


def _line(options: dict[str, str]) -> Line:
    return Line(item_id="own", product_id="jacket", name="Fleece Jacket", price=157.86, options=options)


def test_a_new_size_that_changes_half_of_the_rest_asks_which() -> None:
    variants = [Variant("black-l", {"size": "L", "color": "black", "zipper": "full"}, 159.92, True),
                Variant("red-l", {"size": "L", "color": "red", "zipper": "half"}, 153.18, True)]
    change = choose_variant(_line({"size": "XL", "color": "navy", "zipper": "full"}), variants, {"size": "L"},
                            ask_when_far=True)
    assert change.new is None and [v.item_id for v in change.options] == ["black-l", "red-l"]


def test_a_new_size_that_keeps_most_of_the_rest_is_that_one() -> None:
    variants = [Variant("red-xxl", {"size": "XXL", "color": "red", "material": "cotton", "style": "crew"},
                        46.85, True),
                Variant("black-xxl", {"size": "XXL", "color": "black", "material": "cotton", "style": "crew"},
                        53.27, True)]
    line = _line({"size": "L", "color": "red", "material": "cotton", "style": "v-neck"})
    change = choose_variant(line, variants, {"size": "XXL"}, ask_when_far=True)
    assert change.new is not None and change.new.item_id == "red-xxl"


def test_the_orders_answered_together_are_kept_for_the_next_turn() -> None:
    def task(task_id: str, order_id: str) -> Task:
        return Task(task_id=task_id, task_type="order_status", tool="predefined_cypher",
                    args={"template_id": "order_status", "params": {"order_id": order_id}})

    tasks = [task("t1", "#W1"), task("t2", "#W2")]
    ok = {t.task_id: TaskResult(task_id=t.task_id, task_type=t.task_type, tool=t.tool,
                                status=TaskStatus.SUCCESS) for t in tasks}
    assert orders_answered(tasks, ok) == ["#W1", "#W2"]
    assert orders_answered(tasks[:1], ok) == []


def _tee_changes(wish: str) -> ItemChange:
    tee = Line(item_id="red-l", product_id="tee", name="T-Shirt", price=46.66,
               options={"color": "red", "size": "L", "material": "cotton", "style": "v-neck"})
    variants = {"tee": (Variant("red-l", dict(tee.options), 46.66, True),
                        Variant("red-xxl", {"color": "red", "size": "XXL", "material": "polyester",
                                            "style": "crew neck"}, 46.85, True),
                        Variant("black-xxl", {"color": "black", "size": "XXL", "material": "cotton",
                                              "style": "crew neck"}, 53.27, True))}
    [change] = resolve_item_changes(wish, OrderView("#W1", "delivered", (tee,), "card_1"), variants).changes
    return change


def test_what_the_message_calls_the_item_picks_among_the_versions_that_change_much() -> None:
    # Each XXL keeps one of the three options left alone: which one is asked, unless the message
    # calls the tee by one of them ("the red tee")
    assert _tee_changes("can i swap the tee for an XXL?").new is None
    picked = _tee_changes("the red tee is too tight, can i swap it for an XXL?").new
    assert picked is not None and picked.item_id == "red-xxl"
