"""What the EXPLAIN plan of the real Neo4j decides in Text2Cypher's validation: writes anywhere in
the plan (a `CALL { }` subquery, `LOAD CSV`, which plans as a read), labels named only in a
`WHERE`, directions between variables labelled in a `WHERE` or a later clause, and the store's
own scans and seeks. The direction queries are ones the hand-written pattern check reads as fine:
the plan is what refuses them. The writes never reach the database in the pipeline (the keyword
scan refuses them before sending); they are planned here to show the plan is a net of its own.

Uses `neo4j_driver` / `tau_store` from tests/conftest.py; nothing is written (EXPLAIN only).
"""

from __future__ import annotations

from typing import Any

import pytest

from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.tools.text2cypher.plan import read_plan
from csagent.tools.text2cypher.validation import (
    OutsideSchema,
    QueryValidator,
    Text2CypherError,
    UnknownLabel,
    WriteAttempt,
    WrongDirection,
    plan_write_errors,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def store(neo4j_driver: Any, tau_store: Any) -> Neo4jGraph:
    return Neo4jGraph(neo4j_driver)


@pytest.fixture(scope="module")
def validator(store: Neo4jGraph) -> QueryValidator:
    return QueryValidator(store, store)


def _schema_errors(validator: QueryValidator, cypher: str) -> list[Text2CypherError]:
    report = validator.validate(cypher)
    assert report.steps[1].name == "explain" and report.steps[1].verdict == "pass"  # the database planned it
    return next(step for step in report.steps if step.name == "schema").errors


@pytest.mark.parametrize("cypher, operator", [
    ("MATCH (p:Product) CALL (p) { CREATE (:Tag {name: p.name}) } RETURN count(*) AS n", "Create"),
    ("MATCH (p:Product) CALL (p) { WITH p SET p.name = 'x' } RETURN count(*) AS n", "SetProperty"),
    ("MATCH (v:Variant) FOREACH (x IN [1] | SET v.available = false) RETURN count(v) AS n", "Foreach"),
    ("LOAD CSV FROM 'file:///products.csv' AS row RETURN row", "LoadCSV"),
], ids=["create_in_call_subquery", "set_in_call_subquery", "foreach", "load_csv"])
def test_a_write_anywhere_in_the_plan_is_refused_by_its_operator(store: Neo4jGraph, cypher: str,
                                                                  operator: str) -> None:
    # Given the plan Neo4j returns for a query that writes inside a subquery or a clause
    facts = read_plan(store.explain(cypher)["plan"])
    # Then the plan names the write operator and that alone refuses the query as a write
    assert operator in facts.writes
    assert any(isinstance(e, WriteAttempt) and operator in e.message for e in plan_write_errors(facts))


def test_load_csv_plans_as_a_read_but_its_plan_still_refuses_it(store: Neo4jGraph) -> None:
    # Given LOAD CSV, which the summary types as a read
    summary = store.explain("LOAD CSV FROM 'file:///products.csv' AS row RETURN row")
    # Then the query type would let it through, the plan does not
    assert summary["query_type"] == "r"
    assert plan_write_errors(read_plan(summary["plan"]))


def test_a_read_only_plan_has_no_write(store: Neo4jGraph) -> None:
    facts = read_plan(store.explain("MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant) "
                                    "RETURN p.name AS name, v.price AS price")["plan"])
    assert facts.writes == [] and plan_write_errors(facts) == []
    assert facts.labels == {"p": {"Product"}, "v": {"Variant"}}


def test_an_unknown_label_named_only_in_a_where_is_refused(validator: QueryValidator) -> None:
    errors = _schema_errors(validator, "MATCH (p:Product)-[:HAS_VARIANT]->(v) WHERE v:Varient "
                                       "RETURN v.item_id AS item_id")
    assert any(isinstance(e, UnknownLabel) and "Varient" in e.message for e in errors)


@pytest.mark.parametrize("cypher", [
    "MATCH (a)-[:HAS_VARIANT]->(b) WHERE a:Variant AND b:Product RETURN b.item_id AS item_id",
    "MATCH (p:Product) WITH p MATCH (a)-[:IN_CATEGORY]->(x) WHERE a:Category RETURN x.name AS name",
    "MATCH (d)-[:HAS_CHUNK]->(c) WHERE d IS Chunk RETURN c.text AS text",
], ids=["labels_in_where", "label_in_a_later_clause", "gql_is_label"])
def test_a_relationship_against_its_schema_direction_is_refused(validator: QueryValidator,
                                                                cypher: str) -> None:
    # Given a pattern whose labels the query gives only outside the pattern
    errors = _schema_errors(validator, cypher)
    # Then the plan's expansion between the labelled variables points the wrong way
    assert any(isinstance(e, WrongDirection) and "Neo4j plans" in e.message for e in errors)


def test_a_customer_label_in_a_where_disjunction_is_outside_the_schema(validator: QueryValidator) -> None:
    errors = _schema_errors(validator, "MATCH (p:Product) WHERE p:Product|Customer RETURN p.name AS name")
    assert any(isinstance(e, OutsideSchema) and "Customer" in e.message for e in errors)


def test_a_valid_query_passes_with_the_plan_read(validator: QueryValidator) -> None:
    report = validator.validate("MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant) WHERE p.name = 'Laptop' "
                                "RETURN v.item_id AS item_id, v.price AS price")
    assert report.ok
    schema = next(step for step in report.steps if step.name == "schema")
    assert "the plan reads Product, Variant" in schema.detail


def test_the_customer_seek_is_read_from_the_plan(store: Neo4jGraph) -> None:
    facts = read_plan(store.explain("MATCH (c:Customer {customer_id: 'x'})-[:PLACED]->(o:Order) "
                                    "RETURN o.order_id AS id")["plan"])
    assert facts.labels["c"] == {"Customer"} and "NodeUniqueIndexSeek" in facts.operators
    assert [(e.start, e.end, e.types) for e in facts.expansions] == [("c", "o", ("PLACED",))]
