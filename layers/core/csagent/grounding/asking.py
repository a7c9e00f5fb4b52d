"""The words of the questions grounding asks ("You have 2 orders with the kettle: ... Which one do
you mean?"), kept as phrases (`nlp.replies.phrase`: a template's name and its fields) so that the
reply says them in the customer's language.

Why both a text and a phrase: a clause's entities carry the English text under "question", which
the rest of the code reads (whether something is asked, which identifiers a reply may name) and
checkpoints saved before phrases existed hold; beside it, "question_phrase" is what
`replies.ask_for` says in the reply's language. The English text is rendered from the phrase, so
one template decides each question's words, in every language. Order ids, product names, option
values and prices are fields, as the catalogue and the store write them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from csagent.grounding.model import Line, OrderView, PaymentView
from csagent.nlp.replies import joined, load_templates, phrase, render_phrase

#: The entity (and missing-parameter) key of a question's phrase, beside "question".
QUESTION_PHRASE = "question_phrase"
#: The keys a question is kept under: dropped together when the question is settled.
QUESTION_KEYS = frozenset({"question", QUESTION_PHRASE})
#: At most this many items of an order are named when it is listed back.
ITEMS_SHOWN = 3


def question(said: Mapping[str, Any]) -> dict[str, Any]:
    """The entities of a question: its English text and its phrase."""
    return {"question": render_phrase(said, "en"), QUESTION_PHRASE: dict(said)}


def order_state(status: str) -> Any:
    """An order's status as the store writes it, in the customer's language when there are words
    for it (a status no template knows is said as it is)."""
    name = f"order_state_{status}"
    return phrase(name) if name in load_templates("en") else status


def order_entry(order: OrderView) -> dict[str, Any]:
    """ "#W1 (Tablet, Notebook, pending)": an order as a question lists it, its first items and
    its status."""
    return phrase("ask_order_entry", order_id=order.order_id,
                  items=[x.name for x in order.lines[:ITEMS_SHOWN]],
                  more="…" if len(order.lines) > ITEMS_SHOWN else "", status=order_state(order.status))


def orders_listed(orders: Sequence[OrderView]) -> dict[str, Any]:
    """Orders as a question lists them: "#W1 (Tablet, Notebook, pending); #W2 (...)"."""
    return joined([order_entry(o) for o in orders], "groups")


def item_label(line: Line) -> Any:
    """ "Water Bottle (1000ml, blue)": an item's name and the option values a customer sees."""
    values = [str(v) for v in line.options.values()]
    return phrase("item_with_options", name=line.name, values=values) if values else line.name


def items_listed(lines: Sequence[Line]) -> list[Any]:
    """An order's items, each with its options ("Its items are: ...")."""
    return [item_label(x) for x in lines]


def method_label(method: PaymentView) -> Any:
    """How the customer knows a payment method: "Visa ending 1234", "PayPal", "gift card ($52.00
    left)"."""
    if method.source == "credit_card":
        brand = method.brand.title() if method.brand else phrase("method_credit_card")
        return phrase("method_card_ending", brand=brand, last_four=method.last_four) \
            if method.last_four else brand
    if method.source == "paypal":
        return "PayPal"
    if method.source == "gift_card":
        return phrase("method_gift_card_left", balance=f"${method.balance:.2f}") \
            if method.balance is not None else phrase("method_gift_card")
    return method.source.replace("_", " ")


def methods_listed(methods: Sequence[PaymentView], how: str = "list") -> dict[str, Any]:
    """Payment methods offered as answers: "Visa ending 1234, PayPal" (`how`: "or" for "... or ...")."""
    return joined([method_label(m) for m in methods], how)


def holding(lines: Sequence[Line]) -> dict[str, Any]:
    """ "It holds 2 Pet Bed items: Pet Bed (large, beige) and Pet Bed (large, grey)."; of two
    products one word names ("kettle"): "It holds 2 of them: Electric Kettle (...) and Tea Kettle
    (...)." """
    labels = joined(items_listed(lines), "and")
    if len({x.name for x in lines}) == 1:
        return phrase("ask_holds_items", count=len(lines), product=lines[0].name, items=labels)
    return phrase("ask_holds_of_them", count=len(lines), items=labels)


def sentences(*parts: Any) -> dict[str, Any]:
    """Sentences said one after the other."""
    return joined(list(parts), "sentences")


def about_order(order_id: str, *said: Any) -> dict[str, Any]:
    """ "Order #W1: ...": what is said of an order grounding found."""
    return phrase("about_order", order_id=order_id, text=sentences(*said))
