"""The router Lambda handler end to end: API Gateway event → FastAPI → LangGraph → Neo4j →
DynamoDB checkpoint (moto) → reply. Events are the files in events/router/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from router_events import ROOT, body, load_event, with_body, with_session

pytestmark = pytest.mark.e2e


def test_healthz_reports_neo4j_and_dynamodb_reachable(router_handler):
    # Given the local stack is up
    # When API Gateway calls GET /healthz
    response = router_handler(load_event("healthz.json"))
    # Then both dependencies are reported reachable
    assert response["statusCode"] == 200
    assert body(response) == {"status": "ok", "checks": {"neo4j": True, "dynamodb": True}}


def test_order_status_question_is_answered_from_neo4j(router_handler, session_id):
    # Given james_li_5688 (JWT claims in the event) owns order #W4435622, delivered, tracking 967193221991
    event = with_session(load_event("message.json"), session_id)
    # When he asks where the order is
    response = router_handler(event)
    # Then the reply carries the order's real status and tracking number
    assert response["statusCode"] == 200, response["body"]
    out = body(response)
    assert out["status"] == "answered"
    assert out["turn"] == 1
    assert "#W4435622" in out["reply"]["text"]
    assert "delivered" in out["reply"]["text"].lower()
    assert "967193221991" in out["reply"]["text"]
    assert [(t["task_type"], t["status"]) for t in out["tasks"]] == [("order_status", "success")]


def test_the_turn_is_checkpointed_in_dynamodb(router_handler, session_id):
    # Given a turn on a fresh session
    router_handler(with_session(load_event("message.json"), session_id))
    # When we look in the checkpoints table (moto)
    client = boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    items = client.scan(TableName="csagent-local-checkpoints")["Items"]
    # Then the session's thread has checkpoint items
    assert any(session_id in item["PK"]["S"] for item in items)


def test_a_second_process_continues_the_same_session(router_handler, session_id):
    # Given a first turn answered in this process
    first = body(router_handler(with_session(load_event("message.json"), session_id)))
    assert first["turn"] == 1
    # When a brand-new Python process handles the next message on the same session
    event = with_body(with_session(load_event("message.json"), session_id), {"text": "thanks!"})
    app_path = str(ROOT / "functions/router/app.py")
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('router_app', {app_path!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "class C:\n    function_name = 'RouterFunction'\n    memory_limit_in_mb = 1024\n"
        "    invoked_function_arn = 'arn:aws:lambda:us-east-1:123456789012:function:RouterFunction'\n"
        "    aws_request_id = 'p2'\n    def get_remaining_time_in_millis(self): return 29000\n"
        "print(json.dumps(m.handler(json.loads(sys.stdin.read()), C())))\n"
    )
    env = dict(os.environ, AUTH_MODE="jwt")
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(event), capture_output=True,
                          text=True, env=env, timeout=120, cwd=Path(ROOT))
    assert done.returncode == 0, done.stderr[-2000:]
    second = json.loads(json.loads(done.stdout.strip().splitlines()[-1])["body"])
    # Then it sees the earlier turn: the turn counter continues and the history holds both turns
    assert second["turn"] == 2
    history = router_handler(with_session(load_event("session_get.json"), session_id))
    messages = body(history)["messages"]
    assert [m["role"] for m in messages] == ["customer", "assistant", "customer", "assistant"]
    assert messages[2]["text"] == "thanks!"


@pytest.mark.parametrize(("event_file", "status", "code"), [
    ("message_malformed_json.json", 400, "malformed_json"),
    ("message_oversized.json", 422, "text_too_long"),
    ("message_no_auth.json", 401, "unauthenticated"),
])
def test_bad_requests_get_a_precise_json_error(router_handler, session_id, event_file, status, code):
    # Given a malformed, oversized or unauthenticated request
    event = with_session(load_event(event_file), session_id)
    # When the handler receives it
    response = router_handler(event)
    # Then it answers with the right status and a JSON error body, never a trace
    assert response["statusCode"] == status
    error = body(response)["error"]
    assert error["code"] == code
    assert "Traceback" not in response["body"]


def test_another_customers_session_is_forbidden(router_handler, session_id):
    # Given a session started by its owner
    router_handler(with_session(load_event("message.json"), session_id))
    # When a different customer posts to the same session id
    response = router_handler(with_session(load_event("message_other_customer.json"), session_id))
    # Then the request is refused with 403 and no data of the owner is returned
    assert response["statusCode"] == 403
    assert body(response)["error"]["code"] == "forbidden"
    assert "#W4435622" not in response["body"]


def test_a_message_while_the_session_is_busy_gets_409_and_changes_nothing(router_handler, session_id):
    # Given a first turn, then another turn of the same session still running (its lease held)
    from csagent import runtime

    router_handler(with_session(load_event("message.json"), session_id))
    service = runtime.conversation_service()
    config = {"configurable": {"thread_id": session_id}}
    head = service._graph.get_state(config).config["configurable"]["checkpoint_id"]
    service._sessions.begin_turn(session_id, "james_li_5688", head)
    # When a second message arrives on the session
    response = router_handler(with_session(load_event("message.json"), session_id))
    # Then it is told to retry, and the conversation still holds only the first turn
    assert response["statusCode"] == 409
    assert body(response)["error"]["code"] == "conflict"
    values = service._graph.get_state(config).values
    assert values["turn"] == 1


def test_a_customer_over_the_rate_limit_gets_429_with_retry_after(router_handler, session_id, monkeypatch):
    # Given a limit of two messages a minute
    from csagent import runtime

    monkeypatch.setenv("RATE_LIMIT_MAX_MESSAGES", "2")
    runtime.reset()
    event = with_body(with_session(load_event("message.json"), session_id), {"text": "thanks!"})
    # When a customer with a fresh limit window sends a third message
    customer = f"rl-{session_id}"
    event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:customer_id"] = customer
    statuses = [router_handler(event)["statusCode"] for _ in range(2)]
    third = router_handler(event)
    # Then the third is refused with 429 and told when to retry
    assert statuses == [200, 200]
    assert third["statusCode"] == 429
    assert body(third)["error"]["code"] == "rate_limited"
    assert int(third["headers"]["retry-after"]) >= 1
