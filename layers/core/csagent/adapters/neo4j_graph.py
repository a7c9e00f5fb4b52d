"""Neo4j adapter for the `GraphStore` port.

The one place that knows the driver's exceptions: every failure of `read`, `write` and `explain`
leaves as a `csagent.domain.errors.StoreError` (`classify_neo4j_error`), with the driver's
exception as its cause. Tools act on the error type and retryability, never on driver classes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from csagent.domain.errors import StoreConflict, StoreError, StoreRejected, StoreTimeout, StoreUnavailable

if TYPE_CHECKING:
    from neo4j import Driver

T = TypeVar("T")


def classify_neo4j_error(exc: BaseException) -> StoreError:
    """The project's error for a driver exception (or a socket error below the driver).

    - a transaction timeout (`Neo.ClientError.Transaction.TransactionTimedOut*`, which the server
      sends as a ClientError) or a `TimeoutError` -> `StoreTimeout` (retryable);
    - a uniqueness constraint (`...Schema.ConstraintValidationFailed`) -> `StoreConflict`
      (retryable: a concurrent writer made the change first);
    - `ServiceUnavailable` (so `IncompleteCommit` too), `SessionExpired`, any `TransientError`
      (`Neo.TransientError.*`), a refused or dropped connection -> `StoreUnavailable` (retryable);
    - any other client error (syntax, access mode, a missing parameter or index) -> `StoreRejected`;
    - anything else -> `StoreError` (UNKNOWN, not retryable).
    """
    if isinstance(exc, StoreError):
        return exc
    from neo4j import exceptions as neo

    code = str(getattr(exc, "code", "") or "")
    detail = str(getattr(exc, "message", None) or exc)
    if "TransactionTimedOut" in code or isinstance(exc, TimeoutError):
        return StoreTimeout("The store database did not answer in time.", code=code, detail=detail)
    if "ConstraintValidationFailed" in code:
        return StoreConflict("The change was made by a concurrent request.", code=code, detail=detail)
    if isinstance(exc, neo.ServiceUnavailable | neo.SessionExpired | neo.TransientError | ConnectionError) \
            or code.startswith("Neo.TransientError"):
        return StoreUnavailable("The store database is temporarily unavailable.", code=code, detail=detail)
    if isinstance(exc, neo.ClientError) or code.startswith("Neo.ClientError"):
        return StoreRejected("The store database refused the query.", code=code, detail=detail)
    return StoreError(f"The store query failed unexpectedly ({type(exc).__name__}).", code=code,
                      detail=detail)


def _classified(call: Callable[[], T]) -> T:
    try:
        return call()
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - classified once, here, for every caller
        raise classify_neo4j_error(exc) from exc


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

        def run() -> list[dict[str, Any]]:
            with self._driver.session(database=self._database) as session:
                if access == "READ":
                    return session.execute_read(work)
                return session.execute_write(work)

        return _classified(run)

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        return self._run("READ", cypher, params, timeout_s, max_rows)

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        return self._run("WRITE", cypher, params, timeout_s, None)

    def explain(self, cypher: str, *, timeout_s: float | None = None) -> dict[str, Any]:
        """Plan a query without running it (READ transaction): its query type, notifications and
        plan (`ResultSummary.plan`: the operator tree Text2Cypher's checks read)."""
        from neo4j import unit_of_work

        @unit_of_work(timeout=timeout_s or self._timeout)
        def work(tx: Any) -> Any:
            return tx.run("EXPLAIN " + cypher).consume()

        def run() -> Any:
            # EXPLAIN's notifications (unknown labels, properties) are the point here: ask for them.
            with self._driver.session(database=self._database,
                                      notifications_min_severity="INFORMATION") as session:
                return session.execute_read(work)

        summary = _classified(run)
        return {"query_type": summary.query_type,
                "notifications": [{"code": str(s.gql_status), "description": str(s.status_description),
                                   "classification": str(s.raw_classification or "")}
                                  for s in summary.gql_status_objects if s.is_notification],
                "plan": summary.plan}

    def ping(self) -> bool:
        try:
            return self.read("RETURN 1 AS ok", timeout_s=2.0) == [{"ok": 1}]
        except StoreError:  # `read` raises nothing else (`_classified`): reported, never raised
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
