"""Consequential actions: proposed, listed back, executed only after an explicit yes; and a
request waiting for one parameter continues when the customer gives it. Fake ports."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from csagent.domain.actions import PendingAction
from csagent.domain.models import Task, ToolResult
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.nlp.confirmation import classify_confirmation
from csagent.tools.context import ToolContext
from csagent.understanding import Clause, Understanding

ORDER = "#W1234567"


class FakeActions:
    def __init__(self) -> None:
        self.executed: list[dict[str, Any]] = []

    def __call__(self, task: Task, ctx: ToolContext) -> ToolResult:
        if task.args.phase == "propose":
            return ToolResult.ok(
                task,
                {
                    "phase": "propose",
                    "action": "cancel_order",
                    "proposal": {"action": "cancel_order", "order_id": ORDER,
                                 "args": {"order_id": ORDER, "reason": task.args.args["reason"]}},
                    "summary": [f"Cancel order {ORDER}."],
                    "requires_approval": False,
                },
            )
        self.executed.append(task.args.model_dump())
        return ToolResult.ok(task, {"phase": "execute", "message": f"Order {ORDER} is cancelled."})


def understand_cancel(text: str, state: Any) -> Understanding:
    """A tiny stand-in for the local tier: 'cancel …' with or without a reason, else small talk."""
    if text.startswith("cancel"):
        entities = {"order_id": ORDER, **({"reason": "no longer needed"} if "need" in text else {})}
        clause = Clause(text=text, intent="cancel_order", confidence=0.9, entities=entities)
        return Understanding("knowledge_and_actions", "cancel_order", 0.9, clauses=(clause,))
    if "need" in text:
        return Understanding(
            "out_of_scope",
            "out_of_scope",
            0.2,
            clauses=(
                Clause(
                    text=text, intent="out_of_scope", confidence=0.2, entities={"reason": "no longer needed"}
                ),
            ),
        )
    return Understanding(
        "general", "smalltalk", 0.8, clauses=(Clause(text=text, intent="smalltalk", confidence=0.8),)
    )


@pytest.fixture
def run():
    graph = build_graph().compile(checkpointer=InMemorySaver())
    actions = FakeActions()
    deps = GraphDeps(
        understand=understand_cancel,
        tools={"customer_actions": actions},
        make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid),
    )  # type: ignore[arg-type]

    def turn(text: str) -> dict[str, Any]:
        return graph.invoke(
            {"session_id": "s", "customer_id": "c", "text": text},
            {"configurable": {"thread_id": "s"}},
            context=deps,
        )

    turn.actions = actions  # type: ignore[attr-defined]
    return turn


def test_an_action_is_listed_back_and_waits_for_a_yes(run):
    state = run("cancel my order, I no longer need it")
    assert state["status"] == "awaiting_confirmation"
    assert f"Cancel order {ORDER}." in state["reply"]["text"] and '"yes"' in state["reply"]["text"]
    assert run.actions.executed == []


def test_yes_executes_the_proposal_exactly_as_listed(run):
    run("cancel my order, I no longer need it")
    state = run("yes")
    assert state["status"] == "answered"
    assert len(run.actions.executed) == 1
    proposal = run.actions.executed[0]["proposal"]
    assert (proposal["action"], proposal["order_id"]) == ("cancel_order", ORDER)
    assert proposal["args"] == {"order_id": ORDER, "reason": "no longer needed"}
    assert run.actions.executed[0]["confirmation_id"] == "s:1"
    assert "is cancelled" in state["reply"]["text"]


def test_no_changes_nothing(run):
    run("cancel my order, I no longer need it")
    state = run("no thanks")
    assert run.actions.executed == []
    assert "haven't changed anything" in state["reply"]["text"]


def test_anything_else_sets_the_proposal_aside_and_says_so(run):
    run("cancel my order, I no longer need it")
    state = run("tell me a joke")
    assert run.actions.executed == []
    assert "haven't made the change" in state["reply"]["text"]
    assert run("yes")["route"] != "confirmation"  # a later yes no longer confirms it


def test_a_missing_reason_is_asked_for_and_the_answer_continues_the_request(run):
    first = run("cancel my order")
    assert first["status"] == "needs_clarification" and "why" in first["reply"]["text"].lower()
    second = run("I no longer need it")
    assert second["status"] == "awaiting_confirmation"
    assert second["tasks"][0]["args"]["args"] == {"order_id": ORDER, "reason": "no longer needed"}


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Yes!", "yes"),
        ("ok", "yes"),
        ("好的", "yes"),
        ("no thanks", "no"),
        ("取消", "no"),
        ("yes, and where is my order?", None),
        ("maybe", None),
        ("no, leave it", "no"),
        ("No. Keep it, thanks.", "no"),
        ("yes, go ahead, thanks", "yes"),
        ("no, ship #W1234567 to 1 Main St instead", None),
        ("yes, no", None),
        ("thanks", None),
        ("confrim", "yes"),    # one slip in a long answer word
        ("proceeed pls", "yes"),
        ("fight", None),       # a short word is never taken for another ("right")
        ("go", "yes"),
        ("yup send it", "yes"),
    ],
)
def test_only_a_plain_answer_counts_as_consent(text, answer):
    assert classify_confirmation(text) == answer


def test_a_reason_phrased_as_a_cancellation_continues_the_waiting_request():
    from csagent.understanding import resume_awaiting

    # Given a cancellation of a specific order waiting for its reason
    awaiting = [{"intent": "cancel_order", "parameter": "reason", "entities": {"order_id": "#W3096415"}}]
    # When the answer is itself understood as a cancellation, with a reason and no order
    answer = Understanding("knowledge_and_actions", "cancel_order", 0.74, clauses=(
        Clause(text="I ordered it by mistake", intent="cancel_order", confidence=0.74,
               entities={"reason": "ordered by mistake"}),))
    resumed = resume_awaiting(answer, awaiting)
    # Then it continues the waiting request, for the order that was asked about
    assert resumed is not None
    assert resumed.clauses[0].entities == {"order_id": "#W3096415", "reason": "ordered by mistake"}


def test_an_answer_picking_an_order_that_rules_the_waiting_change_out_does_not_continue_it():
    from csagent.understanding import resume_awaiting

    # Given a cancellation waiting for its order, and an answer that picks it but says not to cancel yet
    awaiting = [{"intent": "cancel_order", "parameter": "order_id",
                 "entities": {"order_candidates": ["#W7619352", "#W2297866"]}}]
    picked = {"order_id": "#W7619352", "picked_candidate": True}
    answer = Understanding("knowledge_and_actions", "order_items", 0.42, clauses=(
        Clause(text="有电动牙刷的那个", intent="product_info", confidence=0.4, entities=picked),
        Clause(text="先告诉我那个订单一共多少钱", intent="order_items", confidence=0.42, entities=picked)))
    text = "有电动牙刷的那个。不过先别取消，先告诉我那个订单一共多少钱。"
    # Then the cancellation does not continue: the message is read as it stands
    assert resume_awaiting(answer, awaiting, text) is None
    # while the same answer without the cancellation ruled out continues it
    assert resume_awaiting(answer, awaiting, "有电动牙刷的那个。先告诉我那个订单一共多少钱。") is not None


ADDRESS_WAITING = [{"intent": "change_order_address", "parameter": "order_id",
                    "entities": {"order_candidates": ["#W7752859", "#W9892169"]}}]
NEW_ADDRESS = {"address1": "77 Birch Street", "city": "Charlotte", "state": "NC", "zip": "28205"}


def test_an_answer_picking_an_order_continues_the_request_with_the_details_it_adds():
    from csagent.understanding import resume_awaiting

    # Given "which order?" asked for an address change, and an answer that picks one of the orders
    # in words read as a product question, then states the new address
    picked = {"order_id": "#W9892169", "picked_candidate": True}
    answer = Understanding("knowledge_and_actions", "product_info", 0.53, clauses=(
        Clause(text="not the one with the kettle, the other one, with the helmet", intent="product_info",
               confidence=0.53, entities=picked),
        Clause(text="The new address is 77 Birch Street, Charlotte, NC 28205",
               intent="update_default_address", confidence=0.61,
               entities={**picked, "address": NEW_ADDRESS, "asks_for_change": False})))
    # When it is read as the answer it is
    resumed = resume_awaiting(answer, ADDRESS_WAITING)
    # Then the address change continues for that order, with that address, as a request
    assert resumed is not None and resumed.intent == "change_order_address"
    entities = resumed.clauses[0].entities
    assert entities["order_id"] == "#W9892169" and entities["address"] == NEW_ADDRESS
    assert "asks_for_change" not in entities and "picked_candidate" not in entities


def test_a_clause_that_gives_what_was_asked_and_asks_no_change_is_the_answer():
    from csagent.understanding import resume_awaiting

    # Given an exchange waiting for the payment method of the difference
    awaiting = [{"intent": "change_items", "parameter": "payment_method_id",
                 "text": "the camera, bigger zoom",
                 "entities": {"order_id": "#W8336711", "item_ids": ["1"], "new_item_ids": ["2"]}}]
    # When the answer names the method, read as a payment change that asks for nothing
    answer = Understanding("knowledge_and_actions", "change_payment", 0.64, clauses=(
        Clause(text="PayPal", intent="change_payment", confidence=0.64,
               entities={"payment_method_id": "paypal_1", "asks_for_change": False}),))
    resumed = resume_awaiting(answer, awaiting)
    # Then the exchange continues with it, and its words are the request's and the answer's
    assert resumed is not None and resumed.intent == "change_items"
    assert resumed.clauses[0].entities["payment_method_id"] == "paypal_1"
    assert "asks_for_change" not in resumed.clauses[0].entities
    assert resumed.clauses[0].text == "the camera, bigger zoom PayPal"
    # But the same words asking for the change ("move it to PayPal") are a request of their own
    asking = Understanding("knowledge_and_actions", "change_payment", 0.8, clauses=(
        Clause(text="move my other order to PayPal", intent="change_payment", confidence=0.8,
               entities={"payment_method_id": "paypal_1", "asks_for_change": True}),))
    assert resume_awaiting(asking, awaiting) is None


def test_an_answer_picking_an_order_that_asks_for_another_change_is_a_request_of_its_own():
    from csagent.understanding import resume_awaiting

    answer = Understanding("knowledge_and_actions", "cancel_order", 0.8, clauses=(
        Clause(text="the other one, and cancel it", intent="cancel_order", confidence=0.8,
               entities={"order_id": "#W9892169", "picked_candidate": True, "asks_for_change": True}),))
    assert resume_awaiting(answer, ADDRESS_WAITING) is None


@pytest.mark.parametrize(("text", "answer"), [
    ("yes, that's right, please go ahead", "yes"),
    ("sure, do it", "yes"),
    ("ok go ahead", "yes"),
    ("yep sounds good, go for it", "yes"),
    ("nah leave it", "no"),
    ("Hmm, actually no, don't. Leave it as it is.", "no"),
    ("yes, and where is my other order?", None),   # a new question is not consent
    ("yes but change the address first", None),     # a correction is not consent
    ("is it shipped yet", None),
])
def test_consent_in_everyday_words(text: str, answer: str | None) -> None:
    # Given a reply to "shall I go ahead?" / When it is read / Then only a plain yes or no counts
    assert classify_confirmation(text) == answer


PROPOSED_CANCEL = [PendingAction.model_validate({"action": "cancel_order", "proposal": {
    "action": "cancel_order", "args": {"order_id": ORDER}, "order_id": ORDER}})]


def _understood(*clauses: tuple[str, str, float, dict[str, Any]]) -> Understanding:
    built = tuple(Clause(text=t, intent=i, confidence=c, entities=e) for t, i, c, e in clauses)
    return Understanding("knowledge_and_actions", built[0].intent, built[0].confidence, clauses=built)


@pytest.mark.parametrize(("text", "understood", "answer"), [
    # an answer in more words, nothing new asked: it counts
    ("yes, that's what I said", _understood(("yes, that's what I said", "out_of_scope", 0.27, {})), "yes"),
    ("ugh. ok yes", _understood(("ugh", "smalltalk", 0.36, {}), ("ok yes", "smalltalk", 0.59, {})), "yes"),
    ("no. forget it, I'll figure it out myself",
     _understood(("no. forget it", "out_of_scope", 0.23, {}),
                 ("I'll figure it out myself", "out_of_scope", 0.2, {})),
     "no"),
    # the proposed write restated is part of the answer
    ("yes please, go ahead and cancel it!",
     _understood(("yes please, go ahead and cancel it", "cancel_order", 0.79, {"order_id": ORDER})), "yes"),
    ("好的，确认取消。", _understood(("好的，确认取消", "cancel_order", 0.6, {})), "yes"),
    # a request of its own, another order or a new fact: not an answer
    ("yes, and where is my other order?",
     _understood(("yes, and where is my other order?", "order_status", 0.69, {})), None),
    ("yes also return the lamp", _understood(("yes also return the lamp", "return_request", 0.7, {})), None),
    ("yes, and cancel #W7654321 too", _understood(("yes, and cancel #W7654321 too", "cancel_order", 0.8,
                                                   {"order_id": "#W7654321"})), None),
    ("ok but ship it to 1 Main St, Austin, TX 78701",
     _understood(("ok but ship it to 1 Main St, Austin, TX 78701", "change_order_address", 0.4,
                  {"address": {"address1": "1 Main St"}})), None),
    # leaning both ways, or neither: not an answer
    ("yes, no", _understood(("yes, no", "smalltalk", 0.5, {})), None),
    ("actually only the boots", _understood(("actually only the boots", "product_info", 0.46, {})), None),
])
def test_a_longer_answer_counts_when_it_asks_for_nothing_new(text, understood, answer):
    from csagent.understanding import consent_to_pending

    # Given a proposed cancellation / When the customer answers in a sentence / Then
    assert consent_to_pending(text, understood, PROPOSED_CANCEL) == answer


def test_an_answer_in_more_words_confirms_the_proposal(run):
    run("cancel my order, I no longer need it")
    state = run("yes, that's exactly what I said")
    assert state["route"] == "confirmation"
    assert len(run.actions.executed) == 1


def test_a_no_in_more_words_with_nothing_proposed_changes_nothing(run):
    # Given nothing proposed / When the customer says no in a sentence / Then nothing is done
    state = run("hmm no, leave it, don't do anything")
    assert state["route"] == "confirmation" and run.actions.executed == []
    assert "haven't changed anything" in state["reply"]["text"]


@pytest.mark.parametrize(("text", "answer"), [
    ("I no longer need it", None), ("no, I no longer need it", "no"), ("not sure yet", None),
    ("no wait. don't. leave it, I'll deal with it myself", "no"), ("deal, go ahead", "yes"),
    # a Chinese word holding 不 that is no answer ("不锈钢": stainless steel), and a real 不
    ("不锈钢的那个", None), ("不要了", "no")])
def test_no_longer_is_a_reason_not_an_answer(text: str, answer: str | None) -> None:
    from csagent.nlp.confirmation import lean

    assert lean(text) == answer


ASKED_RETURN = [{"text": "if i send back the bottle how much do i get back", "intent": "return_request",
                 "confidence": 0.75, "entities": {"order_id": "#W5703958", "item_ids": ["2439754078"],
                                                  "asks_for_change": False, "order_status": "delivered"}}]


def test_a_change_asked_about_is_kept_for_a_later_yes():
    from csagent.understanding import asked_change

    kept = asked_change(ASKED_RETURN)
    assert kept == {"intent": "return_request", "text": ASKED_RETURN[0]["text"],
                    "entities": {"order_id": "#W5703958", "item_ids": ["2439754078"]}}
    asked_for = [{**ASKED_RETURN[0], "entities": {**ASKED_RETURN[0]["entities"], "asks_for_change": True}}]
    assert asked_change(asked_for) is None  # a change asked for is proposed, not kept


def test_a_yes_after_a_question_about_a_change_asks_for_it_with_what_the_yes_adds():
    from csagent.understanding import asked_change, carry_out_asked_change

    # Given "how much would I get back if I returned the bottle?" answered
    asked = asked_change(ASKED_RETURN)
    # When the customer says "ok do it, refund onto my gift card"
    said = Understanding("knowledge_and_actions", "return_request", 0.61, clauses=(
        Clause(text="ok do it, refund onto my gift card", intent="return_request", confidence=0.61,
               entities={"payment_method_id": "gift_card_5757768", "asks_for_change": True}),))
    carried = carry_out_asked_change("ok do it, refund onto my gift card", said, asked)
    # Then it is the return of the bottle, asked for, to the gift card
    assert carried is not None and carried.intent == "return_request"
    assert carried.clauses[0].entities == {"order_id": "#W5703958", "item_ids": ["2439754078"],
                                           "payment_method_id": "gift_card_5757768", "asks_for_change": True}


@pytest.mark.parametrize(("text", "clause"), [  # no yes; a yes with another order; another change
    ("what's the weather", Clause(text="what's the weather", intent="out_of_scope", confidence=0.3)),
    ("ok and cancel #W2", Clause(text="ok and cancel #W2", intent="cancel_order", confidence=0.9,
                                 entities={"order_id": "#W2", "asks_for_change": True})),  # another order
    # an item change saying what the item becomes, however it is worded
    ("hmm ok. well the bottle changed to the 1L one", Clause(
        text="well the bottle changed to the 1L one", intent="cancel_order", confidence=0.75,
        entities={"order_id": "#W5703958", "item_ids": ["2439754078"], "new_item_ids": ["1"]})),
])
def test_anything_but_a_yes_to_it_leaves_the_change_asked_about(text, clause):
    from csagent.understanding import asked_change, carry_out_asked_change

    said = Understanding("knowledge_and_actions", clause.intent, clause.confidence, clauses=(clause,))
    assert carry_out_asked_change(text, said, asked_change(ASKED_RETURN)) is None


def test_a_question_that_leans_no_with_nothing_asked_is_no_answer(run):
    # "wait" reads as a no when a proposal waits; with nothing asked, the question is answered
    state = run("wait are u a bot or a real person lol")
    assert state["route"] != "confirmation"


def _proposed_change(method_id: str, summary: str) -> list[PendingAction]:
    proposal = {"action": "modify_items", "order_id": ORDER,
                "args": {"order_id": ORDER, "payment_method_id": method_id}}
    change = {"action": "modify_items", "summary": summary, "proposal": proposal}
    return [PendingAction.model_validate(change)]


@pytest.mark.parametrize(("text", "method_id", "summary", "answer"), [
    # the proposal's own method said again is part of the yes
    ("yes thats the only thing, refund the diffrence to paypal", "paypal_1",
     "Price difference: $7.78 is refunded to your PayPal account (paypal_1).", "yes"),
    ("ok yes, charge the mastercard", "credit_card_2",
     "Price difference: you pay $9.22 with your Mastercard ending 9625.", "yes"),
    # another method is a new request, not a yes (at the router, `_narrowed` proposes it again)
    ("yes thats the only thing, refund the diffrence to my gift card", "paypal_1",
     "Price difference: $7.78 is refunded to your PayPal account (paypal_1).", None),
])
def test_the_proposals_own_payment_method_said_with_the_yes_is_no_new_request(
        text: str, method_id: str, summary: str, answer: str | None) -> None:
    from csagent.understanding import consent_to_pending

    # Given a proposed item change settling the difference through `method_id`; when the yes names a
    # method in a clause the examples read as a confident other request
    understood = _understood((text, "policy_question", 0.58, {}))
    # Then it is consent only when the method named is the proposal's
    assert consent_to_pending(text, understood, _proposed_change(method_id, summary)) == answer


KETTLE_CHANGE = ("Modify the items of order #W0000001: Electric Kettle (1.5L, plastic, silver) -> "
                 "(1.5L, plastic, white), $158.90 -> $149.45. Price difference: $9.45 is refunded to your "
                 "gift card (gift_card_1).")
_KETTLES = [{"product_id": "p-ek", "name": "Electric Kettle", "surface": "kettle"},
            {"product_id": "p-tk", "name": "Tea Kettle", "surface": "kettle"}]


@pytest.mark.parametrize(("text", "products", "answer"), [
    # the proposal said again ("the kettle" may be the Electric Kettle proposed), with its own method
    ("Yes, the kettle is the only thing I want to change. Please put the difference on my gift card.",
     _KETTLES, "yes"),
    # another product named is a condition, not the proposal: no answer
    ("Yes, the tea kettle is the only thing I want to change. Please put the difference on my gift card.",
     [_KETTLES[1]], None),
])
def test_a_yes_that_restates_the_proposal_is_consent(text: str, products: list[dict[str, Any]],
                                                     answer: str | None) -> None:
    from csagent.understanding import consent_to_pending

    # Given a proposed kettle change refunding the difference to the gift card; when the reply,
    # which the consent model reads as a yes with a condition, names the change again
    first, second = text.split(". ", 1)
    understood = _understood((first, "change_items", 0.75, {"order_id": ORDER, "products": products}),
                             (second, "policy_question", 0.5044, {}))
    # Then it is the yes only when it names nothing but what was proposed
    assert consent_to_pending(text, understood, _proposed_change("gift_card_1", KETTLE_CHANGE)) == answer


@pytest.mark.parametrize(("clauses", "questions"), [
    # a plain yes, then a question that changes nothing: the question is kept for the same reply
    ((("Yes, please go ahead", "smalltalk", 0.5, {}),
      ("How soon will the money be back?", "refund_status", 0.7, {})), 1),
    ((("yes do it", "cancel_order", 0.6, {"order_id": ORDER}),
      ("and where is my other order?", "order_status", 0.7, {})), 1),
    # no yes before the question, a change or a person asked after the yes: not this
    ((("hmm", "smalltalk", 0.4, {}), ("How soon will the money be back?", "refund_status", 0.7, {})), None),
    ((("yes", "smalltalk", 0.5, {}),
      ("and cancel #W7654321 too", "cancel_order", 0.8, {"order_id": "#W7654321", "asks_for_change": True})),
     None),
    ((("yes go ahead", "smalltalk", 0.5, {}), ("can I talk to a person?", "human_handoff", 0.8, {})), None),
    # a yes with courtesy only asks nothing more
    ((("yes go ahead", "smalltalk", 0.5, {}), ("thank you so much", "thanks", 0.9, {})), None),
])
def test_a_yes_then_questions_confirms_and_keeps_the_questions(clauses, questions) -> None:
    from csagent.understanding import consent_with_questions

    # Given a proposed cancellation / When the reply opens with `clauses[0]` and goes on
    text = " ".join(c[0] for c in clauses)
    kept = consent_with_questions(text, _understood(*clauses), PROPOSED_CANCEL)
    # Then the clauses after the yes are the questions to answer, or it is no such answer
    assert (len(kept) if kept else None) == questions


def _proposed_return(item_ids: list[str], summary: str) -> list[PendingAction]:
    proposal = {"action": "return_items", "order_id": ORDER,
                "args": {"order_id": ORDER, "item_ids": item_ids}}
    return [PendingAction.model_validate({"action": "return_items", "summary": summary,
                                          "proposal": proposal})]


TEA_KETTLE_RETURN = ("Return from order #W0000001: Tea Kettle (material: glass, capacity: 2 liters) "
                     "($94.80). "
                     "Refund: $94.80 to your gift card (gift_card_1).")


def test_a_yes_beside_words_that_name_nothing_and_ask_nothing_is_consent() -> None:
    from csagent.understanding import consent_to_pending

    # Given a proposed return of one tea kettle; when the reply says "just the one kettle" (a word
    # the store's two kettles share, so no product is read) beside a yes the model is unsure of
    text = "Yes, just the one kettle. Please go ahead, thank you."
    understood = _understood(("Yes, just the one kettle", "product_info", 0.6541, {"products": []}),
                             ("Please go ahead", "smalltalk", 0.3724, {}), ("thank you", "thanks", 0.875, {}))
    # Then it is the yes
    assert consent_to_pending(text, understood, _proposed_return(["k1"], TEA_KETTLE_RETURN),
                              lambda _: ("yes", 0.59)) == "yes"
    # And a question beside the yes is no consent by itself
    asked = _understood(("Yes, just the one kettle?", "product_info", 0.6541, {"products": []}))
    assert consent_to_pending("Yes, how big is the kettle?", asked,
                              _proposed_return(["k1"], TEA_KETTLE_RETURN), lambda _: ("yes", 0.59)) is None


_TEA_KETTLE = {"product_id": "p-tk", "name": "Tea Kettle", "surface": "tea kettle"}


@pytest.mark.parametrize(("item_ids", "answer"), [
    (["k1"], "yes"),          # the proposal holds only what the yes names: it is the proposal
    (["k1", "m1"], None),     # it holds more: "only the tea kettle" is a condition
])
def test_a_yes_whose_only_condition_is_the_proposal_itself_is_consent(item_ids: list[str],
                                                                      answer: str | None) -> None:
    from csagent.understanding import consent_to_pending

    text = "Yes, is correct, only the tea kettle."
    understood = _understood((text, "smalltalk", 0.45, {"products": [_TEA_KETTLE]}))
    summary = TEA_KETTLE_RETURN if len(item_ids) == 1 else TEA_KETTLE_RETURN.replace(
        "($94.80).", "($94.80), Coffee Mug ($12.00).")
    assert consent_to_pending(text, understood, _proposed_return(item_ids, summary),
                              lambda _: ("other", 0.94)) == answer


def test_a_no_after_a_question_about_the_proposed_version_declines_it() -> None:
    from csagent.understanding import consent_to_pending

    # Given a proposed exchange of a shirt for one in cotton with a crew neck
    proposal = {"action": "exchange_items", "order_id": ORDER,
                "args": {"order_id": ORDER, "item_ids": ["s1"], "new_item_ids": ["s2"]}}
    pending = [PendingAction.model_validate({"action": "exchange_items", "summary": "Exchange ...",
                                             "proposal": proposal})]
    asked = {"order_id": ORDER, "item_ids": ["s1"], "new_item_ids": ["s2"], "asks_for_change": True}
    # When the customer asks about that version, then says no
    text = "Ah, it will be cotton and crew neck, not the same shirt? Then no, sorry, I keep the small one."
    understood = _understood(("Ah, it will be cotton and crew neck, not the same shirt?", "change_items",
                              0.75, asked),
                             ("no, sorry", "product_availability", 0.5, {}),
                             ("I keep the small one", "product_info", 0.39, {}))
    # Then it is the no
    assert consent_to_pending(text, understood, pending, lambda _: ("no", 0.92)) == "no"
    # And another version asked for, no question about it, is a request to propose again
    again = _understood(("no wait, the cotton crew neck one", "change_items", 0.75, asked))
    assert consent_to_pending("no wait, the cotton crew neck one", again, pending,
                              lambda _: ("no", 0.92)) is None


def _one_item_change(summary: str) -> list[PendingAction]:
    proposal = {"action": "modify_items", "order_id": ORDER,
                "args": {"order_id": ORDER, "payment_method_id": "paypal_1", "item_ids": ["k-1"],
                         "new_item_ids": ["k-2"]}}
    change = {"action": "modify_items", "summary": summary, "proposal": proposal}
    return [PendingAction.model_validate(change)]


@pytest.mark.parametrize(("text", "first_reading", "answer"), [
    # "only the kettle" is the one item proposed, and the proposal's own method comes with the yes
    ("Yes, only the kettle, nothing more. You can do it with my paypal.", "smalltalk", "yes"),
    # another item named is a condition, not the proposal
    ("Yes, only the lamp, nothing more. You can do it with my paypal.", "smalltalk", None),
])
def test_a_yes_naming_only_the_item_proposed_is_consent(text: str, first_reading: str,
                                                       answer: str | None) -> None:
    from csagent.understanding import consent_to_pending

    summary = ("Modify the items of order #W1234567: Electric Kettle (1.5L, plastic, black) -> (1.5L, "
               "plastic, white), $145.48 -> $149.45. Price difference: you pay $3.97 with your PayPal "
               "account (paypal_1).")
    first, second = text.split(". ", 1)
    paying = {"order_id": ORDER, "payment_method_id": "paypal_1", "asks_for_change": True}
    understood = _understood((first, first_reading, 0.45, {}), (second, "change_payment", 0.75, paying))
    assert consent_to_pending(text, understood, _one_item_change(summary)) == answer


@pytest.mark.parametrize(("text", "answer"), [
    # "yes, only change this one, confirm": read as some request of that order
    ("对，只改这一个，确认。", "yes"),
    ("yes, and change the address of that order too", None),  # another change of it, asked for
])
def test_a_yes_beside_a_clause_naming_only_the_proposals_order(text: str, answer: str | None) -> None:
    from csagent.understanding import consent_to_pending

    pending = _proposed_change("paypal_1", "Price difference: $7.78 is refunded to your PayPal account.")
    entities = {"order_id": ORDER, "order_status": "pending", "grounded_orders": [ORDER],
                "grounded": {"order": "the order we talked about", "by": "conversation"}}
    said = Understanding("knowledge_and_actions", "change_order_address", 0.75, clauses=(
        Clause(text=text, intent="change_order_address", confidence=0.75, entities=entities),))
    assert consent_to_pending(text, said, pending, reader=lambda _t: None) == answer
