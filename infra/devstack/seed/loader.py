"""Load a store (tau-retail shapes) into Neo4j as the graph in `docs/graph-model.md`.

`seed_store` replaces every STORE node (all labels except the knowledge base's `Document` and
`Chunk`) with the dataset's state, so re-running it undoes whatever a test or a demo changed
(cancelled orders, edited addresses, removed lines). The knowledge base is left in place and its
`MENTIONS` links to products and categories are restored after the products are re-created.

Rows are built by pure functions (`build_rows`) and written with batched `UNWIND $rows` queries.

Besides the graph's own shape, the loader keeps what it takes to give the dataset back exactly
(`devstack.export`): an order's position in its customer's `orders` list (`Order.placed_seq`),
and each shipment's fulfilment (`Shipment.fulfillment_no`, `tracking_no` within it, and the
fulfilment's `item_ids` as the dataset lists them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from devstack.schema import apply_schema
from devstack.seed import augment

if TYPE_CHECKING:
    from neo4j import Driver

DATA_FILES: tuple[str, ...] = ("users.json", "orders.json", "products.json")
DEMO_DIR = Path(__file__).resolve().parent / "demo"
BATCH_SIZE = 1500
DELETE_BATCH_SIZE = 5000

STORE_LABELS: tuple[str, ...] = (
    "Customer", "Address", "PaymentMethod", "Order", "OrderLine", "Transaction",
    "Shipment", "TrackingEvent", "Product", "Variant", "Category",
    # Written by customer actions, not by the dataset: a re-seed clears them with the orders they audit.
    "AuditEvent",
)
STORE_RELATIONSHIPS: tuple[str, ...] = (
    "HAS_DEFAULT_ADDRESS", "HAS_PAYMENT_METHOD", "PLACED", "SHIPS_TO", "HAS_LINE", "OF_VARIANT",
    "HAS_TRANSACTION", "USING", "FULFILLED_BY", "CONTAINS", "HAS_EVENT", "HAS_VARIANT", "IN_CATEGORY",
    "HAS_AUDIT",
)

Rows = list[dict[str, Any]]

ORDER_ACTION_FIELDS: tuple[str, ...] = (
    "cancel_reason", "return_items", "return_payment_method_id", "exchange_items", "exchange_new_items",
    "exchange_payment_method_id", "exchange_price_difference",
)
"""The order fields the store's writes add to a dataset record (as the benchmark's reference tools
name them): loaded as `Order` properties when a dataset already has them, written by
`csagent.actions`, exported by `devstack.export`."""


@dataclass(frozen=True)
class SeedReport:
    """What a seed run left in the database: node count per store label, relationship count per
    store type, knowledge-base `MENTIONS` links restored, and the wall time of the whole run."""

    data_dir: Path
    nodes: dict[str, int] = field(default_factory=dict)
    relationships: dict[str, int] = field(default_factory=dict)
    mentions_restored: int = 0
    elapsed_s: float = 0.0

# --------------------------------------------------------------------------- reading the dataset


def missing_files(data_dir: Path) -> list[str]:
    """The dataset files `data_dir` lacks (all of them when it is not a directory)."""
    if not data_dir.is_dir():
        return list(DATA_FILES)
    return [name for name in DATA_FILES if not (data_dir / name).is_file()]


def read_dataset(data_dir: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """`(users, orders, products)` from the three JSON files of a tau-shaped store."""
    absent = missing_files(data_dir)
    if absent:
        raise FileNotFoundError(f"{data_dir} lacks {', '.join(absent)}")
    users, orders, products = (_read_json(data_dir / name) for name in DATA_FILES)
    return users, orders, products


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc


# --------------------------------------------------------------------------- rows (pure)


def options_text(options: Mapping[str, Any]) -> str:
    """`"color: blue, size: M"`: variant options as one readable string, in dataset order."""
    return ", ".join(f"{key}: {value}" for key, value in options.items())


def options_json(options: Mapping[str, Any]) -> str:
    """Variant options as a JSON object string (Neo4j has no map-valued properties)."""
    return json.dumps(dict(options), ensure_ascii=False, separators=(",", ":"))


def _address_row(address_id: str, address: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("address1", "address2", "city", "state", "zip", "country")
    return {"address_id": address_id, **{key: address.get(key, "") for key in keys}}


def catalogue_rows(products: Mapping[str, Any]) -> dict[str, Rows]:
    """Rows for `Category`, `Product` and `Variant` nodes."""
    product_rows: Rows = []
    variant_rows: Rows = []
    for product in products.values():
        product_rows.append({"product_id": product["product_id"], "name": product["name"],
                             "category": augment.category_for(product["name"])})
        for variant in product["variants"].values():
            variant_rows.append({
                "product_id": product["product_id"], "item_id": variant["item_id"],
                "price": float(variant["price"]), "available": bool(variant["available"]),
                "options_json": options_json(variant["options"]),
                "option_text": options_text(variant["options"]),
            })
    categories = sorted({row["category"] for row in product_rows})
    return {"categories": [{"name": name} for name in categories],
            "products": product_rows, "variants": variant_rows}


def customer_rows(users: Mapping[str, Any]) -> dict[str, Rows]:
    """Rows for `Customer` (with its default `Address`) and `PaymentMethod` nodes."""
    customers: Rows = []
    payment_methods: Rows = []
    for customer_id, user in users.items():
        customers.append({
            "customer_id": customer_id, "first_name": user["name"]["first_name"],
            "last_name": user["name"]["last_name"], "email": user["email"],
            "zip": user["address"].get("zip", ""),
            "address": _address_row(f"customer:{customer_id}", user["address"]),
        })
        for method_id, method in user["payment_methods"].items():
            payment_methods.append({
                "customer_id": customer_id, "payment_method_id": method_id, "source": method["source"],
                "brand": method.get("brand"), "last_four": method.get("last_four"),
                "balance": None if method.get("balance") is None else float(method["balance"]),
            })
    return {"customers": customers, "payment_methods": payment_methods}


def _destination(address: Mapping[str, Any]) -> str:
    return f"{address.get('city', '')}, {address.get('state', '')}".strip(", ")


def _order_shipments(order: Mapping[str, Any], created_at: Any,
                     lines: Rows) -> tuple[Rows, Rows]:
    """Shipment rows (one per tracking id of each fulfilment, with the fulfilment's position and
    item ids) and their event rows."""
    order_id, status = order["order_id"], order["status"]
    shipments: Rows = []
    events: Rows = []
    for fulfillment_no, fulfilment in enumerate(order.get("fulfillments", []), start=1):
        item_ids = [str(item_id) for item_id in fulfilment.get("item_ids", [])]
        wanted = set(item_ids)
        line_ids = [line["line_id"] for line in lines if line["item_id"] in wanted]
        for tracking_no, tracking_id in enumerate(fulfilment.get("tracking_id", []), start=1):
            info = augment.shipment_for(tracking_id, status, created_at, _destination(order["address"]))
            shipments.append({
                "order_id": order_id, "tracking_id": tracking_id, "carrier": info.carrier,
                "status": info.status, "shipped_at": info.shipped_at,
                "estimated_delivery": info.estimated_delivery, "delivered_at": info.delivered_at,
                "line_ids": line_ids, "fulfillment_no": fulfillment_no, "tracking_no": tracking_no,
                "item_ids": item_ids,
            })
            events.extend({
                "tracking_id": tracking_id, "event_id": f"{tracking_id}/{event.seq}", "seq": event.seq,
                "at": event.at, "status": event.status, "location": event.location,
                "description": event.description,
            } for event in info.events)
    return shipments, events


def placed_positions(users: Mapping[str, Any]) -> dict[str, int]:
    """Each order's position (from 1) in its customer's `orders` list."""
    return {order_id: seq for user in users.values()
            for seq, order_id in enumerate(user.get("orders", []), start=1)}


def order_rows(orders: Mapping[str, Any], placed: Mapping[str, int] | None = None) -> dict[str, Rows]:
    """Rows for `Order` (with its shipping `Address`), `OrderLine`, `Transaction`, `Shipment`
    and `TrackingEvent` nodes. `placed` gives each order's `placed_seq` (`placed_positions`)."""
    out: dict[str, Rows] = {"orders": [], "lines": [], "transactions": [], "shipments": [], "events": []}
    for order in orders.values():
        order_id = order["order_id"]
        created_at = augment.order_created_at(order_id)
        total, item_count = augment.order_totals(order["items"])
        out["orders"].append({
            "order_id": order_id, "customer_id": order["user_id"], "status": order["status"],
            "created_at": augment.iso(created_at), "total": total, "item_count": item_count,
            "placed_seq": (placed or {}).get(order_id),
            "address": _address_row(f"order:{order_id}", order["address"]),
            "fields": {key: order[key] for key in ORDER_ACTION_FIELDS if key in order},
        })
        lines = [{
            "order_id": order_id, "line_id": f"{order_id}/{line_no}", "line_no": line_no,
            "item_id": item["item_id"], "product_id": item["product_id"], "name": item["name"],
            "price": float(item["price"]), "options_json": options_json(item["options"]),
            "option_text": options_text(item["options"]),
        } for line_no, item in enumerate(order["items"], start=1)]
        out["lines"].extend(lines)
        out["transactions"].extend({
            "order_id": order_id, "transaction_id": f"{order_id}/{seq}", "seq": seq,
            "type": payment["transaction_type"], "amount": float(payment["amount"]),
            "payment_method_id": payment["payment_method_id"],
        } for seq, payment in enumerate(order.get("payment_history", []), start=1))
        shipments, events = _order_shipments(order, created_at, lines)
        out["shipments"].extend(shipments)
        out["events"].extend(events)
    return out


def build_rows(users: Mapping[str, Any], orders: Mapping[str, Any],
               products: Mapping[str, Any]) -> dict[str, Rows]:
    """Every row the loader writes, keyed by the write that consumes it (see `_WRITES`)."""
    return {**catalogue_rows(products), **customer_rows(users),
            **order_rows(orders, placed_positions(users))}


# --------------------------------------------------------------------------- Cypher

# Order matters: each write MATCHes nodes created by the ones before it. All keys are
# constrained, so every MATCH is an index seek.
_WRITES: tuple[tuple[str, str], ...] = (
    ("categories", "UNWIND $rows AS row CREATE (:Category {name: row.name})"),
    ("products", """
        UNWIND $rows AS row
        MATCH (c:Category {name: row.category})
        CREATE (p:Product {product_id: row.product_id, name: row.name, category: row.category})
        CREATE (p)-[:IN_CATEGORY]->(c)"""),
    ("variants", """
        UNWIND $rows AS row
        MATCH (p:Product {product_id: row.product_id})
        CREATE (p)-[:HAS_VARIANT]->(:Variant {item_id: row.item_id, price: row.price,
            available: row.available, options_json: row.options_json, option_text: row.option_text})"""),
    ("customers", """
        UNWIND $rows AS row
        CREATE (c:Customer {customer_id: row.customer_id, first_name: row.first_name,
            last_name: row.last_name, email: row.email, zip: row.zip})
        CREATE (c)-[:HAS_DEFAULT_ADDRESS]->(a:Address)
        SET a = row.address"""),
    ("payment_methods", """
        UNWIND $rows AS row
        MATCH (c:Customer {customer_id: row.customer_id})
        CREATE (c)-[:HAS_PAYMENT_METHOD]->(:PaymentMethod {payment_method_id: row.payment_method_id,
            source: row.source, brand: row.brand, last_four: row.last_four, balance: row.balance})"""),
    ("orders", """
        UNWIND $rows AS row
        MATCH (c:Customer {customer_id: row.customer_id})
        CREATE (c)-[:PLACED]->(o:Order {order_id: row.order_id, status: row.status,
            created_at: row.created_at, total: row.total, item_count: row.item_count,
            placed_seq: row.placed_seq})
        SET o += row.fields
        CREATE (o)-[:SHIPS_TO]->(a:Address)
        SET a = row.address"""),
    ("lines", """
        UNWIND $rows AS row
        MATCH (o:Order {order_id: row.order_id})
        MATCH (v:Variant {item_id: row.item_id})
        CREATE (o)-[:HAS_LINE]->(l:OrderLine {line_id: row.line_id, line_no: row.line_no,
            item_id: row.item_id, product_id: row.product_id, name: row.name, price: row.price,
            options_json: row.options_json, option_text: row.option_text})
        CREATE (l)-[:OF_VARIANT]->(v)"""),
    ("transactions", """
        UNWIND $rows AS row
        MATCH (o:Order {order_id: row.order_id})
        MATCH (m:PaymentMethod {payment_method_id: row.payment_method_id})
        CREATE (o)-[:HAS_TRANSACTION]->(t:Transaction {transaction_id: row.transaction_id,
            seq: row.seq, type: row.type, amount: row.amount})
        CREATE (t)-[:USING]->(m)"""),
    ("shipments", """
        UNWIND $rows AS row
        MATCH (o:Order {order_id: row.order_id})
        CREATE (o)-[:FULFILLED_BY]->(s:Shipment {tracking_id: row.tracking_id, carrier: row.carrier,
            status: row.status, shipped_at: row.shipped_at, estimated_delivery: row.estimated_delivery,
            delivered_at: row.delivered_at, fulfillment_no: row.fulfillment_no,
            tracking_no: row.tracking_no, item_ids: row.item_ids})
        WITH s, row
        UNWIND row.line_ids AS line_id
        MATCH (l:OrderLine {line_id: line_id})
        CREATE (s)-[:CONTAINS]->(l)"""),
    ("events", """
        UNWIND $rows AS row
        MATCH (s:Shipment {tracking_id: row.tracking_id})
        CREATE (s)-[:HAS_EVENT]->(:TrackingEvent {event_id: row.event_id, seq: row.seq, at: row.at,
            status: row.status, location: row.location, description: row.description})"""),
)

_STORE_NODE_PREDICATE = " OR ".join(f"n:{label}" for label in STORE_LABELS)

_DELETE_STORE = f"""
    MATCH (n) WHERE {_STORE_NODE_PREDICATE}
    CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF {DELETE_BATCH_SIZE} ROWS"""

_SNAPSHOT_MENTIONS = """
    MATCH (c:Chunk)-[:MENTIONS]->(t)
    WHERE t:Product OR t:Category
    RETURN c.chunk_id AS chunk_id, t.product_id AS product_id, t.name AS name,
           CASE WHEN t:Product THEN 'Product' ELSE 'Category' END AS kind"""

_RESTORE_MENTIONS = """
    UNWIND $rows AS row
    MATCH (c:Chunk {chunk_id: row.chunk_id})
    OPTIONAL MATCH (p:Product {product_id: row.product_id}) WHERE row.kind = 'Product'
    OPTIONAL MATCH (k:Category {name: row.name}) WHERE row.kind = 'Category'
    WITH c, coalesce(p, k) AS target
    WHERE target IS NOT NULL
    MERGE (c)-[:MENTIONS]->(target)
    RETURN count(*) AS restored"""


# --------------------------------------------------------------------------- running


def batches(rows: Sequence[dict[str, Any]], size: int = BATCH_SIZE) -> Iterator[Sequence[dict[str, Any]]]:
    """Consecutive slices of at most `size` rows."""
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def _write_rows(driver: Driver, database: str, cypher: str, rows: Sequence[dict[str, Any]]) -> None:
    def write(tx: Any, chunk: Sequence[dict[str, Any]]) -> None:
        tx.run(cypher, rows=list(chunk)).consume()

    with driver.session(database=database) as session:
        for chunk in batches(rows):
            session.execute_write(write, chunk)


def _query(driver: Driver, database: str, cypher: str, *, write: bool = False,
           **params: Any) -> list[dict[str, Any]]:
    """Run one query in its own managed transaction; rows as dicts. Server notifications are
    off: the snapshot query names knowledge-base labels that may not exist yet, which is fine."""
    def work(tx: Any) -> list[dict[str, Any]]:
        return tx.run(cypher, params).data()

    with driver.session(database=database, notifications_min_severity="OFF") as session:
        return session.execute_write(work) if write else session.execute_read(work)


def delete_store(driver: Driver, database: str = "neo4j") -> None:
    """Detach-delete every store node, in batches (the knowledge base stays)."""
    with driver.session(database=database) as session:
        session.run(_DELETE_STORE).consume()


def store_counts(driver: Driver, database: str = "neo4j") -> tuple[dict[str, int], dict[str, int]]:
    """`(nodes per store label, relationships per store type)` as the database holds them now."""
    nodes = {label: _query(driver, database, f"MATCH (n:{label}) RETURN count(n) AS n")[0]["n"]
             for label in STORE_LABELS}
    rels = {rel: _query(driver, database, f"MATCH ()-[r:{rel}]->() RETURN count(r) AS n")[0]["n"]
            for rel in STORE_RELATIONSHIPS}
    return nodes, rels


def _restore_mentions(driver: Driver, database: str, mentions: Rows) -> int:
    if not mentions:
        return 0
    rows = _query(driver, database, _RESTORE_MENTIONS, write=True, rows=mentions)
    return int(rows[0]["restored"]) if rows else 0


def seed_store(driver: Driver, data_dir: Path | None = None, *, database: str = "neo4j",
               dimension: int | None = None) -> SeedReport:
    """Replace the store in Neo4j with the dataset in `data_dir` (the built-in demo when None).

    Steps: read and derive all rows (fails before touching the database if a file is missing);
    remember knowledge-base MENTIONS; delete store nodes in batches; apply the schema; write rows
    in batches; restore MENTIONS; count. `dimension` is the vector index size (from settings when
    None). Running it again restores the dataset exactly.
    """
    started = time.perf_counter()
    source = Path(data_dir) if data_dir is not None else DEMO_DIR
    rows = build_rows(*read_dataset(source))
    mentions = _query(driver, database, _SNAPSHOT_MENTIONS)
    delete_store(driver, database)
    apply_schema(driver, _dimension(dimension), database=database)
    for key, cypher in _WRITES:
        _write_rows(driver, database, cypher, rows[key])
    restored = _restore_mentions(driver, database, mentions)
    nodes, rels = store_counts(driver, database)
    return SeedReport(data_dir=source, nodes=nodes, relationships=rels, mentions_restored=restored,
                      elapsed_s=time.perf_counter() - started)


def _dimension(dimension: int | None) -> int:
    if dimension is not None:
        return dimension
    from csagent.config import get_settings

    return get_settings().embedding_dimension
