"""Reads for grounding: one customer's orders and payment methods (the actions' own snapshot
read, once per turn, always bound to the authenticated customer), and the catalogue's variants
(one query, kept for a TTL).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from csagent.adapters.product_catalogue import CatalogueGeneration
from csagent.domain.errors import StoreError
from csagent.grounding.model import CustomerView, Line, OrderView, PaymentView, Variant
from csagent.ports import GraphStore

logger = logging.getLogger(__name__)

VARIANTS = """
MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant)
RETURN p.product_id AS product_id,
       collect(v{.item_id, .options_json, .price, .available}) AS variants
"""


def _options(raw: Any) -> dict[str, str]:
    try:
        return {str(k): str(v) for k, v in json.loads(raw or "{}").items()}
    except (TypeError, ValueError):
        return {}


def read_customer_view(graph: GraphStore, customer_id: str, *, timeout_s: float = 3.0) -> CustomerView | None:
    """The customer's orders, payment methods and default address
    (`actions.catalogue.customer_snapshot`, the one read of them); None when there is no such
    customer."""
    from csagent.actions.catalogue import customer_snapshot

    snapshot = customer_snapshot(graph, customer_id, timeout_s=timeout_s)
    if snapshot is None:
        return None
    orders = tuple(
        OrderView(
            order_id=str(o["order_id"]),
            status=str(o.get("status") or ""),
            address={str(k): str(v) for k, v in o["address"].items() if v} if o.get("address") else None,
            paid_with=next(
                (
                    p["payment_method_id"]
                    for p in o.get("payment_history") or []
                    if p.get("transaction_type") == "payment"
                ),
                None,
            ),
            lines=tuple(
                Line(
                    item_id=str(x["item_id"]),
                    product_id=str(x.get("product_id") or ""),
                    name=str(x.get("name") or ""),
                    price=float(x.get("price") or 0),
                    options={str(k): str(v) for k, v in (x.get("options") or {}).items()},
                )
                for x in o.get("lines") or []
            ),
        )
        for o in snapshot["orders"]
    )
    methods = tuple(
        PaymentView(
            payment_method_id=str(m["payment_method_id"]),
            source=str(m.get("source") or ""),
            brand=m.get("brand"),
            last_four=m.get("last_four"),
            balance=m.get("balance"),
        )
        for m in snapshot["payment_methods"]
        if m.get("payment_method_id")
    )
    default = snapshot.get("default_address") or {}
    return CustomerView(customer_id=str(snapshot["customer_id"]), orders=orders, payment_methods=methods,
                        default_address={str(k): str(v) for k, v in default.items() if v} or None)


class CustomerViews:
    """`customer_id -> CustomerView | None`, read fresh each call (a write may have just changed it);
    None, never raising, when the store cannot be read (grounding then works from the words alone)."""

    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph

    def __call__(self, customer_id: str | None) -> CustomerView | None:
        if not customer_id:
            return None
        try:
            return read_customer_view(self._graph, customer_id)
        except StoreError as exc:  # grounding degrades to the words alone
            logger.warning("customer view unavailable (%s)", type(exc).__name__)
            return None


class CatalogueVariants:
    """The catalogue's variants by product id, read with one query and kept for `ttl_s` (or until
    `generation`, shared with the product names' cache, moves on)."""

    def __init__(self, graph: GraphStore, ttl_s: float = 60.0,
                 generation: CatalogueGeneration | None = None) -> None:
        self._graph = graph
        self._ttl = ttl_s
        self._catalogue = generation or CatalogueGeneration()
        self._lock = threading.Lock()
        self._loaded_at = float("-inf")
        self._generation = -1
        self._variants: dict[str, tuple[Variant, ...]] = {}

    def __call__(self) -> dict[str, tuple[Variant, ...]]:
        now, generation = time.monotonic(), self._catalogue.value
        with self._lock:
            if now - self._loaded_at < self._ttl and self._generation == generation:
                return self._variants
        try:
            rows = self._graph.read(VARIANTS, timeout_s=3.0, max_rows=10_000)
        except StoreError as exc:  # grounding degrades to no variant choice
            logger.warning("catalogue variants unavailable (%s)", type(exc).__name__)
            return self._variants
        variants = {
            str(row["product_id"]): tuple(
                Variant(
                    item_id=str(v["item_id"]),
                    options=_options(v.get("options_json")),
                    price=float(v.get("price") or 0),
                    available=bool(v.get("available")),
                )
                for v in row.get("variants") or []
            )
            for row in rows
        }
        with self._lock:
            self._variants, self._loaded_at, self._generation = variants, now, generation
        return variants
