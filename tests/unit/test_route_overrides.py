"""The route node's overrides of the understanding: a request for a person, and frustration with
nothing to act on → a person."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from csagent.graph.nodes.route import _frustrated_with_nothing_to_do, route
from csagent.understanding import Clause, Understanding

ANGRY = "this is ridiculous!!! my order never arrived and nobody helps me, I'm so angry"


def _understanding(route: str, *clauses: Clause) -> Understanding:
    first = clauses[0] if clauses else Clause("", "out_of_scope", 0.0)
    return Understanding(route=route, intent=first.intent, confidence=first.confidence, clauses=clauses)


def _state(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, **extra}


def test_an_angry_customer_who_names_no_order_goes_to_a_person() -> None:
    # Given a furious order complaint without an order id (the planner could only ask "which order?")
    understanding = _understanding("knowledge_and_actions",
                                   Clause("my order never arrived and nobody helps me", "order_status", 0.75))
    # When the route decides / Then a person takes over instead of a clarifying question
    assert _frustrated_with_nothing_to_do(_state(ANGRY), understanding)


def test_an_angry_customer_who_names_an_order_gets_the_turn_run_first() -> None:
    # Given a furious message that names the order (the status can be read, triggers run afterwards)
    text = "THIS IS THE THIRD TIME I'M ASKING!!! where is #W7449508?! absolutely useless service"
    clause = Clause("where is #W7449508", "order_status", 0.8, {"order_id": "#W7449508"})
    understanding = _understanding("knowledge_and_actions", clause)
    # When the route decides / Then the normal route stands
    assert not _frustrated_with_nothing_to_do(_state(text), understanding)


def test_an_angry_customer_whose_last_order_is_remembered_gets_the_turn_run_first() -> None:
    # Given the same complaint, after an earlier turn that named an order
    understanding = _understanding("knowledge_and_actions",
                                   Clause("my order never arrived", "order_status", 0.75))
    state = _state(ANGRY, memory={"last_order_id": "#W7449508"})
    # When the route decides / Then the remembered order is looked up first
    assert not _frustrated_with_nothing_to_do(state, understanding)


@pytest.mark.parametrize("route", ["general", "out_of_scope"])
def test_pure_venting_goes_to_a_person(route: str) -> None:
    # Given an angry message with no request the assistant handles
    understanding = _understanding(route, Clause("this is ridiculous, I'm so angry", "smalltalk", 0.3))
    # When the route decides / Then a person takes over
    assert _frustrated_with_nothing_to_do(_state("this is ridiculous, I'm so angry"), understanding)


def test_a_calm_question_without_an_order_id_is_not_handed_off() -> None:
    # Given a calm status question that names no order (a clarifying question is right here)
    understanding = _understanding("knowledge_and_actions", Clause("where is my order", "order_status", 0.9))
    # When the route decides / Then nothing overrides the clarification path
    assert not _frustrated_with_nothing_to_do(_state("where is my order"), understanding)


def _route_with(understanding: Understanding, text: str) -> dict[str, Any]:
    """Run the route node with an understanding service that returns `understanding`."""
    runtime = SimpleNamespace(context=SimpleNamespace(understand=lambda _text, _state: understanding))
    return route({"text": text}, runtime)  # type: ignore[arg-type]


def test_asking_for_a_person_goes_to_a_person_first_whatever_else_the_message_says() -> None:
    # Given a request for a person followed by a complaint about an order's product
    text = "Can you connect me with a human agent? My espresso machine from #W9183908 is leaking."
    order = {"order_id": "#W9183908"}
    understanding = _understanding(
        "knowledge_and_actions",
        Clause("Can you connect me with a human agent?", "human_handoff", 0.72, order),
        Clause("My espresso machine from #W9183908 is leaking", "product_info", 0.5, order))
    # When the route decides
    update = _route_with(understanding, text)
    # Then the handoff comes first, with the order id kept for the package
    assert (update["route"], update["intent"]) == ("handoff", "human_handoff")
    assert update["clauses"][1]["entities"]["order_id"] == "#W9183908"


def test_asking_for_a_person_if_something_goes_wrong_answers_the_question_first() -> None:
    # Given a status question with a request for a person that depends on its answer
    text = "where is order #W7678072? if it's lost I want to talk to a human"
    understanding = _understanding(
        "knowledge_and_actions",
        Clause("where is order #W7678072?", "order_status", 0.79, {"order_id": "#W7678072"}),
        Clause("if it's lost I want to talk to a human", "human_handoff", 0.54, {"order_id": "#W7678072"}))
    # When the route decides / Then the status is read first (the triggers decide after the turn)
    assert _route_with(understanding, text)["route"] == "knowledge_and_actions"


@pytest.mark.parametrize("route", ["out_of_scope", "general"])
def test_a_carrier_investigation_asked_with_nothing_else_to_do_goes_to_our_team(route: str) -> None:
    # Given a request to open an investigation that the examples do not read as a store request
    text = "It's still nowhere to be found. Could you please open an investigation?"
    understanding = _understanding(route, Clause("Could you please open an investigation?", "smalltalk", 0.3))
    # When the route decides / Then our team takes it over instead of a refusal
    assert _route_with(understanding, text)["route"] == "handoff"


def test_a_warranty_claim_with_an_order_to_look_up_runs_the_turn_first() -> None:
    # Given a warranty claim that names its order (the facts are read, the triggers hand off after)
    text = "my smart watch from order #W8033354 won't charge, I want to file a warranty claim"
    understanding = _understanding(
        "knowledge_and_actions",
        Clause(text, "warranty", 0.7, {"order_id": "#W8033354"}))
    # When the route decides / Then the normal route stands
    assert _route_with(understanding, text)["route"] == "knowledge_and_actions"


@pytest.mark.parametrize(("entities", "route_taken"), [
    ({}, "out_of_scope"),  # nothing of the store's: what we can do
    ({"order_id": "#W6577842", "address": {"address1": "18 Willow Bend"}}, "knowledge_and_actions"),
])
def test_a_message_the_scope_check_doubts_stays_in_scope_when_it_names_an_order_or_address(
        entities: dict[str, Any], route_taken: str) -> None:
    # Given a weakly read change ("This is wrong, it is my old home. Please change to 18 Willow Bend,
    # Raleigh, NC 27601.") that the business-scope check does not vouch for
    clause = Clause("Please change to 18 Willow Bend, Raleigh, NC 27601", "change_order_address", 0.39,
                    entities)
    understanding = _understanding("knowledge_and_actions", clause)
    runtime = SimpleNamespace(context=SimpleNamespace(understand=lambda _text, _state: understanding))
    state = {"text": clause.text, "trace": {"scope": {"in_scope": False}}}
    # When the route decides / Then an order or an address of the customer's keeps it in scope
    assert route(state, runtime)["route"] == route_taken  # type: ignore[arg-type]


@pytest.mark.parametrize(("lang", "route_taken"), [("en", "out_of_scope"), ("zh", "knowledge_and_actions")])
def test_a_scope_check_by_keywords_alone_does_not_outvote_a_chinese_store_reading(lang: str,
                                                                                 route_taken: str) -> None:
    # Given a weakly read catalogue question naming no store fact ("你们卖帐篷吗？", do you sell tents?)
    # that the scope check does not vouch for: by MiniLM in English, by its keywords alone in Chinese
    clause = Clause("你们卖帐篷吗？", "product_info", 0.47, {})
    understanding = replace(_understanding("knowledge_and_actions", clause), lang=lang)
    runtime = SimpleNamespace(context=SimpleNamespace(understand=lambda _text, _state: understanding))
    state = {"text": clause.text, "trace": {"scope": {"in_scope": False}}}
    # When the route decides / Then only the English check refuses it; the Chinese one is answered
    assert route(state, runtime)["route"] == route_taken  # type: ignore[arg-type]


def test_thanks_in_yes_words_with_nothing_proposed_is_thanks() -> None:
    # Given nothing proposed / When the customer writes "bet, thx" ("bet" is a yes word)
    understanding = _understanding("general", Clause("bet, thx", "thanks", 0.48))
    # Then it is read as thanks, not as a yes to nothing ("what should I do?")
    assert _route_with(understanding, "bet, thx")["route"] == "general"
    # while a bare yes to nothing asks what to do
    smalltalk = _understanding("general", Clause("sure, do it", "smalltalk", 0.4))
    assert _route_with(smalltalk, "sure, do it")["route"] == "clarify"


@pytest.mark.parametrize(("text", "refuses"), [
    # the last sentence calls the request off (the consent model, MiniLM-based, shipped)
    ("Wait, the red helmet is in that order too? No. Forget it then, leave the whole thing as it is.", True),
    ("no, leave it", True),  # the answer lists
    # picking, not refusing
    ("No, the other one.", False),
    ("the pending one", False),
    ("No.", False),  # a bare no to "which order?" says nothing about which
])
def test_an_answer_to_which_order_that_calls_the_request_off(text: str, refuses: bool) -> None:
    from csagent.graph.nodes.route import _ends_with_no

    assert _ends_with_no(text) is refuses


@pytest.mark.parametrize(("text", "refuses"), [
    # answering "which order?" about a cancellation: its reason, not a refusal
    ("the one w the espresso machine. dont need it anymore", False),
    ("bookshelf one. no longer needed", False),  # a "no" that belongs to its words
    # a refusal still is one, reason or not
    ("no, I dont need it cancelled anymore", True),
    ("the espresso one. actually forget it, leave it", True),
])
def test_a_cancellations_reason_in_the_answer_to_which_order_is_no_refusal(text: str, refuses: bool) -> None:
    from csagent.graph.nodes.route import _ends_with_no

    assert _ends_with_no(text, cancelling=True) is refuses


def _route_in_conversation(understanding: Understanding, text: str, replied: bool) -> dict[str, Any]:
    """The route node on a later turn (`replied`: the assistant answered before) or a first one."""
    runtime = SimpleNamespace(context=SimpleNamespace(understand=lambda _text, _state: understanding))
    messages = [{"role": "customer", "text": "which of my orders haven't shipped?"},
                {"role": "assistant", "text": "Here are your orders: #W1 (pending), #W2 (pending)."}] \
        if replied else []
    return route({"text": text, "messages": messages}, runtime)  # type: ignore[arg-type]


def test_a_question_pointing_back_at_the_last_reply_is_asked_about_not_refused() -> None:
    # Given a follow-up read as out of scope ("Florida" reads as travel) after the orders were listed
    text = "Oof, two. And which one of those is going to Florida again?"
    understanding = _understanding("out_of_scope",
                                   Clause("which one of those is going to Florida again?",
                                          "out_of_scope", 0.6))
    # When the route decides / Then the customer is asked what they need, never refused
    assert _route_in_conversation(understanding, text, replied=True)["route"] == "clarify"
    # (a first message read so is refused as before: nothing was said for it to point back at)
    assert _route_in_conversation(understanding, text, replied=False)["route"] == "out_of_scope"


@pytest.mark.parametrize("text", ["Oh right, the watch! Is that the one with the black dial?",
                                  "ok hows much is even on it"])
def test_a_question_pointing_back_without_a_question_word_or_mark_is_not_refused(text: str) -> None:
    # Given a follow-up read as out of scope that points back with "that" or "it", asked with no
    # "which" (or with no question mark)
    understanding = _understanding("out_of_scope", Clause(text, "out_of_scope", 0.6))
    # When the route decides / Then it is asked about, never refused
    assert _route_in_conversation(understanding, text, replied=True)["route"] == "clarify"


def test_words_of_thanks_in_a_message_that_asks_nothing_are_thanks() -> None:
    from csagent.graph.nodes.route import _thanks
    from csagent.understanding import Clause, Understanding

    # "cool thx, thats all", read as small talk: a closing thanks, not a "yes" with nothing proposed
    chat = Understanding("general", "smalltalk", 0.64, clauses=(
        Clause(text="cool thx, thats all", intent="smalltalk", confidence=0.64),))
    assert _thanks(chat, "cool thx, thats all")
    assert not _thanks(chat, "cool, thats all")
    # beside a request, thanks words are courtesy
    asked = Understanding("knowledge_and_actions", "cancel_order", 0.8, clauses=(
        Clause(text="cancel it thx", intent="cancel_order", confidence=0.8),))
    assert not _thanks(asked, "cancel it thx")
