"""summarise: one reply from every task result. Results are merged in dependency order and
grouped by business category (orders, products, policies, changes to the account); every
failed or skipped task is named with the reason and the next step, and every parameter the
customer still has to give is asked for. Nothing is dropped silently.

With a SUMMARISER model the templated lines are the facts the model words into one reply; the
reply is used only when it still names every failed task (`replies.names_every_failure`) and
names no order the results do not. Proposed changes are always listed back by the template
(the customer's "yes" confirms exactly those words), and the questions for missing parameters
are appended as templated."""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Mapping
from graphlib import CycleError, TopologicalSorter
from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.actions import ActionName, PendingAction
from csagent.domain.models import ErrorType, Task, TaskResult, TaskStatus
from csagent.domain.task_args import CustomerActionArgs, PredefinedCypherArgs
from csagent.domain.template_rows import OrderItemRow
from csagent.domain.tool_data import ActionProposedData, CatalogueData, KnowledgeData, RowsData
from csagent.graph.context import GraphDeps
from csagent.graph.nodes.hand_off import wants_handoff
from csagent.graph.state import State, pending_actions, planned_tasks, task_results
from csagent.graph.timing import timed
from csagent.handoff.triggers import SYSTEM_FAILURES, detect_frustration
from csagent.models.errors import ModelUnavailable
from csagent.models.roles import Role
from csagent.planning import status_of_asking, still_asked
from csagent.replies import (
    ask_for,
    describe_failure,
    describe_success,
    drops_identifiers,
    failure_markers,
    invents_identifiers,
    language_name,
    names_every_failure,
    render,
)
from csagent.resilience.faults import crash_point
from csagent.understanding import FOLLOW_UP_INTENTS, ORDER_READ_INTENTS, asked_change

PROMPT = "summariser"
CATEGORY = {
    "order_status": "orders", "tracking": "orders", "order_items": "orders", "refund_status": "orders",
    "order_list": "orders", "account_info": "account", "product_info": "products",
    "product_availability": "products",
    "warranty": "policies", "policy": "policies",
}


def dependency_order(tasks: list[Task]) -> list[Task]:
    """Tasks ordered so that each comes after what it depends on, otherwise in the planner's order:
    of the tasks ready at each point, the one planned first (`graphlib.TopologicalSorter`, its
    ready tasks taken by plan position). A task that cannot be placed (in a cycle, after one, or
    depending on a task not in the plan) comes last, in plan order: the summary drops no task."""
    position = {task.task_id: index for index, task in enumerate(tasks)}
    sorter: TopologicalSorter[str] = TopologicalSorter()
    for task in tasks:
        sorter.add(task.task_id, *task.depends_on)
    # A cycle cannot come from the planner; after CycleError the sorter still yields every task
    # the cycle does not block.
    with contextlib.suppress(CycleError):
        sorter.prepare()
    ready: list[int] = []
    placed: list[int] = []
    while True:
        # An id that is no task of the plan is never done, so what depends on it is never ready.
        for task_id in sorter.get_ready():
            if task_id in position:
                heapq.heappush(ready, position[task_id])
        if not ready:
            break
        index = heapq.heappop(ready)
        placed.append(index)
        sorter.done(tasks[index].task_id)
    done = set(placed)
    return [tasks[index] for index in placed + [i for i in range(len(tasks)) if i not in done]]


def grouped(tasks: list[Task]) -> list[Task]:
    """Dependency order, then grouped by category in order of first appearance. A dependant
    always comes after what it depends on, because categories keep first-appearance order."""
    groups: dict[str, list[Task]] = {}
    for task in dependency_order(tasks):
        groups.setdefault(CATEGORY.get(task.task_type, "changes"), []).append(task)
    return [task for group in groups.values() for task in group]


def _failed(result: TaskResult | None) -> bool:
    return result is not None and result.status is TaskStatus.FAILED


def _answered(result: TaskResult | None) -> bool:
    return result is not None and result.status is TaskStatus.SUCCESS


def _error_type(result: TaskResult | None) -> ErrorType | None:
    return result.error.type if result is not None and result.error is not None else None


def last_order_id(tasks: list[Task], results: Mapping[str, TaskResult]) -> str | None:
    """The order this turn was about, for "that order" in the next turn. A change the store's rules
    refused was about its order too ("Cancel #W1." ... "Fine. Then at least give me the tracking
    number."); any other failure (an order not found, a timeout) names nothing known."""
    for task in reversed(tasks):
        result = results.get(task.task_id)
        if _failed(result) and _error_type(result) is not ErrorType.BUSINESS_RULE_VIOLATION:
            continue
        data = result.data if result is not None else None
        order_id = task.order_id
        if not order_id and isinstance(data, RowsData):
            order_id = (data.row or {}).get("order_id") or _the_one_listed(data.rows)
        if order_id:
            return str(order_id)
    return None


def orders_answered(tasks: list[Task], results: Mapping[str, TaskResult]) -> list[str]:
    """The orders this turn's answered tasks were each about, in order, when they were several ("is
    my kettle shipped yet" answered for both kettle orders): "the electric one" in the next turn
    picks one of them. One or none: empty (`last_order_id` keeps that one)."""
    ids = list(dict.fromkeys(str(t.order_id) for t in tasks
                             if t.order_id and _answered(results.get(t.task_id))))
    return ids if len(ids) > 1 else []


def the_one_order_named(clauses: list[dict[str, Any]]) -> str | None:
    """The one order of the customer's this turn's clauses named when no task read one ("W2403075 -
    if cancelled, gift card refund instant?", answered from the store's pages ... "ok cancel it"):
    an order grounding found on the account (its status known)."""
    named = {str(e["order_id"]) for c in clauses if (e := c.get("entities") or {}).get("order_id")
             and e.get("order_status")}
    return named.pop() if len(named) == 1 else None


def _the_one_listed(rows: list[dict[str, Any]] | None) -> str | None:
    """The order of a list that holds exactly one ("which of my orders are on their way?" ...
    "what is the tracking number for that one?")."""
    listed = {str(r["order_id"]) for r in rows or [] if r.get("order_id")}
    return listed.pop() if len(listed) == 1 else None


def products_named_in(clauses: list[dict[str, Any]], order_id: str) -> list[str]:
    """The products this turn's clauses about `order_id` named ("did my light bulbs arrive?"), for
    "return it" in the next turn."""
    named: list[str] = []
    for clause in clauses:
        entities = clause.get("entities") or {}
        if entities.get("order_id") != order_id:
            continue
        named += [str(p["product_id"]) for p in entities.get("products") or []
                  if isinstance(p, dict) and p.get("product_id") and str(p["product_id"]) not in named]
    return named


def last_product(tasks: list[Task], results: Mapping[str, TaskResult]) -> dict[str, Any] | None:
    """The catalogue product this turn answered about, for "that one" in the next turn (as the
    planner gave it: `ProductRef`, as JSON); else the product of the customer's own item a question
    was answered about ("Is the e-reader in #W1 the Wi-Fi only model?" ... "Are there any cellular
    versions?"), without its options (the next question names its own)."""
    own: dict[str, Any] | None = None
    for task in reversed(tasks):
        result = results.get(task.task_id)
        if _failed(result):
            continue
        product = task.args.product if isinstance(task.args, PredefinedCypherArgs) else None
        if product is not None and product.product_id:
            return product.model_dump(mode="json")
        if own is None and task.notes.own_products and result is not None \
                and isinstance(result.data, CatalogueData):
            row = next((r for r in result.data.rows_as(OrderItemRow)
                        if r.product_id in task.notes.own_products and r.product_name), None)
            if row is not None:
                own = {"product_id": row.product_id, "name": row.product_name, "options": {}}
    return own


def one_product_named(clauses: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The one catalogue product this turn's clauses named, when no task was a query about a product
    (the warranty of "it", the espresso machine the clause before named, answered from the store's
    documents), for "How often should I be descaling it?" in the next turn; None when they named
    none or several."""
    named: dict[str, str] = {}
    for clause in clauses:
        for product in (clause.get("entities") or {}).get("products") or []:
            if isinstance(product, dict) and product.get("product_id"):
                named.setdefault(str(product["product_id"]), str(product.get("name") or ""))
    if len(named) != 1:
        return None
    (product_id, name), = named.items()
    return {"product_id": product_id, "name": name or None, "options": {}}


def quiet_miss(task: Task, results: Mapping[str, TaskResult], *, asking: bool = False) -> bool:
    """A supplementary lookup that found nothing while another task of the turn answered, or while
    the turn asks the customer something (`asking`: "which of your two orders with the tablet?"):
    the store's documents have nothing to add to a complaint whose order facts are given, and
    saying "I couldn't find a policy" would read as a failure of the answer."""
    result = results.get(task.task_id)
    if not task.notes.supplementary or not _failed(result) or _error_type(result) is not ErrorType.NO_RESULTS:
        return False
    return asking or any(_answered(r) for tid, r in results.items() if tid != task.task_id)


#: Failures a fallback that answered makes moot: the question was not one the first lookup knew.
COVERED_FAILURES = frozenset({"low_confidence", "no_results"})


def covered_failure(task: Task, results: Mapping[str, TaskResult], tasks: list[Task]) -> bool:
    """A lookup that did not know the question (`COVERED_FAILURES`) while the fallback planned for
    it (`fallback_for`) answered: "u guys price match?" matched no catalogue question and the
    store's pages answered it, so no "I couldn't look up that product" beside the answer."""
    result = results.get(task.task_id)
    if not _failed(result) or _error_type(result) not in COVERED_FAILURES:
        return False
    return any(other.notes.fallback_for == task.task_id and _answered(results.get(other.task_id))
               for other in tasks)


def unneeded_fallback(task: Task, results: Mapping[str, TaskResult]) -> bool:
    """A lookup planned to answer only if another one could not (`fallback_for`: the catalogue's
    facts about a product when its documents say nothing), and that other one answered."""
    primary = task.notes.fallback_for
    return primary is not None and _answered(results.get(primary))


def pending_action(task: Task, data: ActionProposedData) -> PendingAction:
    """What the next turn's "yes" will execute: the proposal exactly as listed back (the state
    holds it as JSON; the next turn reads it back with `graph.state.pending_actions`)."""
    confirmation_id = task.args.confirmation_id if isinstance(task.args, CustomerActionArgs) else None
    return PendingAction(action=ActionName(data.action or task.task_type), proposal=data.proposal,
                         confirmation_id=confirmation_id or "", summary=" ".join(data.summary),
                         requires_approval=data.requires_approval, amount=data.amount)


def _model_reply(state: State, lines: list[str], ordered: list[Task], failed: list[Task],
                 deps: GraphDeps) -> tuple[str | None, str]:
    """The SUMMARISER model's reply from the templated lines (the facts), and how the reply was
    made. The templated reply stands when there is no model, the model is unavailable, a failed
    task cannot be checked in the customer's language, or the model's text drops a failure, names
    an order or parcel the results do not, or leaves out one they give."""
    gateway = deps.models
    if gateway is None or not ordered or not gateway.has_model(Role.SUMMARISER):
        return None, "template"
    lang = state.get("lang", "en")
    markers = [failure_markers(task, lang) for task in failed]
    if any(m is None for m in markers):
        return None, "template (a failure the model's text could not be checked for)"
    failed_ids = {task.task_id for task in failed}
    facts = "\n".join(f"{n}. {'FAILED' if task.task_id in failed_ids else 'DONE'}: {line}"
                       for n, (task, line) in enumerate(zip(ordered, lines, strict=True), start=1))
    must = sorted({word for group in markers if group for word in group})
    variables = {"language": language_name(lang), "message": state.get("text", ""), "results": facts,
                 "must_mention": ", ".join(f'"{w}"' for w in must) or "(nothing in particular)"}
    try:
        text = gateway.text(Role.SUMMARISER, PROMPT, variables).value.strip()
    except ModelUnavailable:
        return None, "template (model unavailable)"
    if not names_every_failure(text, failed, lang):
        return None, "template (the model's reply dropped a failure)"
    if invents_identifiers(text, facts):
        return None, "template (the model's reply named an order the results do not)"
    if drops_identifiers(text, facts):
        return None, "template (the model's reply left out an order or parcel the results give)"
    return text, "model"


def knowledge_sources(citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each cited document once, with the version and content hash that answered."""
    seen: dict[tuple[Any, Any], dict[str, Any]] = {}
    for c in citations:
        if c.get("doc_id"):
            seen.setdefault((c["doc_id"], c.get("version")), {
                "doc_id": c["doc_id"], "version": c.get("version"), "content_hash": c.get("content_hash"),
                "section": c.get("section"), "chunk_id": c.get("chunk_id")})
    return list(seen.values())


def _once(lines: list[str]) -> list[str]:
    """The lines without repeats, nor any held whole in another line."""
    distinct = list(dict.fromkeys(lines))
    return [line for line in distinct if not any(line != other and line in other for other in distinct)]


@timed("summarise")
def summarise(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    # Fault injection: a crash between dispatch and summarise (the retry resumes from the checkpoint).
    crash_point("before_summarise", runtime.context.fault_plan)
    lang = state.get("lang", "en")
    results = task_results(state)
    tasks = planned_tasks(state)
    lines: list[str] = []
    citations: list[dict[str, Any]] = []
    proposals: list[PendingAction] = []
    failed: list[Task] = []
    asking = bool((state.get("trace") or {}).get("missing"))
    shown = [task for task in grouped(tasks)
             if not quiet_miss(task, results, asking=asking) and not unneeded_fallback(task, results)
             and not covered_failure(task, results, tasks)]
    for task in shown:
        result = results.get(task.task_id)
        if result is None or _failed(result):
            failed.append(task)
            lines.append(describe_failure(task, result, lang))
            continue
        lines.append(describe_success(task, result, lang))
        data = result.data
        if isinstance(data, KnowledgeData):
            citations.extend(c.model_dump(mode="json") for c in data.citations)
        if isinstance(data, ActionProposedData):
            proposed = pending_action(task, data)
            # One change asked for in two clauses is proposed, and carried out, once.
            if all((p.action, p.proposal) != (proposed.action, proposed.proposal) for p in proposals):
                proposals.append(proposed)
    failures = len(failed)
    written, how = None, "template"
    if not proposals:  # a proposed change is listed back word for word, never paraphrased
        written, how = _model_reply(state, lines, shown, failed, runtime.context)
    # Two requests that failed for the same reason ("what's in #W1 and when does it ship?") say it once;
    # so do two answers of which one holds the other ("is the jacket full zip? ... in red too?": the
    # item's line, said once with the answer before it).
    lines = [written] if written is not None else _once(lines)
    kept = (state.get("trace") or {}).get("kept_pending")
    if kept:
        # A question asked before the yes ("does the black pair cost more?"): answered, and the
        # change proposed still waits for the yes; one more change of its kind ("could I also send
        # back the coffee maker?") is proposed beside it, and one yes makes both.
        waiting = [p for p in pending_actions(state)
                   if all((p.action, p.proposal) != (q.action, q.proposal) for q in proposals)]
        proposals = [*waiting, *proposals]
        lines.append(render("confirm_still_pending", lang, actions="; ".join(kept)))
    missing = (state.get("trace") or {}).get("missing") or []
    lines.extend(ask_for(m, lang) for m in missing)
    asked = still_asked(missing)
    # A proposal waits for the customer first, whatever else happened.
    status = "awaiting_confirmation" if proposals else "partial" if failures else status_of_asking(missing)
    update: dict[str, Any] = {"reply": {"text": "\n".join(lines), "citations": citations}, "status": status,
                              "pending_actions": [p.model_dump(mode="json") for p in proposals],
                              "awaiting": asked}
    failed_types = {_error_type(results.get(t.task_id)) for t in tasks if _failed(results.get(t.task_id))}
    streak = int(state.get("consecutive_failed_turns") or 0)
    update["consecutive_failed_turns"] = streak + 1 if failed_types & SYSTEM_FAILURES else 0
    update["trace"] = {"summariser": how}
    # A failure the reply leaves unsaid (a supplementary search that found nothing beside an
    # answer) is no failure of the turn: the hand-off triggers read only the ones the customer saw.
    unsaid = [t.task_id for t in tasks if t not in shown and _failed(results.get(t.task_id))]
    if unsaid:
        update["trace"]["unsaid_failures"] = unsaid
    sources = knowledge_sources(citations)
    if sources:  # which version of which document answered (csagent.knowledge.service)
        update["trace"]["knowledge_sources"] = sources
    if wants_handoff({**state, **update}, runtime):  # type: ignore[typeddict-item]
        update["trace"] = {**update["trace"], "handoff_wanted": True}
    # Counted after the triggers read it: they compare this turn with the ones before.
    angry = int(state.get("frustrated_turns") or 0)
    update["frustrated_turns"] = angry + 1 if detect_frustration(state.get("text") or "").frustrated else 0
    order_id = last_order_id(tasks, results) or the_one_order_named(state.get("clauses") or [])
    if order_id:
        update["memory"] = {"last_order_id": order_id,
                            "last_products": products_named_in(state.get("clauses") or [], order_id)}
    update["memory"] = {**update.get("memory", {}), "last_orders": orders_answered(tasks, results)}
    answered = any(_answered(r) for r in results.values())
    product = last_product(tasks, results) \
        or (one_product_named(state.get("clauses") or []) if answered else None)
    if product:
        update["memory"] = {**update.get("memory", {}), "last_product": product}
    # A change asked about ("how much would I get back if I returned it?") waits one turn for a yes.
    update["memory"] = {**update.get("memory", {}),
                        "last_change": None if proposals else asked_change(state.get("clauses") or [])}
    asked = [c for c in state.get("clauses") or [] if c.get("intent") in FOLLOW_UP_INTENTS]
    if asked and not proposals:
        # (and the last asked of an order: "did the laptop refund go thru? how much was it" ... "n the
        # one w the makeup kit n the watch, same deal?" asks the refund again, of that order)
        of_orders = [c.get("intent") for c in asked if c.get("intent") in ORDER_READ_INTENTS]
        update["memory"] = {**update.get("memory", {}), "last_question": asked[-1].get("intent"),
                            "last_question_text": asked[-1].get("text", ""),
                            "last_order_question": of_orders[-1] if of_orders else None}
    return update
