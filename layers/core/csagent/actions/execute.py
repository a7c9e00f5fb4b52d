"""Phase two of a customer action: carry out a confirmed proposal exactly once, with an audit
record, after checking the policy again on the current facts.

`execute` trusts only the proposal's action and arguments. It re-derives the idempotency key from
the authenticated customer (a proposal made for someone else, or altered, does not match), then,
inside the idempotent section (`IdempotentRunner`, Powertools on DynamoDB):

1. reads the current facts and any earlier execution of the same key (its audit record);
2. if the key was executed before, returns that result - nothing is re-checked or re-written;
3. re-runs the policy (`proposals.plan_action`) on the current facts: the order may have shipped
   since the proposal; checks the refund is still what the customer confirmed, and that a refund
   above the approval threshold has an approver;
4. applies the plan in ONE Neo4j write transaction (`queries.apply_write`) that locks the
   customer, applies only if the facts are still those the policy just approved (otherwise it
   reads and checks again, up to `MAX_ATTEMPTS`), and MERGEs the AuditEvent on the key.

Exactly once, twice over: the DynamoDB record replays a stored result without touching Neo4j;
the AuditEvent's unique key makes a replay a no-op even if that record is lost (belt and braces).

Outcomes that are not a success leave the idempotent section as `NotApplied` (Powertools then
stores nothing, so a later retry runs again) and come back as a failed `ToolResult`.
Infrastructure errors (Neo4j, DynamoDB) propagate; the tool entry types them.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from csagent.actions import queries
from csagent.actions.idempotency import IdempotentRunner
from csagent.actions.kinds import ActionArgs, args_dict, parse_args
from csagent.actions.plan import ActionPlan
from csagent.actions.policy import ActionName, ArgsError, PolicyRules, Violation, load_rules, usd
from csagent.actions.proposals import (
    DEFAULT_APPROVAL_THRESHOLD,
    TRANSLATED,
    ActionProposal,
    check_confirmation_id,
    done_lines,
    idempotency_key,
    not_found_message,
    plan_action,
    requires_approval,
)
from csagent.domain.models import ErrorType, Task, ToolResult

if TYPE_CHECKING:
    from csagent.tools.context import ToolContext

logger = logging.getLogger(__name__)

MISMATCH = "This confirmation does not match the proposed action; please confirm again."
MAX_ATTEMPTS = 3
"""Read-check-write rounds when the facts keep changing between the read and the write."""


class NotApplied(Exception):  # noqa: N818 - an outcome, not an error
    """Carries a failed `ToolResult` out of the idempotent section (so nothing is stored)."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error.message if result.error else "not applied")
        self.result = result


def iso(moment: datetime) -> str:
    """The graph's date format: ISO-8601 UTC to the second with a trailing Z."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def audit_record(plan: ActionPlan, facts: Mapping[str, Any], *, customer_id: str, key: str,
                 now: datetime, confirmation_id: str, approved_by: str | None) -> dict[str, Any]:
    """The AuditEvent's properties: who did what when, the readable summary, before and after."""
    return {
        "audit_id": uuid.uuid4().hex, "action": plan.action.value, "actor_customer_id": customer_id,
        "at": iso(now), "idempotency_key": key, "summary": done_lines(plan),
        **{f"summary_{lang}": done_lines(plan, lang) for lang in TRANSLATED},
        "before_json": json.dumps(plan.before(facts), sort_keys=True),
        "after_json": json.dumps(plan.after(), sort_keys=True),
        "order_id": plan.order_id, "confirmation_id": confirmation_id, "approved_by": approved_by,
    }


def result_from_audit(audit: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's success data, rebuilt from the audit record alone, so a replay answers exactly
    like the first execution."""
    summary = [str(line) for line in audit.get("summary") or []]
    # A record written before an action was worded in other languages has English alone.
    summaries = {lang: [str(line) for line in audit[f"summary_{lang}"]] for lang in TRANSLATED
                 if audit.get(f"summary_{lang}")}
    return {"action": audit.get("action"), "order_id": audit.get("order_id"), "summary": summary,
            "summaries": summaries,
            "message": " ".join(summary), "changes": json.loads(audit.get("after_json") or "{}"),
            "audit_id": audit.get("audit_id"), "at": audit.get("at"),
            "idempotency_key": audit.get("idempotency_key")}


def _changed_since_proposal(proposal: ActionProposal, plan: ActionPlan) -> str | None:
    """Why the current plan is not what the customer confirmed (None when it is): another refund,
    or another price difference (a proposal made before the field existed has none to compare)."""
    amount = float(plan.amount) if plan.amount is not None else None
    method = plan.refund.method.payment_method_id if plan.refund else None
    if amount != proposal.amount or method != proposal.refund_payment_method_id:
        shown = usd(plan.amount) if plan.amount is not None else "no refund"
        return (f"Order {plan.order_id} has changed since you confirmed (the refund would now be {shown}). "
                "Please review the new details and confirm again.")
    difference = float(plan.price_difference) if plan.price_difference is not None else None
    if proposal.price_difference is not None and difference != proposal.price_difference:
        shown = usd(abs(plan.price_difference)) if plan.price_difference is not None else "none"
        return (f"Order {plan.order_id} has changed since you confirmed (the price difference would now be "
                f"{shown}). Please review the new details and confirm again.")
    return None


class _Execution:
    """One confirmed request being carried out (the state shared by the steps of `execute`)."""

    def __init__(self, task: Task, proposal: ActionProposal, args: ActionArgs, ctx: ToolContext, *,
                 customer_id: str, key: str, confirmation_id: str, now: datetime, approved_by: str | None,
                 rules: PolicyRules, threshold: Decimal) -> None:
        self.task, self.proposal, self.args, self.ctx = task, proposal, args, ctx
        self.customer_id, self.key, self.confirmation_id = customer_id, key, confirmation_id
        self.now, self.approved_by, self.rules, self.threshold = now, approved_by, rules, threshold

    def fail(self, error_type: ErrorType, message: str, *, retryable: bool = False) -> NotApplied:
        return NotApplied(ToolResult.failed(self.task, error_type, message, retryable=retryable))

    def _plan(self, facts: Mapping[str, Any]) -> ActionPlan:
        plan = plan_action(self.proposal.action, self.args, facts, self.now, self.rules)
        if isinstance(plan, Violation):
            raise self.fail(plan.error_type, plan.message)
        changed = _changed_since_proposal(self.proposal, plan)
        if changed:
            raise self.fail(ErrorType.BUSINESS_RULE_VIOLATION, changed)
        if requires_approval(plan.amount, self.threshold) and not self.approved_by:
            amount = usd(plan.amount or Decimal(0))
            raise self.fail(ErrorType.PERMISSION_DENIED,
                            f"A refund of {amount} is over {usd(self.threshold)}, so a member of our team "
                            "approves it before it is made.")
        return plan

    def _done_meanwhile(self, action: ActionName, order_id: str | None) -> dict[str, Any] | None:
        """The replay of this very request if it was executed concurrently, else None.

        `read_facts` looks the audit up before the facts (read committed), so an execution of the
        same request that commits between the two lookups is seen only as facts that forbid it
        ("the order is already cancelled"): a refusal is checked against the audit once more
        before it is reported."""
        done = queries.read_facts(self.ctx.graph, action, self.customer_id, order_id, self.key).done
        if done is None:
            return None
        logger.info("action %s executed concurrently (key %s): replaying its audit", action, self.key)
        return self._own(done)

    def _own(self, audit: Mapping[str, Any]) -> dict[str, Any]:
        if audit.get("actor_customer_id") != self.customer_id:
            logger.error("idempotency key %s belongs to another customer's audit event", self.key)
            raise self.fail(ErrorType.UNKNOWN, "This action could not be carried out.")
        return result_from_audit(audit)

    def __call__(self) -> dict[str, Any]:
        """Read, check and write until the write finds the facts the check approved."""
        action, order_id = self.proposal.action, getattr(self.args, "order_id", None)
        for _ in range(MAX_ATTEMPTS):
            read = queries.read_facts(self.ctx.graph, action, self.customer_id, order_id, self.key)
            if read.done is not None:
                logger.info("action %s already executed (key %s): replaying its audit", action, self.key)
                return self._own(read.done)
            if read.facts is None:
                raise self.fail(ErrorType.NO_RESULTS, not_found_message(action, order_id))
            try:
                plan = self._plan(read.facts)
            except NotApplied:
                replay = self._done_meanwhile(action, order_id)
                if replay is None:
                    raise
                return replay
            audit = audit_record(plan, read.facts, customer_id=self.customer_id, key=self.key, now=self.now,
                                 confirmation_id=self.confirmation_id, approved_by=self.approved_by)
            params = {**plan.write_params(at=audit["at"]), "customer_id": self.customer_id,
                      "idempotency_key": self.key, "expected": read.facts, "audit": audit}
            outcome = queries.apply_write(self.ctx.graph, action, params)
            if outcome.audit is not None:
                return self._own(outcome.audit)
            if not outcome.found:
                raise self.fail(ErrorType.NO_RESULTS, not_found_message(action, order_id))
            logger.info("facts changed before the write of %s (key %s); checking again", action, self.key)
        subject = f"Order {order_id}" if order_id else "Your account"
        raise self.fail(ErrorType.TRANSIENT, f"{subject} is being changed right now; please try again.",
                        retryable=True)


def _confirmation(proposal: ActionProposal, given: str | None) -> str:
    if proposal.confirmation_id and given and given != proposal.confirmation_id:
        raise ArgsError(MISMATCH)
    return check_confirmation_id(proposal.confirmation_id or given)


def execute(task: Task, proposal: ActionProposal | Mapping[str, Any], ctx: ToolContext, *, now: datetime,
            idempotency: IdempotentRunner | None, confirmation_id: str | None = None,
            approved_by: str | None = None, rules: PolicyRules | None = None,
            approval_threshold: Decimal = DEFAULT_APPROVAL_THRESHOLD) -> ToolResult:
    """Carry out a confirmed proposal once; see the module docstring.

    `confirmation_id` identifies the customer's yes (session id + turn) when the proposal was made
    without one. `approved_by` is the human approver of a refund above `approval_threshold`; it
    must come from the approval step, never from message text. `idempotency=None` leaves only the
    Neo4j guard (tests; a deployment always passes the DynamoDB runner).
    """
    rules = rules or load_rules()
    if not ctx.customer_id:
        return ToolResult.failed(task, ErrorType.PERMISSION_DENIED, "Please sign in to change your account.")
    try:
        confirmed = ActionProposal.model_validate(proposal)
        args = parse_args(confirmed.action, confirmed.args, rules)
        confirmation = _confirmation(confirmed, confirmation_id)
    except ValidationError:
        return ToolResult.failed(task, ErrorType.VALIDATION, "The action to carry out is malformed.")
    except ArgsError as exc:
        return ToolResult.failed(task, ErrorType.VALIDATION, str(exc))
    key = idempotency_key(ctx.customer_id, confirmed.action, args_dict(args), confirmation)
    if confirmed.idempotency_key and confirmed.idempotency_key != key:
        return ToolResult.failed(task, ErrorType.VALIDATION, MISMATCH)
    run = _Execution(task, confirmed, args, ctx, customer_id=ctx.customer_id, key=key,
                     confirmation_id=confirmation, now=now, approved_by=approved_by, rules=rules,
                     threshold=approval_threshold)
    try:
        data = idempotency.run_once(key, run) if idempotency is not None else run()
    except NotApplied as outcome:
        return outcome.result
    return ToolResult.ok(task, {"phase": "execute", **data})
