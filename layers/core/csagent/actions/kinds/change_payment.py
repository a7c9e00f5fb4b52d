"""change_payment: only a `pending` order with exactly one payment on record, to a different
payment method of the customer; a gift card must cover the amount. The reference's effect: a
payment of the same amount with the new method, then a refund to the original one; gift cards
are debited and credited at once. The status stays."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from csagent.actions.kinds.base import ActionKind
from csagent.actions.plan import ActionPlan, NewTransaction
from csagent.actions.policy import (
    ActionName,
    OrderFacts,
    PaymentMethod,
    PolicyRules,
    Transaction,
    Violation,
    check_gift_card_covers,
    check_status,
    missing_method,
    normalise_order_id,
    parse_payment_method_id,
    resolve_payment_method,
    rule_violation,
)


@dataclass(frozen=True)
class PaymentChangeArgs:
    """change_payment: the order's one payment moves to `payment_method_id`."""

    order_id: str
    payment_method_id: str

    def as_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "payment_method_id": self.payment_method_id}


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> PaymentChangeArgs:
    del rules
    order_id = normalise_order_id(raw.get("order_id"))
    return PaymentChangeArgs(order_id=order_id,
                             payment_method_id=parse_payment_method_id(raw, "should pay for the order"))


def check_payment_change(order: OrderFacts, args: PaymentChangeArgs,
                         rules: PolicyRules) -> tuple[Transaction, PaymentMethod] | Violation:
    """A pending order with exactly one payment on record, moved to a different payment method of
    the customer that can pay it (a gift card must cover the amount): the payment and the new
    method, or why not (checked in the reference's order)."""
    violation = check_status(ActionName.CHANGE_PAYMENT, order, "pending", rules)
    if violation:
        return violation
    method = resolve_payment_method(order, args.payment_method_id, rules)
    if isinstance(method, Violation):
        return method
    if len(order.transactions) != 1 or order.transactions[0].type != "payment":
        return rule_violation(rules.message("change_payment", "one_payment", order_id=order.order_id))
    payment = order.transactions[0]
    if payment.payment_method_id == method.payment_method_id:
        # ("pay with a different card" from a customer whose account holds only this one: nothing
        # to switch to, which is said plainly)
        only = all(m.payment_method_id == method.payment_method_id for m in order.payment_methods)
        return rule_violation(rules.message("change_payment", "only_method" if only else "same_method",
                                            order_id=order.order_id,
                                            method=method.label().removeprefix("your ")))
    violation = check_gift_card_covers(method, payment.amount, "the order's payment", rules)
    return violation or (payment, method)


def plan(args: PaymentChangeArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    order = OrderFacts.from_graph(facts)
    checked = check_payment_change(order, args, rules)
    if isinstance(checked, Violation):
        return checked
    payment, method = checked
    old = order.payment_method(payment.payment_method_id)
    if old is None:
        return missing_method(order, payment.payment_method_id)
    seq = order.next_transaction_seq
    amount = payment.amount
    entries = (
        NewTransaction("payment", amount, method, seq, f"{order.order_id}/{seq}",
                       (method.balance or Decimal(0)) - amount if method.is_gift_card else None),
        NewTransaction("refund", amount, old, seq + 1, f"{order.order_id}/{seq + 1}",
                       (old.balance or Decimal(0)) + amount if old.is_gift_card else None),
    )
    return ActionPlan(action=ActionName.CHANGE_PAYMENT, args=args, order_id=order.order_id,
                      new_status=order.status, order_lines=order.lines, transactions=entries,
                      payment_method=method, old_payment=payment, old_method=old)


KIND = ActionKind(
    name=ActionName.CHANGE_PAYMENT, args_type=PaymentChangeArgs, parse=parse, plan=plan,
    proposal=(
        "Pay order {order_id} ({amount}) with {method} instead of {old_method}.",
        "Refund: {amount} to {old_method}, {timing}. The order stays pending.",
    ),
    done=(
        "Done: order {order_id} is now paid with {method}.",
    ),
    done_refunds=True,
)
