"""route: decide which path a message takes, with a confidence.

Every label `route_by_label` can see has an edge; anything unknown or under the confidence
floor goes to clarification, never to an error or a silent end. Three overrides of what the
understanding says: a request neither the business scope nor the intent examples vouch for is
out of scope; a customer who asks for a person (without a condition such as "if it's lost")
goes to one first, whatever else the message asks, so no lookup runs or fails before the
handoff; and a frustrated customer, or one who asks for a warranty claim or a carrier
investigation (which our team runs), who gave us nothing we can act on goes to a person rather
than being asked a clarifying question or refused. A yes to a proposal followed by questions
("yes, go ahead. how soon is the money back?") confirms it and keeps the questions for the same
reply.
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.actions import ActionName, ActionProposal, PendingAction
from csagent.graph.context import GraphDeps
from csagent.graph.state import State, pending_actions
from csagent.graph.timing import timed
from csagent.handoff.triggers import (
    asks_for_person_now,
    detect_frustration,
    staff_process_in_turn,
)
from csagent.nlp.confirmation import classify_confirmation
from csagent.nlp.script import has_question_mark
from csagent.planning import plan_tasks
from csagent.requests import ACTION_INTENTS
from csagent.understanding import (
    ITEM_REQUESTS,
    MIN_CLAUSE_CONFIDENCE,
    OUT_OF_SCOPE_DOUBT,
    PASSIVE_INTENTS,
    THANKS_WORDS,
    Understanding,
    carry_out_asked_change,
    consent_to_pending,
    consent_with_questions,
    resume_awaiting,
)

ROUTE_TO_NODE = {
    "confirmation": "confirm_actions",
    "handoff": "hand_off",
    "image": "read_image",
    "general": "respond_general",
    "clarify": "clarify",
    "knowledge_and_actions": "plan",
    "out_of_scope": "clarify",
}
MIN_CONFIDENCE = MIN_CLAUSE_CONFIDENCE


@timed("route")
def route(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    pending = pending_actions(state)
    set_aside: dict[str, Any] = {}
    answer = classify_confirmation(state.get("text", ""))
    if pending and answer is not None:
        return {"route": "confirmation", "confidence": 1.0, "intent": f"confirm_{answer}"}
    if not pending and answer == "no":
        # "nah, leave it" after a question: nothing is changed, and that is the whole answer.
        return {"route": "confirmation", "confidence": 1.0, "intent": "confirm_no"}
    asked = (state.get("memory") or {}).get("last_change")
    understanding = _understood(state) or runtime.context.understand(state.get("text", ""), state)
    if not pending and answer == "yes" and not state.get("awaiting") and not asked \
            and not _thanks(understanding, state.get("text", "")):
        # "sure, do it" with nothing proposed: ask what to do, never refuse it as off-topic ("bet,
        # thx" is thanks).
        return {"route": "clarify", "confidence": 1.0, "intent": "confirm_yes"}
    resumed = resume_awaiting(understanding, state.get("awaiting") or [], state.get("text", ""))
    keeps = _keeps_it_as_is(state.get("text", ""))
    if not pending and resumed is None and not _asks_a_question(state.get("text", "")) \
            and (_was_asked(state) or _opens_with_no(state.get("text", "")) or keeps) \
            and consent_to_pending(state.get("text", ""), understanding, _asked_about(state),
                                   asked_orders=_orders_asked_about(state, keeps=keeps)) == "no":
        # "Actually, no, don't change it. I'll be home after all.", or "never mind, I'll keep it"
        # when asked which items: nothing to do, and nothing done ("It never came. Could you open
        # an investigation?" leans no, but asks something; "are u a bot or a real person lol"
        # answers nothing that was asked).
        return {"route": "confirmation", "confidence": 1.0, "intent": "confirm_no"}
    if not pending and resumed is None and state.get("awaiting") \
            and not _asks_a_question(state.get("text", "")) \
            and consent_to_pending(state.get("text", ""), understanding, []) == "yes":
        # "Yes perfect, please do that!" when asked which order: a yes answers nothing that was
        # asked, so the question is put again (never refused as off-topic).
        awaiting = list(state.get("awaiting") or [])
        # (its clauses are the requests still waiting: what grounding found for them may be said again)
        return {"route": "clarify", "confidence": 1.0, "intent": "confirm_yes",
                "trace": {"missing": awaiting},
                "clauses": [{"text": str(w.get("text") or ""), "intent": str(w.get("intent") or ""),
                             "confidence": 1.0, "entities": dict(w.get("entities") or {})} for w in awaiting]}
    if not pending and resumed is not None and _ends_with_no(state.get("text", ""), _cancelling(state)) \
            and any(c.entities.get("picked_candidate") for c in understanding.clauses):
        # "Wait, the red helmet is in that order too? No. Forget it then, leave the whole thing as
        # it is.": the answer picks an order only to call the request off ("dont need it anymore",
        # asked why, is the reason).
        return {"route": "confirmation", "confidence": 1.0, "intent": "confirm_no"}
    if pending:
        # "yes, that's what I said": an answer in more words, asking for nothing new ("let's keep
        # the puzzle, just the sunglasses" is the proposal again, narrowed, however much it leans no).
        amends = any(c.entities.get("amends_pending") for c in understanding.clauses)
        answer = None if amends else consent_to_pending(state.get("text", ""), understanding, pending)
        if answer is not None:
            return {"route": "confirmation", "confidence": 1.0, "intent": f"confirm_{answer}"}
        questions = None if amends else consent_with_questions(state.get("text", ""), understanding, pending)
        if questions:
            # "Yes, please go ahead. How soon will the money be back?": the change is made and the
            # questions after the yes are answered in the same reply (`confirm_actions`).
            return {"route": "confirmation", "confidence": 1.0, "intent": "confirm_yes",
                    "lang": understanding.lang, "clauses": [asdict(c) for c in questions]}
        if _only_asks(state.get("text", ""), understanding) \
                or any(c.entities.get("adds_to_pending") for c in understanding.clauses):
            # "oh wait before I say yes, does the black pair cost more?": the question is answered
            # and the change still waits for the yes (`summarise` puts it again); so does one beside
            # another change of its kind asked for ("could I also send back the coffee maker from my
            # other order?"), both proposed.
            set_aside = {"trace": {"kept_pending": [p.listed(understanding.lang) for p in pending]}}
        else:
            # Anything else: the proposed change is not made, and the reply says so (unless the
            # proposal is put again, amended or as it was: "actually no, the visa").
            listed = [] if amends else [p.listed(understanding.lang) for p in pending]
            set_aside = {"pending_actions": [], "trace": {"set_aside": listed}}
    if resumed is not None:
        understanding = resumed
    elif not pending and not state.get("awaiting"):
        # "if I send back the bottle, how much do I get back?" ... "ok do it": that change.
        understanding = carry_out_asked_change(state.get("text", ""), understanding, asked) or understanding
    scope = (state.get("trace") or {}).get("scope") or {}
    if scope and not scope.get("in_scope") and understanding.route == "knowledge_and_actions" \
            and understanding.confidence < OUT_OF_SCOPE_DOUBT and not _names_store_facts(understanding) \
            and understanding.lang != "zh":
        # Neither the business scope nor the intent examples vouch for it, and it names nothing the
        # store sells ("do you sell shoes at all?" does) nor an order or an address of the
        # customer's ("it is my old home. Please change to 18 Willow Bend, ..."): say what we can do.
        # Chinese is judged by the scope's keywords alone, which cannot outvote a store reading
        # ("你们卖帐篷吗？", do you sell tents?, names no keyword and is answered from the catalogue).
        # Thanks or a greeting beside it is what is left to answer ("ohh wait thats my brothers
        # place lol. ok nvm all good, thx!"): never a refusal.
        # (not beside a question: "what's the capital of peru? thanks" is refused)
        from csagent.nlp.speech_acts import asks_something

        courtesy = next((c.intent for c in understanding.clauses if c.intent in ("thanks", "greeting")), None)
        asked = any(asks_something(c.text) for c in understanding.clauses
                    if c.intent not in ("thanks", "greeting"))
        understanding = replace(understanding, route="general", intent=courtesy) if courtesy and not asked \
            else replace(understanding, route="out_of_scope")
    guard = state.get("trace") or {}
    if guard.get("guard") == "passed_without_flagged_sentences" and understanding.route == "general" \
            and guard.get("dropped_off_topic") is not False:
        # The screen dropped sentences that looked like an attack ("can you help me write a cover
        # letter?") and only courtesy is left: something was asked that we will not do, so say
        # what we can do rather than "you're welcome". Dropped words about the store ("your store
        # has been lovely to order from. Have a nice evening!") leave the courtesy to answer.
        understanding = replace(understanding, route="out_of_scope")
    if understanding.route == "knowledge_and_actions" and _asks_for_staff_process(state, understanding):
        understanding = _without_item_requests(understanding)
    if asks_for_person_now(understanding.clauses_as_dicts()):
        understanding = replace(understanding, route="handoff", intent="human_handoff", confidence=1.0)
    elif _frustrated_with_nothing_to_do(state, understanding) or (
            _asks_for_staff_process(state, understanding) and _nothing_to_do(state, understanding)):
        understanding = replace(understanding, route="handoff", confidence=1.0)
    if understanding.route == "out_of_scope" and (_points_back_at_the_last_reply(state)
                                                  or (set_aside.get("trace") or {}).get("set_aside")):
        # "Oof, four. And which one of those is going to Florida again?" after the orders listed,
        # "And how much is still on it?" after the gift card's rule: a question about what the
        # store's last reply named is the store's, however its words read alone; asked again,
        # never refused. So is whatever is said instead of a yes or no to a proposal.
        understanding = replace(understanding, route="clarify")
    kept = (set_aside.get("trace") or {}).get("kept_pending")
    if kept and understanding.route != "knowledge_and_actions":
        # (only the store's answers can sit beside a change still proposed)
        set_aside = {"pending_actions": [], "trace": {"set_aside": kept}}
    set_aside = {**set_aside, "awaiting": []}
    if state.get("attachments") and understanding.route != "handoff":
        # The picture decides what to do; the text says what the customer wants of it.
        return {"route": "image", "confidence": 1.0, "intent": understanding.intent,
                "lang": understanding.lang, "entities": understanding.entities,
                "clauses": understanding.clauses_as_dicts(), **set_aside}
    return {**set_aside,
        "route": understanding.route,
        "confidence": understanding.confidence,
        "intent": understanding.intent,
        "lang": understanding.lang,
        "entities": understanding.entities,
        "clauses": understanding.clauses_as_dicts(),
    }


def _understood(state: State) -> Understanding | None:
    """The input guard's understanding of this turn's text, when it read it (`guard_input`)."""
    kept = state.get("understood") or {}
    if not kept.get("understanding") or kept.get("text") != state.get("text", ""):
        return None
    return Understanding.from_dict(kept["understanding"])


def _points_back_at_the_last_reply(state: State) -> bool:
    """Does the message ask a question pointing back ("those", "it", "which one") at the store's last
    reply?"""
    from csagent.nlp.speech_acts import asks_something

    text = state.get("text", "")
    replied = any(m.get("role") == "assistant" for m in state.get("messages") or [])
    # (asked without a question mark too: "ok hows much is even on it")
    return replied and (_asks_a_question(text) or asks_something(text)) and bool(_POINTS_BACK.search(text))


# Words pointing back at what was just said ("Is that the one with the black dial?").
_POINTS_BACK = re.compile(
    r"\b(?:those|these|them|em|they|it|that|this|the one|which one|which of)\b", re.IGNORECASE)


def _thanks(understanding: Understanding, text: str = "") -> bool:
    """Does the message thank: a clause read as thanks, or words of thanks in a message that asks for
    nothing ("cool thx, thats all", read as small talk)?"""
    if any(c.intent == "thanks" and c.confidence >= MIN_CONFIDENCE for c in understanding.clauses):
        return True
    return bool(THANKS_WORDS.search(text)) and all(c.intent in PASSIVE_INTENTS for c in understanding.clauses)


def _was_asked(state: State) -> bool:
    """Did the assistant's last reply ask something (a detail, or whether to go on)?"""
    if state.get("awaiting"):
        return True
    replies = [m for m in state.get("messages") or [] if m.get("role") == "assistant"]
    return bool(replies) and "?" in str(replies[-1].get("text", ""))


# (a "don't" of what the customer does is none: "ngl i dont even use the smartwatch, wanna send it back";
# nor a "no" of something else: "No question today, I just wanted to say the boots are fantastic")
_NO_OPENING = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:no(?!\s+(?:longer|more|need|use|questions?|problems?"
                         r"|worries|rush|hurry)\b)|nah|nope"
                         r"|(?:don'?t|never)(?!\s+(?:even\s+|really\s+|actually\s+)?(?:use|used|need|like|wear|"
                         r"want|have|know|think|fit|work|get|got)\b))\b",
                         re.IGNORECASE)


def _keeps_it_as_is(text: str) -> bool:
    """ "oh ok thats my moms place, leave it like that then", "Phew, 10 is right! Don't change anything
    then": a sentence (or a part of one after a comma) keeping things as they are, after an answer
    that asked nothing, is the whole answer (nothing to change, nothing changed)."""
    from csagent.nlp.script import sentences
    from csagent.nlp.speech_acts import keeps_as_is

    return any(keeps_as_is(part) for s in sentences(text) for part in re.split(r"[,;]\s*", s))


def _opens_with_no(text: str) -> bool:
    """ "hmm no, leave it", "Actually, no, don't": a refusal up front, not "wait are u a bot or
    a real person lol" or "yall got skateboards or nah"."""
    return bool(_NO_OPENING.search(text))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# (a "no" that belongs to its words is none: "no longer needed", "no need for it anymore")
_OPENS_WITH_NO = re.compile(r"^\W*(?:no(?!\s+(?:longer|more|need|use)\b)|nah|nope)\b", re.IGNORECASE)


def _cancelling(state: State) -> bool:
    """Is a cancellation among the requests waiting for the customer's answer?"""
    return any(w.get("intent") == "cancel_order" for w in state.get("awaiting") or [])


# "the other" in an answer to a list of orders: it speaks of them ("Keep the other.").
_THE_OTHER = re.compile(r"\bthe other\b", re.IGNORECASE)


def _ends_with_no(text: str, cancelling: bool = False) -> bool:
    """Is the last sentence a refusal, more than a bare "no" ("Forget it then, leave the whole
    thing as it is.", "no, leave it"), by the answer lists or the consent model? "No, the other
    one." and "Keep the other." are no refusal: they pick; nor, for a cancellation, is its reason
    ("the one w the espresso machine. dont need it anymore")."""
    from csagent.nlp.consent import CONSENT_MIN_PROBABILITY, get_consent_reader
    from csagent.nlp.reasons import find_cancel_reason

    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    last = sentences[-1] if sentences else ""
    if len(re.findall(r"\w+", last)) < 2:
        return False
    if _THE_OTHER.search(last):
        return False  # "The one that came on its own. Keep the other.": of the orders listed, it picks
    if classify_confirmation(last) == "no":
        return True
    if cancelling and find_cancel_reason(last) and not _OPENS_WITH_NO.match(last):
        return False
    read = get_consent_reader().read_or_none(last)
    return read is not None and read[0] == "no" and read[1] >= CONSENT_MIN_PROBABILITY


_ACTIONS = frozenset(ActionName)


def _asked_about(state: State) -> list[PendingAction]:
    """The changes waiting for a detail whose write is known, shaped as proposals of their order:
    saying that change again ("no, don't cancel it") is no new request. (A change of items proposes
    one of two writes, and a read none: they are known by their order alone, `_orders_asked_about`.)"""
    asked = []
    for waiting in state.get("awaiting") or []:
        action = ACTION_INTENTS.get(str(waiting.get("intent")), ("",))[0]
        if action in _ACTIONS:
            proposal = ActionProposal(action=ActionName(action), args={},
                                      order_id=(waiting.get("entities") or {}).get("order_id"))
            asked.append(PendingAction(action=proposal.action, proposal=proposal))
    return asked


def _orders_asked_about(state: State, *, keeps: bool = False) -> list[str]:
    """The orders of the requests waiting for a detail, and, for a message keeping things as they
    are (`keeps`, `_keeps_it_as_is`), the order just talked about: an answer about one ("never
    mind, I'll keep it" read on the order asked about) is no new request."""
    asked = [str(order_id) for w in state.get("awaiting") or []
             if (order_id := (w.get("entities") or {}).get("order_id"))]
    # (and the order just talked about: "leave it like that then" read on it, after where it goes)
    recent = (state.get("memory") or {}).get("last_order_id")
    return asked + ([str(recent)] if recent and keeps else [])


# Entities that tie a clause to the store: a product, an order or parcel, a new address.
STORE_FACTS = ("products", "categories", "order_id", "order_ids", "tracking_number", "address")


def _names_store_facts(understanding: Understanding) -> bool:
    return any(clause.entities.get(key) for clause in understanding.clauses for key in STORE_FACTS)


def _asks_a_question(text: str) -> bool:
    return has_question_mark(text)


def _only_asks(text: str, understanding: Understanding) -> bool:
    """Does the message only ask questions, none for a change nor for a person ("does the black
    pair cost more?", "and how long will the refund take?")?"""
    from csagent.grounding.frame import asks_as_question
    from csagent.nlp.clauses import split_clauses
    from csagent.nlp.speech_acts import declines_change

    # every sentence a question ("Wait, the red helmet is in that order too? No. Forget it then."
    # answers no)
    if not all(_asks_a_question(p) or asks_as_question(p) for p in split_clauses(text) or [text]):
        return False
    if declines_change(text) or _opens_with_no(text):
        return False  # "the hiking boots are in that one too?? no dont cancel it then": a no, with a question
    return all(not c.entities.get("asks_for_change") and c.intent != "human_handoff"
               for c in understanding.clauses)


def _frustrated_with_nothing_to_do(state: State, understanding: Understanding) -> bool:
    """An angry customer whose message the assistant cannot act on without asking back.

    Answering "this is ridiculous, my order never arrived" with "which order do you mean?" makes
    things worse: a person takes over. When the message does carry something to act on (an order
    id, a question the knowledge base answers), the turn runs and the handoff triggers decide
    after it, so the person gets the results too.
    """
    return detect_frustration(state.get("text", "")).frustrated and _nothing_to_do(state, understanding)


def _asks_for_staff_process(state: State, understanding: Understanding) -> bool:
    """A warranty claim, a replacement or a carrier investigation asked for, in the words as written
    or as the understanding step read them ("warrenty claim" is put right there)."""
    return staff_process_in_turn(state.get("text", ""),
                                 [{"text": c.text, "entities": c.entities} for c in understanding.clauses])


def _without_item_requests(understanding: Understanding) -> Understanding:
    """A claim the store's team runs ("the kettle came dented, send me a new one, not my money
    back", "I want to use the warranty"), without the return or exchange read from the same words:
    that is not what was asked, and a person takes the claim over once the rest is answered."""
    kept = tuple(c for c in understanding.clauses if c.intent not in ITEM_REQUESTS)
    if len(kept) == len(understanding.clauses):
        return understanding
    return replace(understanding, clauses=kept, intent=kept[0].intent if kept else understanding.intent)


def _nothing_to_do(state: State, understanding: Understanding) -> bool:
    """The message gives the assistant nothing to act on without asking back (or refusing)."""
    if state.get("attachments") or understanding.route == "handoff":
        return False
    if understanding.route != "knowledge_and_actions":
        return True
    planned = plan_tasks(understanding.clauses_as_dicts(), memory=state.get("memory") or {})
    # "your orders with a phone: #W1 and #W2, which one?" is a quick pick, not a dead end.
    return not planned.tasks and not any(m.get("question") for m in planned.missing)


def route_by_label(state: State) -> str:
    label = state.get("route", "")
    if label not in ROUTE_TO_NODE or float(state.get("confidence") or 0.0) < MIN_CONFIDENCE:
        return "clarify"
    return ROUTE_TO_NODE[label]
