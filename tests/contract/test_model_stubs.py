"""The peers' own behaviour that the contract tests and the benchmark rely on: valid default
answers for any schema pydantic emits, request records, and protocol errors for wrong calls."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from enum import StrEnum

import pytest
from pydantic import BaseModel, Field

from devstack.model_stubs import BedrockPeer, OpenAIPeer, event_stream_message, minimal_instance


class Intent(StrEnum):
    ORDER_STATUS = "order_status"
    WARRANTY = "warranty"


class Clause(BaseModel):
    text: str = Field(min_length=3)
    intent: Intent
    order_id: str | None
    weight: int = Field(ge=2)


class Plan(BaseModel):
    clauses: list[Clause] = Field(min_length=2)
    language: str = "en"
    notes: list[str]


def test_minimal_instance_satisfies_a_nested_pydantic_schema() -> None:
    # Given a schema with $defs, an enum, an optional field, bounds and a minimum list length
    schema = Plan.model_json_schema()
    # When the minimal instance is built
    value = minimal_instance(schema)
    # Then pydantic accepts it, with the smallest list the schema allows
    plan = Plan.model_validate(value)
    assert len(plan.clauses) == 2 and plan.clauses[0].intent is Intent.ORDER_STATUS
    assert plan.clauses[0].weight == 2 and len(plan.clauses[0].text) == 3


def _post(url: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback peer
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_bedrock_peer_rejects_an_empty_conversation_as_botocore_expects() -> None:
    # Given a Bedrock peer
    with BedrockPeer() as peer:
        # When a Converse call arrives without messages
        status, headers, body = _post(f"{peer.url}/model/m/converse", b'{"messages": []}')
    # Then it is a ValidationException in rest-json error form, and no model call is recorded
    assert status == 400
    assert headers["x-amzn-ErrorType"].startswith("ValidationException:")
    assert json.loads(body)["message"]
    assert peer.requests == []


def test_openai_peer_answers_an_unknown_path_with_openai_error_json() -> None:
    # Given an OpenAI peer
    with OpenAIPeer() as peer:
        # When a client posts to a path the API does not have
        status, _, body = _post(f"{peer.url}/v1/completions", b"{}")
    # Then it is a 404 in OpenAI's error shape
    assert status == 404
    assert json.loads(body)["error"]["type"] == "invalid_request_error"


def test_event_stream_messages_decode_with_botocore() -> None:
    # Given one encoded event
    from botocore.eventstream import EventStreamBuffer

    encoded = event_stream_message("messageStop", {"stopReason": "end_turn"})
    # When botocore's decoder reads it (it checks both CRCs)
    buffer = EventStreamBuffer()
    buffer.add_data(encoded)
    (message,) = list(buffer)
    # Then headers and payload come back as sent
    assert message.headers[":event-type"] == "messageStop"
    assert json.loads(message.payload) == {"stopReason": "end_turn"}


@pytest.mark.parametrize("peer_type", [BedrockPeer, OpenAIPeer])
def test_a_stopped_peer_frees_its_port(peer_type: type) -> None:
    # Given a peer that ran and stopped
    peer = peer_type().start()
    url = peer.url
    peer.stop()
    # When a client connects to its old address
    # Then the connection is refused
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}/v1/models", timeout=2)  # noqa: S310 - loopback peer
