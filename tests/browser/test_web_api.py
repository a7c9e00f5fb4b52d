"""What the pages read besides the customer API, over HTTP on the same server the browser tests
use: the pages' configuration and the agents' session viewer (GET /v1/agent/sessions/{id})."""

from __future__ import annotations

import uuid

import httpx
import pytest

pytestmark = [pytest.mark.integration]
JAMES = {"Authorization": "Bearer dev:james_li_5688"}  # owns #W4435622 (delivered)
AGENT = {"Authorization": "Bearer dev-agent:sam"}


def test_the_pages_configuration_holds_no_credential(web_base):
    config = httpx.get(f"{web_base}/config.json").json()
    assert config == {"auth": "dev", "api_base": "", "stream_base": ""}


def test_an_agent_reads_a_session_with_each_turns_trace(web_base):
    # Given a customer's answered turn
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    turn = httpx.post(f"{web_base}/v1/sessions/{session}/messages", headers=JAMES, timeout=60,
                      json={"text": "where is my order #W4435622?"}).json()
    assert turn["status"] == "answered" and turn["proposed"] == []
    # When an agent opens it in the session viewer
    view = httpx.get(f"{web_base}/v1/agent/sessions/{session}", headers=AGENT, timeout=30)
    # Then the public messages sit beside the turn's route, tasks and model usage
    assert view.status_code == 200
    body = view.json()
    assert body["customer_id"] == "james_li_5688"
    assert [m["role"] for m in body["messages"]] == ["customer", "assistant"]
    [traced] = body["turns"]
    assert traced["turn"] == 1 and traced["route"] == turn["trace"]["route"]
    assert [t["task_type"] for t in traced["tasks"]] == [t["task_type"] for t in turn["tasks"]]
    assert all(t["attempts"] >= 1 for t in traced["tasks"])
    assert traced["trace"]["usage"]["model_calls"] == 0  # the local tier
    assert "route" in traced["node_timings_ms"]


def test_the_session_viewer_is_for_agents_only_and_answers_bad_input_precisely(web_base):
    session = f"viewer-{uuid.uuid4().hex[:8]}"
    httpx.post(f"{web_base}/v1/sessions/{session}/messages", headers=JAMES, timeout=60, json={"text": "hi"})
    customer = httpx.get(f"{web_base}/v1/agent/sessions/{session}", headers=JAMES)
    assert customer.status_code == 403
    assert customer.json()["error"]["code"] == "forbidden"
    assert httpx.get(f"{web_base}/v1/agent/sessions/{session}").status_code == 401
    missing = httpx.get(f"{web_base}/v1/agent/sessions/never-{uuid.uuid4().hex[:8]}", headers=AGENT)
    assert missing.status_code == 404
    assert httpx.get(f"{web_base}/v1/agent/sessions/{session}?turns=0", headers=AGENT).status_code == 422
    assert httpx.get(f"{web_base}/v1/agent/sessions/bad%20id", headers=AGENT).status_code == 422
