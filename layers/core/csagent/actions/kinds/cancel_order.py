"""cancel_order: only a `pending` order, for one of two reasons (`policy.yaml`'s
`cancel_reasons`). The reference's effect: one refund per payment-history entry, of that entry's
amount, to that entry's method; a gift card is credited at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from csagent.actions.kinds.base import ActionKind
from csagent.actions.plan import ActionPlan, NewTransaction, Refund
from csagent.actions.policy import (
    ActionName,
    ArgsError,
    OrderFacts,
    PolicyRules,
    Violation,
    check_status,
    missing_method,
    normalise_order_id,
)


@dataclass(frozen=True)
class CancelArgs:
    order_id: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "reason": self.reason}


def _reason(raw: Mapping[str, Any], rules: PolicyRules) -> str:
    choices = " or ".join(f"'{r}'" for r in rules.cancel_reasons)
    value = " ".join(str(raw.get("reason") or "").lower().split())
    if not value:
        raise ArgsError(f"Please tell me why you are cancelling: {choices}.")
    if value not in rules.cancel_reasons:
        raise ArgsError(f"The cancellation reason must be {choices}.")
    return value


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> CancelArgs:
    order_id = normalise_order_id(raw.get("order_id"))
    return CancelArgs(order_id=order_id, reason=_reason(raw, rules))


def check_cancel(order: OrderFacts, rules: PolicyRules) -> Violation | None:
    """Only a `pending` order can be cancelled."""
    return check_status(ActionName.CANCEL_ORDER, order, "pending", rules)


def plan(args: CancelArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    order = OrderFacts.from_graph(facts)
    violation = check_cancel(order, rules)
    if violation:
        return violation
    seq = order.next_transaction_seq
    balances = {m.payment_method_id: m.balance or Decimal(0) for m in order.payment_methods}
    refunds: list[NewTransaction] = []
    for entry in order.transactions:
        method = order.payment_method(entry.payment_method_id)
        if method is None:
            return missing_method(order, entry.payment_method_id)
        new_balance = None
        if method.is_gift_card:
            key = method.payment_method_id
            new_balance = balances[key] = balances[key] + entry.amount
        refunds.append(NewTransaction("refund", entry.amount, method, seq, f"{order.order_id}/{seq}",
                                      new_balance))
        seq += 1
    refund = None
    if refunds:
        first = refunds[0]
        refund = Refund(amount=sum((t.amount for t in refunds), Decimal(0)), method=first.method,
                        timing=rules.refund_timing_for(first.method.source),
                        transaction_id=first.transaction_id, seq=first.seq,
                        new_balance=balances[first.method.payment_method_id] if first.method.is_gift_card
                        else None)
    return ActionPlan(action=ActionName.CANCEL_ORDER, args=args, order_id=order.order_id,
                      new_status=rules.status("cancelled"), refund=refund, order_lines=order.lines,
                      transactions=tuple(refunds), order_fields=(("cancel_reason", args.reason),))


def own_fields(args: CancelArgs, planned: ActionPlan) -> dict[str, str]:
    """{reason} (the shared {refunds} lists each refund entry)."""
    del planned
    return {"reason": args.reason}


KIND = ActionKind(
    name=ActionName.CANCEL_ORDER, args_type=CancelArgs, parse=parse, plan=plan,
    proposal=(
        "Cancel order {order_id}: {items}.",
        "Reason: {reason}.",
        "Refund: {refunds}.",
    ),
    done=(
        "Order {order_id} is cancelled.",
    ),
    done_refunds=True, own_fields=own_fields,
)
