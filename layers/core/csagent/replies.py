"""Reply composition for task results: what the summariser says for each task, in the
customer's language. Wording lives in the template files of `csagent.nlp.templates`; this
module only chooses a template and fills it from a tool's data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from csagent.nlp.replies import join_items, render

# Error types whose tool message is written for the customer (the others stay internal)...
READABLE_ERRORS = frozenset({"no_results", "validation", "business_rule_violation", "permission_denied"})
# ...by these tools only: their messages are customer sentences (a catalogue template's
# `empty_message`, an action's policy reason). Any other tool's message (a search's diagnostics,
# an injected fault) stays internal, and the reply says it in the template's words.
CUSTOMER_WORDED_TOOLS = frozenset({"predefined_cypher", "customer_actions"})
# The next step the customer is offered after a failure, by error type.
NEXT_STEP = {
    "timeout": "next_retry_soon",
    "transient": "next_retry_soon",
    "no_results": "next_check_details",
    "validation": "next_check_details",
    "permission_denied": "next_own_orders_only",
    "business_rule_violation": "next_human",
    "low_confidence": "next_rephrase",
}
MAX_LISTED = 5


def _date(value: Any) -> str:
    return str(value or "")[:10]


def _status(value: Any, lang: str) -> str:
    """An order status in the customer's words and language (the stored value otherwise)."""
    name = f"status_{value}"
    return render(name, lang) if _has_template(name, lang) else str(value or "")


def _order_overview(data: Mapping[str, Any], lang: str) -> str:
    row = data.get("row") or {}
    order_id, status = row.get("order_id", ""), row.get("order_status", "")
    shipped = [s for s in row.get("shipments") or [] if s.get("tracking_id")]
    tracking = ", ".join(s["tracking_id"] for s in shipped)
    carrier = ", ".join(dict.fromkeys(s["carrier"] for s in shipped if s.get("carrier")))
    if status == "cancelled":
        text = render("order_status_cancelled", lang, order_id=order_id)
    elif status == "delivered" and shipped:
        text = render("order_status_delivered_tracking", lang, order_id=order_id, carrier=carrier,
                      tracking_number=tracking,
                      delivered_on=max(_date(s.get("delivered_at")) for s in shipped) or "-")
    elif not shipped:
        text = render("order_status_no_tracking", lang, order_id=order_id, status=_status(status, lang))
    else:
        text = render("order_status", lang, order_id=order_id, status=_status(status, lang), carrier=carrier,
                      tracking_number=tracking,
                      estimate=max(_date(s.get("estimated_delivery")) for s in shipped) or "-")
    names = [i["name"] for i in row.get("items") or [] if i.get("name")]
    if names:
        text += " " + render("order_status_in_order", lang, items=join_items(names, lang))
    return text


def _order_items(data: Mapping[str, Any], lang: str) -> str:
    rows = data.get("rows") or []
    items = [f"{r['product_name']} ({', '.join(f'{k}: {v}' for k, v in (r.get('options') or {}).items())})"
             if r.get("options") else str(r["product_name"]) for r in rows]
    order_id = rows[0]["order_id"] if rows else ""
    return render("order_items", lang, order_id=order_id, items=join_items(items, lang))


def _customer_orders(data: Mapping[str, Any], lang: str) -> str:
    rows = data.get("rows") or []
    if not rows:
        return render("order_list_empty", lang)
    listed = [f"{r['order_id']} ({r['status']}, {_date(r.get('created_at'))})" for r in rows[:MAX_LISTED]]
    if len(rows) > MAX_LISTED:  # "#W1 (…), …, #W5 (…) and 2 more"
        orders = render("list_and_more", lang, items=listed, count=len(rows) - MAX_LISTED)
    else:
        orders = join_items(listed, lang)
    return render("order_list", lang, orders=orders)


def _refund_source(method: str) -> str:
    """The payment source of a refund row's method ("gift card", "PayPal", "visa ending 1234")."""
    lowered = method.lower()
    return "gift_card" if "gift card" in lowered else "paypal" if "paypal" in lowered else "credit_card"


def _refund_timing(refund: Mapping[str, Any], lang: str) -> str:
    """Where one refund went and when it shows there, by the store's policy (actions/policy.yaml:
    a gift card at once, a card or PayPal within 5 to 7 business days)."""
    from csagent.actions.policy import load_rules

    method = str(refund.get("payment_method") or "").strip()
    if not method or lang != "en":  # the policy's timings are written in English
        return ""
    timing = load_rules().refund_timing_for(_refund_source(method))
    return render("refund_timing", lang, method=method, timing=timing)


def _refund_status(data: Mapping[str, Any], lang: str) -> str:
    row = data.get("row") or {}
    if not row.get("refund_count"):
        return render("refund_none", lang, order_id=row.get("order_id", ""))
    timings = [_refund_timing(r, lang) for r in row.get("refunds") or [] if r]
    return render("refund_status", lang, order_id=row.get("order_id", ""),
                  amount=f"${float(row.get('refunded_total') or 0):.2f}", refund_status="issued",
                  timing=" ".join(dict.fromkeys(t for t in timings if t))).strip()


def _rows_summary(data: Mapping[str, Any], lang: str) -> str:
    """Any other catalogue template: its rows, compactly ("name: value" pairs)."""
    rows = data.get("rows") or ([data["row"]] if data.get("row") else [])
    shown = ["; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in r.items() if v not in (None, "", []))
             for r in rows[:MAX_LISTED]]
    if len(rows) > MAX_LISTED:
        shown.append(render("catalogue_more", lang, count=len(rows) - MAX_LISTED))
    return render("catalogue_rows", lang, summary=" | ".join(shown))


def _answer_source(answer: str, citations: Sequence[Mapping[str, Any]]) -> str:
    """The title of the document the answer was taken from (its first sentence is in that
    citation's text); the best-ranked citation's otherwise."""
    opening = answer.split(". ")[0].strip()
    quoted = next((c for c in citations if opening and opening in " ".join(str(c.get("text") or "").split())),
                  None)
    chosen = quoted or (citations[0] if citations else {})
    return str(chosen.get("title") or "")


def _knowledge(data: Mapping[str, Any], lang: str) -> str:
    citations = data.get("citations") or []
    answer = str(data.get("answer") or "").strip()
    source = _answer_source(answer, citations)
    return render("knowledge_answer", lang, answer=answer, source=source) if source else answer


DESCRIBERS: dict[str, Callable[[Mapping[str, Any], str], str]] = {
    "order_overview": _order_overview,
    "order_by_tracking": _order_overview,
    "order_items": _order_items,
    "customer_orders": _customer_orders,
    "refund_status": _refund_status,
}


def _action(data: Mapping[str, Any], lang: str) -> str:
    if data.get("phase") == "propose":
        summary = data.get("summary") or []
        lines = summary if isinstance(summary, list) else [str(summary)]
        return " ".join([*map(str, lines), render("confirm_prompt", lang)])
    return str(data.get("message") or render("done_generic", lang))


def describe_success(task: Mapping[str, Any], result: Mapping[str, Any], lang: str) -> str:
    text = _describe(task, result, lang)
    if result.get("status") == "fallback" and result.get("heal"):
        # A cheaper path answered after the usual one failed: say so, kindly, before the answer.
        return f"{render('fallback_note', lang)} {text}"
    return text


def _describe(task: Mapping[str, Any], result: Mapping[str, Any], lang: str) -> str:
    data = result.get("data") or {}
    if task.get("tool") == "knowledge_search":
        return _knowledge(data, lang)
    if task.get("tool") == "customer_actions":
        return _action(data, lang)
    describe = DESCRIBERS.get(str(data.get("template_id") or ""))
    if describe is not None:
        return describe(data, lang)
    if "rows" in data or "row" in data:
        return _rows_summary(data, lang)
    return str(data.get("summary") or data.get("answer") or render("done_generic", lang))


def describe_failure(task: Mapping[str, Any], result: Mapping[str, Any] | None, lang: str) -> str:
    """Name the task, the reason in plain words, and the next step. Never an internal error."""
    error = (result or {}).get("error") or {}
    error_type = str(error.get("type") or "unknown")
    args = task.get("args") or {}
    order_id = ((args.get("params") or {}).get("order_id") or (args.get("args") or {}).get("order_id")
                or (args.get("proposal") or {}).get("order_id") or "")
    name = f"task_{task['task_type']}"
    subject = render(name, lang, order_id=order_id) if _has_template(name, lang) else render(
        "task_generic", lang)
    message = str(error.get("message") or "").strip().rstrip(".")
    if task.get("tool") not in CUSTOMER_WORDED_TOOLS or lang != "en":
        message = ""  # not written for the customer (or not in their language): the templates speak
    if error_type == "no_results":
        # "Nothing found" is an answer, not a breakdown: say it as one.
        not_found = f"not_found_{task['task_type']}"
        if _has_template(not_found, lang):
            return f"{render(not_found, lang)} {render(NEXT_STEP['low_confidence'], lang)}"
        if message:
            return f"{message}. {render(NEXT_STEP['no_results'], lang)}"
    reason = message if error_type in READABLE_ERRORS and message else render(
        f"reason_{error_type}" if _has_template(f"reason_{error_type}", lang) else "reason_unknown", lang)
    next_step = render(NEXT_STEP.get(error_type, "next_retry_later"), lang)
    return render("partial_failure", lang, task=subject, reason=reason, next_step=next_step)


def ask_for(missing: Mapping[str, Any], lang: str) -> str:
    """The question that asks for exactly the missing (or malformed) parameter."""
    parameter = str(missing.get("parameter") or "")
    if missing.get("from_image"):
        return render("clarify_image_unreadable", lang)
    invalid = missing.get("invalid")
    name = f"clarify_invalid_{parameter}" if invalid else f"clarify_missing_{parameter}"
    if not _has_template(name, lang):
        return render("clarify_generic", lang)
    return render(name, lang, value=str(invalid or ""))


def _has_template(name: str, lang: str) -> bool:
    from csagent.nlp.replies import load_templates

    return name in load_templates("en") or name in load_templates(lang)


# -- a model-written reply, checked ----------------------------------------------------------------
#: A word the reply must contain for each failed task (English), so the customer can tell which
#: request failed even when it concerns no order id.
FAILURE_WORDS = {
    "order_status": "order", "tracking": "order", "order_items": "order", "refund_status": "refund",
    "order_list": "order", "product_info": "product", "product_availability": "stock",
    "warranty": "warranty", "policy": "polic", "cancel_order": "cancel", "return_items": "return",
    "change_order_address": "address", "update_default_address": "address",
}
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese (简体中文)"}


def _order_of(task: Mapping[str, Any]) -> str:
    args = task.get("args") or {}
    return str((args.get("params") or {}).get("order_id") or (args.get("args") or {}).get("order_id") or "")


def failure_markers(task: Mapping[str, Any], lang: str) -> list[str] | None:
    """What a reply must say for this failed task to be named: its order id and, in English, a
    word of its kind. None when a reply in `lang` cannot be checked (then the template answers)."""
    markers = [order_id] if (order_id := _order_of(task)) else []
    if lang == "en":
        markers.append(FAILURE_WORDS.get(str(task.get("task_type")), ""))
    markers = [m for m in markers if m]
    return markers or None


def names_every_failure(text: str, failed: Sequence[Mapping[str, Any]], lang: str) -> bool:
    """Does a model-written reply name every failed task (its markers all present)?"""
    lowered = text.lower()
    for task in failed:
        markers = failure_markers(task, lang)
        if markers is None or not all(m.lower() in lowered for m in markers):
            return False
    return True


def invents_identifiers(text: str, facts: str) -> bool:
    """Does the reply carry an order id or tracking number the results do not?"""
    from csagent.nlp.entities import find_order_ids, find_tracking_numbers

    known = set(find_order_ids(facts)) | set(find_tracking_numbers(facts))
    return any(i not in known for i in [*find_order_ids(text), *find_tracking_numbers(text)])


def drops_identifiers(text: str, facts: str) -> bool:
    """Does the reply leave out an order id or tracking number the results give? A summary without
    them has dropped the answer itself (seen with a 135M model: "I am unable to assist you with
    your order" in place of two answered requests)."""
    from csagent.nlp.entities import find_order_ids, find_tracking_numbers

    shown = set(find_order_ids(text)) | set(find_tracking_numbers(text))
    return any(i not in shown for i in [*find_order_ids(facts), *find_tracking_numbers(facts)])


def language_name(lang: str) -> str:
    return LANGUAGE_NAMES.get(lang, "the customer's language")
