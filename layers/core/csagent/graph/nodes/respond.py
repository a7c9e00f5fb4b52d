"""respond: the last node of every path: record the reply in the public messages, and drop the
turn's attached pictures from the state (read by now; a picture's bytes would otherwise be kept
in every checkpoint of the session - ~15 KB for a label photo against ~2 KB for a whole turn)."""

from __future__ import annotations

from functools import cache
from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State, pending_actions, planned_tasks
from csagent.graph.timing import timed
from csagent.guardrails.output import collect_identifiers, identifiers_in
from csagent.models.usage import current_usage
from csagent.replies import render

#: Tools whose results are read bound to the signed-in customer: only these vouch for an
#: identifier. A knowledge document or a catalogue query quoting an order id does not make it
#: the customer's (the returns policy once quoted a real order as its example).
CUSTOMER_BOUND_TOOLS = frozenset({"predefined_cypher", "customer_actions"})


@cache
def template_identifiers() -> frozenset[str]:
    """Example identifiers our own wording shows ("it looks like #W1234567"): never a leak."""
    from csagent.nlp.replies import load_templates

    return frozenset(collect_identifiers([load_templates(lang) for lang in ("en", "zh")]))


def customer_bound_results(state: State) -> dict[str, Any]:
    """The turn's results from tools bound to the customer (see CUSTOMER_BOUND_TOOLS)."""
    bound = {t.task_id for t in planned_tasks(state) if t.tool in CUSTOMER_BOUND_TOOLS}
    return {task_id: r for task_id, r in (state.get("results") or {}).items() if task_id in bound}


def grounded_identifiers(state: State) -> list[Any]:
    """What grounding found in the customer's own data (read bound to the customer): the orders it
    resolved or listed, and the questions it wrote from them ("your orders with a tablet: #W…,
    #W…", "which method should pay the difference: Mastercard ending 8254, PayPal?"), name
    nothing of anyone else's."""
    found: list[Any] = []
    for clause in state.get("clauses") or []:
        entities = clause.get("entities") or {}
        found += [entities.get(key) for key in ("grounded_orders", "order_candidates", "question")
                  if entities.get(key)]
    return found


@timed("respond")
def respond(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    reply = dict(state.get("reply") or {})
    status = state.get("status") or ""
    if state.get("route") == "refused":
        reply = {"text": render("refused_" + str((state.get("trace") or {}).get("guard", "")),
                                state.get("lang", "en")), "citations": []}
        status = "refused"
    reply.setdefault("citations", [])
    guard = runtime.context.output_guard
    trace: dict[str, Any] = {}
    if guard is not None and reply.get("text"):
        # Never another customer's identifiers, never an internal error: the last line of defence.
        # The customer's own identifiers are no leak: what they wrote and what their tasks are
        # about (so a failed lookup names the order it was for, instead of a redaction).
        allowed = (collect_identifiers(customer_bound_results(state)) | template_identifiers()
                   | identifiers_in(state.get("text") or "")
                   | collect_identifiers([(t.args.model_dump(mode="json"), t.notes.model_dump(mode="json"))
                                          for t in planned_tasks(state)])
                   | collect_identifiers(grounded_identifiers(state))
                   | collect_identifiers([(state.get("trace") or {}).get("declined") or []])
                   # (a change still proposed, put again beside an answer, names its order)
                   | collect_identifiers([p.model_dump(mode="json") for p in pending_actions(state)]))
        check = guard(reply["text"], customer_id=state.get("customer_id"), allowed=allowed,
                      lang=state.get("lang", "en"))
        if not check.clean:
            reply["text"] = check.text
            trace["output_guard"] = {"withheld": len(check.leaks),
                                     "errors_replaced": check.internal_errors_replaced}
    usage = current_usage()
    if usage is not None:  # kept in the checkpoint for the agents' session viewer
        trace["usage"] = usage.as_trace()
    set_aside = (state.get("trace") or {}).get("set_aside") or []
    if set_aside:
        note = render("confirm_set_aside", state.get("lang", "en"), actions="; ".join(set_aside))
        reply["text"] = f"{note}\n{reply.get('text', '')}".strip()
    return {"reply": reply, "status": status or "answered", **({"trace": trace} if trace else {}),
            **({"attachments": []} if state.get("attachments") else {}),
            "messages": [{"role": "assistant", "text": reply.get("text", "")}]}
