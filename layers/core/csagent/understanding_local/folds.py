"""Pieces of a message joined before they are read: a fallback, a consequence, a possibility asked, a
request after a statement, a request for advice, a thing named then asked about, each with the
clause it belongs to.

Part of the local understanding (`csagent.understanding_local`, whose reader calls these)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from csagent.nlp.script import has_question_mark
from csagent.requests import WRITE_INTENTS
from csagent.understanding import (
    CATALOGUE_INTENTS,
)


def with_fallbacks_folded(pieces: list[str], predictions: list[Any]) -> tuple[list[str], list[Any]]:
    """ "Swap it for the blue one. If blue isn't in stock, white is fine.": the fallback is part of
    the item change before it (`grounding.resolve.is_fallback`), not a question of its own; so is a
    choice the change leaves to the store ("Whichever colour is cheaper, and the difference can go
    back on my card")."""
    from csagent.grounding.resolve import is_fallback

    def joins(_before: str, read_before: Any, piece: str, prediction: Any) -> bool:
        other_change = prediction.intent in WRITE_INTENTS - {"change_items"}
        return read_before.intent == "change_items" and not other_change \
            and (is_fallback(piece) or bool(_LEAVES_THE_CHOICE.match(piece)))

    texts, kept, _ = _joined_to_previous(pieces, predictions, joins, " ")
    return texts, kept


# "whichever colour is cheaper", "any size is fine", "colour doesn't matter": the choice left open
_LEAVES_THE_CHOICE = re.compile(
    r"\W*(?:(?:and|but|so|oh)\s+)?(?:whichever|whatever|any|either)\s+(?:colou?r|size|style|material|"
    r"version|model|one|type|kind)\b|\W*(?:the\s+)?(?:colou?r|size|style|material)\s+(?:doesn'?t|does not|"
    r"don'?t)\s+matter\b", re.IGNORECASE)


def _joined_to_previous(pieces: list[str], predictions: list[Any],
                        joins: Callable[[str, Any, str, Any], bool],
                        sep: str) -> tuple[list[str], list[Any], set[int]]:
    """The pieces, each one `joins(text before, its reading, piece, reading)` says belongs to the
    piece kept before it appended to that piece (its own reading dropped); with the indexes of the
    kept pieces that took one in."""
    texts: list[str] = []
    kept: list[Any] = []
    took: set[int] = set()
    for piece, prediction in zip(pieces, predictions, strict=True):
        if kept and joins(texts[-1], kept[-1], piece, prediction):
            texts[-1] = f"{texts[-1]}{sep}{piece}"
            took.add(len(texts) - 1)
            continue
        texts.append(piece)
        kept.append(prediction)
    return texts, kept, took


def consequences_folded(pieces: list[str], predictions: list[Any]) -> tuple[list[str], list[Any]]:
    """ "If I did cancel #W1, how much would I get back, where would the money go, and how
    quickly?": the questions after a change put as a condition ask what would come of it (its
    money, and when), not questions of their own; they join the condition's clause."""
    from csagent.grounding.frame import named_change
    from csagent.nlp.entities.identifiers import ORDER_ID_RE
    from csagent.nlp.speech_acts import asks_for_change, is_hypothetical, weighs_a_change

    def joins(before: str, read_before: Any, piece: str, prediction: Any) -> bool:
        # (the condition read as a change, or naming one: "If I return the makeup kit from #W1, which
        # is still unopened, how much would I get back?"; or a change only weighed: "I'm weighing up
        # whether to cancel my order with the coffee maker. If I did, how much would I get back?")
        after_condition = (is_hypothetical(before) or weighs_a_change(before)) \
            and (read_before.intent in WRITE_INTENTS or named_change(before) is not None)
        # "what would I get back?" may read as a return; it names no change of its own
        of_its_own = prediction.intent in WRITE_INTENTS and named_change(piece) is not None
        # (nor does one that asks for a change: "I was wondering whether I could return the robot
        # vacuum. If so, please refund it to the card I paid with.")
        return after_condition and not of_its_own and bool(_ASKS_WHAT_COMES_OF_IT.search(piece)) \
            and not ORDER_ID_RE.search(piece) and not asks_for_change(piece)

    texts, kept, _ = _joined_to_previous(pieces, predictions, joins, ", ")
    return texts, kept


def possibility_asks_folded(pieces: list[str], predictions: list[Any]) -> tuple[list[str], list[Any]]:
    """ "... I'd much rather it were charged to my Mastercard instead. Would that be possible,
    please?": whether "that" can be done, after a change asked for, asks for that change; it
    joins its clause, whatever the words alone read as."""
    def joins(_before: str, read_before: Any, piece: str, _prediction: Any) -> bool:
        return read_before.intent in WRITE_INTENTS and bool(_ASKS_IF_THAT_CAN_BE.fullmatch(piece.strip()))

    texts, kept, _ = _joined_to_previous(pieces, predictions, joins, ". ")
    return texts, kept


# "Would that be possible, please?", "is this doable?", "can you do that for me?"
_ASKS_IF_THAT_CAN_BE = re.compile(
    r"(?:(?:and|so)\s+)?(?:(?:would|will|could|can|is|isn'?t)\s+(?:that|this|it)\s+(?:be\s+)?"
    r"(?:possible|doable|ok|okay|alright|done|an option)"
    r"|(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?:do|manage)\s+(?:that|this|it))"
    r"(?:[\s,]+(?:at all|for me|please|pls|thanks|thank you))*\W*", re.IGNORECASE)


def requests_after_statements(pieces: list[str], predictions: list[Any], classifier: Any) -> list[Any]:
    """ "The order with the earbuds ... went on my gift card, and I'd much rather it were charged
    to my Mastercard instead": a statement and, after ", and", a request for a change, in one
    clause (a statement opens no clause of its own). When the model reads the whole unsurely as
    no change and the request alone surely as one, the request's reading is the clause's; the
    statement stays its context. So is a change the model puts second to a question about the
    rule, unsurely, when the words ask for it ("hey can u ship my stuff to my work instead?"), or
    second to a question about the product when its words ask for another item ("lemme switch em to
    the black ones"); and an unsure question about the account or an order whose words ask to send an
    order to the address saved on the account is that address change ("pls send it to my address
    thats on my acount")."""
    from csagent.grounding.frame import asks_another_item
    from csagent.nlp.entities.addresses import names_saved_address
    from csagent.nlp.speech_acts import asks_for_change, is_hypothetical, names_address_change

    out = list(predictions)
    for i, (piece, prediction) in enumerate(zip(pieces, predictions, strict=True)):
        if prediction.intent in WRITE_INTENTS or getattr(prediction, "probability", 1.0) >= 0.5:
            continue
        runner_up = getattr(prediction, "runner_up", None)
        if prediction.intent in CATALOGUE_INTENTS and runner_up == "change_items" and asks_for_change(piece) \
                and not is_hypothetical(piece) and asks_another_item(piece):
            # "lemme switch em to the black ones w brown lenses": read unsurely as about the product,
            # next as the item change, its words asking for another item
            out[i] = replace(prediction, intent=runner_up, runner_up=prediction.intent,
                             runner_up_score=prediction.confidence, probability=0.0)
            continue
        if prediction.intent in {"account_info", "tracking", "order_status"} and names_address_change(piece) \
                and names_saved_address(piece) and asks_for_change(piece) and not is_hypothetical(piece) \
                and not has_question_mark(piece):
            # "pls send it to my main st adress thats on my acount": read unsurely as a question
            # about the account (its address named), the words ask to send an order to the address
            # saved on it
            out[i] = replace(prediction, intent="change_order_address", runner_up=prediction.intent,
                             runner_up_score=prediction.confidence, probability=0.0)
            continue
        if prediction.intent == "policy_question" and runner_up in WRITE_INTENTS \
                and asks_for_change(piece) and not is_hypothetical(piece):
            # "hey can u ship my stuff to my work instead?": read unsurely as a question about the
            # rule, next as the change, and asked for (not "can I ...?", nor "if I ..."): the change
            out[i] = replace(prediction, intent=runner_up, runner_up=prediction.intent,
                             runner_up_score=prediction.confidence, probability=0.0)
            continue
        tails = [m.end() for m in _REQUEST_AFTER_A_STATEMENT.finditer(piece)]
        tail = piece[tails[-1]:] if tails else ""
        if not tail or not asks_for_change(tail):
            continue
        read = classifier.classify(tail)
        if read.intent in WRITE_INTENTS \
                and getattr(read, "probability", 0.0) >= SURE_REQUEST_AFTER_A_STATEMENT:
            out[i] = read
    return out


# ", and I'd rather ...", ", but can you ...": a request after the statement it follows.
_REQUEST_AFTER_A_STATEMENT = re.compile(
    r",\s*(?:and|but|so)\s+(?=(?:i'?d|i would|i want|i wanna|i need|can you|could you|can u|would you|"
    r"please|pls|plz)\b)", re.IGNORECASE)
# How surely the request alone must be read as a change to be the clause's reading.
SURE_REQUEST_AFTER_A_STATEMENT = 0.6


def advice_asks_folded(pieces: list[str], predictions: list[Any]) -> tuple[list[str], list[Any], set[int]]:
    """ "my kettle keeps switching off before the water even boils, whats up with that??", "the grill
    from #W1, the gas one, flame is super low. wtf do i do": a request for advice that names nothing
    of its own (`speech_acts.asks_for_advice`) asks about what the clause before told, and joins it.
    Returns the pieces, their predictions and the indexes of the pieces that now ask for advice."""
    from csagent.grounding.frame import named_change
    from csagent.nlp.speech_acts import asks_for_advice

    def joins(_before: str, read_before: Any, piece: str, prediction: Any) -> bool:
        # (read as a change, it asks advice all the same when it names none: "What should I do with it?")
        return read_before.intent in TOLD_BEFORE_ADVICE \
            and (prediction.intent not in WRITE_INTENTS or named_change(piece) is None) \
            and asks_for_advice(piece)

    return _joined_to_previous(pieces, predictions, joins, ", ")


# What a clause telling of a product may be read as, before a request for advice about it (a story
# of a delivery, a complaint or a change asks something else: "my order hasn't come, what do I do?").
TOLD_BEFORE_ADVICE = frozenset({"product_info", "product_availability", "order_items", "out_of_scope",
                                 "smalltalk"})


# What a change put as a condition would bring: money back (how much, where to) and when.
_ASKS_WHAT_COMES_OF_IT = re.compile(
    r"\b(?:how much|get back|money|refund\w*|how (?:long|quickly|soon|fast)|when)\b"
    r"|多少钱|退多少|退到|多久|什么时候", re.IGNORECASE)


# Words pointing back at the thing just named ("Has that even left yet?", "is it waterproof?").
_POINTS_BACK_AT_IT = re.compile(r"\b(?:it|its|it's|that|this|they|them|those|these)\b", re.IGNORECASE)


def named_then_asked_folded(pieces: list[str], predictions: list[Any],
                            catalogue: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[Any]]:
    """ "Fine. And my bike then? Has that even left yet?": a piece that only names a thing, as a
    follow-up does ("and my bike then?"), and the question after it pointing back at it ask one
    question of that thing; they join, read as the question (not as the last question again)."""
    from csagent.grounding.frame import asks_as_question
    from csagent.grounding.resolve import product_mentions
    from csagent.nlp.speech_acts import is_elliptical

    texts: list[str] = []
    kept: list[Any] = []
    for piece, prediction in zip(pieces, predictions, strict=True):
        if texts and _POINTS_BACK_AT_IT.search(piece) and asks_as_question(piece) \
                and not product_mentions(piece, catalogue):
            named = product_mentions(texts[-1], catalogue)
            if named and is_elliptical(texts[-1], [m.surface for m in named]):
                texts[-1], kept[-1] = f"{texts[-1]} {piece}", prediction
                continue
        texts.append(piece)
        kept.append(prediction)
    return texts, kept
