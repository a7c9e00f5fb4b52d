"""The store's public product catalogue (names and options), for entity extraction.

Read with one query and kept for `ttl_s`: products change rarely, and a stale minute only
means a new product is recognised a little later. A catalogue change made in this process
(`csagent.knowledge.catalogue`) calls `catalogue_changed()`, which makes every cache of the
catalogue here and in `customer_view` reload on its next use.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from csagent.domain.errors import StoreError
from csagent.ports import GraphStore

logger = logging.getLogger(__name__)

_generation = [0]


def catalogue_changed() -> None:
    """Drop this process's catalogue caches (they reload on next use)."""
    _generation[0] += 1


def catalogue_generation() -> int:
    return _generation[0]


_CYPHER = (
    "MATCH (p:Product) OPTIONAL MATCH (p)-[:HAS_VARIANT]->(v:Variant) "
    "WITH p, collect(v.options_json) AS options "
    "OPTIONAL MATCH (p)-[:IN_CATEGORY]->(c:Category) "
    "RETURN p.product_id AS product_id, p.name AS name, options, head(collect(c.name)) AS category"
)


class ProductCatalogue:
    def __init__(self, graph: GraphStore, ttl_s: float = 120.0) -> None:
        self._graph = graph
        self._ttl = ttl_s
        self._lock = threading.Lock()
        self._loaded_at = float("-inf")
        self._generation = -1
        self._products: list[dict[str, Any]] = []

    def __call__(self) -> list[dict[str, Any]]:
        """[{product_id, name, options: {key: [values]}, category}]; empty (never raising) if
        unreachable."""
        now, generation = time.monotonic(), catalogue_generation()
        with self._lock:
            if now - self._loaded_at < self._ttl and self._generation == generation:
                return self._products
        try:
            rows = self._graph.read(_CYPHER, timeout_s=2.0, max_rows=10_000)
        except StoreError as exc:  # extraction degrades to no product matching
            logger.warning("product catalogue unavailable (%s)", type(exc).__name__)
            return self._products
        products = []
        for row in rows:
            options: dict[str, set[str]] = {}
            for raw in row.get("options") or []:
                for key, value in json.loads(raw or "{}").items():
                    options.setdefault(str(key), set()).add(str(value))
            products.append({"product_id": row["product_id"], "name": row["name"],
                             "options": {k: sorted(v) for k, v in options.items()},
                             "category": row.get("category")})
        with self._lock:
            self._products, self._loaded_at, self._generation = products, now, generation
        return products
