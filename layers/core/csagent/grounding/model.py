"""What grounding matches a customer's words against: their own orders and payment methods,
and the catalogue's variants. Plain frozen data, built by an adapter from one read; no I/O here
(a city's other names are package data, read once at first use by `grounding.places`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from csagent.grounding.places import city_named


@dataclass(frozen=True, slots=True)
class Line:
    """One unit of an order: which variant, of which product, at which price."""

    item_id: str
    product_id: str
    name: str
    price: float
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OrderView:
    order_id: str
    status: str
    lines: tuple[Line, ...] = ()
    paid_with: str | None = None  # the payment method of the order's first payment
    #: Where the order ships: "address1" and "city" (and the rest), as the customer may describe
    #: the order by it ("not the one going to 985 Pine Lane").
    address: Mapping[str, str] | None = None

    def product_ids(self) -> set[str]:
        return {line.product_id for line in self.lines}

    def in_status(self, statuses: Iterable[str]) -> bool:
        """Is the order in one of the statuses ("pending" also holds "pending (item modified)")?"""
        return any(self.status.startswith(s) for s in statuses)

    def products(self) -> list[dict[str, Any]]:
        """The order's products in the catalogue's shape (for mention finding), once each."""
        return _catalogue_shape(self.lines)


@dataclass(frozen=True, slots=True)
class PaymentView:
    payment_method_id: str
    source: str  # credit_card | gift_card | paypal
    brand: str | None = None
    last_four: str | None = None
    balance: float | None = None


@dataclass(frozen=True, slots=True)
class CustomerView:
    """One customer's orders (in the order the account lists them), payment methods and default
    address."""

    customer_id: str
    orders: tuple[OrderView, ...] = ()
    payment_methods: tuple[PaymentView, ...] = ()
    #: The address saved on the account ({address1, address2, city, state, zip, country}).
    default_address: Mapping[str, str] | None = None

    def order(self, order_id: str | None) -> OrderView | None:
        return next((o for o in self.orders if o.order_id == order_id), None)

    def payment(self, payment_method_id: str | None) -> PaymentView | None:
        return next((m for m in self.payment_methods if m.payment_method_id == payment_method_id), None)

    def products(self) -> list[dict[str, Any]]:
        """The products this customer bought, in the catalogue's shape (for mention finding)."""
        return _catalogue_shape(line for order in self.orders for line in order.lines)

    def known_addresses(self) -> list[Mapping[str, str]]:
        """The addresses this customer has used: the account's, then those of their orders, once
        each (by street line and city)."""
        seen: dict[tuple[str, str], Mapping[str, str]] = {}
        for address in (self.default_address, *(o.address for o in self.orders)):
            if address and address.get("address1"):
                seen.setdefault(_address_key(address), address)
        return list(seen.values())

    def address_named(self, text: str, *,
                      besides: Mapping[str, str] | None = None) -> Mapping[str, str] | None:
        """The one address of the customer's the words name by its street ("the Hickory Lane one")
        or its city ("my Dallas address"), other than `besides` (where the order goes now, which
        the words may name too: "it's going to Austin, send it to my New York place"); None when
        none or several fit."""
        named = [a for a in self.known_addresses()
                 if _address_key(a) != _address_key(besides or {}) and _names_address(text, a)]
        by_street = [a for a in named if _names_part(text, _street_name(str(a["address1"])))
                     or _names_number_and_street(text, str(a["address1"]))]
        if len(by_street) == 1:
            return by_street[0]
        return named[0] if len(named) == 1 else None


def _address_key(address: Mapping[str, str]) -> tuple[str, str]:
    return str(address.get("address1") or "").lower(), str(address.get("city") or "").lower()


def _street_name(address1: str) -> str:
    """ "217 Hickory Lane" -> "hickory lane": the street without its number."""
    return " ".join(w for w in address1.lower().split() if not w.isdigit())


def _names_part(text: str, part: str) -> bool:
    if len(part) < 4:
        return False
    words = r"\s+".join(map(re.escape, part.split()))
    return re.search(r"\b" + words + r"\b", text, re.IGNORECASE) is not None


def _names_address(text: str, address: Mapping[str, str]) -> bool:
    """Do the words name this address, by its street, its number and the first word of its street
    ("760 elm ave" of 760 Elm Avenue) or its city (by any of its names: "my SF address",
    `grounding.places`)?"""
    return _names_part(text, _street_name(str(address.get("address1") or ""))) \
        or _names_number_and_street(text, str(address.get("address1") or "")) \
        or city_named(text, str(address.get("city") or "")) is not None


def _names_number_and_street(text: str, address1: str) -> bool:
    """ "760 elm ave", "760 elm": the house number and the street's first word, however the street
    type is written after them."""
    words = address1.split()
    if len(words) < 2 or not words[0].isdigit():
        return False
    return re.search(rf"\b{re.escape(words[0])}\s+{re.escape(words[1])}\b", text, re.IGNORECASE) is not None


def _catalogue_shape(lines: Iterable[Line]) -> list[dict[str, Any]]:
    """`[{product_id, name, options: {key: [values]}}]`, one entry per product, from order lines."""
    seen: dict[str, dict[str, Any]] = {}
    for line in lines:
        entry = seen.setdefault(
            line.product_id, {"product_id": line.product_id, "name": line.name, "options": {}}
        )
        for key, value in line.options.items():
            values = entry["options"].setdefault(key, [])
            if value not in values:
                values.append(value)
    return list(seen.values())


@dataclass(frozen=True, slots=True)
class Variant:
    item_id: str
    options: Mapping[str, str]
    price: float
    available: bool
