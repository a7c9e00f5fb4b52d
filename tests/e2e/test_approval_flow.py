"""A refund over the approval threshold, end to end through the router handler: the customer
confirms, the graph pauses (interrupt) with the turn in the DynamoDB checkpoint, an agent's
decision — handled by a brand-new process — resumes it once, and the customer's next read
sees the outcome. Store: tau-retail (ivan_santos_6635's pending order #W8770097, $544.29)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from router_events import ROOT, body, load_event, with_body, with_session

pytestmark = pytest.mark.e2e
IVAN, ORDER = "ivan_santos_6635", "#W8770097"


def as_ivan(event: dict[str, Any]) -> dict[str, Any]:
    event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:customer_id"] = IVAN
    return event


def decision_event(approval_id: str, decision: str = "approve") -> dict[str, Any]:
    event = with_body(load_event("approval_decision.json"), {"decision": decision})
    return json.loads(json.dumps(event).replace("00000000000000000000000000000000", approval_id))


def in_a_new_process(event: dict[str, Any]) -> dict[str, Any]:
    app_path = str(ROOT / "functions/router/app.py")
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('router_app', {app_path!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "class C:\n    function_name = 'RouterFunction'\n    memory_limit_in_mb = 1024\n"
        "    invoked_function_arn = 'arn:aws:lambda:us-east-1:123456789012:function:RouterFunction'\n"
        "    aws_request_id = 'agent'\n    def get_remaining_time_in_millis(self): return 29000\n"
        "print(json.dumps(m.handler(json.loads(sys.stdin.read()), C())))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(event), capture_output=True,
                          text=True, env=dict(os.environ, AUTH_MODE="jwt"), timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_large_refund_waits_for_an_agent_and_finishes_once_approved(router_handler, session_id,
                                                                       reseed_tau, neo4j_driver):
    # Given ivan asks to cancel his $544.29 pending order and confirms
    ask = as_ivan(with_session(load_event("message.json"), session_id))
    first = body(router_handler(with_body(ask, {"text": f"cancel order {ORDER}, I ordered it by mistake"})))
    assert first["status"] == "awaiting_confirmation"
    paused = body(router_handler(with_body(ask, {"text": "yes"})))
    # Then the turn pauses for a person, and nothing is cancelled yet
    assert paused["status"] == "awaiting_approval"
    approval_id = paused["trace"]["approval_id"]
    records, _, _ = neo4j_driver.execute_query("MATCH (o:Order {order_id: $o}) RETURN o.status AS s", o=ORDER)
    assert records[0]["s"] == "pending"
    # When an agent approves, in another process (resuming from the DynamoDB checkpoint)
    decided = in_a_new_process(decision_event(approval_id))
    # Then the paused turn finished: the order is cancelled, and the customer's next read says so
    assert decided["statusCode"] == 200, decided["body"]
    outcome = json.loads(decided["body"])
    assert outcome["resumed"] is True and outcome["approval"]["status"] == "approved"
    records, _, _ = neo4j_driver.execute_query("MATCH (o:Order {order_id: $o}) RETURN o.status AS s", o=ORDER)
    assert records[0]["s"] == "cancelled"
    history = body(router_handler(as_ivan(with_session(load_event("session_get.json"), session_id))))
    assert f"Order {ORDER} is cancelled" in history["messages"][-1]["text"]
    # And approving twice changes nothing
    again = json.loads(router_handler(decision_event(approval_id))["body"])
    assert again["resumed"] is False and again["approval"]["status"] == "approved"
    audits, _, _ = neo4j_driver.execute_query(
        "MATCH (:Order {order_id: $o})-[:HAS_AUDIT]->(a:AuditEvent) RETURN count(a) AS n", o=ORDER)
    assert audits[0]["n"] == 1


def test_a_customer_cannot_decide_an_approval(router_handler):
    # Given a customer's token (no agent group) on the agent route
    event = as_ivan(decision_event("0" * 32))
    event["requestContext"]["authorizer"]["jwt"]["claims"].pop("cognito:groups")
    # Then it is forbidden
    response = router_handler(event)
    assert response["statusCode"] == 403


def test_an_expired_approval_is_reported_to_the_customer(router_handler, session_id, reseed_tau,
                                                         monkeypatch, neo4j_driver):
    import time

    from csagent import runtime

    # Given approvals that expire after one second
    monkeypatch.setenv("APPROVAL_TTL_S", "1")
    runtime.reset()
    ask = as_ivan(with_session(load_event("message.json"), session_id))
    router_handler(with_body(ask, {"text": f"cancel order {ORDER}, I ordered it by mistake"}))
    assert body(router_handler(with_body(ask, {"text": "yes"})))["status"] == "awaiting_approval"
    # When nobody decides in time and the customer writes again
    time.sleep(1.5)
    later = body(router_handler(with_body(ask, {"text": "any news?"})))
    # Then the customer is told the review ran out of time, and nothing was changed
    reply = later["reply"]["text"]
    assert "ran out of time" in reply and "nothing has been changed" in reply
    records, _, _ = neo4j_driver.execute_query("MATCH (o:Order {order_id: $o}) RETURN o.status AS s", o=ORDER)
    assert records[0]["s"] == "pending"
