"""return_items: only a `delivered` order, items of that order (an item listed twice needs two such
lines); the refund goes to the original payment method or an existing gift card. There is no
return window: the policy has none. The reference's effect: the return is requested on the order
(the status, the items and the refund method); no money moves yet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from csagent.actions.items import match_lines
from csagent.actions.kinds.base import ActionKind
from csagent.actions.plan import ActionPlan, Refund
from csagent.actions.policy import (
    MAX_ITEMS,
    ActionName,
    ArgsError,
    OrderFacts,
    OrderLine,
    PaymentMethod,
    PolicyRules,
    Violation,
    check_item_counts,
    check_status,
    id_list,
    load_rules,
    normalise_order_id,
    rule_violation,
)
from csagent.domain.models import ErrorType

MAX_REQUEST_CHARS = 1000


@dataclass(frozen=True)
class ItemRequest:
    """How the customer named the items to return before they are matched to the order's lines:
    their own words ("the skateboard", "everything") and the catalogue products the understanding
    found in them. Used only when no item ids are given."""

    text: str = ""
    product_ids: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.text or self.product_ids)


@dataclass(frozen=True)
class ReturnArgs:
    """`item_ids` sorted (one entry per unit returned); no `payment_method_id` means the
    original payment method. `named` is resolved to item ids against the order's lines
    (`select_return_lines`) and never kept in the normalised arguments."""

    order_id: str
    item_ids: tuple[str, ...]
    payment_method_id: str | None
    named: ItemRequest = ItemRequest()

    def as_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "item_ids": list(self.item_ids),
                "payment_method_id": self.payment_method_id}


def _item_request(raw: Mapping[str, Any]) -> ItemRequest:
    """The customer's own words for the items (`items_text`) and the catalogue products found in
    them (`product_ids`); both optional."""
    text = raw.get("items_text")
    products = raw.get("product_ids") or []
    if isinstance(products, str | int):
        products = [products]
    if not isinstance(products, Sequence) or len(products) > MAX_ITEMS:
        raise ArgsError(f"The products to return must be a list of at most {MAX_ITEMS} product ids.")
    words = " ".join(str(text).split())[:MAX_REQUEST_CHARS] if isinstance(text, str) else ""
    return ItemRequest(text=words, product_ids=tuple(str(p).strip() for p in products if str(p).strip()))


def parse(raw: Mapping[str, Any], rules: PolicyRules) -> ReturnArgs:
    del rules
    order_id = normalise_order_id(raw.get("order_id"))
    method = raw.get("payment_method_id")
    return ReturnArgs(order_id=order_id, item_ids=tuple(sorted(id_list(raw, "item_ids", "items to return"))),
                      payment_method_id=str(method).strip() if method else None, named=_item_request(raw))


def check_return_status(order: OrderFacts, rules: PolicyRules) -> Violation | None:
    """Only a `delivered` order can be returned."""
    return check_status(ActionName.RETURN_ITEMS, order, "delivered", rules)


def select_named_lines(order: OrderFacts, named: ItemRequest) -> tuple[OrderLine, ...] | Violation:
    """The order lines the customer named in their own words ("the skateboard", "everything").
    Nothing named, or words that fit no line, is a VALIDATION violation listing the order's items;
    words that fit several lines equally ("the kettle") ask which of those."""
    match = match_lines(order.lines, named.text, named.product_ids) if named else None
    unclear = [x for x in match.ambiguous if isinstance(x, OrderLine)] if match is not None else []
    if unclear:
        options = ", ".join(f"{x.label()} (item {x.item_id})" for x in unclear)
        return Violation(ErrorType.VALIDATION, f"Which one of order {order.order_id} do you want to "
                                               f"return: {options}?")
    if match is None or not match.lines:
        return Violation(ErrorType.VALIDATION, f"Which items of order {order.order_id} do you want to "
                                               f"return? Its items are: {order.item_list()}.")
    return tuple(sorted((x for x in match.lines if isinstance(x, OrderLine)), key=lambda x: x.line_id))


def select_return_lines(order: OrderFacts, item_ids: Sequence[str],
                        named: ItemRequest | None = None) -> tuple[OrderLine, ...] | Violation:
    """The order lines the item ids name (one line per id; an id listed twice takes two lines
    of that item); without ids, the lines the customer's words name (`select_named_lines`).
    A missing or unknown id is a VALIDATION violation listing the order's items."""
    if not item_ids:
        return select_named_lines(order, named or ItemRequest())
    missing = check_item_counts(order, item_ids, load_rules())
    if missing:
        return missing
    chosen: list[OrderLine] = []
    for item_id in item_ids:
        chosen.append(next(x for x in order.lines if x.item_id == item_id and x not in chosen))
    return tuple(sorted(chosen, key=lambda x: x.line_id))


def resolve_refund_method(order: OrderFacts, requested: str | None,
                          rules: PolicyRules) -> PaymentMethod | Violation:
    """The return's refund destination: the original payment method (the default) or an existing
    gift card of the customer."""
    original = order.original_payment_method
    if requested is None or (original is not None and requested == original.payment_method_id):
        if original is None:
            return rule_violation(f"I cannot find the payment method order {order.order_id} was paid with. "
                                  "A human agent can help.")
        return original
    method = order.payment_method(requested)
    if method is not None and method.is_gift_card:
        return method
    shown = method.label().removeprefix("your ") if method else requested
    return rule_violation(rules.message("return_items", "refund_method", order_id=order.order_id,
                                        method=shown))


def plan(args: ReturnArgs, facts: Mapping[str, Any], rules: PolicyRules) -> ActionPlan | Violation:
    order = OrderFacts.from_graph(facts)
    violation = check_return_status(order, rules)
    if violation:
        return violation
    lines = select_return_lines(order, args.item_ids, args.named)
    if isinstance(lines, Violation):
        return lines
    method = resolve_refund_method(order, args.payment_method_id, rules)
    if isinstance(method, Violation):
        return method
    # The items as ids, whichever way the customer named them: what the "yes" confirms and
    # what `execute` re-checks.
    item_ids = tuple(sorted(x.item_id for x in lines))
    resolved = ReturnArgs(order_id=args.order_id, item_ids=item_ids,
                          payment_method_id=method.payment_method_id)
    amount = sum((x.price for x in lines), Decimal(0))
    refund = Refund(amount=amount, method=method, timing=rules.refund_timing_for(method.source))
    return ActionPlan(action=ActionName.RETURN_ITEMS, args=resolved, order_id=order.order_id,
                      new_status=rules.status("return_requested"), refund=refund, lines=lines,
                      order_lines=order.lines,
                      order_fields=(("return_items", list(item_ids)),
                                    ("return_payment_method_id", method.payment_method_id)),
                      stamped=("return_requested_at",), write_fields=(("return_amount", float(amount)),))


KIND = ActionKind(
    name=ActionName.RETURN_ITEMS, args_type=ReturnArgs, parse=parse, plan=plan,
    proposal=(
        "Return from order {order_id}: {items}.",
        "Refund: {amount} to {method}.",
        "You will receive an email regarding how to return the items.",
    ),
    done=(
        "Return requested for order {order_id}: {items}.",
        "You will receive an email regarding how to return the items.",
        "The refund of {amount} will go to {method}.",
    ),
)
