"""`CatalogueWriter` on Neo4j: the store's products and variants (docs/graph-model.md), one write
transaction per change through the `GraphStore` port."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from csagent.domain.errors import Conflict
from csagent.ports import GraphStore

_UPSERT_PRODUCT = """
OPTIONAL MATCH (existing:Product {product_id: $product_id})
WITH existing IS NULL AS created
MERGE (p:Product {product_id: $product_id})
SET p.name = $name, p.category = $category
REMOVE p.discontinued
MERGE (k:Category {name: $category})
WITH p, k, created
CALL (p, k) {
  OPTIONAL MATCH (p)-[r:IN_CATEGORY]->(other:Category) WHERE other <> k
  DELETE r
}
MERGE (p)-[:IN_CATEGORY]->(k)
WITH p, created
CALL (p) {
  UNWIND $variants AS row
  MERGE (v:Variant {item_id: row.item_id})
  SET v.price = row.price, v.available = row.available, v.options_json = row.options_json,
      v.option_text = row.option_text
  MERGE (p)-[:HAS_VARIANT]->(v)
  RETURN count(v) AS variants
}
RETURN created"""

_TAKEN = """
MATCH (other:Product)-[:HAS_VARIANT]->(v:Variant)
WHERE v.item_id IN $item_ids AND other.product_id <> $product_id
RETURN v.item_id AS item_id, other.product_id AS product_id LIMIT 1"""

_UPDATE_VARIANT = """
MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant {item_id: $item_id})
SET v += $changes
RETURN p.product_id AS product_id"""

_DISCONTINUE = """
MATCH (p:Product {product_id: $product_id})
SET p.discontinued = true
WITH p
OPTIONAL MATCH (p)-[:HAS_VARIANT]->(v:Variant)
SET v.available = false
RETURN count(v) AS variants"""


class Neo4jCatalogueWriter:
    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph

    def upsert_product(self, product_id: str, name: str, category: str,
                       variants: Sequence[Mapping[str, Any]]) -> bool:
        item_ids = [v["item_id"] for v in variants]
        taken = self._graph.read(_TAKEN, {"product_id": product_id, "item_ids": item_ids})
        if taken:
            raise Conflict(f"variant {taken[0]['item_id']} belongs to product {taken[0]['product_id']}")
        params = {"product_id": product_id, "name": name, "category": category,
                  "variants": [dict(v) for v in variants]}
        rows = self._graph.write(_UPSERT_PRODUCT, params)
        return bool(rows and rows[0]["created"])

    def update_variant(self, item_id: str, changes: Mapping[str, Any]) -> str | None:
        rows = self._graph.write(_UPDATE_VARIANT, {"item_id": item_id, "changes": dict(changes)})
        return str(rows[0]["product_id"]) if rows else None

    def discontinue(self, product_id: str) -> int | None:
        rows = self._graph.write(_DISCONTINUE, {"product_id": product_id})
        return int(rows[0]["variants"]) if rows else None
