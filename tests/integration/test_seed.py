"""Seeding the store graph into a real Neo4j: exact counts, properties, restoring after writes,
idempotence, the schema, and the knowledge base left in place.

Uses the shared fixtures of `tests/conftest.py`: `neo4j_driver` (env `NEO4J_URI`, default
bolt://127.0.0.1:7687) and `tau_data` (the tau-retail path, defined there once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devstack.schema import apply_schema
from devstack.seed import demo_store
from devstack.seed.loader import SeedReport, build_rows, read_dataset, seed_store

pytestmark = pytest.mark.integration

SPOT_ORDER = "#W2611340"
KEYS = {
    "Customer": "customer_id", "Address": "address_id", "PaymentMethod": "payment_method_id",
    "Order": "order_id", "OrderLine": "line_id", "Transaction": "transaction_id",
    "Shipment": "tracking_id", "TrackingEvent": "event_id", "Product": "product_id",
    "Variant": "item_id", "Category": "name", "Document": "doc_id", "Chunk": "chunk_id",
}


def _rows(driver: Any, cypher: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(cypher, parameters_=params, database_="neo4j")
    return [record.data() for record in records]


def _order_fingerprint(driver: Any) -> list[dict[str, Any]]:
    return _rows(driver, """
        MATCH (o:Order)
        OPTIONAL MATCH (o)-[:HAS_LINE]->(l:OrderLine)
        WITH o, count(l) AS lines
        RETURN o.order_id AS id, o.status AS status, o.created_at AS created_at, o.total AS total,
               lines ORDER BY id""")


@pytest.fixture(scope="module")
def tau(tau_data: Path) -> dict[str, Any]:
    users, orders, products = read_dataset(tau_data)
    return {"users": users, "orders": orders, "products": products}


@pytest.fixture(scope="module")
def report(neo4j_driver: Any, tau_data: Path) -> SeedReport:
    """A fresh tau-retail seed for this module."""
    return seed_store(neo4j_driver, tau_data)


# --------------------------------------------------------------------------- counts and properties


def test_seed_loads_every_record_of_tau_retail(report: SeedReport, tau: dict[str, Any]) -> None:
    # Given tau-retail seeded
    users, orders = tau["users"], tau["orders"]
    # Then each record became exactly one node
    assert report.nodes["Customer"] == 500
    assert report.nodes["Order"] == 1000
    assert report.nodes["Product"] == 50
    assert report.nodes["Variant"] == 591
    assert report.nodes["PaymentMethod"] == sum(len(u["payment_methods"]) for u in users.values())
    assert report.nodes["Shipment"] == sum(len(o["fulfillments"]) for o in orders.values()) == 577
    assert report.nodes["OrderLine"] == sum(len(o["items"]) for o in orders.values())
    assert report.nodes["Transaction"] == sum(len(o["payment_history"]) for o in orders.values())
    assert report.nodes["Address"] == 500 + 1000


def test_seed_links_shipments_to_their_lines_and_events(report: SeedReport, tau: dict[str, Any]) -> None:
    # Given tau-retail seeded
    rows = build_rows(tau["users"], tau["orders"], tau["products"])
    # Then every relationship count matches what the dataset implies
    assert report.relationships["CONTAINS"] == sum(len(r["line_ids"]) for r in rows["shipments"])
    assert report.relationships["HAS_EVENT"] == report.nodes["TrackingEvent"] == len(rows["events"])
    assert report.relationships["OF_VARIANT"] == report.relationships["HAS_LINE"] == report.nodes["OrderLine"]
    assert report.relationships["USING"] == report.nodes["Transaction"]
    assert report.relationships["IN_CATEGORY"] == 50


def test_seeding_tau_is_well_under_thirty_seconds(report: SeedReport) -> None:
    # Given tau-retail seeded on this machine
    # Then the whole run (delete, schema, load, count) took under 30 s
    assert report.elapsed_s < 30


def test_a_seeded_order_carries_the_dataset_and_derived_values(report: SeedReport,
                                                              neo4j_driver: Any) -> None:
    # Given tau-retail seeded
    # When order #W2611340 is read with its customer, shipment and lines
    [row] = _rows(neo4j_driver, """
        MATCH (c:Customer)-[:PLACED]->(o:Order {order_id: $id})-[:FULFILLED_BY]->(s:Shipment)
        MATCH (o)-[:SHIPS_TO]->(a:Address)
        MATCH (o)-[:HAS_LINE]->(l:OrderLine)-[:OF_VARIANT]->(v:Variant)
        WHERE (s)-[:CONTAINS]->(l)
        WITH c, o, s, a, l, v ORDER BY l.line_no
        RETURN c.customer_id AS customer, o.status AS status, o.total AS total, o.item_count AS items,
               o.created_at AS created_at, s.tracking_id AS tracking, s.carrier AS carrier,
               a.address_id AS address_id, a.city AS city,
               collect([l.line_id, l.name, l.price, v.item_id, l.option_text]) AS lines""", id=SPOT_ORDER)
    # Then it is processed, shipped under 357962501027, with both lines in that shipment
    assert (row["customer"], row["status"], row["tracking"]) == ("james_li_5688", "processed", "357962501027")
    assert (row["total"], row["items"], row["created_at"]) == (536.65, 2, "2024-02-26T11:07:47Z")
    assert (row["address_id"], row["city"]) == (f"order:{SPOT_ORDER}", "New York")
    assert row["carrier"] in {"UPS", "FedEx", "USPS", "DHL"}
    assert row["lines"] == [
        [f"{SPOT_ORDER}/1", "Water Bottle", 47.84, "6469567736",
         "capacity: 1000ml, material: glass, color: blue"],
        [f"{SPOT_ORDER}/2", "Office Chair", 488.81, "8426249116",
         "material: fabric, color: black, armrest: fixed, backrest height: standard"],
    ]


def test_tracking_histories_in_the_graph_match_order_status(report: SeedReport, neo4j_driver: Any) -> None:
    # Given tau-retail seeded
    # When each shipment's last event is compared with its order's status
    rows = _rows(neo4j_driver, """
        MATCH (o:Order)-[:FULFILLED_BY]->(s:Shipment)-[:HAS_EVENT]->(e:TrackingEvent)
        WITH o, s, e ORDER BY e.seq DESC
        WITH o.status AS order_status, s, collect(e.status) AS statuses
        RETURN order_status, statuses[0] AS last, count(*) AS n""")
    lasts = {(r["order_status"], r["last"]) for r in rows}
    # Then delivered orders end delivered, processed ones are still moving, cancelled ones cancelled
    assert {last for status, last in lasts if status == "delivered"} == {"delivered"}
    assert {last for status, last in lasts if status == "processed"} <= {"in_transit", "out_for_delivery"}
    assert {last for status, last in lasts if status == "cancelled"} == {"cancelled"}


def test_gift_cards_keep_their_balance(report: SeedReport, neo4j_driver: Any, tau: dict[str, Any]) -> None:
    # Given a gift card in tau-retail
    user = tau["users"]["anya_garcia_3271"]
    # When it is read from the graph
    [row] = _rows(neo4j_driver, """
        MATCH (:Customer {customer_id: 'anya_garcia_3271'})-[:HAS_PAYMENT_METHOD]->(m {source: 'gift_card'})
        RETURN m.payment_method_id AS id, m.balance AS balance""")
    # Then its balance is the dataset's
    assert row["balance"] == user["payment_methods"][row["id"]]["balance"]


# --------------------------------------------------------------------------- re-seeding


def test_reseeding_undoes_a_cancelled_order_and_a_deleted_line(report: SeedReport,
                                                              neo4j_driver: Any, tau_data: Path) -> None:
    # Given order #W2611340 cancelled and one of its lines deleted
    _rows(neo4j_driver, "MATCH (o:Order {order_id: $id}) SET o.status = 'cancelled'", id=SPOT_ORDER)
    _rows(neo4j_driver, "MATCH (l:OrderLine {line_id: $id}) DETACH DELETE l", id=f"{SPOT_ORDER}/2")
    # When the store is seeded again
    again = seed_store(neo4j_driver, tau_data)
    # Then the order is processed again with both lines, and the totals are back
    [row] = _rows(neo4j_driver, """
        MATCH (o:Order {order_id: $id})-[:HAS_LINE]->(l) RETURN o.status AS status, count(l) AS lines""",
                  id=SPOT_ORDER)
    assert (row["status"], row["lines"]) == ("processed", 2)
    assert again.nodes == report.nodes


def test_seeding_twice_gives_identical_counts_and_orders(report: SeedReport, neo4j_driver: Any,
                                                        tau_data: Path) -> None:
    # Given tau-retail seeded once and its orders read
    before = _order_fingerprint(neo4j_driver)
    # When it is seeded again
    again = seed_store(neo4j_driver, tau_data)
    # Then every count and every order's values are the same
    assert (again.nodes, again.relationships) == (report.nodes, report.relationships)
    assert _order_fingerprint(neo4j_driver) == before


def test_reseeding_keeps_the_knowledge_base_and_its_product_links(report: SeedReport, neo4j_driver: Any,
                                                                  tau_data: Path) -> None:
    # Given a knowledge chunk that mentions a product and a category (besides whatever the
    # knowledge base already links)
    existing = _rows(neo4j_driver, "MATCH (:Chunk)-[m:MENTIONS]->() RETURN count(m) AS n")[0]["n"]
    _rows(neo4j_driver, """
        MERGE (d:Document {doc_id: 'test-seed-doc'}) SET d.title = 'Water bottles', d.kind = 'manual'
        MERGE (c:Chunk {chunk_id: 'test-seed-doc#1'}) SET c.section = 'Care', c.text = 'Hand wash only.'
        MERGE (d)-[:HAS_CHUNK]->(c)
        WITH c
        MATCH (p:Product {product_id: '8310926033'}), (k:Category {name: 'Outdoor'})
        MERGE (c)-[:MENTIONS]->(p) MERGE (c)-[:MENTIONS]->(k)""")
    try:
        # When the store is seeded again
        again = seed_store(neo4j_driver, tau_data)
        # Then the chunk is still there and mentions the re-created product and category
        mentioned = _rows(neo4j_driver, """
            MATCH (:Document {doc_id: 'test-seed-doc'})-[:HAS_CHUNK]->(c)-[:MENTIONS]->(t)
            RETURN coalesce(t.product_id, t.name) AS target ORDER BY target""")
        assert [r["target"] for r in mentioned] == ["8310926033", "Outdoor"]
        assert again.mentions_restored == existing + 2
    finally:
        _rows(neo4j_driver, "MATCH (n) WHERE n.doc_id = 'test-seed-doc' OR n.chunk_id = 'test-seed-doc#1' "
                            "DETACH DELETE n")


def test_the_demo_store_is_the_default_dataset(neo4j_driver: Any, reseed_tau: None) -> None:
    # Given no dataset directory
    # When the store is seeded
    demo = seed_store(neo4j_driver)
    # Then the built-in demo store is loaded, with its demo customer and order
    users, orders, products = read_dataset(demo.data_dir)
    assert (demo.nodes["Customer"], demo.nodes["Order"], demo.nodes["Product"]) == (
        len(users), len(orders), len(products))
    [row] = _rows(neo4j_driver, """
        MATCH (:Customer {customer_id: $cid})-[:PLACED]->(o:Order {order_id: $oid})-[:FULFILLED_BY]->(s)
        RETURN o.status AS status, s.tracking_id AS tracking""",
                  cid=demo_store.DEMO_CUSTOMER_ID, oid=demo_store.DEMO_ORDER_ID)
    assert row == {"status": "processed", "tracking": demo_store.DEMO_TRACKING_ID}


def test_no_demo_id_is_a_tau_retail_id(tau: dict[str, Any]) -> None:
    # Given the demo store and tau-retail
    users, orders, products = read_dataset(demo_store.DEFAULT_OUT_DIR)
    # Then the demo reuses none of tau's customer, order or product ids
    assert not set(users) & set(tau["users"])
    assert not set(orders) & set(tau["orders"])
    assert not set(products) & set(tau["products"])


# --------------------------------------------------------------------------- schema


def test_applying_the_schema_twice_changes_nothing(report: SeedReport, neo4j_driver: Any) -> None:
    # Given the schema applied by the seed
    def schema() -> tuple[list[Any], list[Any]]:
        constraints = _rows(neo4j_driver, "SHOW CONSTRAINTS YIELD labelsOrTypes, properties "
                                          "RETURN labelsOrTypes[0] AS label, properties ORDER BY label")
        indexes = _rows(neo4j_driver, "SHOW INDEXES YIELD name, type RETURN name, type ORDER BY name")
        return constraints, indexes

    before = schema()
    # When it is applied twice more
    apply_schema(neo4j_driver, 384)
    apply_schema(neo4j_driver, 384)
    # Then constraints and indexes are unchanged, and every key of the model is constrained
    assert schema() == before
    constrained = {r["label"]: r["properties"] for r in before[0]}
    assert {label: constrained.get(label) for label in KEYS} == {k: [v] for k, v in KEYS.items()}


def test_search_indexes_exist_with_their_configuration(report: SeedReport, neo4j_driver: Any) -> None:
    # Given the schema applied
    # When the search indexes are listed
    rows = _rows(neo4j_driver, """
        SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options
        WHERE name IN ['chunk_text', 'product_name', 'chunk_embedding']
        RETURN name, type, labelsOrTypes[0] AS label, properties, options.indexConfig AS config
        ORDER BY name""")
    by_name = {r["name"]: r for r in rows}
    # Then both fulltext indexes and the 384-d cosine vector index are there
    text, names = by_name["chunk_text"], by_name["product_name"]
    assert (text["type"], text["label"], text["properties"]) == ("FULLTEXT", "Chunk", ["text", "section"])
    assert (names["type"], names["label"], names["properties"]) == ("FULLTEXT", "Product", ["name"])
    vector = by_name["chunk_embedding"]
    assert (vector["type"], vector["label"], vector["properties"]) == ("VECTOR", "Chunk", ["embedding"])
    assert vector["config"]["vector.dimensions"] == 384
    assert vector["config"]["vector.similarity_function"].lower() == "cosine"
