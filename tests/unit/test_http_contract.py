"""The OpenAPI document says what the API does (no server needed; the fuzzer in
tests/e2e/test_openapi_fuzz.py checks the served API against it): the error body on every error
status, the ids' patterns equal to the services' checks, the event stream's events, 405 with
`Allow`. And the patterns the document publishes accept exactly what the validators accept."""

from __future__ import annotations

import re
import string
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from csagent.approvals.models import APPROVAL_ID_PATTERN
from csagent.domain.ids import CATALOGUE_ID_PATTERN, DOCUMENT_ID_PATTERN
from csagent.handoff.package import HANDOFF_ID_PATTERN
from csagent.http.app import create_app
from csagent.service.schemas import (
    BASE64_PATTERN,
    NOT_BLANK_PATTERN,
    ORDER_ID_PATTERN,
    SESSION_ID_PATTERN,
    check_session_id,
    is_base64,
)

AGENT = {"Authorization": "Bearer dev-agent:ann"}
ERROR_BODY = {"$ref": "#/components/schemas/ErrorBody"}


def client() -> TestClient:
    app = create_app(lambda: None, lambda: {"neo4j": True}, lambda: "dev",  # type: ignore[arg-type,return-value]
                     get_handoffs=lambda: None, get_approvals=lambda: None)
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    document: dict[str, Any] = client().get("/openapi.json").json()
    return document


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in spec["paths"].items() for method, op in item.items()]


def test_every_error_status_is_declared_with_the_one_error_body(spec: dict[str, Any]) -> None:
    for path, method, op in operations(spec):
        errors = {int(code): answer for code, answer in op["responses"].items() if int(code) >= 400}
        # Every route: a body over the limit (413) and an unexpected failure (500); signed-in
        # routes: 401 with WWW-Authenticate; a JSON body: 400 for malformed JSON and 422
        expected = {413, 500}
        if path != "/healthz":
            expected |= {401, 422}
            assert errors[401]["headers"]["WWW-Authenticate"]["required"] is True, (method, path)
        if "requestBody" in op:
            expected.add(400)
        assert expected <= set(errors), (method, path, sorted(errors))
        for code, answer in errors.items():
            if (path, code) != ("/healthz", 503):
                assert answer["content"]["application/json"]["schema"] == ERROR_BODY, (method, path, code)


def test_the_ids_in_paths_carry_the_services_patterns(spec: dict[str, Any]) -> None:
    expected = {"session_id": SESSION_ID_PATTERN, "handoff_id": HANDOFF_ID_PATTERN,
                "approval_id": APPROVAL_ID_PATTERN, "document_id": DOCUMENT_ID_PATTERN,
                "product_id": CATALOGUE_ID_PATTERN, "item_id": CATALOGUE_ID_PATTERN}
    seen = set()
    for path, method, op in operations(spec):
        for parameter in op.get("parameters", []):
            if parameter["in"] == "path":
                assert parameter["schema"]["pattern"] == expected[parameter["name"]], (method, path)
                seen.add(parameter["name"])
    assert seen == set(expected)


def test_the_event_stream_documents_each_event_and_its_data(spec: dict[str, Any]) -> None:
    # Given the streaming operation's 200 answer
    op = spec["paths"]["/v1/sessions/{session_id}/messages:stream"]["post"]
    events = op["responses"]["200"]["content"]["text/event-stream"]["schema"]["oneOf"]
    # Then each event is named, and its data is JSON of a documented shape
    names = [event["properties"]["event"]["const"] for event in events]
    assert names == ["progress", "answer", "done", "error"]
    data = {name: event["properties"]["data"] for name, event in zip(names, events, strict=True)}
    assert all(d["contentMediaType"] == "application/json" for d in data.values())
    assert data["done"]["contentSchema"] == {"$ref": "#/components/schemas/TurnOut"}
    assert data["error"]["contentSchema"] == ERROR_BODY


def test_an_undeclared_method_is_a_405_that_says_which_are_allowed() -> None:
    response = client().request("TRACE", "/v1/sessions/s1/messages", headers=AGENT)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_session_id_with_a_trailing_newline_is_refused() -> None:
    # `$` alone matches before a final newline; the check is a full match
    from csagent.domain.errors import InvalidInput

    with pytest.raises(InvalidInput):
        check_session_id("s1\n")
    assert check_session_id("s1") == "s1"


@given(st.text(alphabet="Aa0+/=-_ \n\x00é", max_size=14))
def test_base64_pattern_and_check_agree(value: str) -> None:
    assert bool(re.fullmatch(BASE64_PATTERN, value)) == is_base64(value)


class _Stripped(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    text: str


def test_the_not_blank_pattern_is_exactly_what_stripping_keeps() -> None:
    # Every code point: blank after pydantic's strip exactly when the pattern finds nothing
    pattern = re.compile(NOT_BLANK_PATTERN)
    disagree = [hex(i) for i in range(0x3001)
                if (_Stripped(text=chr(i)).text == "") == bool(pattern.search(chr(i)))]
    assert disagree == []


@given(st.text(alphabet=string.digits + "#W١x", max_size=10))
def test_order_id_pattern_takes_ascii_digits_only(value: str) -> None:
    from pydantic import ValidationError

    from csagent.service.schemas import MessageIn

    try:
        MessageIn(text="hi", order_id=value)
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted == bool(re.fullmatch(ORDER_ID_PATTERN, value))
