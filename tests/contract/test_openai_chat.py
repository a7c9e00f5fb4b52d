"""langchain-openai `ChatOpenAI` (the `openai` SDK), built by the product's `build_chat_model`
for an `openai/<model>@<base_url>` spec, against a local peer speaking the chat-completions API
as vLLM and llama.cpp serve it: what the client sends, what our code reads back, and which error
type each failure becomes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from devstack.model_stubs import Error, Json, Malformed, OpenAIPeer, Text, ToolCall

ORDER_TOOL = {"type": "function", "function": {
    "name": "get_order_status", "description": "Look up the status of one order.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}


class IntentLabel(BaseModel):
    """The intent of one clause of a customer's message."""

    intent: str
    confidence: float


def test_a_text_answer_and_its_token_usage_reach_the_caller(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer answers with plain text
    openai_peer.script(Text("Our return window is 30 days."))
    # When the client asks with a system prompt and a user message
    answer = openai_model().invoke([SystemMessage("You answer store policy questions."),
                                    HumanMessage("How long do I have to return shoes?")])
    # Then the text and the peer's usage (prompt / completion tokens) are what the caller reads
    assert answer.content == "Our return window is 30 days."
    assert answer.usage_metadata["input_tokens"] > 0 and answer.usage_metadata["output_tokens"] > 0
    assert answer.response_metadata["finish_reason"] == "stop"


def test_the_request_carries_the_model_messages_and_no_client_retries(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given a running chat-completions peer
    # When the client sends a system prompt and a user message
    openai_model().invoke([SystemMessage("Be brief."), HumanMessage("hi")])
    # Then one POST reached /v1/chat/completions with the configured model and both messages
    (request,) = openai_peer.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.body["model"] == "stub"
    assert request.body["messages"] == [{"role": "system", "content": "Be brief."},
                                        {"role": "user", "content": "hi"}]
    assert request.body["temperature"] == 0.0 and request.body["max_completion_tokens"] == 1024


def test_the_models_endpoint_lists_the_served_model(openai_peer: OpenAIPeer) -> None:
    # Given the peer serving the model "stub"
    client = openai.OpenAI(base_url=openai_peer.base_url, api_key="not-needed", max_retries=0)
    # When a client lists the models (as a health check does)
    listed = [model.id for model in client.models.list()]
    # Then it sees the served model; listing is not a model call and is not recorded
    assert listed == ["stub"]
    assert openai_peer.requests == []


def test_a_tool_call_comes_back_with_its_arguments_parsed_from_the_json_string(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer answers with a function tool call
    openai_peer.script(ToolCall({"order_id": "#W2611340"}, name="get_order_status"))
    # When the client offers the tool
    answer = openai_model().bind_tools([ORDER_TOOL]).invoke("Where is my order?")
    # Then the caller sees one tool call with parsed arguments, and the finish reason says so
    assert [(c["name"], c["args"]) for c in answer.tool_calls] == [
        ("get_order_status", {"order_id": "#W2611340"})]
    assert answer.response_metadata["finish_reason"] == "tool_calls"
    # And the tool reached the peer in OpenAI's function shape
    assert openai_peer.requests[0].body["tools"][0]["function"]["name"] == "get_order_status"


def test_structured_output_sends_the_json_schema_response_format_and_parses_the_answer(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer answers with a JSON document
    openai_peer.script(Json({"intent": "order_status", "confidence": 0.93}))
    # When the caller asks for an IntentLabel
    label = openai_model().with_structured_output(IntentLabel).invoke("where is #W2611340")
    # Then it is parsed into the model
    assert label == IntentLabel(intent="order_status", confidence=0.93)
    # And the request carried response_format json_schema with the model's name and schema
    response_format = openai_peer.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "IntentLabel"
    assert set(response_format["json_schema"]["schema"]["properties"]) == {"intent", "confidence"}


def test_structured_output_by_function_calling_forces_the_schema_tool(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer answers the forced tool
    openai_peer.script(Json({"intent": "warranty", "confidence": 0.5}))
    # When the caller asks for structured output through tool calling
    label = openai_model().with_structured_output(IntentLabel, method="function_calling").invoke("warranty?")
    # Then it is parsed, and tool_choice named the schema's tool
    assert label == IntentLabel(intent="warranty", confidence=0.5)
    assert openai_peer.requests[0].body["tool_choice"] == {"type": "function",
                                                           "function": {"name": "IntentLabel"}}


def test_malformed_json_content_raises_a_validation_error(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the model's JSON is cut off
    openai_peer.script(Malformed('{"intent": "order_status", "confidence": '))
    # When the caller asks for structured output
    # Then pydantic reports invalid JSON (what the gateway's repair step starts from)
    with pytest.raises(ValidationError, match="json_invalid|Invalid JSON"):
        openai_model().with_structured_output(IntentLabel).invoke("where is my order")


def test_malformed_tool_arguments_parse_to_none_with_the_error_on_the_raw_message(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the model's tool arguments are not JSON
    openai_peer.script(Malformed('{"intent": "order_status", '))
    # When the caller asks for structured output through tool calling, keeping the raw message
    schema_model = openai_model().with_structured_output(IntentLabel, method="function_calling",
                                                         include_raw=True)
    result = schema_model.invoke("where is my order")
    # Then nothing parsed and no exception: the error is on the raw message's invalid tool call
    # (the gateway must check for None and read the error from there for its retry hint)
    assert result["parsed"] is None
    (invalid,) = result["raw"].invalid_tool_calls
    assert invalid["args"] == '{"intent": "order_status", ' and "not valid JSON" in invalid["error"]


def test_throttling_is_a_rate_limit_error_carrying_retry_after(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer rate-limits with retry-after: 7
    openai_peer.script(Error(429, retry_after_s=7))
    # When the client calls
    with pytest.raises(openai.RateLimitError) as raised:
        openai_model().invoke("hi")
    # Then our code sees openai.RateLimitError with OpenAI's error body and the header
    assert raised.value.status_code == 429
    assert raised.value.code == "rate_limit_exceeded"
    assert raised.value.response.headers["retry-after"] == "7"
    # And the client did not retry on its own
    assert len(openai_peer.requests) == 1


@pytest.mark.parametrize(("status", "error_type"), [
    (500, openai.InternalServerError), (503, openai.InternalServerError), (400, openai.BadRequestError)])
def test_each_error_status_becomes_its_openai_error_type(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any], status: int, error_type: type) -> None:
    # Given the peer fails with this status
    openai_peer.script(Error(status))
    # When the client calls
    with pytest.raises(error_type) as raised:
        openai_model().invoke("hi")
    # Then the status and OpenAI's error body are on the exception, after one request
    assert raised.value.status_code == status
    assert isinstance(raised.value.body, dict) and raised.value.body["message"]
    assert len(openai_peer.requests) == 1


def test_an_answer_slower_than_the_client_timeout_is_an_api_timeout(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer takes longer than the client's half-second timeout
    openai_peer.script(Text("too late", delay_s=8.0))
    model = openai_model(timeout_s=0.5)
    # When the client calls
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        model.invoke("hi")
    # Then it gave up at its own timeout, long before the peer would have answered (a wide
    # margin on purpose: this tells "gave up" from "waited", it does not time the client)
    assert time.monotonic() - started < 6.0


def test_streaming_delivers_the_text_as_server_sent_events(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given the peer answers a streaming call
    openai_peer.script(Text("Shipped yesterday."))
    # When the client streams
    chunks = list(openai_model().stream("status?"))
    # Then the chunks add up to the answer
    assert "".join(str(chunk.content) for chunk in chunks) == "Shipped yesterday."
    assert openai_peer.requests[0].body["stream"] is True


def test_an_unscripted_structured_call_gets_a_valid_instance_of_the_requested_schema(
        openai_peer: OpenAIPeer, openai_model: Callable[..., Any]) -> None:
    # Given nothing scripted (the peer's default responder answers)
    # When the caller asks for structured output
    label = openai_model().with_structured_output(IntentLabel).invoke("show my orders")
    # Then the answer parses into the schema the request carried, and the prompt was recorded
    assert isinstance(label, IntentLabel)
    (request,) = openai_peer.requests
    assert request.requested_schema == request.body["response_format"]["json_schema"]["schema"]
    assert "show my orders" in request.prompt_text
