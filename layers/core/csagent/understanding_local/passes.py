"""Clauses kept, folded or dropped once read: doubted readings, changes told as done, reasons and
payment details that belong to the request beside them, changes ruled out, wishes asked about,
account facts told, purchases told, preferences told after a product question; changes held back
by a hedge or by a question of their price, and returns no word of the message names.

Part of the local understanding (`csagent.understanding_local`, whose reader calls these)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from csagent.nlp.script import has_question_mark
from csagent.requests import WRITE_INTENTS
from csagent.understanding import (
    CATALOGUE_INTENTS,
    GENERAL_INTENTS,
    GENERAL_QUESTION_INTENTS,
    HANDOFF_INTENTS,
    ITEM_REQUESTS,
    ORDER_GROUNDING,
    ORDER_READ_INTENTS,
    PASSIVE_INTENTS,
    Clause,
)

# A cancellation told as done ("I cancelled it", "ended up cancelling two orders", "the cancelled
# espresso order", "我取消的那个订单", "已经取消了"), not asked for ("cancel it", "帮我取消").
CANCELLATION_DONE = re.compile(
    r"\b(?:i|we|you|it|was|were|been|got|already|had|have|has|i've|we've|i'd)\s+(?:already\s+)?cancell?ed\b"
    r"|\b(?:ended up|after|since)\s+cancell?ing\b|\b(?:the|my|that|this|those|both)\s+cancell?ed\b"
    r"|我(?:已经|早就|之前|上次)?取消(?:了|的|过)|已经?取消|被取消|取消掉?的(?:那个|那笔|那张)?订单",
    re.IGNORECASE)
CANCEL_ASKED = re.compile(r"\bcancel\b|(?:帮我|请|麻烦|我要|我想|给我)取消", re.IGNORECASE)


def without_doubted_readings(clauses: list[Clause], doubted: set[int]) -> list[Clause]:
    """Beside another clause read as a request of any kind (an off-topic one too), a doubted hand-off
    reading (or a doubted complaint naming nothing) is a remark, not a request for a person: the
    message is what the other clause asks ("Hello, I am new customer here. Please can you show me my
    orders"; "I believe I was charged twice for the same bookshelf. Could you please look into it?").
    Alone, it stays a hand-off: in doubt, a person."""
    if not doubted:
        return clauses
    others = [c for i, c in enumerate(clauses)
              if i not in doubted and c.intent not in HANDOFF_INTENTS | GENERAL_INTENTS]
    if not others:
        return clauses
    return [replace(c, intent="smalltalk") if i in doubted else c for i, c in enumerate(clauses)]


def told_cancelled(text: str) -> bool:
    """Do the words tell of a cancellation done ("I cancelled it", "the cancelled espresso order"),
    neither asking for one nor putting one as a condition ("if I cancelled it, how much ...")?"""
    return bool(CANCELLATION_DONE.search(text)) and not CANCEL_ASKED.search(text) \
        and not CONDITIONAL.search(text)


def without_changes_told_as_done(clauses: list[Clause]) -> list[Clause]:
    """ "I cancelled an order ages ago and I want to know if you've refunded me": a cancellation
    told as done asks for none; beside a request of its own, it only sets the scene, and the orders
    it names are those the questions about orders beside it ask about."""
    from csagent.nlp.entities.identifiers import find_order_ids
    from csagent.nlp.speech_acts import is_hypothetical

    def told(c: Clause) -> bool:  # "if I cancelled it, how much ...?" is not told as done
        return c.intent == "cancel_order" and bool(CANCELLATION_DONE.search(c.text)) \
            and not CANCEL_ASKED.search(c.text) and not is_hypothetical(c.text)

    rest = [c for c in clauses if not told(c)]
    if not any(c.intent not in PASSIVE_INTENTS for c in rest):
        return clauses
    # ("W9978601 and W4817567 were BOTH cancelled and I'm still waiting on my money. Where is it?":
    # the orders it told of are those the questions after it ask about)
    ids = list(dict.fromkeys(i for c in clauses if told(c) for i in find_order_ids(c.text)))

    def about_them(c: Clause) -> Clause:
        if not ids or c.intent not in ORDER_READ_INTENTS | {"complaint"} or c.entities.get("order_ids") \
                or (c.entities.get("order_id") and c.entities.get("order_id") in ids):
            return c
        found = ORDER_GROUNDING | {"order_id", "order_status"}  # (what grounding found is not theirs)
        named = {k: v for k, v in c.entities.items() if k not in found}
        orders = {"order_ids": ids} if len(ids) > 1 else {"order_id": ids[0]}
        return replace(c, entities={**named, **orders})

    return [about_them(c) for c in rest]


# Readings of a statement that may only tell why ("I ordered it by mistake" read as a complaint), and
# the most words such a statement has.
_READ_AS_TELLING = frozenset({"complaint", "smalltalk", "out_of_scope", "thanks"})
REASON_WORDS = 8


def reasons_folded(clauses: list[Clause]) -> list[Clause]:
    """ "Please cancel my thermostat, I don't need it anymore": a clause that gives only the reason
    of a cancellation asked beside it (a cancellation reason, no change verb of its own) is part of
    that request, not a request of its own (a return, say)."""
    if not any(c.intent == "cancel_order" for c in clauses):
        return clauses
    from csagent.grounding.frame import named_change, points_at_another_order
    from csagent.nlp.entities.identifiers import ORDER_ID_RE
    from csagent.requests import REQUEST_BY_VERB

    def gives_a_reason(c: Clause) -> bool:  # a cancellation reason, and no change verb of its own
        words = set(re.findall(r"[a-z]+", c.text.lower()))
        return c.intent in WRITE_INTENTS and bool(c.entities.get("reason")) \
            and named_change(c.text) is None and not words & set(REQUEST_BY_VERB)

    def reason_only(c: Clause) -> bool:
        return c.intent != "cancel_order" and gives_a_reason(c)

    def tells_a_reason(c: Clause) -> bool:  # "I ordered it by mistake", read as a complaint
        return c.intent in _READ_AS_TELLING and bool(c.entities.get("reason")) \
            and not has_question_mark(c.text) and named_change(c.text) is None \
            and len(c.text.split()) <= REASON_WORDS

    # the reason joins the request, which does the grounding; whether the clause asked for anything
    # stays ("Sorry my mistake, PayPal is correct" asks for no cancellation)
    kept = ("order_id", "order_status", "reason", "asks_for_change")
    folded: list[Clause] = []
    for c in clauses:
        asked = next((i for i in range(len(folded) - 1, -1, -1) if folded[i].intent == "cancel_order"
                      and folded[i].entities.get("order_id") and folded[i].entities.get("asks_for_change")),
                     None)
        # (not one that names another order: "And the other order with a perfume in it too")
        if asked is not None and (gives_a_reason(c) or tells_a_reason(c)) \
                and not ORDER_ID_RE.search(c.text) and not points_at_another_order(c.text):
            # "The other order hasn't shipped yet, could you cancel that one? I don't need it anymore.":
            # the reason of the cancellation asked just before, whatever order its words resemble
            before = folded[asked]
            reason = before.entities.get("reason") or c.entities["reason"]
            folded[asked] = replace(before, entities={**before.entities, "reason": reason})
            continue
        folded.append(replace(c, intent="cancel_order",
                              entities={k: v for k, v in c.entities.items() if k in kept})
                      if reason_only(c) else c)
    return folded


#: Below this, a general question that only names how to pay reads as a detail of a change beside it.
PAYMENT_DETAIL_CONFIDENCE = 0.6


def payment_details_folded(clauses: list[Clause]) -> list[Clause]:
    """ "can i swap my black earbuds for the waterproof ones? ... paypal for the diff": a clause read
    weakly as a general question, asking nothing, that names a payment method beside a change whose
    payment the message settled, is that change's detail, not a question about payments."""
    if not any(c.intent in WRITE_INTENTS and c.entities.get("payment_method_id") for c in clauses):
        return clauses
    from csagent.grounding.resolve import names_a_payment_method

    def detail(c: Clause) -> bool:
        return (c.intent in GENERAL_QUESTION_INTENTS and c.confidence < PAYMENT_DETAIL_CONFIDENCE
                and "?" not in c.text and "？" not in c.text and names_a_payment_method(c.text))

    return [c for c in clauses if not detail(c)]


def bare_verb_of_a_payment(clauses: list[Clause]) -> list[Clause]:
    """ "You charged my Mastercard for order #W1. I wanted it on PayPal! Switch it over.": a bare
    change verb naming no item nor option, read as an item change that could not find one, beside a
    payment change of the same order told without a request, is that payment change asked for."""
    from csagent.grounding.frame import named_change

    paying = [c for c in clauses if c.intent == "change_payment" and c.entities.get("payment_method_id")
              and not c.entities.get("asks_for_change")]
    if not paying:
        return clauses
    order = paying[0].entities.get("order_id")
    # ("Switch it over, and get it right this time", read as a return of the chair the message named:
    # no return verb, no item of its own, nothing to swap to)
    bare = [c for c in clauses if c.intent in ITEM_REQUESTS and c.entities.get("order_id") == order
            and (c.entities.get("question") or c.intent == "return_request")
            and named_change(c.text) is None and not _OWN_CHANGE_VERB.search(c.text)
            and not c.entities.get("new_item_ids")
            and not c.entities.get("products") and len(c.text.split()) <= _BARE_VERB_WORDS]
    if not bare:
        return clauses
    asked = replace(paying[-1], entities={**paying[-1].entities, "asks_for_change": True})
    return [asked if c is paying[-1] else c for c in clauses if c not in bare]


def address_of_the_order_change(clauses: list[Clause]) -> list[Clause]:
    """ "I need to change address for all my orders what are not shipped yet. New address is 55 Cedar
    Road, Houston TX 77002, USA.": a clause that gives an address, read as the account's new one but
    naming neither the account nor an order, right after a change of where orders go that names no
    address, is where those orders are to go; one request, not a second change of the account."""
    from csagent.grounding.frame import names_the_account
    from csagent.nlp.entities.identifiers import ORDER_ID_RE

    out: list[Clause] = []
    for c in clauses:
        before = out[-1] if out else None
        if before is not None and before.intent == "change_order_address" \
                and not before.entities.get("address") \
                and c.intent == "update_default_address" and c.entities.get("address") \
                and not names_the_account(c.text) and not ORDER_ID_RE.search(c.text):
            out[-1] = replace(before, text=f"{before.text} {c.text}",
                              entities={**before.entities, "address": c.entities["address"]})
            continue
        out.append(c)
    return out


# The verbs of a return, an exchange or a cancellation, however they are put ("and send the chair back").
_OWN_CHANGE_VERB = re.compile(
    r"\b(?:return\w*|send\w*(?: [\w']+){0,3} back|exchang\w*|refund\w*|cancel\w*)\b", re.IGNORECASE)
# At most this many words make a bare change verb ("Switch it over", "do it please", "change that",
# "Switch it over, and get it right this time").
_BARE_VERB_WORDS = 9


# A clause that only names what is not meant ("Not the chair one!", "but not the grill order").
_ONLY_RULES_OUT = re.compile(r"^\W*(?:(?:but|and)\s+)?not\s+(?:the|my|that|this)\s+[\w\s-]{1,40}?\W*$",
                             re.IGNORECASE)


def without_ruled_out_changes(clauses: list[Clause]) -> list[Clause]:
    """ "Don't cancel it, just tell me where it is": a change named only to rule it out is no
    request (`nlp.speech_acts.declines_change`), nor is what the customer keeps as it is ("keep the
    bookshelf order as is", `keeps_as_is`); the rest of the message is what was asked. A
    message that says nothing else, or only thanks or greets, keeps it, and is read as it stands,
    unless the change is ruled out in a statement beside those ("No need to change anything.
    Thanks!", which asks nothing)."""
    from csagent.grounding.frame import asks_as_question, rules_out_the_account
    from csagent.nlp.speech_acts import declines_change, keeps_as_is

    # (so is a statement that only rules a change out, whatever the words resemble: "Please don't
    # touch the big order with the espresso machine though" beside the cancellations asked)
    # (nor, beside a change asked, is one that only says which it is not: "Could you cancel that
    # one? Not the chair one!")
    changes = any(c.intent in WRITE_INTENTS and c.entities.get("asks_for_change") for c in clauses)
    kept = [c for c in clauses if not ((declines_change(c.text) or keeps_as_is(c.text))
                                       and (c.intent in WRITE_INTENTS or not asks_as_question(c.text)))
            and not (changes and _ONLY_RULES_OUT.match(c.text))]
    if any(rules_out_the_account(c.text) for c in clauses):
        # "Don't touch my account address yet, I'll do that later": asks nothing (and whichever
        # clause read a new address as the account's has been read as the orders', `address_intent`).
        kept = [c for c in kept if c.intent != "update_default_address"
                and not (declines_change(c.text) and not asks_as_question(c.text))]
    asked = [c for c in kept if c.intent not in PASSIVE_INTENTS]
    # (beside thanks, a change ruled out and not asked about is all said: "No need to change
    # anything. Thanks so much and have a nice day!")
    closing = bool(kept) and all(c.intent in GENERAL_INTENTS for c in kept) \
        and not any(asks_as_question(c.text) for c in clauses if c not in kept)
    return kept if asked or closing else clauses


def without_wishes_asked_about(clauses: list[Clause],
                                catalogue: Sequence[Mapping[str, Any]]) -> list[Clause]:
    """ "I love the yellow running shoes from #W1 but they pinch my toes ... Do you have those exact
    ones in a 10?", "my brother would like the same digital camera I bought (the 20MP one ...). Is it
    still available?": an item change told, not asked for nor asked about (`asks_for_change`), beside a
    question whether the store has that product or what it is, tells what the question is about; the
    question is what was asked, and is answered (no question of which version or which order). So is
    a statement naming no product nor any option the question does not carry already ("I think I need
    a size 10"); one that adds options the question lacks stays ("The one I want is 10-inch, gold.
    How much is that one?"). Likewise an item change told beside a question about the same order's
    items ("There should be two bike helmets in there ... What colours did I end up picking?")."""
    from csagent.grounding.frame import asks_as_question
    from csagent.grounding.options import find_option_values
    from csagent.nlp.speech_acts import asks_for_change

    # ("Just double-checking W1 for me! There should be two bike helmets in there, one for me and
    # one for my partner. What colours did I end up picking?": what the order holds, told, beside a
    # question about that order's items, is what the question is about; no change of them)
    # (so beside a change of that order asked for: "The blue one fits great, but the white one never
    # left the box. I'd like to send back only the white one.")
    # (a payment asked beside it is not such a change: "The electric kettle I order, it is black. My
    # wife want white color, same size. ... Pay with my paypal if more expensive" pays for the wish)
    about_orders = {c.entities.get("order_id") for c in clauses
                    if c.entities.get("order_id") and (
                        (c.intent in ORDER_READ_INTENTS and asks_as_question(c.text))
                        or (c.intent in WRITE_INTENTS - {"change_payment"}
                            and c.entities.get("asks_for_change")))}
    if about_orders:
        told = [c for c in clauses if c.intent == "change_items"
                and c.entities.get("order_id") in about_orders and not c.entities.get("asks_for_change")
                and not asks_for_change(c.text) and not asks_as_question(c.text)]
        if told and len(told) < len(clauses):
            clauses = [c for c in clauses if c not in told]
    questions = [c for c in clauses if c.intent in CATALOGUE_INTENTS and asks_as_question(c.text)]
    asked = {str(p.get("product_id")): p for c in questions for p in c.entities.get("products") or []}
    if not asked:
        return clauses
    options = {k: v for p in catalogue if str(p.get("product_id")) in asked
               for k, v in (p.get("options") or {}).items()}
    carried = {str(v).lower() for p in asked.values() for v in (p.get("options") or {}).values()}

    def said_again(c: Clause) -> bool:  # a statement naming only options the question carries
        if c.intent not in CATALOGUE_INTENTS or c.entities.get("products") or c.entities.get("categories") \
                or asks_as_question(c.text):
            return False
        return {h.value.lower() for h in find_option_values(c.text, options)} <= carried

    kept = [c for c in clauses if not (
        c.intent == "change_items" and not asks_for_change(c.text) and not asks_as_question(c.text)
        and {str(p.get("product_id")) for p in c.entities.get("products") or []} & set(asked))
            and not said_again(c)]
    return kept if any(c.intent not in PASSIVE_INTENTS for c in kept) else clauses
# What an account holds, named.
_ACCOUNT_NOUNS = re.compile(r"\b(?:account|address|addy|e-?mail|card|payment|paypal|name|phone|password)\b",
                            re.IGNORECASE)


def without_account_facts_told(clauses: list[Clause]) -> list[Clause]:
    """ "ugh i moved last week. it needs to go to 1200 Ocean Drive, ...": a statement read as a
    question about the account that asks nothing and names nothing of it (no email, address,
    payment method or order), or as a question about an order naming none, tells what happened,
    beside a clause that asks; that clause is the request, and the account (or which order) is not
    described back (or asked)."""
    from csagent.nlp.speech_acts import asks_for_change, asks_something

    def asks(c: Clause) -> bool:
        return bool(c.entities.get("asks_for_change")) or asks_for_change(c.text) or asks_something(c.text)

    def told(c: Clause) -> bool:  # (naming what the account holds it is about it: "My account still has my
        # old address. The right one is 40 Quarry Lane, ...")
        # (so is a remark read as a question about an order that names none: "I moved and nobody
        # told me this would be a problem", beside the address changes asked)
        return (c.intent == "account_info" and not _ACCOUNT_NOUNS.search(c.text)
                or c.intent in ORDER_READ_INTENTS and not has_question_mark(c.text)) and not asks(c) \
            and not any(c.entities.get(k) for k in ("order_id", "order_ids", "address", "email",
                                                    "payment_method_id", "products"))

    if not any(told(c) for c in clauses) or not any(not told(c) and asks(c) for c in clauses):
        return clauses
    return [c for c in clauses if not told(c)]
# The same again, of something else: "... too", "... as well", "also ...".
_THE_SAME_AGAIN = re.compile(r"\b(?:too|as well|also)\b", re.IGNORECASE)
CONDITIONAL = re.compile(r"\b(?:if|would|in case)\b|如果|的话", re.IGNORECASE)


def without_purchases_told(clauses: list[Clause], view: Any) -> list[Clause]:
    """ "I have a black desk lamp on order and I'm wondering what other colours that lamp comes in":
    a statement of what the customer bought, read as a catalogue question or a change it names no
    verb of ("I ordered one of your office chairs last week. ...") (it asks nothing, and
    every product it names with options is one of their items as it is), beside a clause that asks
    something, only says what the question is about; the question is answered, not the statement
    (which would list the black lamps)."""
    from csagent.grounding.frame import lines_as_described, named_changes, points_at_another_order
    from csagent.nlp.entities.identifiers import ORDER_ID_RE
    from csagent.nlp.reasons import find_cancel_reason
    from csagent.nlp.speech_acts import asks_for_change, asks_something

    if view is None or not any(c.intent not in PASSIVE_INTENTS and asks_something(c.text) for c in clauses):
        return clauses

    def owned(product: Mapping[str, Any]) -> bool:
        return bool(lines_as_described(view, str(product.get("product_id")), product.get("options") or {}))

    def told(c: Clause) -> bool:  # (read as a change, it names none: "I ordered one of your office chairs")
        products = c.entities.get("products") or []
        # (not one naming its order, which the request beside it may need: "W3611574 has 2 espresso
        # machines. only wanted the 19 bar one. cancel the other")
        # (not an item change, which the message's other clauses may say: "The tea kettle I order, it
        # is for gas. My husband want induction ... Is possible to change?")
        # (nor the same change of another order: "Cancel #W1 please. And the other order with a perfume
        # in it too.")
        return (c.intent in CATALOGUE_INTENTS or (c.intent in WRITE_INTENTS - ITEM_REQUESTS
                                                   and not named_changes(c.text)
                                                   and find_cancel_reason(c.text) is None
                                                   and not ORDER_ID_RE.search(c.text)
                                                   and not _THE_SAME_AGAIN.search(c.text)
                                                   and not points_at_another_order(c.text))) \
            and bool(products) and not asks_something(c.text) \
            and not asks_for_change(c.text) and not has_question_mark(c.text) \
            and all(owned(p) for p in products)

    kept = [c for c in clauses if not told(c)]
    return kept if any(c.intent not in PASSIVE_INTENTS for c in kept) else clauses


def preferences_folded(clauses: list[Clause]) -> list[Clause]:
    """ "does the fabric office chair come in other colours? I want to stay with fabric": a statement
    after a question about a product, of that product (carried, or named again) and asking nothing,
    that names options of it keeps them: they join the question's product (the versions it asks
    about keep them), and the statement is not answered on its own."""
    from csagent.grounding.frame import asks_as_question
    from csagent.nlp.speech_acts import asks_for_change, asks_something

    def told(c: Clause) -> bool:  # ("I want to stay with fabric" wants, but asks no question and no change)
        return c.intent in CATALOGUE_INTENTS and not asks_as_question(c.text) \
            and not asks_for_change(c.text) \
            and not has_question_mark(c.text) and bool(c.entities.get("products")) \
            and all(p.get("options") for p in c.entities["products"])

    out: list[Clause] = []
    for clause in clauses:
        before = out[-1] if out else None
        asked = {str(p.get("product_id")): p for p in (before.entities.get("products") or [])} \
            if before is not None and before.intent in CATALOGUE_INTENTS and asks_something(before.text) \
            else {}
        products = clause.entities.get("products") or []
        if before is None or not asked or not told(clause) \
                or not all(str(p.get("product_id")) in asked for p in products):
            out.append(clause)
            continue
        kept = {str(p.get("product_id")): p.get("options") or {} for p in products}
        joined = [{**p, "options": {**kept.get(str(p.get("product_id")), {}), **(p.get("options") or {})}}
                  for p in asked.values()]
        out[-1] = replace(before, entities={**before.entities, "products": joined})
    return out


# Whether a change can be made, asked ("Is possible to change before you send?", "can you swap it?").
_POSSIBLE_TO_CHANGE = re.compile(
    r"\b(?:(?:is|it'?s|would it be)\s+(?:it\s+)?possible|can\s+(?:you|u|i|we)|could\s+(?:you|u|i|we))\b"
    r"[^.?!]{0,30}?\b(?:change|swap|switch|exchange)\b", re.IGNORECASE)
# What a payment said beside an item change pays: the difference ("if more expensive", "for the diff").
_PAYS_THE_DIFFERENCE = re.compile(r"\b(?:if|when)\b[^.?!]{0,20}\b(?:more|expensive|costs?|pricier)\b"
                                  r"|\b(?:difference|diff|extra)\b", re.IGNORECASE)


def wishes_asked_if_possible(clauses: list[Clause]) -> list[Clause]:
    """ "The electric kettle I order, it is black. My wife want white color, same size. Is possible to
    change before you send? Pay with my paypal if more expensive.": an item change told as a wish,
    its new item found, then whether a change is possible asked (naming nothing of its own), asks
    for that change; the question is that request, and the payment said for the difference (the
    change's own method) is its detail, not a payment change."""
    from csagent.nlp.entities.identifiers import ORDER_ID_RE

    wishes = [c for c in clauses if c.intent == "change_items" and c.entities.get("new_item_ids")
              and not c.entities.get("asks_for_change")]
    asking = [c for c in clauses if c not in wishes and c.intent not in WRITE_INTENTS - {"change_items"}
              and _POSSIBLE_TO_CHANGE.search(c.text) and not c.entities.get("products")
              and not ORDER_ID_RE.search(c.text)]
    if len(wishes) != 1 or not asking:
        return clauses
    wish = wishes[0]
    method = wish.entities.get("payment_method_id")
    out: list[Clause] = []
    for clause in clauses:
        if clause in asking or (clause.intent == "change_payment" and method
                                and clause.entities.get("payment_method_id") == method
                                and _PAYS_THE_DIFFERENCE.search(clause.text)):
            continue
        out.append(replace(clause, entities={**clause.entities, "asks_for_change": True})
                   if clause is wish else clause)
    return out


def returns_named_by_their_words(clauses: list[Clause], text: str) -> list[Clause]:
    """A return sends the item back for the money: a message whose words name neither ("The garden
    hose ... is already leaking at the connector. This is junk and I want it dealt with", "I don't
    want my money back, I want a replacement machine that actually works. Sort it out.") asks for a
    remedy, not a return, whatever the model read its demand as; proposing a return would be a write
    nobody asked for. The demand stays a complaint about the same order, and the reply gives the
    order's facts and the remedies the policy allows. Only of a message read afresh (the caller's
    to say): "the white ones", answering which item to return, names none either.

    When the model of staff processes (`nlp.staff_process`) reads the message as one more likely than
    not (a replacement of what came broken, a claim), the remedy is the team's (`staff_remedy`: a
    person takes it over once the turn is answered). Its own threshold (`STAFF_MIN_PROBABILITY`) is
    for any message; here the customer has demanded a remedy and named no return, which leaves few
    others."""
    from csagent.grounding.frame import names_a_return
    from csagent.nlp.staff_process import get_staff_reader

    if not any(c.intent == "return_request" and c.entities.get("asks_for_change") for c in clauses) \
            or names_a_return(text):
        return clauses
    reading = get_staff_reader().read_or_none(text)
    staff = reading is not None and reading[0] == "staff" and reading[1] > 0.5
    return [replace(c, intent="complaint", entities={
        **{k: v for k, v in c.entities.items() if k not in ("asks_for_change", "item_ids")},
        **({"staff_remedy": True} if staff else {})})
        if c.intent == "return_request" and c.entities.get("asks_for_change") else c for c in clauses]


# Words that point a hedge at something else than the change beside it ("still thinking about the
# rest"): it holds that back, not what was asked.
_POINTS_ELSEWHERE = re.compile(r"\b(?:rest|other|others|another|else)\b", re.IGNORECASE)


# A change said as only maybe wanted ("I want maybe change my running shoes to the white ones").
_MAYBE = re.compile(r"\b(?:maybe|perhaps|possibly)\b|也许|可能", re.IGNORECASE)


def changes_held_back(clauses: list[Clause]) -> list[Clause]:
    """ "Would it be possible to exchange it for the 30-50 lb version ...? ... I haven't decided yet,
    I'm just gathering information.", "It is still possible to return it? I only ask, I not decide
    yet.": a sentence that only weighs a change (`nlp.speech_acts.weighs_a_change`), naming nothing of
    its own (no product, no order, not "the rest"), or a change weighed in its own words ("在考虑要不要
    退"), holds back the changes the message asks whether it can have (or only maybe wants); each is
    asked about, and answered, not proposed. One said outright stays asked for ("I was wondering
    whether I could return the vacuum cleaner ... If so, please put the money back on the card I
    used."), and so does a change beside a hedge about something else ("Cancel the kettle order.
    Still thinking about the rest.")."""
    from csagent.grounding.frame import asks_as_question
    from csagent.nlp.entities.identifiers import ORDER_ID_RE
    from csagent.nlp.speech_acts import weighs_a_change

    def hedge(c: Clause) -> bool:  # (or the change weighed in its own words: "在考虑要不要退")
        return weighs_a_change(c.text) and (c.intent in WRITE_INTENTS or (
            not c.entities.get("products") and not ORDER_ID_RE.search(c.text)
            and not _POINTS_ELSEWHERE.search(c.text)))

    def held(c: Clause) -> bool:  # (not one said outright: "If so, please put the money back on my card")
        return c.intent in WRITE_INTENTS and c.entities.get("asks_for_change") is not False and (
            asks_as_question(c.text) or weighs_a_change(c.text) or bool(_MAYBE.search(c.text)))

    if not any(hedge(c) for c in clauses):
        return clauses
    return [replace(c, entities={**c.entities, "asks_for_change": False}) if held(c) else c for c in clauses]


# A question of what a change would cost ("And what would the price difference be?", "how much more
# is it?").
_COST_ASKED = re.compile(
    r"\b(?:how much|what(?:'s| is| would| will)? (?:be )?the (?:price |cost )?difference"
    r"|(?:price|cost) difference|what (?:would|will|does) (?:it|that|this|the \w+) cost)\b|差价|多少钱",
    re.IGNORECASE)


def changes_priced_first(clauses: list[Clause], text: str, view: Any) -> list[Clause]:
    """ "Would it be possible to swap it for the 55-75 lb version before it ships? And what would the
    price difference be?": an item change asked whether it can be done, beside a question of what it
    would cost, and no word of how the customer would pay, is asked about: the price of the version
    asked for is the answer, and the change waits for their word ("ok go ahead with that"). Named
    with its payment ("... PayPal for any difference") or asked
    outright ("swap it for the 55-75 lb one"), it is asked for."""
    from csagent.grounding.frame import asks_as_question
    from csagent.grounding.resolve import resolve_payment

    if view is None or not any(_COST_ASKED.search(c.text) and asks_as_question(c.text) for c in clauses):
        return clauses

    def asked_whether(c: Clause) -> bool:
        return c.intent == "change_items" and c.entities.get("asks_for_change") is True \
            and asks_as_question(c.text)

    if not any(asked_whether(c) for c in clauses) or resolve_payment(text, view).named:
        return clauses
    return [replace(c, entities={**c.entities, "asks_for_change": False})
            if c.intent == "change_items" and c.entities.get("asks_for_change") else c for c in clauses]

