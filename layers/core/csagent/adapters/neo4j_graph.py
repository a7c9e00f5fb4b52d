"""Neo4j adapter for the `GraphStore` port."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neo4j import Driver


class Neo4jGraph:
    """`GraphStore` over a neo4j Driver: READ/WRITE transactions, timeouts and row caps."""

    def __init__(self, driver: Driver, database: str = "neo4j", default_timeout_s: float = 10.0) -> None:
        self._driver = driver
        self._database = database
        self._timeout = default_timeout_s

    @property
    def driver(self) -> Driver:
        return self._driver

    def reconnect(self, driver: Driver) -> None:
        """Use `driver` from now on and close the old one (after a SnapStart restore its pooled
        sockets belong to the snapshot's machine: dead)."""
        old, self._driver = self._driver, driver
        if old is not driver:
            with contextlib.suppress(Exception):  # closing dead sockets may fail; the new driver is in use
                old.close()

    def _run(self, access: str, cypher: str, params: Mapping[str, Any] | None,
             timeout_s: float | None, max_rows: int | None) -> list[dict[str, Any]]:
        from neo4j import unit_of_work

        # The timeout is enforced by the server: the transaction is terminated when it expires.
        @unit_of_work(timeout=timeout_s or self._timeout)
        def work(tx: Any) -> list[dict[str, Any]]:
            result = tx.run(cypher, dict(params or {}))
            rows: list[dict[str, Any]] = []
            for record in result:
                rows.append(record.data())
                if max_rows is not None and len(rows) >= max_rows:
                    break
            return rows

        with self._driver.session(database=self._database) as session:
            if access == "READ":
                return session.execute_read(work)
            return session.execute_write(work)

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        return self._run("READ", cypher, params, timeout_s, max_rows)

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        return self._run("WRITE", cypher, params, timeout_s, None)

    def explain(self, cypher: str, *, timeout_s: float | None = None) -> dict[str, Any]:
        """Plan a query without running it (READ transaction): its query type and notifications."""
        from neo4j import unit_of_work

        @unit_of_work(timeout=timeout_s or self._timeout)
        def work(tx: Any) -> Any:
            return tx.run("EXPLAIN " + cypher).consume()

        # EXPLAIN's notifications (unknown labels, properties) are the point here: ask for them.
        with self._driver.session(database=self._database,
                                  notifications_min_severity="INFORMATION") as session:
            summary = session.execute_read(work)
        return {"query_type": summary.query_type,
                "notifications": [{"code": str(s.gql_status), "description": str(s.status_description),
                                   "classification": str(s.raw_classification or "")}
                                  for s in summary.gql_status_objects if s.is_notification]}

    def ping(self) -> bool:
        try:
            return self.read("RETURN 1 AS ok", timeout_s=2.0) == [{"ok": 1}]
        except Exception:  # noqa: BLE001 - health checks report, never raise
            return False


@lru_cache(maxsize=4)
def neo4j_driver(uri: str, user: str, password: str) -> Driver:
    """A process-wide driver per endpoint, created on first use (never at import)."""
    from neo4j import GraphDatabase

    auth = (user, password) if password else None
    # Server notifications (e.g. "label does not exist yet") are advice for humans writing
    # queries, not events of a running service: keep them out of the logs.
    # max_transaction_retry_time: the driver would otherwise retry a dead connection for 30 s on
    # its own; the healer retries within the turn's budget instead.
    return GraphDatabase.driver(uri, auth=auth, connection_timeout=5.0, max_connection_pool_size=20,
                                notifications_min_severity="OFF", max_transaction_retry_time=1.0)
