"""The grounding reads of `csagent.actions.catalogue` against the real Neo4j seeded with
tau-retail: a product's variants, and a customer's orders, payment methods and address, in the
dataset's order and values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from csagent.actions.catalogue import customer_snapshot, product_variants
from csagent.adapters.neo4j_graph import Neo4jGraph

pytestmark = pytest.mark.integration

KEYBOARD = "1656367028"
AARAV = "aarav_nguyen_7344"


@pytest.fixture(scope="module")
def graph(neo4j_driver: Any, tau_store: Any) -> Neo4jGraph:
    return Neo4jGraph(neo4j_driver)


@pytest.fixture(scope="module")
def dataset(tau_data: Path) -> dict[str, Any]:
    return {name: json.loads((tau_data / f"{name}.json").read_text())
            for name in ("users", "orders", "products")}


def test_a_products_variants_are_its_options_prices_and_availability(graph: Neo4jGraph,
                                                                      dataset: dict[str, Any]) -> None:
    # When
    variants = product_variants(graph, KEYBOARD)

    # Then every variant of the dataset is there, by item id, with its options as a dict
    expected = dataset["products"][KEYBOARD]["variants"]
    assert [v["item_id"] for v in variants] == sorted(expected)
    assert all(v == {k: expected[v["item_id"]][k] for k in ("item_id", "options", "price", "available")}
               for v in variants)


def test_an_unknown_product_has_no_variants(graph: Neo4jGraph) -> None:
    # When / Then
    assert product_variants(graph, "0000000000") == []


def test_a_customer_snapshot_holds_their_orders_lines_payments_methods_and_address(
        graph: Neo4jGraph, dataset: dict[str, Any]) -> None:
    # When
    snapshot = customer_snapshot(graph, AARAV)

    # Then it is the dataset's record, in the account's order
    assert snapshot is not None
    user = dataset["users"][AARAV]
    assert snapshot["default_address"] == user["address"]
    assert [m["payment_method_id"] for m in snapshot["payment_methods"]] == sorted(user["payment_methods"])
    assert snapshot["payment_methods"][0] == {"payment_method_id": "gift_card_2742113", "source": "gift_card",
                                              "brand": None, "last_four": None, "balance": 22.0}
    assert [o["order_id"] for o in snapshot["orders"]] == user["orders"]
    for order in snapshot["orders"]:
        record = dataset["orders"][order["order_id"]]
        assert order["status"] == record["status"]
        assert order["address"] == record["address"]
        assert order["payment_history"] == record["payment_history"]
        assert [{k: line[k] for k in ("item_id", "product_id", "name", "price", "options")}
                for line in order["lines"]] == record["items"]
        assert [line["line_id"] for line in order["lines"]] == [
            f"{order['order_id']}/{n}" for n in range(1, len(record["items"]) + 1)]


def test_an_unknown_customer_has_no_snapshot(graph: Neo4jGraph) -> None:
    # When / Then
    assert customer_snapshot(graph, "nobody_0000") is None
