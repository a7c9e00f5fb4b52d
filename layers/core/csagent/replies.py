"""Reply composition for task results: what the summariser says for each task, in the
customer's language. Wording lives in the template files of `csagent.nlp.templates`; this
module only chooses a template and fills it from a tool's data (its model, `csagent.domain.tool_data`;
a catalogue template's rows as the template's row model, `csagent.domain.template_rows`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, TypeVar

from csagent.domain.models import ErrorType, Task, TaskResult, TaskStatus, ToolResult
from csagent.domain.task_args import CustomerActionArgs
from csagent.domain.template_rows import (
    OPTION_KEYS_SEPARATOR,
    AddressColumns,
    CatalogueRow,
    CategoryRow,
    EligibilityRow,
    OptionKeyRow,
    OptionValueRow,
    OrderAddressRow,
    OrderItemRow,
    OrderOverviewRow,
    OrderPaymentRow,
    OrderRow,
    OrderTotalRow,
    PaymentMethodRow,
    ProductAvailabilityRow,
    ProductListingRow,
    ProductPriceRow,
    ProductRow,
    ProfileRow,
    RefundColumns,
    RefundStatusRow,
    SpendingRow,
    StatusCountRow,
    VariantRow,
)
from csagent.domain.tool_data import (
    ActionDoneData,
    ActionProposedData,
    CatalogueData,
    Citation,
    KnowledgeData,
    ProductNote,
    RowsData,
    ToolData,
)
from csagent.nlp.replies import join_items, render, render_phrase

logger = logging.getLogger(__name__)

# Error types whose tool message is written for the customer (the others stay internal)...
READABLE_ERRORS = frozenset({"no_results", "validation", "business_rule_violation", "permission_denied"})
# ...by these tools only: their messages are customer sentences (a catalogue template's
# `empty_message`, an action's policy reason). Any other tool's message (a search's diagnostics,
# an injected fault) stays internal, and the reply says it in the template's words.
CUSTOMER_WORDED_TOOLS = frozenset({"predefined_cypher", "customer_actions"})
# The next step the customer is offered after a failure, by error type.
NEXT_STEP = {
    "timeout": "next_retry_soon",
    "transient": "next_retry_soon",
    "no_results": "next_check_details",
    "validation": "next_check_details",
    "permission_denied": "next_own_orders_only",
    "business_rule_violation": "next_human",
    "low_confidence": "next_rephrase",
}
MAX_LISTED = 5


def _date(value: Any) -> str:
    return str(value or "")[:10]


def _status(value: Any, lang: str) -> str:
    """An order status in the customer's words and language (the stored value otherwise)."""
    name = f"status_{value}"
    return render(name, lang) if _has_template(name, lang) else str(value or "")


def _order_overview(data: CatalogueData, lang: str) -> str:
    row = data.order_overview or OrderOverviewRow()
    order_id, status = row.order_id or "", row.order_status or ""
    shipped = [s for s in row.shipments if s.tracking_id]
    tracking = ", ".join(s.tracking_id for s in shipped if s.tracking_id)
    carrier = ", ".join(dict.fromkeys(s.carrier for s in shipped if s.carrier))
    refunds = [r for r in row.refunds if r.amount is not None]
    if status == "cancelled" and refunds:
        # "where is my money?": what was refunded, and to which payment method.
        text = render("order_status_cancelled_refunded", lang, order_id=order_id, refunds=join_items(
            [render("refund_to", lang, amount=_money(r.amount), method=r.payment_method or "")
             for r in refunds], lang))
    elif status == "cancelled":
        text = render("order_status_cancelled", lang, order_id=order_id)
    elif status == "delivered" and shipped:
        text = render("order_status_delivered_tracking", lang, order_id=order_id, carrier=carrier,
                      tracking_number=tracking,
                      delivered_on=max(_date(s.delivered_at) for s in shipped) or "-")
    elif not shipped:
        text = render("order_status_no_tracking", lang, order_id=order_id, status=_status(status, lang))
    else:
        text = render("order_status", lang, order_id=order_id, status=_status(status, lang), carrier=carrier,
                      tracking_number=tracking,
                      estimate=max(_date(s.estimated_delivery) for s in shipped) or "-")
    address = row.address
    if address is not None and address.address1 and status != "cancelled":
        # "where is it going?" is part of "where is my order?": the address it ships (or went) to.
        name = "order_status_delivered_to" if status == "delivered" else "order_status_ships_to"
        text += " " + render(name, lang, address=_address_line(address))
    names = [i.name for i in row.items if i.name]
    if names:
        text += " " + render("order_status_in_order", lang, items=join_items(names, lang))
    return text


def _item_line(row: OrderItemRow) -> str:
    """ "Yoga Mat (thickness: 6mm, color: pink, $94.38)": an order line, option by option."""
    if not row.options:
        return str(row.product_name)
    options = ", ".join(f"{k}: {v}" for k, v in row.options.items())
    price = f", {_money(row.price)}" if row.price is not None else ""
    return f"{row.product_name} ({options}{price})"


def _order_items(data: CatalogueData, lang: str) -> str:
    rows = data.rows_as(OrderItemRow)
    items = [_item_line(r) for r in rows]
    order_id = (rows[0].order_id or "") if rows else ""
    prices = [Decimal(str(r.price)) for r in rows if r.price is not None]
    if len(rows) > 1 and len(prices) == len(rows):
        # "what's in it and what did it come to?": the sum of the lines, beside the lines.
        return render("order_items_total", lang, order_id=order_id, items=join_items(items, lang),
                      total=f"${sum(prices, Decimal(0)):.2f}")
    return render("order_items", lang, order_id=order_id, items=join_items(items, lang))


def _orders_with_product(data: CatalogueData, lang: str) -> str:
    """ "Your orders with it: #W1 (processed (shipped), 2024-04-25): Tea Kettle (material: glass, ...,
    $94.68); #W2 (pending, 2024-02-21): ...": each order holding the product, with its status (in the
    customer's words) and date and the customer's items of it."""
    rows = data.rows_as(OrderItemRow)
    by_order: dict[str, list[OrderItemRow]] = {}
    for row in rows:
        by_order.setdefault(str(row.order_id or ""), []).append(row)
    orders = [f"{order_id} ({_status(lines[0].status, lang)}, {_date(lines[0].created_at)}): "
              + join_items([_item_line(r) for r in lines], lang) for order_id, lines in by_order.items()]
    return render("orders_with_product", lang, orders="; ".join(orders))


def _own_items(data: CatalogueData, product_ids: Sequence[str], lang: str,
               asked: Sequence[Mapping[str, Any]] = ()) -> str:
    """ "Yours, from order #W1: Yoga Mat (thickness: 6mm, material: natural rubber, color: pink,
    $94.38).": the customer's own items of the products a question is about, option by option and
    what each cost, after the answer to what the question asks of them (`_own_options_answer`);
    empty when the order holds none of them."""
    wanted = set(product_ids)
    rows = [r for r in data.rows_as(OrderItemRow) if r.product_id in wanted]
    if not rows:
        return ""
    items = [_item_line(r) for r in rows]
    order_id = rows[0].order_id or ""
    answers = [_own_options_answer(a, order_id, lang) for a in asked
               if any(r.product_id == a.get("product_id") for r in rows)]
    return " ".join([*answers, render("own_items", lang, order_id=order_id, items=join_items(items, lang))])


def _own_options_answer(asked: Mapping[str, Any], order_id: str, lang: str) -> str:
    """ "No, your Hiking Boots from order #W1 are not waterproof.", "Your Grill from order #W1 has
    type: electric, not gas.": what a question asked of the customer's own item ("r my hiking boots
    waterprof??", "it is gas or electric?"), from the item's own option. A yes-or-no option is said
    in its everyday word ("waterproof" for water resistance); one value asked is answered yes or no,
    several ("full zip or half?") by the item's value, and not the others."""
    from csagent.grounding.options import yes_no_words

    product, key, own = str(asked["product"]), str(asked["key"]), str(asked["own"])
    values = [str(v) for v in asked.get("asked") or []]
    number = "_plural" if _plural(product) else ""
    fields = {"product": product, "order_id": order_id}
    if own.lower() in ("yes", "no"):
        word = (yes_no_words().get(key.lower()) or [key])[0]
        return render(f"own_option_{own.lower()}{number}", lang, word=word, **fields)
    others = [v for v in values if v.lower() != own.lower()]
    if not others:
        return render(f"own_value_yes{number}", lang, key=key, own=own, **fields)
    name = "own_value_no" if len(values) == 1 else "own_value_is"  # ("it is gas or electric?": not a yes)
    return render(f"{name}{number}", lang, key=key, own=own, asked=join_items(others, lang, "or"), **fields)


def named_items_total(data: CatalogueData, item_ids: Sequence[str], lang: str) -> str:
    """ "Together, Backpack and Pet Bed come to $395.17.": the prices of the items the customer
    named, added as decimals; empty when fewer than two of them are in the rows."""
    named = set(item_ids)
    rows = [r for r in data.rows_as(OrderItemRow) if r.item_id in named and r.price is not None]
    if len(rows) < 2:
        return ""
    total = sum((Decimal(str(r.price)) for r in rows), Decimal(0))
    return render("named_items_total", lang, items=join_items([str(r.product_name) for r in rows], lang),
                  total=f"${total:.2f}")


MAX_OWN_ORDERS = 12


def _customer_orders(data: CatalogueData, lang: str) -> str:
    rows = data.rows_as(OrderRow)
    if not rows:
        return render("order_list_empty", lang)
    # (with what each came to, when the rows say: "which one was the most expensive?", "what does
    # each one come to?")
    # (and what each holds, as the list of orders to choose from says it: "#W1 (Desk Lamp, pending,
    # ...)": "which of my orders haven't shipped?" is answered with what is still to come)
    listed = [f"{r.order_id} ({_held(r.items())}{r.status}, {_date(r.created_at)}"
              + (f", {_money(r.total)})" if r.total is not None else ")") for r in rows]
    # The customer's own orders, every one asked for ("the full list with where each one's at"); a
    # list past `MAX_OWN_ORDERS` ends "and 2 more". Those holding one product, when there are several,
    # say so: it is in separate orders ("charged twice for the bookshelf": two orders, each paid).
    held = set.intersection(*(set(r.items()) for r in rows)) if data.params.get("product_id") else set()
    if len(rows) > 1 and len(held) == 1:
        return render("order_list_with_product", lang, count=len(rows), product=next(iter(held)),
                      orders=_listed(listed, lang, MAX_OWN_ORDERS))
    return render("order_list", lang, orders=_listed(listed, lang, MAX_OWN_ORDERS))


def _held(items: Sequence[str], shown: int = 3) -> str:
    """An order's products, each once, the first `shown` of them ("Grill, Electric Kettle, Coffee
    Maker…, "), as an opening of its entry in a list; "" when the row has none."""
    names = list(dict.fromkeys(str(i) for i in items if i))
    if not names:
        return ""
    return ", ".join(names[:shown]) + ("…" if len(names) > shown else "") + ", "


def _address_line(address: AddressColumns) -> str:
    street = ", ".join(x for x in (address.address1, address.address2) if x)
    place = f"{address.city or ''}, {address.state or ''} {address.zip or ''}, {address.country or ''}"
    return f"{street}, {place}".strip(", ")


def _default_address(data: CatalogueData, lang: str) -> str:
    return render("account_default_address", lang,
                  address=_address_line(data.row_as(AddressColumns) or AddressColumns()))


def _payment_method(row: PaymentMethodRow, lang: str) -> str:
    name = str(row.payment_method or row.source or "")
    if row.source == "credit_card":
        return render("account_credit_card", lang, brand=str(row.brand or "").title(),
                      last_four=row.last_four or "????")
    if row.balance is not None:
        return render("account_gift_card", lang, name=name, balance=_money(row.balance))
    return name


def _payment_methods(data: CatalogueData, lang: str) -> str:
    methods = [_payment_method(r, lang) for r in data.rows_as(PaymentMethodRow)]
    return render("account_payment_methods", lang, methods=_listed(methods, lang))


def _gift_card_balance(data: CatalogueData, lang: str) -> str:
    balances = [_money(r.balance) for r in data.rows_as(PaymentMethodRow)]
    return render("account_gift_card_balance", lang, balances=_listed(balances, lang))


def _customer_profile(data: CatalogueData, lang: str) -> str:
    row = data.row_as(ProfileRow) or ProfileRow()
    name = f"{row.first_name or ''} {row.last_name or ''}".strip()
    return render("account_profile", lang, name=name, email=row.email or "", zip=row.zip or "")


def _total_spent(data: CatalogueData, lang: str) -> str:
    row = data.row_as(SpendingRow) or SpendingRow()
    return render("account_total_spent", lang, total=_money(row.total_spent), orders=row.orders or 0)


def _order_counts(data: CatalogueData, lang: str) -> str:
    rows = data.rows_as(StatusCountRow)
    counts = [f"{r.orders} {_status(r.status, lang)}" for r in rows]
    total = sum(r.orders or 0 for r in rows)
    return render("account_order_counts", lang, total=total, counts=_listed(counts, lang))


def _shipping_address(data: CatalogueData, lang: str) -> str:
    """Where the order goes, and whether it has left yet ("which address is it going to, and has it
    shipped?" is one question about the order's journey)."""
    row = data.row_as(OrderAddressRow) or OrderAddressRow()
    status = row.order_status
    name = {"delivered": "order_shipping_address_delivered", None: "order_shipping_address"}.get(
        status, "order_shipping_address_status")
    return render(name, lang, order_id=row.order_id or "", address=_address_line(row),
                  status=_status(status, lang))


def _order_total(data: CatalogueData, lang: str) -> str:
    row = data.row_as(OrderTotalRow) or OrderTotalRow()
    return render("order_total", lang, order_id=row.order_id or "", total=_money(row.total),
                  paid=_money(row.amount_paid), refunded=_money(row.amount_refunded))


def _order_payments(data: CatalogueData, lang: str) -> str:
    rows = data.rows_as(OrderPaymentRow)
    order_id = (rows[0].order_id or "") if rows else ""
    if len(rows) == 1 and rows[0].type == "payment":
        # "was I charged twice?": one payment on the order is the answer, said as such.
        return render("order_charged_once", lang, order_id=order_id, amount=_money(rows[0].amount),
                      method=rows[0].payment_method or "")
    listed = [f"{r.type} of {_money(r.amount)} ({r.payment_method})" for r in rows]
    # ("why'd yall charge my gift card twice for a digital camera??": the refund beside one of the
    # charges is that order's cancellation, which is said)
    cancelled = bool(rows) and rows[0].order_status == "cancelled"
    return render("order_payments_cancelled" if cancelled else "order_payments", lang, order_id=order_id,
                  payments=join_items(listed, lang))


def _eligibility(kind: str) -> Callable[[CatalogueData, str], str]:
    def describe(data: CatalogueData, lang: str) -> str:
        row = data.row_as(EligibilityRow) or EligibilityRow()
        name = f"{kind}_{'yes' if row.eligible else 'no'}"
        if not row.eligible and str(row.status or "").startswith("pending ("):
            name = f"{kind}_modified"  # "pending (item modified)": changed once, so no more
        elif not row.eligible and row.status == "pending" and _has_template(f"{name}_pending", lang):
            # (a pending order's items can still be changed, once: "would I still be able to change
            # the hose afterwards?")
            name = f"{name}_pending"
        return render(name, lang, order_id=row.order_id or "", status=_status(row.status, lang),
                      address=_address_line(row) if row.address1 else "")
    return describe


def _refund_source(method: str) -> str:
    """The payment source of a refund row's method ("gift card", "PayPal", "visa ending 1234")."""
    lowered = method.lower()
    return "gift_card" if "gift card" in lowered else "paypal" if "paypal" in lowered else "credit_card"


def cancel_refund_preview(data: CatalogueData, lang: str) -> str:
    """ "If you cancelled order #W1, $6758.40 would go back to your gift card at once.": what a
    cancellation asked about, not asked for, would refund, from the order's payments (each
    method's payments less what was refunded to it), with the policy's timing in English."""
    from csagent.actions.policy import load_rules

    rows = data.rows_as(OrderPaymentRow)
    order_id = (rows[0].order_id or "") if rows else ""
    owed: dict[str, Decimal] = {}
    for row in rows:
        method = str(row.payment_method or "").strip()
        sign = {"payment": 1, "refund": -1}.get(str(row.type), 0)
        if method and sign and row.amount is not None:
            owed[method] = owed.get(method, Decimal(0)) + sign * Decimal(str(row.amount))
    lines = []
    for method, amount in owed.items():
        if amount <= 0:
            continue
        timing = load_rules().refund_timing_for(_refund_source(method), lang)
        lines.append(render("cancel_refund_preview", lang, order_id=order_id, amount=f"${amount:.2f}",
                            method=method, timing=timing))
    return " ".join(lines)


def return_refund_preview(data: CatalogueData, lang: str) -> str:
    """ "If you returned items of order #W1, the refund would go back to your PayPal account within 5
    to 7 business days, or to a gift card you already have if you prefer.": where a return asked
    about, not asked for, would send the money (the policy: the original payment method or an
    existing gift card), from the order's payments, with the policy's timing."""
    from csagent.actions.policy import load_rules

    rows = data.rows_as(OrderPaymentRow)
    order_id = (rows[0].order_id or "") if rows else ""
    paid = [m for m in dict.fromkeys(str(r.payment_method or "").strip() for r in rows
                                     if str(r.type) == "payment") if m]
    if len(paid) != 1:
        return ""
    method = paid[0]
    source = _refund_source(method)
    name = "return_refund_preview_gift_card" if source == "gift_card" else "return_refund_preview"
    return render(name, lang, order_id=order_id, method=method,
                  timing=load_rules().refund_timing_for(source, lang))


def _refund_timing(refund: RefundColumns, lang: str) -> str:
    """Where one refund went and when it shows there, by the store's policy (actions/policy.yaml:
    a gift card at once, a card or PayPal within 5 to 7 business days)."""
    from csagent.actions.policy import load_rules

    method = str(refund.payment_method or "").strip()
    if not method:
        return ""
    timing = load_rules().refund_timing_for(_refund_source(method), lang)
    if not timing:  # a language the policy's timings are not written in: where it went
        return render("refund_went_to", lang, method=method)
    return render("refund_timing", lang, method=method, timing=timing)


#: Order statuses whose refund is still to come: a return or an exchange has been requested.
REFUND_TO_COME = frozenset({"return requested", "exchange requested"})


def _refund_status(data: CatalogueData, lang: str) -> str:
    row = data.row_as(RefundStatusRow) or RefundStatusRow()
    if not row.refund_count:
        none = render("refund_none", lang, order_id=row.order_id or "")
        if row.order_status in REFUND_TO_COME:
            # "when will I see the money?" after a return: not issued yet, and how long it takes
            # once it is, by the store's policy.
            from csagent.actions.policy import load_rules

            rules = load_rules()
            return f"{none} " + render("refund_to_come", lang, status=row.order_status,
                                       gift_card=rules.refund_timing_for("gift_card", lang),
                                       default=rules.refund_timing_for("credit_card", lang))
        return none
    timings = [_refund_timing(r, lang) for r in row.refunds]
    items = list(dict.fromkeys(i for i in row.items if i))  # what the money was for
    return render("refund_status_of_items" if items else "refund_status", lang,
                  order_id=row.order_id or "", items=items,
                  amount=f"${row.refunded_total or 0:.2f}",
                  refund_status=render("refund_issued", lang),
                  timing=" ".join(dict.fromkeys(t for t in timings if t))).strip()


def _rows_summary(data: RowsData, lang: str) -> str:
    """Any other catalogue template, or a generated query: its rows, compactly ("name: value" pairs)."""
    rows = data.all_rows
    shown = ["; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in r.items() if v not in (None, "", []))
             for r in rows[:MAX_LISTED]]
    if len(rows) > MAX_LISTED:
        shown.append(render("catalogue_more", lang, count=len(rows) - MAX_LISTED))
    return render("catalogue_rows", lang, summary=" | ".join(shown))


# -- catalogue answers, worded for the customer -------------------------------------------------
#: Options named by their value alone ("in wood", "in blue"); any other is named with its key
#: ("in size 11", "in resolution 5k").
BARE_VALUE_KEYS = frozenset({"color", "colour", "material"})
#: Option values that mean nothing without their option's name ("waterproof: no").
YES_NO = frozenset({"yes", "no"})
#: How many products of a many-row catalogue answer are described ("watch" -> Smart Watch, ...).
MAX_PRODUCTS = 3
#: How many in-stock versions an availability answer names as examples.
MAX_EXAMPLES = 3


def _money(value: Any) -> str:
    return f"${float(value or 0):.2f}"


def _prices(low: Any, high: Any, lang: str) -> str:
    """"$10.00" for one price, "from $10.00 to $12.50" for a range."""
    if low is None or high is None or float(low) == float(high):
        return render("price_single", lang, price=_money(low if low is not None else high))
    return render("price_range", lang, low=_money(low), high=_money(high))


def _plural(name: str) -> bool:
    """Is a product name a plural noun ("Sneakers", "Running Shoes")? Decides "is" / "are"."""
    word = name.strip().split(" ")[-1].lower() if name.strip() else ""
    return word.endswith("s") and not word.endswith(("ss", "us"))


def _stock(available: Any, lang: str) -> str:
    return render("stock_in" if available else "stock_out", lang)


R = TypeVar("R", bound=CatalogueRow)


def _by_product(rows: Sequence[R], name: Callable[[R], str | None]) -> dict[str, list[R]]:
    """Rows grouped by `name` (the product's), in order (a name fragment can match several products)."""
    grouped: dict[str, list[R]] = {}
    for row in rows:
        grouped.setdefault(name(row) or "", []).append(row)
    return dict(list(grouped.items())[:MAX_PRODUCTS])


def _product_name(row: VariantRow | OptionKeyRow | OptionValueRow) -> str | None:
    return row.product_name


def _listed(items: Sequence[str], lang: str, limit: int = MAX_LISTED) -> str:
    """"a, b and c", or "a, b, c, d, e and 3 more" past `limit` items."""
    if len(items) > limit + 1:  # one more than the limit is simply listed
        return render("list_and_more", lang, items=list(items[:limit]), count=len(items) - limit)
    return join_items(list(items), lang)


def _natural_key(value: str) -> tuple[Any, ...]:
    """Sort "9 bar" before "15 bar", "8" before "10" and "1L" before "1.5L"; words alphabetically."""
    parts = [p for p in re.split(r"(\d+(?:\.\d+)?)", value.lower()) if p]
    return tuple((0, float(p), "") if p[0].isdigit() else (1, 0, p) for p in parts)


def _options_text(option_text: Any) -> str:
    """A version's options as a customer reads them: "bamboo / 28 inch / graphic" for the stored
    "deck material: bamboo, length: 28 inch, design: graphic"."""
    pairs = [pair.partition(": ") for pair in str(option_text or "").split(", ") if pair]
    return " / ".join(key if not sep else f"{key}: {value}" if value.lower() in YES_NO else value
                      for key, sep, value in pairs)


def _option_phrase(key: str | None, value: str) -> str:
    return value if not key or key.lower() in BARE_VALUE_KEYS else f"{key} {value}"


def _product_overview(data: CatalogueData, lang: str) -> str:
    sentences = []
    for row in data.rows_as(ProductRow)[:MAX_PRODUCTS]:
        fields = {"product": row.name or "", "category": row.category or "",
                  "variants": row.variant_count or 0, "available": row.available_variants or 0,
                  "prices": _prices(row.min_price, row.max_price, lang)}
        name = "product_overview" if fields["available"] else "product_overview_out"
        if _plural(str(fields["product"])):
            name += "_plural"
        sentences.append(render(name, lang, **fields))
    return " ".join(sentences)


def _product_versions(data: CatalogueData, lang: str) -> str:
    sentences = []
    for product, rows in _by_product(data.rows_as(VariantRow), _product_name).items():
        items = [render("version_item", lang, options=_options_text(r.option_text),
                        price=_money(r.price), stock=_stock(r.available, lang)) for r in rows]
        name = "product_versions_plural" if _plural(str(product)) else "product_versions"
        sentences.append(render(name, lang, product=product, count=len(rows), items=_listed(items, lang)))
    return " ".join(sentences)


def _option_key_of(rows: Sequence[VariantRow], value: str, given: Any) -> str | None:
    """The option a value belongs to (the given key, or the one the matching rows carry it under)."""
    if given:
        return str(given)
    options = rows[0].options if rows else {}
    return next((k for k, v in options.items() if v.lower() == value.lower()), None)


def _variants_with_option(data: CatalogueData, lang: str) -> str:
    params = data.params
    value = str(params.get("option_value") or "")
    sentences = []
    for product, rows in _by_product(data.rows_as(VariantRow), _product_name).items():
        key = _option_key_of(rows, value, params.get("option_key"))
        shown = (rows[0].options.get(key) or value) if key else value
        option = _option_phrase(key, shown)  # as the catalogue spells it ("XXL", "5K")
        sentences.append(_versions_in_option(product, option, rows, lang))
    return " ".join(sentences)


def _variants_with_options(data: CatalogueData, lang: str) -> str:
    """The versions of one grounded product with every option the customer named (or none)."""
    grounded = data.product or ProductNote()
    option = join_items([_option_phrase(k, v) for k, v in grounded.options.items()], lang)
    by_product = _by_product(data.rows_as(VariantRow), _product_name) or {grounded.name: []}
    return " ".join(_versions_in_option(product, option, rows, lang) for product, rows in by_product.items())


def _versions_in_option(product: str, option: str, rows: Sequence[VariantRow], lang: str) -> str:
    """"Yes, the X in blue is available: ..." with each version in stock, or that none is."""
    in_stock = [r for r in rows if r.available]
    if not in_stock:
        name = "option_unavailable_plural" if _plural(product) else "option_unavailable"
        return render(name, lang, product=product, option=option)
    items = [render("version_item_price", lang, options=_options_text(r.option_text),
                    price=_money(r.price)) for r in in_stock]
    name = "option_available_plural" if _plural(product) else "option_available"
    return render(name, lang, product=product, option=option, items=_listed(items, lang))


def _product_option_keys(data: CatalogueData, lang: str) -> str:
    """ "You can choose the Portable Charger by capacity (5000mAh, 10000mAh or 20000mAh), color (...)
    and output (...)": each option with the values it comes in."""
    def key(r: OptionKeyRow) -> str:
        values = sorted(r.option_values, key=_natural_key)
        return f"{r.option_key} ({join_items(values, lang, 'or')})" if values else str(r.option_key)

    return " ".join(render("product_option_keys", lang, product=product,
                           keys=join_items([key(r) for r in rows], lang))
                    for product, rows in _by_product(data.rows_as(OptionKeyRow), _product_name).items())


def _product_option_values(data: CatalogueData, lang: str) -> str:
    """ "The Electric Kettle comes with these capacity options: 1L, 1.5L and 2L. ... these material
    options: ...": each option asked about (`option_key`, several joined by '|'), in the order asked;
    "With backrest height high-back, the Office Chair comes in these color options: ..." among the
    versions keeping the options `held`."""
    asked = [k for k in str(data.params.get("option_key") or "").split(OPTION_KEYS_SEPARATOR) if k]
    held = [pair.replace(": ", " ") for pair in str(data.params.get("held") or "").split("|") if pair]
    sentences = []
    for product, rows in _by_product(data.rows_as(OptionValueRow), _product_name).items():
        by_key: dict[str, list[OptionValueRow]] = {}
        for row in rows:
            by_key.setdefault(str(row.option_key or (asked[0] if asked else "")).lower(), []).append(row)
        for key in sorted(by_key, key=lambda k: asked.index(k) if k in asked else len(asked)):
            ordered = sorted(by_key[key], key=lambda r: _natural_key(r.value or ""))
            name = "product_option_values_held" if held else \
                "product_option_values_plural" if _plural(product) else "product_option_values"
            text = render(name, lang, product=product, key=key, held=join_items(held, lang),
                          values=join_items([str(r.value) for r in ordered], lang))
            sold_out = [str(r.value) for r in ordered if not r.available_variants]
            if sold_out:
                text += " " + render("product_option_values_sold_out", lang,
                                     values=join_items(sold_out, lang))
            sentences.append(text)
    return " ".join(sentences)


def _product_price(data: CatalogueData, lang: str) -> str:
    return " ".join(render("product_price", lang, product=r.product_name or "",
                           prices=_prices(r.min_price, r.max_price, lang))
                    for r in data.rows_as(ProductPriceRow)[:MAX_PRODUCTS])


def _product_availability(data: CatalogueData, lang: str) -> str:
    sentences = []
    for row in data.rows_as(ProductAvailabilityRow)[:MAX_PRODUCTS]:
        product = row.product_name or ""
        if not row.in_stock:
            name = "product_out_of_stock_plural" if _plural(product) else "product_out_of_stock"
            sentences.append(render(name, lang, product=product))
            continue
        examples = [_options_text(o) for o in row.available_options if o][:MAX_EXAMPLES]
        name = "product_in_stock_plural" if _plural(product) else "product_in_stock"
        sentences.append(render(name, lang, product=product,
                                available=row.available_variants or 0, variants=row.variants or 0,
                                examples=join_items(examples, lang)))
    return " ".join(sentences)


def _item(data: CatalogueData, lang: str) -> str:
    """One item by its id: what it is, its price and whether it is in stock."""
    row = data.row_as(VariantRow) or VariantRow()
    return render("item_summary", lang, item_id=row.item_id or "", product=row.product_name or "",
                  options=_options_text(row.option_text), price=_money(row.price),
                  stock=_stock(row.available, lang))


def _price_extreme(name: str) -> Callable[[CatalogueData, str], str]:
    def describe(data: CatalogueData, lang: str) -> str:
        row = data.row_as(VariantRow) or VariantRow()
        return render(name, lang, product=row.product_name or "", options=_options_text(row.option_text),
                      price=_money(row.price), item_id=row.item_id or "")
    return describe


def _ranked_versions(data: CatalogueData, lang: str) -> str:
    """"The cheapest X in stock is ...", "The X with the largest capacity in stock is 2L: ...",
    "X versions in stock with a thickness above 5mm: ..." (`cypher_catalogue.runner._ranked_versions`)."""
    ranking = data.ranking
    product = data.product.name if data.product is not None else ""
    rows = data.rows_as(VariantRow)
    key, up = (ranking.key, (ranking.direction or 1) > 0) if ranking is not None else ("", True)
    if ranking is not None and ranking.beyond is not None:
        bound = ranking.beyond
        if not rows:
            return render("ranked_none_beyond", lang, product=product, key=key, bound=bound,
                          side=render("side_above" if up else "side_below", lang))
        items = [render("version_item_price", lang, options=_options_text(r.option_text),
                        price=_money(r.price)) for r in rows]
        return render("ranked_beyond", lang, product=product, key=key, bound=bound,
                      side=render("side_above" if up else "side_below", lang), items=_listed(items, lang))
    if not rows:
        return render("ranked_none_in_stock", lang, product=product)
    if key == "price":
        row = rows[0]
        return render("most_expensive_variant" if up else "cheapest_variant", lang, product=product,
                      options=_options_text(row.option_text), price=_money(row.price),
                      item_id=row.item_id or "")
    items = [render("version_item_price", lang, options=_options_text(r.option_text),
                    price=_money(r.price)) for r in rows]
    value = ranking.value if ranking is not None else None
    return render("ranked_end", lang, product=product, key=key, value=value or "",
                  end=render("end_highest" if up else "end_lowest", lang), items=_listed(items, lang))


def _category_products(data: CatalogueData, lang: str) -> str:
    sentences = []
    for category, rows in _by_product(data.rows_as(ProductListingRow), lambda r: r.category).items():
        items = [render("named_prices", lang, name=r.product_name or "",
                        prices=_prices(r.min_price, r.max_price, lang)) for r in rows]
        sentences.append(render("category_products", lang, category=category, items=_listed(items, lang, 60)))
    return " ".join(sentences)


def _products_named(data: CatalogueData, lang: str) -> str:
    rows = data.rows_as(ProductListingRow)
    items = [render("named_versions_prices", lang, name=r.product_name or "", count=r.variants or 0,
                    prices=_prices(r.min_price, r.max_price, lang)) for r in rows]
    text = render("products_named_one" if len(rows) == 1 else "products_named", lang, count=len(rows),
                  items=_listed(items, lang, 20))
    if len(rows) == 1:  # "which types of grills do you sell?": the kinds of the one product
        product = rows[0].product_name or ""
        name = "product_option_values_plural" if _plural(product) else "product_option_values"
        for key, values in _values_by_option(rows[0].option_texts).items():
            if len(values) > 1:
                text += " " + render(name, lang, product=product, key=key, values=join_items(values, lang))
    return text


def _values_by_option(option_texts: Sequence[str]) -> dict[str, list[str]]:
    """{"type": ["charcoal", "electric", "gas"], ...} from variants' "type: gas, size: medium"."""
    values: dict[str, list[str]] = {}
    for text in option_texts:
        for pair in text.split(", "):
            key, sep, value = pair.partition(": ")
            if sep and value.strip() not in values.setdefault(key.strip(), []):
                values[key.strip()].append(value.strip())
    return {key: sorted(found, key=_natural_key) for key, found in values.items()}


def _categories(data: CatalogueData, lang: str) -> str:
    """Each category with its products ("Footwear: Hiking Boots, Running Shoes and Sneakers"): what
    a customer asking what the store sells wants to read (a count alone when the names are absent);
    with `not_sold`, first that the product asked about is not among them."""
    rows = data.rows_as(CategoryRow)
    total = sum(r.products or 0 for r in rows)
    if rows and all(r.names for r in rows):
        sentences = [render("category_with_products", lang, name=r.category or "",
                            products=join_items(r.names, lang)) for r in rows]
        head = render("store_categories_head", lang, total=total, categories=len(rows))
        text = " ".join([head, *sentences])
    else:
        items = [render("named_product_count_one" if r.products == 1 else "named_product_count", lang,
                        name=r.category or "", count=r.products or 0) for r in rows]
        text = render("store_categories", lang, items=_listed(items, lang, 50), total=total,
                      categories=len(rows))
    return f"{render('product_not_sold', lang)} {text}" if data.not_sold else text


def _most_versions(data: CatalogueData, lang: str) -> str:
    items = [render("named_version_count", lang, name=r.product_name or "", count=r.variants or 0)
             for r in data.rows_as(ProductListingRow)]
    return render("products_most_versions", lang, items=join_items(items, lang))


def _under_price(data: CatalogueData, lang: str) -> str:
    limit = data.params.get("max_price")
    items = [render("named_from_price", lang, name=r.product_name or "", price=_money(r.min_price))
             for r in data.rows_as(ProductListingRow)]
    return render("products_under_price", lang, price=_money(limit), items=_listed(items, lang, 50))


CATALOGUE_DESCRIBERS: dict[str, Callable[[CatalogueData, str], str]] = {
    "product_details": _product_overview,
    "product_by_id": _product_overview,
    "product_variants": _product_versions,
    "variants_by_option": _variants_with_option,
    "variants_with_options": _variants_with_options,
    "product_options": _product_option_keys,
    "product_option_values": _product_option_values,
    "product_price": _product_price,
    "product_availability": _product_availability,
    "variant_price": _item,
    "variant_availability": _item,
    "cheapest_variant": _price_extreme("cheapest_variant"),
    "most_expensive_variant": _price_extreme("most_expensive_variant"),
    "ranked_versions": _ranked_versions,
    "products_in_category": _category_products,
    "products_named": _products_named,
    "categories": _categories,
    "products_by_variant_count": _most_versions,
    "products_under_price": _under_price,
    "order_shipping_address": _shipping_address,
    "default_address": _default_address,
    "payment_methods": _payment_methods,
    "gift_card_balance": _gift_card_balance,
    "customer_profile": _customer_profile,
    "total_spent": _total_spent,
    "order_count_by_status": _order_counts,
    "order_total": _order_total,
    "order_payments": _order_payments,
    "return_eligibility": _eligibility("return_eligibility"),
    "cancellation_eligibility": _eligibility("cancellation_eligibility"),
    "address_change_eligibility": _eligibility("address_change_eligibility"),
}


def _answer_source(answer: str, citations: Sequence[Citation]) -> str:
    """The title of the document the answer was taken from (its first sentence is in that
    citation's text); the best-ranked citation's otherwise."""
    opening = answer.split(". ")[0].strip()
    quoted = next((c for c in citations if opening and opening in " ".join((c.text or "").split())), None)
    chosen = quoted or (citations[0] if citations else None)
    return (chosen.title or "") if chosen is not None else ""


def _knowledge(data: KnowledgeData, lang: str) -> str:
    answer = data.answer.strip()
    source = _answer_source(answer, data.citations)
    return render("knowledge_answer", lang, answer=answer, source=source) if source else answer


DESCRIBERS: dict[str, Callable[[CatalogueData, str], str]] = {
    "order_overview": _order_overview,
    "order_by_tracking": _order_overview,
    "order_items": _order_items,
    "customer_orders": _customer_orders,
    "orders_with_product": _orders_with_product,
    "refund_status": _refund_status,
    **CATALOGUE_DESCRIBERS,
}


def _action(data: ToolData | None, lang: str) -> str:
    """A change listed back before the yes, or what changed after it, in the customer's language
    when the tool worded it in that one (English otherwise)."""
    if isinstance(data, ActionProposedData):
        return " ".join([*(data.summaries.get(lang) or data.summary), render("confirm_prompt", lang)])
    if isinstance(data, ActionDoneData) and data.summaries.get(lang):
        return " ".join(data.summaries[lang])
    message = data.message if isinstance(data, ActionDoneData) else None
    return message or render("done_generic", lang)


def describe_success(task: Task, result: TaskResult, lang: str) -> str:
    text = _describe(task, result, lang)
    if result.status is TaskStatus.FALLBACK and result.heal:
        # A cheaper path answered after the usual one failed: say so, kindly, before the answer (a
        # slow part of the system only when that is what failed: the usual path may have found no
        # answer to exactly the words, "and the bicycle?", the cheaper one the closest it has).
        found_nothing = result.heal[0].error_type is ErrorType.NO_RESULTS
        return f"{render('closest_note' if found_nothing else 'fallback_note', lang)} {text}"
    return text


def _describe(task: Task, result: ToolResult, lang: str) -> str:
    data = result.data
    if task.tool == "knowledge_search":
        about = task.notes.order_id or ""
        # A rule quoted about one of the customer's orders says which ("Order #W1: for hygiene
        # reasons Perfume ... can only be returned unopened.").
        answer = _knowledge(data if isinstance(data, KnowledgeData) else KnowledgeData(), lang)
        return render("about_order", lang, order_id=about, text=answer) if about and answer else answer
    if task.tool == "customer_actions":
        return _action(data, lang)
    if isinstance(data, CatalogueData):
        describe = DESCRIBERS.get(data.template_id or "")
        if task.notes.refund_preview and data.template_id == "order_payments":
            return cancel_refund_preview(data, lang) or _order_payments(data, lang)
        if task.notes.return_preview and data.template_id == "order_payments":
            return return_refund_preview(data, lang) or _order_payments(data, lang)
        if task.notes.method_not_held and data.template_id == "payment_methods":
            return render("method_not_held", lang, method=task.notes.method_not_held,
                          saved=_payment_methods(data, lang))
        if data.template_id == "order_items" and task.notes.own_products:
            return _own_items(data, task.notes.own_products, lang, task.notes.asked_options) \
                or _order_items(data, lang)
        if describe is not None:
            named = task.notes.named_items
            total = named_items_total(data, named, lang) if named else ""
            return f"{describe(data, lang)} {total}".strip()
    if isinstance(data, RowsData) and data.has_rows:
        return _rows_summary(data, lang)
    if isinstance(data, KnowledgeData):  # a generated query's cheaper path: the store's documents
        return data.answer or render("done_generic", lang)
    given = (data.model_extra or {}) if data is not None else {}  # a tool no registry knows: as given
    return str(given.get("summary") or given.get("answer") or render("done_generic", lang))


def describe_failure(task: Task, result: ToolResult | None, lang: str) -> str:
    """Name the task, the reason in plain words, and the next step. Never an internal error."""
    error = result.error if result is not None else None
    error_type = error.type.value if error is not None else "unknown"
    proposal = task.args.proposal if isinstance(task.args, CustomerActionArgs) else None
    order_id = task.order_id or (proposal.order_id if proposal is not None else None) or ""
    name = f"task_{task.task_type}"
    subject = render(name, lang, order_id=order_id) if _has_template(name, lang) else render(
        "task_generic", lang)
    message = (error.message if error is not None else "").strip().rstrip(".")
    if error_type == "business_rule_violation" and message and order_id and lang != "en" \
            and task.tool in CUSTOMER_WORDED_TOOLS:
        # The rule, worded for the customer in English only, is still the answer: said after the
        # customer's language says that the policy blocks it for that order (never a breakdown).
        return render("rule_blocks_order", lang, order_id=order_id, rule=message)
    if task.tool not in CUSTOMER_WORDED_TOOLS or lang != "en":
        message = ""  # not written for the customer (or not in their language): the templates speak
    if task.tool == "predefined_cypher" and error_type == "validation":
        message = ""  # a template parameter named for the planner's retry ("option_key"), not a sentence
    if error_type == "business_rule_violation" and message:
        # A rule that blocks is an answer, told with what is allowed instead ("... has already
        # shipped, so it can no longer be cancelled. You can return it ..."); not a breakdown, and
        # a person only when the customer asks for one. It names the order it is about.
        if order_id and order_id not in message:
            return f"Order {order_id}: {message}."
        return f"{message}."
    if error_type == "no_results":
        # "Nothing found" is an answer, not a breakdown: say it as one.
        not_found = f"not_found_{task.task_type}"
        if _has_template(not_found, lang):
            return f"{render(not_found, lang)} {render(NEXT_STEP['low_confidence'], lang)}"
        if message:
            # An order id that is not this customer's may be someone else's ("my husband's order"):
            # the reply says whose orders it can see.
            step = "next_check_order" if order_id and order_id in message else NEXT_STEP["no_results"]
            return f"{message}. {render(step, lang)}"
    reason = message if error_type in READABLE_ERRORS and message else render(
        f"reason_{error_type}" if _has_template(f"reason_{error_type}", lang) else "reason_unknown", lang)
    next_step = render(NEXT_STEP.get(error_type, "next_retry_later"), lang)
    return render("partial_failure", lang, task=subject, reason=reason, next_step=next_step)


def ask_for(missing: Mapping[str, Any], lang: str) -> str:
    """The question that asks for exactly the missing (or malformed) parameter."""
    parameter = str(missing.get("parameter") or "")
    if missing.get("question"):  # grounding's own question, with the candidates it found
        question = grounding_question(missing, lang)
        if missing.get("from_image"):
            return render("clarify_image_unreadable_candidates", lang, question=question)
        return question
    if missing.get("from_image"):
        return render("clarify_image_unreadable", lang)
    invalid = missing.get("invalid")
    name = f"clarify_invalid_{parameter}" if invalid else f"clarify_missing_{parameter}"
    order_id = (missing.get("entities") or {}).get("order_id")
    if not invalid and order_id and _has_template(f"{name}_for_order", lang):
        # The order is known (named, or found from the customer's words): the question names it.
        return render(f"{name}_for_order", lang, order_id=str(order_id))
    if not _has_template(name, lang):
        return render("clarify_generic", lang)
    return render(name, lang, value=str(invalid or ""))


def grounding_question(missing: Mapping[str, Any], lang: str) -> str:
    """Grounding's question in the customer's language, said from its phrase (`grounding.asking`).
    A question kept without one (asked before phrases were kept: a checkpoint of an older
    conversation), or whose phrase no longer renders (a template renamed since), is its English
    text, as it was asked then."""
    said = missing.get("question_phrase")
    if isinstance(said, Mapping):
        try:
            return render_phrase(said, lang)
        except (KeyError, ValueError, TypeError):
            logger.warning("a grounding question's phrase did not render; its English text is asked")
    return str(missing["question"])


def _has_template(name: str, lang: str) -> bool:
    from csagent.nlp.replies import load_templates

    return name in load_templates("en") or name in load_templates(lang)


# -- a model-written reply, checked ----------------------------------------------------------------
#: A word the reply must contain for each failed task (English), so the customer can tell which
#: request failed even when it concerns no order id.
FAILURE_WORDS = {
    "order_status": "order", "tracking": "order", "order_items": "order", "refund_status": "refund",
    "order_list": "order", "product_info": "product", "product_availability": "stock",
    "warranty": "warranty", "policy": "polic", "cancel_order": "cancel", "return_items": "return",
    "change_order_address": "address", "update_default_address": "address", "account_info": "account",
    "exchange_items": "exchange", "modify_items": "change", "change_payment": "payment",
}
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese (简体中文)"}


def failure_markers(task: Task, lang: str) -> list[str] | None:
    """What a reply must say for this failed task to be named: its order id and, in English, a
    word of its kind. None when a reply in `lang` cannot be checked (then the template answers)."""
    markers = [order_id] if (order_id := task.order_id) else []
    if lang == "en":
        markers.append(FAILURE_WORDS.get(task.task_type, ""))
    markers = [m for m in markers if m]
    return markers or None


def names_every_failure(text: str, failed: Sequence[Task], lang: str) -> bool:
    """Does a model-written reply name every failed task (its markers all present)?"""
    lowered = text.lower()
    for task in failed:
        markers = failure_markers(task, lang)
        if markers is None or not all(m.lower() in lowered for m in markers):
            return False
    return True


def invents_identifiers(text: str, facts: str) -> bool:
    """Does the reply carry an order id or tracking number the results do not?"""
    from csagent.nlp.entities.identifiers import find_order_ids, find_tracking_numbers

    known = set(find_order_ids(facts)) | set(find_tracking_numbers(facts))
    return any(i not in known for i in [*find_order_ids(text), *find_tracking_numbers(text)])


def drops_identifiers(text: str, facts: str) -> bool:
    """Does the reply leave out an order id or tracking number the results give? A summary without
    them has dropped the answer itself (seen with a 135M model: "I am unable to assist you with
    your order" in place of two answered requests)."""
    from csagent.nlp.entities.identifiers import find_order_ids, find_tracking_numbers

    shown = set(find_order_ids(text)) | set(find_tracking_numbers(text))
    return any(i not in shown for i in [*find_order_ids(facts), *find_tracking_numbers(facts)])


def language_name(lang: str) -> str:
    return LANGUAGE_NAMES.get(lang, "the customer's language")
