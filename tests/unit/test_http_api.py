"""The HTTP edge with a fake service: authentication, validation and error bodies.
No Neo4j, no DynamoDB: only what the edge itself decides."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from csagent.domain.errors import Conflict, Forbidden
from csagent.domain.models import Principal
from csagent.http.app import create_app
from csagent.http.auth import principal_from
from csagent.service.schemas import MessageIn, SessionOut, TurnOut, check_session_id

DEV = {"Authorization": "Bearer dev:james_li_5688"}


class FakeService:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[tuple[Principal, str, MessageIn]] = []

    def handle_message(self, principal: Principal, session_id: str, message: MessageIn) -> TurnOut:
        if self.error:
            raise self.error
        check_session_id(session_id)
        self.calls.append((principal, session_id, message))
        return TurnOut(session_id=session_id, turn=1, status="answered",
                       reply={"text": "ok", "citations": []}, tasks=[], trace={"route": "general"})

    def get_session(self, principal: Principal, session_id: str) -> SessionOut:
        return SessionOut(session_id=session_id, status="answered", turn_count=1, messages=[])


def client_for(service: Any, auth_mode: str = "dev") -> TestClient:
    app = create_app(lambda: service, lambda: {"neo4j": True, "dynamodb": False}, lambda: auth_mode)
    return TestClient(app, raise_server_exceptions=False)


def test_a_valid_message_reaches_the_service_as_the_authenticated_customer():
    # Given dev auth for james_li_5688
    service = FakeService()
    # When he posts a message
    response = client_for(service).post("/v1/sessions/s1/messages", json={"text": "hi"}, headers=DEV)
    # Then the service gets his identity, never one from the body
    assert response.status_code == 200
    principal, session_id, message = service.calls[0]
    assert (principal.customer_id, session_id, message.text) == ("james_li_5688", "s1", "hi")


@pytest.mark.parametrize(("kwargs", "status", "code"), [
    ({"content": b'{"text": "hi"', "headers": {**DEV, "content-type": "application/json"}}, 400,
     "malformed_json"),
    ({"json": {"text": ""}, "headers": DEV}, 422, "invalid_input"),
    ({"json": {"text": "x" * 4001}, "headers": DEV}, 422, "text_too_long"),
    ({"json": {"text": "hi", "admin": True}, "headers": DEV}, 422, "unknown_field"),
    ({"json": {"text": "hi", "order_id": "#W12"}, "headers": DEV}, 422, "invalid_input"),
    ({"json": {"txt": "hi"}, "headers": DEV}, 422, "unknown_field"),
    ({"json": {"text": "hi", "attachments": [{"media_type": "image/png", "data": "not base64!!"}]},
      "headers": DEV}, 422, "invalid_input"),
    ({"json": {"text": "hi", "attachments": [{"media_type": "application/pdf", "data": "aGVsbG8gd29ybGQ="}]},
      "headers": DEV}, 422, "invalid_input"),
    ({"json": {"text": "hi"}}, 401, "unauthenticated"),
    ({"json": {"text": "hi"}, "headers": {"Authorization": "Bearer dev:"}}, 401, "unauthenticated"),
    ({"content": b"x" * (7 * 1024 * 1024), "headers": {**DEV, "content-type": "application/json"}}, 413,
     "body_too_large"),
])
def test_bad_requests_get_a_precise_status_and_error_code(kwargs, status, code):
    # Given a malformed, oversized, unknown-field, bad order id or unauthenticated request
    service = FakeService()
    # When it is posted
    response = client_for(service).post("/v1/sessions/s1/messages", **kwargs)
    # Then the status and error code say exactly what is wrong, and the service never ran
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert service.calls == []


def test_a_malformed_order_id_names_the_field_and_the_expected_shape():
    # Given an order id that is too short
    response = client_for(FakeService()).post("/v1/sessions/s1/messages",
                                              json={"text": "hi", "order_id": "W123"}, headers=DEV)
    # Then the error names the field and the expected form
    detail = response.json()["error"]["details"][0]
    assert detail["field"] == "order_id" and "#W" in detail["problem"]


def test_a_malformed_session_id_is_rejected():
    response = client_for(FakeService()).post("/v1/sessions/bad%20id!/messages", json={"text": "hi"},
                                              headers=DEV)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"


@pytest.mark.parametrize(("error", "status", "code"), [
    (Forbidden("this session belongs to another customer"), 403, "forbidden"),
    (Conflict("another message on this session is still being answered"), 409, "conflict"),
])
def test_domain_errors_map_to_their_status(error, status, code):
    response = client_for(FakeService(error)).post("/v1/sessions/s1/messages", json={"text": "hi"},
                                                   headers=DEV)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_an_unexpected_error_is_a_generic_500_without_internals():
    # Given a service that crashes with an internal message
    service = FakeService(RuntimeError("neo4j password is hunter2"))
    # When a message is posted
    response = client_for(service).post("/v1/sessions/s1/messages", json={"text": "hi"}, headers=DEV)
    # Then the body says nothing of the internals
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "hunter2" not in response.text and "Traceback" not in response.text


def test_healthz_is_503_when_a_dependency_is_down():
    response = client_for(FakeService()).get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "checks": {"neo4j": True, "dynamodb": False}}


def test_jwt_mode_ignores_dev_tokens():
    # Given the deployed auth mode
    # When a caller presents a dev token and no API Gateway claims
    response = client_for(FakeService(), auth_mode="jwt").post("/v1/sessions/s1/messages",
                                                               json={"text": "hi"}, headers=DEV)
    # Then it is unauthenticated
    assert response.status_code == 401


def test_jwt_claims_give_the_customer_and_roles():
    scope = {"aws.event": {"requestContext": {"authorizer": {"jwt": {"claims": {
        "sub": "abc", "custom:customer_id": "james_li_5688", "cognito:groups": "[agent]"}}}}}}
    principal = principal_from(scope, None, "jwt")
    assert principal.customer_id == "james_li_5688"
    assert "agent" in principal.roles and "customer" in principal.roles


def test_dev_auth_cannot_be_enabled_outside_the_local_stage(monkeypatch):
    from csagent.config import Settings

    monkeypatch.setenv("STAGE", "prod")
    monkeypatch.setenv("AUTH_MODE", "dev")
    with pytest.raises(ValueError, match="AUTH_MODE=dev"):
        Settings()


@given(st.text(min_size=0, max_size=80))
def test_dev_tokens_never_authenticate_garbage(token):
    # Property: anything not of the form "Bearer dev:<id>" is refused
    from csagent.domain.errors import Unauthenticated

    if token.startswith("Bearer dev:") or token.startswith("Bearer dev-agent:"):
        return
    with pytest.raises(Unauthenticated):
        principal_from({}, token, "dev")


def test_the_text2cypher_debugger_is_for_agents_only():
    # Given the debug endpoint wired to a recorder
    calls: list[str] = []
    app = create_app(lambda: FakeService(), lambda: {"neo4j": True}, lambda: "dev",
                     text2cypher_debug=lambda q, m: calls.append(q) or {"question": q, "attempts": []})
    client = TestClient(app, raise_server_exceptions=False)
    # When a customer and then an agent ask
    as_customer = client.post("/v1/debug/text2cypher", json={"question": "cheapest laptop?"}, headers=DEV)
    as_agent = client.post("/v1/debug/text2cypher", json={"question": "cheapest laptop?"},
                           headers={"Authorization": "Bearer dev-agent:ann"})
    # Then only the agent gets the trace
    assert as_customer.status_code == 403 and calls == ["cheapest laptop?"]
    assert as_agent.status_code == 200 and as_agent.json()["question"] == "cheapest laptop?"
