"""modify_items: only a `pending` order, once (the order becomes "pending (item modified)", which
can no longer be cancelled, modified or re-addressed); the pairs, the payment method and a gift
card covering a positive difference are checked as `item_change` says. The reference's effect:
one entry for the difference (a payment when positive, otherwise a refund, of its absolute
value; a gift card's balance moves by it), each pair's line rewritten to the new item, and the
new status."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from csagent.actions.kinds.base import ActionKind
from csagent.actions.kinds.item_change import ItemChangeArgs, check_item_change, parse_item_change
from csagent.actions.plan import ActionPlan, NewTransaction, Refund
from csagent.actions.policy import ActionName, OrderFacts, PolicyRules, Violation


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> ItemChangeArgs:
    del rules
    return parse_item_change(raw, "modify")


def plan(args: ItemChangeArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    order = OrderFacts.from_graph(facts)
    checked = check_item_change(ActionName.MODIFY_ITEMS, "pending", args, order, rules)
    if isinstance(checked, Violation):
        return checked
    changes, difference, method = checked
    seq = order.next_transaction_seq
    new_balance = (method.balance or Decimal(0)) - difference if method.is_gift_card else None
    entry = NewTransaction("payment" if difference > 0 else "refund", abs(difference), method, seq,
                           f"{order.order_id}/{seq}", new_balance)
    refund = None
    if entry.type == "refund":
        refund = Refund(amount=entry.amount, method=method, timing=rules.refund_timing_for(method.source),
                        transaction_id=entry.transaction_id, seq=seq, new_balance=new_balance)
    final = {c.line.line_id: c.new.price for c in changes}
    total = sum((final.get(line.line_id, line.price) for line in order.lines), Decimal(0))
    return ActionPlan(action=ActionName.MODIFY_ITEMS, args=args, order_id=order.order_id,
                      new_status=rules.status("item_modified"), refund=refund, order_lines=order.lines,
                      transactions=(entry,), changes=changes, price_difference=difference,
                      payment_method=method, new_total=total, rewrites_lines=True)


KIND = ActionKind(
    name=ActionName.MODIFY_ITEMS, args_type=ItemChangeArgs, parse=parse, plan=plan,
    proposal=(
        "Modify the items of order {order_id}: {changes}.",
        "{difference_line}",
        "Items can be modified only once: after this, order {order_id} can no longer be cancelled or "
        "modified, so please check that this lists every item you want to modify.",
    ),
    done=(
        "The items of order {order_id} are modified: {changes}.",
        "{difference_line}",
        "Order {order_id} can no longer be cancelled or modified.",
    ),
    done_difference={
        "pay": "{difference} has been charged to {method}.",
        "refund": "{difference} has been refunded to {method}.",
        "none": "There is no price difference.",
    },
)
