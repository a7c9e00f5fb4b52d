"""Phase one of a customer action: what would change, listed back to the customer before the
explicit yes, with the refund amount, the approval flag and the idempotency key.

`plan_action` (pure) turns validated arguments and the current facts into an `ActionPlan` through
the action's `ActionKind` (`csagent.actions.kinds`: its policy checks, then the exact effect, as
the benchmark's reference tools make it: the new status, the dataset fields the write sets
(`cancel_reason`, `return_items`, `return_payment_method_id`, `exchange_*`), the payment-history
entries it appends and the gift-card balances they move, the order lines it rewrites, the
address; and the before/after record the audit keeps). Both phases run it: `propose` on the facts
at proposal time, `execute` again on the facts inside the write. `summary_lines` and `done_lines`
word a plan with the kind's lines and the shared ones in `wording.yaml`, or in another language
with those of `wording_<lang>.yaml` (`TRANSLATED`).

`propose` reads the facts scoped to the authenticated customer and returns an `ActionProposal`
or a failed `ToolResult` (VALIDATION, NO_RESULTS, BUSINESS_RULE_VIOLATION, PERMISSION_DENIED).
Infrastructure errors (Neo4j) propagate; the tool entry turns them into typed results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from csagent import yamlio
from csagent.actions import queries
from csagent.actions.kinds import ActionArgs, args_dict, kind, parse_args
from csagent.actions.plan import ActionPlan, ItemChange, NewTransaction, Refund, as_float
from csagent.actions.policy import (
    ActionName,
    ArgsError,
    PaymentMethod,
    PolicyRules,
    Violation,
    load_rules,
    usd,
)
from csagent.domain.actions import ActionProposal
from csagent.domain.models import ErrorType, Task, ToolResult

if TYPE_CHECKING:
    from csagent.tools.context import ToolContext

DEFAULT_APPROVAL_THRESHOLD = Decimal("500.00")
KEY_VERSION = 1
MAX_CONFIRMATION_ID_CHARS = 200

__all__ = [
    "DEFAULT_APPROVAL_THRESHOLD", "ActionArgs", "ActionPlan", "ActionProposal", "ItemChange",
    "TRANSLATED", "NewTransaction", "Refund", "args_dict", "build_proposal", "check_confirmation_id",
    "done_lines", "idempotency_key", "kind_lines", "load_wording", "method_text", "not_found_message",
    "parse_action", "parse_args", "plan_action", "propose", "requires_approval", "rules_timing",
    "summary_lines", "wording_fields",
]


# ------------------------------------------------------------------------------------- plan
def plan_action(action: ActionName, args: ActionArgs, facts: Mapping[str, Any], now: datetime,
                rules: PolicyRules) -> ActionPlan | Violation:
    """Check the policy on `facts` (as `queries.read_facts` returns them) and compute the effect
    of `action`, whose arguments `args` are (`parse_args`). `now` is the store's clock; no rule
    of the policy depends on the date."""
    del now
    entry = kind(action)
    if not isinstance(args, entry.args_type):
        raise TypeError(f"{action.value} takes {entry.args_type.__name__}, not {type(args).__name__}")
    return entry.plan(args, facts, rules)


# ---------------------------------------------------------------------------------- wording
#: The languages besides English an action is worded in (`wording_<lang>.yaml`). A proposal and
#: its outcome carry their lines in each (`ActionProposal.summaries`, the audit's
#: `summary_<lang>`), so the reply lists a change back in the customer's language.
TRANSLATED = ("zh",)


@lru_cache(maxsize=len(TRANSLATED) + 1)
def load_wording(lang: str = "en") -> dict[str, Any]:
    """`wording.yaml` beside this module, or its `lang` twin `wording_<lang>.yaml` (each read
    once, on first use)."""
    name = "wording.yaml" if lang == "en" else f"wording_{lang}.yaml"
    data: dict[str, Any] = yamlio.load_file(resources.files("csagent.actions").joinpath(name))
    return data


def kind_lines(action: ActionName, part: str, lang: str = "en") -> Any:
    """An action's own `proposal` or `done` lines (a tuple), or its `done_difference` (a mapping),
    in `lang`."""
    if lang == "en":
        return getattr(kind(action), part)
    return load_wording(lang)["kinds"][action.value].get(part, {})


def method_text(method: PaymentMethod, lang: str = "en") -> str:
    """How the customer knows a payment method, in `lang` ("your Visa ending 1020")."""
    if lang == "en":
        return method.label()
    templates = load_wording(lang)["method"]
    brand = method.brand.title() if method.brand else ""
    if method.source == "credit_card":
        template = templates["credit_card"] if method.last_four else templates["credit_card_no_digits"]
    else:
        template = templates.get(method.source) or templates["other"]
    return str(template.format(brand=brand or method.source.replace("_", " "), last_four=method.last_four,
                               id=method.payment_method_id, source=method.source.replace("_", " ")))


def _change_text(change: ItemChange) -> str:
    """`Office Chair (black, fabric) -> (blue, leather), $488.81 -> $512.00`."""
    old = change.line.values() or change.line.option_text
    new = change.new.values() or change.new.option_text
    return f"{change.line.name} ({old}) -> ({new}), {usd(change.old_price)} -> {usd(change.new.price)}"


def _difference_key(difference: Decimal) -> str:
    return "pay" if difference > 0 else "refund" if difference < 0 else "none"


def wording_fields(plan: ActionPlan, threshold: Decimal, lang: str = "en") -> dict[str, str]:
    """The facts an action's lines are filled with, in `lang`: {order_id}, {items} ("Water Bottle
    ($47.84), Office Chair ($488.81)"), {amount}, {method} ("your gift card (gift_card_7219486)"),
    {timing} ("immediately" or "within 5 to 7 business days"), {changes} ("Office Chair (black,
    fabric) -> (blue, leather), $488.81 -> $512.00; ..."), {difference} (the price difference,
    unsigned), {old_method}, {old_address}, {new_address}, {threshold}, {refunds} (each refund
    entry with its amount, method and timing) - whichever the plan has - and the action's own
    (`ActionKind.own_fields`: a cancellation's {reason}, worded by the language's `values`)."""
    wording = load_wording(lang)
    fields = {"order_id": plan.order_id or "", "threshold": usd(threshold),
              "old_address": plan.old_address.one_line() if plan.old_address else wording["no_address"],
              "new_address": plan.new_address.one_line() if plan.new_address else ""}
    # Returned items with their options (which one goes back); a whole order by name.
    shown = [(x.label(), x.price) for x in plan.lines] or [(x.name, x.price) for x in plan.order_lines]
    fields["items"] = ", ".join(f"{label} ({usd(price)})" for label, price in shown)
    if plan.refund:
        fields.update(amount=usd(plan.refund.amount), method=method_text(plan.refund.method, lang),
                      timing=rules_timing(plan.refund.method, lang))
    if plan.changes:
        fields["changes"] = "; ".join(_change_text(c) for c in plan.changes)
    if plan.payment_method is not None:
        fields["method"] = method_text(plan.payment_method, lang)
    if plan.price_difference is not None:
        fields["difference"] = usd(abs(plan.price_difference))
    if plan.old_payment is not None and plan.old_method is not None:
        fields.update(amount=usd(plan.old_payment.amount), old_method=method_text(plan.old_method, lang),
                      timing=rules_timing(plan.old_method, lang))
    refunds = [t for t in plan.transactions if t.type == "refund"]
    if refunds:
        entry = wording["done"]["refund_entry"]
        fields["refunds"] = wording["done"]["refund_separator"].join(
            entry.format(amount=usd(t.amount), method=method_text(t.method, lang),
                         timing=rules_timing(t.method, lang)) for t in refunds)
    words = wording.get("values") or {}
    fields.update({name: (words.get(name) or {}).get(value, value)
                   for name, value in kind(plan.action).own_fields(plan.args, plan).items()})
    return fields


def rules_timing(method: PaymentMethod, lang: str = "en") -> str:
    """When a refund to `method` shows ("immediately", "within 5 to 7 business days"), in `lang`."""
    return load_rules().refund_timing_for(method.source, lang)


def _difference_line(plan: ActionPlan, templates: Mapping[str, str], fields: Mapping[str, str]) -> list[str]:
    if plan.price_difference is None:
        return []
    return [templates[_difference_key(plan.price_difference)].format(**fields)]


def summary_lines(plan: ActionPlan, *, requires_approval: bool = False,
                  threshold: Decimal = DEFAULT_APPROVAL_THRESHOLD, lang: str = "en") -> list[str]:
    """The lines listed back to the customer before the explicit yes, in `lang`."""
    wording = load_wording(lang)["proposal"]
    fields = wording_fields(plan, threshold, lang)
    lines: list[str] = []
    for template in kind_lines(plan.action, "proposal", lang):
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


def done_lines(plan: ActionPlan, lang: str = "en") -> list[str]:
    """What changed, in the words the customer reads after the action, in `lang`."""
    fields = wording_fields(plan, DEFAULT_APPROVAL_THRESHOLD, lang)
    lines: list[str] = []
    for template in kind_lines(plan.action, "done", lang):
        if template == "{difference_line}":
            lines += _difference_line(plan, kind_lines(plan.action, "done_difference", lang), fields)
        elif "{amount}" in template and plan.refund is None:
            continue
        else:
            lines.append(template.format(**fields))
    if kind(plan.action).done_refunds:
        variants = load_wording(lang)["done"]["refund"]
        for refund in (t for t in plan.transactions if t.type == "refund"):
            line = variants.get(refund.method.source, variants["default"])
            lines.append(line.format(amount=usd(refund.amount), method=method_text(refund.method, lang)))
    return lines


# ------------------------------------------------------------------------------- proposal
# `ActionProposal` (what the customer confirms) is a domain shape: `csagent.domain.actions`.
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
        summaries={lang: summary_lines(plan, requires_approval=approval, threshold=threshold, lang=lang)
                   for lang in TRANSLATED},
        amount=float(plan.amount) if plan.amount is not None else None,
        refund_payment_method_id=plan.refund.method.payment_method_id if plan.refund else None,
        requires_approval=approval, price_difference=as_float(plan.price_difference),
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
