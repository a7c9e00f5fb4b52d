"""What the seven customer actions share: their names, the store's policy as data, the facts an
action is decided on, the argument parsers and the checks more than one action makes. Pure; no
I/O except reading `policy.yaml` once, on first use.

Each action's own arguments, checks and effect are in its module in `csagent.actions.kinds`
(`cancel_order`, `return_items`, ...). The rules are the store's policy (tau-retail's
`policy.md`, restated for customers in the knowledge base, `knowledge/docs/`), checked exactly
as the benchmark's reference tools check them, and nothing more.

Every failed check is a `Violation` carrying the `ErrorType` the tool reports (VALIDATION for an
argument the customer can correct, BUSINESS_RULE_VIOLATION for a rule) and a sentence the
customer can read.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from importlib import resources
from typing import Any

from csagent import yamlio
from csagent.domain.actions import ActionName
from csagent.domain.models import ErrorType

CENT = Decimal("0.01")
ORDER_ID_RE = re.compile(r"^#?W(\d{7})$", re.IGNORECASE)
ITEM_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
ZIP_RE = re.compile(r"^\d{5}(?:-\d{4})?$")
MAX_FIELD_CHARS = 100
MAX_ITEMS = 50


# --------------------------------------------------------------------------------------- rules
@dataclass(frozen=True)
class PolicyRules:
    """The data in `policy.yaml`: limits, fixed lists and the customer-facing messages."""

    cancel_reasons: tuple[str, ...]
    country: str
    country_aliases: frozenset[str]
    refund_timing: Mapping[str, str]
    statuses: Mapping[str, str]
    messages: Mapping[str, Mapping[str, str]]
    max_listed_options: int = 12
    #: The refund timings as a Chinese reply says them (`refund_timing_for(source, "zh")`).
    refund_timing_zh: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PolicyRules:
        return cls(
            cancel_reasons=tuple(str(r) for r in data["cancel_reasons"]),
            country=str(data["country"]),
            country_aliases=frozenset(str(a).lower() for a in data["country_aliases"]),
            refund_timing=dict(data["refund_timing"]),
            statuses=dict(data["statuses"]),
            messages={k: dict(v) for k, v in data["messages"].items()},
            max_listed_options=int(data.get("max_listed_options", 12)),
            refund_timing_zh=dict(data.get("refund_timing_zh") or {}),
        )

    def status(self, name: str) -> str:
        """The stored spelling of a named status ("return_requested" -> "return requested")."""
        return self.statuses[name]

    def message(self, group: str, key: str, **fields: Any) -> str:
        """A customer-facing sentence from `messages[group][key]` (or the group's `default`)."""
        templates = self.messages[group]
        template = templates.get(key) or templates["default"]
        return template.format(**fields)

    def refund_timing_for(self, source: str, lang: str = "en") -> str:
        """When a refund to a payment method of this source appears ("immediately", ...), in the
        reply's language; "" for a language the policy has no words in."""
        timing = self.refund_timing_zh if lang == "zh" else self.refund_timing if lang == "en" else {}
        return timing.get(source) or timing.get("default", "")


@lru_cache(maxsize=1)
def load_rules() -> PolicyRules:
    """The rules from `policy.yaml` beside this module (read once, on first use)."""
    rules = yamlio.load_file(resources.files("csagent.actions").joinpath("policy.yaml"))
    return PolicyRules.from_mapping(rules)


@lru_cache(maxsize=1)
def _us_states() -> frozenset[str]:
    # One list of state codes for the whole assistant: the entity extractor's.
    from csagent.nlp.entities.words import terms

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
    """`$1234.50`: written as every other reply writes an amount, and as the store's data holds it."""
    return f"${amount:.2f}"


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


def id_list(raw: Mapping[str, Any], key: str, what: str) -> tuple[str, ...]:
    """The item ids under `key`, in the order given; ArgsError for anything that is not one."""
    value = raw.get(key)
    if value is None:
        return ()
    if isinstance(value, str | int):
        value = [value]
    if not isinstance(value, Sequence) or len(value) > MAX_ITEMS:
        raise ArgsError(f"The {what} must be a list of at most {MAX_ITEMS} item ids.")
    ids = [str(v).strip() for v in value]
    bad = [i for i in ids if not ITEM_ID_RE.match(i)]
    if bad:
        raise ArgsError(f"'{bad[0]}' is not an item id.")
    return tuple(ids)


def parse_payment_method_id(raw: Mapping[str, Any], purpose: str) -> str:
    """The payment method the customer named (`payment_method_id`); ArgsError saying what it is
    for (`purpose`) when there is none."""
    value = raw.get("payment_method_id")
    text = str(value).strip() if value not in (None, "") else ""
    if not text:
        raise ArgsError(f"Please tell me which of your payment methods {purpose}.")
    if len(text) > MAX_FIELD_CHARS:
        raise ArgsError(f"'{text[:MAX_FIELD_CHARS]}...' is not a payment method.")
    return text


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

    def listed(self) -> str:
        """For a list of the customer's methods: "Visa ending 4242 (credit_card_1)",
        "gift card (gift_card_1, balance $20.00)"."""
        if self.is_gift_card:
            balance = f", balance {usd(self.balance)}" if self.balance is not None else ""
            return f"gift card ({self.payment_method_id}{balance})"
        if self.source == "credit_card":
            return f"{self.label().removeprefix('your ')} ({self.payment_method_id})"
        return self.label().removeprefix("your ")

    @classmethod
    def from_graph(cls, props: Mapping[str, Any]) -> PaymentMethod:
        balance = props.get("balance")
        return cls(payment_method_id=str(props["payment_method_id"]), source=str(props.get("source") or ""),
                   brand=props.get("brand"), last_four=props.get("last_four"),
                   balance=None if balance is None else money(balance))


def option_values(options_json: str | None) -> str:
    """`black, fabric`: an item's option values in the dataset's order, from its `options_json`. A
    value that says nothing without its option's name ("yes", "no", "none") comes with it:
    `11, leather, waterproof: no`."""
    try:
        options = json.loads(options_json or "{}")
    except ValueError:
        return ""
    if not isinstance(options, dict):
        return ""
    return ", ".join(f"{k}: {v}" if str(v).lower() in _BARE_VALUES else str(v) for k, v in options.items())


#: Option values that mean nothing on their own.
_BARE_VALUES = frozenset({"yes", "no", "none", "true", "false"})


@dataclass(frozen=True)
class OrderLine:
    line_id: str
    item_id: str
    name: str
    price: Decimal
    option_text: str
    delivered_at: datetime | None
    product_id: str = ""
    options_json: str = "{}"

    def label(self) -> str:
        """`Water Bottle (capacity: 1000ml, color: blue)`."""
        return f"{self.name} ({self.option_text})" if self.option_text else self.name

    def values(self) -> str:
        """`1000ml, blue`: the option values alone."""
        return option_values(self.options_json)


@dataclass(frozen=True)
class Variant:
    """An item of the catalogue: one option set of a product, its price and availability."""

    item_id: str
    product_id: str
    price: Decimal
    available: bool
    option_text: str = ""
    options_json: str = "{}"
    product_name: str = ""

    def values(self) -> str:
        """`blue, leather`: the option values alone."""
        return option_values(self.options_json)

    @classmethod
    def from_graph(cls, props: Mapping[str, Any]) -> Variant:
        return cls(item_id=str(props["item_id"]), product_id=str(props.get("product_id") or ""),
                   price=money(props.get("price") or 0), available=bool(props.get("available")),
                   option_text=str(props.get("option_text") or ""),
                   options_json=str(props.get("options_json") or "{}"),
                   product_name=str(props.get("product_name") or ""))


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
    """One order of the customer, as the policy needs it (read from the graph by `queries`):
    with `variants`, every option of the products its lines hold."""

    customer_id: str
    order_id: str
    status: str
    total: Decimal
    ship_to: Address | None
    lines: tuple[OrderLine, ...]
    transactions: tuple[Transaction, ...]
    payment_methods: tuple[PaymentMethod, ...]
    variants: tuple[Variant, ...] = ()

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
                                  product_id=str(line.get("product_id") or ""),
                                  options_json=str(line.get("options_json") or "{}"))
                        for line in facts.get("lines") or []),
            transactions=tuple(Transaction(transaction_id=str(t["transaction_id"]), seq=int(t["seq"]),
                                           type=str(t["type"]), amount=money(t["amount"]),
                                           payment_method_id=str(t["payment_method_id"]))
                               for t in facts.get("transactions") or []),
            payment_methods=tuple(PaymentMethod.from_graph(m) for m in facts.get("payment_methods") or []),
            variants=tuple(Variant.from_graph(v) for v in facts.get("variants") or []),
        )

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

    def line_for(self, item_id: str) -> OrderLine | None:
        """The first line holding `item_id` (the one the reference takes an item's price from)."""
        return next((line for line in self.lines if line.item_id == item_id), None)

    def variant(self, item_id: str) -> Variant | None:
        return next((v for v in self.variants if v.item_id == item_id), None)

    def available_variants(self, product_id: str) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.product_id == product_id and v.available)

    def item_list(self) -> str:
        """`Water Bottle (item 6469567736), Office Chair (item 8426249116)` for messages."""
        return ", ".join(f"{line.name} (item {line.item_id})" for line in self.lines)

    def method_list(self) -> str:
        """The customer's payment methods, for messages."""
        return ", ".join(m.listed() for m in self.payment_methods) or "none"


@dataclass(frozen=True)
class CustomerFacts:
    customer_id: str
    default_address: Address | None

    @classmethod
    def from_graph(cls, facts: Mapping[str, Any]) -> CustomerFacts:
        return cls(customer_id=str(facts["customer_id"]),
                   default_address=Address.from_graph(facts.get("default_address") or {}))


# ---------------------------------------------------------------------------------- checks
def rule_violation(message: str) -> Violation:
    """A BUSINESS_RULE_VIOLATION: the policy says no, for the reason `message` gives."""
    return Violation(ErrorType.BUSINESS_RULE_VIOLATION, message)


def missing_method(order: OrderFacts, payment_method_id: str) -> Violation:
    """A payment-history entry of the order names a method no longer on the account."""
    return rule_violation(f"I cannot find the payment method {payment_method_id} that order {order.order_id} "
                          "was paid with on your account. A human agent can help.")


def check_status(action: ActionName, order: OrderFacts, allowed: str, rules: PolicyRules) -> Violation | None:
    """The order's status must be exactly `allowed` (a status name in `policy.yaml`); otherwise
    the action's message for the order's status says why and what can be done instead."""
    if order.status == rules.status(allowed):
        return None
    return rule_violation(rules.message(action.value, order.status, order_id=order.order_id,
                                        status=order.status))


def check_address_country(address: Address, rules: PolicyRules) -> Violation | None:
    """We deliver only in the US (shipping-delivery.md), for orders and the default address."""
    if address.country != rules.country:
        return rule_violation(rules.message("address", "not_us"))
    return None


def check_item_counts(order: OrderFacts, item_ids: Sequence[str], rules: PolicyRules) -> Violation | None:
    """Every id held by the order at least as often as it is listed (duplicates counted as the
    reference counts them); a VALIDATION violation listing the order's items otherwise."""
    held = Counter(line.item_id for line in order.lines)
    for item_id, wanted in Counter(item_ids).items():
        if wanted > held[item_id]:
            key = "not_in_order" if held[item_id] == 0 else "too_few"
            return Violation(ErrorType.VALIDATION, rules.message(
                "items", key, order_id=order.order_id, item_id=item_id, held=held[item_id],
                items=order.item_list()))
    return None


def resolve_payment_method(order: OrderFacts, payment_method_id: str,
                           rules: PolicyRules) -> PaymentMethod | Violation:
    """One of the customer's payment methods; a VALIDATION violation listing them otherwise."""
    method = order.payment_method(payment_method_id)
    if method is None:
        return Violation(ErrorType.VALIDATION, rules.message("payment", "not_yours", method=payment_method_id,
                                                             methods=order.method_list()))
    return method


def check_gift_card_covers(method: PaymentMethod, amount: Decimal, what: str,
                           rules: PolicyRules) -> Violation | None:
    """A gift card pays only what its balance covers (`balance < amount` refuses, as the reference)."""
    balance = method.balance or Decimal(0)
    if method.is_gift_card and balance < amount:
        return rule_violation(rules.message("payment", "gift_card_short",
                                            method=method.label().removeprefix("your "),
                                            balance=usd(balance), what=what, amount=usd(amount)))
    return None
