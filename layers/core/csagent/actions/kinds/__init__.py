"""The customer actions, one module each: the action's typed arguments (parsed from the raw
mapping, `as_dict()` back), its policy checks, its exact effect (`plan`) and the lines the
customer reads before and after it, as one `ActionKind` named `KIND`.

`cancel_order`, `change_order_address`, `update_default_address`, `return_items`,
`exchange_items`, `modify_items`, `change_payment`; `item_change` holds what an exchange and a
modification share. What all actions share (names, rules, facts, parsers, common checks) is in
`csagent.actions.policy`; the effect's data types are in `csagent.actions.plan`. Adding an
action is one module here, its name in `ActionName` and its entry below.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from csagent.actions.kinds import (
    cancel_order,
    change_order_address,
    change_payment,
    exchange_items,
    modify_items,
    return_items,
    update_default_address,
)
from csagent.actions.kinds.base import ActionKind
from csagent.actions.kinds.cancel_order import CancelArgs
from csagent.actions.kinds.change_order_address import OrderAddressArgs
from csagent.actions.kinds.change_payment import PaymentChangeArgs
from csagent.actions.kinds.item_change import ItemChangeArgs
from csagent.actions.kinds.return_items import ReturnArgs
from csagent.actions.kinds.update_default_address import DefaultAddressArgs
from csagent.actions.policy import ActionName, ArgsError, PolicyRules

ActionArgs = (CancelArgs | OrderAddressArgs | DefaultAddressArgs | ReturnArgs | ItemChangeArgs
              | PaymentChangeArgs)

KINDS: Mapping[ActionName, ActionKind[Any]] = MappingProxyType({
    entry.name: entry
    for entry in (cancel_order.KIND, change_order_address.KIND, update_default_address.KIND,
                  return_items.KIND, exchange_items.KIND, modify_items.KIND, change_payment.KIND)
})


def kind(name: ActionName) -> ActionKind[Any]:
    """The action named `name`."""
    return KINDS[name]


def parse_args(action: ActionName, raw: Mapping[str, Any], rules: PolicyRules) -> ActionArgs:
    """Typed, normalised arguments for `action`; ArgsError with a readable message otherwise."""
    if not isinstance(raw, Mapping):
        raise ArgsError("The action's arguments must be an object.")
    args: ActionArgs = kind(action).parse(raw, rules)
    return args


def args_dict(args: ActionArgs) -> dict[str, Any]:
    """The normalised arguments as plain data (what the idempotency key is derived from)."""
    return args.as_dict()


__all__ = ["KINDS", "ActionArgs", "ActionKind", "args_dict", "kind", "parse_args"]
