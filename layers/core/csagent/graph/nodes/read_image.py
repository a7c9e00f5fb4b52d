"""read_image: read an attached screenshot or shipping-label photo for order ids and tracking
numbers, then continue on the planner path with what was found.

The text the customer wrote says what they want ("where is this package?"); the picture says
which order. A message with only a picture is taken as an order-status question.
"""

from __future__ import annotations

import base64
from typing import Any

from langgraph.runtime import Runtime

from csagent.domain.errors import ImageUnreadable
from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.nlp.entities.identifiers import find_order_ids, find_tracking_numbers
from csagent.planning import ACTION_INTENTS, ORDER_READS


def _read(reader: Any, attachment: dict[str, Any]) -> str:
    if reader is None:
        raise ImageUnreadable("no image reader is configured")
    return str(reader.read_text(base64.b64decode(attachment["data"]), attachment["media_type"]))


@timed("read_image")
def read_image(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    orders: list[str] = []
    tracking: list[str] = []
    unreadable = 0
    for attachment in state.get("attachments") or []:
        try:
            text = _read(runtime.context.image_reader, attachment)
        except ImageUnreadable:
            unreadable += 1
            continue
        orders += [o for o in find_order_ids(text) if o not in orders]
        tracking += [t for t in find_tracking_numbers(text) if t not in tracking]
    found: dict[str, Any] = {}
    if orders:
        found["order_id"] = orders[0]
    elif tracking:
        found["tracking_number"] = tracking[0]
    else:
        found["image_unreadable"] = True
    order_intents = set(ORDER_READS) | {i for i, (_, needs) in ACTION_INTENTS.items() if "order_id" in needs}
    clauses = [c for c in state.get("clauses") or [] if c.get("intent") in order_intents]
    if not clauses:
        clauses = [{"text": state.get("text", ""), "intent": "order_status", "confidence": 1.0,
                    "entities": {}}]
    filled = [{**c, "entities": {**found, **(c.get("entities") or {})}} for c in clauses]
    trace = {"image": {"order_ids": orders, "tracking_numbers": tracking, "unreadable": unreadable}}
    return {"clauses": filled, "trace": trace,
            "entities": {**(state.get("entities") or {}), **found}}
