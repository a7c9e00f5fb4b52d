"""Shared test configuration: the local stack's addresses, the tau-retail dataset, and fixtures
for the real Neo4j (seeded with tau-retail once per session) and the moto server.

`make test` exports the same variables; the defaults here let `pytest` run on its own
against a stack started with `make up`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
TAU_DATA = ROOT.parent / "shared" / "data" / "tau-retail"
EVENTS = ROOT / "events"

# This checkout's code, here and in the servers the tests start (PYTHONPATH), whatever the
# virtualenv's editable install points at (a venv shared by worktrees maps csagent and devstack
# to the one that installed last); the same as `make`'s PYTHONPATH.
_OWN_CODE = [str(ROOT / "layers" / "core"), str(ROOT / "infra")]
sys.path[:0] = [path for path in _OWN_CODE if path not in sys.path]
os.environ["PYTHONPATH"] = os.pathsep.join(
    _OWN_CODE + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in _OWN_CODE])

for key, value in {
    "STAGE": "local",
    "AUTH_MODE": "dev",
    "NEO4J_URI": f"bolt://127.0.0.1:{os.environ.get('NEO4J_BOLT_PORT', '7687')}",
    "AWS_ENDPOINT_URL": f"http://127.0.0.1:{os.environ.get('MOTO_PORT', '4566')}",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "HF_HUB_OFFLINE": "1",
    "STORE_TODAY": "2024-07-01",
    # Tests send many messages as the same customers; the limit has tests of its own.
    "RATE_LIMIT_MAX_MESSAGES": "100000",
}.items():
    os.environ.setdefault(key, value)


@pytest.fixture(scope="session")
def tau_data() -> Path:
    if not (TAU_DATA / "orders.json").exists():
        pytest.fail(f"the tau-retail dataset is missing at {TAU_DATA} (expected ../shared beside the repo)")
    return TAU_DATA


@pytest.fixture(scope="session")
def neo4j_driver() -> Iterator[Any]:
    from neo4j import GraphDatabase
    from neo4j.exceptions import ServiceUnavailable

    driver = GraphDatabase.driver(os.environ["NEO4J_URI"], auth=None)
    try:
        driver.verify_connectivity()
    except ServiceUnavailable:
        pytest.fail(f"Neo4j is not answering at {os.environ['NEO4J_URI']}: run `make up` first")
    yield driver
    driver.close()


@pytest.fixture(scope="session")
def tau_store(neo4j_driver: Any, tau_data: Path) -> Any:
    """The tau-retail store in Neo4j, with the knowledge base and the Text2Cypher examples, as
    `make seed DATA=…` leaves it. Tests that change the store restore it with `reseed_tau`."""
    from devstack.seed.knowledge import load_knowledge
    from devstack.seed.loader import seed_store

    report = seed_store(neo4j_driver, tau_data)
    load_knowledge(neo4j_driver)
    return report


@pytest.fixture
def tau_api(tau_store: Any, moto_endpoint: str, tau_data: Path) -> Iterator[Any]:
    """The router's app on a loopback port over the tau-retail store and moto: (driver, dataset,
    HTTP client); every customer a test changed is restored afterwards."""
    from devstack.evaluation.runner import api_session

    with api_session(tau_data) as session:
        yield session


@pytest.fixture(scope="module")
def module_api(tau_store: Any, moto_endpoint: str, tau_data: Path) -> Iterator[Any]:
    """`tau_api` for a whole module: the store reset and the API started once (its tests clean up
    what they change themselves)."""
    from devstack.evaluation.runner import api_session

    with api_session(tau_data) as session:
        yield session


@pytest.fixture
def reseed_tau(neo4j_driver: Any, tau_data: Path) -> Iterator[None]:
    """Use in a test that writes to the store: the store is restored afterwards (and the
    knowledge base re-linked if the test had loaded another catalogue, e.g. the demo store)."""
    from devstack.seed.knowledge import load_knowledge
    from devstack.seed.loader import seed_store

    def mentions() -> int:
        query = "MATCH (:Chunk)-[m:MENTIONS]->(:Product) RETURN count(m) AS n"
        records, _, _ = neo4j_driver.execute_query(query)
        return int(records[0]["n"])

    before = mentions()
    yield
    seed_store(neo4j_driver, tau_data)
    if mentions() < before:
        load_knowledge(neo4j_driver)


@pytest.fixture(scope="session")
def moto_endpoint() -> str:
    import boto3
    from botocore.exceptions import EndpointConnectionError

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    try:
        boto3.client("dynamodb", endpoint_url=endpoint).list_tables()
    except EndpointConnectionError:
        pytest.fail(f"moto is not answering at {endpoint}: run `make up` first")
    return endpoint


@pytest.fixture(autouse=True)
def _closed_breakers() -> Iterator[None]:
    """Circuit breakers are process-wide: one test's injected outage must not open them for the next."""
    yield
    from csagent.resilience.breaker import breakers

    breakers().reset()
