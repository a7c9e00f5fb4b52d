"""langchain-aws `ChatBedrockConverse` (boto3, SigV4 with dummy credentials), built by the
product's `build_chat_model`, against a local peer speaking Bedrock Runtime's Converse API:
what the client sends, what our code reads back, and which error type each failure becomes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from devstack.model_stubs import BedrockPeer, Error, Json, Malformed, Text, ToolCall

ORDER_TOOL = {"name": "get_order_status", "description": "Look up the status of one order.",
              "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}}


class IntentLabel(BaseModel):
    """The intent of one clause of a customer's message."""

    intent: str = Field(description="one intent name from the catalogue")
    confidence: float


def test_a_text_answer_and_its_token_usage_reach_the_caller(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer answers with plain text
    bedrock_peer.script(Text("Our return window is 30 days."))
    # When the client asks with a system prompt and a user message
    answer = bedrock_model().invoke([SystemMessage("You answer store policy questions."),
                                     HumanMessage("How long do I have to return shoes?")])
    # Then the text and the peer's token counts are what the caller reads
    assert answer.content == "Our return window is 30 days."
    assert answer.usage_metadata["input_tokens"] > 0 and answer.usage_metadata["output_tokens"] > 0
    assert answer.usage_metadata["total_tokens"] == (answer.usage_metadata["input_tokens"]
                                                     + answer.usage_metadata["output_tokens"])


def test_the_request_carries_system_messages_and_inference_config_in_converse_shape(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given a running Converse peer
    # When the client sends a system prompt and a user message
    bedrock_model().invoke([SystemMessage("Be brief."), HumanMessage("hi")])
    # Then the peer received one SigV4-signed Converse call for the configured model
    (request,) = bedrock_peer.requests
    assert unquote(request.path) == "/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse"
    assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=")
    assert "/bedrock/aws4_request" in request.headers["authorization"]
    # And the body uses Converse's system / messages / inferenceConfig members
    assert request.body["system"] == [{"text": "Be brief."}]
    assert request.body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert request.body["inferenceConfig"] == {"maxTokens": 1024, "temperature": 0.0}


def test_a_tool_call_comes_back_with_its_name_and_arguments(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer answers with a toolUse block
    bedrock_peer.script(ToolCall({"order_id": "#W2611340"}, name="get_order_status"))
    # When the client offers the tool
    answer = bedrock_model().bind_tools([ORDER_TOOL]).invoke("Where is my order?")
    # Then the caller sees one tool call with the arguments as a dict
    assert [(c["name"], c["args"]) for c in answer.tool_calls] == [
        ("get_order_status", {"order_id": "#W2611340"})]
    # And the tool reached the peer as a toolSpec with its JSON input schema
    spec = bedrock_peer.requests[0].body["toolConfig"]["tools"][0]["toolSpec"]
    assert spec["name"] == "get_order_status"
    assert spec["inputSchema"]["json"]["required"] == ["order_id"]


def test_structured_output_forces_the_schema_tool_and_parses_its_input(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer answers the schema tool with valid input
    bedrock_peer.script(Json({"intent": "order_status", "confidence": 0.93}))
    # When the caller asks for an IntentLabel
    label = bedrock_model().with_structured_output(IntentLabel).invoke("where is #W2611340")
    # Then the answer is parsed into the model
    assert label == IntentLabel(intent="order_status", confidence=0.93)
    # And the request forced exactly that tool, whose input schema is the model's schema
    config = bedrock_peer.requests[0].body["toolConfig"]
    assert config["toolChoice"] == {"tool": {"name": "IntentLabel"}}
    schema = config["tools"][0]["toolSpec"]["inputSchema"]["json"]
    assert set(schema["properties"]) == {"intent", "confidence"}
    assert sorted(schema["required"]) == ["confidence", "intent"]


def test_structured_output_by_json_schema_sends_output_config(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer answers with a JSON document as text
    bedrock_peer.script(Json({"intent": "return_policy", "confidence": 0.7}))
    # When the caller asks for Bedrock's native JSON-schema output
    label = bedrock_model().with_structured_output(IntentLabel, method="json_schema").invoke("returns?")
    # Then it is parsed, and the schema travelled in outputConfig.textFormat
    assert label == IntentLabel(intent="return_policy", confidence=0.7)
    text_format = bedrock_peer.requests[0].body["outputConfig"]["textFormat"]
    assert text_format["type"] == "json_schema"
    assert text_format["structure"]["jsonSchema"]["name"] == "IntentLabel"
    assert bedrock_peer.requests[0].requested_schema["additionalProperties"] is False


def test_a_model_that_writes_text_instead_of_calling_the_schema_tool_yields_none(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the model answers with broken JSON as text instead of calling the forced tool
    bedrock_peer.script(Malformed('{"intent": "order_status", '))
    # When the caller asks for structured output
    label = bedrock_model().with_structured_output(IntentLabel).invoke("where is my order")
    # Then langchain-aws returns None (no exception): the gateway must treat None as invalid output
    assert label is None


def test_tool_input_that_violates_the_schema_raises_a_validation_error(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the model calls the schema tool with input missing required fields
    bedrock_peer.script(Json({"label": "order_status"}))
    # When the caller asks for structured output
    # Then pydantic's ValidationError names the missing fields
    with pytest.raises(ValidationError, match="intent"):
        bedrock_model().with_structured_output(IntentLabel).invoke("where is my order")


def test_throttling_is_a_client_error_with_the_throttling_code_and_no_retry(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer throttles
    bedrock_peer.script(Error(429))
    # When the client calls
    with pytest.raises(ClientError) as raised:
        bedrock_model().invoke("hi")
    # Then botocore parsed the x-amzn-ErrorType header into the ThrottlingException code
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
    # And the client did not retry on its own (the gateway's chain decides)
    assert len(bedrock_peer.requests) == 1


@pytest.mark.parametrize(("status", "code"), [
    (500, "InternalServerException"), (503, "ServiceUnavailableException"),
    (408, "ModelTimeoutException"), (400, "ValidationException")])
def test_each_error_status_becomes_its_bedrock_error_code(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any], status: int, code: str) -> None:
    # Given the peer fails with this status
    bedrock_peer.script(Error(status))
    # When the client calls
    with pytest.raises(ClientError) as raised:
        bedrock_model().invoke("hi")
    # Then the error our code sees carries Bedrock's code and the HTTP status, after one request
    response = raised.value.response
    assert (response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]) == (code, status)
    assert len(bedrock_peer.requests) == 1


def test_an_answer_slower_than_the_client_timeout_is_a_read_timeout(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer takes longer than the client's one-second timeout
    bedrock_peer.script(Text("too late", delay_s=8.0))
    model = bedrock_model(timeout_s=1.0)
    # When the client calls
    started = time.monotonic()
    with pytest.raises(ReadTimeoutError):
        model.invoke("hi")
    # Then it gave up at its own timeout, long before the peer would have answered (the margin is
    # wide on purpose: this tells "gave up" from "waited", it does not time the client)
    assert time.monotonic() - started < 6.0


def test_converse_stream_delivers_the_text_in_event_stream_framing(
        bedrock_peer: BedrockPeer, bedrock_model: Callable[..., Any]) -> None:
    # Given the peer answers a streaming call
    bedrock_peer.script(Text("Shipped yesterday."))
    # When the client streams
    chunks = list(bedrock_model().stream("status?"))
    # Then the chunks add up to the answer and the usage from the metadata event
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total.text == "Shipped yesterday."
    assert total.usage_metadata["output_tokens"] > 0
    assert bedrock_peer.requests[0].path.endswith("/converse-stream")
