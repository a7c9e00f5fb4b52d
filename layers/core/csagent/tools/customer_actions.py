"""Tool: consequential customer actions - the store's seven writes: update the default address,
change a pending order's address, cancel a pending order, modify a pending order's items or its
payment method, return or exchange delivered items - in two phases.

    task.args (CustomerActionArgs) =
        {"action": "cancel_order" | "return_items" | "exchange_items" | "modify_items"
                   | "change_payment" | "change_order_address" | "update_default_address",
         "args": {...},                      # the action's arguments (propose)
         "phase": "propose" | "execute",     # default "propose"
         "proposal": {...},                  # what the customer confirmed (execute): an ActionProposal
         "confirmation_id": "<session>:<turn>",
         "approved_by": "<approver id>"}     # only from the human-approval step

The action's arguments: cancel_order `{order_id, reason}`; return_items `{order_id, item_ids (or
items_text / product_ids: the customer's words), payment_method_id?}`; exchange_items and
modify_items `{order_id, item_ids, new_item_ids (aligned with item_ids), payment_method_id}`;
change_payment `{order_id, payment_method_id}`; change_order_address `{order_id, address}`;
update_default_address `{address}`. The effects are the benchmark's reference tools' (see
`csagent.actions.policy` and `csagent.actions.proposals`).

propose -> `{"phase", "action", "order_id", "proposal", "summary", "summaries", "amount",
"requires_approval", "requires_confirmation": True}`; nothing is written. execute -> `{"phase",
"action", "order_id", "summary", "summaries", "message", "changes", "audit_id", "at",
"idempotency_key"}`, exactly once per confirmation (see `csagent.actions.execute`).

The customer is always `ToolContext.customer_id` (the authenticated session), never a value in
the arguments. Never raises: bad arguments -> VALIDATION (an unknown phase, an execution without
the proposal or with one that is no `ActionProposal`, is refused when the task is built:
`csagent.domain.task_args`); an order
not in the customer's account -> NO_RESULTS (the same words whether it exists or not); a policy refusal ->
BUSINESS_RULE_VIOLATION with the reason; Neo4j timeouts -> TIMEOUT (retryable); Neo4j or DynamoDB
unavailable, or the same request already being carried out -> TRANSIENT (retryable).

Configuration (settings, read through `csagent.config.get_settings`): `IDEMPOTENCY_TABLE`,
`REFUND_APPROVAL_THRESHOLD`, `STORE_TODAY` (the store's date for audit records and request
dates; unset = today), `CHECKPOINT_TTL_SECONDS` (how long a result is replayed).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from csagent.actions.execute import execute
from csagent.actions.idempotency import DEFAULT_EXPIRES_AFTER_S, IdempotentRunner, idempotency_store
from csagent.actions.proposals import DEFAULT_APPROVAL_THRESHOLD, ActionProposal, propose
from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.domain.task_args import CustomerActionArgs
from csagent.tools.context import ToolContext
from csagent.tools.failures import failed_result

logger = logging.getLogger(__name__)

TOOL_NAME = "customer_actions"
DEFAULT_IDEMPOTENCY_TABLE = "csagent-local-idempotency"


@dataclass(frozen=True)
class ActionSettings:
    """What the tool needs from the settings."""

    idempotency_table: str = DEFAULT_IDEMPOTENCY_TABLE
    region: str = "us-east-1"
    endpoint_url: str | None = None
    approval_threshold: Decimal = DEFAULT_APPROVAL_THRESHOLD
    store_today: date | None = None
    expires_after_s: int = DEFAULT_EXPIRES_AFTER_S

    @classmethod
    def from_settings(cls, settings: Any) -> ActionSettings:
        """From `csagent.config.ActionConfig` (the customer-actions function's part)."""
        today = getattr(settings, "store_today", None)
        return cls(
            idempotency_table=getattr(settings, "idempotency_table", None) or DEFAULT_IDEMPOTENCY_TABLE,
            region=settings.aws_region, endpoint_url=settings.aws_endpoint_url,
            approval_threshold=Decimal(str(getattr(settings, "refund_approval_threshold", None)
                                           or DEFAULT_APPROVAL_THRESHOLD)),
            store_today=date.fromisoformat(today) if isinstance(today, str) else today,
            expires_after_s=int(settings.checkpoint_ttl_seconds),
        )


def _utc_now() -> datetime:
    return datetime.now(UTC)


def store_now(store_today: date | None, clock: Callable[[], datetime] = _utc_now) -> datetime:
    """The store's clock: today's real time, on `store_today` when one is configured (the demo
    and test data are from 2024, so what the actions date sits inside that range)."""
    now = clock()
    return now if store_today is None else now.replace(year=store_today.year, month=store_today.month,
                                                      day=store_today.day)


def _idempotency_failure(task: Task, exc: BaseException) -> ToolResult | None:
    """The failed result for a failure of the idempotency record (DynamoDB), None for anything
    else (the store's errors and the rest go to `csagent.tools.failures`)."""
    name = type(exc).__name__
    if name == "IdempotencyAlreadyInProgressError":
        return ToolResult.failed(task, ErrorType.TRANSIENT, "This request is already being carried out; "
                                 "try again in a moment.", retryable=True)
    if name.startswith("Idempotency") or type(exc).__module__.startswith("botocore"):
        return ToolResult.failed(task, ErrorType.TRANSIENT, "The change could not be recorded safely; "
                                 "please try again shortly.", retryable=True)
    return None


def _settings() -> ActionSettings:
    from csagent.config import ActionConfig, get_settings

    return ActionSettings.from_settings(get_settings.of(ActionConfig))


def _runner(settings: ActionSettings) -> IdempotentRunner:
    return idempotency_store(settings.idempotency_table, settings.region, settings.endpoint_url,
                             settings.expires_after_s)


def _propose(task: Task, args: CustomerActionArgs, ctx: ToolContext, settings: ActionSettings,
             now: datetime) -> ToolResult:
    outcome = propose(task, args.action, args.args, ctx, now=now, confirmation_id=args.confirmation_id,
                      approval_threshold=settings.approval_threshold)
    if isinstance(outcome, ToolResult):
        return outcome
    proposal: ActionProposal = outcome
    return ToolResult.ok(task, {
        "phase": "propose", "action": proposal.action.value, "order_id": proposal.order_id,
        "proposal": proposal.model_dump(mode="json"), "summary": proposal.summary,
        "summaries": proposal.summaries,
        "amount": proposal.amount, "requires_approval": proposal.requires_approval,
        "requires_confirmation": True,
    })


def _execute(task: Task, args: CustomerActionArgs, ctx: ToolContext, settings: ActionSettings, now: datetime,
             idempotency: IdempotentRunner | None) -> ToolResult:
    assert args.proposal is not None, "CustomerActionArgs requires the proposal to execute"
    return execute(task, args.proposal, ctx, now=now, idempotency=idempotency or _runner(settings),
                   confirmation_id=args.confirmation_id, approved_by=args.approved_by,
                   approval_threshold=settings.approval_threshold)


def run(task: Task, ctx: ToolContext, *, settings: ActionSettings | None = None,
        idempotency: IdempotentRunner | None = None, now: datetime | None = None) -> ToolResult:
    """Propose or execute one customer action; never raises. The keyword arguments are for
    tests; the registry calls `run(task, ctx)` and everything else comes from settings."""
    started = time.perf_counter()
    try:
        args = task.args_as(CustomerActionArgs)  # another tool's arguments: validated as these
    except ValueError as exc:
        return ToolResult.failed(task, ErrorType.VALIDATION, str(exc))
    try:
        config = settings or _settings()
    except (InvalidOperation, ValueError) as exc:  # STORE_TODAY or the threshold do not parse
        logger.error("customer actions misconfigured: %s", exc)
        return ToolResult.failed(task, ErrorType.UNKNOWN, "Account changes are not available right now.")
    try:
        moment = now or store_now(config.store_today)
        if args.phase == "propose":
            result = _propose(task, args, ctx, config, moment)
        else:
            result = _execute(task, args, ctx, config, moment, idempotency)
    except Exception as exc:  # noqa: BLE001 - the tool contract: failures are data
        logger.warning("customer action %s failed: %s", args.action, type(exc).__name__)
        result = _idempotency_failure(task, exc) or failed_result(task, exc)
    return result.model_copy(update={"latency_ms": round((time.perf_counter() - started) * 1000, 3)})
