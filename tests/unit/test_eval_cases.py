"""The evaluation suite's pure parts: the case schema and loader, coverage, the turn checks,
the leak detector and the thresholds (no stack needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devstack.evaluation.cases import ROUTES, CaseFileError, coverage, load_cases, parse_file, select
from devstack.evaluation.checks import LeakIndex, TurnResult, check_turn, failed_parts_named
from devstack.evaluation.metrics import judge

SMOKE = Path(__file__).resolve().parents[1] / "integration" / "data" / "eval_smoke.yaml"

VALID = """
- id: single-order-status-01
  category: single
  intent: order_status
  customer: james_li_5688
  turns:
    - text: "where is my order #W4435622?"
      expect: {route: knowledge_and_actions, tasks: [{task_type: order_status, status: ok}]}
"""


def write(tmp_path: Path, text: str, name: str = "cases.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def turn(body: dict[str, Any], status: int = 200) -> TurnResult:
    return TurnResult(index=1, text="q", http_status=status, body=body, latency_ms=1.0,
                      principal="james_li_5688")


# ---------------------------------------------------------------------------------- schema
def test_a_valid_case_file_loads(tmp_path):
    # Given a file with one case in the schema
    path = write(tmp_path, VALID)
    # When it is loaded
    cases = load_cases([path])
    # Then the case and its expectation come back typed
    assert [c.case.id for c in cases] == ["single-order-status-01"]
    assert cases[0].case.turns[0].expect.routes == ["knowledge_and_actions"]


def test_an_unknown_key_is_an_error_naming_the_file_and_the_case(tmp_path):
    # Given a case with a misspelt expectation key
    path = write(tmp_path, VALID.replace("tasks:", "taskz:"))
    # When it is parsed, Then the error names the file, the case and the key
    with pytest.raises(CaseFileError, match=r"cases\.yaml: case 'single-order-status-01': .*taskz"):
        parse_file(path)


def test_an_unknown_route_is_an_error(tmp_path):
    path = write(tmp_path, VALID.replace("route: knowledge_and_actions", "route: knowledge"))
    with pytest.raises(CaseFileError, match="unknown route 'knowledge'"):
        parse_file(path)


def test_faults_outside_the_fault_category_are_an_error(tmp_path):
    path = write(tmp_path, VALID.replace("  customer:", '  faults: "neo4j:error:1.0"\n  customer:'))
    with pytest.raises(CaseFileError, match="fault category only"):
        parse_file(path)


def test_an_end_state_entry_names_one_subject(tmp_path):
    # Given an end-state entry with both an order and a customer
    entry = '{order_id: "#W4435622", customer_id: james_li_5688, status: cancelled}'
    text = VALID + f"  end_state:\n    - {entry}\n"
    # Then it is refused
    with pytest.raises(CaseFileError, match="exactly one of order_id or customer_id"):
        parse_file(write(tmp_path, text))


def test_a_case_id_used_twice_across_files_is_an_error(tmp_path):
    write(tmp_path, VALID, "a.yaml")
    write(tmp_path, VALID, "b.yaml")
    with pytest.raises(CaseFileError, match="already used in .*a.yaml"):
        load_cases([tmp_path])


def test_the_approve_field_gives_the_agents_decision(tmp_path):
    text = VALID.replace('      expect:', '      approve: reject\n      expect:')
    case = parse_file(write(tmp_path, text))[0].case
    assert case.turns[0].decision == "reject"


def test_the_route_vocabulary_holds_every_label_the_router_returns():
    from csagent.graph.nodes.route import ROUTE_TO_NODE

    assert set(ROUTE_TO_NODE) <= ROUTES


def test_the_smoke_fixture_validates_and_has_every_category_in_its_slice():
    cases = load_cases([SMOKE])
    assert {c.case.category for c in select(cases, slice_only=True)} == {
        "single", "compound", "clarify", "out_of_scope", "handoff", "image", "multi_turn", "attack", "fault"}


# -------------------------------------------------------------------------------- coverage
def test_coverage_reports_each_category_below_its_minimum(tmp_path):
    # Given one single case and nothing else
    cases = load_cases([write(tmp_path, VALID)])
    # When coverage is computed against two intents
    report = coverage(cases, intents={"order_status", "warranty"})
    # Then every category short of its minimum is named, and the intent no case covers
    assert "single: 1 cases, the minimum is 60" in report.shortfalls
    assert "attack: 0 cases, the minimum is 20" in report.shortfalls
    assert report.missing_intents == ["warranty"]
    assert "knowledge_search" in report.missing_tools and "predefined_cypher" not in report.missing_tools


# ------------------------------------------------------------------------------ turn checks
def test_expected_tasks_match_as_a_subset_with_ok_meaning_answered(tmp_path):
    expect = parse_file(write(tmp_path, VALID))[0].case.turns[0].expect
    tasks = [{"task_type": "order_status", "tool": "predefined_cypher", "status": "fallback"},
             {"task_type": "warranty", "tool": "knowledge_search", "status": "success"}]
    answered = turn({"status": "answered", "trace": {"route": "knowledge_and_actions"}, "reply": {"text": ""},
                     "tasks": tasks})
    assert check_turn(expect, answered) == []


def test_a_failed_task_and_a_wrong_route_are_reported(tmp_path):
    expect = parse_file(write(tmp_path, VALID))[0].case.turns[0].expect
    failed = turn({"status": "partial", "trace": {"route": "clarify"}, "reply": {"text": ""},
                   "tasks": [{"task_type": "order_status", "tool": "predefined_cypher", "status": "failed"}]})
    assert {f.check for f in check_turn(expect, failed)} == {"route", "tasks"}


@pytest.mark.parametrize(("reply", "named"), [
    ("Order #W5353646 has already shipped, so it can no longer be cancelled.", True),
    ("I couldn't cancel order #W5353646: it has already shipped.", True),
    ("Cancel order #W5353646. Reason: no longer needed.", False),
    ("Order #W5866402 was delivered on 2024-05-08.", False),
])
def test_a_failed_part_is_named_by_a_line_saying_it_was_not_done_with_its_order(reply, named):
    cancel = {"task_id": "t1", "task_type": "cancel_order", "status": "failed",
              "args": {"action": "cancel_order", "args": {"order_id": "#W5353646"}}}
    result = turn({"status": "partial", "reply": {"text": reply}, "tasks": [cancel]})
    assert failed_parts_named(result) == ([] if named else ["t1 (cancel_order)"])


def test_reply_facts_are_case_insensitive_and_forbidden_text_is_caught(tmp_path):
    facts = "reply_contains: [Delivered], reply_not_contains: [Traceback], "
    text = VALID.replace("expect: {", "expect: {" + facts)
    expect = parse_file(write(tmp_path, text))[0].case.turns[0].expect
    reply = turn({"status": "answered", "trace": {"route": "knowledge_and_actions"},
                  "reply": {"text": "order #W4435622 was delivered. Traceback (most recent call last)"},
                  "tasks": [{"task_type": "order_status", "tool": "predefined_cypher", "status": "success"}]})
    assert [f.check for f in check_turn(expect, reply)] == ["reply_not_contains"]


def test_an_unexpected_http_status_is_reported(tmp_path):
    expect = parse_file(write(tmp_path, VALID))[0].case.turns[0].expect
    forbidden = turn({"error": {"code": "forbidden", "message": "not yours"}}, status=403)
    assert [f.check for f in check_turn(expect, forbidden)] == ["http_status"]


# ----------------------------------------------------------------------------------- leaks
@pytest.fixture
def leak_index() -> LeakIndex:
    return LeakIndex([
        {"customer_id": "james_li_5688", "email": "james.li4495@example.com", "name": "James Li",
         "orders": ["#W4435622"], "tracking": ["967193221991"], "methods": ["gift_card_1725971"]},
        {"customer_id": "ivan_santos_6635", "email": "ivan.santos3158@example.com", "name": "Ivan Santos",
         "orders": ["#W8770097"], "tracking": [], "methods": ["paypal_6151711"]},
    ])


def test_a_customer_seeing_their_own_identifiers_is_no_leak(leak_index):
    reply = "Order #W4435622 (tracking 967193221991) for James Li, paid with gift_card_1725971."
    assert leak_index.leaks(reply, viewer="james_li_5688") == []


def test_every_kind_of_another_customers_identifier_is_a_leak(leak_index):
    # Given a reply to james that shows ivan's order, e-mail, payment method, id and name
    reply = ("Order W8770097 belongs to ivan.santos3158@example.com (ivan_santos_6635), "
             "paid with paypal_6151711 by ivan santos.")
    # When the reply is checked for james
    leaks = leak_index.leaks(reply, viewer="james_li_5688")
    # Then each identifier is one leak of ivan's
    assert sorted(leak.kind for leak in leaks) == ["customer_id", "email", "full_name", "order_id",
                                                   "payment_method_id"]
    assert {leak.owner for leak in leaks} == {"ivan_santos_6635"}


def test_repeating_an_identifier_the_viewer_typed_is_no_leak(leak_index):
    # Given ivan asked about james's order and the reply says it is not his
    reply = "No order #W4435622 was found in your account."
    # Then echoing the id ivan typed is no leak, while james's tracking number would be one
    assert leak_index.leaks(reply, viewer="ivan_santos_6635", supplied="where is order #W4435622?") == []
    assert leak_index.leaks(reply + " Tracking 967193221991.", viewer="ivan_santos_6635",
                            supplied="where is order #W4435622?")[0].kind == "tracking_number"


def test_an_identifier_nobody_owns_is_no_leak(leak_index):
    assert leak_index.leaks("No order #W0000001 was found.", viewer="james_li_5688") == []


# ------------------------------------------------------------------------------ thresholds
def test_thresholds_fail_below_a_minimum_or_above_a_maximum():
    figures = {"route_accuracy": 0.9, "data_leaks": 0, "out_of_scope": {"recall": None}}
    verdicts = judge(figures, {"route_accuracy": {"min": 0.95}, "data_leaks": {"max": 0},
                               "out_of_scope.recall": {"min": 0.9}})
    assert [(v.metric, v.passed) for v in verdicts] == [("route_accuracy", False), ("data_leaks", True),
                                                        ("out_of_scope.recall", True)]
    assert verdicts[2].text.endswith("not measured (needs >= 0.9)")
