"""exchange_items: only a `delivered` order (the pairs, the payment method and a gift card covering
a positive difference are checked as `item_change` says). The reference's effect: the request is
recorded on the order (status and the four `exchange_*` fields); no money moves and no line
changes yet."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from csagent.actions.kinds.base import ActionKind
from csagent.actions.kinds.item_change import ItemChangeArgs, check_item_change, parse_item_change
from csagent.actions.plan import ActionPlan, Refund
from csagent.actions.policy import ActionName, OrderFacts, PolicyRules, Violation


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> ItemChangeArgs:
    del rules
    return parse_item_change(raw, "exchange")


def plan(args: ItemChangeArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    order = OrderFacts.from_graph(facts)
    checked = check_item_change(ActionName.EXCHANGE_ITEMS, "delivered", args, order, rules)
    if isinstance(checked, Violation):
        return checked
    changes, difference, method = checked
    refund = Refund(amount=-difference, method=method, timing="") if difference < 0 else None
    fields = (("exchange_items", sorted(args.item_ids)), ("exchange_new_items", sorted(args.new_item_ids)),
              ("exchange_payment_method_id", method.payment_method_id),
              ("exchange_price_difference", float(difference)))
    return ActionPlan(action=ActionName.EXCHANGE_ITEMS, args=args, order_id=order.order_id,
                      new_status=rules.status("exchange_requested"), refund=refund, order_lines=order.lines,
                      changes=changes, price_difference=difference, payment_method=method,
                      order_fields=fields, stamped=("exchange_requested_at",))


KIND = ActionKind(
    name=ActionName.EXCHANGE_ITEMS, args_type=ItemChangeArgs, parse=parse, plan=plan,
    proposal=(
        "Exchange in order {order_id}: {changes}.",
        "{difference_line}",
        "The items of an order can be exchanged only once, so please check that this lists every item "
        "you want to exchange.",
        "You will receive an email regarding how to return the items; there is no need to place a new "
        "order.",
    ),
    done=(
        "Exchange requested for order {order_id}: {changes}.",
        "{difference_line}",
        "You will receive an email regarding how to return the items.",
    ),
    done_difference={
        "pay": "The price difference of {difference} will be paid with {method}.",
        "refund": "The price difference of {difference} will be refunded to {method}.",
        "none": "There is no price difference.",
    },
)
