"""From understood clauses to tasks: which tool serves which intent, with which parameters,
and which task depends on which.

Pure logic, no I/O. The planner emits `Task`s `{task_id, task_type, tool, args, notes,
depends_on}`: `args` validated here into the tool's model, `notes` what the summariser and the
replies need to know of the task (`csagent.domain.task_args`); de-duplicated on (tool, args,
notes) and capped. A clause whose intent needs a parameter the customer
did not give (an order id, an address) produces no task but a `missing` entry, so the graph
asks for exactly that parameter. A clause that refers to "that product" or "those
headphones" depends on the order lookup that tells which products those are.

A clause that names a change but asks about it (`asks_for_change` False: "how much would I get
back if I returned it?", "the lamp arrived broken") gets the order's facts (eligibility, items with
prices), never a proposal. A read that names no order beside a list of the customer's orders is
answered by the list, not asked about. Details of an item change or a return in other clauses of
the message ("it's the 28 inch one", "PayPal for the difference") fold into it. Grounding's own
question (several candidates listed) is asked as it is.

Several orders in one clause ("status of #W1, #W2 and #W3", "cancel #W1 and #W2") give one task
per order (`order_ids`). A clause that repeats an earlier clause's request without naming an
order ("cancel #W1 and #W2, I ordered both by mistake") only adds details to it: its entities
fill the earlier clause's gaps, and it asks for nothing of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from csagent.domain.models import Task, ToolResult
from csagent.domain.task_args import PredefinedCypherArgs, ProductsFrom, TaskNotes, ToolArgs, args_model
from csagent.domain.tool_data import CatalogueData
from csagent.nlp.entities.addresses import names_a_place_abroad
from csagent.nlp.script import has_ideographs, has_question_mark
from csagent.requests import (
    ACTION_INTENTS,
    BY_INTENT,
    MONEY_ABOUT_A_CHANGE,
    QUESTION_ABOUT_A_CHANGE,
    STATUSES_FOR,
)
from csagent.understanding import ITEM_REQUESTS, PASSIVE_INTENTS

PREDEFINED = "predefined_cypher"
KNOWLEDGE = "knowledge_search"
ACTIONS = "customer_actions"

# intent → (task_type, tool, template_id or None, required entity names)
ORDER_READS: dict[str, tuple[str, str]] = {
    "order_status": ("order_status", "order_overview"),
    "tracking": ("tracking", "order_overview"),
    "order_items": ("order_items", "order_items"),
    "refund_status": ("refund_status", "refund_status"),
}
# Specific questions about one order a read intent may turn out to be (matched on the question).
_ABOUT_ONE_ORDER = ("order_shipping_address", "order_total", "order_payments", "return_eligibility",
                    "cancellation_eligibility")
# The whole order's amount asked ("whats the total on the order w the espresso machine n the vacuum?").
_WHOLE_ORDER = re.compile(r"\b(?:total|in all|altogether|whole order|entire order|all together)\b",
                          re.IGNORECASE)
# What an order holds, asked ("whats in it", "what was included in order #W1", "都买了些什么").
_ITEMS_ASKED = re.compile(r"\bwhat(?:'?s| is| was| were| did i (?:buy|get|order))?\s+(?:in|inside|included)\b"
                          r"|\bwhat (?:items|products|things)\b|\bwhat did i (?:buy|get|order)\b"
                          r"|买了(?:些)?什么|有哪些(?:商品|东西)|有什么(?:商品|东西)", re.IGNORECASE)
# A tracking number asked, and where an order goes asked ("what address is it going to + tracking no.").
_TRACKING_ASKED = re.compile(r"\btracking\b|\btrack (?:no|number|#)|运单号|快递单号|物流单号", re.IGNORECASE)
_ADDRESS_ASKED = re.compile(
    r"\baddress\b|\bwhere (?:is )?(?:it|that|this) (?:going|headed|shipping|sent)\b|地址", re.IGNORECASE)
# Where an order has got asked, by the word ("W6371438 status + total", "现在是什么状态").
_STATUS_ASKED = re.compile(r"\bstatus\b|状态", re.IGNORECASE)
# An amount asked ("how much did I pay for the headphones?"), not how it was paid.
_AMOUNT_ASKED = re.compile(r"\b(?:how much|cost\w*|price\w*|what (?:did )?i pa(?:y|id))\b", re.IGNORECASE)
_ANNOUNCES_QUESTIONS = re.compile(
    r"\b(?:a|one|two|2|three|few|some|couple of|couple|quick|small)\s+questions?\b", re.IGNORECASE)
_BARE_HOW_MUCH = re.compile(
    r"\W*(?:and\s+|so\s+)?how much(?:\s+(?:is|was|will)\s+(?:it|that|they|those))?\W*", re.IGNORECASE)
_WHICH_OF_THEM = re.compile(r"\bwhich (?:ones? )?of (?:them|those|these)\b", re.IGNORECASE)
# How it was paid asked ("what did i pay for the gaming mouse with", "which card did I use").
_METHOD_ASKED = re.compile(
    r"\bpa(?:y|id)\b[^.?!]{0,40}\b(?:with|using)\W*$|\b(?:which|what) (?:card|payment|method)\b"
    r"|\bhow (?:did|do|have) (?:i|we) pa(?:y|id)\b", re.IGNORECASE)
ORDER_QUESTIONS: dict[str, tuple[str, ...]] = {
    "order_status": _ABOUT_ONE_ORDER,
    # A refund question asks what money moved, never whether a change is still allowed ("取消的订单
    # #W1退了多少钱？" reads close to "can it still be cancelled?" by its words alone).
    "refund_status": ("order_total", "order_payments"),
    # "whats up w #W4836353?" read as a question about its items: the status, when the templates'
    # examples say so more clearly than the items' own.
    "order_items": (*_ABOUT_ONE_ORDER, "order_overview"),
}
# An account's address asked beside another of its facts ("the email and the home address on file",
# "what email and address do u have on my account"; an email address is not one).
_ADDRESS_AND_MORE_ASKED = re.compile(
    r"\b(?:e-?mail|name|phone|payment|card)\b.*(?:\b(?:home|default|mailing|postal|street)\s+address\b"
    r"|\b(?:and|&|\+)\s+(?:the\s+|my\s+)?address(?:es)?\b)"
    r"|(?:\b(?:home|default|mailing)\s+address|(?<!email )(?<!e-mail )\baddress)\b.*\b(?:and|&|\+)\s+"
    r"(?:the\s+|my\s+)?(?:e-?mail|name|payment|cards?)\b", re.IGNORECASE)
# What the account holds, for `account_info` (the closest of these to the question answers it).
ACCOUNT_QUESTIONS: tuple[str, ...] = ("default_address", "payment_methods", "gift_card_balance",
                                      "customer_profile", "total_spent", "order_count_by_status")
# The store's rule a change that is no change of options asks about, as the knowledge base is asked.
RULE_QUESTIONS = {
    "removal": "Can I remove one item from my order without cancelling the whole order?",
    "addition": "Can I add an item to an existing order?",
    "other_product": "Can I exchange or change an item for a different product?",
    "other_product_delivered":
        "Can I exchange one product type for another, like a shirt for a pair of shoes?",
    "another_person": "Can you discuss or change another person's orders, even a family member's?",
    "refund_timing": "How long do refunds take to a credit card, PayPal or gift card?",
    "opened": "Can I return {items} once it has been opened or used?",
    "washed": "Can I return {items} once it has been washed or altered?",
    "abroad": "Can you deliver to an address outside the United States?",
    "missing": "An item from my delivered order is missing. What happens now?",
    "parcel_missing": "Tracking says my parcel was delivered but I cannot find it. What should I do?",
    "method_not_held": "Can I switch a pending order to a payment method that is not on my account?",
    "split": "Can I pay with two gift cards or a gift card plus a card?",
}
# What an account question may be about instead when the clause names an order.
ORDER_ACCOUNT_QUESTIONS: tuple[str, ...] = ("order_payments", "order_total")
CATALOGUE_QUESTIONS = {"product_info": "product_info", "product_availability": "product_availability"}
# A catalogue question naming several products is asked of each, up to this many.
MAX_PRODUCTS_ASKED = 4
KNOWLEDGE_QUESTIONS = {"warranty": "warranty", "policy_question": "policy"}
# What a clause keeps while it waits for the one parameter the customer still has to give.
KEPT_FOR_FOLLOW_UP = frozenset({"order_id", "reason", "address", "item_ids", "tracking_number",
                                "new_item_ids", "payment_method_id", "item_action", "order_candidates"})


#: How many tasks a turn may plan for each it keeps (`_Builder.trimmed` keeps `max_tasks`).
PLANNED_PER_KEPT = 3


@dataclass
class Plan:
    tasks: list[Task] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0


def _key(tool: str, args: ToolArgs, notes: TaskNotes) -> tuple[str, str, str]:
    """What makes two tasks the same: their tool, arguments and notes as given."""
    return tool, repr(args.model_dump()), repr(notes.model_dump())


@dataclass
class _Builder:
    max_tasks: int
    documents_know: Callable[[str], bool] | None = None
    plan: Plan = field(default_factory=Plan)
    seen: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: Is the clause being planned one that only tells (a statement, no request)? Its tasks are the
    #: first left out when the turn's tasks are too many (`trimmed`).
    telling: bool = False
    told: set[str] = field(default_factory=set)
    #: Does the message ask a price or a price difference in any of its clauses ("... exchange it for
    #: the 30-50 lb version? And what would the price difference be?")?
    price_asked: bool = False

    def add(self, task_type: str, tool: str, args: Mapping[str, Any],
            depends_on: tuple[str, ...] = (), notes: TaskNotes | None = None) -> str | None:
        """Add a task unless an identical one exists (then return that one's id). The arguments
        are validated here, once, into the tool's model."""
        typed, noted = args_model(tool).model_validate(args), notes or TaskNotes()
        key = _key(tool, typed, noted)
        if key in self.seen:
            return self.seen[key]
        if len(self.plan.tasks) >= self.max_tasks * PLANNED_PER_KEPT:
            self.plan.dropped += 1
            return None
        task_id = f"t{len(self.plan.tasks) + 1}"
        self.plan.tasks.append(Task(task_id=task_id, task_type=task_type, tool=tool, args=typed, notes=noted,
                                    depends_on=depends_on))
        self.seen[key] = task_id
        if self.telling:
            self.told.add(task_id)
        return task_id

    def trimmed(self) -> Plan:
        """The plan cut to `max_tasks`: the tasks of clauses that ask something first (a statement
        that sets the scene, "I got a desk lamp from you.", never crowds out the question after it,
        "what colours does it come in?"), each with the tasks it depends on, then in the order
        asked; kept tasks are numbered again from t1."""
        tasks = self.plan.tasks
        if len(tasks) <= self.max_tasks:
            return self.plan
        by_id = {t.task_id: t for t in tasks}

        def needs(task: Task) -> list[str]:
            ids = [*task.depends_on]
            if task.notes.products_from is not None:
                ids.append(task.notes.products_from.task)
            if task.notes.fallback_for:
                ids.append(task.notes.fallback_for)
            return [i for i in ids if i in by_id]

        kept: list[str] = []
        for task in sorted(tasks, key=lambda t: (t.task_id in self.told, tasks.index(t))):
            wanted = [i for i in dict.fromkeys([*needs(task), task.task_id]) if i not in kept]
            if len(kept) + len(wanted) <= self.max_tasks:
                kept.extend(wanted)
        order = [t.task_id for t in tasks if t.task_id in kept]
        renamed = {old: f"t{n}" for n, old in enumerate(order, start=1)}
        out = []
        for old in order:
            task = by_id[old]
            notes = task.notes
            if notes.products_from is not None:
                notes = notes.model_copy(update={"products_from": notes.products_from.model_copy(
                    update={"task": renamed[notes.products_from.task]})})
            if notes.fallback_for:
                notes = notes.model_copy(update={"fallback_for": renamed.get(notes.fallback_for)})
            out.append(task.model_copy(update={"task_id": renamed[old], "notes": notes,
                                               "depends_on": tuple(renamed[d] for d in task.depends_on)}))
        self.plan.dropped += len(tasks) - len(out)
        self.plan.tasks = out
        return self.plan

    def own_items(self, order_id: str, product_ids: Sequence[str],
                  asked: Sequence[Mapping[str, Any]] = ()) -> str | None:
        """The task that reads the customer's own items of some products in one order ("the smart
        watch I bought ... and the black speaker?": one read of that order, both lines said), with
        the options a question asks of them (`TaskNotes.asked_options`)."""
        for index, task in enumerate(self.plan.tasks):
            args = task.args
            if task.notes.own_products and isinstance(args, PredefinedCypherArgs) \
                    and args.template_id == "order_items" and args.params.get("order_id") == order_id:
                own = list(dict.fromkeys([*task.notes.own_products, *product_ids]))
                options = list({(a.get("product_id"), a.get("key")): dict(a)
                                for a in [*task.notes.asked_options, *asked]}.values())
                self.plan.tasks[index] = task.model_copy(
                    update={"notes": task.notes.model_copy(update={"own_products": own,
                                                                   "asked_options": options})})
                return task.task_id
        items = {"template_id": "order_items", "params": {"order_id": order_id}}
        return self.add("order_items", PREDEFINED, items,
                        notes=TaskNotes(own_products=list(product_ids),
                                        asked_options=[dict(a) for a in asked]))

    def order_lookup(self, order_id: str) -> str | None:
        """The task that reads an order's overview (reused when the message already asks for it;
        an order question about the same order becomes that overview, since another task needs
        the order's items from it)."""
        for index, task in enumerate(self.plan.tasks):
            args = task.args
            if isinstance(args, PredefinedCypherArgs) and args.fallback_template == "order_overview" \
                    and args.params.get("order_id") == order_id:
                overview = PredefinedCypherArgs(template_id="order_overview", params={"order_id": order_id})
                self.plan.tasks[index] = task.model_copy(update={"args": overview})
                self.seen[_key(PREDEFINED, overview, task.notes)] = task.task_id
                return task.task_id
        return self.add("order_status", PREDEFINED, {"template_id": "order_overview",
                                                     "params": {"order_id": order_id}})

    def need(self, intent: str, parameter: str, entities: Mapping[str, Any], text: str = "") -> None:
        """Ask for `parameter`; a question grounding wrote (the candidates listed) is asked as it is.
        The request's words are kept: the answer is read together with them."""
        from csagent.grounding.asking import QUESTION_KEYS

        kept = {k: v for k, v in entities.items() if k in KEPT_FOR_FOLLOW_UP}
        same = next((m for m in self.plan.missing if (m["intent"], m["parameter"]) == (intent, parameter)
                     and intent in CHANGE_REQUESTS and m["entities"].get("order_id") == kept.get("order_id")
                     and kept.get("order_id")), None)
        if same is not None:
            # "can I get the tee in a different colour? same size": one item change, asked once, its
            # words all read with the answer
            same["text"] = f"{same['text']} {text}".strip()
            return
        # (the question's English text and its phrase, said in the reply's language by `ask_for`)
        asked = {k: entities[k] for k in QUESTION_KEYS if entities.get(k)} if entities.get("question") else {}
        self.plan.missing.append({"intent": intent, "parameter": parameter, "text": text,
                                  "invalid": entities.get(f"invalid_{parameter}"), "entities": kept,
                                  **asked,
                                  **({"settles": True} if entities.get("settled") else {}),
                                  # the request as asked is against a rule, said before the question
                                  **({"ruled_out": True} if entities.get("ruled_out") else {}),
                                  **({"from_image": True} if entities.get("image_unreadable") else {})})


def status_of_asking(missing: list[dict[str, Any]]) -> str:
    """The status of a reply that asks `missing`: `partial` when one of them answers a request the
    store's rules refuse as asked ("a refund can go only to ... : should it go to your Visa?"), the
    question offering what it may be instead; else `needs_clarification` (`answered` when nothing
    is still asked)."""
    if any(m.get("ruled_out") for m in missing):
        return "partial"
    return "needs_clarification" if still_asked(missing) else "answered"


def still_asked(missing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The missing entries that ask the customer something: a statement that `settles` its request
    ("not available right now", nothing offered) is said, and awaits nothing."""
    return [m for m in missing if not m.get("settles")]


# Every order asked for, then which of them have a status: the whole list, each with its status.
_ALL_THEN_WHICH = re.compile(r"\b(?:all|every)\b[^.?!]{0,20}?\borders?\b[^.?!]*?\bwhich\b", re.IGNORECASE)
# Words that add to a list rather than narrow it: "including the cancelled ones", "as well as".
_INCLUDING = re.compile(r"\b(?:including|incl|inclusive of|as well as|even the)\b", re.IGNORECASE)


def _status_filter(text: str) -> dict[str, str]:
    """`customer_orders`' status parameters for the statuses the words describe ("which haven't
    shipped": pending; "which were not cancelled": all but cancelled); none when they describe
    none."""
    from csagent.grounding.status import STORE_STATUSES, statuses_described

    if _INCLUDING.search(text) or _ALL_THEN_WHICH.search(text):
        # "list every order, including any old or cancelled ones": all of them; so "list all my
        # orders and tell me which ones havent shipped yet", each listed with its status
        return {}
    statuses = statuses_described(text) or ()
    others = [s for s in STORE_STATUSES if s not in statuses]
    if len(statuses) >= 3 and len(others) == 1:
        return {"not_status": others[0]}  # "which were NOT cancelled"
    if not 0 < len(statuses) <= 2:
        return {}
    return {"status": statuses[0], **({"also_status": statuses[1]} if len(statuses) == 2 else {})}


def _names_order(entities: Mapping[str, Any]) -> bool:
    return bool(entities.get("order_id") or entities.get("order_ids") or entities.get("tracking_number")
                or entities.get("invalid_order_id"))


def _needs_order(intent: str) -> bool:
    return intent in ORDER_READS or (intent in ACTION_INTENTS and "order_id" in ACTION_INTENTS[intent][1])


def fold_details(clauses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clauses with the ones that only add details folded into the request they belong to.

    A clause whose intent needs an order, that names none, after a clause with the same intent
    that does ("cancel #W1 and #W2" + "I ordered both by mistake"), is that request again: its
    entities fill the earlier clauses' missing ones and it is dropped; before one that does, it
    is dropped too. A catalogue question that only points back at the product the catalogue
    question before it named joins that question, and order-list questions make one list.
    """
    from csagent.grounding.facts import names_a_price_difference
    from csagent.grounding.frame import tells_where_it_goes
    from csagent.nlp.speech_acts import asks_something

    clauses = [{**c, "entities": dict(c.get("entities") or {})} for c in clauses]  # never the caller's
    clauses = _returns_over_described_exchanges(clauses)
    folded: list[dict[str, Any]] = []
    changes = [c for c in clauses if c.get("intent") in CHANGE_REQUESTS]
    writes = [c for c in clauses if c.get("intent") in ACTION_INTENTS]
    # (a complaint that only tells why a change is asked is dropped below: it cannot also stand for
    # that change, asked as a question: "I ordered a tablet and I've changed my mind about the
    # colour, can I switch it?")
    complaint = any(c.get("intent") == "complaint"
                    and not _context_of_a_write(c.get("text", ""), c.get("entities") or {}, writes)
                    for c in clauses)
    for index, clause in enumerate(clauses):
        intent = clause.get("intent", "")
        entities = clause.get("entities") or {}
        if _details_of_a_change(intent, clause.get("text", ""), entities, changes):
            # "it's the 28 inch one", "PayPal for the difference": part of the change asked. A detail
            # that asks for it asks for that change ("I was wondering whether I could return the
            # robot vacuum. If so, please refund it to the card I paid with.")
            if entities.get("asks_for_change"):
                # (the changes already folded, and those still to come; a price difference is theirs
                # whichever order its words alone were read of)
                difference = names_a_price_difference(clause.get("text", ""))
                for change in [c for c in folded if c.get("intent") in CHANGE_REQUESTS] + changes:
                    if change is not clause and (difference or (change.get("entities") or {}).get("order_id")
                                                 in (entities.get("order_id"), None)):
                        change["entities"]["asks_for_change"] = True
                        if entities.get("payment_method_id"):
                            change["entities"].setdefault("payment_method_id", entities["payment_method_id"])
            continue
        if complaint and intent in ACTION_INTENTS and entities.get("asks_for_change") is False \
                and not _names_order(entities):
            continue  # "charged twice for the boots. I only need ONE pair": the complaint, told again
        if intent == "complaint" and _context_of_a_write(clause.get("text", ""), entities, writes):
            continue  # "cancel #W1, I ordered it by mistake": why the change is asked, not a complaint
        if intent in ("order_list", "order_status") and not _names_order(entities) \
                and any(w.get("intent") == "change_order_address" for w in writes) \
                and tells_where_it_goes(clause.get("text", "")) \
                and not asks_something(clause.get("text", "")) \
                and not (entities.get("address") and any(not (w.get("entities") or {}).get("address")
                                                         for w in writes)):
            continue  # "one of my orders is heading to my old place. Please send it to ...": the scene
        if intent in CATALOGUE_QUESTIONS and _tells_context(clause.get("text", ""), entities, writes):
            continue  # "I used the toothbrush once and it's not for me. Can I return it?": the story
        if intent == "order_list" and folded and folded[-1].get("intent") == "order_list":
            # "Which haven't arrived? Not the ones I already have.": one list, its filter from both.
            folded[-1]["text"] = f"{folded[-1].get('text', '')} {clause.get('text', '')}".strip()
            continue
        later = next((c for c in clauses[index + 1:]
                      if c.get("intent") == intent and _names_order(c.get("entities") or {})), None)
        if _needs_order(intent) and not _names_order(entities) and later is not None:
            # "I ordered it by mistake. Cancel #W1.": asked again below, with this clause's details.
            later["entities"] = {**entities, **(later.get("entities") or {})}
            continue
        if folded and _completes(folded[-1], intent, clause.get("text", ""), entities):
            # "Could you redirect the order with the grill? It's 1550 N Central Ave, ...": one
            # request told in two clauses; the second gives what the first lacks.
            previous = folded[-1]
            adds = {k for k, v in entities.items() if v and not previous["entities"].get(k)} - {"reason"}
            if previous["entities"].get("question") and not entities.get("question") and adds:
                # what the first left open, the second names (a reason alone names no order)
                from csagent.grounding.asking import QUESTION_KEYS

                for key in QUESTION_KEYS:
                    previous["entities"].pop(key, None)
            for key, value in entities.items():
                previous["entities"].setdefault(key, value)
            if entities.get("asks_for_change"):
                previous["entities"]["asks_for_change"] = True
            previous["text"] = f"{previous.get('text', '')} {clause.get('text', '')}".strip()
            continue
        if _asks_again_about_the_product(intent, entities, folded[-1] if folded else {}):
            # "Is it in stock?" after "Can I get the wall clock in wood?": the same question.
            previous = folded[-1]
            previous["text"] = f"{previous.get('text', '')} {clause.get('text', '')}".strip()
            continue
        owners = [c for c in folded if c.get("intent") == intent and _names_order(c.get("entities") or {})]
        if not (_needs_order(intent) and owners and not _names_order(entities)):
            folded.append({**clause, "entities": dict(entities)})
            continue
        for owner in owners:
            for key, value in entities.items():
                owner["entities"].setdefault(key, value)
    return folded


#: Requests whose details are single values (an order, an address, a reason, a payment method), so
#: two clauses of one of them about the same order are one request; item lists are not merged.
SINGLE_VALUED_REQUESTS = frozenset({"cancel_order", "change_order_address", "update_default_address",
                                    "change_payment"})
_ACCOUNT_WORDS = re.compile(r"\b(default|account|profile|on file)\b", re.IGNORECASE)
ADDRESS_REQUESTS = frozenset({"change_order_address", "update_default_address"})


def _completes(previous: Mapping[str, Any], intent: str, text: str, entities: Mapping[str, Any]) -> bool:
    """Does this clause give the request of the clause before it the details it lacks? The same
    request about the same order (or naming none), an address alone for an address change that
    has none ("... on the account? It's 77 Sycamore Court, ..."), or an address for an order's
    address change that says nothing of the account's default ("Change it to my home: 371 River
    Road, ...")."""
    before = previous.get("entities") or {}
    kind = previous.get("intent")
    if kind not in SINGLE_VALUED_REQUESTS or entities.get("order_id") not in (None, before.get("order_id")):
        return False
    if intent == kind:
        return True
    if kind in ADDRESS_REQUESTS and not before.get("address") and entities.get("address") \
            and intent not in ACTION_INTENTS:
        return True  # "Can you put my new address on the account? It's 77 Sycamore Court, ...": its address
    return (kind == "change_order_address" and intent == "update_default_address"
            and bool(before.get("order_id")) and not before.get("address") and bool(entities.get("address"))
            and not _ACCOUNT_WORDS.search(text))


_PAYS_FOR = re.compile(r"\b(difference|diff|refund|balance|charge|pay(?:s|ing)? for|the rest)\b",
                       re.IGNORECASE)
CHANGE_REQUESTS = frozenset({"change_items", "return_request"})
_NAMES_METHOD = re.compile(r"\b(gift\s*card|pay\s*pal|credit card|card|visa|mastercard|amex|discover|"
                           r"original (?:payment|method))\b", re.IGNORECASE)
# Reads that, inside a change request and not asked as a question, only describe its items.
DESCRIBING_INTENTS = frozenset({"order_items", "product_info", "product_availability", "refund_status",
                                "order_status", "complaint"})


def _details_of_a_change(intent: str, text: str, entities: Mapping[str, Any],
                         changes: list[dict[str, Any]]) -> bool:
    """A clause that only adds details to an item change or a return of the same message: how the
    difference is paid or refunded, or a description of the item ("it's the 28 inch plastic one").
    A question ("is it in stock?") or another order keeps its own request."""
    if not changes:
        return False
    from csagent.nlp.entities.questions import opens_question

    orders = {(c.get("entities") or {}).get("order_id") for c in changes}
    same_order = entities.get("order_id") in orders or entities.get("order_id") is None
    if intent in CHANGE_REQUESTS:
        # "Can you switch it to the black XL? Any refund can go back to my credit card.": read as a
        # return, the second clause names no item, only where the change's money goes.
        others = [c for c in changes if c.get("text") != text]
        return bool(others) and same_order and not entities.get("products") \
            and bool(_PAYS_FOR.search(text)) and bool(_NAMES_METHOD.search(text))
    if intent in ("change_payment", "account_info"):  # "any difference on my gift card"
        # (a price difference is an item change's, whichever order the words alone were grounded
        # to: "Can I exchange for black, size L? Difference please pay with my Mastercard.")
        from csagent.grounding.facts import names_a_price_difference

        return (same_order or names_a_price_difference(text)) and bool(_PAYS_FOR.search(text))
    if intent == "refund_status" and _NAMES_METHOD.search(text):
        return same_order  # "could the refund go back to my gift card?": where the change's money goes
    if intent == "policy_question" and "?" not in text and _NAMES_METHOD.search(text):
        # "If it works out cheaper, please refund the difference to my gift card.": where the change's
        # money goes, said beside it (not a question about the rule)
        from csagent.grounding.facts import names_a_price_difference

        return names_a_price_difference(text) and same_order
    return intent in DESCRIBING_INTENTS and same_order and "?" not in text and not opens_question(text)


def _context_of_a_write(text: str, entities: Mapping[str, Any], writes: list[dict[str, Any]]) -> bool:
    """A complaint beside a change request about the same order (or naming none) that asks
    nothing: it says why the change is asked ("the boots are too small, exchange them")."""
    if not writes or has_question_mark(text):
        return False
    orders = {(c.get("entities") or {}).get("order_id") for c in writes}
    return entities.get("order_id") is None or entities.get("order_id") in orders


def _tells_context(text: str, entities: Mapping[str, Any], writes: list[dict[str, Any]]) -> bool:
    """A catalogue reading of a statement, not a question, about a product a return or an item
    change beside it is about ("I opened the perfume I received and tried it once. May I return
    it?"): it tells how the request came about, and asks nothing of the catalogue (unless it
    speaks of money: "the speaker dropped in price after I paid")."""
    from csagent.grounding.frame import asks_as_question
    from csagent.nlp.entities.questions import opens_question

    writes = [c for c in writes if c.get("intent") in ITEM_REQUESTS]  # a return or an item change
    if not writes or asks_as_question(text) or opens_question(text) or _ASKS_TO_TELL.search(text) \
            or _MONEY.search(text):
        return False  # ("it dropped in price after I paid": what the price did is the matter)
    named = {str(p.get("product_id")) for p in entities.get("products") or [] if isinstance(p, Mapping)}
    about = {str(p.get("product_id")) for c in writes for p in (c.get("entities") or {}).get("products") or []
             if isinstance(p, Mapping)}
    orders = {(c.get("entities") or {}).get("order_id") for c in writes} - {None}
    return bool(named & about) or (entities.get("order_id") is not None and entities["order_id"] in orders) \
        or (bool(named) and bool(orders) and not about)


# "tell me if the kettle comes in black", "let me know the price": a question put as a request.
_ASKS_TO_TELL = re.compile(r"\b(?:tell|show|let me know|check|find out|wondering|wonder|curious)\b",
                           re.IGNORECASE)


def _returns_over_described_exchanges(clauses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clauses without an exchange read from words that describe an item beside a return of it
    ("it came in black, I picked grey. Take it back and refund me": the return); the items the
    exchange named are the ones the return sends back when it names none ("could I send it back?").
    A return clause that only says where money goes beside an exchange asked for in words ("can i
    swap it for the green one? any $ back to my gift card") is the exchange's difference, and goes."""
    paying: list[dict[str, Any]] = []
    for clause in clauses:
        exchange = _exchange_it_pays_for(clause, clauses) \
            if clause.get("intent") == "return_request" else None
        if exchange is not None:
            # "can i swap it for the 2 liter glass one? any refund to my gift card": where the
            # exchange's difference goes, which the exchange took (or takes here) as its method.
            method = clause["entities"].get("payment_method_id")
            if method and not exchange["entities"].get("payment_method_id"):
                exchange["entities"]["payment_method_id"] = method
            paying.append(clause)
    clauses = [c for c in clauses if not any(c is p for p in paying)]
    kept: list[dict[str, Any]] = []
    for clause in clauses:
        entities = clause["entities"]
        returned = _return_beside(entities, clauses) if clause.get("intent") == "change_items" else None
        if returned is None:
            kept.append(clause)
        elif not returned["entities"].get("item_ids") and entities.get("item_ids"):
            returned["entities"]["item_ids"] = list(entities["item_ids"])
    return kept


def _exchange_it_pays_for(clause: Mapping[str, Any],
                          clauses: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The exchange of the same order that the message asks for in words of its own ("can i swap
    it for the green one w 20 hrs?") beside a return clause that names no return, only money coming
    back ("any $ back to my gift card"): that money is the exchange's difference. None otherwise
    (a return asked in words, "send the green one back", stays a return)."""
    from csagent.grounding.frame import named_changes

    text = str(clause.get("text") or "")
    order_id = (clause.get("entities") or {}).get("order_id")
    if not order_id or named_changes(text):
        return None
    for other in clauses:
        named = other.get("entities") or {}
        if other is not clause and other.get("intent") == "change_items" \
                and named.get("item_action") == "exchange_items" and named.get("order_id") == order_id \
                and "change_items" in named_changes(str(other.get("text") or "")):
            return other
    return None


def _return_beside(entities: Mapping[str, Any], clauses: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The return clause beside an exchange read from words that describe an item ("it came in
    black, I picked grey", "he already has the exact same one") that sends back that item (or names
    none): an item is either sent back for its money or exchanged, and the return is what the
    customer asked for. None when there is no such return."""
    from csagent.grounding.facts import names_a_price_difference

    if entities.get("item_action") != "exchange_items" or not entities.get("order_id"):
        return None
    items = set(entities.get("item_ids") or ())
    for other in clauses:
        named = other.get("entities") or {}
        if other.get("intent") == "return_request" and named.get("order_id") == entities["order_id"] \
                and not names_a_price_difference(other.get("text") or ""):
            # ("diff back to my card" is where the exchange's difference goes, not a return)
            returned = set(named.get("item_ids") or ())
            if not returned or not items or returned & items:
                return other
    return None


def _asks_again_about_the_product(intent: str, entities: Mapping[str, Any],
                                  previous: Mapping[str, Any]) -> bool:
    """A catalogue question that only points back ("is it in stock?") at the product the catalogue
    question before it named."""
    reference = entities.get("reference") or {}
    return (intent in CATALOGUE_QUESTIONS and previous.get("intent") in CATALOGUE_QUESTIONS
            and not entities.get("products") and reference.get("kind") == "product"
            and not reference.get("hint") and bool((previous.get("entities") or {}).get("products")))


# What the customer says they ordered, against what came.
_SAYS_WHAT_WAS_ORDERED = re.compile(r"\bi\s+(?:ordered|picked|chose|selected|bought|paid for)\b",
                                    re.IGNORECASE)
# A charge said to be made more than once.
_TWICE = re.compile(r"\b(?:twice|two times|2 times|2x|double[- ]?charged|charged double|two charges|"
                    r"2 charges|duplicate)\b|两次|重复", re.IGNORECASE)
# Words that make a complaint about money ("charged twice", "billed", "refund never came").
_MONEY = re.compile(
    # (not a battery's: "how long does it run on one charge", "a full charge")
    r"\b((?<!one )(?<!full )(?<!per )(?<!each )(?<!single )(?<!holding a )(?<!hold a )(?<!holds a )"
    r"charg(?:e|ed|es|ing)|bill(?:ed|ing|s)?|"
    r"paid|pay(?:ing|ment|ments|s)?|refund\w*|transactions?|"
    # ("did you take the money off my gift card TWICE??", "这个订单我好像被扣了两次钱")
    r"statement|money|twice)\b|\$\d|扣|钱|付款",
    re.IGNORECASE,
)
# An order not placed yet ("before I place my next order", "before I order"): no order of theirs.
_A_FUTURE_ORDER = re.compile(r"\b(?:before|when|once)\s+(?:i|we)\s+(?:place\s+|make\s+)?"
                             r"(?:an?\s+|my\s+next\s+)?order\b"
                             r"|\b(?:my|our|the)\s+next\s+order\b|\border\s+again\b", re.IGNORECASE)
# A clause under this confidence that asks nothing and points at no order is scene-setting.
ASIDE_CONFIDENCE = 0.6
# ... and one under even odds, whose order only its status finds, is a tag on a clause read at least
# this surely.
TAG_ON_CONFIDENCE = 0.5
SURE_CONFIDENCE = 0.75


def without_asides(clauses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clauses without the ones that only set the scene for another request.

    "My aunt gave me a gift card for my birthday... do your gift cards expire?": the first clause
    reads, weakly, like an order question, but asks nothing (`nlp.speech_acts.asks_something`)
    and names or grounds to no order (or, read as a catalogue question, names no product);
    beside a clause that does ask, answering it would only ask back "which order?" or fail to
    find a product. A message of asides alone keeps them all."""
    from csagent.grounding.status import statuses_described
    from csagent.nlp.speech_acts import asks_something, asks_to_have_it_checked

    def aside(clause: Mapping[str, Any]) -> bool:
        entities = clause.get("entities") or {}
        intent = clause.get("intent", "")
        points_nowhere = (
            (_needs_order(intent) and not _names_order(entities) and not entities.get("grounded_orders")
             and not entities.get("question"))
            or (intent in CATALOGUE_QUESTIONS and not entities.get("products"))
            or intent == "account_info")
        # (a written address is no aside: "... send it to my sister's place instead? 12 Walnut
        # Street, Philadelphia PA 19103" gives the change before it its address)
        return (points_nowhere and float(clause.get("confidence") or 0.0) < ASIDE_CONFIDENCE
                and not asks_something(clause.get("text", "")) and not entities.get("address"))

    def tag_on(clause: Mapping[str, Any]) -> bool:
        # "If I end up returning something, do I have to pay for the return label? Just want to
        # know before I order!": a fragment read below even odds as an order question, whose
        # order only its status could find (every order the customer has), beside a question
        # read with confidence, says why they ask; asking back "which order?" answers nothing.
        # So is a wish to check, of nothing named ("which payment methods do I have saved? Just want
        # to double check before I order again"): what it checks is the question beside it; and
        # what speaks of an order not placed yet, however surely read ("I'd like to know before I
        # place my next order").
        entities = clause.get("entities") or {}
        text = clause.get("text", "")
        return (_needs_order(clause.get("intent", "")) and not _names_order(entities)
                and (entities.get("grounded") or {}).get("by") == "status"
                and (float(clause.get("confidence") or 0.0) < TAG_ON_CONFIDENCE
                     or asks_to_have_it_checked(text) or bool(_A_FUTURE_ORDER.search(text)))
                and statuses_described(text) is None)  # ("and the pending one?")

    changed = {str((c.get("entities") or {}).get("order_id")) for c in clauses
               if c.get("intent") in ACTION_INTENTS and (c.get("entities") or {}).get("order_id")}

    def told_of_a_change(clause: Mapping[str, Any]) -> bool:
        # "we really don't need the blue-dial watch after all ... Could you cancel that order?": a
        # read that asks nothing, of an order the message asks to change, is why the change is asked;
        # the change's answer says what the order is.
        # So is a product named without a question beside it ("The one with the dumbbells and the
        # water bottle too, that's fine, we don't need those either"): no catalogue answer is asked.
        entities = clause.get("entities") or {}
        read = (clause.get("intent") in ORDER_READS and str(entities.get("order_id")) in changed
                and not entities.get("order_ids"))
        named = bool(changed) and clause.get("intent") in CATALOGUE_QUESTIONS
        return (read or named) and not asks_something(clause.get("text", ""))

    def announces(clause: Mapping[str, Any]) -> bool:
        # "I've got a few questions about my espresso machine, hope that's ok": the questions come
        # after it; it asks nothing itself (whatever intent its words resemble).
        text = clause.get("text", "")
        return bool(_ANNOUNCES_QUESTIONS.search(text)) and not asks_something(text)

    def asks_the_amount_again(clause: Mapping[str, Any]) -> bool:
        # "Did you at least give me my money back? How much?": the amount of what the clause before
        # asked about, which its answer says.
        return bool(_BARE_HOW_MUCH.fullmatch(clause.get("text", ""))) and clause is not clauses[0] \
            and any(_names_order(c.get("entities") or {}) or (c.get("entities") or {}).get("grounded_orders")
                    for c in clauses if c is not clause)

    kept = [c for c in clauses if not aside(c) and not told_of_a_change(c) and not announces(c)
            and not asks_the_amount_again(c)]
    if any(float(c.get("confidence") or 0.0) >= SURE_CONFIDENCE and c.get("intent") not in PASSIVE_INTENTS
           and not tag_on(c) for c in kept):
        kept = [c for c in kept if not tag_on(c)]
    return kept if any(c.get("intent") not in PASSIVE_INTENTS for c in kept) else list(clauses)


def expand_orders(clauses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One clause per order id for clauses naming several (`order_ids`), in the order given."""
    expanded: list[dict[str, Any]] = []
    for clause in clauses:
        entities = dict(clause.get("entities") or {})
        order_ids = list(dict.fromkeys(entities.pop("order_ids", None) or []))
        if len(order_ids) < 2:
            expanded.append({**clause, "entities": entities})
            continue
        expanded.extend({**clause, "entities": {**entities, "order_id": order_id}} for order_id in order_ids)
    return expanded


def plan_tasks(clauses: list[dict[str, Any]], *, max_tasks: int = 5,
               memory: Mapping[str, Any] | None = None, confirmation_id: str | None = None,
               documents_know: Callable[[str], bool] | None = None) -> Plan:
    """Tasks for every actionable clause, in the order the customer asked. `documents_know`
    tells whether the store's documents answer a question asked almost in these words
    (`knowledge.asked`; None: never asked, a question about a change gets the order's facts alone).
    Over `max_tasks`, a statement's tasks are left out before a question's (`_Builder.trimmed`)."""
    from csagent.grounding.facts import names_a_price_difference
    from csagent.grounding.frame import asks_another_item
    from csagent.nlp.speech_acts import asks_something, is_hypothetical

    memory = memory or {}
    b = _Builder(max_tasks=max_tasks, documents_know=documents_know)
    expanded = expand_orders(fold_details(without_asides(clauses)))
    requested = {(c.get("intent"), (c.get("entities") or {}).get("order_id")) for c in expanded
                 if (c.get("entities") or {}).get("asks_for_change")}
    # "Change the headphones to a speaker instead. I don't want headphones.": an item change the
    # rule rules out is explained once, and the clause beside it asks nothing more.
    explained = {(c.get("intent"), (c.get("entities") or {}).get("order_id")) for c in expanded
                 if (c.get("entities") or {}).get("not_an_option_change")}
    # (in the clauses as read, before a question of the difference is folded into its change)
    b.price_asked = any(_HOW_MUCH.search(c.get("text", "")) or names_a_price_difference(c.get("text", ""))
                        for c in clauses)
    context = dict(memory)  # "that one" in a later clause is the product an earlier clause named
    read_before: str | None = None  # the one order the last order read of this message was about
    said: set[tuple[str, Any]] = set()  # the changes asked for so far, by (intent, order)
    for clause in expanded:
        intent = clause.get("intent", "")
        entities: dict[str, Any] = dict(clause.get("entities") or {})
        text = clause.get("text", "")
        b.telling = not (entities.get("asks_for_change") or asks_something(text))
        order_id = entities.get("order_id")
        named = _one_product(entities)
        if named:
            context["last_product"] = named
        if intent == "order_list" and order_id and _names_an_order_id(text):
            # "check order #W…" names one order: it is not a list question. (An id another clause
            # names is no reason: "a list of all my orders and the status of each one? I know
            # #W1812830 is one of them but I've lost track of the rest")
            intent = "order_status"
        if intent in ACTION_INTENTS and order_id and entities.get("asks_for_change") is not False \
                and not any(entities.get(k) for k in ("item_ids", "new_item_ids", "products")):
            # "Cancel my helmet order. It's useless and I want it gone.": one request, said twice.
            if (intent, order_id) in said:
                continue
            said.add((intent, order_id))
        # "does the coffee maker I ordered have a timer?": the customer's own item, option by
        # option, after what the product's pages and the catalogue say (below).
        owned_in = entities.get("owned_in") if intent in CATALOGUE_QUESTIONS else None
        if entities.get("invalid_order_id") and not order_id and (intent in ORDER_READS or (
                intent in ACTION_INTENTS and "order_id" in ACTION_INTENTS[intent][1])):
            b.need(intent, "order_id", entities, text)  # a mistyped id: ask, never guess another order
            continue
        if intent in ORDER_READS and not order_id and entities.get("tracking_number"):
            # A tracking number (typed, or read from a label photo) identifies the order.
            params = {"tracking_id": entities["tracking_number"]}
            b.add(ORDER_READS[intent][0], PREDEFINED, {"template_id": "order_by_tracking", "params": params})
            continue
        if intent in ORDER_READS:
            task_type, template = ORDER_READS[intent]
            if not order_id and entities.get("question"):
                b.need(intent, "order_id", entities, text)  # several orders fit: asked with the candidates
                continue
            # ("is anything of mine actually on the way rn? drop the tracking # if so": a read naming
            # nothing after one that found one order asks about that order)
            order_id = order_id or (read_before if not any(entities.values()) else None) \
                or memory.get("last_order_id")
            read_before = str(order_id) if order_id else None
            if not order_id and intent == "refund_status" and _HOW_LONG.search(text):
                # "how long until my refund shows up on my card?", "退款到PayPal要多久？": the store's
                # timings answer, whichever order it is.
                b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS["refund_timing"]})
                continue
            if not order_id:
                b.need(intent, "order_id", entities, text)
                continue
            specific = ORDER_QUESTIONS.get(intent)
            if specific and text:
                # The closest specific question about the order ("where will it ship to?"), or the
                # intent's own answer; the tool decides by the templates' examples. When that is
                # the order's items and the question asks about some of them ("订单里那个充电宝是什么
                # 接口？"), those items' lines answer (`own_products`), not the whole order's.
                # What some of its items cost is their lines, never the order's total or what was
                # charged for the whole ("W6483628 - what did the pet bed cost me", "how much did i
                # pay for the wireless headphones in W7190291 again?").
                own = [str(p) for p in entities.get("own_products") or []]
                whole = {"order_total", "order_payments"} if _AMOUNT_ASKED.search(text) else {"order_total"}
                if _WHOLE_ORDER.search(text):
                    whole = set()
                closest = [t for t in specific if not (own and t in whole)]
                if _METHOD_ASKED.search(text) and "order_payments" in specific:
                    # what it was paid with is the order's payment, whichever item it is asked of
                    # ("what did i pay for the gaming mouse with")
                    closest, template = ["order_payments"], "order_payments"
                # ("total on my pending order?": "pending" only said which order; the total is asked)
                from csagent.grounding.status import without_status_words

                by_status = (entities.get("grounded") or {}).get("by") == "status"
                asked = without_status_words(text) if by_status else text
                if not own and _TRACKING_ASKED.search(text) and _ADDRESS_ASKED.search(text):
                    # "perfume order - what address is it going to + tracking no.": where it goes and
                    # how to follow it, which the order's overview says both of (its status, tracking
                    # number and address), not the address alone
                    b.order_lookup(order_id)
                    continue
                if not own and _STATUS_ASKED.search(text) \
                        and (_AMOUNT_ASKED.search(text) or _WHOLE_ORDER.search(text)):
                    # "W6371438 status + total": where it has got, which its overview says, and (the
                    # closest question below, never the overview again) what it came to
                    b.order_lookup(order_id)
                    closest = [t for t in closest if t != "order_overview"]
                    asked = " ".join(_STATUS_ASKED.sub(" ", asked or text).split())
                if not own and _ITEMS_ASKED.search(text) \
                        and (_AMOUNT_ASKED.search(text) or _WHOLE_ORDER.search(text)):
                    # "#W6111820 whats in it + total": what it holds, and (the closest question
                    # below) what it came to
                    b.add("order_items", PREDEFINED,
                          {"template_id": "order_items", "params": {"order_id": order_id}})
                b.add(task_type, PREDEFINED, {"question": asked or text, "params": {"order_id": order_id},
                                              "fallback_template": template, "templates": closest},
                      notes=TaskNotes(own_products=own,
                                      asked_options=list(entities.get("own_options_asked") or []))
                      if own else None)
            elif template == "order_overview":
                b.order_lookup(order_id)
            else:
                b.add(task_type, PREDEFINED, {"template_id": template, "params": {"order_id": order_id}})
        elif intent == "order_list":
            # ("list my orders ... and let me know which of them haven't shipped yet": every order,
            # each with its status, answers both)
            params = {} if _WHICH_OF_THEM.search(text) else _status_filter(text)
            products = [p for p in entities.get("products") or [] if p.get("product_id")]
            if len(products) == 1:
                params["product_id"] = str(products[0]["product_id"])  # "which orders have a chair in them"
            b.add("order_list", PREDEFINED, {"template_id": "customer_orders", "params": params})
        elif intent == "complaint" and entities.get("parcel_missing"):
            # "... is showing delivered but I don't find the package anywhere": the order's facts and
            # the store's rule for a parcel marked delivered that never turned up (whatever the
            # manual of the product inside says).
            if order_id:
                b.order_lookup(order_id)
            b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS["parcel_missing"]})
        elif intent == "complaint":
            # Something went wrong: the order's facts (its payments when money is the matter) and
            # what the store's documents say to do; nothing proposed until the customer asks.
            if order_id and (_MONEY.search(text) or _names_an_amount(text)):
                # "charged twice for the boots", "PayPal shows 296.82 taken out TWICE": each item
                # with its price, and what was paid.
                for template in ("order_items", "order_payments"):
                    b.add(template, PREDEFINED, {"template_id": template, "params": {"order_id": order_id}})
                products = [p for p in entities.get("products") or [] if p.get("product_id")]
                if len(products) == 1 and _TWICE.search(text):
                    # (the product charged "twice" may sit in two orders, each paid once: the
                    # orders holding it say so; a cancelled one was refunded)
                    b.add("order_list", PREDEFINED, {"template_id": "customer_orders", "params": {
                        "product_id": str(products[0]["product_id"]), "not_status": "cancelled"}})
            elif not order_id and not entities.get("products") and not has_ideographs(text) \
                    and (statuses := _status_filter(text)):
                # "I've been waiting forever and NOTHING has shown up": no order named, the statuses
                # told ("nothing has shown up": not delivered) pick the orders it is about. (Not
                # in Chinese, whose status words the lexicon reads without what is asked of them:
                # "还没到的就不用列了" says not to list those.)
                b.add("order_list", PREDEFINED, {"template_id": "customer_orders", "params": statuses})
            elif order_id:
                b.order_lookup(order_id)
                if entities.get("products") \
                        or (entities.get("told_of") and _SAYS_WHAT_WAS_ORDERED.search(text)):
                    # "you sent me the grey one": what the order holds, option by option, beside
                    # where it is and what can be done (so for the product a clause before told of,
                    # when this one says what was ordered: "... are synthetic. I'm sure I ordered
                    # leather").
                    b.add("order_items", PREDEFINED,
                          {"template_id": "order_items", "params": {"order_id": order_id}})
            # What the store's documents say, when they say anything: silent when they do not and
            # the order's facts answer (`summarise.quiet_miss`). Searched with the products named
            # ("my robot vacuum won't dock", "the right earbud stopped playing"), so their own
            # pages answer (the manual's troubleshooting) and no other product's does, unless the
            # store's general pages are closer ("delivered but nothing at my door"); or, when the
            # clause names none, the products the message named in its order (`told_of`).
            args: dict[str, Any] = {"question": _naming_the_product(text, entities)}
            product_ids = [str(p["product_id"]) for p in _named_products(entities)] \
                or [str(p) for p in entities.get("told_of") or []]
            product_ids = product_ids[:MAX_PRODUCTS_ASKED]
            if product_ids:
                args.update(product_ids=product_ids, general_too=True)
            b.add("policy", KNOWLEDGE, args, notes=TaskNotes(supplementary=bool(order_id)))
        elif intent == "account_info":
            # "how much did I pay for #W1 and which card did I use": beside an order, a question
            # about payments may be that order's.
            about_order = ORDER_ACCOUNT_QUESTIONS if order_id else ()
            # (the address asked beside another fact is its own task, below: the closest question
            # is the other fact's)
            address_too = bool(_ADDRESS_AND_MORE_ASKED.search(text)) and not order_id
            account = [q for q in ACCOUNT_QUESTIONS if not (address_too and q == "default_address")]
            if entities.get("account_fact") in ACCOUNT_QUESTIONS:
                # (the fact the words were found to ask, by what they point at: a gift card's balance)
                b.add("account_info", PREDEFINED, {"template_id": entities["account_fact"], "params": {}})
            else:
                b.add("account_info", PREDEFINED, {"question": text,
                                                   "params": {"order_id": order_id} if order_id else {},
                                                   "fallback_template": "customer_profile",
                                                   "templates": [*account, *about_order]})
            if address_too:
                # "could you confirm the email address and the home address you have on file?": two
                # facts of the account, the closest template gives one; the address is the other.
                b.add("account_info", PREDEFINED, {"template_id": "default_address", "params": {}})
            if entities.get("documents_too"):
                # "does my gift card expire?": the store's rule answers, beside what the account holds.
                b.add("policy", KNOWLEDGE, {"question": text})
        elif owned_in and entities.get("own_options_asked") and not entities.get("asks_the_store_too"):
            # "r my hiking boots waterproof??": their own pair's line answers, yes or no (below);
            # which other versions the store sells is not what was asked (unless the clause asks
            # that too: "are those leather or what? also do u have them in a size 10").
            pass
        elif intent in CATALOGUE_QUESTIONS and entities.get("documents_first") and _one_product(entities):
            # "is the IPX7 earbuds ok for swimming laps?": what the product's documents say, and the
            # catalogue's facts about it only if they say nothing (`summarise.unneeded_fallback`).
            product = _one_product(entities) or {}
            documents = b.add("policy", KNOWLEDGE, {"question": _naming_the_product(text, entities),
                                                    "product_ids": [product["product_id"]]},
                              notes=TaskNotes(supplementary=True))
            b.add(CATALOGUE_QUESTIONS[intent], PREDEFINED, _catalogue_question(text, entities, context),
                  notes=TaskNotes(fallback_for=documents))
        elif intent in CATALOGUE_QUESTIONS and not entities.get("products") and entities.get("categories"):
            # "yall got any pet stuff?": what the category holds, with prices.
            for category in list(entities["categories"])[:MAX_PRODUCTS_ASKED]:
                b.add(CATALOGUE_QUESTIONS[intent], PREDEFINED,
                      {"template_id": "products_in_category", "params": {"category": str(category)}})
        elif intent in CATALOGUE_QUESTIONS and _coordinated(text, _named_products(entities)):
            # "do you sell smartphones and tablets?": the question asked of each product it names.
            for each in _named_products(entities)[:MAX_PRODUCTS_ASKED]:
                b.add(CATALOGUE_QUESTIONS[intent], PREDEFINED,
                      _catalogue_question(text, {**entities, "products": [each]}, context))
        elif intent in CATALOGUE_QUESTIONS:
            args = _catalogue_question(text, entities, context)
            unnamed = "product" not in args and "context_product" not in args
            if intent == "product_availability" and unnamed:
                # "yall sell air fryers?" names nothing the store sells: when no catalogue question
                # matches either, the answer is that we don't seem to, and what we do sell.
                args["unmatched"] = "not_sold"
            catalogue_task = b.add(CATALOGUE_QUESTIONS[intent], PREDEFINED, args)
            if unnamed and not entities.get("products") and intent == "product_info" and catalogue_task:
                # "u guys price match?" names no product: if no catalogue question fits, the store's
                # pages may answer it (`summarise.covered_failure`), rather than "say it another way".
                b.add("policy", KNOWLEDGE, {"question": text}, notes=TaskNotes(fallback_for=catalogue_task))
        elif intent in KNOWLEDGE_QUESTIONS:
            # ("Why hasn't a SINGLE one of my open orders shipped yet?? ... What is going on over
            # there?": a question read weakly beside requests read surely is said only if the
            # store's documents answer it)
            weak = float(clause.get("confidence") or 0.0) < TAG_ON_CONFIDENCE and any(
                c is not clause and c.get("intent") not in PASSIVE_INTENTS
                and float(c.get("confidence") or 0.0) >= TAG_ON_CONFIDENCE for c in expanded)
            _plan_knowledge(b, intent, text, entities, memory, weak=weak)
        elif intent == "change_items" and (intent, order_id) in explained:
            if entities.get("not_an_option_change"):
                # "take the keyboard out", "add a second kettle": the order's items and the rule.
                items = {"template_id": "order_items", "params": {"order_id": order_id}}
                b.add("order_items", PREDEFINED, items)
                kind = str(entities["not_an_option_change"])
                if kind == "other_product" and entities.get("order_status") == "delivered":
                    kind = "other_product_delivered"  # an exchange, whose rule names the way out: a return
                b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS[kind]})
        elif intent == "change_payment" and order_id \
                and (entities.get("method_not_held") or entities.get("split_asked")):
            # "Is possible to pay the order with PayPal?" from an account without PayPal (a payment
            # moves only to a method on the account), "split the payment, half on my Visa and half
            # on my PayPal" (one method pays an order): how the order is paid, the methods the
            # account holds (the one asked for said missing) and the rule; nothing proposed nor asked.
            b.add("order_payments", PREDEFINED,
                  {"template_id": "order_payments", "params": {"order_id": order_id}})
            missing = entities.get("method_not_held")
            if missing:
                b.add("account_info", PREDEFINED, {"template_id": "payment_methods", "params": {}},
                      notes=TaskNotes(method_not_held=str(missing)))
            rule = "method_not_held" if missing else "split"
            b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS[rule]})
        elif intent in ADDRESS_REQUESTS and not entities.get("address") \
                and (entities.get("abroad") or names_a_place_abroad(text)):
            # "I move to Toronto in Canada next month. ... can you change the address to Toronto?":
            # the store delivers only in the US; said at once, no address asked for.
            if order_id:
                b.order_lookup(order_id)
            b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS["abroad"]})
        elif intent == "change_order_address" and entities.get("address") \
                and not entities.get("asks_for_change") \
                and entities.get("already_ships_there") == entities.get("address"):
            # "leave it going to my home address": where it already goes. The order's facts. (The
            # address another clause gives instead is a change: "it is set to go to 585 Hillcrest
            # Drive. Send it to my home address instead". Asked to send it where it already goes,
            # the change itself says there is nothing to change.)
            _plan_question_about_a_change(b, intent, text, entities, memory)
        elif intent == "return_request" and entities.get("missing_told"):
            # "Only ONE black t-shirt came and I paid for TWO ... the money for it back": what never
            # came is not sent back; the order's facts and the store's rule for missing items.
            if order_id:
                b.order_lookup(order_id)
            b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS["missing"]})
        elif intent == "return_request" and entities.get("not_returnable"):
            # "I opened the perfume, I'd like to return it": the store takes it back only unopened
            # ("it shrank after one wash": nothing washed or altered is taken back). That rule, no
            # proposal.
            _add_return_rule(b, "washed" if entities.get("washed") else "opened", entities["not_returnable"],
                             order_id)
        elif intent == "cancel_order" and entities.get("order_status") == "cancelled" and order_id:
            # "yo cancel the smart watch" about an order already cancelled: that it is, and what its
            # refund was, where it went and when it shows; nothing to propose.
            b.order_lookup(order_id)
            b.add("refund_status", PREDEFINED,
                  {"template_id": "refund_status", "params": {"order_id": order_id}})
        elif intent == "cancel_order" and entities.get("partial_items"):
            # "Cancel only the earbuds": a cancellation is of the whole order. The order's facts
            # and the store's rule, no proposal and no reason asked for.
            _plan_question_about_a_change(b, intent, text, entities, memory)
            b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS["removal"]})
        elif intent in ACTION_INTENTS and entities.get("asks_for_change") is False \
                and (entities.get("settled") or (entities.get("question") and (
                    entities.get("target_named") or _orders_its_product_fits(entities)
                    or (entities.get("undecided") and asks_another_item(text)
                        and not _status_rules_out(intent, entities)))
                    and not is_hypothetical(text))):
            # "can I swap my sneakers for the size 11?" when no size 11 is available: that is the
            # answer (with what is available instead, when something is: "can u bump em up to a 9?");
            # "can I get the tee in a different colour?": which colour, asked; "can i change the navy
            # backpack to a grey one?" with a backpack in two orders: which order, asked (what can be
            # done depends on it); "can i swich the kettle in my order thats not shipped yet to a
            # diffrent color" with two kettles in it: which one. ("Could I still change the switches
            # if I decide to?" only weighs it: whether it can be done, below.)
            asked_back = entities.get("asks_value") or entities.get("undecided") \
                or _orders_its_product_fits(entities)
            settled = {} if asked_back and not entities.get("settled") else {"settled": True}
            b.need(intent, "details", {**entities, **settled}, text)
        elif intent in ACTION_INTENTS and entities.get("asks_for_change") is False:
            if (intent, order_id) not in requested:  # "cancel #W1, I ordered it by mistake": one request
                _plan_question_about_a_change(b, intent, text, entities, memory)
        elif intent in ACTION_INTENTS and _status_rules_out(intent, entities) \
                and any(not entities.get(name) for name in ACTION_INTENTS[intent][1]):
            # Check before asking: a delivered order cannot be cancelled, so the facts and the rule
            # (and what is allowed instead) come at once, not a question about the reason first. A
            # request with every detail goes to the action, whose policy check says why not.
            _plan_question_about_a_change(b, intent, text, entities, memory)
        elif intent in ACTION_INTENTS:
            action, required = ACTION_INTENTS[intent]
            if action == "change_items":
                action = str(entities.get("item_action") or "change_items")
            if "order_id" in required and not order_id:
                order_id = memory.get("last_order_id")
                if order_id:
                    entities["order_id"] = order_id
            absent = [name for name in required if not entities.get(name)]
            if entities.get("unstated") and any(i != intent and o == order_id for i, o in requested):
                # "I have two speakers in one order. I want to return only the green one": the
                # items named beside another change of the order set the scene; nothing to ask.
                continue
            if entities.get("question"):  # grounding found several candidates, or none that fits
                items_unclear = intent in ITEM_REQUESTS and order_id and not entities.get("item_ids")
                asked = "item_ids" if items_unclear else str(entities.get("asked_for") or "details")
                b.need(intent, absent[0] if absent else asked, entities, text)
                continue
            if absent:
                b.need(intent, absent[0], entities, text)
                continue
            # The action's own details: a reason is for a cancellation, never carried into an exchange.
            args = {k: entities[k] for k in dict.fromkeys((*required, "item_ids", "payment_method_id"))
                    if entities.get(k)}
            if action == "return_items" and not args.get("item_ids"):
                # The tool matches the customer's words ("the skateboard", "everything") and the
                # catalogue products found in them to the order's items.
                args["items_text"] = text
                products = [p["product_id"] for p in entities.get("products") or [] if p.get("product_id")]
                if products:
                    args["product_ids"] = products
            b.add(action, ACTIONS, {"action": action, "phase": "propose", "args": args,
                                    **({"confirmation_id": confirmation_id} if confirmation_id else {})})
            if action == "return_items" and entities.get("only_unopened"):
                # (the condition the store takes the item back on, said with the proposal)
                _add_return_rule(b, "opened", entities["only_unopened"])
        if owned_in:
            # Only the lines of the products asked about: the rest of the order answers nothing.
            own = [str(p["product_id"]) for p in entities.get("products") or [] if p.get("product_id")]
            asked = list(entities.get("own_options_asked") or [])
            own = list(dict.fromkeys([*own, *(str(a["product_id"]) for a in asked)]))
            if own:
                b.own_items(owned_in, own, asked)
            else:
                b.add("order_items", PREDEFINED,
                      {"template_id": "order_items", "params": {"order_id": owned_in}})
    if any(isinstance(t.args, PredefinedCypherArgs) and t.args.template_id == "customer_orders"
           for t in b.plan.tasks):
        # "Which of my orders haven't arrived? Just the ones still on their way.": the list says
        # which orders a read beside it is about; asking for an order number too would ask twice.
        b.plan.missing = [m for m in b.plan.missing
                          if not (m["intent"] in ORDER_READS and m["parameter"] == "order_id")]
    return b.trimmed()


def _names_an_order_id(text: str) -> bool:
    from csagent.nlp.entities.identifiers import find_order_ids

    return bool(find_order_ids(text))


def _names_an_amount(text: str) -> bool:
    """Does the text name an amount to the cent ("296.82")? Money, whatever words go with it."""
    from csagent.grounding.facts import amounts

    return bool(amounts(text))


def _orders_its_product_fits(entities: Mapping[str, Any]) -> bool:
    """Are the clause's order candidates those holding a product it names ("the navy backpack", in
    two orders), not every order it might mean?"""
    return bool(entities.get("order_candidates")) and bool(entities.get("products"))


def _status_rules_out(intent: str, entities: Mapping[str, Any]) -> bool:
    """Is the grounded order in a status the request never applies to (`requests.STATUSES_FOR`)? The
    statuses are whole: an order whose items were modified ("pending (item modified)") is pending
    no more for a change, which the policy allows once."""
    status = entities.get("order_status")
    allowed = STATUSES_FOR.get(intent)
    return bool(status and allowed) and str(status) not in (allowed or ())


def _plan_question_about_a_change(b: _Builder, intent: str, text: str, entities: Mapping[str, Any],
                                  memory: Mapping[str, Any]) -> None:
    """The facts of the order, no proposal: nobody asked for the change yet."""
    templates = QUESTION_ABOUT_A_CHANGE.get(intent)
    order_id = entities.get("order_id") or memory.get("last_order_id")
    if templates is None:  # the default address: a question about it is answered by policy
        b.add("policy", KNOWLEDGE, {"question": text})
        return
    if not order_id:
        # "could I return a perfume once I've opened it?": no order of the customer's is meant, so
        # the store's rule answers; "can I return my perfume?" is about one, so it is asked for too.
        # A statement ("I'd rather have the money") asks nothing of the documents: what they say
        # is supplementary, unsaid when they have nothing (`summarise.quiet_miss`).
        from csagent.grounding.frame import asks_as_question, speaks_of_a_purchase

        asked = None if asks_as_question(text) else TaskNotes(supplementary=True)
        b.add("policy", KNOWLEDGE, {"question": text}, notes=asked)
        if speaks_of_a_purchase(text):
            b.need(intent, "order_id", entities, text)
        return
    how_much = bool(_HOW_MUCH.search(text))
    # (a return's money is asked about by where it goes too: "and it go back to my paypal?")
    where_to = intent == "return_request" and (_names_a_method(text) or bool(_HOW_LONG.search(text)))
    money = MONEY_ABOUT_A_CHANGE.get(intent) if how_much or where_to else None
    named = list(entities.get("item_ids") or []) if how_much else []
    for template in (*templates, *([money] if money and money not in templates else [])):
        notes: dict[str, Any] = {}
        if template == "order_items" and named:
            # "if I return the backpack and the pet bed, how much will I get back in total?": the
            # reply adds up the items named (`replies.named_items_total`).
            notes["named_items"] = named
        if template == "order_payments" and intent == "cancel_order":
            # "if I cancelled it, how much would I get back?": what would go back, where and when
            # (`replies.cancel_refund_preview`).
            notes["refund_preview"] = True
        if template == "order_payments" and intent == "return_request":
            # "if I send back the notebook, how much do I get, and does it go to my paypal?": where
            # the refund would go and when (`replies.return_refund_preview`).
            notes["return_preview"] = True
        b.add(template, PREDEFINED, {"template_id": template, "params": {"order_id": order_id}},
              notes=TaskNotes(**notes))
    if intent == "change_items" and b.price_asked:
        # "Would it be possible to exchange it for the 30-50 lb version ... and what would the price
        # difference be? I haven't decided yet": the price of each version wished for, beside the
        # order's items and their prices (asked about, nothing proposed)
        for item_id in entities.get("new_item_ids") or []:
            b.add("product_info", PREDEFINED,
                  {"template_id": "variant_price", "params": {"item_id": item_id}})
    if intent == "change_payment":
        from csagent.grounding.resolve import names_a_gift_card

        if names_a_gift_card(text):
            # "whether my gift card has enough on it to cover the blue t-shirt order": what is on it,
            # beside what the order was charged
            b.add("account_info", PREDEFINED, {"template_id": "gift_card_balance", "params": {}})
    if intent == "return_request" and entities.get("only_unopened"):
        # "I haven't opened the perfume yet. Would I still be able to return it?": the condition the
        # store takes it back on, beside the order's facts
        _add_return_rule(b, "opened", entities["only_unopened"])
    if how_much and _WHEN.search(text) and intent not in {"cancel_order", "return_request"}:
        # "if I cancel it, how much do I get back and when?": the amount, and how long it takes.
        b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS["refund_timing"]})
    elif b.documents_know is not None and _asks_the_documents(text, b.documents_know):
        # "I opened the perfume, can I still send it back?": the order's facts, and the store's rule
        # that answers a question asked almost in these words (`knowledge.asked`); unsaid when the
        # search finds nothing.
        b.add("policy", KNOWLEDGE, {"question": text}, notes=TaskNotes(supplementary=True))


def _add_return_rule(b: _Builder, kind: str, items: Sequence[str], order_id: str | None = None) -> None:
    """The store's rule for returning `items` once opened or used (`kind` "opened") or washed
    ("washed"), quoted about `order_id` when given ("Order #W1: for hygiene reasons ...")."""
    b.add("policy", KNOWLEDGE, {"question": RULE_QUESTIONS[kind].format(items=" and ".join(items)),
                                "topic": "returns"},
          notes=TaskNotes(order_id=order_id) if order_id else None)


def _names_a_method(text: str) -> bool:
    from csagent.grounding.resolve import names_a_payment_method

    return names_a_payment_method(text)


def _asks_the_documents(text: str, documents_know: Callable[[str], bool]) -> bool:
    """Is the clause a question (`asks_as_question`) the store's documents answer in almost these
    words (`documents_know`)?"""
    from csagent.grounding.frame import asks_as_question

    return asks_as_question(text) and documents_know(text)


_HOW_MUCH = re.compile(r"\b(?:how much|get back|money back|refund\w*|money (?:\w+ ){0,3}back"
                       r"|get (?:the |my )?(?:whole |full |entire )?(?:amount|sum|total|price) back)\b"
                       r"|多少钱|退多少|退回多少|退款", re.IGNORECASE)
_WHEN = re.compile(r"\b(when|how (?:long|quickly|soon|fast|many days))\b", re.IGNORECASE)
_HOW_LONG = re.compile(r"\bhow (?:long|quickly|soon|fast|many (?:business )?days)\b|多久|多长时间|几天",
                       re.IGNORECASE)


def _plan_knowledge(b: _Builder, intent: str, text: str, entities: Mapping[str, Any],
                    memory: Mapping[str, Any], *, weak: bool = False) -> None:
    """A knowledge question; when it refers to a product of an order ("those headphones"),
    it depends on that order's lookup and takes its product ids from it. A `weak` one (read
    weakly beside sure requests) naming nothing is said only if the documents answer it."""
    task_type = KNOWLEDGE_QUESTIONS[intent]
    if entities.get("another_persons"):
        # "the status of my husband's order": the rule that one account holder is helped at a time.
        b.add(task_type, KNOWLEDGE, {"question": RULE_QUESTIONS["another_person"]})
        return
    # A warranty question is answered from the warranty terms first, not a manual that mentions it.
    args: dict[str, Any] = {"question": _naming_the_product(text, entities),
                            **({"topic": "warranty"} if intent == "warranty" else {})}
    products = [p["product_id"] for p in entities.get("products") or [] if p.get("product_id")] \
        or [str(p) for p in entities.get("told_of") or []]  # named elsewhere in the message
    if products:
        # (a warranty asked of an item of an order the words name says which: "Order #W1: Smart
        # Watch ... 1 year of parts and labour.")
        about = str(entities.get("order_id") or "") if intent == "warranty" else ""
        named = {str(p["product_id"]): str(p.get("name") or "") for p in entities.get("products") or []
                 if p.get("product_id")}
        if intent == "warranty" and len(named) > 1:
            # "could you tell me how long my office chair and grill are each covered?": the terms
            # for each product, asked of each (one search finds the one its words are nearest)
            for product_id, name in list(named.items())[:MAX_PRODUCTS_ASKED]:
                b.add(task_type, KNOWLEDGE, {**args, "question": f"{name}: {args['question']}",
                                             "product_ids": [product_id]},
                      notes=TaskNotes(order_id=about) if about else None)
            return
        b.add(task_type, KNOWLEDGE, {**args, "product_ids": products[:MAX_PRODUCTS_ASKED]},
              notes=TaskNotes(order_id=about) if about else None)
        return
    reference = entities.get("reference")
    order_id = entities.get("order_id") or (memory.get("last_order_id") if reference else None)
    # (what "it" is in a question naming where money goes is the money, no product: "how long till it
    # actually shows on paypal tho" after a refund was told)
    if reference and order_id and not _names_a_method(text):
        lookup = b.order_lookup(order_id)
        if lookup is not None:
            b.add(task_type, KNOWLEDGE, args, depends_on=(lookup,),
                  notes=TaskNotes(products_from=ProductsFrom(task=lookup, hint=reference.get("hint"))))
            return
    from csagent.nlp.entities.identifiers import ORDER_ID_RE

    if intent == "policy_question" and order_id and entities.get("order_status") and ORDER_ID_RE.search(text):
        # "W2403075 - if cancelled, gift card refund instant?": the store's rule, beside the facts of
        # the order of theirs it is asked of (its status, how it was paid)
        b.order_lookup(str(order_id))
    b.add(task_type, KNOWLEDGE, args, notes=TaskNotes(supplementary=True) if weak else None)


def _naming_the_product(text: str, entities: Mapping[str, Any]) -> str:
    """The question for the store's documents, with the product it is about named when another
    clause of the message named it ("Office Chair: is that covered, and for how long?",
    "Wireless Earbuds: can I use them for swimming?"): the words alone ask of nothing; and with
    the catalogue's name where the words misspell it ("the warranty on the Offce Chhair")."""
    told = str(entities.get("told") or "").strip()
    if told:
        # "does the warranty cover that?" after "my dog ate a corner off the pet bed": asked with
        # what it points back at (`understanding_local`: `told`).
        text = f"{told} {text}"
    for product in entities.get("products") or []:
        # "the warranty on the Offce Chhair": the documents are searched with the catalogue's name
        # (misspelt or everyday words, in Latin script; a Chinese question keeps its own words)
        surface, name = str(product.get("surface") or ""), str(product.get("name") or "")
        if surface and name and surface.isascii() and surface.lower() not in name.lower() and surface in text:
            text = text.replace(surface, name)
    names = [str(p["name"]) for p in entities.get("products") or [] if p.get("carried") and p.get("name")] \
        or [str(n) for n in entities.get("told_of_names") or []]
    named = [n for n in names if n.lower() not in text.lower()]
    return f"{', '.join(named)}: {text}" if named else text


def resolve_args(task: Task, dependencies: Mapping[str, ToolResult]) -> Task:
    """Fill arguments that come from earlier tasks (the product ids of a knowledge search, from an
    order lookup's row: `notes.products_from`, which is then done with)."""
    spec = task.notes.products_from
    if spec is None:
        return task
    from csagent.nlp.entities.references import Reference, resolve_product_reference

    lookup = dependencies.get(spec.task)
    data = lookup.data if lookup is not None else None
    overview = data.order_overview if isinstance(data, CatalogueData) else None
    items = [{"product_id": i.product_id, "name": i.name or ""} for i in (overview.items if overview else [])
             if i.product_id]
    # "those headphones" picks the order's headphones; an unclear reference keeps every product
    # of the order, so the search still favours what the customer bought.
    best = resolve_product_reference(Reference("product", spec.hint), items)
    chosen = [best["product_id"]] if best else list(dict.fromkeys(i["product_id"] for i in items))
    args = type(task.args).model_validate({**task.args.model_dump(), "product_ids": chosen})
    notes = TaskNotes.model_validate({k: v for k, v in task.notes.model_dump().items()
                                      if k != "products_from"})
    return task.model_copy(update={"args": args, "notes": notes})


# -- the planner model's proposal ---------------------------------------------------------------
#: What a planner model may choose per clause: the intents this module turns into tasks, and what
#: each does. A proposal names entries of this table only; `plan_tasks` builds the tasks.
TASK_CATALOGUE: dict[str, str] = {
    "order_status": "read an order's status, shipments and tracking (needs the order id)",
    "tracking": "read where an order's parcel is (needs the order id, or a tracking number)",
    "order_items": "list the items of an order (needs the order id)",
    "refund_status": "read the refunds of an order (needs the order id)",
    "order_list": "list the customer's orders",
    "complaint": "something went wrong with an order (damaged, wrong item, missing, late, charged twice): "
                 "read the order and what the store's documents say to do",
    "account_info": "read what the customer's account holds (default address, email, payment methods, "
                    "gift card balance, total spent)",
    "product_info": "answer a question about a product of the catalogue",
    "product_availability": "say whether a product or an option is in stock",
    "warranty": "answer a warranty question from the store's documents",
    "policy_question": "answer a policy question (returns, shipping, payment) from the store's documents",
    **{intent: request.description for intent, request in BY_INTENT.items()},
}


class PlanStep(BaseModel):
    """One request of the message: the clause it comes from, the catalogue entry, the order."""

    clause: int = Field(description="the clause's number, from 1")
    task: str = Field(description="a name of the task catalogue")
    order_id: str | None = Field(default=None, description="one of the customer's order ids, or null")


class PlannerAnswer(BaseModel):
    """What the planner prompt asks for."""

    steps: list[PlanStep]


def actionable(clauses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clauses that ask for something a task serves."""
    return [c for c in clauses if c.get("intent") in TASK_CATALOGUE]


def _catalogue_question(text: str, entities: Mapping[str, Any], memory: Mapping[str, Any]) -> dict[str, Any]:
    """A question about the catalogue, with the one product its words were grounded to (and the
    options named), else the product the conversation was last about ("which colour is that
    one?"); the tool uses them where the question's own words fall short."""
    args: dict[str, Any] = {"question": text, "params": {}}
    named = _one_product(entities)
    if named:
        args["product"] = named
    elif not entities.get("products") and isinstance(memory.get("last_product"), Mapping):
        args["context_product"] = dict(memory["last_product"])
    return args


def _named_products(entities: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The distinct catalogue products a clause's words were grounded to, in the order named."""
    seen: dict[str, Mapping[str, Any]] = {}
    for p in entities.get("products") or []:
        if isinstance(p, Mapping) and p.get("product_id"):
            seen.setdefault(str(p["product_id"]), p)
    return list(seen.values())


_COORDINATOR = re.compile(r"^[\s,]*(?:(?:and|or|&|plus|as well as)\s+)?(?:(?:the|a|an|your|some)\s+)?$",
                          re.IGNORECASE)


def _coordinated(text: str, products: list[Mapping[str, Any]]) -> bool:
    """Are several products named side by side ("smartphones and tablets", "the lamp, the mug or
    the kettle"), each the object of the question, rather than one describing another ("the weight
    limit on the office chair")?"""
    if len(products) < 2:
        return False
    lowered = text.lower()
    spans = []
    for product in products:
        surface = str(product.get("surface") or product.get("name") or "").lower()
        at = lowered.find(surface) if surface else -1
        if at < 0:
            return False
        spans.append((at, at + len(surface)))
    spans.sort()
    pairs = zip(spans, spans[1:], strict=False)
    return all(_COORDINATOR.match(text[end:start]) for (_, end), (start, _) in pairs)


def _one_product(entities: Mapping[str, Any]) -> dict[str, Any] | None:
    """The catalogue product a clause's words were grounded to, when there is exactly one."""
    products = [p for p in entities.get("products") or [] if isinstance(p, Mapping) and p.get("product_id")]
    if len(products) != 1:
        return None
    return {k: products[0].get(k) for k in ("product_id", "name", "options", "surface") if k in products[0]}


def known_order_ids(clauses: list[dict[str, Any]], memory: Mapping[str, Any] | None = None) -> list[str]:
    """The order ids a plan may use: the ones the message gave, and the one the conversation is about."""
    found = [str(order_id) for c in clauses
             for order_id in [(c.get("entities") or {}).get("order_id"), *((c.get("entities") or {}).get(
                 "order_ids") or [])] if order_id]
    if memory and memory.get("last_order_id"):
        found.append(str(memory["last_order_id"]))
    return list(dict.fromkeys(found))


def clauses_from_steps(clauses: list[dict[str, Any]], steps: list[PlanStep],
                       allowed_orders: list[str]) -> list[dict[str, Any]] | None:
    """The clauses as the planner model read them, ready for `plan_tasks`; None when no step is valid.

    Validated: a step must name an existing clause and a catalogue entry, and its order id must be
    one the customer gave (anything else is ignored, never guessed). An actionable clause the
    model left out keeps its own reading, so nothing the customer asked is dropped.
    """
    from csagent.nlp.entities.identifiers import normalise_order_id

    proposed: list[tuple[int, dict[str, Any]]] = []
    for step in steps:
        index = step.clause - 1
        if not 0 <= index < len(clauses) or step.task not in TASK_CATALOGUE:
            continue
        clause = clauses[index]
        entities = dict(clause.get("entities") or {})
        order_id = normalise_order_id(step.order_id or "")
        if order_id in allowed_orders and not entities.get("order_id"):
            entities["order_id"] = order_id
            entities.pop("invalid_order_id", None)
        proposed.append((index, {**clause, "intent": step.task, "entities": entities}))
    if not proposed:
        return None
    covered = {index for index, _ in proposed}
    kept = [(i, c) for i, c in enumerate(clauses) if i not in covered and c.get("intent") in TASK_CATALOGUE]
    # In the customer's order of requests (a stable sort keeps a clause's steps in the model's order).
    return [clause for _, clause in sorted(proposed + kept, key=lambda pair: pair[0])]
