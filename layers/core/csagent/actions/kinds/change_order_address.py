"""change_order_address: only a `pending` order, only to a US address (we deliver in the US).
The effect: the order's shipping address."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from csagent.actions.kinds.base import ActionKind
from csagent.actions.plan import ActionPlan
from csagent.actions.policy import (
    ActionName,
    Address,
    OrderFacts,
    PolicyRules,
    Violation,
    check_address_country,
    check_status,
    normalise_order_id,
    parse_address,
    rule_violation,
)


@dataclass(frozen=True)
class OrderAddressArgs:
    order_id: str
    address: Address

    def as_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "address": self.address.as_dict()}


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> OrderAddressArgs:
    order_id = normalise_order_id(raw.get("order_id"))
    return OrderAddressArgs(order_id=order_id, address=parse_address(raw.get("address"), rules))


def check_order_address(order: OrderFacts, address: Address, rules: PolicyRules) -> Violation | None:
    """Only a `pending` order's address can change, only to a US address, and only to another
    address than the one it ships to (a change to itself changes nothing)."""
    return (check_status(ActionName.CHANGE_ORDER_ADDRESS, order, "pending", rules)
            or check_address_country(address, rules)
            or (rule_violation(rules.message("address", "already_there", order_id=order.order_id,
                                             address=address.one_line()))
                if order.ship_to is not None and _same(order.ship_to, address) else None))


def _same(a: Address, b: Address) -> bool:
    """The same street line and zip code, case and spacing aside."""
    def key(x: Address) -> tuple[str, str, str]:
        return " ".join(x.address1.lower().split()), " ".join(x.address2.lower().split()), x.zip.strip()
    return key(a) == key(b)


def plan(args: OrderAddressArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    order = OrderFacts.from_graph(facts)
    violation = check_order_address(order, args.address, rules)
    if violation:
        return violation
    return ActionPlan(action=ActionName.CHANGE_ORDER_ADDRESS, args=args, order_id=order.order_id,
                      old_address=order.ship_to, new_address=args.address, order_lines=order.lines)


KIND = ActionKind(
    name=ActionName.CHANGE_ORDER_ADDRESS, args_type=OrderAddressArgs, parse=parse, plan=plan,
    proposal=(
        "Change the shipping address of order {order_id} from {old_address} to {new_address}.",
    ),
    done=(
        "Done: order {order_id} will now ship to {new_address}.",
    ),
)
