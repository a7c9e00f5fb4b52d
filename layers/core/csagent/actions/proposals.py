"""Phase one of a customer action: what would change, listed back to the customer before the
explicit yes, with the refund amount, the approval flag and the idempotency key.

`plan_action` (pure) turns validated arguments and the current facts into an `ActionPlan`: the
policy checks of `policy`, then the exact effect (new status, address, refund transaction and
gift-card balance, returned lines) and the before/after record the audit keeps. Both phases run
it: `propose` on the facts at proposal time, `execute` again on the facts inside the write.

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
    OrderAddressArgs,
    OrderFacts,
    OrderLine,
    PaymentMethod,
    PolicyRules,
    ReturnArgs,
    Violation,
    args_dict,
    check_address_country,
    check_cancel,
    check_order_address,
    check_return_status,
    check_return_window,
    load_rules,
    parse_args,
    resolve_refund_method,
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
    """Money going back: to which method, when, and - for a cancellation, refunded at once - the
    refund transaction and the gift card's new balance."""

    amount: Decimal
    method: PaymentMethod
    timing: str
    transaction_id: str | None = None
    seq: int | None = None
    new_balance: Decimal | None = None


@dataclass(frozen=True)
class ActionPlan:
    """The effect an action will have on the current facts (pure data, no I/O)."""

    action: ActionName
    args: ActionArgs
    order_id: str | None
    new_status: str | None = None
    old_address: Address | None = None
    new_address: Address | None = None
    refund: Refund | None = None
    lines: tuple[OrderLine, ...] = ()
    order_lines: tuple[OrderLine, ...] = ()

    @property
    def amount(self) -> Decimal | None:
        return self.refund.amount if self.refund else None

    def before(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        """What the change replaces, for the audit record."""
        record: dict[str, Any] = {}
        if self.order_id:
            record["order_id"] = self.order_id
            record["status"] = facts["order"].get("status")
        if self.old_address is not None or self.new_address is not None:
            record["address"] = self.old_address.as_dict() if self.old_address else None
        if self.refund and self.refund.new_balance is not None:
            record["balance"] = _cents(self.refund.method.balance)
        return record

    def after(self) -> dict[str, Any]:
        """What the change sets, for the audit record and the tool's result."""
        record: dict[str, Any] = {}
        if self.order_id:
            record["order_id"] = self.order_id
        if self.new_status:
            record["status"] = self.new_status
        if self.new_address is not None:
            record["address"] = self.new_address.as_dict()
        if self.lines:
            record["items"] = [{"line_id": x.line_id, "item_id": x.item_id, "name": x.name,
                                "price": float(x.price)} for x in self.lines]
        if self.refund:
            refund = self.refund
            record["refund"] = {
                "amount": float(refund.amount), "payment_method_id": refund.method.payment_method_id,
                "timing": refund.timing, "transaction_id": refund.transaction_id,
                "balance": _cents(refund.new_balance),
            }
        return record

    def write_params(self) -> dict[str, Any]:
        """The action-specific parameters of the write transaction (`queries.WRITES`)."""
        params: dict[str, Any] = {"order_id": self.order_id, "order_status": self.new_status}
        if self.new_address is not None:
            params["address"] = self.new_address.as_dict()
        if self.refund is not None:
            refund = self.refund
            params["refund"] = {
                "payment_method_id": refund.method.payment_method_id, "amount": float(refund.amount),
                "transaction_id": refund.transaction_id, "seq": refund.seq,
                "new_balance": _cents(refund.new_balance),
            }
        elif self.action is ActionName.CANCEL_ORDER:
            params["refund"] = None
        params["line_ids"] = [x.line_id for x in self.lines]
        return params


def _cancel(args: CancelArgs, order: OrderFacts, rules: PolicyRules) -> ActionPlan | Violation:
    violation = check_cancel(order, rules)
    if violation:
        return violation
    refund = None
    amount = order.paid_total
    method = order.original_payment_method
    if amount > 0:
        if method is None:
            return Violation(ErrorType.BUSINESS_RULE_VIOLATION,
                             f"I cannot find the payment method order {order.order_id} was paid with, so I "
                             "cannot refund it. A human agent can help.")
        seq = order.next_transaction_seq
        refund = Refund(amount=amount, method=method, timing=rules.refund_timing_for(method.source),
                        transaction_id=f"{order.order_id}/{seq}", seq=seq,
                        new_balance=(method.balance or Decimal(0)) + amount if method.is_gift_card else None)
    return ActionPlan(action=ActionName.CANCEL_ORDER, args=args, order_id=order.order_id,
                      new_status=rules.status("cancelled"), refund=refund, order_lines=order.lines)


def _return(args: ReturnArgs, order: OrderFacts, now: datetime, rules: PolicyRules) -> ActionPlan | Violation:
    violation = check_return_status(order, rules)
    if violation:
        return violation
    lines = select_return_lines(order, args.item_ids, args.named)
    if isinstance(lines, Violation):
        return lines
    violation = check_return_window(order, lines, now, rules)
    if violation:
        return violation
    method = resolve_refund_method(order, args.payment_method_id, rules)
    if isinstance(method, Violation):
        return method
    # The items as ids, whichever way the customer named them: what the "yes" confirms and
    # what `execute` re-checks.
    resolved = ReturnArgs(order_id=args.order_id, item_ids=tuple(sorted(x.item_id for x in lines)),
                          payment_method_id=method.payment_method_id)
    amount = sum((x.price for x in lines), Decimal(0))
    refund = Refund(amount=amount, method=method, timing=rules.refund_timing_for(method.source))
    return ActionPlan(action=ActionName.RETURN_ITEMS, args=resolved, order_id=order.order_id,
                      new_status=rules.status("return_requested"), refund=refund, lines=lines,
                      order_lines=order.lines)


def plan_action(action: ActionName, args: ActionArgs, facts: Mapping[str, Any], now: datetime,
                rules: PolicyRules) -> ActionPlan | Violation:
    """Check the policy on `facts` (as `queries.read_facts` returns them) and compute the effect."""
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
    return _return(args, order, now, rules)


# ---------------------------------------------------------------------------------- wording
@lru_cache(maxsize=1)
def load_wording() -> dict[str, Any]:
    """`wording.yaml` beside this module (read once, on first use)."""
    text = resources.files("csagent.actions").joinpath("wording.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


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
    return fields


def _render(templates: Sequence[str], fields: Mapping[str, str]) -> list[str]:
    return [t.format(**fields) for t in templates]


def summary_lines(plan: ActionPlan, *, requires_approval: bool = False,
                  threshold: Decimal = DEFAULT_APPROVAL_THRESHOLD) -> list[str]:
    """The lines listed back to the customer before the explicit yes."""
    wording = load_wording()["proposal"]
    fields = _fields(plan, threshold)
    templates = list(wording[plan.action.value])
    if plan.refund is None:  # nothing was paid: no refund line
        templates = [t for t in templates if "{amount}" not in t]
    lines = _render(templates, fields)
    if requires_approval:
        lines.append(wording["approval"].format(**fields))
    return lines


def done_lines(plan: ActionPlan) -> list[str]:
    """What changed, in the words the customer reads after the action."""
    wording = load_wording()["done"]
    fields = _fields(plan, DEFAULT_APPROVAL_THRESHOLD)
    lines = _render(wording[plan.action.value], fields)
    if plan.action is ActionName.CANCEL_ORDER and plan.refund:
        variants = wording["cancel_refund"]
        lines.append(variants.get(plan.refund.method.source, variants["default"]).format(**fields))
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
        requires_approval=approval, confirmation_id=confirmation_id, idempotency_key=key)


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
