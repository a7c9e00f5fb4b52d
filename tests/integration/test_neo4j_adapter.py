"""The Neo4j adapter classifies the driver's errors once, into the project's `StoreError`s, on
the real Neo4j (seeded with tau-retail): what the server and the driver really send for a
transaction timeout, a client error, a write in a READ transaction, a uniqueness violation and
an unreachable server. The tools act on these types only (`csagent.tools.failures`)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from neo4j import GraphDatabase

from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.domain.errors import StoreConflict, StoreRejected, StoreTimeout, StoreUnavailable
from csagent.domain.models import ErrorType, Task
from csagent.tools.failures import failed_result

pytestmark = pytest.mark.integration

TASK = Task(task_id="t1", task_type="order_status", tool="predefined_cypher")
SLOW = "UNWIND range(1, 200000000) AS x WITH x WHERE x % 7 = 3 RETURN count(x) AS n"


@pytest.fixture(scope="module")
def graph(tau_store: Any) -> Any:
    driver = GraphDatabase.driver(os.environ["NEO4J_URI"], auth=None)
    yield Neo4jGraph(driver)
    driver.close()


def test_a_transaction_the_server_terminates_is_a_retryable_timeout(graph: Neo4jGraph) -> None:
    # When a read runs longer than its transaction timeout
    with pytest.raises(StoreTimeout) as raised:
        graph.read(SLOW, timeout_s=0.2)

    # Then it is a store timeout carrying the server's code; the tools' result: a retryable TIMEOUT
    assert "TransactionTimedOut" in raised.value.code
    result = failed_result(TASK, raised.value)
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == (ErrorType.TIMEOUT, True)


def test_a_query_the_server_cannot_parse_is_rejected_with_its_code(graph: Neo4jGraph) -> None:
    # When the query does not parse
    with pytest.raises(StoreRejected) as raised:
        graph.read("MATCH (n:Customer RETURN n")

    # Then the server's code and message are kept for callers that need them; no retry helps
    assert raised.value.code == "Neo.ClientError.Statement.SyntaxError"
    assert "Invalid input" in raised.value.detail
    result = failed_result(TASK, raised.value)
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == (ErrorType.UNKNOWN, False)


def test_a_write_in_a_read_transaction_is_rejected_as_an_access_mode_error(graph: Neo4jGraph) -> None:
    # When a query that writes runs in a READ transaction
    with pytest.raises(StoreRejected) as raised:
        graph.read("CREATE (:AdapterProbe {at: 1})")

    # Then the server refused it for its access mode (Text2Cypher's write check reads this code)
    assert raised.value.code.endswith("AccessMode")


def test_a_second_customer_with_the_same_id_is_a_conflict(graph: Neo4jGraph) -> None:
    # When a write would create a customer whose id already exists (a unique constraint)
    with pytest.raises(StoreConflict) as raised:
        graph.write("CREATE (:Customer {customer_id: 'james_li_5688'})")

    # Then it is a retryable conflict (a concurrent writer made the change first); nothing was written
    assert "ConstraintValidationFailed" in raised.value.code
    assert graph.read("MATCH (c:Customer {customer_id: 'james_li_5688'}) RETURN count(c) AS n") == [{"n": 1}]
    assert failed_result(TASK, raised.value).error.type is ErrorType.TRANSIENT  # type: ignore[union-attr]


def test_an_unreachable_server_is_unavailable() -> None:
    # Given a driver for a port nothing listens on
    from devstack.aws import free_port

    driver = GraphDatabase.driver(f"bolt://127.0.0.1:{free_port()}", auth=None, connection_timeout=1.0,
                                  max_transaction_retry_time=0.5)
    try:
        # When a read is attempted
        with pytest.raises(StoreUnavailable) as raised:
            Neo4jGraph(driver).read("RETURN 1 AS ok")
    finally:
        driver.close()

    # Then it is a retryable transient failure, caused by the driver's ServiceUnavailable
    assert type(raised.value.__cause__).__name__ == "ServiceUnavailable"
    result = failed_result(TASK, raised.value)
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == (ErrorType.TRANSIENT, True)
