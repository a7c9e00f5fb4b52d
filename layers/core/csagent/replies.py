"""Reply composition for task results: what the summariser says for each task, in the
customer's language. Wording lives in the template files of `csagent.nlp.templates`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csagent.nlp.replies import render

# Error types whose tool message is written for the customer (the others stay internal).
READABLE_ERRORS = frozenset({"no_results", "validation", "business_rule_violation", "permission_denied"})
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


def _order_tracking(data: dict[str, Any], lang: str) -> str:
    rows = data.get("rows") or ([data["row"]] if data.get("row") else [])
    first = rows[0] if rows else {}
    order_id, status = first.get("order_id", ""), first.get("order_status", "")
    shipped = [r for r in rows if r.get("tracking_id")]
    tracking = ", ".join(r["tracking_id"] for r in shipped)
    carrier = ", ".join(dict.fromkeys(r["carrier"] for r in shipped if r.get("carrier")))
    if status == "cancelled":
        return render("order_status_cancelled", lang, order_id=order_id)
    if status == "delivered":
        delivered = max((str(r.get("delivered_at") or "") for r in shipped), default="")[:10]
        return render("order_status_delivered_tracking", lang, order_id=order_id, carrier=carrier,
                      tracking_number=tracking, delivered_on=delivered or "-")
    if not shipped:
        return render("order_status_no_tracking", lang, order_id=order_id, status=status)
    estimate = max((str(r.get("estimated_delivery") or "") for r in shipped), default="")[:10]
    return render("order_status", lang, order_id=order_id, status=status, carrier=carrier,
                  tracking_number=tracking, estimate=estimate or "-")


DESCRIBERS: dict[str, Callable[[dict[str, Any], str], str]] = {
    "order_tracking": _order_tracking,
}


def describe_success(task: dict[str, Any], result: dict[str, Any], lang: str) -> str:
    data = result.get("data") or {}
    describe = DESCRIBERS.get(str(data.get("template_id") or task["task_type"]))
    if describe is not None:
        return describe(data, lang)
    return str(data.get("answer") or render("done_generic", lang))


def describe_failure(task: dict[str, Any], result: dict[str, Any] | None, lang: str) -> str:
    """Name the task, the reason in plain words, and the next step. Never an internal error."""
    error = (result or {}).get("error") or {}
    error_type = str(error.get("type") or "unknown")
    params = (task.get("args") or {}).get("params") or {}
    subject = render(f"task_{task['task_type']}", lang, order_id=params.get("order_id", ""))
    message = str(error.get("message") or "").strip().rstrip(".")
    reason = message if error_type in READABLE_ERRORS and message and lang == "en" else render(
        f"reason_{error_type}", lang)
    next_step = render(NEXT_STEP.get(error_type, "next_retry_later"), lang)
    return render("partial_failure", lang, task=subject, reason=reason, next_step=next_step)
