"""Which address the words point at: one of the customer's own (the account's, an order's, a city of
theirs), or one written out.

Part of the local understanding (`csagent.understanding_local`, whose reader calls these)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from csagent.understanding import (
    ORDER_READ_INTENTS,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.grounding.model import CustomerView



def only_an_address(piece: str) -> bool:
    """Is the clause an address and little else ("1200 ocean drive apt 5b, miami florida 33139",
    "its 12 Main St, Springfield, IL 62704 now")? A question is not."""
    from csagent.nlp.entities.addresses import find_addresses

    addresses = find_addresses(piece)
    if len(addresses) != 1 or "?" in piece:
        return False
    start, end = addresses[0].span
    return len(re.findall(r"[^\W\d_]+", piece[:start] + " " + piece[end:])) <= 3


def left_behind(text: str, address: Mapping[str, Any]) -> bool:
    """Do the words name the address's city as the place the customer leaves ("moving out of San
    Francisco", "I've left Chicago")?"""
    city = str(address.get("city") or "")
    return bool(city) and re.search(r"\b(?:out of|away from|moving from|leaving|left|from)\s+(?:the\s+)?"
                                    + re.escape(city) + r"\b", text, re.IGNORECASE) is not None
ADDRESS_INTENTS = frozenset({"change_order_address", "update_default_address"})
# What a clause asking for a change, that names an order and one of the customer's addresses, was
# read as when its words were less plain than "change the address" ("send it to my Dallas address on
# my account" read as an account question).
_MAY_SEND_ELSEWHERE = frozenset({"account_info", "smalltalk", "out_of_scope", *ORDER_READ_INTENTS})


# "my new address on the account" is not the one saved there.
_NEW_ADDRESS = re.compile(r"\bnew\b|新地址", re.IGNORECASE)
# Where the customer lives, not said which address that is ("send it to my own place instead").
# ("my Denver address", "my DC place": a word naming which one may stand between)
_MY_PLACE = re.compile(r"\bmy (?:[\w.]+ )?(?:place|home|house|flat|apartment|apt|address)\b", re.IGNORECASE)
SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+")


def may_name_an_address(intent: str, piece: str, entities: Mapping[str, Any],
                         recent: str | None = None, view: CustomerView | None = None) -> bool:
    from csagent.grounding.frame import names_a_purchase
    from csagent.nlp.entities.addresses import names_saved_address
    from csagent.nlp.speech_acts import asks_for_change, names_address_change

    # (an order is named by its id, by the one talked about, or by something the customer bought:
    # "the makeup kit order should go to my Denver address")
    order_meant = bool(entities.get("order_id") or recent) or (
        view is not None and names_a_purchase(piece, view))
    # ("W4860251 shipping address?" ... "wrong. use my default one": the order talked about, sent to
    # the address saved on the account, whatever the words read as; "change it to my default one"
    # changes no item)
    saved = bool(recent) and names_saved_address(piece)
    return intent in ADDRESS_INTENTS or (
        intent in _MAY_SEND_ELSEWHERE | {"change_items"}
        and bool(entities.get("order_id") or saved) and asks_for_change(piece)
        and (intent != "change_items" or names_saved_address(piece))) or (
        # "the smart watch order shouldn't go to Houston. Can you ship it to my own place?": the
        # order the message is about, sent where the customer lives, whatever the words read as
        order_meant and bool(_MY_PLACE.search(piece))
        and names_address_change(piece) and asks_for_change(piece))


def address_known_to_the_customer(intent: str, piece: str, entities: dict[str, Any],
                                   view: CustomerView, message: str = "") -> str:
    """The address the words point at among the customer's own, set as the clause's address; the
    intent it makes the clause. "send it to my default address": the saved one, which is a change of
    the order's address (the default address cannot become itself). "the Hickory Lane one", "my
    Dallas address": the one address of the account or of their orders with that street or city
    (other than where the order goes now); a change of the order's address, unless the words ask to
    make another address the default. "Can you send it to my own place instead? It's the address on
    my account.": the saved one, said in a sentence of its own."""
    from csagent.grounding.frame import asks_as_question, order_going_to
    from csagent.nlp.entities.addresses import names_saved_address
    from csagent.nlp.entities.identifiers import ORDER_ID_RE

    named_order = view.order(entities.get("order_id")) if ORDER_ID_RE.search(piece) else None
    if intent == "update_default_address" and named_order is not None and named_order.address:
        # "Could you update the default address on my profile to the same one W7800651 is being sent
        # to?": the saved address is what changes, to where that order goes; no order changes.
        entities["address"] = dict(named_order.address)
        for key in ("order_id", "grounded_orders", "grounded", "order_status"):
            entities.pop(key, None)
        return intent
    if view.default_address and names_saved_address(piece) and not _NEW_ADDRESS.search(piece):
        entities["address"] = dict(view.default_address)
        return "change_order_address"
    if view.default_address and _MY_PLACE.search(piece) \
            and any(names_saved_address(s) and not _NEW_ADDRESS.search(s) and not asks_as_question(s)
                    for s in SENTENCE_BREAK.split(message) if piece not in s):
        entities["address"] = dict(view.default_address)
        return "change_order_address"
    order = view.order(entities.get("order_id"))
    named = view.address_named(piece, besides=order.address if order else None)
    if named is None:
        return intent
    going = order_going_to(piece, view) if order is None else None
    if going is not None:
        # "one of my orders is going to my old apartment on Pine Lane ... send it to my current
        # place": the place it goes now says which order, not where it should go.
        entities.update(order_id=going.order_id, grounded_orders=[going.order_id],
                        grounded={"order": "the order going there", "by": "facts"})
        return intent
    entities["address"], entities["address_named"] = dict(named), True
    if intent == "update_default_address" and dict(named) != dict(view.default_address or {}):
        return intent
    return "change_order_address"


def address_other_than_the_orders(read_as: str, intent: str, piece: str, entities: dict[str, Any],
                                   view: CustomerView) -> str:
    """Once grounding has found the order ("my order with the headphones is going to Seattle, send
    it to my home address in Washington"): the address the words name other than the one the order
    goes to now. When they name none, the clause is what it was read as before its words were taken
    for an address: an order is never moved to where it already goes."""
    entities.pop("address_named", None)
    order = view.order(entities.get("order_id"))
    if order is None or not order.address:
        return intent
    named = view.address_named(piece, besides=order.address)
    if named is not None:
        entities["address"] = dict(named)
        return intent
    entities.pop("address", None)
    return read_as
