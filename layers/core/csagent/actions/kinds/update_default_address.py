"""update_default_address: any complete US address (we deliver in the US). The effect: the
customer's default address; orders already placed keep theirs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from csagent.actions.kinds.base import ActionKind
from csagent.actions.plan import ActionPlan
from csagent.actions.policy import (
    ActionName,
    Address,
    CustomerFacts,
    PolicyRules,
    Violation,
    check_address_country,
    parse_address,
)


@dataclass(frozen=True)
class DefaultAddressArgs:
    address: Address

    def as_dict(self) -> dict[str, Any]:
        return {"address": self.address.as_dict()}


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> DefaultAddressArgs:
    return DefaultAddressArgs(address=parse_address(raw.get("address"), rules))


def plan(args: DefaultAddressArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    violation = check_address_country(args.address, rules)
    if violation:
        return violation
    customer = CustomerFacts.from_graph(facts)
    return ActionPlan(action=ActionName.UPDATE_DEFAULT_ADDRESS, args=args, order_id=None,
                      old_address=customer.default_address, new_address=args.address)


KIND = ActionKind(
    name=ActionName.UPDATE_DEFAULT_ADDRESS, args_type=DefaultAddressArgs, parse=parse, plan=plan,
    proposal=(
        "Change your default address from {old_address} to {new_address}.",
        "Orders you have already placed keep their current address.",
    ),
    done=(
        "Done: your default address is now {new_address}.",
    ),
)
