"""Fill a request's frame from the customer's own data: which order, which items become which
variants, which payment method. Pure: the caller passes the `CustomerView` (one read per turn)
and the catalogue's variants.

The rule everywhere: exactly one candidate -> use it and say so (`grounded` records how it was
found); several -> a question listing them (`question`); none -> the planner asks for what would
identify it. The same frame serves the model path: its prompts get the resolved references.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from csagent.domain.actions import PendingAction
from csagent.grounding.asking import (
    about_order,
    holding,
    items_listed,
    method_label,
    methods_listed,
    orders_listed,
    question,
)
from csagent.grounding.facts import names_a_price_difference, orders_by_facts
from csagent.grounding.model import CustomerView, Line, OrderView, Variant
from csagent.grounding.options import find_option_values, tokens
from csagent.grounding.places import city_named
from csagent.grounding.resolve import (
    ItemChange,
    line_by_options,
    method_not_held,
    names_a_payment_method,
    names_order_by_items,
    negated_option,
    option_dimensions,
    option_values,
    orders_mentioning,
    product_mentions,
    read_return_lines,
    resolve_item_changes,
    resolve_payment,
    resolve_return_lines,
)
from csagent.grounding.status import statuses_asked_about, statuses_described
from csagent.nlp.entities.identifiers import find_order_ids
from csagent.nlp.entities.words import says_any
from csagent.nlp.gloss import gloss
from csagent.nlp.replies import joined, phrase
from csagent.nlp.script import has_ideographs, has_question_mark
from csagent.requests import REQUEST_BY_VERB, REQUEST_BY_ZH_VERB, REQUEST_OF, STATUSES_FOR

# The requests whose proposals list items ("actually, only the boots" narrows them).
ITEM_REQUESTS = {
    action: intent for action, intent in REQUEST_OF.items() if intent in ("return_request", "change_items")
}

ORDER_INTENTS = frozenset(
    {
        "order_status",
        "tracking",
        "order_items",
        "refund_status",
        "cancel_order",
        "return_request",
        "change_order_address",
        "change_items",
        "change_payment",
        "complaint",
    }
)


# Questions about a product that are about the customer's purchase when they name one they bought
# ("my espresso machine stopped heating, I want a warranty claim"): the order is found, never asked.
PURCHASE_QUESTIONS = frozenset({"warranty"})


def _one_order(entities: dict[str, Any], order_id: str, **grounded: str) -> dict[str, Any]:
    """The entities of a clause grounded to one order, with how it was found (`grounded`: the
    words that name it, and `by` unless the products named it)."""
    return {**entities, "order_id": order_id, "grounded_orders": [order_id],
            "grounded": {**entities.get("grounded", {}), **grounded}}


# Words saying an order holds nothing but the products named: "just the light bulb", "only the boots",
# "the boots by themselves", "只有一套化妆品".
_ONLY_BEFORE = re.compile(r"(?:\b(?:just|only)\s+(?:(?:the|a|an|my|one|that|those|two|2)\s+)?"
                          r"(?:[\w-]+\s+){0,2}|只有(?:一\w?)?|单独[^，。？！,.?!]{0,10})$", re.IGNORECASE)
# ("the bookshelf by itself", "the bookshelf I ordered on its own")
_ALONE = r"by (?:it|them)sel(?:f|ves)|on (?:its|their) own|alone\b"
_ONLY_AFTER = re.compile(rf"^\W*(?:(?:i|that|which|it)\s+(?:\w+\s+){{0,2}}?)?(?:{_ALONE}|and nothing else)",
                         re.IGNORECASE)


# An order said to hold the thing asked about and nothing else, the thing unnamed ("the one that came
# on its own", "the one with nothing else in it"): `_ONLY_AFTER`'s words, anywhere in the answer.
_ON_ITS_OWN = re.compile(rf"\b(?:{_ALONE}|(?:with )?nothing else)\b", re.IGNORECASE)


def _only_these(text: str, mentions: Sequence[Any]) -> bool:
    """Do the words say the order holds only the products mentioned?"""
    return any(_ONLY_BEFORE.search(text[max(0, m.span[0] - 30):m.span[0]])
               or _ONLY_AFTER.search(text[m.span[1]:]) for m in mentions)


def find_order(
    intent: str, text: str, entities: dict[str, Any], view: CustomerView, message: str = "",
    recent: str | None = None,
) -> dict[str, Any]:
    """The order a clause that names none is about, from the products it mentions (or, when it
    mentions none, the products the whole message mentions: "The air purifier. Tracking number?");
    `recent` is the order the conversation was last about."""
    if (
        intent not in ORDER_INTENTS | PURCHASE_QUESTIONS
        or entities.get("order_id")
        or entities.get("invalid_order_id")
        or entities.get("tracking_number")
    ):
        return entities
    source = text
    mentions = not_what_it_is_for(text, product_mentions(text, view.products(), own=True))
    if not mentions and recent and view.order(recent) is not None and not _ANOTHER_ORDER.search(text) \
            and _POINTS_AT_ORDER.search(_EMPTY_IT.sub(" ", text)) and intent in _WHOLE_ORDER_WRITES \
            and _may_be_in(view.order(recent), text):
        # "the order w my e-reader and the running shoes is going to NY?? ... switch it to my LA
        # place": "it" is the order just found, not another order with those products whose status
        # would allow the change (whether it can change, the planner says).
        return _one_order(entities, recent, order="the order we talked about", by="conversation")
    if not mentions and message and not _ANOTHER_ORDER.search(text):
        # ("... and is my other order pending?" is about an order other than the one named.)
        source = message
        mentions = not_what_it_is_for(message, product_mentions(message, view.products(), own=True))
        # "my black kettle started leaking, is it still under warranty": the product the clause
        # points back at (carried into its entities), of those the message names.
        carried = [p for p in entities.get("products") or [] if p.get("carried")]
        mentions = [m for m in mentions if m.product_id in {str(p.get("product_id")) for p in carried}] \
            or _as_mentions(carried) or _said_before(mentions, message, text) or mentions
    if not mentions:
        if intent in PURCHASE_QUESTIONS:
            return entities  # a general question, not about a purchase
        # (or asked about: "one of my orders is still going to my old place in Chicago? Can you check
        # which one?")
        statuses = ("pending",) if intent == "change_order_address" else _NOT_YET_RECEIVED
        going = order_going_to(message or text, view, besides=entities.get("address"), statuses=statuses) \
            if intent == "change_order_address" or intent in READS else None
        if going is not None:
            # "one of my orders is heading to my old place on Pine Lane. Please send it to ...":
            # where it goes now says which order.
            return _one_order(entities, going.order_id, order="the order going there", by="facts")
        by_facts = orders_named_by_facts(intent, _without_new_address(text, entities), entities, view,
                                         _without_new_address(message, entities))
        if by_facts is not None:
            return by_facts
        return _order_by_status(intent, text, entities, view, message, recent)
    # "the white kettle I got": of the products one word names, the one the clause's products say
    # (`understanding_local._owned_of_ambiguous` picked it by the customer's items).
    picked = {str(p.get("product_id")) for p in entities.get("products") or []}
    mentions = [m for m in mentions if not m.ambiguous or m.product_id in picked] or mentions
    # "not the one with the boots, the one with the helmet": the boots rule their order out.
    negated = [m for m in mentions if _NEGATED_BEFORE.search(source[: m.span[0]])]
    if negated and len(negated) == len(mentions) and (
            (_PLURAL_ORDERS.search(text) and intent in READS | _WHOLE_ORDER_WRITES)
            or (intent in _WHOLE_ORDER_WRITES and source is text)):
        # "cancel everything i got pending except the office chair": the orders the status words
        # say, but those with the products ruled out (of an item request, "return everything
        # except the lamp", the items of an order are meant); "Could you cancel that one? Not the
        # chair one!": every product the clause names is ruled out, the order is one of those
        # without them (a read names what it asks about, whatever it rules out: "dont cancel my
        # bike order!! just tell me if its shipped")
        return _order_by_status(intent, text, entities, view, message, recent,
                                ruled_out={m.product_id for m in negated})
    mentions = [m for m in mentions if m not in negated] or mentions
    # "the grill came fine but where is my tablet?": what follows the contrast is what it is about.
    cut = max((b.end() for b in _CONTRAST.finditer(source)), default=-1)
    mentions = [m for m in mentions if m.span[0] >= cut] or mentions
    product_ids = {m.product_id for m in mentions}
    ruled_out = {m.product_id for m in negated} - product_ids
    talked_about = view.order(recent) if recent else None
    if talked_about is not None and talked_about.product_ids() & product_ids \
            and not _ANOTHER_ORDER.search(text) \
            and (_IN_THAT_ORDER.search(text) or _IT_AGAIN.search(_EMPTY_IT.sub(" ", text))):
        # "Has #W1 shipped?" ... "I meant to change the blue t-shirt in there to a large": the order
        # just talked about, whichever other order holds a t-shirt too (whether it can change, the
        # planner says)
        return _one_order(entities, talked_about.order_id, order="the order we talked about",
                          by="conversation")
    found = orders_mentioning(view, product_ids)
    fitting = (
        orders_mentioning(view, product_ids, STATUSES_FOR.get(intent)) if intent in STATUSES_FOR else found
    )
    if ruled_out:
        found = [o for o in found if not o.product_ids() & ruled_out] or found
        fitting = [o for o in fitting if not o.product_ids() & ruled_out] or fitting
    if _ANOTHER_ORDER.search(text) \
            or any(_OTHER_BEFORE.search(source[max(0, m.span[0] - 24):m.span[0]]) for m in mentions):
        # "wheres #W3101067 at" ... "and the other clock", "Cancel #W5733668 right now. And the other
        # order with an office chair in it too": of the orders holding it, not the one just talked
        # about or named
        besides = set(find_order_ids(message)) | ({talked_about.order_id} if talked_about else set())
        found = [o for o in found if o.order_id not in besides] or found
        fitting = [o for o in fitting if o.order_id not in besides] or fitting
    if len({m.span for m in mentions}) > 1:  # one word naming two products ("kettle") is one thing asked of
        # ("the order with the security camera and the pet bed": the one holding both, before any
        # status word narrows)
        fitting, found = _holding_most(fitting, product_ids), _holding_most(found, product_ids)
    if len(found) > 1 and _only_these(source, mentions):
        # "tracking for the order that's just the light bulb", "我有个订单里只有一套化妆品": the order
        # holding nothing else, of those holding it.
        fitting, found = ([o for o in group if o.product_ids() <= product_ids] or group
                          for group in (fitting, found))
    counted = _count_named(source, mentions)
    if len(found) > 1 and counted > 1:
        # "cancel the order with the 2 kettles in it": the order holding that many of them.
        fitting, found = ([o for o in group if _how_many(o, product_ids) >= counted] or group
                          for group in (fitting, found))
    # "the first one arrived ages ago but I'm still waiting on the newer one": the status after the
    # contrast is the one meant.
    after = statuses_described(source[cut:]) if cut > 0 and source is text else None
    own = after or statuses_described(text)
    described = own or (statuses_described(message) if message else None)
    asked = statuses_asked_about(text) if own else bool(message) and _status_asked_in(message)
    if len(fitting) > 1 and described and not asked:
        # "the skateboard in my pending order": the status words pick among the orders with it;
        # also those of another clause ("I cancelled that keyboard order. Did you refund it?"),
        # whatever this one asks.
        narrowed = [o for o in fitting if o.in_status(described)]
        fitting = narrowed or fitting
    if len(fitting) > 1:
        # "the camera with the 10x zoom", "my keyboard, the white one": the item's options pick, in
        # the clause or elsewhere in the message ("has the dumbbell set shipped? the 30-50 one").
        told_plainly = bool(message) and message != source and not _NEGATION_OR_OTHER.search(message)
        elsewhere = message if told_plainly else ""
        fitting, found = (
            _described_by_options(group, product_ids, source)
            or (_described_by_options(group, product_ids, elsewhere) if elsewhere else [])
            or group
            for group in (fitting, found)
        )
    if len(fitting) > 1 or len(found) > 1:
        # "the same brown bookshelf twice, one for me and one that went to my cousin in Houston ...
        # Can we return the Houston one?": where it went (or what it cost, or what paid) picks among
        # the orders holding it, in the clause or the message
        for words in (source, message) if message and message != source else (source,):
            told = orders_by_facts(words, view)
            if told is None:
                continue
            told_ids = {o.order_id for o in told}
            fitting, found = ([o for o in group if o.order_id in told_ids] or group
                              for group in (fitting, found))
            break
    if len(fitting) > 1 and not described and intent in ORDER_READS_BY_STATUS:
        # "wher is my keybaord?": a cancelled order is nowhere; the one still live is asked about.
        fitting = [o for o in fitting if o.status != "cancelled"] or fitting
    if len(found) > 1 and len(fitting) <= 1:
        # "the blue tee i ordered, the M one, can u bump it to an L": the item its options describe
        # says which order, even one whose status the change does not allow (the rule is said then),
        # never another order's item of the same product. (Only the words before what it is to
        # become describe it: "change my tee to blue" names the wish.)
        first = min(m.span[1] for m in mentions)
        pivot = _CHANGE_PIVOT.search(source, first)
        by_options = _described_by_options(found, product_ids, source[: pivot.start()] if pivot else source)
        if len(by_options) == 1:
            fitting = by_options
    if len(fitting) == 1 and not described and _looks_alike(fitting[0], found):
        # "Cancel my tea kettle order", with one kettle order pending and another already processed:
        # the customer cannot tell the two apart (neither has reached them), so the one the policy
        # would let change is not assumed to be the one meant; both are offered, with their statuses.
        fitting = found
    chosen = fitting if len(fitting) == 1 else found
    if len(chosen) == 1:
        return _one_order(entities, chosen[0].order_id, order=f"the order with the {mentions[0].name}")
    if intent in PURCHASE_QUESTIONS:
        return entities  # several orders with it: the question is answered for the product
    if intent == "complaint" and len(chosen) > 1 and not _OF_MONEY.search(source):
        # "robot vacuum wont go back on its dock": what went wrong with a thing that came, never
        # with one of a cancelled order (a charge or a refund may be: "charged twice for the boots")
        came = [o for o in chosen if o.status != "cancelled"]
        if len(came) == 1:
            return _one_order(entities, came[0].order_id, order=f"the order with the {mentions[0].name}")
        chosen = came or chosen
    from csagent.grounding.facts import asks_which_orders

    if 1 < len(chosen) <= MAX_LISTED and (intent == "complaint" or (intent in READS and (
            _PLURAL_ORDERS.search(text) or asks_which_orders(text)))):
        # "charged twice for the boots", with boots in two orders: both orders are the facts; "the
        # status of every order of mine that included a Bluetooth speaker": each one answered; so
        # is "security camera. which order was it in", whose answer is the orders holding it.
        ids = [o.order_id for o in chosen]
        return {**entities, "order_ids": ids, "grounded_orders": ids}
    several = len({m.span for m in mentions}) > 1
    each = _one_order_each(intent, view, mentions) \
        if len(chosen) > 1 and (intent in READS or (intent in _SPLIT_BY_ORDER and several)) else []
    if each:
        # "tracking for the grill and the office chair": each product in one order of its own,
        # so each order is asked about ("cancel my yoga mat order and my makeup kit order": each
        # is cancelled, each proposed on its own; "return the tablet and the pet bed": each order's
        # item returned).
        return {**entities, "order_ids": each, "grounded_orders": each}
    if len(chosen) > 1:
        # "a kettle" when the word named two products (the Electric Kettle and the Tea Kettle)
        names = mentions[0].surface if mentions[0].ambiguous else mentions[0].name
        return {
            **entities,
            "order_candidates": [o.order_id for o in chosen],
            "grounded_orders": [o.order_id for o in chosen],
            **question(phrase("ask_orders_with_product", count=len(chosen), product=names,
                              orders=orders_listed(chosen))),
        }
    return entities


# A count just before a product's name: "the 2 kettles", "both of the lamps", "two pairs of earbuds".
_COUNT_BEFORE = re.compile(r"\b(two|2|three|3|four|4|both)\s+(?:(?:of\s+)?(?:the|my)\s+)?(?:pairs?\s+of\s+)?"
                           r"(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
_COUNT_VALUES = {"two": 2, "2": 2, "both": 2, "three": 3, "3": 3, "four": 4, "4": 4}


def _count_named(text: str, mentions: Sequence[Any]) -> int:
    """How many of a product the words count ("the order with the 2 kettles in it"); 0 when none."""
    counts = [_COUNT_BEFORE.search(text[max(0, m.span[0] - 30):m.span[0]]) for m in mentions]
    return max((_COUNT_VALUES[c.group(1).lower()] for c in counts if c), default=0)


def _how_many(order: OrderView, product_ids: set[str]) -> int:
    """How many of the order's items are of the products."""
    return sum(x.product_id in product_ids for x in order.lines)


# Words of money: a complaint about it may be of a cancelled order's charge or refund.
_OF_MONEY = re.compile(r"\b(?:charg\w*|refund\w*|money|paid|pay|bill\w*|price|\$|\d+\.\d\d)", re.IGNORECASE)
# Statuses a customer sees alike: none of them has reached the customer yet.
_NOT_YET_RECEIVED = ("pending", "processed")


def _looks_alike(fitting: OrderView, found: Sequence[OrderView]) -> bool:
    """Is there, besides the one order whose status allows the change, another holding the product
    that the customer could not tell from it (both still on their way to them)? A delivered or
    cancelled order is told apart by the customer themselves."""
    return fitting.in_status(_NOT_YET_RECEIVED) and any(
        o.order_id != fitting.order_id and o.in_status(_NOT_YET_RECEIVED) for o in found)


# What a thing is for, said of it ("it's for my 17 inch laptop", "they're to go with my grey backpack").
_WHAT_IT_IS_FOR = re.compile(
    r"\b(?:it'?s|it is|they'?re|they are|this is|that'?s)\s+(?:for|to fit|to go with)\s+"
    r"(?:my|our|the|a|an)\s+(?:[\w-]+\s+){0,3}$", re.IGNORECASE)


def not_what_it_is_for(text: str, mentions: Sequence[Any]) -> list[Any]:
    """The products the words are about, without one named only as what the thing is for ("can i get
    the large size instead of small, its for my 17 inch laptop": the laptop is no item of the change)."""
    return [m for m in mentions if not _WHAT_IT_IS_FOR.search(text[: m.span[0]])]


def _may_be_in(order: OrderView | None, text: str) -> bool:
    """Could the order be the one the words describe by its status ("the second order hasn't shipped
    yet, could you cancel that one?" is not about the delivered one just talked about)?"""
    described = statuses_described(text)
    return order is None or not described or statuses_asked_about(text) \
        or order.in_status(described)


def _said_before(mentions: Sequence[Any], message: str, text: str) -> list[Any]:
    """Of the products a message names, those named before the clause that names none ("The tablet
    ... the screen cracked 😭 is that something the warranty covers? And have the dumbbells
    shipped?": "that" is the tablet, not the dumbbells after it); [] when none comes before it."""
    at = message.find(text)
    return [m for m in mentions if m.span[1] <= at] if at > 0 else []


def _as_mentions(products: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Products of the clause's entities as mentions of no words of its own (one carried from the
    clause before: "my black kettle started leaking, is it still under warranty")."""
    from csagent.nlp.entities.products import ProductMention

    return [ProductMention(str(p["product_id"]), str(p.get("name") or ""), 1.0, str(p.get("surface") or ""),
                           (0, 0), dict(p.get("options") or {})) for p in products if p.get("product_id")]


@lru_cache(maxsize=64)
def _status_asked_in(message: str) -> bool:
    """Does a clause of the message ask whether something has a status ("Has my puzzle shipped? My
    partner keeps asking me about it")? Its status words are then the question, for the clauses
    that point back at it too, not a description of which order is meant. (Cached: every clause
    of the message grounded asks it of the same message.)"""
    from csagent.nlp.clauses import split_clauses

    return any(statuses_described(c) and statuses_asked_about(c) for c in split_clauses(message))


# Reads whose answer is where an order is: a cancelled one is not meant when a live one fits.
ORDER_READS_BY_STATUS = frozenset({"order_status", "tracking"})


# A message that rules something out or points at "the other" one ("don't tell me about the gold
# one, the OTHER tablet"): its option words may describe the item not meant.
_NEGATION_OR_OTHER = re.compile(r"\b(?:not|no|never|other|except)\b|n[’']t\b", re.IGNORECASE)


# Where what an item is to become begins: "... bump it to an L", "swap it for the black one".
_CHANGE_PIVOT = re.compile(r"\b(?:to|into|for|instead)\b|->|→", re.IGNORECASE)


def _described_by_options(orders: Sequence[OrderView], product_ids: set[str], text: str) -> list[OrderView]:
    """Of several orders holding a product named, those whose item of it has an option value the
    words name that tells the orders apart, and none named after a negation ("not the white one");
    [] when the words tell none apart."""
    values = option_values([x for o in orders for x in o.lines if x.product_id in product_ids])
    telling = {k: v for k, v in values.items() if len(set(v)) > 1}
    if not telling:
        return []
    toks = tokens(text)
    hits = find_option_values(text, telling)
    wanted = [h for h in hits if not negated_option(toks, h)]
    unwanted = [h for h in hits if negated_option(toks, h)]

    def fits(order: OrderView, named: Sequence[Any]) -> int:
        """How many of the values named its best-fitting item of the product has."""
        return max((sum(x.options.get(h.key) == h.value for h in named)
                    for x in order.lines if x.product_id in product_ids), default=0)

    picked = [o for o in orders if not (unwanted and fits(o, unwanted))]
    if wanted:
        # "the red leather office chair", with leather chairs in three orders and the red one in
        # one: the item with the most of the values named, not any item with one of them.
        best = max(fits(o, wanted) for o in picked) if picked else 0
        picked = [o for o in picked if best and fits(o, wanted) == best]
    return picked if 0 < len(picked) < len(orders) else []


def _one_order_each(intent: str, view: CustomerView, mentions: Sequence[Any]) -> list[str]:
    """The orders of several products named, when each is in exactly one order (of those a read
    of its kind fits, live ones first), in the order named; [] when one of them is in several or
    they are all in the same one."""
    orders: list[str] = []
    for product_id in dict.fromkeys(m.product_id for m in mentions):
        holding = orders_mentioning(view, {product_id}, STATUSES_FOR.get(intent)) \
            if intent in STATUSES_FOR else orders_mentioning(view, {product_id})
        if intent in ORDER_READS_BY_STATUS:
            holding = [o for o in holding if o.status != "cancelled"] or holding
        if len(holding) != 1:
            return []
        orders.append(holding[0].order_id)
    distinct = list(dict.fromkeys(orders))
    return distinct if 1 < len(distinct) <= MAX_LISTED else []


def _holding_most(orders: Sequence[OrderView], product_ids: set[str]) -> list[OrderView]:
    """ "The backpack in my order with the dumbbells": of the orders with any product named, those
    holding the most of them (all of them, when one order does)."""
    if len(orders) < 2 or len(product_ids) < 2:
        return list(orders)
    most = max(len(o.product_ids() & product_ids) for o in orders)
    return [o for o in orders if len(o.product_ids() & product_ids) == most]


# Words that single out some items of an order ("only the earbuds", "everything except the lamp").
# An order id with what it holds in brackets after it: "#W4862767 (bookshelf + 2 office chairs)".
_ORDER_DESCRIBED = re.compile(r"#?W\d{7}\s*\([^)]*\)", re.IGNORECASE)
# An item picked out by what describes it, not by its product's name: "the metal one", "that black one".
_ONE_PICKED = re.compile(r"\b(?:the|that|this)\s+(?:[\w-]+\s+){1,3}ones?\b", re.IGNORECASE)
# Some of an order's items, none named: "one of them", "keep the other", "just take one off".
_ONE_OF_SEVERAL = re.compile(r"\b(?:one of (?:them|those|these|the two|my)|keep the other|the other one stays"
                             r"|just one of|only one of|(?:take|remove|drop|cancel)\s+(?:just\s+|only\s+)?one"
                             r"(?!\s+(?:of\s+(?:my|your|the)\s+)?orders?\b)"
                             r"(?:\s+of\s+(?:them|those))?(?:\s+(?:off|out))?)\b", re.IGNORECASE)
# "其中一块" (one of them), "只想要一块" (only want one), "之一": some of the order's items, in Chinese.
_ZH_SOME_ITEMS = re.compile(r"其中|只(?:想|要|取消|退|留)|之一")
_SOME_ITEMS = re.compile(
    r"\b(only|just the|except|but not|keep(?:ing)?|everything else|rest of|the rest)\b", re.IGNORECASE
)
# The statuses an order must be in for a question about it to make sense without more words.
# A refund is on an order cancelled (the store refunds the whole payment) or coming for one whose
# return or exchange was requested.
STATUSES_ASKED_ABOUT: dict[str, tuple[str, ...]] = {
    "tracking": ("processed", "delivered"),
    "refund_status": ("cancelled", "return requested", "exchange requested"),
}
# At most this many candidates are listed back; more, and the order number is asked for.
MAX_LISTED = 4
# Questions that may be answered for several orders at once ("where are my pending orders?").
READS = frozenset({"order_status", "tracking", "order_items", "refund_status"})
# "my other order", "the other one", "another order": not the one the conversation was about.
_ANOTHER_ORDER = re.compile(
    r"\b(?:other|another)\s+(?:(?:pending|processed|shipped|delivered|cancell?ed|open|undelivered)\s+)?"
    r"(?:order|one|purchase|package)\b|\bthe other\b\s*(?:[.,;!?]|$)", re.IGNORECASE
)
# "the other" just before a product's name ("and the other clock", "my other black kettle").
_OTHER_BEFORE = re.compile(r"\bother\s+(?:[\w-]+\s+)?$", re.IGNORECASE)


def points_at_another_order(text: str) -> bool:
    """ "my other order", "the other one", "another order": not the one talked about or named."""
    return bool(_ANOTHER_ORDER.search(text))


# One order among several ("cancel one of my orders"): which, is asked.
_ONE_OF_THEM = re.compile(r"\bone of (?:my|the|your|these|those|them)\b", re.IGNORECASE)
# Changes made to a whole order, which a customer may ask of several at once.
_WHOLE_ORDER_WRITES = frozenset({"change_order_address", "cancel_order", "change_payment"})
# Writes asked of several products at once that become one request per order when each product is in
# an order of its own ("return the tablet and the pet bed": a return of each order's item).
_SPLIT_BY_ORDER = _WHOLE_ORDER_WRITES | frozenset(ITEM_REQUESTS.values())
# Words that ask about several of the customer's orders at once, not one: plurals and quantifiers
# ("anything of mine not delivered yet?", "which of my stuff hasn't shipped", "gimme the tracking
# nums", "what do i have that hasnt shipped").
_PLURAL_ORDERS = re.compile(r"\b(orders|all of them|both of them|each of them|any of them|each(?: one)?|both"
                            r"|every (?:single )?(?:one|order)"
                            r"|anything|everything|any of my"
                            r"|which ones|my (?:\w+ )?(?:stuff|things)|refunds|in total|altogether"
                            r"|tracking (?:numbers|nums|nos|#s|codes|ids)|what do i have"
                            # ("the two cancelled ones": orders counted by their status)
                            r"|(?:two|2|three|3|both)\s+(?:cancell?ed|pending|delivered|processed|shipped|other)"
                            r"\s+ones)\b"
                            # Chinese marks no plural: a number of orders, "these", "each", "respectively"
                            r"|[两二三几多]个[^，。？！,.?!]{0,8}?订单|这些订单|所有订单|每个订单|每笔|分别|一共|总共",
                            re.IGNORECASE)
_THEY = re.compile(r"\b(?:they|them|those)\b", re.IGNORECASE)
_COUNTED_ORDERS = re.compile(
    r"\b(two|2|three|3|four|4|both)\s+(?:of\s+)?(?:(?:my|the|your)\s+)?(?:\w+\s+)?orders\b", re.IGNORECASE)


def _orders_counted(message: str) -> int:
    """How many orders the words count ("I cancelled two orders with you"); 0 when none."""
    found = _COUNTED_ORDERS.search(message or "")
    if found is None:
        return 0
    return _COUNT_VALUES[found.group(1).lower()]
# "where does it ship to?", "cancel that order": the order the conversation is about. Not the "it"
# of "is it possible to ...", which points at nothing.
_POINTS_AT_ORDER = re.compile(
    r"\b(it|that order|this order|that one|this one|the same order|the whole thing|the whole order"
    r"|the entire order)\b"
    r"|它|这个订单|那个订单"
    # ("Has the order shipped at least?", said of the order just talked about: "the order" with
    # nothing after it saying which)
    r"|\b(?:the|my) order\b(?=\s+(?:has|have|had|is|was|will|did|does|already|yet|still|even|been|left"
    r"|gone|come|\w+ed)\b"
    r"|\s*[?!.,]|\s*$)", re.IGNORECASE)
# A Chinese clause that names no order at all, nor asks which or how many ("那还能取消吗？", "多久能到？";
# not "我有哪些订单还没发货？"): its subject left unsaid, as Chinese does, is the thing just talked about.
_ZH_LEFT_UNSAID = re.compile(r"(?!.*(?:订单|单子|哪|所有|全部|都|每|其他|另|别的|几个|[A-Za-z]))"
                             r".*[\u4e00-\u9fff].*")
# A product placed in the order just talked about ("the blue t-shirt in there", "the lamp from that order").
# "it", pointing back at the item just talked about ("Then I want exchange it for one glass kettle").
_IT_AGAIN = re.compile(r"\b(?:exchange|swap|return|replace|change|switch|send back)\s+it\b", re.IGNORECASE)
_IN_THAT_ORDER = re.compile(
    r"\b(?:in|from|inside|of|out of)\s+(?:there|it|that order|this order|that one|the same order)\b",
    re.IGNORECASE)
_EMPTY_IT = re.compile(r"\b(?:is it|it is|it's|was it|it was|will it be|would it be)\s+(?:\w+\s+)?"
                       r"(?:possible|ok|okay|alright|fine|true|late|worth|necessary|normal|free|allowed)\b",
                       re.IGNORECASE)


def _without_new_address(text: str, entities: Mapping[str, Any]) -> str:
    """The words without the address the clause gives ("send my tablet to 463 Park Avenue,
    Phoenix"): where something should go describes no order (an order already going there is the
    one that needs no change)."""
    for value in (entities.get("address") or {}).values():
        if value and len(str(value)) > 1:
            text = re.sub(re.escape(str(value)), " ", text, flags=re.IGNORECASE)
    return text


# Words saying where an order goes now ("is going to", "ships to", "heading to").
_WHERE_IT_GOES = re.compile(
    r"\b(?:going|goes|heading|headed|ships|shipping|being sent|sent|set to (?:go|ship)"
    # ("there is one order I send to Seattle, to my brother": the one the customer sends there)
    r"|(?:order|one|package|parcel)\s+i\s+(?:send|ship|shipped))\s+(?:to|for)\b", re.IGNORECASE)


def tells_where_it_goes(text: str) -> bool:
    """Do the words say where an order goes now ("is heading to my old place")?"""
    return bool(_WHERE_IT_GOES.search(text))


def order_going_to(text: str, view: CustomerView, besides: Mapping[str, Any] | None = None,
                   statuses: Sequence[str] = ("pending",)) -> OrderView | None:
    """The one order of `statuses` a sentence says goes to one of the customer's places ("one of my
    orders is going to my old apartment on Pine Lane"), other than `besides` (a new address given)."""
    from csagent.grounding.facts import negated_before

    for sentence in _SENTENCE_END.split(text):
        goes = _WHERE_IT_GOES.search(sentence)
        if not goes or negated_before(sentence[:goes.end()]):
            continue  # ("which of my orders are NOT going to my own place in Charlotte?": the others)
        # (the place after "going to" first: "I moved back to San Diego ... one of my orders is still
        # going to my old place in Chicago")
        named = view.address_named(sentence[goes.end():], besides=besides) \
            or view.address_named(sentence, besides=besides)
        going = [o for o in view.orders if o.status in statuses and named is not None
                 and same_address(named, o.address)]
        if len(going) == 1:
            return going[0]
    return None


# A progressive verb of where orders go, before the place: "being shipped to", "going somewhere".
_GOING_SOMEWHERE = re.compile(r"\b(?:(?:are|is)\s+)?(?:being\s+)?"
                              r"(?:shipped|sent|going|headed|heading|shipping)"
                              r"\s+(?=(?:to|somewhere|anywhere|elsewhere)\b)", re.IGNORECASE)


def orders_named_by_facts(intent: str, text: str, entities: dict[str, Any], view: CustomerView,
                          message: str = "") -> dict[str, Any] | None:
    """The orders a clause names by an amount, a city or the method that paid (`grounding.facts`);
    the message's facts when the clause, asking which order, has none of its own ("I see 234.57
    coming back to my PayPal. From which order is this money?"). One order is that order; two to
    four are each answered; None when no fact is named or no order fits (the rest of grounding
    decides)."""
    from csagent.grounding.facts import asks_which_orders, orders_by_facts

    fitting = orders_by_facts(text, view)
    if fitting is None and message and message != text and asks_which_orders(text):
        fitting = orders_by_facts(message, view)
    if not fitting:
        return None
    # ("which of my orders are being shipped somewhere other than my home address?": where they go,
    # not how far they have got)
    described = statuses_described(_GOING_SOMEWHERE.sub(" ", text))
    if described and not statuses_asked_about(text):
        # "which of my pending orders went on PayPal?": the status words say which of them; "pay for
        # my pending order with my Mastercard instead of the gift card", when the Mastercard paid
        # only a cancelled order, is not about the orders the method paid (the rest of grounding
        # finds the order).
        fitting = [o for o in fitting if o.in_status(described)]
        if not fitting:
            return None
    if len(fitting) == 1:
        return _one_order(entities, fitting[0].order_id, order="the order you describe", by="facts")
    if len(fitting) <= MAX_LISTED and intent in READS:
        return {**entities, "order_ids": [o.order_id for o in fitting],
                "grounded_orders": [o.order_id for o in fitting], "grounded": {"by": "facts"}}
    return None


def _order_by_status(
    intent: str, text: str, entities: dict[str, Any], view: CustomerView, message: str,
    recent: str | None = None, ruled_out: frozenset[str] | set[str] = frozenset(),
) -> dict[str, Any]:
    """The order a clause that names no product is about, from what it is asked about and the
    status words ("the one that's on its way", "hasn't shipped"): the customer's one order that
    fits is used; of several, the one the conversation was just about (`recent`: "then I'd like
    to return both items"), or the one other than it ("and my other order?"); else two to four
    are listed back, or all answered when the question is about "orders"; more, or a clause that
    asks nothing, changes nothing (the planner asks for the order number). Orders holding a product
    of `ruled_out` ("everything except the office chair") are none of them."""
    from csagent.nlp.speech_acts import asks_something

    if not (asks_something(text) or intent in STATUSES_FOR):
        return entities
    # (the message's status words describe its orders, unless a clause of it asks whether they have
    # them: "I have two orders, please tell me how much is each one and are they sent already?")
    described = statuses_described(text) or (None if message and _status_asked_in(message)
                                             else statuses_described(message))
    allowed = STATUSES_FOR.get(intent) or STATUSES_ASKED_ABOUT.get(intent)
    applies = [o for o in view.orders if (allowed is None or o.in_status(allowed))
               and not o.product_ids() & ruled_out]
    points_back = bool(_POINTS_AT_ORDER.search(_EMPTY_IT.sub(" ", text))) \
        or bool(_ZH_LEFT_UNSAID.fullmatch(text.strip()))
    if recent and view.order(recent) is not None and not _ANOTHER_ORDER.search(text) and points_back:
        # "tracking # for #W9958106" ... "address it ships to?": the order just talked about, even
        # when its status does not allow what is asked (the planner then says so); so is what a
        # Chinese follow-up leaves unsaid ("我的吸尘器发货了没有？" ... "那还能取消吗？").
        return _one_order(entities, recent, order="the order we talked about", by="conversation")
    if recent and view.order(recent) is not None and not _ANOTHER_ORDER.search(text) \
            and not _PLURAL_ORDERS.search(text) and statuses_described(text) and statuses_asked_about(text):
        # "why 2 hoses in #W1" ... "my bad. shipped yet?": whether the order just talked about has
        # the status is asked; the words describe no other order.
        return _one_order(entities, recent, order="the order we talked about", by="conversation")
    if recent and _ANOTHER_ORDER.search(text) and not _PLURAL_ORDERS.search(text):
        # "... and has my other order shipped?": the one order besides the one talked about, whatever
        # the status words ask about it.
        others = [o for o in applies if o.order_id != recent]
        if len(others) == 1:
            return _one_order(entities, others[0].order_id, order="your other order", by="conversation")
        applies = others or applies  # (several: which, is asked among them)
    fitting = [o for o in applies if described is None or o.in_status(described)]
    if not fitting and statuses_asked_about(text):
        # "has anything I ordered shipped yet?" when nothing has: each order's status is the answer
        fitting = applies
    if intent == "change_order_address" and entities.get("address"):
        # "could you send my order to 592 Broadway, ...": not the one that already goes there
        fitting = [o for o in fitting if not same_address(entities["address"], o.address)] or fitting
    if len(fitting) == 1:
        only = fitting[0]
        return _one_order(entities, only.order_id, order=f"your {only.status} order", by="status")
    # ("I have two orders, ... are they sent already?": "they" after orders in the message)
    # (or as many orders as the message counts: "I cancelled two orders with you ... How much are you
    # even refunding me?", with two cancelled)
    plural = bool(_PLURAL_ORDERS.search(text)) \
        or bool(_THEY.search(text) and _PLURAL_ORDERS.search(message)) \
        or (len(fitting) > 1 and _orders_counted(message) == len(fitting))
    several = intent in READS or (intent in _WHOLE_ORDER_WRITES and not _ONE_OF_THEM.search(text))
    if 1 < len(fitting) <= MAX_LISTED and several and plural:
        # "was I refunded for my cancelled orders?": every order asked about, each answered; "send
        # my pending orders to 55 Birch Road, ...": each changed (a proposal lists every one).
        return {**entities, "order_ids": [o.order_id for o in fitting],
                "grounded_orders": [o.order_id for o in fitting], "grounded": {"by": "status"}}
    if recent and len(fitting) > 1 and not plural:
        meant = [o for o in fitting if (o.order_id != recent) == bool(_ANOTHER_ORDER.search(text))]
        if len(meant) == 1:
            return _one_order(entities, meant[0].order_id, order="the order we talked about",
                              by="conversation")
    if 1 < len(fitting) <= MAX_LISTED:
        return {
            **entities,
            "order_candidates": [o.order_id for o in fitting],
            "grounded_orders": [o.order_id for o in fitting],
            "grounded": {"by": "status"},
            **question(phrase("ask_which_order", orders=orders_listed(fitting))),
        }
    return entities


def same_address(named: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> bool:
    """Is the address named the one given (street line and zip code, case and spacing aside)?"""
    if not named or not current:
        return False

    def key(address: Mapping[str, Any]) -> tuple[str, str]:
        return (" ".join(str(address.get("address1") or "").lower().split()),
                str(address.get("zip") or "").strip())

    return all(key(named)) and key(named) == key(current)


# A payment asked to be shared between methods ("split the payment", "half on my Visa and half on
# PayPal", "一半用礼品卡").
_SPLIT_ASKED = re.compile(r"\bsplit(?:ting)?\b"
                          r"|\b(?:half|part)\b[^.?!]{0,40}\b(?:(?:the )?other half|half|the rest)\b"
                          r"|一半|分开付|拆分", re.IGNORECASE)


def _without_method(entities: Mapping[str, Any]) -> dict[str, Any]:
    """The entities without the payment method read so far (the words rule it out or ask again)."""
    return {k: v for k, v in entities.items() if k != "payment_method_id"}


def fill_payment(
    text: str,
    entities: dict[str, Any],
    view: CustomerView,
    order: OrderView | None,
    *,
    required: bool,
    replacing: bool = False,
    default: str | None = None,
) -> dict[str, Any]:
    """The payment method the words name. `replacing`: the order's own method is the one being
    replaced, so a named other method wins ("from my gift card to my Visa": the Visa). `default`:
    the method a required one is when the words name none (else the customer is asked)."""
    if replacing and _SPLIT_ASKED.search(text):
        # "split the payment, half on my Visa and the other half on a gift card": an order is paid
        # with one method; the rule and how it is paid answer (`planning`), nothing is proposed.
        return {**_without_method(entities), "split_asked": True}
    choice = resolve_payment(text, view, order)
    if replacing and order is not None and order.paid_with:
        other = resolve_payment(text, view, order, exclude=order.paid_with)
        if other.method is not None or other.candidates:
            choice = other
        if (choice.method is None or choice.method.payment_method_id == order.paid_with) \
                and (missing := method_not_held(text, view)):
            # "Is possible to pay the order with PayPal and not with my Visa card?" from an account
            # without PayPal: a payment moves only to a method on the account; the rule and the
            # methods it holds answer (`planning`), nothing is proposed nor asked.
            return {**_without_method(entities), "method_not_held": missing}
    if choice.method is not None:
        return {**entities, "payment_method_id": choice.method.payment_method_id}
    if choice.candidates:
        return {**entities, **question(phrase("ask_which_method", methods=methods_listed(choice.candidates)))}
    if required and default is not None:
        return {**entities, "payment_method_id": default}
    if required:
        methods = view.payment_methods
        if len(methods) == 1:  # nothing else it could be
            return {**entities, "payment_method_id": methods[0].payment_method_id}
        if replacing:  # a payment change: the order's own method is not a choice
            methods = tuple(m for m in methods if order is None or m.payment_method_id != order.paid_with) \
                or methods
        shown = methods_listed(methods)
        asked = (phrase("ask_method_instead", order_id=order.order_id, methods=shown)
                 if replacing and order is not None
                 else phrase("ask_method_for_difference", methods=shown))
        return {**entities, **question(asked)}
    return entities


def fill_item_changes(
    text: str, entities: dict[str, Any], view: CustomerView, variants: Mapping[str, Sequence[Variant]]
) -> dict[str, Any]:
    """`change_items`: exchange (delivered order) or modification (pending order), the pairs of
    (item, new item) and the payment method for the price difference."""
    order = view.order(entities.get("order_id"))
    if order is None:
        return entities
    action = "exchange_items" if order.status == "delivered" else "modify_items"
    out: dict[str, Any] = {**entities, "item_action": action}
    changes = resolve_item_changes(text, order, variants)
    problems = changes.problem_phrases()
    # An item taken out and nothing asked instead ("remove only the electric kettle and keep the
    # rest") is no option change, whatever option its words happen to name ("electric").
    taken_out = bool(_REMOVES.search(text)) and not _ANOTHER_ITEM_ASKED.search(text)
    # ... nor is one more of an item added ("Could I add another one of those smart light bulbs to
    # order #W1?"), which its words read as the same item again
    same_again = bool(changes.changes) and all(c.new is not None and c.new.item_id == c.line.item_id
                                               for c in changes.changes)
    kind = _not_an_option_change(text, order, entities) \
        if problems or not changes.changes or taken_out or same_again else None
    if kind:
        # "take the keyboard out of #W1", "add a second kettle", "the headphones for a speaker
        # instead": no change of options, which is all an item change can be. The order's facts
        # and the store's rule, nothing asked and nothing proposed.
        return {**out, "not_an_option_change": kind}
    if problems:
        offers = [_offer(c) for c in changes.changes if c.options]
        listed = [phrase("ask_change_available", offers=joined(offers, "groups"))] if offers else []
        # (naming the order that was found)
        asked: dict[str, Any] = question(about_order(order.order_id, *problems, *listed))
        if not listed and all(c.new is None and not c.options and not c.unstated and not c.undecided
                              and not c.asks_value for c in changes.changes if c.problem):
            # "not available right now", with nothing to offer instead: a statement that settles the
            # request, not a question ("can I swap my sneakers for the size 11?")
            asked["settled"] = True
        if all(c.unstated for c in changes.changes):
            asked["unstated"] = True  # items named, no change for them: maybe only context
        if any(c.undecided for c in changes.changes):
            asked["undecided"] = True  # several items of the product it names: which one, asked
        if any(not (c.unstated or c.undecided) for c in changes.changes if c.problem):
            # options wished that no single item has: said, not asked; or the option to change,
            # whose values are asked ("can I get the tee in a different colour?")
            asked["target_named"] = True
        if any(c.asks_value for c in changes.changes):
            asked["asks_value"] = True
        return {**out, **asked}
    if not changes.changes:
        return {**out, **question(phrase("ask_items_to_change", order_id=order.order_id,
                                         items=items_listed(order.lines)))}
    out["item_ids"] = [c.line.item_id for c in changes.changes]
    out["new_item_ids"] = [c.new.item_id for c in changes.changes if c.new is not None]
    # "exchange the red headphones for the white ones": with no method named, the difference goes
    # through the order's own payment method, which the proposal names; the customer's "yes" to it
    # is their choice of method (the policy's "the user must provide a payment method").
    own = _own_method_covering(view, order, sum(c.new.price - c.line.price for c in changes.changes
                                                if c.new is not None))
    return fill_payment(text, out, view, order, required=True, default=own)


def _offer(change: ItemChange) -> dict[str, Any]:
    """ "the Wall Clock in 12 inches, wood ($150.00) or 16 inches, wood ($170.00)": the versions that
    fit a wish equally well, offered (the first four)."""
    versions = [phrase("ask_change_version", values=[str(v) for v in x.options.values()],
                       price=f"${x.price:.2f}") for x in change.options[:4]]
    return phrase("ask_change_offer", product=change.line.name, versions=joined(versions, "choices"))


def _own_method_covering(view: CustomerView, order: OrderView, difference: float) -> str | None:
    """The order's own payment method, when it is still on the account and (a gift card) its
    balance covers a difference to pay; None when the customer has to choose."""
    method = view.payment(order.paid_with)
    if method is None:
        return None
    short = method.balance is None or method.balance < difference
    if method.source == "gift_card" and difference > 0 and short:
        return None
    return method.payment_method_id


def ground(
    intent: str,
    text: str,
    entities: dict[str, Any],
    view: CustomerView | None,
    variants: Mapping[str, Sequence[Variant]] | None,
    message: str = "",
    recent: str | None = None,
    recent_products: Sequence[str] = (),
) -> dict[str, Any]:
    """The clause's entities with what the customer's data resolves (see the module docstring);
    `message` is the whole message the clause comes from, `recent` the order the conversation was
    last about and `recent_products` the products of it the conversation named."""
    if view is None:
        return entities
    entities = find_order(intent, text, dict(entities), view, message, recent)
    order = view.order(entities.get("order_id"))
    if order is not None:
        # What the planner checks before asking for anything: "cancel my sunglasses order" about
        # a delivered order gets the rule at once, not a question about the reason.
        entities["order_status"] = order.status
    if intent == "change_items" and variants is not None:
        return fill_item_changes(text, entities, view, variants)
    if intent == "change_order_address" and order is not None \
            and same_address(entities.get("address"), order.address):
        # "please leave it going to my home address" when it already goes there: nothing to
        # change, which the order's facts show; never a change from an address to itself.
        entities["already_ships_there"] = dict(entities["address"])  # (the address it was said of)
    if intent == "change_payment":
        if order is None and entities.get("order_ids"):
            # "both of my pending orders were paid with paypal, switch them to my visa": the method
            # they share is the one replaced
            several = [o for o in (view.order(i) for i in entities["order_ids"]) if o is not None]
            order = several[0] if several and len({o.paid_with for o in several}) == 1 else None
        return fill_payment(text, entities, view, order, required=True, replacing=True)
    if intent == "cancel_order" and order is not None:
        # "2 pairs of red headphones. pls cancel the in ear ones and leave the rest": the items may
        # be named in another clause of the message.
        own = resolve_return_lines(text, order)
        named = own or (resolve_return_lines(message, order) if message else None) or []
        # (a clause that names and picks nothing, "帮我取消掉" after "我有个订单里面是两台笔记本电脑":
        # the products the message names said which order, unless it asks for some of its items)
        picks = bool(own) or bool(_ONE_PICKED.search(text)) or bool(_ONE_OF_SEVERAL.search(text)) \
            or bool(message and (_SOME_ITEMS.search(message) or _ZH_SOME_ITEMS.search(message)))
        if _ORDER_DESCRIBED.search(text) and not _SOME_ITEMS.search(text):
            return entities  # "cancel #W4862767 (bookshelf + 2 office chairs)": which order, described
        removal = _REMOVES.search(text) if not _REMOVES_THE_ORDER.search(text) else None
        if removal is not None:
            # (what the removal's own words name is what is taken out: "take the espresso machine
            # off and still send me the puzzle")
            named = resolve_return_lines(removal.group(0), order) or named
        picked = line_by_options(text, order) if _ONE_PICKED.search(text) and len(order.lines) > 1 else None
        if picked is not None and not names_order_by_items(text, order):
            # "Order #W1 has TWO wristwatches in it ... Cancel the metal one": one item, picked by
            # its options; a cancellation is of the whole order, which the planner says.
            return {**entities, "partial_items": [picked.name]}
        if 0 < len(named) < len(order.lines) and (_SOME_ITEMS.search(text) or (
                _one_of_several(named, order) and not names_order_by_items(text, order) and picks) or (
                # "please remove the espresso machine from my order", "can you take the espresso
                # machine off and still send me the puzzle?": an item taken out, not the order
                removal is not None) or (
                # "I don't need the bookshelf anymore, but the laptop and the rest I still want.
                # Can you just cancel the bookshelf part?": the rest kept, said in another clause
                bool(message) and bool(_SOME_ITEMS.search(message)) and _names_its_items(text, order))):
            # "cancel only the earbuds", "I've got two bookshelves in there and I want the black one
            # cancelled": a cancellation is of the whole order; the planner says so. (A product
            # alone, "cancel my kettle order", says which order.)
            return {**entities, "partial_items": [x.name for x in named]}
        if len(order.lines) > 1 and _ONE_OF_SEVERAL.search(text):
            # "i accidentally ordered 2 garden hoses ... can i just cancel one of them and keep the
            # other??": some of its items, whichever they are; the planner says what can be done.
            return {**entities, "partial_items": [x.name for x in (named or order.lines)]}
        return entities
    if intent == "return_request" and order is not None and order.status == "delivered" \
            and _TOLD_MISSING.search(message or text) and "return_request" not in named_changes(text):
        # "Only ONE black t-shirt came in #W1 and I paid for TWO. I want the other one sent to me or
        # the money for it back": what never came cannot be sent back; the store's rule for a
        # missing item answers, nothing is proposed.
        return {**entities, "missing_told": True}
    if intent == "return_request":
        if order is not None and not entities.get("item_ids"):
            # "I've had the air purifier a while, it doesn't suit me. I'd like to return it": what
            # "it" points back to may be named in another clause of the message, or earlier on.
            beside = [m.product_id for m in product_mentions(message, order.products(), own=True)] \
                if message and message != text else []
            named, undecided = read_return_lines(text, order)
            lines = named or (
                implied_lines(text, order, [*beside, *(recent_products if order.order_id == recent else ())])
                or _one_line(line_by_options(text, order))
                if not product_mentions(text, view.products(), own=True) else None)
            if undecided:
                # "return the pet bed" about an order with a beige one and a grey one: which, is
                # asked; guessing would propose sending back the one they keep.
                entities = {**entities, **question(about_order(order.order_id, holding(undecided),
                                                                phrase("ask_which_to_return")))}
            elif lines:
                entities = {**entities, "item_ids": [x.item_id for x in lines]}
                # (what was done to it may be told in a sentence of its own: "I have open the perfume
                # from my last order but the smell is not for me. Is possible to send it back?")
                told = message or text
                opened = opened_but_returnable_only_unopened(told, lines)
                if opened:
                    # "I opened the makeup kit and don't like it, I'd like to return it": the store
                    # takes it back only unopened; the rule answers, nothing is proposed.
                    entities = {**entities, "not_returnable": opened}
                elif says_any(told, _return_conditions()["altered"]):
                    # "The blue t-shirt shrank after ONE wash. I want to return it": washed or altered
                    # items are not taken back; the rule answers.
                    entities = {**entities, "not_returnable": [x.name for x in lines], "washed": True}
                elif conditioned := taken_back_only_unopened(lines):
                    # "I haven't opened the perfume yet. Would I still be able to return it?": the
                    # condition it is taken back on belongs to the answer.
                    entities = {**entities, "only_unopened": conditioned}
            elif order.status == "delivered" and not product_mentions(text, view.products(), own=True):
                # "I want to send something back": the order is found, the items are not named.
                entities = {**entities, **question(phrase("ask_items_to_return", order_id=order.order_id,
                                                          items=items_listed(order.lines)))}
        return _refund_where_allowed(fill_payment(text, entities, view, order, required=False), view, order,
                                     text)
    return entities


def _one_line(line: Line | None) -> list[Line]:
    return [line] if line is not None else []


def _refund_where_allowed(entities: dict[str, Any], view: CustomerView,
                          order: OrderView | None, text: str = "") -> dict[str, Any]:
    """A return's refund goes to the order's own payment method or to a gift card on the account
    (the policy); one named elsewhere ("refund to my Mastercard" for a PayPal order), or one the
    account does not hold ("send it to a new Visa I just got"), is asked again among those, so that
    "PayPal then" continues the return; the refund is never quietly sent somewhere else."""
    method = view.payment(entities.get("payment_method_id"))
    if order is None or not order.paid_with or entities.get("question"):
        return entities
    if method is None:
        if not text or resolve_payment(text, view, order).named or not names_a_payment_method(text):
            return entities  # none named: the original method, which the proposal names
        named: Any = phrase("method_not_on_account")
    elif method.payment_method_id == order.paid_with or method.source == "gift_card":
        return entities
    else:
        named = phrase("method_yours", method=method_label(method))
    allowed = [m for m in view.payment_methods
               if m.payment_method_id == order.paid_with or m.source == "gift_card"]
    if not allowed:
        return entities
    return {**_without_method(entities), "asked_for": "payment_method_id", "ruled_out": True,
            **question(phrase("ask_refund_destination", order_id=order.order_id, named=named,
                              methods=methods_listed(allowed, "or")))}


def _names_its_items(text: str, order: OrderView) -> bool:
    """Do the words name products of the order as items, not to say which order ("the bookshelf
    part", not "the bookshelf order" nor "the order with the bookshelf")?"""
    mentions = product_mentions(text, order.products(), own=True)
    return bool(mentions) and not names_order_by_items(text, order) \
        and not any(_ORDER_AFTER.match(text[m.span[1]:]) for m in mentions)


_ORDER_AFTER = re.compile(r"\s*(?:order|purchase|package|parcel|delivery)\b", re.IGNORECASE)


def _one_of_several(named: Sequence[Line], order: OrderView) -> bool:
    """Do the lines named leave out another line of the same product ("the black one" of two)?"""
    return any(x.product_id == y.product_id for x in named for y in order.lines if y not in named)


@lru_cache(maxsize=1)
def _return_conditions() -> dict[str, Any]:
    text = resources.files("csagent.grounding").joinpath("data/return_conditions.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


# Words telling that something ordered never came ("only ONE came", "the lamp was missing", "wasn't
# in the box").
_TOLD_MISSING = re.compile(
    r"\bonly (?:one|1|two|2|three|3)\b[^.!?]{0,40}\b(?:came|arrived|showed up|was in|were in)\b"
    r"|\b(?:is|was|were|are|went) missing\b|\bmissing from\b"
    r"|\b(?:wasn'?t|was not|weren'?t|were not|isn'?t|not) in (?:the|my) (?:box|package|parcel|delivery)\b",
    re.IGNORECASE)


def _only_unopened() -> set[str]:
    """The products the store takes back only unopened or unused (`data/return_conditions.json`)."""
    rules = _return_conditions()
    return set(rules["unopened_only"]) | set(rules["unused_only"])


def taken_back_only_unopened(lines: Sequence[Line]) -> list[str]:
    """The names of the items the store takes back only unopened or unused, each once."""
    only = _only_unopened()
    return list(dict.fromkeys(x.name for x in lines if x.name in only))


def opened_but_returnable_only_unopened(text: str, lines: Sequence[Line]) -> list[str]:
    """The names of the items to return that the store takes back only unopened or unused
    (`data/return_conditions.json`) when the words say they were opened or used; else []."""
    rules = _return_conditions()
    only = _only_unopened()
    named = [x.name for x in lines if x.name in only]
    if not named:
        return []
    if says_any(text, rules["not_opened"]):
        return []
    said = [m for phrase_ in rules["opened"] if phrase_.isascii()
            for m in re.finditer(rf"(?<![\w'’]){re.escape(phrase_)}(?![\w'’])", text, re.IGNORECASE)]
    if said and all(_OPENING_DENIED.search(text[max(0, m.start() - 30):m.start()]) for m in said):
        return []  # "havent even opened it", "didn't even break the seal"
    return named if says_any(text, rules["opened"]) else []


# A negation a few words before "opened", "tried", "broken the seal": it was not.
_OPENING_DENIED = re.compile(r"\b(?:not|never|haven'?t|hasn'?t|hadn'?t|didn'?t|havent|hasnt|didnt|no one)"
                             r"(?:\s+\w+){0,2}\s*$", re.IGNORECASE)


_POINTS_BACK = re.compile(r"\b(it|them|this|that|these|those)\b|它|这个|那个|它们", re.IGNORECASE)
_SEVERAL = re.compile(r"\b(them|these|those|both|all)\b|它们|都", re.IGNORECASE)


def implied_lines(text: str, order: OrderView, talked_about: Sequence[str] = ()) -> list[Line] | None:
    """The items a return that names none means: the order's only item, or, when the words point
    back ("return it", "send them back"), the items of the products the message or the conversation
    just named in that order ("did my light bulbs arrive?" ... "I'd like to return it"). None when that is not
    one clear set ("return it" about an order holding two of them)."""
    if len(order.lines) == 1:
        return list(order.lines)
    if not talked_about or not _POINTS_BACK.search(text):
        return None
    lines = [x for x in order.lines if x.product_id in set(talked_about)]
    if not lines or (len(lines) > 1 and not _SEVERAL.search(text)):
        return None
    return lines


# A clause about something the customer owns ("my kettle", "the lamp I ordered") is about that
# purchase, not the catalogue: the words that mark possession are structural, not per sentence.
_POSSESSIVE = re.compile(
    # ("the dumbbells I buy", "the tablet I already receive": a learner's present tense after the
    # thing bought, never "can I buy")
    r"\b(?:the|that|those|this|these)\s+(?:[\w-]+\s+){1,3}?i\s+(?:already\s+)?(?:buy|order|receive|get)\b|"
    # ("how much I have paid for the espresso machine", "what did i pay for the lamp": what it cost them)
    r"\b(my|our|mine|i (?:ordered|bought|got|purchased|received)|i (?:have |had )?paid for|did i pay|"
    r"we (?:ordered|bought|got)|i'm waiting|still waiting)\b|我的|我买的|我订的|我那|我们的",
    re.IGNORECASE,
)


# "my husband's order", "her package", "my friend's account": someone else's, which the store does
# not discuss with the customer (one account holder per conversation).
_ANOTHER_PERSONS = re.compile(
    r"\b(?:(?:my|our)\s+(?:\w+\s+)?(?:husband|wife|partner|spouse|son|daughter|kid|child|mom|mum|mother|dad|"
    r"father|parent|brother|sister|friend|boss|neighbou?r|roommate|flatmate|colleague|"
    r"grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|girlfriend|boyfriend)(?:'s|’s|s'|s)?"
    r"|his|her|their)\s+(?:\w+\s+)?(?:order|orders|package|parcel|account|purchase|delivery)\b"
    r"|(?:丈夫|老公|妻子|老婆|儿子|女儿|妈妈|母亲|爸爸|父亲|朋友|同事|邻居)的(?:订单|包裹|账户|账号)",
    re.IGNORECASE)


def about_another_persons(text: str) -> bool:
    """Do the words ask about someone else's order or account ("my husband's order")?"""
    return bool(_ANOTHER_PERSONS.search(text))


def speaks_of_a_purchase(text: str) -> bool:
    """Do the words speak of something the customer bought ("my kettle", "the lamp I ordered"),
    rather than of the store's rules in general ("could I return a perfume once it's opened?")?"""
    return bool(_POSSESSIVE.search(text))


def describes_an_owned_item(text: str, view: CustomerView) -> bool:
    """Do the words point at an item the customer bought by what it is like, without a possessive
    ("can i take the white earbuds swimming", "is the 1000-piece puzzle hard"): a product named a
    few words after a determiner ("the", "those", "this" ...) with option values one of their
    items of it has?"""
    for mention in product_mentions(text, view.products(), own=True):
        if not mention.options or not _POINTING.search(text[max(0, mention.span[0] - 40):mention.span[0]]):
            continue
        if owns_as_described(mention, view):
            return True
    return False


# Words asking what else the store makes of a product, or what it costs, rather than what the customer's
# own one is ("does it come in red", "any other colours", "a bigger one", "how much", "your coffee makers").
_OTHER_VERSIONS = re.compile(
    r"\b(?:comes?\s+(?:in|with|w)|other|another|versions?|instead|available|exist|is there|are there"
    r"|any\s+\w+\s+ones?|bigger|smaller|larger|thicker|thinner|longer|shorter|cheaper|same|sell|buy"
    r"|how much|price|prices|cost|costs|your\s+(?:[\w-]+\s+){0,2}[\w-]+s)\b", re.IGNORECASE)
# A question word: "how often should I replace the HEPA filter?" asks no yes or no of an option.
_WH_WORD = re.compile(r"\b(?:how|what|which|when|where|why|who)\b|怎么|什么|哪|多久|多少", re.IGNORECASE)
# A value said of which one it is ("my grey backpack, the hydration one"): a description, not asked.
_THE_VALUE_ONE = re.compile(r"^\W*(?:one|ones|model|version)\b", re.IGNORECASE)
# The end of a sentence: what one sentence asks of an item is read within it.
_SENTENCE_END = re.compile(r"[.?!？。！]+\s*|\n")


def options_asked_of_own(text: str, order: OrderView, variants: Mapping[str, Sequence[Variant]],
                         since: int = 0) -> list[dict[str, Any]]:
    """ "r my hiking boots waterproof??", "The grill I order, it is gas or electric?": what a question
    asks of the customer's own item, option by option (named after the product, in its sentence or,
    when it is the one product named, in a later one pointing back at it: "the speaker i got slaps.
    is it legit waterproof tho?"), of a dimension the item has, with the item's own value:
    {"product", "product_id", "key", "asked", "own"}. Empty when the words ask what else the store
    has ("do u have them in an 11", "does it come in red", "how much"), ask how, what or when ("how
    often should I replace the HEPA filter?", unless it names two values: "what is it, gas or
    electric?") or name no option after the product; options before it ("is my red speaker ...")
    or said of which one it is ("my grey backpack, the hydration one") only say which item. Only
    what is asked after `since` counts (the clause asked about, in the message up to its end)."""
    source = gloss(text)
    ends = [0, *(m.end() for m in _SENTENCE_END.finditer(source)), len(source)]
    sentences = [(a, b) for a, b in zip(ends, ends[1:], strict=False) if a < b]
    mentions = product_mentions(source, order.products(), own=True)
    alone = len({m.product_id for m in mentions}) == 1
    asked: list[dict[str, Any]] = []
    for index, mention in enumerate(mentions):
        lines = [x for x in order.lines if x.product_id == mention.product_id]
        # ("is my black speaker waterproof", with a green one in the order too: the one described)
        described = [x for x in lines
                     if all(x.options.get(k) == v for k, v in (mention.options or {}).items())]
        lines = described or lines
        if not lines or any(a["product_id"] == mention.product_id for a in asked):
            continue
        own_sentence = next((a, b) for a, b in sentences if a <= mention.span[0] < b)
        spans = [(mention.span[1], own_sentence[1], source[own_sentence[0]:own_sentence[1]])]
        if alone:
            until = mentions[index + 1].span[0] if index + 1 < len(mentions) else len(source)
            spans += [(a, b, source[a:b]) for a, b in sentences
                      if own_sentence[1] <= a and b <= until and _REFERS_BACK.search(source[a:b])]
        dimensions = _dimensions_of(lines[0], variants)
        by_key: dict[str, list[str]] = {}
        for a, b, sentence in spans:
            if b <= since or any(p.search(sentence) for p in _NOT_OF_THEIR_ITEM):
                continue
            asked_here = source[max(a, since):b]
            toks = tokens(asked_here)
            hits = [h for h in find_option_values(asked_here, dimensions)
                    if not _THE_VALUE_ONE.match(" ".join(toks[h.position + h.length:]))]
            either_or = any(len({h.value for h in hits if h.key == key}) > 1 for key in {h.key for h in hits})
            if _WH_WORD.search(sentence) and not either_or:
                continue  # (a question of how, what or when, not whether)
            for hit in hits:
                by_key.setdefault(hit.key, []).append(hit.value)
        asked.extend({"product": lines[0].name, "product_id": lines[0].product_id, "key": key,
                      "asked": list(dict.fromkeys(values)), "own": lines[0].options[key]}
                     for key, values in by_key.items()
                     if len({x.options.get(key) for x in lines}) == 1)  # two of it that differ: not told
    return asked


# Words of a later sentence pointing back at the thing named before ("are they waterproof?").
_REFERS_BACK = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those)\b|它|这个|那个", re.IGNORECASE)


def asks_the_stores_range(text: str) -> bool:
    """Do the words ask what the store has or what it costs ("do u have them in a size 10", "does
    it come in red", "how much")?"""
    source = gloss(text)
    return bool(_THE_STORE_HAS.search(source) or _OTHER_VERSIONS.search(source))


def _dimensions_of(line: Line, variants: Mapping[str, Sequence[Variant]]) -> dict[str, list[str]]:
    """{option: the values the line's product comes in}, of the options the line has, its own value
    first (`resolve.option_dimensions`, whose item may be of a variant no longer listed)."""
    dimensions = option_dimensions(variants.get(line.product_id) or (), line)
    return {k: [v, *(x for x in dimensions.get(k, ()) if x != v)] for k, v in line.options.items()}


def owns_as_described(mention: Any, view: CustomerView) -> bool:
    """Does one of the customer's items of the mentioned product have every option the mention
    names?"""
    return bool(lines_as_described(view, mention.product_id, mention.options))


def lines_as_described(view: CustomerView, product_id: str, options: Mapping[str, Any]) -> list[Line]:
    """The customer's items of the product with every one of `options` (all of them for none)."""
    return [x for o in view.orders for x in o.lines
            if x.product_id == product_id and all(x.options.get(k) == v for k, v in options.items())]


# "the white earbuds", "those blue ones": a determiner at most three words before the item's name.
_POINTING = re.compile(r"\b(?:the|those|these|that|this)\b(?:\W+\w+){0,3}\W*$", re.IGNORECASE)


NOT_ABOUT_A_PURCHASE = frozenset(
    {"product_info", "product_availability", "account_info", "out_of_scope", "greeting", "smalltalk",
     "thanks"}
)


def purchase_intent(intent: str, runner_up: str | None, text: str, view: CustomerView | None, *,
                    about_a_product: bool | None = None) -> str:
    """The order intent of a clause that names a product the customer bought, possessively, but
    reads like a catalogue question or like nothing at all ("why hasn't my action camera shipped",
    "wheres my bicyle"); and the other way round, the product question that an order-status
    reading hides ("how long does my vacuum run on one charge").

    `about_a_product`: whether the model trained on customers' messages reads the clause as a
    question about the product itself or about its order (`nlp.purchase_question`); None when it
    is unsure, and the words decide. Words about the order often only say which item is theirs:
    "for the vacuum cleaner I received in #W1, how often should I replace the HEPA filter?", "can
    the speaker that is on its way to me be used in the shower?"."""
    if view is None:
        return intent
    if intent == "out_of_scope" and runner_up in ORDER_INTENTS and names_a_purchase(text, view):
        # "need to size up the pet bed, my pup is a chonk fr": below every intent's threshold, yet
        # it names something the customer bought and reads most like a request about an order; a
        # store matter is never refused, and the grounding finds (or asks) which order.
        return runner_up
    about_the_product = _about_the_product(text) if about_a_product is None else about_a_product
    if (intent in _ORDER_FACTS or (intent == "complaint" and asks_as_question(text))) \
            and asks_the_range(text):
        # "what piece count does the Luggage Set come in?", "I got the red one, what colours does
        # your t-shirt come in?": which versions the product comes in, the store's range; their own
        # item has one of each option, which the order answers only beside it.
        return "product_info"
    if intent in CATALOGUE_WISHES and asks_the_range(text):
        # "I'm wondering what other colours that lamp comes in": the store's range, asked of their
        # product (read as a catalogue question already); never their own item's line
        return intent
    if intent in _ORDER_FACTS and _THE_STORE_HAS.search(text) and not _POSSESSIVE.search(text):
        # "Which t-shirt in size S you have now?": what the store has, not what the customer does
        return "product_availability"
    if intent in CATALOGUE_WISHES and (_names_the_stores_product(text, view) or _only_new_ones(text, view)):
        # "I'm thinking of getting my husband a pair of your sunglasses": the store's product, however
        # many pairs they bought before ("my" is the husband's); so is "My teenager wants a new
        # phone": one to buy, not the one they have
        return intent
    if not _POSSESSIVE.search(text):
        if intent in CATALOGUE_WISHES | {"warranty", "policy_question"} and _ORDER_PROGRESS.search(text) \
                and about_a_product is not True and names_a_purchase(text, view):
            # "has the heavier dumbbell set shipped yet?", "pet bed shipped?", "yoga mat status?":
            # whether something has shipped is asked of an order, never of the catalogue or the
            # store's documents; the one they bought.
            return runner_up if runner_up in ORDER_READS_BY_STATUS else "order_status"
        if intent in CATALOGUE_WISHES and about_a_product is False and _PAID_ASKED.search(text) \
                and names_a_purchase(text, view):
            # "and what did the grill cost" (after a question about the order holding it): what
            # they paid for the one they bought, as the model reads it, never the store's range
            return "order_items"
        return intent
    asks_of_the_product = about_a_product or (about_the_product and not _ASKS_THE_ASSISTANT.search(text))
    if intent == "order_status" and asks_of_the_product and names_a_purchase(text, view):
        # "bro does my gaming mouse need a cable or is it wireless", "how long does my vacuum run on
        # one charge": read as an order's status for the possessive, but asking nothing about the
        # order; what the product is and does, which its pages and the customer's item answer.
        return "product_info"
    if intent not in NOT_ABOUT_A_PURCHASE or not names_a_purchase(text, view):
        return intent
    if intent in CATALOGUE_WISHES and _ITS_OWN_ATTRIBUTE.search(text):
        # "wat color is the tablet i got?": what their own item is, which the order holding it says,
        # however much the question reads like one about the product.
        return "order_items"
    if intent in CATALOGUE_WISHES and about_the_product:
        # "does my e-reader have cellular or just wifi": an option of the customer's own item, named
        # after it, is answered by what they bought; "can I swim with my earbuds?", "does my
        # coffee maker turn itself off?": a question about the product, which its pages answer.
        return "order_items" if _names_its_own_option(text, view) else intent
    return runner_up if runner_up in ORDER_INTENTS else "order_status"


# Words putting what is asked about in the store's hands: "you have now", "do u still sell", "in stock".
_THE_STORE_HAS = re.compile(r"\b(?:you|u|ya|y'?all|you guys)\s+(?:still\s+)?"
                            r"(?:have|got|sell|carry|stock|offer)\b|\bin stock\b", re.IGNORECASE)
# Words that ask how an order is getting on, said of no catalogue product ("has the lamp shipped?").
# What a thing cost, asked in the past: what was paid for it ("what did the grill cost", "how much
# was the kettle"), not what the store asks for it now.
_PAID_ASKED = re.compile(r"\b(?:what|how much)\b[^.?!]{0,20}?\b(?:did|was|were)\b[^.?!]{0,30}?"
                         r"(?:\bcost\b|\?|$)|\bhow much (?:did|was|were)\b", re.IGNORECASE)
_ORDER_PROGRESS = re.compile(r"\b(?:shipped|arrived|dispatched|tracking|sent out|gone out"
                             r"|left the warehouse|on (?:its|the) way|status)\b|\bdelivered\s*(?:yet\s*)?\?"
                             # ("The garden hose, when it comes?", "when will they arrive"; not "when
                             # it comes to battery life")
                             r"|\bwhen\b(?:\s+\w+){0,3}?\s+(?:come|comes|arrive|arrives|get here|be here"
                             r"|ship|ships|be delivered|be shipped)\b(?!\s+to\b)"
                             r"|发货|发出|寄出|物流|快递|到哪", re.IGNORECASE)


# Words by which a sentence asks what the store has, or how an order is getting on, not what the
# customer's own item is like.
_NOT_OF_THEIR_ITEM = (_THE_STORE_HAS, _OTHER_VERSIONS, _ORDER_PROGRESS)


_YOUR_BEFORE = re.compile(r"\b(?:your|ur|you guys'?|y'?all'?s?)\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)


# A product to be bought, not one they have: "a new phone", "another kettle", "a second one".
_A_NEW_ONE_BEFORE = re.compile(
    r"\b(?:(?:a|an)\s+(?:new|second|spare|extra|brand new)|another)\s+(?:[\w-]+\s+)?$", re.IGNORECASE)


def _only_new_ones(text: str, view: CustomerView) -> bool:
    """Is every product of theirs the words name one to be bought ("my teenager wants a new phone")?"""
    mentions = product_mentions(text, view.products(), own=True)
    return bool(mentions) and all(_A_NEW_ONE_BEFORE.search(text[: m.span[0]]) for m in mentions)


def _names_the_stores_product(text: str, view: CustomerView) -> bool:
    """Is every product the words name that the customer bought named as the store's ("a pair of
    your sunglasses")?"""
    mentions = product_mentions(text, view.products(), own=True)
    return bool(mentions) and all(_YOUR_BEFORE.search(text[:m.span[0]]) for m in mentions)


def _about_the_product(text: str) -> bool:
    """Is a question about something the customer bought about the product itself: put as a
    question, in English (the Chinese lexicon reads those), with no word about the order (where,
    when, what was paid) nor a change ("trade my t-shirt for a pet bed"), and not about what their
    own item is ("what colour were the earbuds I bought")?"""
    return asks_as_question(text) and _of_the_product_alone(text) and not _ITS_OWN_ATTRIBUTE.search(text)


def asks_an_items_option(text: str, order: OrderView | None,
                         products: Sequence[Mapping[str, Any]]) -> bool:
    """Is a question about a product of the order it names put with one of the options of that
    order's item ("#W1 - sunglasses polarized or not?", "is the lamp in #W2 the white one?") or
    with one of its dimensions ("how much ram does the laptop in #W2 have?"), and nothing about the
    order's progress? What the order holds, option by option, answers it."""
    if order is None or not asks_as_question(text) or _only_names_the_item(text, products):
        return False
    held = order.product_ids()
    if _of_the_product_alone(text) \
            and any(p.get("options") and p.get("product_id") in held for p in products):
        return True
    # "the tablet I already receive, how much storage it has?": one of its item's dimensions named,
    # and nothing of its order's progress, money or a change
    from csagent.grounding.comparatives import dimension_named

    if _NOT_OF_AN_OPTION.search(text) or _OF_THE_CATALOGUE.search(text) or statuses_asked_about(text) \
            or named_change(text) is not None:
        return False
    named = {str(p.get("product_id")) for p in products} & held
    toks = tokens(text)
    return any(dimension_named(toks, list(line.options))
               for line in order.lines if line.product_id in named)


_FOLLOW_UP_WORDS = frozenset({"and", "the", "my", "what", "about", "how", "also", "one", "k", "ok", "okay",
                              "then", "that", "of", "mine", "a"})


def _only_names_the_item(text: str, products: Sequence[Mapping[str, Any]]) -> bool:
    """Are the words only the item, described ("and the red speaker?" after "where are my espresso
    machines": the question before asked again of it, not its colour asked)?"""
    named = set(tokens(" ".join(str(p.get("surface") or "") for p in products)))
    values = {w for p in products for v in (p.get("options") or {}).values() for w in tokens(str(v))}
    words = [w for w in tokens(text) if w not in _FOLLOW_UP_WORDS]
    return bool(named) and all(w in named or w in values for w in words)


_NOT_OF_AN_OPTION = re.compile(r"\b(?:where|wheres|when|track\w*|ship\w*|deliver\w*|arriv\w*|cost\w*|"
                               r"price\w*|paid|pay|charged?|refund\w*|total|status|warrant\w*|guarantee\w*|"
                               r"covered|coverage)\b", re.IGNORECASE)


# ("which colours do you have for the cycling helmet?", "can i put more ram in it later?": the store's
# versions, or what can be done to one, not what the customer's item is)
_OF_THE_CATALOGUE = re.compile(r"\b(?:you|your|sell|available|(?:comes?|coming)\s+in|options?|others?|"
                               r"another|upgrad\w*|more|later|add)\b", re.IGNORECASE)


def tells_of_the_product(text: str) -> bool:
    """Do the words tell something of a product itself, as a statement with no word about its
    order nor a change ("my kettle from you is stop by itself before the water is boiling", "my
    little robot vacuum just wanders around and won't go back on its dock")? Said of a product
    the customer has received, that is what happened to it, not a question where the order is."""
    return (len(text.split()) >= MIN_TELLING_WORDS and not asks_as_question(text)
            and _of_the_product_alone(text))


def speaks_of_an_order(text: str) -> bool:
    """Do the words speak of an order (its delivery, its status, its money, a change of it), or are
    they Chinese (whose order words this does not read)?"""
    return has_ideographs(text) or bool(_ABOUT_THE_ORDER.search(text)) or named_change(text) is not None \
        or bool(_CHANGE_WORD.search(text))


def _of_the_product_alone(text: str) -> bool:
    """English words with no word about an order nor a change: what a question or a statement
    about the product itself leaves out."""
    return not speaks_of_an_order(text)


# Fewer words than this tell nothing of a product ("my kettle", "the grey one please").
MIN_TELLING_WORDS = 5


def asks_as_question(text: str) -> bool:
    """Is the clause put as a question: a question mark, or a question word opening it, or after a
    few words of lead-in ("ok dumb q but do i gotta buy bags for my vacuum or nah", "bro does my
    gaming mouse need a cable"), or after the order it is about ("W6483628 - what did the pet bed cost
    me")?"""
    text = _ORDER_LEAD.sub("", text, count=1)
    return has_question_mark(text) or bool(_YES_NO_OPENING.match(text.strip())) \
        or bool(_LED_IN_QUESTION.match(text)) or bool(_OR_NOT.search(text))


def _names_its_own_option(text: str, view: CustomerView) -> bool:
    """Is it a yes-or-no question ("does", "is", "has") whose words after a product the customer
    bought name an option value their item of it has ("does my thermostat work with alexa", theirs
    being the Amazon Alexa one)?"""
    # (or put as a statement asked: "The speaker I bought from you, it is water resistant?")
    if not (_YES_NO.match(text.strip()) or _A_STATEMENT_ASKED.search(text)):
        return False
    for mention in product_mentions(text, view.products(), own=True):
        values = option_values([x for o in view.orders for x in o.lines
                                if x.product_id == mention.product_id])
        if values and find_option_values(text[mention.span[1]:], values):
            return True
    return False


_A_STATEMENT_ASKED = re.compile(r"\b(?:it|they|this|that)\s+(?:is|are|has|have|does|do)\b[^?.!]*\?",
                                re.IGNORECASE)
# What may open a question before its verb ("hey, does ...", "ok so is ...").
_COURTESY = "hi|hey|hello|so|ok|okay|and|also|um|hmm"
_YES_NO = re.compile(rf"(?:(?:{_COURTESY})\W+)*(?:does|do|is|are|has|have|did|was)\b", re.IGNORECASE)
# What makes a question about something the customer bought one about its order: where it is, when
# it comes, what was paid, what the order holds ("why hasn't my action camera shipped", "what did
# my pet bed cost me"); not "the coffee maker I ordered" (who bought it).
_ABOUT_THE_ORDER = re.compile(
    # "where" asks, unless it opens a relative clause after a noun of its kind ("this thing where
    # the seat sinks", "to the point where it won't charge").
    r"\b((?<!thing )(?<!point )(?<!part )(?<!stage )where|wheres|when|arriv\w*|ship\w*|deliver\w*|track\w*|"
    r"status|order|orders|sent|package|parcel|"
    r"pending|cancel\w*|refund\w*|paid|pay|cost|charged?|price|prices|how much|total|receipt|late|"
    r"delay\w*|yet|waiting|wait|dispatch\w*|left|contain\w*|in it|come yet|invoice|"
    # ("came off my bike", "came apart": what happened, not a delivery)
    r"came(?! off| out| apart| across| down| over)|"
    r"hold ?up|hold-up|eta|update|progress|happen\w*|going on|stuck|lost|missing|coming|here|news|"
    r"on (?:its|the|my) way|gone|showed up|show up|turn up|received|receive|address\w*|headed|heading)\b",
    re.IGNORECASE,
)
# A yes-or-no question put as a statement with its alternative after it ("my sunnies r they
# polarized or nah", "waterproof or not").
_OR_NOT = re.compile(r"\bor (?:nah|not|no|nope)\W*$", re.IGNORECASE)
# An order id said first, as what the rest is about ("#W1 - ...", "order W1: ...").
_ORDER_LEAD = re.compile(r"^\W*(?:(?:my\s+)?order\s*)?#?W\d{7}\b\W*", re.IGNORECASE)
_YES_NO_OPENING = re.compile(
    rf"(?:(?:{_COURTESY}|quick q(?:uestion)?|random question)\W+)*"
    r"(?:does|do|is|are|can|could|will|would|has|have|how|what(?:'?s)?|which)\b", re.IGNORECASE)
# A question after a few words that only lead in ("ok dumb q but do i ...", "bro does my ..."): never
# after its subject ("my kettle is the 1L one" states).
_LEAD_IN = (r"ok|okay|so|hey|hi|hello|bro|dude|yo|um|hmm|well|also|and|but|just|quick|dumb|random|weird|"
            r"silly|stupid|q|question|btw|sorry|lol|real|honest")
_LED_IN_QUESTION = re.compile(
    rf"^\W*(?:(?:{_LEAD_IN})\W+){{0,4}}(?:does|do|is|are|can|will|should)\s+"
    r"(?:i|it|they|my|the|this|that|these|those)\b", re.IGNORECASE)
# A question put to the assistant about the customer's things ("can you check on my kettle?", "what is
# the deal with my dumbbells?"): the order's status, not what the product does.
_ASKS_THE_ASSISTANT = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|u|ya)\b|\bcheck\w*\b|\bdeal\b|\bup with\b"
    r"|\blook\w*\s+(?:into|up|at)\b", re.IGNORECASE)
_CHANGE_WORD = re.compile(r"\b(swap|switch|exchange|trade|replace|return|cancel|instead|upgrade|refund)\w*\b",
                          re.IGNORECASE)
# A question asking which versions a product comes in: "what sizes does it come in?", "does the
# kettle come in 2 liters", "which bottle sizes your perfume comes in?", "my bike come in other colors?",
# "what other colours are there?" (not "when does it come in?", its delivery).
_THE_RANGE = re.compile(
    r"\b(?:does|do)\b[^.?!,;]{0,40}?\bcome\s+in\b"
    r"|\b(?:what|which|wat|wich)\b[^.?!,;]{0,40}?\bcomes?\s+in\s*(?:[?.!,;]|$)"
    r"|\bcomes?\s+in\s+(?:other|another|any|more|different|diff)\b"
    r"|\b(?:what|which|wat|any)\s+other\s+(?:colou?rs?|sizes?|options?|versions?|styles?|capacit(?:y|ies)"
    r"|materials?|models?)\b", re.IGNORECASE)
_WHEN = re.compile(r"\bwhen\b", re.IGNORECASE)


def asks_the_range(text: str) -> bool:
    """Does the clause ask which versions (options) a product comes in, the store's range?"""
    return bool(_THE_RANGE.search(text)) and not _WHEN.search(text)


# "what colour were the earbuds I bought", "what size did I get": what their own item is.
_ITS_OWN_ATTRIBUTE = re.compile(
    r"\b(?:what|wat|wht|which|wich)\s+(?:colou?r|size|model|version|capacity|material|kind|type|one)\b"
    r"(?:\s+\w+){0,6}?\s+(?:were|was|did i|i (?:got|bought|ordered|picked|chose))\b"
    # ("how much I have paid for the espresso machine": its price in their order)
    r"|\bhow much\b(?:\s+\w+){0,3}?\s+(?:i (?:have |had )?paid|did i pay)\b", re.IGNORECASE)


# "if I return the backpack", "can we exchange the lamp", "I'd like to cancel the kettle": the
# customer as the one who would make the change, a few words before its verb.
# The verbs in any form: "cancel", "cancelled", "returning", "exchanged".
def _verb_pattern(verb: str) -> str:
    """A request verb in any form; a phrasal one with its object between ("send it back")."""
    first, _, particle = verb.partition(" ")
    head = re.escape(first.rstrip("e")) + r"\w*"
    return head + (r"(?:\s+\w+){0,3}?\s+" + re.escape(particle) if particle else "")


_VERBS = "|".join(_verb_pattern(v) for v in REQUEST_BY_VERB)
_PERSONAL_CHANGE = re.compile(
    r"\b(?:i|we|i'd|id|i'm|im)\b(?:\s+\w+){0,3}?\s+(" + _VERBS + r")\b"
    # or told to: "Exchange them for an 11", "just wanna send it back", "ok kill the sneakers one"
    r"|(?:^|[,;:.!?]\s*)\W*(?:(?:ok|okay|k|kk|alright|so|yeah|fine|then)\W+)?(?:please\s+|pls\s+|just\s+)?"
    r"(?:(?:wanna|want to|need to|gotta|thinking (?:about|of)|considering)\s+)?(" + _VERBS + r")\b"
    # or asked of the store: "can u swap the white one to brown too"
    r"|\b(?:can|could|would|will)\s+(?:you|u|ya|you guys|u guys)\s+(?:please\s+|pls\s+|just\s+)?"
    r"(" + _VERBS + r")\b"
    # or asked whether it may be made: "is it possible to return only the puzzle?"
    r"|\b(?:possible|able|allowed|ok|okay)\s+to\s+(?:please\s+|just\s+|still\s+)?(" + _VERBS + r")\b",
    re.IGNORECASE,
)


_GERUNDS = {"sending": "send", "returning": "return", "cancelling": "cancel", "canceling": "cancel",
            "exchanging": "exchange", "swapping": "swap", "switching": "switch", "changing": "change"}
_GERUND = re.compile(r"\b(?:" + "|".join(_GERUNDS) + r")\b", re.IGNORECASE)


def named_change(text: str) -> str | None:
    """The change request whose verb the text gives with the customer as the one making it ("if I
    cancel order #W1, ...", "can we exchange the lamp"), None when it names none."""
    return next(iter(named_changes(text)), None)


def named_changes(text: str) -> list[str]:
    """Every change request `named_change` finds in the text, in the order said."""
    if has_ideographs(text):
        return list(dict.fromkeys(r for v, r in REQUEST_BY_ZH_VERB.items() if v in text))
    from csagent.nlp.entities.identifiers import ORDER_ID_RE

    # "Thinking about sending back my coffee maker": the verb in its -ing form; "W8863729 wanna
    # exchange the laptop": told, the order id before it
    text = _GERUND.sub(lambda m: _GERUNDS[m.group(0).lower()], ORDER_ID_RE.sub(" ", text))
    found: list[str] = []
    for verb in _PERSONAL_CHANGE.finditer(text):
        said = (verb.group(1) or verb.group(2) or verb.group(3) or verb.group(4) or "").lower()
        request = next((r for v, r in REQUEST_BY_VERB.items() if said.startswith(v.split()[0].rstrip("e"))),
                       None)
        if request is not None and request not in found:
            found.append(request)
    return found


# A negation just before a change verb ("not worth the hassle of a swap", "no exchange", "rather than
# return it"), up to five words before it and within its phrase.
_RULED_OUT_BEFORE = re.compile(r"\b(?:not|no|don'?t|do not|never|without|rather than|instead of)\b"
                               r"(?:[^\w,.;!?]+[\w']+){0,5}[^\w,.;!?]*$", re.IGNORECASE)


def change_intent(intent: str, text: str, view: CustomerView | None, pointed_at: str = "") -> str:
    """The change request a clause names for something the customer bought, when it reads like a
    general question ("if I return the backpack and the pet bed, how much will I get back in
    total?" is about returning them, not the returns policy; "The boots are a 12. Exchange them
    for an 11."). The product is named in the clause, or in `pointed_at`: the message, when the
    clause points back at a product ("them"). Whether it asks for the change or about it is the
    speech act's to say. An order's status or items are a change only when the clause asks for it
    ("#W8346517 I wanna exchange the office chair"; not "I returned it, has it arrived?")."""
    if view is not None and intent in _NAMED_BY_A_VERB and _told_as_made(text) \
            and not _ASKED_AGAIN.search(text):
        # "i canceled my order with the air purifer but i still see one pending??": the change told
        # as made, and what came of it asked (the money, when it asks of money); a complaint when it
        # did not turn out so.
        if MONEY_BACK_ASKED.search(text):
            return "refund_status"
        return "complaint" if _NOT_AS_EXPECTED.search(text) else "order_status"
    if view is not None and intent == "return_request" and has_question_mark(text) \
            and not named_changes(text) and not MONEY_BACK_ASKED.search(text) and not _SENT_BACK.search(text):
        from csagent.nlp.speech_acts import asks_for_change

        if not asks_for_change(text):
            # "robot vacuum wont go back on its dock. fix?": no word of sending back or of money,
            # a question of what is wrong with it; what its pages say, beside the order's facts.
            return "complaint"
    if view is not None and intent == "return_request" and MONEY_BACK_ASKED.search(text) \
            and not asks_money_back(text) and not named_changes(text) and not _SENDS_IT_BACK.search(text):
        # "Honestly I don't want my money back, I just want the camera I actually ordered": the money
        # back ruled out, and nothing said of sending it back; no return is asked for.
        return "complaint"
    if view is not None and intent in _NAMED_BY_A_VERB:
        return _write_its_verb_names(intent, text)
    if view is None or intent not in NOT_ABOUT_A_PURCHASE | _ORDER_FACTS | {"policy_question", "order_list",
                                                                          "refund_status"}:
        return intent
    request = named_change(text)  # "瑜伽垫如果退货的话，能退我多少钱？": no subject needed in Chinese
    if request is None:
        return intent
    if intent in _ORDER_FACTS | {"refund_status"} and _TOLD_AS_DONE.search(text):
        return intent  # "I returned it last week, where's my refund?": the change is done, the refund asked
    if intent in _ORDER_FACTS:
        from csagent.nlp.speech_acts import asks_for_change

        if not asks_for_change(text):
            return intent
    if request == "return_request" and names_a_price_difference(text):
        # "price of the watch is now lower, please give me back the difference": money asked back
        # for a price, not for an item sent back; what the policy says of prices answers it.
        return intent
    if intent == "order_list":
        # "I need to cancel one of my orders": a change of one of them, which one to be asked
        # ("which of my orders can I still cancel?" asks for the list; "I cancelled two orders with
        # you" tells one made)
        from csagent.nlp.entities.questions import opens_question

        return intent if opens_question(text) or has_question_mark(text) or _TOLD_AS_DONE.search(text) \
            else request
    named = names_a_purchase(text, view) or (bool(pointed_at) and names_a_purchase(pointed_at, view))
    return request if named else intent


# Changes a clause may be read as that its own verb, naming another, corrects (`_write_its_verb_names`).
_NAMED_BY_A_VERB = frozenset({"return_request", "change_items", "cancel_order", "change_order_address"})


def _write_its_verb_names(intent: str, text: str) -> str:
    """The change the clause's one change verb names when it was read as another ("W8863729 wanna
    exchange the laptop" read as a return, "i only need one laptop, wanna send back the silver one"
    as an exchange, "#W8346517 I wanna exchange the office chair" as an address change): an
    exchange with no word of money back, a return with no word of another item, and never an
    address change that asks for another address."""
    from csagent.nlp.speech_acts import asks_for_change

    named = named_changes(text)
    if len(named) != 1 or named[0] == intent or named[0] not in _NAMED_BY_A_VERB:
        return intent
    if has_ideographs(text) or not asks_for_change(text):
        return intent  # ("我的T恤不要取消，只是把收货地址改成 ...": the verb is ruled out)
    request = named[0]
    if request == "change_items" and asks_money_back(text):
        return intent  # "exchange it or just give me my money back"
    if request == "return_request" and asks_another_item(text):
        # "send it back and send me the right one" (not "it's not worth the hassle of a swap, I'd just
        # like to send it back")
        return intent
    if intent == "change_order_address":
        from csagent.nlp.speech_acts import names_address_change

        if names_address_change(text):
            return intent
    return request


# Reads of an order's own facts that a clause asking for a change of it was taken for.
_ORDER_FACTS = frozenset({"order_status", "order_items"})
# Words of sending a thing back ("send it back", "ship them back").
_SENDING = r"sen[dt]|ship(?:ped)?|mail(?:ed)?|post(?:ed)?"
_SENDS_IT_BACK = re.compile(rf"\b(?:{_SENDING})\b[^.?!]{{0,40}}\bback\b", re.IGNORECASE)
# Something sent back, in words or supposed ("if I sent the smart watch back, would the money ..."), or
# money asked of it: a return's words, whatever else the clause asks.
_SENT_BACK = re.compile(
    rf"\b(?:{_SENDING}|give|gave)\b[^.?!]{{0,40}}\bback\b|\bmoney\b"
    r"|\b(?:if|when|once)\s+i\b", re.IGNORECASE)
# A change the customer says they made themselves ("i canceled my order", "I already returned it").
_I_DID_IT = re.compile(
    r"\b(?:i|we)\s+(?:already\s+|just\s+)?(?:cancell?ed|returned|exchanged|sent (?:it |them )?back)\b",
    re.IGNORECASE)
# Words asking for a change again after telling one made ("I cancelled it but please cancel again").
_ASKED_AGAIN = re.compile(
    r"\b(?:please|pls|plz|can you|could you|would you|i want|i'd like|id like|i need|again)\b", re.IGNORECASE)
_SUPPOSED = re.compile(r"\b(?:if|when|once|whether|should|suppose|say)\s*$", re.IGNORECASE)


def _told_as_made(text: str) -> bool:
    """Do the words tell a change the customer made ("i canceled my order with the air purifer"),
    not one supposed ("If I cancelled the order with the tea kettle, how much would I get back?")?"""
    return any(not _SUPPOSED.search(text[:m.start()]) for m in _I_DID_IT.finditer(text))


_NOT_AS_EXPECTED = re.compile(r"\b(?:but|still|yet)\b", re.IGNORECASE)
_TOLD_AS_DONE = re.compile(
    r"\b(?:returned|sent (?:it |them )?back|cancell?ed|exchanged|gave (?:it |them )?back)\b", re.IGNORECASE)
_THE_ACCOUNT = re.compile(
    r"(?<!not )(?<!not my )\b(default|profile|account|saved address|address book)\b|默认|账户|账号",
    re.IGNORECASE)


# The account's address named as what the new one becomes ("make that my default address",
# "update the address on my account").
_MAKE_IT_THE_DEFAULT = re.compile(
    r"\b(?:make|set|update|change)\s+(?:\w+\s+){0,2}?(?:my|the)\s+(?:default|account|profile)\s+"
    r"(?:address|addy)\b"
    r"|\b(?:update|change|set)\s+(?:my|the)\s+(?:address|addy)\s+on\s+(?:my|the)\s+(?:account|profile)\b"
    r"|\b(?:my|the)\s+default\s+(?:address|addy)\s+(?:should be|to be|is now|will be)\b|默认地址改",
    re.IGNORECASE)


def makes_it_the_default(text: str) -> bool:
    """Do the words name the account's address as what a new one becomes ("make that my default
    address", "update the address on my account")?"""
    return bool(_MAKE_IT_THE_DEFAULT.search(text))


def names_the_account(text: str) -> bool:
    """Do the words speak of the account (its default address, its profile), not of an order?"""
    return bool(_THE_ACCOUNT.search(text))


def rules_out_the_account(message: str) -> bool:
    """Does a clause of the message rule out changing the account ("don't touch my account address
    yet", "don't update my default address")?"""
    from csagent.nlp.clauses import split_clauses
    from csagent.nlp.speech_acts import declines_change

    ruled_out = [_BEFORE_CONTRAST.split(p, maxsplit=1)[0] for p in split_clauses(message)]
    # ("Don't touch the orders I've already placed, just my profile": the orders are ruled out)
    return any(names_the_account(p) and declines_change(p) for p in ruled_out)


_BEFORE_CONTRAST = re.compile(r"\b(?:just|only|but|instead|rather)\b", re.IGNORECASE)


# Words for where something goes ("to my office", "the billing address"): a place, not a payment.
_A_PLACE = re.compile(r"\b(?:address\w*|home|office|place|house|apartment|apt|work|street|st|avenue|ave"
                      r"|road|rd|suite|city|town|zip|building|door)\b|地址", re.IGNORECASE)


_MY_ADDRESS = re.compile(r"\bmy\s+(?:\w+\s+)?address\b", re.IGNORECASE)


def address_intent(intent: str, text: str, view: CustomerView | None, *, order_named: bool = False,
                   message: str = "") -> str:
    """ "change the address for my laptop, new address is ...": an address change that names
    something the customer bought, or one of their orders, and not the account, is that order's
    address; the account's default address is changed when the words say so and name no order
    (`order_named`: the clause is about an order found before it; `message`: the whole message,
    which may name the order in another clause)."""
    if view is None or intent not in ("update_default_address", "change_order_address"):
        return intent
    from csagent.nlp.entities.identifiers import ORDER_ID_RE

    names_order = bool(ORDER_ID_RE.search(text)) or names_a_purchase(text, view)
    if intent == "update_default_address" and message and rules_out_the_account(message):
        # "The new address is 55 Birch Road, ... Don't touch my account address yet": where the
        # orders go, the account's address being ruled out.
        return "change_order_address"
    if intent == "change_order_address" and not _A_PLACE.search(text) \
            and view.address_named(text) is None and resolve_payment(text, view).named:
        # "put the order with the dumbbells on my visa instead": what it goes on is one of their
        # payment methods, not a place; the order's payment.
        return "change_payment"
    if intent == "change_order_address":
        # "can you put my new address on the account?": the account's address, no order's.
        in_message = bool(message) and (bool(ORDER_ID_RE.search(message)) or names_a_purchase(message, view))
        # ("Could you make that my default address? And is my tablet order already going there?":
        # an order another clause names is not what "my default address" is)
        # ("My order #W1 is already going to the new place (...). Could you make that my default
        # address on the account too?": what the default becomes, said so, whichever order is named)
        about_account = bool(_MAKE_IT_THE_DEFAULT.search(text)) or (
            _THE_ACCOUNT.search(text) and not (names_order or order_named) and not in_message)
        # ("The address on my account is wrong. It's 12 Desert Willow Road, Phoenix, AZ 85016. Fix
        # it.": the account another clause speaks of, in a message naming no order of theirs)
        of_the_account = bool(message) and bool(_THE_ACCOUNT.search(message)) and not in_message \
            and not (names_order or order_named) and not rules_out_the_account(message)
        return "update_default_address" if about_account or of_the_account else intent
    if _THE_ACCOUNT.search(text):
        return intent
    # "my order #W1 is going to Charlotte!! ... Fix the address": the order the message names ("and
    # update my address" beside it may be the account's).
    # ("Order W1, why it go to New York? ... Please change it to my address": where it is to go, said
    # by the account's address; the order changes)
    changed = [m for m in _MY_ADDRESS.finditer(text) if not _TO_BEFORE.search(text[:m.start()])]
    # ("keep the smart thermostat order, no cancelling. only the address changes: 5120 Prairie
    # Avenue, ...": the order another clause names by what it holds)
    # (not when the message speaks of the account: "The new address is 45 Birch Road ... Could you
    # update that on my account? Oh and ... that order with the earbuds")
    order_in_message = bool(ORDER_ID_RE.search(message)) or (
        bool(_ORDER_WORD.search(message)) and not _THE_ACCOUNT.search(message)
        and names_a_purchase(message, view))
    in_message = bool(message) and order_in_message and not changed
    return "change_order_address" if names_order or in_message else intent


_ORDER_WORD = re.compile(r"\border\b", re.IGNORECASE)


# Words that make what follows a destination ("change it *to* my address").
_TO_BEFORE = re.compile(r"\b(?:to|at|into)\s*$", re.IGNORECASE)


def names_a_purchase(text: str, view: CustomerView) -> bool:
    """Do the words name a product this customer bought?"""
    owned = view.products()
    return bool(owned) and bool(product_mentions(text, owned, own=True))


# Catalogue questions that, said as a wish about a product the customer bought, ask for its change.
CATALOGUE_WISHES = frozenset({"product_info", "product_availability"})
# Money back asked for ("I want a refund", "give me my money back"), and words asking for another item
# instead ("swap it", "send me the right one"): the first without the second is no item change.
MONEY_BACK_ASKED = re.compile(
    r"\b(?:refund(?:ed)?|money back|money (?:returned|refunded)|reimburs\w*)\b|退款|退钱", re.IGNORECASE)
_ANOTHER_ITEM_ASKED = re.compile(
    r"\b(?:swap\w*|switch(?!es\b|\s+type)\w*|exchang\w*|trade|replace\w*|instead|change\w*|upgrade"
    r"|(?:right|correct) one"
    r"|send (?:me )?(?:the|a|one in)|difference|diff)\b|换", re.IGNORECASE)
# Intents whose clause, when its words name another variant of an item of the order ("the puzzle,
# the 1500-piece art one instead"), is an item change: a return or a payment does not name one.
MAY_BE_AN_ITEM_CHANGE = frozenset(
    {"return_request", "change_payment", "order_items", "order_status", "account_info", "out_of_scope"}
)


def asks_money_back(text: str) -> bool:
    """Do the words ask for money back, a word no negation just before rules out ("Honestly I don't
    want my money back, I just want the camera I actually ordered" asks for none)?"""
    return any(not _RULED_OUT_BEFORE.search(text[: m.start()]) for m in MONEY_BACK_ASKED.finditer(text))


def names_a_return(text: str) -> bool:
    """Do the words name a return: the word in any form ("return", "the return", "returned"), its
    other verbs ("send it back", "退货"), the item sent back in other words ("ship them back to you")
    or money back ("I want a refund", "the money put back on my PayPal")? Not one ruled out ("I want
    a replacement, not a refund"; "I'm not asking for a return right now")."""
    return any(not _RULED_OUT_BEFORE.search(text[: m.start()]) for m in _RETURN_WORD.finditer(text)) \
        or "return_request" in named_changes(text) or bool(_SENDS_IT_BACK.search(text)) \
        or asks_money_back(text) or (has_ideographs(text) and "退" in text)


# A return or money back named in any form ("the return", "returned", "money put back on my PayPal").
_RETURN_WORD = re.compile(r"\breturn\w*|\bmoney\b[^.?!]{0,30}\bback\b|\brefund\w*", re.IGNORECASE)


def asks_another_item(text: str) -> bool:
    """Do the words ask for another item instead ("swap it", "send me the right one"), a word no
    negation just before rules out ("it's not worth the hassle of a swap")?"""
    return any(not _RULED_OUT_BEFORE.search(text[: m.start()]) for m in _ANOTHER_ITEM_ASKED.finditer(text)) \
        or bool(_CAN_IT_BE.search(text))


# Their item asked to be another version ("Can it be the same backpack, green, small, camera
# compartment, but in polyester?"): a wish put as a question.
_CAN_IT_BE = re.compile(r"\b(?:can|could)\s+(?:it|they|that|this one|mine)\s+be\b[^.?!]{0,80}?\bin\b",
                        re.IGNORECASE)


def item_change_intent(
    intent: str,
    text: str,
    entities: Mapping[str, Any],
    view: CustomerView | None,
    variants: Mapping[str, Sequence[Variant]] | None,
    clause: str = "",
) -> str:
    """`change_items` when the words ask for another variant of an item of the clause's order. A
    catalogue question is one only when its clause is a wish ("I want the same boots, but size 10"),
    not a question ("do you have the boots in size 10?")."""
    if view is None or variants is None:
        return intent
    if intent in CATALOGUE_WISHES:
        from csagent.nlp.speech_acts import asks_for_change

        # (or points back at what another sentence named: "my bike helmet is to small, can i get the
        # same one in a medium instead")
        # ("I've got two bookshelves coming ... Could you bump the white glass one up from 5 ft to
        # the 6 ft version?": the one its options describe, of the product the message named)
        named = names_a_purchase(clause, view) or (
            bool(_POINTS_BACK_TO_ONE.search(clause)) and _INSTEAD.search(clause) is not None
            and names_a_purchase(text, view)) or (
            bool(_THE_DESCRIBED_ONE.search(clause)) and names_a_purchase(text, view))
        if not (clause and (asks_for_change(clause) or _CAN_IT_BE.search(clause)) and named):
            return intent
        if asks_as_question(clause) and _EITHER_OR.search(clause) and not _ANOTHER_ITEM_ASKED.search(clause):
            # "The espresso machine in #W9077472, it use capsule or I need ground coffee?": which of
            # two its item is, asked; no wish for the other.
            return intent
        if _ASKS_IF_THEY_HAVE_IT.search(text) and not _ANOTHER_ITEM_ASKED.search(text):
            # "... i want a gold one w a leather band. do u even have that and how much": the wish
            # asked of the store's range and its price, not a change of the one they have.
            return intent
        if asks_as_question(clause) and _THE_STORES.search(clause) and not _ANOTHER_ITEM_ASKED.search(clause):
            # "Which stovetop types do your tea kettles come in, please?": the store's products
            # asked about, not a wish for the customer's own.
            return intent
    elif intent not in MAY_BE_AN_ITEM_CHANGE:
        return intent
    elif intent not in _REQUESTS_OF_THEIR_OWN and clause and asks_as_question(clause) \
            and not _ANOTHER_ITEM_ASKED.search(clause):
        from csagent.nlp.speech_acts import asks_for_change

        if not asks_for_change(clause):
            # "hw much is left on my gift card? and did the white wall clock ship yet": a question
            # that names the option the customer has, or sits beside one that does, asks about the
            # order; no swap word, nothing asked to change.
            return intent
    if _PRICE_ELSEWHERE.search(text):
        # "the e-reader I ordered is cheaper somewhere else ... refund me the difference": another
        # shop's price, which no variant of ours is; the store's rule on prices answers it.
        return intent
    if intent not in CATALOGUE_WISHES | _REQUESTS_OF_THEIR_OWN:
        from csagent.nlp.speech_acts import asks_for_change

        if not asks_for_change(text):
            # "I'm thinking of getting a tea kettle for my mother, she has an induction hob": an
            # option named, nothing asked to change.
            return intent
    if intent == "return_request" and has_ideographs(text) and named_changes(text) == ["return_request"] \
            and not asks_another_item(text):
        # "我想把黑色的无线耳机和那套蓝色的行李箱一起退掉": its only verb sends them back; the colours
        # say which items, not which ones are wished for
        return intent
    if asks_money_back(text) and not asks_another_item(text):
        # "You sent me the wrong smart watch!! I ordered the black one ... I don't want it, I want a
        # refund to my card": the variant named is the one ordered, not one wished for; money back,
        # and no word asking for another item, is a return.
        return intent
    # The order the words describe, when the clause names none ("I need 9 not 8. Please change, and
    # pay the difference with my visa": the boots' order).
    # A wish, or words read as no order request at all ("... and use my PayPal account for any
    # difference"), is about the order an item change would be of.
    finding = "change_items" if intent in CATALOGUE_WISHES | {"account_info", "out_of_scope"} else intent
    order = view.order(entities.get("order_id")
                       or find_order(finding, text, dict(entities), view, text).get("order_id"))
    own = {str(p.get("product_id")) for p in entities.get("products") or [] if not p.get("carried")}
    if order is not None and own and not entities.get("order_id") and clause \
            and not own & order.product_ids():
        # "we really don't need the blue-dial watch ... But please DON'T touch the order with the bike
        # and the laptop": a clause naming its own product is about an order holding it, not the one
        # the rest of the message names most.
        order = view.order(find_order(finding, clause, dict(entities), view, text).get("order_id"))
    if order is None or order.status not in ("pending", "delivered"):
        return intent
    if intent not in _REQUESTS_OF_THEIR_OWN:
        # "my desk lamp, it need to be plug in the wall? I want to put on table where is no socket":
        # a clause that asks for nothing of its own does not take its variant from another
        # sentence's question about the product ("plug in the wall?" is no wish for the AC one).
        text = _without_questions(text, clause)
    changes = resolve_item_changes(text, order, variants)
    wanted = [c for c in changes.changes if c.new is not None and c.new.item_id != c.line.item_id]
    if wanted and named_changes(text) == ["return_request"] and all(
            any(other is not c.line and other.product_id == c.line.product_id for other in order.lines)
            for c in wanted):
        # "two backpacks in my last delivery, the grey one and the green one. want to return the
        # green one": the order holds more than one of the product, and the options named say which
        # of them; the only change asked for is a return.
        return intent
    return "change_items" if wanted else intent


_EITHER_OR = re.compile(r"\w\s+or\s+(?:\w+\s+){0,5}\w+\s*\?", re.IGNORECASE)
# Whether the store has the thing wished for, asked ("do u even have that", "is that available?").
_ASKS_IF_THEY_HAVE_IT = re.compile(
    r"\b(?:do|does|did)\s+(?:you|u|ya|y'?all|you guys)\s+(?:even\s+|still\s+|actually\s+)?"
    r"(?:have|sell|carry|make|stock)\s+(?:that|it|one|those|them|this)\b"
    r"|\bis\s+(?:that|it|one)\s+(?:even\s+)?(?:available|in stock|a thing)\b",
    re.IGNORECASE)
# Words pointing back at a thing named before ("the same one", "it"), and "instead" asking another.
# (It was once a second `_POINTS_BACK`, which overrode the one `implied_lines` reads.)
_POINTS_BACK_TO_ONE = re.compile(r"(?:\b|')(?:it|them|em|the same (?:one|ones|pair)|that one|this one)\b",
                                 re.IGNORECASE)  # ("can i get em in an 8 instead?")
_INSTEAD = re.compile(r"\binstead\b", re.IGNORECASE)
# One of their things described by its options, the product left out: "the white glass one".
_THE_DESCRIBED_ONE = re.compile(r"\bthe\s+(?:[\w-]+\s+){1,3}?ones?\b", re.IGNORECASE)
# Words putting a product as the store's ("your kettles", "do u guys have").
_THE_STORES = re.compile(r"\b(?:your|you guys|u guys|y'?all)\b", re.IGNORECASE)
# A price seen at another shop ("cheaper somewhere else", "$20 less on Amazon").
_PRICE_ELSEWHERE = re.compile(
    r"\b(?:cheaper|less|lower|better price|better deal|on sale)\b[^.?!]{0,30}\b(?:somewhere else|elsewhere|"
    r"other (?:store|shop|site|website)s?|another (?:store|shop|site|website)|on amazon|at walmart|online)\b"
    r"|\bprice[- ]?match", re.IGNORECASE)
# Clauses that are a request of their own: the wish for another variant is theirs to read anywhere in
# the message.
_REQUESTS_OF_THEIR_OWN = frozenset({"return_request", "change_payment"})
_SENTENCE_END = re.compile(r"(?<=[.?!？。])\s+")


def _without_questions(text: str, clause: str) -> str:
    """The message without its sentences put as questions that name no change ("does it need to be
    plugged in?"; not "can i exchange it for a 10?"), bar the one holding `clause`."""
    kept = [s for s in _SENTENCE_END.split(text)
            if (clause and clause.strip() in s) or not asks_as_question(s) or _ANOTHER_ITEM_ASKED.search(s)]
    return " ".join(kept)


_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1}


def pick_candidate(text: str, candidates: Sequence[OrderView]) -> OrderView | None:
    """The one order of those listed back that the customer's answer names or describes ("#W1",
    "the gold one", "the delivered one", "the second one", "the plastic one, not the glass one",
    "the one going to Denver"); None when the words fit several or none. A product, option value or address
    named after a negation rules its order out; when that leaves one, it is the one meant."""
    if not candidates:
        return None
    if len(candidates) == 1 and _says_yes(text):
        return candidates[0]  # "Is that the one you mean?" - "yes that one"
    named = [o for o in candidates if o.order_id in find_order_ids(text)]
    if len(named) == 1:
        return named[0]  # "the one with number #W2022128, please"
    words = tokens(text)
    for word, index in _ORDINALS.items():
        if word in words and len(candidates) > max(index, -index - 1):
            return candidates[index]
    ruled_out = _ruled_out(text, candidates)
    addressed, hits_of = {}, {}
    for order in candidates:
        at = _address_named(text, order)
        addressed[order.order_id] = at is not None
        dims: dict[str, list[str]] = {}
        for line in order.lines:  # every item's options: "material" is plastic for one, steel for another
            for key, value in line.options.items():
                dims.setdefault(key, []).append(value)
        # (a value the order's items have: "the waterproof ones" fits the order whose boots are
        # waterproof, not every order with boots)
        hits_of[order.order_id] = [h for h in find_option_values(text, dims)
                                   if h.value in dims.get(h.key, ())]
        if at is not None and _NEGATED_BEFORE.search(text[:at]):
            ruled_out.add(order.order_id)  # "not the one going to 985 Pine Lane"
        if any(negated_option(words, hit) for hit in hits_of[order.order_id]):
            ruled_out.add(order.order_id)  # "the plastic one, not the glass one"
    if ruled_out and len(candidates) - len(ruled_out) == 1:
        # "not the one with the office chair, the other one", "not the white one"
        return next(o for o in candidates if o.order_id not in ruled_out)
    alone = [o for o in candidates if o.order_id not in ruled_out and _holds_only_what_is_named(text, o)]
    if len(alone) == 1:
        return alone[0]  # "the one thats just the tablet by itself"
    if _ON_ITS_OWN.search(text) \
            and not any(product_mentions(text, o.products(), own=True) for o in candidates):
        # "The one that came on its own, obviously": the product asked about, with nothing else
        single = [o for o in candidates if o.order_id not in ruled_out and len(o.product_ids()) == 1]
        if len(single) == 1:
            return single[0]
    scores = []
    # (a word of a product's name that only one order's products have picks it, even without the
    # product's own word: "electric one" of the Electric Kettle's order and the Tea Kettle's; it
    # names what the thing is, and weighs more than an option value of the same word, the Tea
    # Kettle's "stovetop compatibility: electric")
    name_words = {o.order_id: {w for x in o.products() for w in tokens(str(x.get("name") or ""))}
                  for o in candidates}
    for order in candidates:
        score = len(hits_of[order.order_id]) + 2 * addressed[order.order_id]
        others = set().union(*(v for k, v in name_words.items() if k != order.order_id))
        score += 2 * len((name_words[order.order_id] - others) & set(words))
        mentions = product_mentions(text, order.products(), own=True)
        # (the more of a product's name the words say, the better they fit: "the electric one, just
        # the kettle" is the Electric Kettle's order, not the Tea Kettle's)
        score += len(mentions) + max((len(set(tokens(str(x.name))) & set(words)) for x in mentions),
                                     default=0)
        described = statuses_described(text)
        if described and order.in_status(described):
            score += 2
        scores.append(-1 if order.order_id in ruled_out else score)
    best = max(scores)
    if best <= 0 or scores.count(best) > 1:
        return None
    return candidates[scores.index(best)]


def _holds_only_what_is_named(text: str, order: OrderView) -> bool:
    """Do the words say the order holds only the products they name, and does it ("the one that's
    just the tablet by itself")?"""
    mentions = product_mentions(text, order.products(), own=True)
    return bool(mentions) and _only_these(text, mentions) \
        and order.product_ids() <= {m.product_id for m in mentions}


def _says_yes(text: str) -> bool:
    """A short yes ("yes", "yep that one", "yes please"): the answer to "is that the one you mean?"."""
    from csagent.nlp.confirmation import classify_confirmation, lean

    return classify_confirmation(text) == "yes" or (len(tokens(text)) <= 4 and lean(text) == "yes")


# "not the one with the office chair": a negation this close before a product rules its order out.
# An item taken out of an order or added to it: what an item change (same product, other
# options) never is.
_REMOVES = re.compile(r"\b(remove|take (?:[\w-]+ ){0,4}?(?:out|off)|drop|delete|get rid of)\b", re.IGNORECASE)
_ADDS = re.compile(r"\b(add|a second|an extra|one more|another one)\b", re.IGNORECASE)
# ... unless what is taken away is the order itself ("get rid of the whole order with the lamp").
_REMOVES_THE_ORDER = re.compile(
    r"\b(?:remove|drop|delete|get rid of|take)\s+(?:the|my|this|that|it|everything|all)\b"
    r"(?:\s+(?:whole|entire|full|of|the|my))*(?:\s+(?:order|thing|lot))?\s*(?:\b(?:order|thing|lot)\b|$|[,.!?])",
    re.IGNORECASE)


# An item put into an order ("add a yoga mat to my pending order", "put one water bottle more
# inside it", "throw another pair into my order"): the container is the order, or "it".
_PUT_IN = re.compile(
    r"\b(?:add|put|throw|stick|include|pop)\b[^.?!]{0,60}?\b(?:into|inside|in|to|onto)\s+"
    r"(?:it|(?:this|that|the|my|our|same)\s+(?:[\w-]+\s+){0,2}?order)\b", re.IGNORECASE)
_AN_ORDER = re.compile(r"\border\b|#W\d", re.IGNORECASE)


def adds_or_removes_an_item(clause: str, entities: Mapping[str, Any], view: CustomerView) -> bool:
    """Does the clause ask to put a product into an order, or to take one of the customer's items
    out of an order it names ("can you put one water bottle more inside it?", "could you take the
    puzzle off the new order?")? Neither is an option change, which is all an item change can be
    (`fill_item_changes` says so, with the order's facts)."""
    from csagent.nlp.speech_acts import asks_something

    if not asks_something(clause):
        return False
    if not entities.get("products"):
        # "Could you just take the 13-inch one out of the order?": an item of the order it names,
        # told by its option; "Can you add a lock to that order before it goes out?": a thing put
        # into the order it names, whether or not the catalogue has it
        order = view.order(entities.get("order_id"))
        if order is not None and _PUT_IN.search(clause):
            return True
        return bool(_REMOVES.search(clause)) and order is not None and _names_an_items_option(clause, order)
    if _PUT_IN.search(clause):
        return True
    if _ADD_VERB.search(clause) and (entities.get("order_id") or _AN_ORDER.search(clause)):
        return True  # "In my order with the tablet ..., I want to add one more garden hose please"
    return bool(_REMOVES.search(clause)) and bool(_AN_ORDER.search(clause)) and names_a_purchase(clause, view)


def _names_an_items_option(text: str, order: OrderView) -> bool:
    """Do the words name an option value one of the order's items has ("the 13-inch one")?"""
    values = option_values(order.lines)
    return any(h.value in values.get(h.key, ()) for h in find_option_values(text, values))


_ADD_VERB = re.compile(r"\badd(?:ing)?\b", re.IGNORECASE)


def _not_an_option_change(text: str, order: OrderView, entities: Mapping[str, Any]) -> str | None:
    """'removal', 'addition' or 'other_product' when the words ask for an item change that is no
    change of options: an item taken out or added, or a product of the order for another product
    (both among the catalogue products the clause names, `entities["products"]`)."""
    if _REMOVES.search(text):
        return "removal"
    if _ADDS.search(text) or _PUT_IN.search(text):
        return "addition"
    held = order.product_ids()
    named = {str(p.get("product_id")) for p in entities.get("products") or [] if p.get("product_id")}
    if named & held and named - held:
        return "other_product"
    return "other_product" if _asks_another_product(text, order, entities) else None


# The words before a product the customer wants in place of theirs: "for a pair of (sunglasses)",
# "what I really need is a (coffee maker)", "I'd rather have the (blender)".
_WANTED_INSTEAD = re.compile(
    r"\b(?:for|into|need(?:ed)? is|rather have|prefer)\s+(?:(?:a|an|the|some|one|pair|of|new)\s+){0,3}$",
    re.IGNORECASE)


def _asks_another_product(text: str, order: OrderView, entities: Mapping[str, Any]) -> bool:
    """Is a product wanted in place of one of the order's items ("the tea kettle I received for a
    pair of sunglasses", "I got the silver kettle ... what I really need is a coffee maker"), even
    when the words name the order's item by another product's name (the Tea Kettle for its
    Electric Kettle) or the wanted product is in the same order?"""
    own = product_mentions(text, order.products(), own=True)
    if not own:
        return False
    catalogue = list({str(p["product_id"]): p for p in [*order.products(), *(entities.get("products") or [])]
                      if p.get("product_id")}.values())
    for wanted in product_mentions(text, catalogue):
        if not _WANTED_INSTEAD.search(text[:wanted.span[0]]):
            continue
        # the item given up: one of the order's, named elsewhere, of another product
        if any(m.product_id != wanted.product_id and not _overlaps(m.span, wanted.span) for m in own):
            return True
    return False


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


_CONTRAST = re.compile(r"\bbut\b|但是|可是", re.IGNORECASE)
# (what the customer keeps as it is is ruled out as much as what they say "not" of: "cancel the
# earbuds, but keep the water bottle order as is", "please don't touch the espresso machine order")
# ("no longer need the laptop", "I do not want the mug" deny the need, not the thing: it is meant)
_NEGATED_BEFORE = re.compile(r"\b(?:(?:not|no|never|isn't|wasn't)(?!\s+(?:longer\s+)?(?:need|want|use)\b)"
                             r"|except(?: for)?|apart from|other than|without"
                             r"|aside from|besides|keep(?:ing)?|leave|leaving|hold(?:ing)? on to"
                             r"|hang(?:ing)? on to"
                             r"|(?:don'?t|do not) (?:touch|cancel|change|return|mess with))"
                             r"\b[^.;!?]{0,30}$", re.IGNORECASE)


def _address_named(text: str, order: OrderView) -> int | None:
    """Where the text names the order's shipping address (its street line, or its city when the
    street is not given), as a character offset; None when it does not."""
    address = order.address or {}
    street = address.get("address1")
    if street and len(street) >= 4:
        words = r"\s+".join(map(re.escape, street.split()))
        found = re.search(r"\b" + words + r"\b", text, re.IGNORECASE)
        if found:
            return found.start()
        # ("the one that went to the Pine Lane address": the street without its number)
        name = street.split()[1:] if street.split()[0].isdigit() else []
        if len(name) >= 2:
            found = re.search(r"\b" + r"\s+".join(map(re.escape, name)) + r"\b", text, re.IGNORECASE)
            if found:
                return found.start()
    # (the city by any of its names: "the one going to philly", "寄到夏洛特的那个")
    return city_named(text, str(address.get("city") or ""))


# What a negation describes: up to the end of its phrase ("not the one in the big order with the
# dumbbells and the skateboard - the other one"): a sentence end, a dash, "but", "the other", or a
# comma before the one meant ("not the one with the tablet, the one with the skateboard").
_NEGATED_PHRASE = re.compile(
    r"\b(?:not|no|never|isn't|wasn't|without)\b.*?(?=[.;!?\u2014\u2013]|\s-\s|,?\s*\bbut\b|\bthe other\b|"
    r",\s*(?:the one|it'?s|i mean|rather|instead)\b|$)",
    re.IGNORECASE,
)


def _ruled_out(text: str, candidates: Sequence[OrderView]) -> set[str]:
    """The candidates a negated description rules out ("not the one w the office chair", "not the
    one in the big order with the dumbbells and the skateboard"): those holding a product it names
    that the other listed orders do not all hold."""
    spans = [m.span() for m in _NEGATED_PHRASE.finditer(text)]
    if not spans:
        return set()
    # Read against all the listed orders' products at once: "the electric kettle" is the Electric
    # Kettle, not the Tea Kettle another order holds.
    products = list({p["product_id"]: p for o in candidates for p in o.products()}.values())
    negated = {m.product_id for m in product_mentions(text, products, own=True)
               if any(a <= m.span[0] < b for a, b in spans)}
    out = set()
    for order in candidates:
        held = order.product_ids()
        others = [o.product_ids() for o in candidates if o is not order]
        # a product every candidate holds says nothing about which one is ruled out
        if any(p in held and not all(p in other for other in others) for p in negated):
            out.add(order.order_id)
    return out


def narrow_pending(
    text: str, pending: Sequence[PendingAction], view: CustomerView
) -> list[tuple[str, dict[str, Any]]]:
    """A change of mind at confirmation ("actually, only the boots"): the proposed item writes
    whose customer's words name only some of their items, as (intent, entities) to propose again
    with those items alone; or, for a return, more of the order's items ("also the backpack from
    that order"), to propose again with those added. Empty when the words name none of the
    proposed items, or all of them, and add none."""
    narrowed: list[tuple[str, dict[str, Any]]] = []
    for action in pending:
        intent = ITEM_REQUESTS.get(action.action)
        args = dict(action.proposal.args)
        order = view.order(args.get("order_id"))
        item_ids = list(args.get("item_ids") or [])
        if intent == "return_request" and order is not None and _ALSO.search(text):
            # "also the backpack from that order": the return again, with the items added.
            rest = OrderView(order.order_id, order.status,
                             tuple(x for x in order.lines if x.item_id not in item_ids), order.paid_with)
            added = resolve_return_lines(text, rest) if rest.lines else None
            if added:
                narrowed.append((intent, {**args, "item_ids": [*item_ids, *(x.item_id for x in added)],
                                          "asks_for_change": True, "grounded_orders": [order.order_id]}))
                continue
        if intent is None or order is None or len(item_ids) < 2:
            continue
        proposed = [line for line in order.lines if line.item_id in item_ids]
        among = OrderView(order.order_id, order.status, tuple(proposed), order.paid_with)
        kept = resolve_return_lines(text, among)
        if not kept or len(kept) >= len(item_ids):
            continue
        keep = [i for i, item in enumerate(item_ids) if item in {line.item_id for line in kept}]
        entities: dict[str, Any] = {
            **args,
            "item_ids": [item_ids[i] for i in keep],
            "asks_for_change": True,
            "grounded_orders": [order.order_id],
        }
        if args.get("new_item_ids"):
            entities["new_item_ids"] = [args["new_item_ids"][i] for i in keep]
            entities["item_action"] = action.action.value
        narrowed.append((intent, entities))
    return narrowed


# Words adding to what was said ("also the backpack", "the lamp too").
_ALSO = re.compile(r"^\W*(?:oh,? )?(?:and )?(?:also|plus|as well as)\b|\b(?:too|as well)\W*$", re.IGNORECASE)
# Words adding one more anywhere in the clause ("I also want the red one black", "that one too").
_ONE_MORE = re.compile(r"\balso\b|\bas well\b|\btoo\W*$", re.IGNORECASE)
# What a proposal whose payment method is named again is asked as: the request it proposes.
_PAYING_REQUESTS = {"change_payment": "change_payment", "modify_items": "change_items",
                    "exchange_items": "change_items", "return_items": "return_request"}


def _another_method(text: str, action: str, args: Mapping[str, Any], order: OrderView | None,
                    view: CustomerView) -> tuple[str, dict[str, Any]] | None:
    """ "actually no, the visa" at confirmation of a payment change (or of an item change, a
    return, with the money on a method): the proposal again, with the other method of the
    customer's the words name (or with the one proposed, named again with no yes or no); None when
    they name none, or the one proposed beside a yes, a no or a question."""
    current = args.get("payment_method_id")
    if action not in _PAYING_REQUESTS or not current or order is None:
        return None
    from csagent.nlp.confirmation import lean

    said = resolve_payment(text, view, order).method
    if said is not None and said.payment_method_id == current \
            and (lean(text) is not None or has_question_mark(text)):
        return None  # "yes, put the difference on my gift card": the one proposed, said again
    # ("The difference please give back on my PayPal." to a proposal refunding it to PayPal, with no
    # yes or no: the proposal again, as it was)
    choice = None if said is not None and said.payment_method_id == current \
        else resolve_payment(text, view, order, exclude=str(current))
    method = said if choice is None else choice.method
    if method is None or (action == "change_payment" and method.payment_method_id == order.paid_with):
        return None
    entities = {**args, "payment_method_id": method.payment_method_id, "asks_for_change": True,
                "grounded_orders": [order.order_id]}
    if _PAYING_REQUESTS[action] == "change_items":
        entities["item_action"] = action
    return _PAYING_REQUESTS[action], entities


def amend_pending(
    text: str, pending: Sequence[PendingAction], view: CustomerView,
    variants: Mapping[str, Sequence[Variant]],
) -> list[tuple[str, dict[str, Any]]]:
    """Another version asked for at confirmation ("oh wait, could you make it the 1000ml red one
    instead?"): each proposed item change whose item the words move to another variant, as
    (intent, entities) to propose again with the new variants; and a proposal whose money goes
    on a payment method, with the other method the words name ("actually no, the visa"). The
    words are read as said of each proposed item (its name first), unless they name another
    product of the order; empty when they change no proposed item."""
    amended: list[tuple[str, dict[str, Any]]] = []
    for action in pending:
        args = dict(action.proposal.args)
        order = view.order(args.get("order_id"))
        paying = _another_method(text, action.action.value, args, order, view)
        if paying is not None:
            amended.append(paying)
            continue
        item_ids = list(args.get("item_ids") or [])
        new_ids = list(args.get("new_item_ids") or [])
        if ITEM_REQUESTS.get(action.action) != "change_items" or order is None \
                or len(new_ids) != len(item_ids):
            continue
        proposed = [line for line in order.lines if line.item_id in item_ids]
        products = {line.product_id for line in proposed}
        others = OrderView(order.order_id, order.status,
                           tuple(x for x in order.lines if x.product_id not in products))
        if others.lines and product_mentions(text, others.products(), own=True):
            # "can you also switch the patio umbrella in that same order to the 7 ft green one?":
            # items are changed once, so another item's change joins the proposal; one that cannot
            # be placed is another request, read as one.
            extra = resolve_item_changes(text, others, variants)
            if extra.complete:
                amended.append(("change_items", {
                    **args, "item_ids": [*item_ids, *(c.line.item_id for c in extra.changes)],
                    "new_item_ids": [*new_ids, *(c.new.item_id for c in extra.changes if c.new is not None)],
                    "asks_for_change": True, "item_action": action.action.value,
                    "grounded_orders": [order.order_id]}))
            continue
        # ("Wait, I also want the red in-ear one become black": another item of a product proposed,
        # told apart by its options, joins the proposal too)
        same_kind = OrderView(order.order_id, order.status, tuple(
            x for x in order.lines if x.product_id in products and x.item_id not in item_ids))
        if same_kind.lines and _ONE_MORE.search(text):
            extra = resolve_item_changes(text, same_kind, variants)
            if extra.complete and extra.changes:
                amended.append(("change_items", {
                    **args, "item_ids": [*item_ids, *(c.line.item_id for c in extra.changes)],
                    "new_item_ids": [*new_ids, *(c.new.item_id for c in extra.changes if c.new is not None)],
                    "asks_for_change": True, "item_action": action.action.value,
                    "grounded_orders": [order.order_id]}))
                continue
        changed = list(new_ids)
        for i, item in enumerate(item_ids):
            line = next((x for x in proposed if x.item_id == item), None)
            if line is None:
                continue
            alone = OrderView(order.order_id, order.status, (line,), order.paid_with)
            said = text if product_mentions(text, alone.products(), own=True) else f"{line.name} {text}"
            change = next(iter(resolve_item_changes(said, alone, variants).changes), None)
            if change is not None and change.new is not None and change.new.item_id not in (item, new_ids[i]):
                changed[i] = change.new.item_id
        if changed != new_ids:
            amended.append(("change_items", {**args, "new_item_ids": changed, "asks_for_change": True,
                                             "item_action": action.action.value,
                                             "grounded_orders": [order.order_id]}))
    return amended

