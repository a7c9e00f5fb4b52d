"""The customer actions' names, the proposal a customer confirms and the change that waits for
that confirmation: the shapes the task arguments (`CustomerActionArgs.proposal`), a proposing
result (`ActionProposedData.proposal`), the graph state (`PendingAction`) and the actions package
(`csagent.actions`) share. No I/O, no policy: the rules and the writes
live in `csagent.actions`."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ActionName(StrEnum):
    """The consequential writes the assistant may make for a customer."""

    UPDATE_DEFAULT_ADDRESS = "update_default_address"
    CHANGE_ORDER_ADDRESS = "change_order_address"
    CANCEL_ORDER = "cancel_order"
    RETURN_ITEMS = "return_items"
    EXCHANGE_ITEMS = "exchange_items"
    MODIFY_ITEMS = "modify_items"
    CHANGE_PAYMENT = "change_payment"

    @property
    def on_order(self) -> bool:
        """True for the actions that change one order (all but the default address)."""
        return self is not ActionName.UPDATE_DEFAULT_ADDRESS


class ActionProposal(BaseModel):
    """What the customer confirms. It travels in the conversation state between the two phases;
    `execute` trusts none of it beyond the action and its arguments: it re-derives the key from
    the authenticated customer and re-checks the policy on the current facts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: ActionName
    args: dict[str, Any]
    order_id: str | None = None
    summary: list[str] = Field(default_factory=list)
    #: The same lines in each other language the store words actions in ({"zh": [...]}).
    summaries: dict[str, list[str]] = Field(default_factory=dict)
    amount: float | None = None
    refund_payment_method_id: str | None = None
    requires_approval: bool = False
    price_difference: float | None = None
    confirmation_id: str | None = None
    idempotency_key: str | None = None


class PendingAction(BaseModel):
    """A change proposed in one turn and waiting for the customer's yes in the next: the proposal
    exactly as listed back, and what the confirmation and approval steps read beside it. The graph
    state carries it as JSON (`model_dump(mode="json")`, the keys the checkpoint has always held,
    which the understanding step also reads); the nodes read it back as this model, once
    (`graph.state.pending_actions`)."""

    # Unknown keys ignored, so that a newer router's pending change still loads in an older one.
    model_config = ConfigDict(frozen=True, extra="ignore")

    action: ActionName
    #: What a yes executes (`CustomerActionArgs.proposal`).
    proposal: ActionProposal
    #: The proposing turn's confirmation id ("" when it had none): the key a replayed yes reuses.
    confirmation_id: str = ""
    #: The change as it was listed back, in one line.
    summary: str = ""
    #: A refund above the approval threshold: a person approves it before it runs.
    requires_approval: bool = False
    amount: float | None = None

    @property
    def order_id(self) -> str | None:
        """The order the change is to (None for the default address)."""
        return self.proposal.order_id

    def listed(self, lang: str) -> str:
        """The change as it was listed back, in the customer's language when it was worded in it."""
        return " ".join(self.proposal.summaries.get(lang) or ()) or self.summary
