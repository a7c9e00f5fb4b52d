"""Phase one of a customer action: what would change, listed back to the customer before the
explicit yes, with the refund amount, the approval flag and the idempotency key.

`plan_action` (pure) turns validated arguments and the current facts into an `ActionPlan`: the
policy checks of `policy`, then the exact effect, as the benchmark's reference tools make it:
the new status, the dataset fields the write sets (`cancel_reason`, `return_items`,
`return_payment_method_id`, `exchange_*`), the payment-history entries it appends and the gift-card
balances they move, the order lines it rewrites, the address; and the before/after record the
audit keeps. Both phases run it: `propose` on the facts at proposal time, `execute` again on the
facts inside the write.

`propose` reads the facts scoped to the authenticated customer and returns an `ActionProposal`
or a failed `ToolResult` (VALIDATION, NO_RESULTS, BUSINESS_RULE_VIOLATION, PERMISSION_DENIED).
Infrastructure errors (Neo4j) propagate; the tool entry turns them into typed results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from csagent.actions import queries
from csagent.actions.policy import (
    ActionArgs,
    ActionName,
    Address,
    ArgsError,
    CancelArgs,
    CustomerFacts,
    DefaultAddressArgs,
    ItemChange,
    ItemChangeArgs,
    OrderAddressArgs,
    OrderFacts,
    OrderLine,
    PaymentChangeArgs,
    PaymentMethod,
    PolicyRules,
    ReturnArgs,
    Transaction,
    Violation,
    args_dict,
    check_address_country,
    check_cancel,
    check_gift_card_covers,
    check_order_address,
    check_payment_change,
    check_return_status,
    check_status,
    load_rules,
    parse_args,
    resolve_payment_method,
    resolve_refund_method,
    select_item_changes,
    select_return_lines,
    usd,
)
from csagent.domain.models import ErrorType, Task, ToolResult

if TYPE_CHECKING:
    from csagent.tools.context import ToolContext

DEFAULT_APPROVAL_THRESHOLD = Decimal("500.00")
KEY_VERSION = 1
MAX_CONFIRMATION_ID_CHARS = 200


# ------------------------------------------------------------------------------------- plan
def _cents(amount: Decimal | None) -> float | None:
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
class ActionPlan:
    """The effect an action will have on the current facts (pure data, no I/O).

    `refund` is the money going back to the customer that the approval rule weighs (a
    cancellation's refunds, a return, a negative price difference); `transactions` are the
    payment-history entries written now; `changes` the item pairs of an exchange or a
    modification with their `price_difference` and the `payment_method` that pays or receives
    it (change_payment: the new method, `old_payment` the payment it replaces); `order_fields`
    the dataset's fields the write sets on the order.
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

    @property
    def amount(self) -> Decimal | None:
        return self.refund.amount if self.refund else None

    def balances(self) -> dict[str, Decimal]:
        """Gift-card balances after the write: the last entry on each card wins."""
        return {t.method.payment_method_id: t.new_balance for t in self.transactions
                if t.new_balance is not None}

    def line_updates(self) -> dict[str, ItemChange]:
        """A modification's final variant per rewritten line (the last pair on a line wins)."""
        if self.action is not ActionName.MODIFY_ITEMS:
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
        old_balances = {t.method.payment_method_id: _cents(t.method.balance) for t in self.transactions
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
            record["price_difference"] = _cents(self.price_difference)
            record["payment_method_id"] = (self.payment_method.payment_method_id if self.payment_method
                                           else None)
        if self.refund:
            refund = self.refund
            record["refund"] = {
                "amount": float(refund.amount), "payment_method_id": refund.method.payment_method_id,
                "timing": refund.timing, "transaction_id": refund.transaction_id,
                "balance": _cents(refund.new_balance),
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
        if self.action is ActionName.RETURN_ITEMS and self.refund is not None:
            order_set.update(return_requested_at=at, return_amount=float(self.refund.amount))
        if self.action is ActionName.EXCHANGE_ITEMS:
            order_set["exchange_requested_at"] = at
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


def _missing_method(order: OrderFacts, payment_method_id: str) -> Violation:
    return Violation(ErrorType.BUSINESS_RULE_VIOLATION,
                     f"I cannot find the payment method {payment_method_id} that order {order.order_id} "
                     "was paid with on your account. A human agent can help.")


def _cancel(args: CancelArgs, order: OrderFacts, rules: PolicyRules) -> ActionPlan | Violation:
    """The reference's cancellation: one refund per payment-history entry, of that entry's amount,
    to that entry's method; a gift card is credited at once."""
    violation = check_cancel(order, rules)
    if violation:
        return violation
    seq = order.next_transaction_seq
    balances = {m.payment_method_id: m.balance or Decimal(0) for m in order.payment_methods}
    refunds: list[NewTransaction] = []
    for entry in order.transactions:
        method = order.payment_method(entry.payment_method_id)
        if method is None:
            return _missing_method(order, entry.payment_method_id)
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


def _return(args: ReturnArgs, order: OrderFacts, rules: PolicyRules) -> ActionPlan | Violation:
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
                                    ("return_payment_method_id", method.payment_method_id)))


def _item_change(args: ItemChangeArgs, order: OrderFacts,
                 rules: PolicyRules) -> tuple[tuple[ItemChange, ...], Decimal, PaymentMethod] | Violation:
    """The checks an exchange and a modification share, in the reference's order: the pairs,
    the price difference (new prices minus old, to the cent), the payment method, and a gift
    card covering a positive difference."""
    changes = select_item_changes(order, args, rules)
    if isinstance(changes, Violation):
        return changes
    difference = sum((c.new.price - c.old_price for c in changes), Decimal(0))
    method = resolve_payment_method(order, args.payment_method_id, rules)
    if isinstance(method, Violation):
        return method
    violation = check_gift_card_covers(method, difference, "the price difference", rules)
    return violation or (changes, difference, method)


def _exchange(args: ItemChangeArgs, order: OrderFacts, rules: PolicyRules) -> ActionPlan | Violation:
    """The reference's exchange: the request is recorded on the order (status and the four
    `exchange_*` fields); no money moves and no line changes yet."""
    violation = check_status(ActionName.EXCHANGE_ITEMS, order, "delivered", rules)
    if violation:
        return violation
    checked = _item_change(args, order, rules)
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
                      order_fields=fields)


def _modify(args: ItemChangeArgs, order: OrderFacts, rules: PolicyRules) -> ActionPlan | Violation:
    """The reference's modification: one entry for the difference (a payment when positive,
    otherwise a refund, of its absolute value; a gift card's balance moves by it), each pair's
    line rewritten to the new item, and the status "pending (item modified)"."""
    violation = check_status(ActionName.MODIFY_ITEMS, order, "pending", rules)
    if violation:
        return violation
    checked = _item_change(args, order, rules)
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
                      payment_method=method, new_total=total)


def _change_payment(args: PaymentChangeArgs, order: OrderFacts, rules: PolicyRules) -> ActionPlan | Violation:
    """The reference's payment change: a payment of the same amount with the new method, then a
    refund to the original one; gift cards are debited and credited at once. The status stays."""
    checked = check_payment_change(order, args, rules)
    if isinstance(checked, Violation):
        return checked
    payment, method = checked
    old = order.payment_method(payment.payment_method_id)
    if old is None:
        return _missing_method(order, payment.payment_method_id)
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


def plan_action(action: ActionName, args: ActionArgs, facts: Mapping[str, Any], now: datetime,
                rules: PolicyRules) -> ActionPlan | Violation:
    """Check the policy on `facts` (as `queries.read_facts` returns them) and compute the effect.
    `now` is the store's clock; no rule of the policy depends on the date."""
    del now
    if isinstance(args, DefaultAddressArgs):
        violation = check_address_country(args.address, rules)
        if violation:
            return violation
        customer = CustomerFacts.from_graph(facts)
        return ActionPlan(action=action, args=args, order_id=None, old_address=customer.default_address,
                          new_address=args.address)
    order = OrderFacts.from_graph(facts)
    if isinstance(args, OrderAddressArgs):
        violation = check_order_address(order, args.address, rules)
        if violation:
            return violation
        return ActionPlan(action=action, args=args, order_id=order.order_id, old_address=order.ship_to,
                          new_address=args.address, order_lines=order.lines)
    if isinstance(args, CancelArgs):
        return _cancel(args, order, rules)
    if isinstance(args, ItemChangeArgs):
        return (_exchange if action is ActionName.EXCHANGE_ITEMS else _modify)(args, order, rules)
    if isinstance(args, PaymentChangeArgs):
        return _change_payment(args, order, rules)
    return _return(args, order, rules)


# ---------------------------------------------------------------------------------- wording
@lru_cache(maxsize=1)
def load_wording() -> dict[str, Any]:
    """`wording.yaml` beside this module (read once, on first use)."""
    text = resources.files("csagent.actions").joinpath("wording.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def _change_text(change: ItemChange) -> str:
    """`Office Chair (black, fabric) -> (blue, leather), $488.81 -> $512.00`."""
    old = change.line.values() or change.line.option_text
    new = change.new.values() or change.new.option_text
    return f"{change.line.name} ({old}) -> ({new}), {usd(change.old_price)} -> {usd(change.new.price)}"


def _difference_key(difference: Decimal) -> str:
    return "pay" if difference > 0 else "refund" if difference < 0 else "none"


def _fields(plan: ActionPlan, threshold: Decimal) -> dict[str, str]:
    wording = load_wording()
    fields = {"order_id": plan.order_id or "", "threshold": usd(threshold),
              "old_address": plan.old_address.one_line() if plan.old_address else wording["no_address"],
              "new_address": plan.new_address.one_line() if plan.new_address else ""}
    if isinstance(plan.args, CancelArgs):
        fields["reason"] = plan.args.reason
    # Returned items with their options (which one goes back); a whole order by name.
    shown = [(x.label(), x.price) for x in plan.lines] or [(x.name, x.price) for x in plan.order_lines]
    fields["items"] = ", ".join(f"{label} ({usd(price)})" for label, price in shown)
    if plan.refund:
        fields.update(amount=usd(plan.refund.amount), method=plan.refund.method.label(),
                      timing=plan.refund.timing)
    refunds = [t for t in plan.transactions if t.type == "refund"]
    if plan.action is ActionName.CANCEL_ORDER and refunds:
        fields["refunds"] = "; ".join(f"{usd(t.amount)} to {t.method.label()}, "
                                      f"{rules_timing(t.method)}" for t in refunds)
    if plan.changes:
        fields["changes"] = "; ".join(_change_text(c) for c in plan.changes)
    if plan.payment_method is not None:
        fields["method"] = plan.payment_method.label()
    if plan.price_difference is not None:
        fields["difference"] = usd(abs(plan.price_difference))
    if plan.old_payment is not None and plan.old_method is not None:
        fields.update(amount=usd(plan.old_payment.amount), old_method=plan.old_method.label(),
                      timing=rules_timing(plan.old_method))
    return fields


def rules_timing(method: PaymentMethod) -> str:
    """When a refund to `method` shows ("immediately", "within 5 to 7 business days")."""
    return load_rules().refund_timing_for(method.source)


def _render(templates: Sequence[str], fields: Mapping[str, str]) -> list[str]:
    return [t.format(**fields) for t in templates]


def _difference_line(plan: ActionPlan, templates: Mapping[str, str], fields: Mapping[str, str]) -> list[str]:
    if plan.price_difference is None:
        return []
    return [templates[_difference_key(plan.price_difference)].format(**fields)]


def summary_lines(plan: ActionPlan, *, requires_approval: bool = False,
                  threshold: Decimal = DEFAULT_APPROVAL_THRESHOLD) -> list[str]:
    """The lines listed back to the customer before the explicit yes."""
    wording = load_wording()["proposal"]
    fields = _fields(plan, threshold)
    lines: list[str] = []
    for template in wording[plan.action.value]:
        if template == "{difference_line}":
            lines += _difference_line(plan, wording["difference"], fields)
        elif "{amount}" in template and plan.refund is None and plan.old_payment is None:
            continue  # nothing was paid: no refund line
        elif "{refunds}" in template and "refunds" not in fields:
            continue
        else:
            lines.append(template.format(**fields))
    if requires_approval:
        lines.append(wording["approval"].format(**fields))
    return lines


def done_lines(plan: ActionPlan) -> list[str]:
    """What changed, in the words the customer reads after the action."""
    wording = load_wording()["done"]
    fields = _fields(plan, DEFAULT_APPROVAL_THRESHOLD)
    lines: list[str] = []
    for template in wording[plan.action.value]:
        if template == "{difference_line}":
            lines += _difference_line(plan, wording["difference"][plan.action.value], fields)
        elif "{amount}" in template and plan.refund is None:
            continue
        else:
            lines.append(template.format(**fields))
    variants = wording["refund"]
    for entry in plan.transactions:
        if entry.type == "refund" and plan.action in (ActionName.CANCEL_ORDER, ActionName.CHANGE_PAYMENT):
            line = variants.get(entry.method.source, variants["default"])
            lines.append(line.format(amount=usd(entry.amount), method=entry.method.label()))
    return lines


# ------------------------------------------------------------------------------- proposal
class ActionProposal(BaseModel):
    """What the customer confirms. It travels in the conversation state between the two phases;
    `execute` trusts none of it beyond the action and its arguments: it re-derives the key from
    the authenticated customer and re-checks the policy on the current facts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: ActionName
    args: dict[str, Any]
    order_id: str | None = None
    summary: list[str] = Field(default_factory=list)
    amount: float | None = None
    refund_payment_method_id: str | None = None
    requires_approval: bool = False
    price_difference: float | None = None
    confirmation_id: str | None = None
    idempotency_key: str | None = None


def idempotency_key(customer_id: str, action: ActionName | str, args: Mapping[str, Any],
                    confirmation_id: str) -> str:
    """A deterministic key for one confirmed request: SHA-256 over the customer, the action, the
    normalised arguments and the confirmation id (session id + turn). The same confirmation
    replayed, retried or resumed gives the same key; a new confirmation gives a new one."""
    payload = {"v": KEY_VERSION, "customer_id": customer_id, "action": str(action), "args": args,
               "confirmation_id": confirmation_id}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_confirmation_id(value: Any) -> str:
    """A non-empty confirmation id of reasonable length; ArgsError otherwise."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_CONFIRMATION_ID_CHARS:
        raise ArgsError("A confirmation id (session id and turn) is required to carry out an action.")
    return value.strip()


def requires_approval(amount: Decimal | None, threshold: Decimal) -> bool:
    """A refund strictly above the threshold needs a human approver."""
    return amount is not None and amount > threshold


def build_proposal(plan: ActionPlan, customer_id: str, confirmation_id: str | None,
                   threshold: Decimal) -> ActionProposal:
    """The proposal for a plan (the key only when the confirmation id is known)."""
    args = args_dict(plan.args)
    approval = requires_approval(plan.amount, threshold)
    key = idempotency_key(customer_id, plan.action, args, confirmation_id) if confirmation_id else None
    return ActionProposal(
        action=plan.action, args=args, order_id=plan.order_id,
        summary=summary_lines(plan, requires_approval=approval, threshold=threshold),
        amount=float(plan.amount) if plan.amount is not None else None,
        refund_payment_method_id=plan.refund.method.payment_method_id if plan.refund else None,
        requires_approval=approval, price_difference=_cents(plan.price_difference),
        confirmation_id=confirmation_id, idempotency_key=key)


def not_found_message(action: ActionName, order_id: str | None) -> str:
    """The same words whether the order does not exist or belongs to someone else."""
    if action.on_order:
        return f"No order {order_id} was found in your account."
    return "Your customer profile was not found."


def parse_action(value: Any) -> ActionName:
    """The action by name; ArgsError listing the known actions otherwise."""
    try:
        return ActionName(str(value))
    except ValueError:
        known = ", ".join(a.value for a in ActionName)
        raise ArgsError(f"Unknown action '{value}'; expected one of: {known}.") from None


def propose(task: Task, action: ActionName | str, args: Mapping[str, Any], ctx: ToolContext, *,
            now: datetime, confirmation_id: str | None = None, rules: PolicyRules | None = None,
            approval_threshold: Decimal = DEFAULT_APPROVAL_THRESHOLD) -> ActionProposal | ToolResult:
    """Validate, read the customer's current facts, check the policy and describe the change.

    Nothing is written. Failures come back as a failed `ToolResult`: VALIDATION (arguments the
    customer can correct), NO_RESULTS (no such order in this customer's account - the same words
    for another customer's order), BUSINESS_RULE_VIOLATION (the policy says no, with the reason),
    PERMISSION_DENIED (no authenticated customer).
    """
    rules = rules or load_rules()
    if not ctx.customer_id:
        return ToolResult.failed(task, ErrorType.PERMISSION_DENIED, "Please sign in to change your account.")
    try:
        name = parse_action(action)
        parsed = parse_args(name, args, rules)
        confirmation = check_confirmation_id(confirmation_id) if confirmation_id is not None else None
    except ArgsError as exc:
        return ToolResult.failed(task, ErrorType.VALIDATION, str(exc))
    order_id = getattr(parsed, "order_id", None)
    read = queries.read_facts(ctx.graph, name, ctx.customer_id, order_id)
    if read.facts is None:
        return ToolResult.failed(task, ErrorType.NO_RESULTS, not_found_message(name, order_id))
    plan = plan_action(name, parsed, read.facts, now, rules)
    if isinstance(plan, Violation):
        return ToolResult.failed(task, plan.error_type, plan.message)
    return build_proposal(plan, ctx.customer_id, confirmation, approval_threshold)
