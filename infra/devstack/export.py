"""Export the store graph as the dataset it was seeded from: `users.json`, `orders.json` and
`products.json` in tau-retail's shapes, as the store is now (with the fields the customer
actions add: `cancel_reason`, `return_items`, `return_payment_method_id`, `exchange_*`).

    python -m devstack.export --out DIR [--neo4j-uri URI] [--database NAME]
    make export OUT=DIR

Seeding a dataset and exporting it gives it back equal by value (key order aside; amounts are
floats, so a balance of 24 comes back as 24.0). What the graph adds (dates, carriers, tracking
events, categories, audit events, request dates) is left out. Three read queries, one per file;
`export_store` returns the three dictionaries for tests. Exit codes: 0 done, 1 Neo4j unreachable
or a query failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from devstack.seed.loader import ORDER_ACTION_FIELDS

if TYPE_CHECKING:
    from neo4j import Driver

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
ADDRESS_KEYS: tuple[str, ...] = ("address1", "address2", "city", "country", "state", "zip")
PAYMENT_METHOD_KEYS: tuple[str, ...] = ("source", "brand", "last_four", "balance")

USERS = """
MATCH (c:Customer)
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_DEFAULT_ADDRESS]->(a:Address)
  RETURN head(collect(a{.*})) AS address
}
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_PAYMENT_METHOD]->(m:PaymentMethod)
  RETURN collect(m{.*}) AS methods
}
CALL (c) {
  OPTIONAL MATCH (c)-[:PLACED]->(o:Order)
  WITH o ORDER BY o.placed_seq, o.order_id
  RETURN collect(o.order_id) AS orders
}
RETURN c{.*} AS customer, address, methods, orders
"""

ORDERS = """
MATCH (c:Customer)-[:PLACED]->(o:Order)
CALL (o) {
  OPTIONAL MATCH (o)-[:SHIPS_TO]->(a:Address)
  RETURN head(collect(a{.*})) AS address
}
CALL (o) {
  OPTIONAL MATCH (o)-[:HAS_LINE]->(l:OrderLine)
  WITH l ORDER BY l.line_no
  RETURN collect(l{.*}) AS lines
}
CALL (o) {
  OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction)-[:USING]->(m:PaymentMethod)
  WITH t, m ORDER BY t.seq
  RETURN collect(CASE WHEN t IS NULL THEN null ELSE
    {transaction_type: t.type, amount: t.amount, payment_method_id: m.payment_method_id} END) AS payments
}
CALL (o) {
  OPTIONAL MATCH (o)-[:FULFILLED_BY]->(s:Shipment)
  WITH s ORDER BY s.fulfillment_no, s.tracking_no, s.tracking_id
  RETURN collect(s{.tracking_id, .fulfillment_no, .item_ids,
                   line_item_ids: [(s)-[:CONTAINS]->(l:OrderLine) | l.item_id]}) AS shipments
}
RETURN o{.*} AS order, c.customer_id AS user_id, address, lines, payments, shipments
"""

PRODUCTS = """
MATCH (p:Product)
CALL (p) {
  OPTIONAL MATCH (p)-[:HAS_VARIANT]->(v:Variant)
  WITH v ORDER BY v.item_id
  RETURN collect(v{.*}) AS variants
}
RETURN p{.product_id, .name} AS product, variants
"""


# --------------------------------------------------------------------------- records (pure)
def _address(props: Mapping[str, Any] | None) -> dict[str, Any]:
    return {key: (props or {}).get(key, "") for key in ADDRESS_KEYS}


def _options(options_json: str | None) -> dict[str, Any]:
    value = json.loads(options_json or "{}")
    return value if isinstance(value, dict) else {}


def user_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `users.json` record from the USERS row of one customer."""
    customer = row["customer"]
    methods: dict[str, Any] = {}
    for method in row["methods"]:
        record = {key: method[key] for key in PAYMENT_METHOD_KEYS if method.get(key) is not None}
        methods[method["payment_method_id"]] = {**record, "id": method["payment_method_id"]}
    return {
        "name": {"first_name": customer.get("first_name"), "last_name": customer.get("last_name")},
        "address": _address(row["address"]), "email": customer.get("email"),
        "payment_methods": methods, "orders": list(row["orders"]),
    }


def _fulfillments(shipments: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Shipments grouped back into fulfilments: by `fulfillment_no`, tracking ids in order, the
    fulfilment's `item_ids` as loaded (a store seeded before those properties existed gets one
    fulfilment per shipment with the item ids of the lines it contains)."""
    groups: dict[Any, dict[str, Any]] = {}
    for shipment in shipments:
        key = shipment.get("fulfillment_no") or ("tracking", shipment["tracking_id"])
        item_ids = shipment.get("item_ids")
        group = groups.setdefault(key, {"tracking_id": [], "item_ids": list(
            item_ids if item_ids is not None else shipment.get("line_item_ids") or [])})
        group["tracking_id"].append(shipment["tracking_id"])
    return list(groups.values())


def order_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """An `orders.json` record from the ORDERS row of one order."""
    order = row["order"]
    record: dict[str, Any] = {
        "order_id": order["order_id"], "user_id": row["user_id"], "address": _address(row["address"]),
        "items": [{"name": line.get("name"), "product_id": line.get("product_id"),
                   "item_id": line.get("item_id"), "price": line.get("price"),
                   "options": _options(line.get("options_json"))}
                  for line in row["lines"]],
        "fulfillments": _fulfillments(row["shipments"]),
        "status": order.get("status"),
        "payment_history": [dict(payment) for payment in row["payments"]],
    }
    record.update({key: order[key] for key in ORDER_ACTION_FIELDS if order.get(key) is not None})
    return record


def product_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `products.json` record from the PRODUCTS row of one product."""
    product = row["product"]
    return {"name": product["name"], "product_id": product["product_id"], "variants": {
        v["item_id"]: {"item_id": v["item_id"], "options": _options(v.get("options_json")),
                       "available": v.get("available"), "price": v.get("price")}
        for v in row["variants"]}}


# --------------------------------------------------------------------------- running
def _rows(driver: Driver, database: str, cypher: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(cypher, database_=database, routing_="r")
    return [record.data() for record in records]


def export_store(driver: Driver, database: str = "neo4j") -> dict[str, dict[str, Any]]:
    """`{"users": ..., "orders": ..., "products": ...}`: the store now, in the dataset's shapes,
    keyed and ordered as the dataset (users and products by id, orders by id)."""
    users = {row["customer"]["customer_id"]: user_record(row) for row in _rows(driver, database, USERS)}
    orders = {row["order"]["order_id"]: order_record(row) for row in _rows(driver, database, ORDERS)}
    products = {row["product"]["product_id"]: product_record(row)
                for row in _rows(driver, database, PRODUCTS)}
    return {"users": dict(sorted(users.items())), "orders": dict(sorted(orders.items())),
            "products": dict(sorted(products.items()))}


def write_export(data: Mapping[str, Mapping[str, Any]], out_dir: Path) -> list[Path]:
    """Write `users.json`, `orders.json`, `products.json` into `out_dir` (created if missing)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("users", "orders", "products"):
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(data[name], indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m devstack.export",
                                     description="Export the store graph as users.json, orders.json and "
                                                 "products.json (tau-retail shapes).")
    parser.add_argument("--out", type=Path, required=True, help="directory to write the three files into")
    parser.add_argument("--neo4j-uri", default=None, help="Bolt URI (default: settings NEO4J_URI)")
    parser.add_argument("--database", default=None, help="database name (default: settings NEO4J_DATABASE)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, export, print one line per file; returns the process exit code."""
    args = _parser().parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        print(f"error: {args.out} exists and is not a directory", file=sys.stderr)
        return EXIT_USAGE

    from neo4j import GraphDatabase
    from neo4j.exceptions import Neo4jError, ServiceUnavailable

    from csagent.config import get_settings

    settings = get_settings()
    uri = args.neo4j_uri or settings.neo4j_uri
    auth = (settings.neo4j_user, settings.neo4j_password) if settings.neo4j_password else None
    try:
        with GraphDatabase.driver(uri, auth=auth, connection_timeout=5.0) as driver:
            driver.verify_connectivity()
            data = export_store(driver, args.database or settings.neo4j_database)
    except ServiceUnavailable as exc:
        print(f"error: Neo4j at {uri} is unreachable ({exc})", file=sys.stderr)
        return EXIT_FAILED
    except Neo4jError as exc:
        print(f"error: the export failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    for path in write_export(data, args.out):
        print(f"{path}: {len(data[path.stem])} records")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
