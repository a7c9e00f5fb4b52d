"""The customer answering the question the assistant asked: the candidate order picked, the payment
method named, the waiting request read again with the answer.

Part of the local understanding (`csagent.understanding_local`, whose reader calls these)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from csagent.understanding import (
    ITEM_REQUESTS,
    Clause,
)

logger = logging.getLogger(__name__)


def _lines_of(order: Any, entities: Mapping[str, Any]) -> list[Any]:
    """The order's lines a waiting request names (all of them when it names none yet)."""
    named = set(entities.get("item_ids") or ())
    return [x for x in order.lines if x.item_id in named] or list(order.lines)


# A question of which one ("which one of those has the espresso machine in it?").
_ASKS_WHICH = re.compile(r"\bwhich\b|哪(?:个|一个|笔|张)", re.IGNORECASE)


def answered_candidate(text: str, state: Mapping[str, Any], view: Any,
                        variants: Mapping[str, Sequence[Any]] | None = None,
                        catalogue: Sequence[Mapping[str, Any]] | None = None,
                        ) -> tuple[str | None, Mapping[str, Any] | None]:
    """The order id of the candidate the customer picks, when the last turn listed several ("You
    have 2 orders with the kettle: ..." -> "the delivered one"), and the request that waited for it.
    Orders the last turn answered for without asking (`last_orders` in memory) are picked among the
    same way, with no request waiting. An item change asked back about ("the bottle in stainless
    steel, black is not available right now. Available: ...") is answered by options its items come
    in ("then the red stainless steel one, please"): its order is the one known."""
    from csagent.grounding.frame import pick_candidate
    from csagent.grounding.resolve import names_option_of, names_option_offered, product_mentions
    from csagent.nlp.speech_acts import asks_something

    for waiting in state.get("awaiting") or []:
        entities = waiting.get("entities") or {}
        known = view.order(entities.get("order_id"))
        if waiting.get("parameter") == "item_ids" and known is not None and (
                product_mentions(text, known.products()) or not asks_something(text)
                or names_option_of(text, known.lines)):
            # "Which items of #W1 do you want to return?" -> "the skateboard", or "It holds 2 pet
            # beds: ... Which one?" -> "the grey one, money back to PayPal": the order is known.
            return str(known.order_id), waiting
        if waiting.get("intent") == "change_items" and waiting.get("question") and known is not None \
                and variants and names_option_offered(text, _lines_of(known, entities), variants) \
                and {m.product_id for m in product_mentions(text, catalogue or ())} <= known.product_ids():
            return str(known.order_id), waiting
        ids = (waiting.get("entities") or {}).get("order_candidates") or []
        candidates = [o for o in (view.order(i) for i in ids) if o is not None]
        chosen = pick_candidate(text, candidates)
        if chosen is not None:
            return str(chosen.order_id), waiting
    answered = [] if state.get("awaiting") or _ASKS_WHICH.search(text) \
        else (state.get("memory") or {}).get("last_orders") or []
    # (nothing asked, but the last turn answered for several orders: "is my kettle shipped yet" ...
    # "the electric one, its going to my aunt in san antonio" is one of those; "which one of those
    # has the espresso machine in it?" asks which, and is answered so)
    chosen = pick_candidate(text, [o for o in (view.order(i) for i in answered) if o is not None])
    if chosen is not None:
        return str(chosen.order_id), None
    return None, None


def with_payment_answered(clauses: list[Clause], text: str, state: Mapping[str, Any],
                           view: Any) -> list[Clause]:
    """ "Should the refund go to your Visa ending 1234 or your gift card?" -> "ahh ok, back to the
    card then": the payment method the answer names, whatever the words alone are read as, is what
    the waiting request asked for."""
    from csagent.grounding.resolve import resolve_payment

    for waiting in state.get("awaiting") or []:
        if waiting.get("parameter") != "payment_method_id" or any(c.entities.get("payment_method_id")
                                                                   for c in clauses):
            continue
        order = view.order((waiting.get("entities") or {}).get("order_id"))
        method = resolve_payment(text, view, order).method
        if method is not None:
            return [replace(c, entities={**c.entities, "payment_method_id": method.payment_method_id})
                    for c in clauses]
    return clauses


def with_request_reread(clauses: list[Clause], waiting: Mapping[str, Any], picked: str, text: str,
                         view: Any, variants: Any, catalogue: Any) -> list[Clause]:
    """ "I'd like my camera with a bigger zoom" -> "which order?" -> "the one with the smartphone":
    the waiting request's own words are read again on the order picked, with what the answer adds
    ("the other one, just in gold"). A product that tells the listed orders apart only said which
    order was meant and is not part of the request; one they all hold is what the request is about
    ("the other one, where the tablet's on its own"), and so is one picked for a request that named
    no item ("I'd like to send something back" -> "the espresso machine!"). Products the answer
    names as what the order holds ("the order with the helmet and the toothbrush") only say which
    order; a request that named no item ("return one of them") is then about the product the orders
    were listed by. The answer's clauses carry what that reading finds."""
    from csagent.grounding.asking import QUESTION_KEYS
    from csagent.grounding.frame import ground
    from csagent.grounding.resolve import identifying_order, product_mentions

    asked = str(waiting.get("text") or "")
    if waiting.get("intent") not in ITEM_REQUESTS or not asked:
        return clauses
    listed = [view.order(i) for i in (waiting.get("entities") or {}).get("order_candidates") or [picked]]
    held = [o.product_ids() for o in listed if o is not None]
    shared = set.intersection(*held) if held else set()
    chosen = view.order(picked)
    # "I'd like to send something back" -> "the espresso machine!": a request that named no item
    # of the order takes the product that picked the order as its item.
    names_items = chosen is not None and bool(product_mentions(asked, chosen.products()))
    answer = text
    mentions = product_mentions(text, catalogue or view.products())
    # ("the one from #W9126675, the order with the helmet and the toothbrush": which order, whatever
    # the request named)
    describing = identifying_order(text, mentions)
    for mention in sorted(mentions, key=lambda m: -m.span[0]):
        if (mention.product_id not in shared and names_items) or mention in describing:
            answer = answer[: mention.span[0]] + answer[mention.span[1]:]  # "the one with the smartphone"
    if chosen is not None and not names_items and mentions and len(describing) == len(mentions) and shared:
        # "I'd like to return one of them" (the two smart watches) -> "the one with the helmet": the
        # product the listed orders were found by is the request's
        asked = f"{asked} ({', '.join(x.name for x in chosen.lines if x.product_id in shared)})"
    try:
        found = ground(str(waiting["intent"]), f"{asked} {answer}", {"order_id": picked}, view, variants,
                       f"{asked} {answer}")
        wanted = str(waiting.get("parameter") or "")
        if wanted and not found.get(wanted):
            # "can u change the red headphones to blue" -> "It holds 2: ... Which one?" -> "the
            # in-ear ones": after the request the answer would read as what it changes to; put
            # first, it says which item the request is about.
            before = ground(str(waiting["intent"]), f"{answer}. {asked}", {"order_id": picked}, view,
                            variants, f"{answer}. {asked}")
            found = before if before.get(wanted) or before.get("settled") else found
    except Exception:  # noqa: BLE001 - grounding refines; without it the answer gives the order alone
        logger.exception("reading the waiting request again failed; the answer gives its order")
        return clauses
    # What the answer's own words left open ("make it large": which items?) the reading settles.
    return [replace(c, entities={**{k: v for k, v in c.entities.items() if k not in QUESTION_KEYS}, **found})
            if c.entities.get("picked_candidate") else c for c in clauses]
