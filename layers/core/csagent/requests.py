"""The requests that change something: one typed entry each, read by every part that needs to know.

A customer's words become an intent (`nlp.intents`, or the router model's label); the intent of a
change request is one entry here: the write it proposes (an `actions.policy.ActionName` value),
the entities the proposal needs, the order statuses it applies to (grounding picks the order by
them), the reads that answer a question *about* it ("can I return it?" gets the facts, never a
proposal), the words the model path's planner sees, and the requests that restate it at
confirmation ("yes, go ahead and cancel it"). The planner (`planning`), the grounding
(`grounding.frame`), the understanding (`understanding`, `understanding_local`) and the model
prompts derive their tables from `WRITE_REQUESTS`; adding a change request is one entry here, its
action's module in `actions.kinds` (arguments, policy checks, effect, wording) and their tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class WriteRequest:
    """One change request a customer can make."""

    intent: str
    #: The action the planner proposes; "change_items" is decided by grounding from the order's
    #: status (`proposes` lists what it can become).
    action: str
    #: Entities the proposal needs, the order id first when it is about an order.
    required: tuple[str, ...]
    #: The writes this request can end in (ActionName values).
    proposes: tuple[str, ...]
    #: Order statuses the request applies to; empty: not about an order. Grounding picks an order by
    #: them as prefixes ("pending (item modified)" is still the pending order the words describe);
    #: whether a status rules the request out, they are whole (`planning._status_rules_out`).
    statuses: tuple[str, ...]
    #: Templates that answer a question about the change; None: the store's documents answer.
    about: tuple[str, ...] | None
    #: What the model path's planner is told the request does.
    description: str
    #: Other requests that restate it when a proposal of it is waiting.
    restated_by: tuple[str, ...] = ()
    #: The template that answers "how much would I get back?" about it, beside `about`.
    money_about: str | None = None
    #: The verbs a customer names it by ("if I return the backpack ...").
    verbs: tuple[str, ...] = ()
    #: The same in Chinese, matched as substrings ("瑜伽垫如果退货的话").
    zh_verbs: tuple[str, ...] = ()


WRITE_REQUESTS: tuple[WriteRequest, ...] = (
    WriteRequest(
        intent="cancel_order", action="cancel_order", required=("order_id", "reason"),
        proposes=("cancel_order",), statuses=("pending",), about=("cancellation_eligibility",),
        description="propose cancelling an order (needs the order id and the reason)",
        # (the everyday words too: "kill the sneakers one", "nix my kettle order")
        money_about="order_payments", verbs=("cancel", "kill", "scrap", "ditch", "nix", "axe", "nuke"),
        zh_verbs=("取消",)),
    WriteRequest(
        intent="return_request", action="return_items", required=("order_id",),
        proposes=("return_items",), statuses=("delivered",), about=("return_eligibility", "order_items"),
        description="propose returning items of a delivered order (needs the order id)",
        restated_by=("change_items",), money_about="order_payments",
        verbs=("return", "send back", "give back", "bring back", "take back"),
        zh_verbs=("退货", "退掉", "退了", "退回去", "退一下", "退给", "只退", "想退", "要退")),
    WriteRequest(
        intent="change_items", action="change_items",
        required=("order_id", "item_ids", "new_item_ids", "payment_method_id"),
        proposes=("exchange_items", "modify_items"), statuses=("pending", "delivered"),
        about=("return_eligibility", "order_items"),
        description="propose exchanging items of a delivered order, or modifying items of a pending order, "
                    "for other variants of the same product (needs the order id)",
        restated_by=("return_request",), verbs=("exchange", "swap"),
        zh_verbs=("换货", "换成", "换一个", "调换", "换个", "只换", "想换", "要换")),
    WriteRequest(
        intent="change_payment", action="change_payment", required=("order_id", "payment_method_id"),
        proposes=("change_payment",), statuses=("pending",), about=("order_payments",),
        description="propose paying a pending order with another of the customer's payment methods"),
    WriteRequest(
        intent="change_order_address", action="change_order_address", required=("order_id", "address"),
        proposes=("change_order_address",), statuses=("pending",), about=("address_change_eligibility",),
        description="propose a new shipping address for an order (needs the order id and address)",
        restated_by=("update_default_address",)),
    WriteRequest(
        intent="update_default_address", action="update_default_address", required=("address",),
        proposes=("update_default_address",), statuses=(), about=None,
        description="propose a new default address for the account (needs the address)",
        restated_by=("change_order_address",)),
)

BY_INTENT: Mapping[str, WriteRequest] = {r.intent: r for r in WRITE_REQUESTS}
#: The intents that ask for a change.
WRITE_INTENTS: frozenset[str] = frozenset(BY_INTENT)
#: intent -> (action, required entities): what the planner proposes.
ACTION_INTENTS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    r.intent: (r.action, r.required) for r in WRITE_REQUESTS
}
#: intent -> the order statuses it applies to (for picking the one order the words describe).
STATUSES_FOR: Mapping[str, tuple[str, ...]] = {r.intent: r.statuses for r in WRITE_REQUESTS if r.statuses}
#: intent -> the reads that answer a question about the change.
QUESTION_ABOUT_A_CHANGE: Mapping[str, tuple[str, ...]] = {
    r.intent: r.about for r in WRITE_REQUESTS if r.about is not None
}
#: intent -> the read that answers how much money a change would move ("if I cancelled it, how
#: much would I get back?").
MONEY_ABOUT_A_CHANGE: Mapping[str, str] = {r.intent: r.money_about for r in WRITE_REQUESTS if r.money_about}
#: proposed write -> the requests that restate it ("yes, go ahead and cancel it").
RESTATES: Mapping[str, frozenset[str]] = {
    action: frozenset({r.intent, *r.restated_by}) for r in WRITE_REQUESTS for action in r.proposes
}
#: verb -> the request a customer names by it ("return" -> return_request).
REQUEST_BY_VERB: Mapping[str, str] = {verb: r.intent for r in WRITE_REQUESTS for verb in r.verbs}
REQUEST_BY_ZH_VERB: Mapping[str, str] = {verb: r.intent for r in WRITE_REQUESTS for verb in r.zh_verbs}
#: proposed write -> the request that proposes it.
REQUEST_OF: Mapping[str, str] = {action: r.intent for r in WRITE_REQUESTS for action in r.proposes}
