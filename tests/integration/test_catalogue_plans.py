"""Customer scoping of the predefined Cypher templates, as the database plans them: every
customer-scoped template in the catalogue (listed from `load_catalogue`, so a new one is covered
without editing this file) is planned by the real Neo4j from the unique seek on
`Customer.customer_id` bound to `$customer_id`, and every other row source in its plan is fed
from there (`Argument`), so no branch of the query starts anywhere else.

Uses `neo4j_driver` / `tau_store` from tests/conftest.py; EXPLAIN only, nothing runs or is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.tools.cypher_catalogue import QueryTemplate, load_catalogue

pytestmark = pytest.mark.integration

CUSTOMER_TEMPLATES = [t for t in load_catalogue().templates if t.scope == "customer"]
CUSTOMER_SEEK = re.compile(r"UNIQUE \w+:Customer\(customer_id\) WHERE customer_id = \$customer_id\b")


@pytest.fixture(scope="module")
def store(neo4j_driver: Any, tau_store: Any) -> Neo4jGraph:
    return Neo4jGraph(neo4j_driver)


def _leaves(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The plan's row sources, first-run first (the leftmost leaf is where the plan starts)."""
    children = plan.get("children") or ()
    if not children:
        yield plan
    for child in children:
        yield from _leaves(child)


def _operator(plan: Mapping[str, Any]) -> str:
    return str(plan["operatorType"]).split("@", 1)[0]


def test_the_catalogue_has_customer_templates() -> None:
    assert len(CUSTOMER_TEMPLATES) >= 20


@pytest.mark.parametrize("template", CUSTOMER_TEMPLATES, ids=lambda t: t.id)
def test_a_customer_template_is_planned_from_the_customer_id_seek(store: Neo4jGraph,
                                                                  template: QueryTemplate) -> None:
    # Given the plan Neo4j makes for the template
    first, *others = list(_leaves(store.explain(template.cypher)["plan"]))
    # Then it starts from the unique seek on the authenticated customer's id ...
    assert _operator(first) == "NodeUniqueIndexSeek", (template.id, _operator(first), first["args"])
    assert CUSTOMER_SEEK.match(first["args"]["Details"]), (template.id, first["args"]["Details"])
    # ... and no other branch of the plan reads rows from anywhere but that start
    assert [_operator(leaf) for leaf in others] == ["Argument"] * len(others), template.id
