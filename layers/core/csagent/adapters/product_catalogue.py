"""The store's public product catalogue (names and options), for entity extraction.

Read with one query and kept for `ttl_s`: products change rarely, and a stale minute only
means a new product is recognised a little later. A catalogue change made in this process
(`csagent.knowledge.catalogue`) calls `CatalogueGeneration.changed` of the generation the
composition root shares between this cache and `customer_view.CatalogueVariants`
(`csagent.runtime.catalogue_generation`), which makes both reload on their next use.
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

class CatalogueGeneration:
    """A count of the catalogue changes made in this process: a cache that read the catalogue
    at one value reloads once it has moved on. Built by the composition root and shared by the
    caches of one store; a cache built without one only expires by its TTL."""

    def __init__(self) -> None:
        self._value = 0
        self._lock = threading.Lock()

    def changed(self) -> None:
        """Drop the catalogue caches sharing this generation (they reload on next use)."""
        with self._lock:
            self._value += 1

    @property
    def value(self) -> int:
        return self._value


_CYPHER = (
    "MATCH (p:Product) OPTIONAL MATCH (p)-[:HAS_VARIANT]->(v:Variant) "
    "WITH p, collect(v.options_json) AS options "
    "OPTIONAL MATCH (p)-[:IN_CATEGORY]->(c:Category) "
    "RETURN p.product_id AS product_id, p.name AS name, options, head(collect(c.name)) AS category"
)


class ProductCatalogue:
    def __init__(self, graph: GraphStore, ttl_s: float = 120.0,
                 generation: CatalogueGeneration | None = None) -> None:
        self._graph = graph
        self._ttl = ttl_s
        self._catalogue = generation or CatalogueGeneration()
        self._lock = threading.Lock()
        self._loaded_at = float("-inf")
        self._generation = -1
        self._products: list[dict[str, Any]] = []

    def __call__(self) -> list[dict[str, Any]]:
        """[{product_id, name, options: {key: [values]}, category}]; empty (never raising) if
        unreachable."""
        now, generation = time.monotonic(), self._catalogue.value
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
