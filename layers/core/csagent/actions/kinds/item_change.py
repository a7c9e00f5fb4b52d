"""What exchange_items and modify_items share: their arguments (each item of the order for an
available option of the same product - the same option is allowed, as the reference allows it -
and a payment method of the customer that pays or receives the price difference) and their
checks, made in the reference's order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from csagent.actions.plan import ItemChange
from csagent.actions.policy import (
    ActionName,
    ArgsError,
    OrderFacts,
    PaymentMethod,
    PolicyRules,
    Violation,
    check_gift_card_covers,
    check_item_counts,
    check_status,
    id_list,
    normalise_order_id,
    parse_payment_method_id,
    resolve_payment_method,
    rule_violation,
    usd,
)


@dataclass(frozen=True)
class ItemChangeArgs:
    """exchange_items / modify_items: `item_ids[i]` becomes `new_item_ids[i]` (aligned, in the
    order given: the reference applies the pairs in that order), the difference paid or refunded
    through `payment_method_id`."""

    order_id: str
    item_ids: tuple[str, ...]
    new_item_ids: tuple[str, ...]
    payment_method_id: str

    def as_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "item_ids": list(self.item_ids),
                "new_item_ids": list(self.new_item_ids), "payment_method_id": self.payment_method_id}


def parse_item_change(raw: Mapping[str, Any], verb: str) -> ItemChangeArgs:
    """The arguments of an item change; `verb` ("exchange", "modify") words the errors."""
    order_id = normalise_order_id(raw.get("order_id"))
    old = id_list(raw, "item_ids", f"items to {verb}")
    new = id_list(raw, "new_item_ids", "new items")
    if not old:
        raise ArgsError(f"Which items of order {order_id} do you want to {verb}, and to which options?")
    if len(old) != len(new):
        raise ArgsError(f"Each item to {verb} needs exactly one new item: {len(old)} item(s) to {verb} "
                        f"but {len(new)} new item(s) were given.")
    return ItemChangeArgs(order_id=order_id, item_ids=old, new_item_ids=new,
                          payment_method_id=parse_payment_method_id(raw, "should pay or receive the price "
                                                                         "difference"))


def _available_list(order: OrderFacts, product_id: str, rules: PolicyRules) -> str:
    available = order.available_variants(product_id)
    shown = [f"{v.values() or v.option_text} (item {v.item_id}, {usd(v.price)})"
             for v in available[:rules.max_listed_options]]
    more = len(available) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def select_item_changes(order: OrderFacts, args: ItemChangeArgs,
                        rules: PolicyRules) -> tuple[ItemChange, ...] | Violation:
    """The pairs of an exchange or a modification, checked as the reference checks them: every
    item held by the order (duplicates counted), every new item an available option of the same
    product. The pairs are applied in the order given to find the line each one changes."""
    missing = check_item_counts(order, args.item_ids, rules)
    if missing:
        return missing
    current = [line.item_id for line in order.lines]
    changes: list[ItemChange] = []
    for old_id, new_id in zip(args.item_ids, args.new_item_ids, strict=True):
        first = order.line_for(old_id)
        assert first is not None  # counted above
        variant = order.variant(new_id)
        item = f"{first.name} ({first.values()})" if first.values() else first.name
        if variant is None or variant.product_id != first.product_id:
            return rule_violation(rules.message("items", "other_product", item=item, new_item_id=new_id,
                                                name=first.name,
                                                available=_available_list(order, first.product_id, rules)
                                                or "none"))
        if not variant.available:
            available = _available_list(order, first.product_id, rules)
            return rule_violation(rules.message("items", "unavailable" if available else "none_available",
                                                name=first.name,
                                                options=variant.values() or variant.option_text,
                                                item=item, available=available))
        index = current.index(old_id)
        current[index] = new_id
        changes.append(ItemChange(line=order.lines[index], old_price=first.price, new=variant))
    return tuple(changes)


CheckedChanges = tuple[tuple[ItemChange, ...], Decimal, PaymentMethod]
"""An item change that passed its checks: the pairs, the price difference and the method."""


def check_item_change(action: ActionName, status: str, args: ItemChangeArgs, order: OrderFacts,
                      rules: PolicyRules) -> CheckedChanges | Violation:
    """The checks an exchange and a modification share, in the reference's order: the order's
    status (`status`: the one `action` needs), the pairs, the price difference (new prices minus
    old, to the cent), the payment method, and a gift card covering a positive difference."""
    violation = check_status(action, order, status, rules)
    if violation:
        return violation
    changes = select_item_changes(order, args, rules)
    if isinstance(changes, Violation):
        return changes
    difference = sum((c.new.price - c.old_price for c in changes), Decimal(0))
    method = resolve_payment_method(order, args.payment_method_id, rules)
    if isinstance(method, Violation):
        return method
    violation = check_gift_card_covers(method, difference, "the price difference", rules)
    return violation or (changes, difference, method)
