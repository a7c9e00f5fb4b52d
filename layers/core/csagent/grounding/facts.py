"""Orders told apart by what the customer says about them other than their products: an amount
("I see 234.57 coming back to my PayPal, from which order?"), the city or state they ship to
("anything of mine going to dallas?", "which of my orders are NOT going to my place in Charlotte?",
"... in DC"), whether they go to the account's own address ("which of my orders are going somewhere
other than my home address?") or the method they were paid with ("which ones went on PayPal?").
Matched against the customer's own orders (`grounding.model.CustomerView`); no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from csagent.grounding.model import CustomerView, OrderView
from csagent.grounding.places import city_named
from csagent.grounding.resolve import A_DIFFERENCE, resolve_payment

# An amount with its cents ("234.57", "$4,660.86"), not part of an order id or a longer number.
_AMOUNT = re.compile(r"(?<![\w#.,])\$?\s?(\d{1,3}(?:,\d{3})+|\d+)\.(\d{2})(?![\d.,]*\d)")
# A negation a few words before a fact: "NOT going to my own place in Charlotte", "going somewhere
# other than my New York address".
_NEGATED = re.compile(r"\b(?:not|never|other than|besides|except|apart from"
                      r"|(?:do|does|did|is|are|was|were|wo|ca)n'?t)\b(?:\W+[\w']+){0,7}\W*$", re.IGNORECASE)
def negated_before(text: str) -> bool:
    """Do the words end a few words after a negation ("which of my orders are NOT going")?"""
    return bool(_NEGATED.search(text))


def names_a_price_difference(text: str) -> bool:
    """Do the words name a price difference ("give me back the difference", "diff back to my card",
    "pay difference with gift card", "差价")? Money asked back or paid for a price, not an item
    sent back."""
    return bool(A_DIFFERENCE.search(text))


# How a payment method is said to have paid for orders ("went on PayPal", "paid with my gift card").
_PAID_WITH = re.compile(r"\b(?:paid|pay|payed|went on|go on|charged|billed|used|put on)\b", re.IGNORECASE)
# A question about which of the customer's orders: "which ones", "anything of mine", "what did I buy".
_WHICH_ORDERS = re.compile(
    r"\b(?:which|what(?:'?s)?|any|anything|everything)\b(?:\W+[\w']+){0,4}?\W+"
    r"(?:orders?|ones?|of mine|of my|stuff|things"
    r"|i(?:'?ve| have)? (?:buy|bought|order|ordered|get|got|pay|paid))\b"
    r"|\b(?:anything|something|stuff) of mine\b",
    re.IGNORECASE)
CENT = 0.005


def total(order: OrderView) -> float:
    """What the order's items came to."""
    return round(sum(line.price for line in order.lines), 2)


def _place(order: OrderView, part: str) -> str:
    """The `part` ("city", "state") of where the order ships, or ""."""
    return str((order.address or {}).get(part) or "")


def _named_at(text: str, part: str, place: str) -> int | None:
    """Where the words name the city (by any of its names: "philly", "旧金山") or the state (as its
    capitals: "in DC")."""
    if part == "city":
        return city_named(text, place)
    match = re.search(rf"\b{re.escape(place)}\b", text)
    return match.start() if match else None


def _comes_to(order: OrderView, amount: float) -> bool:
    """Is `amount` what the order came to, or the price of one of its items?"""
    return abs(total(order) - amount) < CENT or any(abs(x.price - amount) < CENT for x in order.lines)


def _coming_to(orders: Sequence[OrderView], wanted: Sequence[float]) -> list[OrderView]:
    """The orders that come to one of the amounts (their total, or one item's price)."""
    return [o for o in orders if any(_comes_to(o, a) for a in wanted)]


def amounts(text: str) -> list[float]:
    """The amounts with cents the words name."""
    return [float(f"{whole.replace(',', '')}.{cents}") for whole, cents in _AMOUNT.findall(text)]


def order_of_amount(text: str, view: CustomerView) -> str | None:
    """The one order of the customer's whose total (what was paid for it, and refunded when it was
    cancelled) or one item's price is an amount the words name ("I just noticed 818.31 coming back
    into my PayPal"): an amount to the cent tells an order apart as well as its number does. None
    for none or several ("you charged me 505.62 twice for the bookshelf": two orders hold one)."""
    fitting = _coming_to(view.orders, amounts(text))
    return fitting[0].order_id if len(fitting) == 1 else None


def asks_which_orders(text: str) -> bool:
    """Does the clause ask which of the customer's orders (or what they bought) something is?"""
    return bool(_WHICH_ORDERS.search(text))


# The account's own address named as a place: "my home address", "my own place", "my default address".
_HOME_ADDRESS = re.compile(r"\bmy\s+(?:own\s+)?(?:home|default|usual|main|regular|account'?s?)"
                           r"(?:\s+(?:address|place|house|apartment|flat))?\b|\bmy\s+own\s+(?:address|place|"
                           r"house|apartment|flat)\b|\bthe address on (?:my account|file)\b", re.IGNORECASE)
# Words of where orders go, before the place ("going", "being shipped", "sent"), as in `_WHERE_IT_GOES`.
_WHERE_ORDERS_GO = re.compile(r"\b(?:going|goes|go|heading|headed|ship(?:s|ped|ping)?|being sent|sent|"
                              r"delivered|deliver(?:ing|s)?)\b", re.IGNORECASE)


def orders_by_facts(text: str, view: CustomerView) -> list[OrderView] | None:
    """The customer's orders that fit every fact the words name about orders (an amount, a city or
    state they ship to, the account's own address, the method that paid), in the account's order;
    None when the words name none."""
    orders: Sequence[OrderView] = view.orders
    named = False
    wanted = amounts(text)
    if wanted:
        named = True
        orders = _coming_to(orders, wanted)
    for part in ("city", "state"):
        for place in sorted({_place(o, part) for o in view.orders} - {""}):
            at = _named_at(text, part, place)
            if at is None:
                continue
            named = True
            negated = bool(_NEGATED.search(text[:at]))
            orders = [o for o in orders if (_place(o, part).lower() == place.lower()) != negated]
    home = _HOME_ADDRESS.search(text) if view.default_address else None
    if home is not None and _WHERE_ORDERS_GO.search(text[:home.start()]):
        # "which of my orders are going somewhere other than my own home address?": the account's
        # address is a place the orders go, or not
        from csagent.grounding.frame import same_address

        named = True
        negated = bool(_NEGATED.search(text[:home.start()]))
        orders = [o for o in orders if same_address(o.address, view.default_address) != negated]
    if _PAID_WITH.search(text) and not names_a_price_difference(text):
        # (a method that pays a price difference says how a change is paid, not which order it paid:
        # "Can I exchange for black, size L? Difference please pay with my Mastercard.")
        choice = resolve_payment(text, view)
        methods = [choice.method] if choice.method is not None else list(choice.candidates)
        if methods:
            named = True
            ids = {m.payment_method_id for m in methods}
            orders = [o for o in orders if o.paid_with in ids]
    return list(orders) if named else None
