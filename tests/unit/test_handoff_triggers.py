"""When a turn goes to a human: each trigger on its own, none for a normal turn, the urgency,
and the frustration / explicit-request lexicons on real-sounding messages (true and false
positives). Pure functions: no AWS, no graph."""

from __future__ import annotations

from typing import Any

import pytest

from csagent.domain.actions import ActionName, ActionProposal, PendingAction
from csagent.graph.nodes.confirm_actions import execute_task
from csagent.handoff.triggers import (
    WEAK_HANDOFF,
    HandoffReason,
    TaskOutcome,
    TriggerPolicy,
    TurnSignals,
    Urgency,
    asks_for_person_now,
    detect_frustration,
    evaluate,
    is_explicit_request,
    says_asked_before,
    signals_from_state,
)

WHERE = "Where is order #W2611340?"


def ok(task_id: str = "t1", task_type: str = "tracking") -> TaskOutcome:
    return TaskOutcome(task_id=task_id, task_type=task_type, status="success")


def failed(error_type: str, task_id: str = "t1", task_type: str = "tracking",
           attempts: int = 1) -> TaskOutcome:
    return TaskOutcome(task_id=task_id, task_type=task_type, status="failed", error_type=error_type,
                       attempts=attempts)


def turn(*outcomes: TaskOutcome, text: str = WHERE, **kwargs: Any) -> TurnSignals:
    return TurnSignals(texts=(text,), intents=("tracking",), route="knowledge_and_actions",
                       outcomes=outcomes, **kwargs)


# ----------------------------------------------------------------------------------------------
# No trigger
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("signals", [
    turn(ok()),
    turn(ok("t1"), ok("t2", "warranty"), text="Where is #W2611340 and what is the warranty on them?"),
    turn(),
    TurnSignals(texts=("hi there!",), intents=("greeting",), route="general"),
    turn(ok(), amount_at_stake=950.0),
], ids=["one-answer", "two-answers", "nothing-planned", "greeting", "big-amount-but-answered"])
def test_a_normal_turn_stays_with_the_assistant(signals: TurnSignals) -> None:
    # Given a turn the assistant answered without trouble, in calm words
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then nobody is called in
    assert decision is None


@pytest.mark.parametrize("outcome", [
    failed("timeout"), failed("transient"), failed("no_results"), failed("validation"),
    failed("low_confidence"), failed("permission_denied"),
], ids=lambda o: o.error_type)
def test_a_single_failure_the_healer_can_handle_does_not_hand_off(outcome: TaskOutcome) -> None:
    # Given one task that failed once (a retry, a clarification or a fallback can still fix it)
    signals = turn(outcome)
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then the turn stays with the assistant
    assert decision is None


# ----------------------------------------------------------------------------------------------
# Each trigger alone
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("signals", [
    TurnSignals(texts=("agent please",), intents=("human_handoff",), route="handoff"),  # with its intent
    TurnSignals(texts=("agent please",), intents=("tracking", "human_handoff"),
                route="knowledge_and_actions"),
    TurnSignals(texts=("Can I talk to a real person about my refund?",), intents=("refund_status",)),
    TurnSignals(texts=("我要转人工",), intents=("out_of_scope",), route="out_of_scope"),
], ids=["route", "clause-intent", "english-words", "chinese-words"])
def test_asking_for_a_person_hands_off_with_low_urgency(signals: TurnSignals) -> None:
    # Given a customer who asks for a person (by intent, or in words the classifier missed)
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then the turn goes to a human, for that reason only, without urgency
    assert decision is not None
    assert decision.reasons == (HandoffReason.EXPLICIT_REQUEST,)
    assert decision.urgency is Urgency.LOW


def test_a_business_rule_conflict_alone_is_explained_not_handed_off() -> None:
    # Given a return the store's policy refused, and a customer who did not ask for a person
    signals = turn(failed("business_rule_violation", task_type="return_items"), text="I want to return it")
    # When the triggers are evaluated
    # Then the assistant keeps the conversation: the reply explains the rule and what is allowed
    assert evaluate(signals) is None


def test_a_business_rule_conflict_goes_to_a_person_when_the_customer_asks() -> None:
    # Given a refused return, and a customer who asks for a person
    signals = turn(failed("business_rule_violation", task_type="return_items"),
                   text="I want to return it, let me talk to a person")
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then a person decides on the exception, with both reasons known
    assert decision is not None
    assert set(decision.reasons) == {HandoffReason.EXPLICIT_REQUEST, HandoffReason.BUSINESS_RULE_CONFLICT}
    assert decision.urgency is Urgency.NORMAL


@pytest.mark.parametrize("signals", [
    turn(failed("timeout", attempts=2)),
    turn(failed("timeout", "t1"), failed("transient", "t2", "order_items")),
    turn(failed("unknown"), failed_turns_before=1),
], ids=["retries-exhausted", "two-tasks-failed", "second-failed-turn-in-a-row"])
def test_repeated_system_failure_hands_off_with_high_urgency(signals: TurnSignals) -> None:
    # Given system failures that retrying did not cure
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then the turn goes to a human, urgently
    assert decision is not None
    assert decision.reasons == (HandoffReason.REPEATED_FAILURE,)
    assert decision.urgency is Urgency.HIGH


def test_the_repeated_failure_threshold_comes_from_the_policy() -> None:
    # Given a task that failed twice, and a policy that tolerates three attempts
    signals = turn(failed("timeout", attempts=2))
    # When the triggers are evaluated with that policy
    decision = evaluate(signals, TriggerPolicy(repeated_failures=3))
    # Then it is not yet a repeated failure
    assert decision is None


def test_exceeding_the_node_budget_hands_off_with_normal_urgency() -> None:
    # Given a turn the graph stopped at its node budget
    signals = turn(ok(), node_budget_exceeded=True)
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then a person finishes it
    assert decision is not None
    assert decision.reasons == (HandoffReason.NODE_BUDGET_EXCEEDED,)
    assert decision.urgency is Urgency.NORMAL


def test_an_angry_question_answered_is_answered_not_handed_off() -> None:
    # Given a tracking question answered fine, asked in anger, on the first angry turn
    signals = turn(ok(), text="This is ridiculous, where is order #W2611340???")
    # When the triggers are evaluated / Then the answer stands: anger heard is not passed on
    assert evaluate(signals) is None


def test_frustration_that_persists_is_handed_off_urgently() -> None:
    # Given the same angry words after a turn that was frustrated already
    signals = turn(ok(), text="This is ridiculous, where is order #W2611340???", frustrated_turns_before=1)
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then the turn goes to a human, urgently, and the cues are recorded
    assert decision is not None
    assert decision.reasons == (HandoffReason.FRUSTRATION,)
    assert decision.urgency is Urgency.HIGH
    assert "word:ridiculous" in decision.frustration.cues


def test_frustration_with_a_failed_task_is_handed_off() -> None:
    # Given an angry customer whose lookup failed this turn
    decision = evaluate(turn(failed("no_results"), text="This is ridiculous, where is order #W2611340???"))
    # Then a person takes over
    assert decision is not None and HandoffReason.FRUSTRATION in decision.reasons


def test_a_blocked_request_in_anger_is_explained_first_and_handed_off_when_the_customer_insists() -> None:
    blocked = failed("business_rule_violation", task_type="cancel_order")
    angry = "This is ridiculous, cancel it NOW!!!"
    # Given a cancellation the policy blocks, asked in anger for the first time
    # Then the rule is explained (no handoff)
    assert evaluate(turn(blocked, text=angry)) is None
    # And when the customer insists, angry again, a person takes over
    decision = evaluate(turn(blocked, text=angry, frustrated_turns_before=1))
    assert decision is not None
    assert decision.reasons[0] is HandoffReason.BUSINESS_RULE_CONFLICT


# ----------------------------------------------------------------------------------------------
# Several triggers, urgency
# ----------------------------------------------------------------------------------------------
def test_every_reason_that_fired_is_kept_strongest_first() -> None:
    # Given an angry customer asking for a person after a policy refusal and two timeouts
    signals = TurnSignals(
        texts=("I want to speak to a human about a warranty claim, this is unacceptable!!",), route="handoff",
        outcomes=(failed("business_rule_violation", "t1", "return_items"),
                  failed("timeout", "t2", attempts=2)),
        node_budget_exceeded=True)
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then every reason is listed in priority order, and the explicit request leads
    assert decision is not None
    assert decision.reasons == tuple(HandoffReason)
    assert decision.reason is HandoffReason.EXPLICIT_REQUEST


@pytest.mark.parametrize(("amount", "urgency"), [(None, Urgency.NORMAL), (199.99, Urgency.NORMAL),
                                                 (200.0, Urgency.HIGH), (1250.0, Urgency.HIGH)])
def test_money_at_stake_from_the_threshold_up_makes_a_handoff_urgent(amount: float | None,
                                                                      urgency: Urgency) -> None:
    # Given a refused refund of `amount`, and a customer who asks for a person about it
    signals = turn(failed("business_rule_violation", task_type="return_items"), amount_at_stake=amount,
                   text="let me talk to a person about this refund")
    # When the triggers are evaluated with the default threshold (200)
    decision = evaluate(signals)
    # Then the urgency is high from the threshold up, and the amount travels with the decision
    assert decision is not None
    assert decision.urgency is urgency
    assert decision.amount_at_stake == amount


def test_asking_for_a_person_after_a_failure_is_normal_urgency() -> None:
    # Given a customer asking for a person after one lookup timed out
    signals = TurnSignals(texts=("let me talk to someone",), route="handoff", outcomes=(failed("timeout"),))
    # When the triggers are evaluated
    decision = evaluate(signals)
    # Then the request is not merely informational: normal urgency
    assert decision is not None
    assert decision.urgency is Urgency.NORMAL


# ----------------------------------------------------------------------------------------------
# Frustration lexicon
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "This is ridiculous, where is my order?",
    "WHERE IS MY ORDER!!!",
    "I've asked for the third time and still nothing",
    "You\u2019re useless",
    "I am so frustrated with this store",
    "Worst service ever!!",
    "This is not acceptable",
    "sooooo disappointed",
    "Are you kidding me?! It's broken again",
    "I'm fed up with waiting",
    "No, I'm angry.",
    "I paid a crazy amount for this and it's useless",
    "太离谱了，我要投诉！！",
    "气死我了",
])
def test_frustrated_messages_are_recognised(text: str) -> None:
    # Given a message a person would read as frustrated
    # When it is scored
    reading = detect_frustration(text)
    # Then it is frustrated
    assert reading.frustrated, reading


@pytest.mark.parametrize("text", [
    WHERE,
    "I'm not angry, just wondering where my order is",
    "What's the worst case delivery time?",
    "Is the USB-C charger included with the UPS shipment?",
    "Thanks!! That was fast",
    "My kids were upset the toy broke, can I return it?",
    "I'm disappointed with the color, can I exchange it?",
    "WHERE IS MY ORDER???",
    "Can I get a refund to my PayPal? No rush.",
    "Not frustrated at all, great service",
    "我不生气，只是问问",
    "我的订单到哪了？",
    # a count asked for is not exasperation ("how many times do I have to tell you" is)
    "Could you please check how many times I was actually charged for it?",
    # a degree word on a quantity measures it ("this is ridiculous" is exasperation)
    "I drink a ridiculous amount of water, what's your biggest bottle?",
    "I ordered an insane number of candles for the wedding, did they all ship?",
])
def test_calm_or_mildly_unhappy_messages_are_not_frustrated(text: str) -> None:
    # Given a calm message, a negated complaint, an acronym-heavy question or one mild word
    # When it is scored
    reading = detect_frustration(text)
    # Then it is not frustrated (a mild cue alone is not enough)
    assert not reading.frustrated, reading


def test_shouting_plus_exclamation_marks_add_up_to_frustration() -> None:
    # Given the same question shouted, once with "???" and once with "!!!"
    # When both are scored
    asking, shouting = detect_frustration("WHERE IS MY ORDER???"), detect_frustration("WHERE IS MY ORDER!!!")
    # Then both are noticed, but only the second crosses the threshold
    assert "shouting" in asking.cues and not asking.frustrated
    assert shouting.cues == ("shouting", "exclamation_run") and shouting.frustrated


# ----------------------------------------------------------------------------------------------
# Explicit-request lexicon
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("I want to speak to a human", True),
    ("Please transfer me to an agent", True),
    ("Can I talk to a real person?", True),
    ("I'd like to speak to your manager", True),
    ("转人工", True),
    ("Are you a real person?", False),
    ("am i talking to a bot or a real person here?", False),
    ("no bots please, I want a real person", True),
    ("I don't need to talk to a human, just tell me the status", False),
    ("What does the warranty cover?", False),
    ("I am a manager at a small company, do you sell in bulk?", False),
    ("it is three days now. Please, I need somebody to investigate.", True),
    ("I need someone to sign for it at home", False),
])
def test_asking_for_a_person_in_words(text: str, expected: bool) -> None:
    # Given a message that does or does not ask for a person
    # When the lexicon reads it
    # Then only a real request counts (questions about the bot, negations do not)
    assert is_explicit_request(text) is expected


@pytest.mark.parametrize("text", ["Can you connect me with a human agent?",
                                  "connect me with a human agent if possible"])
def test_a_request_for_a_person_without_a_condition_is_for_now(text: str) -> None:
    # Given a clause asking for a person, next to an order complaint
    clauses = [{"text": text, "intent": "human_handoff"},
               {"text": "My espresso machine from #W9183908 is leaking", "intent": "product_info"}]
    # When read / Then the person is wanted now
    assert asks_for_person_now(clauses)


@pytest.mark.parametrize("text", ["if it's lost I want to talk to a human",
                                  "I want to talk to a human in case it never arrives"])
def test_a_request_for_a_person_on_a_condition_waits_for_the_answer(text: str) -> None:
    # Given an order question and a request for a person that depends on its answer
    clauses = [{"text": "where is order #W7678072?", "intent": "order_status"},
               {"text": text, "intent": "human_handoff"}]
    # When read / Then the question is answered first
    assert not asks_for_person_now(clauses)


# ----------------------------------------------------------------------------------------------
# From the graph state
# ----------------------------------------------------------------------------------------------
def action_task(task_id: str, action: str, order_id: str) -> dict[str, Any]:
    """A `customer_actions` task proposing `action` on `order_id`, as the planner writes it."""
    return {"task_id": task_id, "task_type": action, "tool": "customer_actions",
            "args": {"action": action, "args": {"order_id": order_id}}}


def proposed(action: str, order_id: str, amount: float | None) -> dict[str, Any]:
    """A `customer_actions` result proposing `action`, its refund `amount` listed back."""
    proposal = {"action": action, "order_id": order_id, "args": {"order_id": order_id}, "amount": amount}
    return {"status": "success", "data": {"phase": "propose", "action": action, "order_id": order_id,
                                          "proposal": proposal, "amount": amount}}


def test_signals_are_read_from_the_graph_state() -> None:
    # Given a turn's state: a return proposed with a refund of $310.50, a cancellation refused by
    # policy after 2 attempts, one lookup never run
    state = {
        "text": "refund my order", "route": "knowledge_and_actions", "intent": "return_request",
        "clauses": [{"text": "refund my order", "intent": "return_request"}],
        "tasks": [action_task("t1", "return_items", "#W2611340"),
                  action_task("t2", "cancel_order", "#W4817420"),
                  {"task_id": "t3", "task_type": "tracking", "tool": "predefined_cypher", "args": {}}],
        "results": {"t1": proposed("return_items", "#W2611340", 310.5),
                    "t2": {"status": "failed", "attempts": 2,
                           "error": {"type": "business_rule_violation", "message": "already shipped"}}},
        "consecutive_failed_turns": 1, "trace": {"budget_exceeded": True},
    }
    # When the signals are read
    signals = signals_from_state(state)
    # Then statuses, error types, attempts, the amount and the counters come through
    assert signals.outcomes == (
        TaskOutcome("t1", "return_items", "success", None, 1),
        TaskOutcome("t2", "cancel_order", "failed", "business_rule_violation", 2),
        TaskOutcome("t3", "tracking", "skipped", None, 1),
    )
    assert signals.amount_at_stake == 310.5
    assert (signals.failed_turns_before, signals.node_budget_exceeded) == (1, True)
    assert signals.intents == ("return_request", "return_request")


def test_the_money_at_stake_is_the_largest_refund_a_proposed_change_lists_back() -> None:
    # Given two returns proposed in one turn, and one proposing no refund
    state = {"text": "return both", "tasks": [action_task("t1", "return_items", "#W2611340"),
                                              action_task("t2", "return_items", "#W4817420"),
                                              action_task("t3", "exchange_items", "#W5166363")],
             "results": {"t1": proposed("return_items", "#W2611340", 120.0),
                         "t2": proposed("return_items", "#W4817420", 310.5),
                         "t3": proposed("exchange_items", "#W5166363", None)}}
    # When the signals are read / Then the larger refund is what is at stake
    assert signals_from_state(state).amount_at_stake == 310.5


@pytest.mark.parametrize("result", [
    {"status": "success", "data": {"phase": "execute", "action": "return_items", "order_id": "#W2611340",
                                   "message": "Your return is on its way."}},
    {"status": "failed", "attempts": 3, "error": {"type": "transient", "message": "store unavailable"}},
], ids=["made", "failed"])
def test_the_money_at_stake_of_a_confirmed_change_is_the_amount_the_customer_confirmed(
        result: dict[str, Any]) -> None:
    # Given the customer said yes to a return listing back a refund of $310.50: its execute task, as
    # the confirmation step builds it from the pending change, made or failed
    proposal = ActionProposal.model_validate({"action": "return_items", "order_id": "#W2611340",
                                              "args": {"order_id": "#W2611340"}, "amount": 310.5})
    task = execute_task(0, PendingAction(action=ActionName.RETURN_ITEMS, proposal=proposal, amount=310.5))
    state = {"text": "yes", "route": "confirmation", "intent": "confirm_yes",
             "tasks": [task.model_dump(mode="json")], "results": {task.task_id: result}}
    # When the signals are read / Then the refund confirmed is what is at stake
    assert signals_from_state(state).amount_at_stake == 310.5


def test_an_amount_in_a_key_no_tool_declares_is_not_money_at_stake() -> None:
    # Given an amount under keys no task's arguments nor any tool's data declare: beside an
    # action's arguments, a lookup's parameters, and a lookup's result data (kept as given)
    state = {"text": "refund my order", "tasks": [
        {"task_id": "t1", "task_type": "return_items", "tool": "customer_actions",
         "args": {"action": "return_items", "args": {"order_id": "#W2611340"}, "amount": 310.5}},
        {"task_id": "t2", "task_type": "order_status", "tool": "predefined_cypher",
         "args": {"template_id": "order_overview",
                  "params": {"order_id": "#W2611340", "refund_amount": 99}}}],
        "results": {"t1": {"status": "failed", "error": {"type": "business_rule_violation", "message": "no"}},
                    "t2": {"status": "success", "data": {"template_id": "order_overview",
                                                         "row": {"total": 310.5}, "amount_at_stake": 310.5}}}}
    # When the signals are read / Then no money is at stake: only a proposed change lists it back
    assert signals_from_state(state).amount_at_stake is None


def test_a_handoff_read_weakly_beside_a_request_is_not_asked_for_even_as_the_messages_first_intent() -> None:
    # Given "my daughter told me I could message you here" read weakly as a handoff, first, beside
    # an order question read surely: the message's intent is the first clause's
    weak = WEAK_HANDOFF - 0.1
    state = {
        "text": "My daughter told me I could just message you here. Has order #W6689278 shipped?",
        "route": "knowledge_and_actions", "intent": "human_handoff",
        "clauses": [{"text": "My daughter told me I could just message you here", "intent": "human_handoff",
                     "confidence": weak},
                    {"text": "Has order #W6689278 shipped?", "intent": "order_status", "confidence": 0.9}],
        "tasks": [{"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher", "args": {}}],
        "results": {"t1": {"status": "success", "data": {}}},
    }
    # Then nobody asked for a person: the turn is not handed off
    assert not asks_for_person_now(state["clauses"])
    assert evaluate(signals_from_state(state)) is None


@pytest.mark.parametrize("text", ["Are you even a real person or just another useless bot?",
                                  "am I talking to a bot?", "r u a human"])
def test_a_question_about_who_answers_is_no_request_for_a_person(text: str) -> None:
    # Given a question about what the assistant is, read by the classifier as a handoff
    clauses = [{"text": text, "intent": "human_handoff", "confidence": 0.95},
               {"text": "Just tell me where my tea kettle is", "intent": "order_status", "confidence": 0.9}]
    state = {"text": text, "route": "knowledge_and_actions", "intent": "human_handoff", "clauses": clauses}
    # Then it is no request for one (the words for one still are: "are you real? let me talk to a human")
    assert not asks_for_person_now(clauses)
    assert evaluate(signals_from_state(state)) is None
    assert asks_for_person_now([{"text": f"{text} let me talk to a human", "intent": "human_handoff"}])


def test_a_failure_the_reply_left_unsaid_is_not_a_failed_turn_for_an_angry_customer() -> None:
    # Given an angry customer whose order facts were given, beside a supplementary policy search
    # that found nothing (the reply leaves it unsaid as moot)
    state = {
        "text": "Where's my action camera?! I needed it for a trip and the trip is OVER. Useless.",
        "route": "knowledge_and_actions",
        "clauses": [{"text": "Where's my action camera?!", "intent": "order_status"}],
        "tasks": [{"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher", "args": {}},
                  {"task_id": "t2", "task_type": "policy", "tool": "knowledge_search",
                   "args": {"supplementary": True}}],
        "results": {"t1": {"status": "success", "data": {}},
                    "t2": {"status": "failed", "error": {"type": "no_results", "message": "nothing"}}},
    }
    # When the turn's reply said the miss, anger plus a failure calls for a person
    assert evaluate(signals_from_state(state)).reasons == (HandoffReason.FRUSTRATION,)
    # Then, when the reply left the miss unsaid, the answered anger is heard, not escalated
    unsaid = signals_from_state({**state, "trace": {"unsaid_failures": ["t2"]}})
    assert [o.task_id for o in unsaid.outcomes] == ["t1"]
    assert evaluate(unsaid) is None


@pytest.mark.parametrize(("text", "asked"), [
    ("THIS IS THE THIRD TIME I'M ASKING!!! where is #W7449508?!", True),
    ("I already asked you this yesterday, where is my refund", True),
    ("how many times do I have to tell you", True),
    ("where is my refund", False),
    ("is this the first time you ship to Canada?", False),
])
def test_words_that_say_it_was_asked_before(text: str, asked: bool) -> None:
    assert says_asked_before(text) is asked


def test_frustration_in_words_that_say_it_was_asked_before_insists() -> None:
    # Given an angry first message that says it has been asked before
    decision = evaluate(turn(ok(), text="THIS IS THE THIRD TIME I'M ASKING!!! where is #W7449508?! useless"))
    # Then it insists: a person takes over
    assert decision is not None and decision.reasons == (HandoffReason.FRUSTRATION,)


@pytest.mark.parametrize(("text", "process"), [
    ("my blender stopped working after a month, I want to file a warranty claim", True),
    ("Could you open an investigation with the carrier? The parcel never came.", True),
    ("我的耳机坏了，想申请保修", True),
    ("how long is the warranty on the blender?", False),
    ("I don't want to make a claim, just tell me the warranty period", False),
    # the warranty's remedy asked for, in the customer's own words
    ("The laptop died already, not dropped, not wet. I want it fixed or replaced under warranty.", True),
    ("My camera have a defect, it not turn on. I want to use the warranty for repair it.", True),
    # a question whether the warranty would do it is not a claim
    ("will the warranty replace it?", False),
    ("does the warranty cover repairs?", False),
    # "保修" is the warranty; its "修" asks for no repair
    ("请问我买的耳机保修期是多久？", False),
])
def test_a_warranty_claim_or_a_carrier_investigation_is_run_by_our_team(text: str, process: bool) -> None:
    # Given a message that asks to start a claim or an investigation (or only asks about one)
    decision = evaluate(turn(ok("t1", "warranty"), text=text))
    # Then it goes to a person only when it asks to start one, as a staff process
    assert (decision is not None and decision.reason is HandoffReason.STAFF_PROCESS) is process


def test_a_weak_handoff_reading_beside_a_sure_request_is_not_a_request_for_a_person() -> None:
    from csagent.handoff.triggers import asks_for_person_now, signals_from_state

    # Given "my sister told me to just message you guys. I'd like to track order #W1", the first
    # clause weakly read as a handoff, the second surely as tracking
    clauses = [{"intent": "human_handoff", "confidence": 0.39,
                "text": "my sister told me to just message you guys"},
               {"intent": "tracking", "confidence": 0.84, "text": "I'd like to track order #W4125188"}]
    # Then nobody is asked for, neither before the turn nor after it
    assert not asks_for_person_now(clauses)
    state = {"text": "...", "route": "knowledge_and_actions", "intent": "tracking", "clauses": clauses}
    assert evaluate(signals_from_state(state)) is None
    # while the same weak reading alone, or the customer's own words for a person, still hand off
    assert asks_for_person_now(clauses[:1])
    assert asks_for_person_now([{**clauses[0], "text": "can I talk to a real person?"}, clauses[1]])


def test_the_route_alone_is_not_a_request_for_a_person() -> None:
    # Given a turn the route sent to a person because the customer is frustrated (no words for a person)
    signals = TurnSignals(texts=("ugh this is ridiculous, where is my stuff",), intents=("account_info",),
                          route="handoff")
    # Then the triggers do not call it an explicit request
    decision = evaluate(signals)
    assert decision is None or HandoffReason.EXPLICIT_REQUEST not in decision.reasons
