"""The effect of a customer action, as data: what `plan_action` computes from the arguments and the
current facts, what the customer is shown, what the audit records and what the write applies.

Each action's module in `kinds` builds its `ActionPlan`; nothing here knows one action from
another. Pure data, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from csagent.actions.policy import ActionName, Address, OrderLine, PaymentMethod, Transaction, Variant

if TYPE_CHECKING:
    from csagent.actions.kinds import ActionArgs


def as_float(amount: Decimal | None) -> float | None:
    """A Decimal amount as the float the graph stores (None stays None)."""
    return float(amount) if amount is not None else None


@dataclass(frozen=True)
class Refund:
    """Money going back to the customer, as listed back and as the approval rule weighs it: the
    amount, to which method, when. For a cancellation and a modification (refunded at once) also
    the first refund entry and the gift card's balance after the refunds."""

    amount: Decimal
    method: PaymentMethod
    timing: str
    transaction_id: str | None = None
    seq: int | None = None
    new_balance: Decimal | None = None


@dataclass(frozen=True)
class NewTransaction:
    """A payment-history entry the write appends (`seq` continues the order's), and the balance
    of a gift card after it (None for other methods)."""

    type: str
    amount: Decimal
    method: PaymentMethod
    seq: int
    transaction_id: str
    new_balance: Decimal | None = None


@dataclass(frozen=True)
class ItemChange:
    """One pair of an item change. `line` is the order line that changes (for modify_items the
    one the reference rewrites: the first line still holding the item when the pair is applied),
    `old_price` the price the difference is computed from (the first line holding the item, as
    the reference takes it) and `new` the chosen variant."""

    line: OrderLine
    old_price: Decimal
    new: Variant


@dataclass(frozen=True)
class ActionPlan:
    """The effect an action will have on the current facts (pure data, no I/O).

    `refund` is the money going back to the customer that the approval rule weighs (a
    cancellation's refunds, a return, a negative price difference); `transactions` are the
    payment-history entries written now; `changes` the item pairs of an exchange or a
    modification with their `price_difference` and the `payment_method` that pays or receives
    it (change_payment: the new method, `old_payment` the payment it replaces); `order_fields`
    the dataset's fields the write sets on the order. `rewrites_lines` when each pair's line
    becomes the new item (a modification); `stamped` the order fields the write sets to its
    time and `write_fields` the other values it keeps beside the dataset's fields (a return's
    amount), neither of them in the audit's `after`.
    """

    action: ActionName
    args: ActionArgs
    order_id: str | None
    new_status: str | None = None
    old_address: Address | None = None
    new_address: Address | None = None
    refund: Refund | None = None
    lines: tuple[OrderLine, ...] = ()
    order_lines: tuple[OrderLine, ...] = ()
    transactions: tuple[NewTransaction, ...] = ()
    changes: tuple[ItemChange, ...] = ()
    price_difference: Decimal | None = None
    payment_method: PaymentMethod | None = None
    old_payment: Transaction | None = None
    old_method: PaymentMethod | None = None
    order_fields: tuple[tuple[str, Any], ...] = ()
    new_total: Decimal | None = None
    rewrites_lines: bool = False
    stamped: tuple[str, ...] = ()
    write_fields: tuple[tuple[str, Any], ...] = ()

    @property
    def amount(self) -> Decimal | None:
        return self.refund.amount if self.refund else None

    def balances(self) -> dict[str, Decimal]:
        """Gift-card balances after the write: the last entry on each card wins."""
        return {t.method.payment_method_id: t.new_balance for t in self.transactions
                if t.new_balance is not None}

    def line_updates(self) -> dict[str, ItemChange]:
        """A modification's final variant per rewritten line (the last pair on a line wins)."""
        if not self.rewrites_lines:
            return {}
        return {change.line.line_id: change for change in self.changes}

    def before(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        """What the change replaces, for the audit record."""
        record: dict[str, Any] = {}
        if self.order_id:
            record["order_id"] = self.order_id
            record["status"] = facts["order"].get("status")
        if self.old_address is not None or self.new_address is not None:
            record["address"] = self.old_address.as_dict() if self.old_address else None
        old_balances = {t.method.payment_method_id: as_float(t.method.balance) for t in self.transactions
                        if t.new_balance is not None}
        if old_balances:
            record["balances"] = old_balances
        if self.line_updates():
            record["items"] = [{"line_id": c.line.line_id, "item_id": c.line.item_id,
                                "price": float(c.line.price), "options_json": c.line.options_json}
                               for c in self.line_updates().values()]
        return record

    def after(self) -> dict[str, Any]:
        """What the change sets, for the audit record and the tool's result."""
        record: dict[str, Any] = {}
        if self.order_id:
            record["order_id"] = self.order_id
        if self.new_status:
            record["status"] = self.new_status
        record.update(self.order_fields)
        if self.new_address is not None:
            record["address"] = self.new_address.as_dict()
        if self.lines:
            record["items"] = [{"line_id": x.line_id, "item_id": x.item_id, "name": x.name,
                                "price": float(x.price)} for x in self.lines]
        if self.changes:
            record["item_changes"] = [{"line_id": c.line.line_id, "item_id": c.line.item_id,
                                       "new_item_id": c.new.item_id, "old_price": float(c.old_price),
                                       "new_price": float(c.new.price)} for c in self.changes]
            record["price_difference"] = as_float(self.price_difference)
            record["payment_method_id"] = (self.payment_method.payment_method_id if self.payment_method
                                           else None)
        if self.refund:
            refund = self.refund
            record["refund"] = {
                "amount": float(refund.amount), "payment_method_id": refund.method.payment_method_id,
                "timing": refund.timing, "transaction_id": refund.transaction_id,
                "balance": as_float(refund.new_balance),
            }
        if self.transactions:
            record["transactions"] = [{"transaction_id": t.transaction_id, "type": t.type,
                                       "amount": float(t.amount),
                                       "payment_method_id": t.method.payment_method_id}
                                      for t in self.transactions]
        if self.balances():
            record["balances"] = {k: float(v) for k, v in self.balances().items()}
        return record

    def write_params(self, at: str | None = None) -> dict[str, Any]:
        """The action-specific parameters of the guarded write (`queries.WRITES`): the order's
        new properties (`order_set`, the status as `order_status`), the entries to append, the
        gift-card balances, the line updates and the new shipping address. `at` stamps the
        entries and the request dates the graph keeps beside the dataset's fields."""
        order_set: dict[str, Any] = dict(self.order_fields)
        if self.new_status:
            order_set["status"] = self.new_status
        if self.new_total is not None:
            order_set["total"] = float(self.new_total)
        order_set.update(dict.fromkeys(self.stamped, at))
        order_set.update(self.write_fields)
        lines: list[dict[str, Any]] = [{"line_id": x.line_id, "item_id": None,
                                        "props": {"return_requested": True}} for x in self.lines]
        lines += [{"line_id": line_id, "item_id": c.new.item_id,
                   "props": {"item_id": c.new.item_id, "price": float(c.new.price),
                             "options_json": c.new.options_json, "option_text": c.new.option_text}}
                  for line_id, c in self.line_updates().items()]
        return {
            "order_id": self.order_id, "order_status": self.new_status, "order_set": order_set,
            "transactions": [{"transaction_id": t.transaction_id, "seq": t.seq, "type": t.type,
                              "amount": float(t.amount), "payment_method_id": t.method.payment_method_id,
                              "at": at} for t in self.transactions],
            "balances": [{"payment_method_id": k, "balance": float(v)} for k, v in self.balances().items()],
            "line_updates": lines,
            "address": self.new_address.as_dict() if self.new_address is not None else None,
        }
