"""Exchanges, item modifications, payment changes and the exact cancellation, pure: the checks,
the planned effect (status, the dataset's fields, payment-history entries, gift-card balances,
rewritten lines) and what the customer reads. The effect is also compared with the benchmark's
reference tools (read from ../shared as an oracle, never copied) on generated orders. No graph,
no network."""

from __future__ import annotations

import copy
import importlib
import json
import sys
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csagent.actions import policy as p
from csagent.actions.kinds import args_dict, parse_args
from csagent.actions.policy import ActionName, ArgsError, Violation
from csagent.actions.proposals import ActionPlan, build_proposal, done_lines, plan_action, summary_lines
from csagent.domain.models import ErrorType

RULES = p.load_rules()
NOW = datetime(2024, 7, 1, 15, 0, tzinfo=UTC)
ORDER = "#W1000001"
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau-retail" / "reference"

CHAIR, BOTTLE = "1000000001", "2000000002"
# product -> variants: item_id -> (options, price, available)
CATALOGUE: dict[str, dict[str, Any]] = {
    CHAIR: {"name": "Office Chair", "variants": {
        "111": ({"color": "black", "material": "fabric"}, 488.81, True),
        "112": ({"color": "blue", "material": "leather"}, 512.0, True),
        "113": ({"color": "red", "material": "leather"}, 430.5, True),
        "114": ({"color": "gray", "material": "mesh"}, 470.0, False),
    }},
    BOTTLE: {"name": "Water Bottle", "variants": {
        "221": ({"capacity": "500ml", "color": "blue"}, 47.84, True),
        "222": ({"capacity": "1000ml", "color": "blue"}, 52.1, True),
        "223": ({"capacity": "750ml", "color": "green"}, 49.99, False),
    }},
}


def variant_props(product_id: str, item_id: str) -> dict[str, Any]:
    options, price, available = CATALOGUE[product_id]["variants"][item_id]
    return {"item_id": item_id, "product_id": product_id, "product_name": CATALOGUE[product_id]["name"],
            "price": price, "available": available, "options_json": json.dumps(options),
            "option_text": ", ".join(f"{k}: {v}" for k, v in options.items())}


def line(no: int, product_id: str, item_id: str) -> dict[str, Any]:
    props = variant_props(product_id, item_id)
    return {"line_id": f"{ORDER}/{no}", "line_no": no, "item_id": item_id, "product_id": product_id,
            "name": CATALOGUE[product_id]["name"], "price": props["price"],
            "options_json": props["options_json"], "option_text": props["option_text"]}


def facts(status: str = "pending", *, items: tuple[tuple[str, str], ...] = ((CHAIR, "111"), (BOTTLE, "221")),
          payments: tuple[tuple[str, str, float], ...] | None = None, gift_balance: float = 20.0,
          gift_balance_2: float = 600.0) -> dict[str, Any]:
    """An order of `items` (product, item) paid once by credit card unless `payments` says
    otherwise (type, method, amount); the customer also has two gift cards and PayPal."""
    lines = [line(no, product, item) for no, (product, item) in enumerate(items, start=1)]
    total = round(sum(x["price"] for x in lines), 2)
    history = payments if payments is not None else (("payment", "credit_card_1", total),)
    products = {product for product, _ in items}
    return {
        "customer_id": "cust_1",
        "order": {"order_id": ORDER, "status": status, "total": total},
        "ship_to": {"address1": "1 Old Road", "address2": "", "city": "Austin", "state": "TX", "zip": "73301",
                    "country": "USA"},
        "lines": lines,
        "transactions": [{"transaction_id": f"{ORDER}/{seq}", "seq": seq, "type": kind, "amount": amount,
                          "payment_method_id": method}
                         for seq, (kind, method, amount) in enumerate(history, start=1)],
        "payment_methods": [
            {"payment_method_id": "credit_card_1", "source": "credit_card", "brand": "visa",
             "last_four": "4242"},
            {"payment_method_id": "gift_card_1", "source": "gift_card", "balance": gift_balance},
            {"payment_method_id": "gift_card_2", "source": "gift_card", "balance": gift_balance_2},
            {"payment_method_id": "paypal_1", "source": "paypal"},
        ],
        "variants": [variant_props(product, item) for product in sorted(products)
                     for item in sorted(CATALOGUE[product]["variants"])],
    }


def change(old: list[str], new: list[str], method: str = "credit_card_1") -> dict[str, Any]:
    return {"order_id": ORDER, "item_ids": old, "new_item_ids": new, "payment_method_id": method}


def plan(action: ActionName, raw: dict[str, Any], given_facts: dict[str, Any]) -> ActionPlan | Violation:
    return plan_action(action, parse_args(action, raw, RULES), given_facts, NOW, RULES)


def refused(result: ActionPlan | Violation, error_type: ErrorType = ErrorType.BUSINESS_RULE_VIOLATION) -> str:
    assert isinstance(result, Violation), result
    assert result.error_type is error_type
    return result.message


# ------------------------------------------------------------------------------------- args
def test_item_changes_need_one_new_item_per_item() -> None:
    # When / Then
    with pytest.raises(ArgsError, match="exactly one new item"):
        parse_args(ActionName.EXCHANGE_ITEMS, change(["111", "221"], ["112"]), RULES)


def test_item_changes_need_a_payment_method_for_the_difference() -> None:
    # When / Then
    with pytest.raises(ArgsError, match="pay or receive the price difference"):
        parse_args(ActionName.MODIFY_ITEMS, {**change(["111"], ["112"]), "payment_method_id": ""}, RULES)


def test_item_pairs_keep_the_order_given() -> None:
    # When
    args = parse_args(ActionName.MODIFY_ITEMS, change(["221", "111"], ["222", "112"]), RULES)

    # Then the pairs stay aligned
    assert args_dict(args) == change(["221", "111"], ["222", "112"])


# -------------------------------------------------------------------------------- exchange
def test_an_exchange_records_the_request_as_the_reference_does_and_moves_no_money() -> None:
    # Given a delivered order with a black fabric chair
    # When it is exchanged for the blue leather one, the difference paid by card
    result = plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["112"]), facts("delivered"))

    # Then the order records the request; nothing is paid, refunded or rewritten yet
    assert isinstance(result, ActionPlan)
    assert result.new_status == "exchange requested"
    assert dict(result.order_fields) == {"exchange_items": ["111"], "exchange_new_items": ["112"],
                                         "exchange_payment_method_id": "credit_card_1",
                                         "exchange_price_difference": 23.19}
    assert result.transactions == () and result.line_updates() == {} and result.refund is None


def test_an_exchange_is_listed_back_with_each_item_the_prices_the_difference_and_a_reminder() -> None:
    # Given
    result = plan(ActionName.EXCHANGE_ITEMS, change(["111", "221"], ["112", "222"]), facts("delivered"))
    assert isinstance(result, ActionPlan)

    # When
    lines = summary_lines(result)

    # Then
    assert lines == [
        "Exchange in order #W1000001: Office Chair (black, fabric) -> (blue, leather), $488.81 -> $512.00; "
        "Water Bottle (500ml, blue) -> (1000ml, blue), $47.84 -> $52.10.",
        "Price difference: you pay $27.45 with your Visa ending 4242.",
        "The items of an order can be exchanged only once, so please check that this lists every item you "
        "want to exchange.",
        "You will receive an email regarding how to return the items; there is no need to place a new order.",
    ]
    assert done_lines(result)[1] == "The price difference of $27.45 will be paid with your Visa ending 4242."


def test_a_cheaper_exchange_refunds_the_difference_to_the_chosen_method() -> None:
    # When the chair is exchanged for the cheaper red one, refunded to a gift card
    result = plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["113"], "gift_card_1"), facts("delivered"))

    # Then
    assert isinstance(result, ActionPlan) and result.refund is not None
    assert result.refund.amount == Decimal("58.31") and result.price_difference == Decimal("-58.31")
    assert summary_lines(result)[1] == "Price difference: $58.31 is refunded to your gift card (gift_card_1)."


def test_the_same_option_may_be_chosen_as_the_reference_allows() -> None:
    # When
    result = plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["111"]), facts("delivered"))

    # Then
    assert isinstance(result, ActionPlan) and result.price_difference == Decimal("0.00")
    assert summary_lines(result)[1] == "Price difference: none."


@pytest.mark.parametrize(("status", "words"), [
    ("pending", "A pending order's items can be modified instead."),
    ("processed", "You can exchange them once it is delivered."),
    ("exchange requested", "can be exchanged only once"),
    ("return requested", "A return has already been requested"),
    ("cancelled", "nothing to exchange"),
])
def test_only_a_delivered_order_can_be_exchanged_and_the_refusal_says_what_is_allowed(status: str,
                                                                                      words: str) -> None:
    # When / Then
    assert words in refused(plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["112"]), facts(status)))


def test_an_item_not_in_the_order_is_refused_listing_its_items() -> None:
    # When
    message = refused(plan(ActionName.EXCHANGE_ITEMS, change(["999"], ["112"]), facts("delivered")),
                      ErrorType.VALIDATION)

    # Then
    assert message == ("Order #W1000001 has no item 999. Its items are: Office Chair (item 111), "
                       "Water Bottle (item 221).")


def test_an_item_listed_more_often_than_the_order_holds_it_is_refused() -> None:
    # When
    message = refused(plan(ActionName.EXCHANGE_ITEMS, change(["111", "111"], ["112", "113"]),
                           facts("delivered")), ErrorType.VALIDATION)

    # Then
    assert message.startswith("Order #W1000001 has only 1 of item 111.")


def test_a_variant_of_another_product_is_refused_with_the_products_own_options() -> None:
    # When the chair would become a water bottle
    message = refused(plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["222"]), facts("delivered")))

    # Then
    assert message.startswith("Office Chair (black, fabric) can only be changed to another option of the "
                              "same product, and item 222 is not one.")
    assert "blue, leather (item 112, $512.00)" in message and "item 114" not in message


def test_an_unavailable_variant_is_refused_with_the_available_ones() -> None:
    # When
    message = refused(plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["114"]), facts("delivered")))

    # Then
    assert message.startswith("Office Chair (gray, mesh) is not available, so Office Chair (black, fabric) "
                              "cannot be changed to it.")
    assert "red, leather (item 113, $430.50)" in message


def test_a_gift_card_must_cover_a_positive_difference() -> None:
    # When the $23.19 difference would be paid by a gift card holding $20.00
    message = refused(plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["112"], "gift_card_1"),
                           facts("delivered", gift_balance=20.0)))

    # Then
    assert message.startswith("Your gift card (gift_card_1) has a balance of $20.00, which does not cover "
                              "the price difference of $23.19.")


def test_a_payment_method_of_someone_else_is_refused_listing_the_customers_own() -> None:
    # When
    message = refused(plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["112"], "credit_card_9"),
                           facts("delivered")), ErrorType.VALIDATION)

    # Then
    assert message.startswith("credit_card_9 is not one of your payment methods. Your payment methods are: "
                              "Visa ending 4242 (credit_card_1), gift card (gift_card_1, balance $20.00)")


# ---------------------------------------------------------------------------------- modify
def test_a_modification_pays_the_difference_rewrites_the_line_and_marks_the_order() -> None:
    # Given a pending order; the gift card pays the $4.26 more of the 1000ml bottle
    result = plan(ActionName.MODIFY_ITEMS, change(["221"], ["222"], "gift_card_1"),
                  facts("pending", gift_balance=20.0))

    # Then one payment entry, the card debited, the line rewritten, the status the reference's
    assert isinstance(result, ActionPlan)
    assert result.new_status == "pending (item modified)"
    [entry] = result.transactions
    assert (entry.type, entry.amount, entry.method.payment_method_id, entry.seq) == (
        "payment", Decimal("4.26"), "gift_card_1", 2)
    assert result.balances() == {"gift_card_1": Decimal("15.74")}
    [(line_id, update)] = result.line_updates().items()
    assert (line_id, update.new.item_id, update.new.price) == (f"{ORDER}/2", "222", Decimal("52.10"))
    assert result.new_total == Decimal("540.91") and result.refund is None


def test_a_cheaper_or_equal_modification_writes_a_refund_entry_even_of_zero() -> None:
    # When the chair becomes the cheaper red one, and when it stays the same option
    cheaper = plan(ActionName.MODIFY_ITEMS, change(["111"], ["113"], "gift_card_1"), facts("pending"))
    same = plan(ActionName.MODIFY_ITEMS, change(["111"], ["111"]), facts("pending"))

    # Then a refund entry of the difference (the gift card credited at once), or of $0.00
    assert isinstance(cheaper, ActionPlan) and isinstance(same, ActionPlan)
    assert [(t.type, t.amount) for t in cheaper.transactions] == [("refund", Decimal("58.31"))]
    assert cheaper.balances() == {"gift_card_1": Decimal("78.31")}
    assert [(t.type, t.amount) for t in same.transactions] == [("refund", Decimal("0.00"))]


def test_an_item_held_twice_is_modified_line_by_line() -> None:
    # Given two lines of the same bottle
    two = facts("pending", items=((BOTTLE, "221"), (BOTTLE, "221")))

    # When one unit changes, and when both change
    one = plan(ActionName.MODIFY_ITEMS, change(["221"], ["222"]), two)
    both = plan(ActionName.MODIFY_ITEMS, change(["221", "221"], ["222", "221"]), two)

    # Then the first line changes; then each pair takes the next line still holding the item
    assert isinstance(one, ActionPlan) and isinstance(both, ActionPlan)
    assert {k: v.new.item_id for k, v in one.line_updates().items()} == {f"{ORDER}/1": "222"}
    assert {k: v.new.item_id for k, v in both.line_updates().items()} == {f"{ORDER}/1": "222",
                                                                          f"{ORDER}/2": "221"}


def test_a_modification_is_listed_back_with_the_once_only_reminder() -> None:
    # Given
    result = plan(ActionName.MODIFY_ITEMS, change(["111"], ["112"]), facts("pending"))
    assert isinstance(result, ActionPlan)

    # When
    lines = summary_lines(result)

    # Then
    assert lines[0] == ("Modify the items of order #W1000001: Office Chair (black, fabric) -> "
                        "(blue, leather), $488.81 -> $512.00.")
    assert lines[1] == "Price difference: you pay $23.19 with your Visa ending 4242."
    assert lines[2].startswith("Items can be modified only once: after this, order #W1000001 can no "
                               "longer be cancelled or modified")
    assert done_lines(result)[1] == "$23.19 has been charged to your Visa ending 4242."


@pytest.mark.parametrize(("action", "raw"), [
    (ActionName.MODIFY_ITEMS, change(["112"], ["113"])),
    (ActionName.CANCEL_ORDER, {"order_id": ORDER, "reason": "no longer needed"}),
    (ActionName.CHANGE_PAYMENT, {"order_id": ORDER, "payment_method_id": "paypal_1"}),
    (ActionName.CHANGE_ORDER_ADDRESS, {"order_id": ORDER, "address": {
        "address1": "2 New Road", "city": "Austin", "state": "TX", "zip": "73301"}}),
])
def test_after_a_modification_the_order_can_no_longer_be_changed(action: ActionName,
                                                                raw: dict[str, Any]) -> None:
    # Given an order whose items were modified
    modified = facts("pending (item modified)", items=((CHAIR, "112"), (BOTTLE, "221")))

    # When / Then
    assert "already been modified" in refused(plan(action, raw, modified))


@pytest.mark.parametrize(("status", "words"), [
    ("delivered", "A delivered order's items can be exchanged instead."),
    ("processed", "has already shipped"),
])
def test_only_a_pending_order_can_be_modified(status: str, words: str) -> None:
    # When / Then
    assert words in refused(plan(ActionName.MODIFY_ITEMS, change(["111"], ["112"]), facts(status)))


# -------------------------------------------------------------------------- change_payment
def test_a_payment_change_pays_with_the_new_method_and_refunds_the_old_one() -> None:
    # Given a pending order paid $536.65 by card; the second gift card holds $600.00
    # When it moves to the gift card
    result = plan(ActionName.CHANGE_PAYMENT, {"order_id": ORDER, "payment_method_id": "gift_card_2"},
                  facts("pending"))

    # Then a payment with the card, a refund to the original method, the status kept
    assert isinstance(result, ActionPlan)
    assert [(t.type, t.amount, t.method.payment_method_id, t.seq) for t in result.transactions] == [
        ("payment", Decimal("536.65"), "gift_card_2", 2), ("refund", Decimal("536.65"), "credit_card_1", 3)]
    assert result.balances() == {"gift_card_2": Decimal("63.35")}
    assert result.new_status == "pending" and result.amount is None
    assert summary_lines(result) == [
        "Pay order #W1000001 ($536.65) with your gift card (gift_card_2) instead of your Visa ending 4242.",
        "Refund: $536.65 to your Visa ending 4242, within 5 to 7 business days. The order stays pending."]
    assert done_lines(result) == [
        "Done: order #W1000001 is now paid with your gift card (gift_card_2).",
        "$536.65 will be refunded to your Visa ending 4242 within 5 to 7 business days."]


def test_a_payment_change_away_from_a_gift_card_credits_it_at_once() -> None:
    # Given an order paid $100.00 by a gift card holding $20.00
    paid = facts("pending", payments=(("payment", "gift_card_1", 100.0),), gift_balance=20.0)

    # When
    result = plan(ActionName.CHANGE_PAYMENT, {"order_id": ORDER, "payment_method_id": "paypal_1"}, paid)

    # Then
    assert isinstance(result, ActionPlan) and result.balances() == {"gift_card_1": Decimal("120.00")}


@pytest.mark.parametrize(("method", "payments", "words", "error_type"), [
    ("credit_card_1", None, "is already paid with Visa ending 4242", ErrorType.BUSINESS_RULE_VIOLATION),
    ("gift_card_1", None, "does not cover the order's payment of $536.65", ErrorType.BUSINESS_RULE_VIOLATION),
    ("paypal_1", (("payment", "credit_card_1", 100.0), ("payment", "gift_card_1", 10.0)),
     "does not have exactly one payment", ErrorType.BUSINESS_RULE_VIOLATION),
    ("paypal_9", None, "is not one of your payment methods", ErrorType.VALIDATION),
])
def test_payment_changes_the_reference_refuses_are_refused(method: str, payments: Any, words: str,
                                                           error_type: ErrorType) -> None:
    # When / Then
    result = plan(ActionName.CHANGE_PAYMENT, {"order_id": ORDER, "payment_method_id": method},
                  facts("pending", payments=payments))
    assert words in refused(result, error_type)


# ---------------------------------------------------------------------------- cancellation
def test_a_cancellation_refunds_every_payment_history_entry_as_the_reference_does() -> None:
    # Given a pending order whose payment moved from a gift card to PayPal
    moved = facts("pending", payments=(("payment", "gift_card_1", 100.0), ("payment", "paypal_1", 100.0),
                                       ("refund", "gift_card_1", 100.0)), gift_balance=20.0)

    # When it is cancelled
    result = plan(ActionName.CANCEL_ORDER, {"order_id": ORDER, "reason": "ordered by mistake"}, moved)

    # Then one refund per entry, the gift card credited for each of its entries, the reason kept
    assert isinstance(result, ActionPlan)
    assert [(t.type, t.amount, t.method.payment_method_id, t.seq) for t in result.transactions] == [
        ("refund", Decimal("100.00"), "gift_card_1", 4), ("refund", Decimal("100.00"), "paypal_1", 5),
        ("refund", Decimal("100.00"), "gift_card_1", 6)]
    assert result.balances() == {"gift_card_1": Decimal("220.00")}
    assert dict(result.order_fields) == {"cancel_reason": "ordered by mistake"}
    assert summary_lines(result)[-1] == (
        "Refund: $100.00 to your gift card (gift_card_1), immediately; $100.00 to your PayPal account "
        "(paypal_1), within 5 to 7 business days; $100.00 to your gift card (gift_card_1), immediately.")


def test_a_new_price_difference_is_caught_between_proposal_and_execution() -> None:
    # Given a proposal made while the blue chair cost $512.00
    before = plan(ActionName.EXCHANGE_ITEMS, change(["111"], ["112"]), facts("delivered"))
    assert isinstance(before, ActionPlan)
    proposal = build_proposal(before, "cust_1", "s:1", Decimal("500"))

    # Then the confirmed difference travels with it
    assert proposal.price_difference == 23.19


# -------------------------------------------------------------------- the reference, as oracle
def _reference_tools() -> Any:
    if not (REFERENCE / "tools" / "__init__.py").exists():
        pytest.skip(f"the reference tools are not at {REFERENCE}")
    sys.path.insert(0, str(REFERENCE.parent))
    try:
        return importlib.import_module("reference.tools")
    finally:
        sys.path.remove(str(REFERENCE.parent))


def _as_dataset(given_facts: dict[str, Any]) -> dict[str, Any]:
    """The facts in the reference's shapes (users, orders, products)."""
    order = given_facts["order"]
    products = {pid: {"product_id": pid, "name": c["name"], "variants": {
        item: {"item_id": item, "options": opts, "price": price, "available": available}
        for item, (opts, price, available) in c["variants"].items()}} for pid, c in CATALOGUE.items()}
    methods = {m["payment_method_id"]: {k: v for k, v in {**m, "id": m["payment_method_id"]}.items()
                                        if k != "payment_method_id"} for m in given_facts["payment_methods"]}
    return {"products": products, "users": {"cust_1": {"payment_methods": methods}}, "orders": {ORDER: {
        "order_id": ORDER, "user_id": "cust_1", "status": order["status"],
        "items": [{"name": x["name"], "product_id": x["product_id"], "item_id": x["item_id"],
                   "price": x["price"], "options": json.loads(x["options_json"])}
                  for x in given_facts["lines"]],
        "payment_history": [{"transaction_type": t["type"], "amount": t["amount"],
                             "payment_method_id": t["payment_method_id"]}
                            for t in given_facts["transactions"]],
    }}}


def _apply(data: dict[str, Any], result: ActionPlan) -> None:
    """Our plan's effect on the reference's shapes: what the graph write does, as data."""
    order = data["orders"][ORDER]
    if result.new_status:
        order["status"] = result.new_status
    order.update(copy.deepcopy(dict(result.order_fields)))
    order["payment_history"] += [{"transaction_type": t.type, "amount": float(t.amount),
                                  "payment_method_id": t.method.payment_method_id}
                                 for t in result.transactions]
    for method_id, balance in result.balances().items():
        data["users"]["cust_1"]["payment_methods"][method_id]["balance"] = float(balance)
    for line_id, update in result.line_updates().items():
        item = order["items"][int(line_id.rsplit("/", 1)[1]) - 1]
        item.update(item_id=update.new.item_id, price=float(update.new.price),
                    options=json.loads(update.new.options_json))


def _cents(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {k: _cents(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cents(v) for v in value]
    return value


ITEMS = st.lists(st.sampled_from([(CHAIR, "111"), (CHAIR, "112"), (CHAIR, "113"), (BOTTLE, "221"),
                                  (BOTTLE, "222")]), min_size=1, max_size=4)
ALL_ITEMS = ["111", "112", "113", "114", "221", "222", "223", "999"]
METHODS = ["credit_card_1", "gift_card_1", "gift_card_2", "paypal_1"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=ITEMS, status=st.sampled_from(["pending", "delivered"]),
       pairs=st.lists(st.tuples(st.sampled_from(ALL_ITEMS[:5] + ["221", "222"]), st.sampled_from(ALL_ITEMS)),
                      min_size=1, max_size=3),
       method=st.sampled_from(METHODS), balance=st.sampled_from([0.0, 20.0, 100.0]))
def test_item_changes_have_the_reference_tools_effect_and_refusals(items: list[tuple[str, str]], status: str,
                                                                   pairs: list[tuple[str, str]], method: str,
                                                                   balance: float) -> None:
    # Given an order, some item pairs and a payment method
    tools = _reference_tools()
    given_facts = facts(status, items=tuple(items), gift_balance=balance)
    action = ActionName.EXCHANGE_ITEMS if status == "delivered" else ActionName.MODIFY_ITEMS
    tool = tools.ExchangeDeliveredOrderItems if status == "delivered" else tools.ModifyPendingOrderItems
    raw = change([a for a, _ in pairs], [b for _, b in pairs], method)

    # When both apply it
    expected = _as_dataset(given_facts)
    answer = tool.invoke(expected, **raw)
    ours = _as_dataset(given_facts)
    result = plan(action, raw, given_facts)

    # Then both refuse, or both leave the same records (to the cent)
    assert answer.startswith("Error") is isinstance(result, Violation), (answer, result)
    if isinstance(result, ActionPlan):
        _apply(ours, result)
        assert _cents(ours) == _cents(expected)


@settings(max_examples=100, deadline=None)
@given(method=st.sampled_from(METHODS + ["paypal_9"]), balance=st.sampled_from([0.0, 600.0]),
       history=st.sampled_from([(("payment", "credit_card_1", 536.65),),
                                (("payment", "gift_card_1", 536.65),),
                                (("payment", "gift_card_2", 100.0), ("payment", "paypal_1", 100.0),
                                 ("refund", "gift_card_2", 100.0))]))
def test_payment_changes_and_cancellations_have_the_reference_tools_effect(method: str, balance: float,
                                                                           history: Any) -> None:
    # Given a pending order with a payment history
    tools = _reference_tools()
    given_facts = facts("pending", payments=history, gift_balance=balance)
    for action, tool, raw in [
        (ActionName.CHANGE_PAYMENT, tools.ModifyPendingOrderPayment,
         {"order_id": ORDER, "payment_method_id": method}),
        (ActionName.CANCEL_ORDER, tools.CancelPendingOrder,
         {"order_id": ORDER, "reason": "no longer needed"}),
    ]:
        # When both apply it
        expected = _as_dataset(given_facts)
        answer = tool.invoke(expected, **raw)
        ours = _as_dataset(given_facts)
        result = plan(action, raw, given_facts)

        # Then both refuse, or both leave the same records
        assert answer.startswith("Error") is isinstance(result, Violation), (action, answer, result)
        if isinstance(result, ActionPlan):
            _apply(ours, result)
            assert _cents(ours) == _cents(expected)
