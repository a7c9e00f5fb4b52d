"""Reads that ground a customer's words in the store before an action is proposed: which options
a product comes in, and what the customer holds (orders with their lines and payments, payment
methods, default address). One Cypher query each, through the `GraphStore` port; plain data
back (options as dicts, amounts as floats), nothing written.

    product_variants(graph, product_id) -> [{item_id, options, price, available}]
    customer_snapshot(graph, customer_id) -> {customer_id, default_address, payment_methods, orders}
                                             or None when there is no such customer

The snapshot is the authenticated customer's own data only: call it with `ToolContext.customer_id`,
never with an id taken from a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from csagent.ports import GraphStore

PRODUCT_VARIANTS = """
MATCH (:Product {product_id: $product_id})-[:HAS_VARIANT]->(v:Variant)
RETURN v.item_id AS item_id, v.options_json AS options_json, v.price AS price, v.available AS available
ORDER BY v.item_id
"""

CUSTOMER_SNAPSHOT = """
MATCH (c:Customer {customer_id: $customer_id})
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_DEFAULT_ADDRESS]->(a:Address)
  RETURN head(collect(a{.address1, .address2, .city, .state, .zip, .country})) AS default_address
}
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_PAYMENT_METHOD]->(m:PaymentMethod)
  WITH m ORDER BY m.payment_method_id
  RETURN collect(m{.payment_method_id, .source, .brand, .last_four, .balance}) AS payment_methods
}
CALL (c) {
  OPTIONAL MATCH (c)-[:PLACED]->(o:Order)
  WITH o ORDER BY o.placed_seq, o.order_id
  CALL (o) {
    OPTIONAL MATCH (o)-[:HAS_LINE]->(l:OrderLine)
    WITH l ORDER BY l.line_no
    RETURN collect(l{.line_id, .item_id, .product_id, .name, .price, .options_json}) AS lines
  }
  CALL (o) {
    OPTIONAL MATCH (o)-[:SHIPS_TO]->(sa:Address)
    RETURN head(collect(sa{.address1, .address2, .city, .state, .zip, .country})) AS address
  }
  CALL (o) {
    OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction)-[:USING]->(tm:PaymentMethod)
    WITH t, tm ORDER BY t.seq
    RETURN collect(CASE WHEN t IS NULL THEN null ELSE
      {transaction_type: t.type, amount: t.amount, payment_method_id: tm.payment_method_id} END) AS payments
  }
  RETURN collect(CASE WHEN o IS NULL THEN null ELSE
    {order_id: o.order_id, status: o.status, address: address, lines: lines,
     payment_history: payments} END) AS orders
}
RETURN c.customer_id AS customer_id, default_address, payment_methods, orders
"""


def _options(options_json: Any) -> dict[str, Any]:
    try:
        value = json.loads(options_json or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def product_variants(graph: GraphStore, product_id: str, *,
                     timeout_s: float | None = None) -> list[dict[str, Any]]:
    """Every variant of the product, by item id: `{item_id, options, price, available}` (an
    unknown product has none)."""
    rows = graph.read(PRODUCT_VARIANTS, {"product_id": str(product_id)}, timeout_s=timeout_s)
    return [{"item_id": str(row["item_id"]), "options": _options(row.get("options_json")),
             "price": _float(row.get("price")), "available": bool(row.get("available"))} for row in rows]


def _line(line: Mapping[str, Any]) -> dict[str, Any]:
    return {"line_id": line.get("line_id"), "item_id": line.get("item_id"),
            "product_id": line.get("product_id"), "name": line.get("name"),
            "price": _float(line.get("price")), "options": _options(line.get("options_json"))}


def customer_snapshot(graph: GraphStore, customer_id: str, *,
                      timeout_s: float | None = None) -> dict[str, Any] | None:
    """The customer's orders (in the order of their account, lines in order, payment history by
    sequence), payment methods (by id) and default address; None when there is no such customer.

        {"customer_id", "default_address": {address1, address2, city, state, zip, country} | None,
         "payment_methods": [{payment_method_id, source, brand, last_four, balance}],
         "orders": [{order_id, status, address: {address1, ...} | None,
                     lines: [{line_id, item_id, product_id, name, price, options}],
                     payment_history: [{transaction_type, amount, payment_method_id}]}]}
    """
    rows = graph.read(CUSTOMER_SNAPSHOT, {"customer_id": str(customer_id)}, timeout_s=timeout_s, max_rows=1)
    if not rows:
        return None
    row = rows[0]
    return {
        "customer_id": row["customer_id"],
        "default_address": dict(row["default_address"]) if row.get("default_address") else None,
        "payment_methods": [{**method, "balance": _float(method.get("balance"))}
                            for method in row.get("payment_methods") or []],
        "orders": [{"order_id": order["order_id"], "status": order["status"],
                    "address": dict(order["address"]) if order.get("address") else None,
                    "lines": [_line(line) for line in order.get("lines") or []],
                    "payment_history": [{**p, "amount": _float(p.get("amount"))}
                                        for p in order.get("payment_history") or []]}
                   for order in row.get("orders") or []],
    }
