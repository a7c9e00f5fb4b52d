"""Keeping the store as the dataset has it, so every case starts from the same data.

- `reset_store`: the whole store, as `make seed DATA=tau-retail` leaves it (store graph,
  knowledge base, Text2Cypher examples) - once, before a run.
- `changed_customers` + `restore_customers`: after a case, only the customers it changed.
  Every write of a customer action creates an `AuditEvent` linked to the customer
  (`csagent.actions.queries`), and the seed creates none, so "customers with an audit event"
  is exactly the set a run has changed. Restoring one deletes the customer's own subgraph (the
  customer, default address, payment methods, orders with their addresses, lines,
  transactions, shipments, tracking events, audit events) and writes it again from the dataset
  with the seed loader's own rows and statements (`devstack.seed.loader`), so the result is
  what a full reseed gives for that customer.

Why not reseed after every writing case: a full tau-retail seed costs about 10 s on these
machines (measured in the report as `store.full_reset_s`); restoring one customer costs tens of
milliseconds (`store.restore_ms`), so the CI slice stays fast and every case stays independent.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neo4j import Driver

# The catalogue (categories, products, variants) is shared by every customer and never written
# by a customer action; the rest of the loader's writes are per customer.
CUSTOMER_WRITES = ("customers", "payment_methods", "orders", "lines", "transactions", "shipments", "events")

_CHANGED = "MATCH (c:Customer)-[:HAS_AUDIT]->(:AuditEvent) RETURN DISTINCT c.customer_id AS customer_id"
_DELETE_CUSTOMERS = """
UNWIND $customer_ids AS customer_id
MATCH (c:Customer {customer_id: customer_id})
OPTIONAL MATCH (c)-[:PLACED]->(o:Order)
OPTIONAL MATCH (o)-[:SHIPS_TO|HAS_LINE|HAS_TRANSACTION|FULFILLED_BY|HAS_AUDIT]->(part)
OPTIONAL MATCH (o)-[:FULFILLED_BY]->(:Shipment)-[:HAS_EVENT]->(event:TrackingEvent)
OPTIONAL MATCH (c)-[:HAS_DEFAULT_ADDRESS|HAS_PAYMENT_METHOD|HAS_AUDIT]->(own)
WITH collect(c) + collect(o) + collect(part) + collect(event) + collect(own) AS nodes
UNWIND nodes AS n
WITH DISTINCT n
DETACH DELETE n
"""


def reset_store(driver: Driver, data_dir: Path) -> float:
    """Replace the store with the dataset and (re)load the knowledge base; seconds taken."""
    from devstack.seed.knowledge import load_knowledge
    from devstack.seed.loader import seed_store

    started = time.perf_counter()
    seed_store(driver, data_dir)
    load_knowledge(driver)
    return time.perf_counter() - started


def changed_customers(driver: Driver) -> list[str]:
    """Customers a customer action has written for since the last reset or restore."""
    from devstack.evaluation.checks import read

    return sorted(str(r["customer_id"]) for r in read(driver, _CHANGED))


@dataclass
class Dataset:
    """The tau-retail files, read once; `rows_for` gives the loader's rows for some customers."""

    data_dir: Path
    restored: list[float] = field(default_factory=list)  # ms per restore

    @cached_property
    def _files(self) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
        from devstack.seed.loader import read_dataset

        users, orders, products = read_dataset(self.data_dir)
        return users, orders, products

    def rows_for(self, customer_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        from devstack.seed.loader import customer_rows, order_rows, placed_positions

        wanted = set(customer_ids)
        users, orders, _ = self._files
        chosen = {cid: u for cid, u in users.items() if cid in wanted}
        rows: dict[str, list[dict[str, Any]]] = {}
        rows.update(customer_rows(chosen))
        rows.update(order_rows({oid: o for oid, o in orders.items() if o["user_id"] in wanted},
                               placed_positions(chosen)))
        return rows


def restore_customers(driver: Driver, dataset: Dataset, customer_ids: Iterable[str]) -> None:
    """Put these customers' subgraphs back exactly as the dataset has them (see the module doc)."""
    from devstack.seed.loader import _WRITES, _write_rows  # the loader's own statements: no drift

    ids = sorted(set(customer_ids))
    if not ids:
        return
    started = time.perf_counter()
    rows = dataset.rows_for(ids)
    driver.execute_query(_DELETE_CUSTOMERS, customer_ids=ids)
    statements = dict(_WRITES)
    for key in CUSTOMER_WRITES:
        _write_rows(driver, "neo4j", statements[key], rows[key])
    dataset.restored.append((time.perf_counter() - started) * 1000)


def restore_changed(driver: Driver, dataset: Dataset) -> list[str]:
    """Restore every customer changed since the last restore; the ids restored."""
    changed = changed_customers(driver)
    restore_customers(driver, dataset, changed)
    return changed
