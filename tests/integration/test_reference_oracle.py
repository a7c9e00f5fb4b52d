"""The seven writes against the benchmark's own results: tasks of tau-retail's train split
(`../shared/data/tau-retail/tasks_train.json`) replayed through OUR tool on the real Neo4j, the
store exported, and every record of the task's `expected_changes` (computed with the benchmark's
reference tools) compared with ours, amounts to the cent.

Each task's reference tool calls are mapped to our actions (`ACTIONS`) and run through
`customer_actions.run` - propose, then execute the proposal (with an approver when a refund is
over the threshold: the approval step has tests of its own) - as the task's customer. The
reference tools themselves (imported from ../shared as an oracle, never copied) replay the task
on the dataset to tell which calls they refuse; ours must refuse exactly those, and write
nothing for them.

Tasks of different customers touch disjoint records, so they run in batches of distinct
customers: one seed and one export per batch. Records no task of a batch changes must come out
as seeded. The sample is deterministic (`sample`): the first tasks by id of every write kind,
tasks with three or more write kinds, and tasks the reference refuses a call of.
`ORACLE_TASKS=all` replays all 520 tasks instead.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from actions_support import action_settings, execute, propose

from csagent.actions.queries import ensure_audit_schema
from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.domain.models import TaskStatus
from devstack.export import export_store
from devstack.tau import KIND

pytestmark = pytest.mark.integration

TAU = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau-retail"
ACTIONS: Mapping[str, str] = KIND  # the benchmark's tool names -> our action names (make tau's)
REFERENCE_TOOLS: Mapping[str, str] = {
    "cancel_pending_order": "CancelPendingOrder",
    "return_delivered_order_items": "ReturnDeliveredOrderItems",
    "exchange_delivered_order_items": "ExchangeDeliveredOrderItems",
    "modify_pending_order_items": "ModifyPendingOrderItems",
    "modify_pending_order_payment": "ModifyPendingOrderPayment",
    "modify_pending_order_address": "ModifyPendingOrderAddress",
    "modify_user_address": "ModifyUserAddress",
}
ADDRESS_KEYS = ("address1", "address2", "city", "state", "zip", "country")
PER_KIND, MULTI, REFUSED = 6, 8, 4


# ------------------------------------------------------------------------------- the tasks
def load_tasks() -> list[dict[str, Any]]:
    path = TAU / "tasks_train.json"
    return json.loads(path.read_text()) if path.exists() else []


def writes(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The task's reference calls that change the store, in order."""
    return [call for call in task["actions"] if call["name"] in ACTIONS]


def sample(tasks: Sequence[dict[str, Any]], refused: set[str]) -> list[dict[str, Any]]:
    """The first `PER_KIND` tasks by id of every write kind, the first `MULTI` with three or more
    kinds, and the first `REFUSED` with a call the reference refuses."""
    ordered = sorted(tasks, key=lambda t: t["id"])
    chosen: dict[str, dict[str, Any]] = {}

    def take(pick: Any, count: int) -> None:
        for task in [t for t in ordered if pick(t) and t["id"] not in chosen][:count]:
            chosen[task["id"]] = task

    for kind in ACTIONS:
        take(lambda t, k=kind: any(c["name"] == k for c in writes(t)), PER_KIND)
    take(lambda t: len({c["name"] for c in writes(t)}) >= 3, MULTI)
    take(lambda t: t["id"] in refused, REFUSED)
    return sorted(chosen.values(), key=lambda t: t["id"])


def our_args(name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A reference call's arguments as our action takes them (addresses as one object; the
    customer comes from the session, never from the arguments)."""
    if name in ("modify_pending_order_address", "modify_user_address"):
        address = {key: kwargs[key] for key in ADDRESS_KEYS}
        return {"address": address, **({"order_id": kwargs["order_id"]} if "order_id" in kwargs else {})}
    return dict(kwargs)


def _reference() -> Any:
    sys.path.insert(0, str(TAU))
    try:
        return importlib.import_module("reference.tools")
    finally:
        sys.path.remove(str(TAU))


def reference_refusals(task: Mapping[str, Any], dataset: Mapping[str, Any], tools: Any) -> list[bool]:
    """For each write of the task, whether the reference tool refuses it, replayed in order on a
    copy of the records the task can touch (its orders and their customers; the catalogue is
    only read)."""
    order_ids = {call["kwargs"]["order_id"] for call in writes(task) if "order_id" in call["kwargs"]}
    orders = {oid: copy.deepcopy(dataset["orders"][oid]) for oid in order_ids if oid in dataset["orders"]}
    user_ids = {task["user_id"]} | {order["user_id"] for order in orders.values()}
    data = {"orders": orders, "products": dataset["products"],
            "users": {uid: copy.deepcopy(dataset["users"][uid])
                      for uid in user_ids if uid in dataset["users"]}}
    return [getattr(tools, REFERENCE_TOOLS[call["name"]]).invoke(data, **call["kwargs"]).startswith("Error")
            for call in writes(task)]


def batches(tasks: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Tasks in batches of distinct customers (each task goes into the first batch without its
    customer), so a batch's tasks touch disjoint records."""
    out: list[list[dict[str, Any]]] = []
    for task in tasks:
        batch = next((b for b in out if task["user_id"] not in {t["user_id"] for t in b}), None)
        if batch is None:
            out.append(batch := [])
        batch.append(task)
    return out


def cents(value: Any) -> Any:
    """Floats rounded to the cent, everywhere in a record."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return round(float(value), 2)
    if isinstance(value, Mapping):
        return {k: cents(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cents(v) for v in value]
    return value


# ------------------------------------------------------------------------------ replaying
@dataclass
class Outcome:
    """What replaying one task gave: a line per write that went otherwise than the reference
    (refused by one side only), and a line per record that differs from `expected_changes`."""

    task_id: str
    calls: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)


def replay(task: Mapping[str, Any], refusals: Sequence[bool], graph: Neo4jGraph, settings: Any) -> Outcome:
    outcome = Outcome(task["id"])
    for call, refused in zip(writes(task), refusals, strict=True):
        action = ACTIONS[call["name"]]
        proposal = propose(graph, settings, task["user_id"], action, our_args(call["name"], call["kwargs"]))
        result = proposal
        if proposal.status is TaskStatus.SUCCESS and proposal.data is not None:
            if refused:
                outcome.calls.append(f"{action} {call['kwargs']}: proposed, the reference refuses it")
                continue
            confirmed = proposal.data.proposal.model_dump(mode="json")
            result = execute(graph, settings, task["user_id"], confirmed,
                             approved_by="oracle" if confirmed.get("requires_approval") else None)
        ok = result.status is TaskStatus.SUCCESS
        if ok == refused:
            said = result.error.message if result.error else "done"
            outcome.calls.append(f"{action} {call['kwargs']}: {'refused' if refused else 'failed'} "
                                 f"by {'the reference' if refused else 'us'} ({said})")
    return outcome


def compare(task: Mapping[str, Any], exported: Mapping[str, Any], outcome: Outcome) -> None:
    for kind in ("users", "orders"):
        for key, expected in task["expected_changes"].get(kind, {}).items():
            ours = exported[kind].get(key)
            if cents(ours) != cents(expected):
                outcome.records.append(f"{kind}[{key}]:\n  expected {json.dumps(expected, sort_keys=True)}\n"
                                       f"  ours     {json.dumps(ours, sort_keys=True)}")


@dataclass
class OracleRun:
    outcomes: dict[str, Outcome]
    untouched_differences: list[str]


TASKS = load_tasks()
DATASET = {name: json.loads((TAU / f"{name}.json").read_text()) for name in ("users", "orders", "products")
           } if TASKS else {}
TOOLS = _reference() if TASKS else None
REFUSALS = {t["id"]: reference_refusals(t, DATASET, TOOLS) for t in TASKS}
CHOSEN = TASKS if os.environ.get("ORACLE_TASKS") == "all" else sample(
    TASKS, {task_id for task_id, refused in REFUSALS.items() if any(refused)})
SAMPLE_IDS = [task["id"] for task in CHOSEN]


@pytest.fixture(scope="module")
def oracle(neo4j_driver: Any, tau_data: Path, tau_store: Any, moto_endpoint: str,
           reseed_module: None) -> OracleRun:
    """Every chosen task replayed, batch by batch: seed, replay, export, compare."""
    from devstack.seed.loader import seed_store

    dataset, refusals, chosen = DATASET, REFUSALS, CHOSEN
    graph = Neo4jGraph(neo4j_driver)
    settings = action_settings(moto_endpoint)
    outcomes: dict[str, Outcome] = {}
    untouched: list[str] = []
    for batch in batches(chosen):
        seed_store(neo4j_driver, tau_data)
        ensure_audit_schema(graph)
        for task in batch:
            outcomes[task["id"]] = replay(task, refusals[task["id"]], graph, settings)
        exported = export_store(neo4j_driver)
        for task in batch:
            compare(task, exported, outcomes[task["id"]])
        changed = {(kind, key) for task in batch for kind in ("users", "orders")
                   for key in task["expected_changes"].get(kind, {})}
        untouched += [f"{kind}[{key}]" for kind in ("users", "orders", "products")
                      for key, record in dataset[kind].items()
                      if (kind, key) not in changed and cents(exported[kind].get(key)) != cents(record)]
    return OracleRun(outcomes, untouched)


@pytest.fixture(scope="module")
def reseed_module(neo4j_driver: Any, tau_data: Path) -> Iterator[None]:
    """The module changes the store: restore tau-retail (and the knowledge base's links) after."""
    yield
    from devstack.seed.knowledge import load_knowledge
    from devstack.seed.loader import seed_store

    seed_store(neo4j_driver, tau_data)
    load_knowledge(neo4j_driver)
    neo4j_driver.execute_query("MATCH (e:AuditEvent) DETACH DELETE e")


# ---------------------------------------------------------------------------------- tests
def test_the_sample_covers_every_write_kind_and_multi_action_tasks() -> None:
    # Given the chosen tasks
    chosen = [t for t in TASKS if t["id"] in set(SAMPLE_IDS)]
    assert chosen, f"tasks_train.json is missing at {TAU}"

    # Then at least five tasks of each of the six kinds the train split holds, and multi-action ones
    kinds = {kind: sum(1 for t in chosen if any(c["name"] == kind for c in writes(t))) for kind in ACTIONS}
    assert all(count >= 5 for kind, count in kinds.items() if kind != "modify_user_address"), kinds
    assert sum(1 for t in chosen if len({c["name"] for c in writes(t)}) >= 3) >= 5


@pytest.mark.parametrize("task_id", SAMPLE_IDS)
def test_the_store_after_a_task_equals_the_reference(oracle: OracleRun, task_id: str) -> None:
    # When the task's reference calls ran through our tool (the oracle fixture)
    outcome = oracle.outcomes[task_id]

    # Then we refused exactly the calls the reference refuses, and every changed record is the reference's
    assert outcome.calls == [], "\n".join(outcome.calls)
    assert outcome.records == [], "\n".join(outcome.records)


def test_records_no_task_changes_stay_as_seeded(oracle: OracleRun) -> None:
    # Then nothing beyond the tasks' own records was written
    assert oracle.untouched_differences == []
