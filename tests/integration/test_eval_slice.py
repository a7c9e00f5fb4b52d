"""The CI slice of the evaluation suite (issue 7): about 30 cases over every category, run
through the real HTTP API on the tests' own stack (Neo4j on NEO4J_URI, moto on
AWS_ENDPOINT_URL) by the same runner as `make eval`, judged by the same thresholds file.

One test per threshold, so a failure says which figure broke (and lists the failing cases);
one test that the case files validate and meet the issue's minimums; and the runner's own
mechanics on a small fixture of tau-retail cases (tests/integration/data/eval_smoke.yaml).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from devstack.evaluation.cases import CASES_DIR, coverage, load_cases
from devstack.evaluation.runner import THRESHOLDS, Options, Outcome, evaluate
from devstack.evaluation.store import Dataset, changed_customers, restore_changed

pytestmark = pytest.mark.integration
SMOKE = Path(__file__).resolve().parent / "data" / "eval_smoke.yaml"
THRESHOLD_METRICS = sorted(yaml.safe_load(THRESHOLDS.read_text()))


def run(neo4j_driver: Any, tau_data: Path, **options: Any) -> Outcome:
    """The runner on the session's seeded store (no full reseed: `tau_store` did it; each case
    restores what it changed), no report files, no knowledge recall (it has its own tests)."""
    return evaluate(neo4j_driver, Options(data_dir=tau_data, reset=False, out_dir=None, knowledge=False,
                                          **options))


def failing(outcome: Outcome) -> str:
    return "\n".join(f"{r.case_id}: " + "; ".join(f"turn {f.turn} {f.check}: {f.detail}" for f in r.failures)
                     + "".join(f"; LEAK {leak.kind} {leak.value}" for leak in r.leaks)
                     for r in outcome.results if not r.passed)


@pytest.fixture(scope="module")
def slice_run(tau_store: Any, moto_endpoint: str, neo4j_driver: Any, tau_data: Path) -> Outcome:
    if not list(CASES_DIR.glob("*.yaml")):
        pytest.fail(f"no case files in {CASES_DIR}")
    return run(neo4j_driver, tau_data, slice_only=True)


@pytest.fixture(scope="module")
def smoke_run(tau_store: Any, moto_endpoint: str, neo4j_driver: Any, tau_data: Path) -> Outcome:
    return run(neo4j_driver, tau_data, paths=(SMOKE,))


# ------------------------------------------------------------------------------ the slice
@pytest.mark.parametrize("metric", THRESHOLD_METRICS)
def test_the_slice_meets_the_threshold(slice_run, metric):
    # Given the slice run through the HTTP API
    # Then each threshold of infra/eval/thresholds.yaml holds
    verdicts = [v for v in slice_run.verdicts if v.metric == metric]
    assert verdicts and all(v.value is not None for v in verdicts), f"{metric} was not measured"
    assert all(v.passed for v in verdicts), (
        "; ".join(v.text for v in verdicts) + "\nfailing cases:\n" + failing(slice_run))


def test_the_slice_covers_every_category(slice_run):
    categories = set(slice_run.report["figures"]["by_category"])
    assert categories == {"single", "compound", "clarify", "out_of_scope", "handoff", "image", "multi_turn",
                          "attack", "fault"}


def test_no_case_of_the_slice_breaks_the_runner(slice_run):
    errors = [f"{r.case_id}: {r.error}" for r in slice_run.results if r.error]
    assert errors == []


def test_the_case_files_validate_and_meet_the_issues_minimums():
    # Given the suite in infra/eval/cases
    cases = load_cases([CASES_DIR])
    # Then every category has its minimum number of cases, a slice case, and single requests
    # cover every intent and tool
    assert coverage(cases).shortfalls == []


# ---------------------------------------------------------------------- runner mechanics
def test_the_runner_passes_every_smoke_case(smoke_run):
    # Given a handful of tau-retail cases, one or more per category
    # Then each passes end to end through the HTTP API
    assert [r.case_id for r in smoke_run.results if not r.passed] == [], failing(smoke_run)


def test_a_confirmed_cancellation_is_restored_after_its_case(smoke_run, neo4j_driver):
    # Given the smoke run cancelled ivan's order #W5183325 (its end state says so)
    cancel = next(r for r in smoke_run.results if r.case_id == "smoke-multi-turn-cancel")
    assert cancel.end_state_ok and cancel.restored == ["ivan_santos_6635"]
    # Then the store holds the order as the dataset has it again, without the audit event
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (o:Order {order_id: '#W5183325'}) OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction) "
        "RETURN o.status AS status, count(t) AS transactions, COUNT { (o)-[:HAS_AUDIT]->() } AS audits")
    assert (records[0]["status"], records[0]["transactions"], records[0]["audits"]) == ("pending", 1, 0)


SUBGRAPH = """
MATCH (c:Customer {customer_id: $customer_id})-[r1]->(n)
OPTIONAL MATCH (n)-[r2]->(m) WHERE NOT m:Variant
OPTIONAL MATCH (m)-[r3]->(k) WHERE NOT k:Variant
RETURN collect(DISTINCT [type(r1), properties(n)]) + collect(DISTINCT [type(r2), properties(m)])
       + collect(DISTINCT [type(r3), properties(k)]) AS parts, properties(c) AS customer
"""


def subgraph(driver: Any, customer_id: str) -> tuple[Any, list[str]]:
    records, _, _ = driver.execute_query(SUBGRAPH, customer_id=customer_id)
    return records[0]["customer"], sorted(repr(part) for part in records[0]["parts"] if part[1] is not None)


def test_restoring_a_changed_customer_gives_back_exactly_the_seeded_subgraph(tau_store, neo4j_driver,
                                                                             tau_data, reseed_tau):
    # Given ivan's subgraph as seeded
    before = subgraph(neo4j_driver, "ivan_santos_6635")
    # And a write as a customer action makes it: status, refund transaction, address, audit event
    neo4j_driver.execute_query("""
        MATCH (c:Customer {customer_id: 'ivan_santos_6635'})-[:PLACED]->(o:Order {order_id: '#W5183325'})
        MATCH (c)-[:HAS_DEFAULT_ADDRESS]->(a:Address)
        MATCH (c)-[:HAS_PAYMENT_METHOD]->(m:PaymentMethod)
        SET o.status = 'cancelled', a.zip = '00000'
        CREATE (o)-[:HAS_TRANSACTION]->(t:Transaction {transaction_id: '#W5183325/9', type: 'refund'})
        CREATE (t)-[:USING]->(m)
        CREATE (c)-[:HAS_AUDIT]->(e:AuditEvent {audit_id: 'eval-test', idempotency_key: 'eval-test'})
        CREATE (o)-[:HAS_AUDIT]->(e)
        """)
    assert changed_customers(neo4j_driver) == ["ivan_santos_6635"]
    # When the changed customers are restored from the dataset
    restored = restore_changed(neo4j_driver, Dataset(tau_data))
    # Then ivan's subgraph is the seeded one again, and nobody is left changed
    assert restored == ["ivan_santos_6635"]
    assert subgraph(neo4j_driver, "ivan_santos_6635") == before
    assert changed_customers(neo4j_driver) == []


def test_an_approval_turn_is_decided_by_an_agent(smoke_run):
    # Given a refund over the threshold, confirmed by the customer
    approval = next(r for r in smoke_run.results if r.case_id == "smoke-multi-turn-approval")
    decided = approval.turns[-1].approval
    # Then the runner approved it as an agent and the paused turn resumed
    assert decided is not None and decided["status"] == "approved" and decided["resumed"] is True


def test_each_turn_is_metered(smoke_run):
    figures = smoke_run.report["figures"]
    # Then every answered turn wrote its checkpoint (DynamoDB writes and bytes counted)
    assert figures["dynamodb_writes_per_turn"]["median"] >= 3
    assert figures["checkpoint_bytes_per_turn"]["median"] > 0
    assert figures["latency_ms"]["p50"] is not None
