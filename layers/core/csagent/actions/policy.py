"""Pure rules for customer actions: argument parsing, the facts an action is decided on, and the
policy checks. No I/O except reading `policy.yaml` once, on first use.

What the rules say comes from the knowledge base (`knowledge/docs/`), so the assistant never
does what its own policy pages say it cannot:

- cancel_order (cancellations.md): only a `pending` order, for one of two reasons; the whole
  paid total goes back to the original payment method (a gift card at once, a card or PayPal in
  5 to 7 business days).
- change_order_address (order-modifications.md, shipping-delivery.md): only a `pending` order,
  only to a US address.
- update_default_address (account-profile.md): any complete US address.
- return_items (returns-refunds.md): only a `delivered` order, items of that order, each within
  30 days of its delivery date; the refund goes to the original payment method or an existing
  gift card of the customer.

The clock is an argument (`now`), never read here: the seed's orders are from 2024, so tests and
demos evaluate the return window against a store date inside the data's range.

Every failed check is a `Violation` carrying the `ErrorType` the tool reports (VALIDATION for an
argument the customer can correct, BUSINESS_RULE_VIOLATION for a rule) and a sentence the
customer can read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from csagent.actions.items import match_lines
from csagent.domain.models import ErrorType

CENT = Decimal("0.01")
ORDER_ID_RE = re.compile(r"^#?W(\d{7})$", re.IGNORECASE)
ITEM_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
ZIP_RE = re.compile(r"^\d{5}(?:-\d{4})?$")
MAX_FIELD_CHARS = 100
MAX_ITEMS = 50
MAX_REQUEST_CHARS = 1000


class ActionName(StrEnum):
    """The consequential writes the assistant may make for a customer."""

    UPDATE_DEFAULT_ADDRESS = "update_default_address"
    CHANGE_ORDER_ADDRESS = "change_order_address"
    CANCEL_ORDER = "cancel_order"
    RETURN_ITEMS = "return_items"

    @property
    def on_order(self) -> bool:
        """True for the actions that change one order (all but the default address)."""
        return self is not ActionName.UPDATE_DEFAULT_ADDRESS


# --------------------------------------------------------------------------------------- rules
@dataclass(frozen=True)
class PolicyRules:
    """The data in `policy.yaml`: limits, fixed lists and the customer-facing messages."""

    cancel_reasons: tuple[str, ...]
    return_window_days: int
    country: str
    country_aliases: frozenset[str]
    refund_timing: Mapping[str, str]
    statuses: Mapping[str, str]
    messages: Mapping[str, Mapping[str, str]]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PolicyRules:
        return cls(
            cancel_reasons=tuple(str(r) for r in data["cancel_reasons"]),
            return_window_days=int(data["return_window_days"]),
            country=str(data["country"]),
            country_aliases=frozenset(str(a).lower() for a in data["country_aliases"]),
            refund_timing=dict(data["refund_timing"]),
            statuses=dict(data["statuses"]),
            messages={k: dict(v) for k, v in data["messages"].items()},
        )

    def status(self, name: str) -> str:
        """The stored spelling of a named status ("return_requested" -> "return requested")."""
        return self.statuses[name]

    def message(self, group: str, key: str, **fields: Any) -> str:
        """A customer-facing sentence from `messages[group][key]` (or the group's `default`)."""
        templates = self.messages[group]
        template = templates.get(key) or templates["default"]
        return template.format(window_days=self.return_window_days, **fields)

    def refund_timing_for(self, source: str) -> str:
        """When a refund to a payment method of this source appears ("immediately", ...)."""
        return self.refund_timing.get(source) or self.refund_timing["default"]


@lru_cache(maxsize=1)
def load_rules() -> PolicyRules:
    """The rules from `policy.yaml` beside this module (read once, on first use)."""
    text = resources.files("csagent.actions").joinpath("policy.yaml").read_text(encoding="utf-8")
    return PolicyRules.from_mapping(yaml.safe_load(text))


@lru_cache(maxsize=1)
def _us_states() -> frozenset[str]:
    # One list of state codes for the whole assistant: the entity extractor's.
    from csagent.nlp.entities import terms

    return frozenset(str(s).upper() for s in terms()["us_states"])


# ---------------------------------------------------------------------------------- outcomes
@dataclass(frozen=True)
class Violation:
    """Why an action cannot go ahead: the error type the tool reports and a readable reason."""

    error_type: ErrorType
    message: str


class ArgsError(ValueError):
    """Arguments the customer (or the planner) must correct; the message says how."""


def money(value: Any) -> Decimal:
    """A float or string amount from the graph as Decimal cents (floats go through `str`)."""
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def usd(amount: Decimal) -> str:
    """`$1,234.50`."""
    return f"${amount:,.2f}"


# ------------------------------------------------------------------------------------ args
@dataclass(frozen=True)
class Address:
    """A postal address as the graph stores it (`address2` is "" when there is none)."""

    address1: str
    address2: str
    city: str
    state: str
    zip: str
    country: str

    def as_dict(self) -> dict[str, str]:
        return {"address1": self.address1, "address2": self.address2, "city": self.city,
                "state": self.state, "zip": self.zip, "country": self.country}

    def one_line(self) -> str:
        """`215 River Road, Suite 991, New York, NY 10083, USA`."""
        street = f"{self.address1}, {self.address2}" if self.address2 else self.address1
        return f"{street}, {self.city}, {self.state} {self.zip}, {self.country}"

    @classmethod
    def from_graph(cls, props: Mapping[str, Any]) -> Address | None:
        if not props:
            return None
        return cls(**{k: str(props.get(k) or "") for k in
                      ("address1", "address2", "city", "state", "zip", "country")})


@dataclass(frozen=True)
class CancelArgs:
    order_id: str
    reason: str


@dataclass(frozen=True)
class OrderAddressArgs:
    order_id: str
    address: Address


@dataclass(frozen=True)
class DefaultAddressArgs:
    address: Address


@dataclass(frozen=True)
class ItemRequest:
    """How the customer named the items to return before they are matched to the order's lines:
    their own words ("the skateboard", "everything") and the catalogue products the understanding
    found in them. Used only when no item ids are given."""

    text: str = ""
    product_ids: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.text or self.product_ids)


@dataclass(frozen=True)
class ReturnArgs:
    """`item_ids` sorted (one entry per unit returned); no `payment_method_id` means the
    original payment method. `named` is resolved to item ids against the order's lines
    (`select_return_lines`) and never kept in the normalised arguments."""

    order_id: str
    item_ids: tuple[str, ...]
    payment_method_id: str | None
    named: ItemRequest = ItemRequest()


ActionArgs = CancelArgs | OrderAddressArgs | DefaultAddressArgs | ReturnArgs


def _text(raw: Mapping[str, Any], key: str, label: str, *, required: bool = True) -> str:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ArgsError(f"The {label} is missing.")
        return ""
    if not isinstance(value, str | int):
        raise ArgsError(f"The {label} must be text.")
    text = " ".join(str(value).split())
    if len(text) > MAX_FIELD_CHARS:
        raise ArgsError(f"The {label} is longer than {MAX_FIELD_CHARS} characters.")
    return text


def normalise_order_id(value: Any) -> str:
    """`#W1234567` from "#W1234567", "W1234567" or "w1234567"; ArgsError otherwise."""
    text = str(value or "").strip()
    match = ORDER_ID_RE.match(text)
    if not match:
        raise ArgsError("Please give the order number, which looks like #W1234567."
                        if not text else f"'{text}' is not an order number; they look like #W1234567.")
    return f"#W{match.group(1)}"


def normalise_country(value: str, rules: PolicyRules) -> str:
    """The stored spelling ("USA") for any US alias; other countries as given."""
    return rules.country if value.lower().strip() in rules.country_aliases else value


def parse_address(raw: Any, rules: PolicyRules) -> Address:
    """A complete address from `{address1, address2?, city, state, zip, country?}`.

    The country defaults to the US. US addresses need a known two-letter state and a 5-digit
    (or ZIP+4) zip code; a non-US address parses, and `check_address_country` refuses it with
    the delivery policy's reason.
    """
    if not isinstance(raw, Mapping):
        raise ArgsError("The address must have a street, city, state and zip code.")
    country = normalise_country(_text(raw, "country", "country", required=False) or rules.country, rules)
    address1 = _text(raw, "address1", "street address")
    address2 = _text(raw, "address2", "apartment or suite", required=False)
    city = _text(raw, "city", "city")
    state = _text(raw, "state", "state")
    zip_code = _text(raw, "zip", "zip code")
    if country == rules.country:
        state = state.upper()
        if state not in _us_states():
            raise ArgsError(f"'{state}' is not a US state; use the two-letter code, such as NY.")
        if not ZIP_RE.match(zip_code):
            raise ArgsError(f"'{zip_code}' is not a US zip code; it has 5 digits, such as 10083.")
    return Address(address1=address1, address2=address2, city=city, state=state, zip=zip_code,
                   country=country)


def _reason(raw: Mapping[str, Any], rules: PolicyRules) -> str:
    choices = " or ".join(f"'{r}'" for r in rules.cancel_reasons)
    value = " ".join(str(raw.get("reason") or "").lower().split())
    if not value:
        raise ArgsError(f"Please tell me why you are cancelling: {choices}.")
    if value not in rules.cancel_reasons:
        raise ArgsError(f"The cancellation reason must be {choices}.")
    return value


def _item_ids(raw: Mapping[str, Any]) -> tuple[str, ...]:
    value = raw.get("item_ids")
    if value is None:
        return ()
    if isinstance(value, str | int):
        value = [value]
    if not isinstance(value, Sequence) or len(value) > MAX_ITEMS:
        raise ArgsError(f"The items to return must be a list of at most {MAX_ITEMS} item ids.")
    ids = [str(v).strip() for v in value]
    bad = [i for i in ids if not ITEM_ID_RE.match(i)]
    if bad:
        raise ArgsError(f"'{bad[0]}' is not an item id.")
    return tuple(sorted(ids))


def _item_request(raw: Mapping[str, Any]) -> ItemRequest:
    """The customer's own words for the items (`items_text`) and the catalogue products found in
    them (`product_ids`); both optional."""
    text = raw.get("items_text")
    products = raw.get("product_ids") or []
    if isinstance(products, str | int):
        products = [products]
    if not isinstance(products, Sequence) or len(products) > MAX_ITEMS:
        raise ArgsError(f"The products to return must be a list of at most {MAX_ITEMS} product ids.")
    words = " ".join(str(text).split())[:MAX_REQUEST_CHARS] if isinstance(text, str) else ""
    return ItemRequest(text=words, product_ids=tuple(str(p).strip() for p in products if str(p).strip()))


def parse_args(action: ActionName, raw: Mapping[str, Any], rules: PolicyRules) -> ActionArgs:
    """Typed, normalised arguments for `action`; ArgsError with a readable message otherwise."""
    if not isinstance(raw, Mapping):
        raise ArgsError("The action's arguments must be an object.")
    if action is ActionName.UPDATE_DEFAULT_ADDRESS:
        return DefaultAddressArgs(address=parse_address(raw.get("address"), rules))
    order_id = normalise_order_id(raw.get("order_id"))
    if action is ActionName.CANCEL_ORDER:
        return CancelArgs(order_id=order_id, reason=_reason(raw, rules))
    if action is ActionName.CHANGE_ORDER_ADDRESS:
        return OrderAddressArgs(order_id=order_id, address=parse_address(raw.get("address"), rules))
    method = raw.get("payment_method_id")
    return ReturnArgs(order_id=order_id, item_ids=_item_ids(raw),
                      payment_method_id=str(method).strip() if method else None, named=_item_request(raw))


def args_dict(args: ActionArgs) -> dict[str, Any]:
    """The normalised arguments as plain data (what the idempotency key is derived from)."""
    if isinstance(args, DefaultAddressArgs):
        return {"address": args.address.as_dict()}
    if isinstance(args, OrderAddressArgs):
        return {"order_id": args.order_id, "address": args.address.as_dict()}
    if isinstance(args, CancelArgs):
        return {"order_id": args.order_id, "reason": args.reason}
    return {"order_id": args.order_id, "item_ids": list(args.item_ids),
            "payment_method_id": args.payment_method_id}


# ----------------------------------------------------------------------------------- facts
@dataclass(frozen=True)
class PaymentMethod:
    payment_method_id: str
    source: str
    brand: str | None = None
    last_four: str | None = None
    balance: Decimal | None = None

    @property
    def is_gift_card(self) -> bool:
        return self.source == "gift_card"

    def label(self) -> str:
        """How the customer knows it: "your Mastercard ending 1020", "your gift card (gift_card_1)"."""
        if self.source == "credit_card":
            brand = self.brand.title() if self.brand else "credit card"
            return f"your {brand} ending {self.last_four}" if self.last_four else f"your {brand}"
        if self.source == "paypal":
            return f"your PayPal account ({self.payment_method_id})"
        if self.is_gift_card:
            return f"your gift card ({self.payment_method_id})"
        return f"your {self.source.replace('_', ' ')} ({self.payment_method_id})"

    @classmethod
    def from_graph(cls, props: Mapping[str, Any]) -> PaymentMethod:
        balance = props.get("balance")
        return cls(payment_method_id=str(props["payment_method_id"]), source=str(props.get("source") or ""),
                   brand=props.get("brand"), last_four=props.get("last_four"),
                   balance=None if balance is None else money(balance))


@dataclass(frozen=True)
class OrderLine:
    line_id: str
    item_id: str
    name: str
    price: Decimal
    option_text: str
    delivered_at: datetime | None
    product_id: str = ""

    def label(self) -> str:
        """`Water Bottle (capacity: 1000ml, color: blue)`."""
        return f"{self.name} ({self.option_text})" if self.option_text else self.name


@dataclass(frozen=True)
class Transaction:
    transaction_id: str
    seq: int
    type: str
    amount: Decimal
    payment_method_id: str


def parse_instant(value: Any) -> datetime | None:
    """An ISO-8601 UTC string from the graph ("2024-06-01T11:35:00Z") as an aware datetime."""
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


@dataclass(frozen=True)
class OrderFacts:
    """One order of the customer, as the policy needs it (read from the graph by `queries`)."""

    customer_id: str
    order_id: str
    status: str
    total: Decimal
    ship_to: Address | None
    lines: tuple[OrderLine, ...]
    transactions: tuple[Transaction, ...]
    payment_methods: tuple[PaymentMethod, ...]

    @classmethod
    def from_graph(cls, facts: Mapping[str, Any]) -> OrderFacts:
        order = facts["order"]
        return cls(
            customer_id=str(facts["customer_id"]), order_id=str(order["order_id"]),
            status=str(order.get("status") or ""), total=money(order.get("total") or 0),
            ship_to=Address.from_graph(facts.get("ship_to") or {}),
            lines=tuple(OrderLine(line_id=str(line["line_id"]), item_id=str(line["item_id"]),
                                  name=str(line.get("name") or ""), price=money(line.get("price") or 0),
                                  option_text=str(line.get("option_text") or ""),
                                  delivered_at=parse_instant(line.get("delivered_at")),
                                  product_id=str(line.get("product_id") or ""))
                        for line in facts.get("lines") or []),
            transactions=tuple(Transaction(transaction_id=str(t["transaction_id"]), seq=int(t["seq"]),
                                           type=str(t["type"]), amount=money(t["amount"]),
                                           payment_method_id=str(t["payment_method_id"]))
                               for t in facts.get("transactions") or []),
            payment_methods=tuple(PaymentMethod.from_graph(m) for m in facts.get("payment_methods") or []),
        )

    @property
    def paid_total(self) -> Decimal:
        """What the customer has paid and not yet been refunded."""
        paid = sum((t.amount for t in self.transactions if t.type == "payment"), Decimal(0))
        refunded = sum((t.amount for t in self.transactions if t.type == "refund"), Decimal(0))
        return paid - refunded

    @property
    def original_payment_method(self) -> PaymentMethod | None:
        """The payment method of the order's first payment, if it is still on the account."""
        first = next((t for t in self.transactions if t.type == "payment"), None)
        return self.payment_method(first.payment_method_id) if first else None

    @property
    def next_transaction_seq(self) -> int:
        return max((t.seq for t in self.transactions), default=0) + 1

    def payment_method(self, payment_method_id: str) -> PaymentMethod | None:
        return next((m for m in self.payment_methods if m.payment_method_id == payment_method_id), None)

    def item_list(self) -> str:
        """`Water Bottle (item 6469567736), Office Chair (item 8426249116)` for messages."""
        return ", ".join(f"{line.name} (item {line.item_id})" for line in self.lines)


@dataclass(frozen=True)
class CustomerFacts:
    customer_id: str
    default_address: Address | None

    @classmethod
    def from_graph(cls, facts: Mapping[str, Any]) -> CustomerFacts:
        return cls(customer_id=str(facts["customer_id"]),
                   default_address=Address.from_graph(facts.get("default_address") or {}))


# ---------------------------------------------------------------------------------- checks
def _rule(message: str) -> Violation:
    return Violation(ErrorType.BUSINESS_RULE_VIOLATION, message)


def check_address_country(address: Address, rules: PolicyRules) -> Violation | None:
    """We deliver only in the US (shipping-delivery.md), for orders and the default address."""
    if address.country != rules.country:
        return _rule(rules.message("address", "not_us"))
    return None


def check_cancel(order: OrderFacts, rules: PolicyRules) -> Violation | None:
    """Only a `pending` order can be cancelled (cancellations.md)."""
    if order.status == rules.status("pending"):
        return None
    return _rule(rules.message("cancel_order", order.status, order_id=order.order_id, status=order.status))


def check_order_address(order: OrderFacts, address: Address, rules: PolicyRules) -> Violation | None:
    """Only a `pending` order's address can change, and only to a US address."""
    if order.status != rules.status("pending"):
        return _rule(rules.message("change_order_address", order.status, order_id=order.order_id,
                                   status=order.status))
    return check_address_country(address, rules)


def select_named_lines(order: OrderFacts, named: ItemRequest) -> tuple[OrderLine, ...] | Violation:
    """The order lines the customer named in their own words ("the skateboard", "everything").
    Nothing named, or words that fit no line, is a VALIDATION violation listing the order's items;
    words that fit several lines equally ("the kettle") ask which of those."""
    match = match_lines(order.lines, named.text, named.product_ids) if named else None
    unclear = [x for x in match.ambiguous if isinstance(x, OrderLine)] if match is not None else []
    if unclear:
        options = ", ".join(f"{x.label()} (item {x.item_id})" for x in unclear)
        return Violation(ErrorType.VALIDATION, f"Which one of order {order.order_id} do you want to "
                                               f"return: {options}?")
    if match is None or not match.lines:
        return Violation(ErrorType.VALIDATION, f"Which items of order {order.order_id} do you want to "
                                               f"return? Its items are: {order.item_list()}.")
    return tuple(sorted((x for x in match.lines if isinstance(x, OrderLine)), key=lambda x: x.line_id))


def select_return_lines(order: OrderFacts, item_ids: Sequence[str],
                        named: ItemRequest | None = None) -> tuple[OrderLine, ...] | Violation:
    """The order lines the item ids name (one line per id; an id listed twice takes two lines
    of that item); without ids, the lines the customer's words name (`select_named_lines`).
    A missing or unknown id is a VALIDATION violation listing the order's items."""
    if not item_ids:
        return select_named_lines(order, named or ItemRequest())
    chosen: list[OrderLine] = []
    for item_id in item_ids:
        line = next((x for x in order.lines if x.item_id == item_id and x not in chosen), None)
        if line is None:
            held = sum(1 for x in order.lines if x.item_id == item_id)
            problem = (f"has no item {item_id}" if held == 0
                       else f"has only {held} of item {item_id}")
            return Violation(ErrorType.VALIDATION, f"Order {order.order_id} {problem}. "
                                                   f"Its items are: {order.item_list()}.")
        chosen.append(line)
    return tuple(sorted(chosen, key=lambda x: x.line_id))


def within_return_window(delivered_at: datetime, now: datetime, rules: PolicyRules) -> bool:
    """True while `now` is at most `return_window_days` calendar days (UTC) after delivery."""
    return _utc_date(now).toordinal() - _utc_date(delivered_at).toordinal() <= rules.return_window_days


def _utc_date(moment: datetime) -> date:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).date()


def resolve_refund_method(order: OrderFacts, requested: str | None,
                          rules: PolicyRules) -> PaymentMethod | Violation:
    """The return's refund destination: the original payment method (the default) or an existing
    gift card of the customer (returns-refunds.md)."""
    original = order.original_payment_method
    if requested is None or (original is not None and requested == original.payment_method_id):
        if original is None:
            return _rule(f"I cannot find the payment method order {order.order_id} was paid with. "
                         "A human agent can help.")
        return original
    method = order.payment_method(requested)
    if method is not None and method.is_gift_card:
        return method
    shown = method.label().removeprefix("your ") if method else requested
    return _rule(rules.message("return_items", "refund_method", order_id=order.order_id, method=shown))


def check_return_status(order: OrderFacts, rules: PolicyRules) -> Violation | None:
    """Only a `delivered` order can be returned (returns-refunds.md)."""
    if order.status == rules.status("delivered"):
        return None
    return _rule(rules.message("return_items", order.status, order_id=order.order_id, status=order.status))


def check_return_window(order: OrderFacts, lines: Sequence[OrderLine], now: datetime,
                        rules: PolicyRules) -> Violation | None:
    """Every returned line delivered, at most `return_window_days` before `now`."""
    for line in lines:
        if line.delivered_at is None:
            return _rule(rules.message("return_items", "no_delivery_date", order_id=order.order_id,
                                       item=line.name))
        if not within_return_window(line.delivered_at, now, rules):
            return _rule(rules.message("return_items", "window", order_id=order.order_id, item=line.name,
                                       delivered_on=_utc_date(line.delivered_at).strftime("%B %-d, %Y")))
    return None
