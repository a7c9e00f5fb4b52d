"""`ModelGateway.structured` over the real clients against the Bedrock Converse and OpenAI
chat-completions peers: a parsed answer, repair and one retry with the error as a hint, failover
down the chain, the breaker opening, and the data-routing rule (a prompt carrying customer data
never reaches Bedrock; the self-hosted endpoint receives it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from csagent.models.errors import DataRoutingRefused, ModelUnavailable
from csagent.models.gateway import ModelGateway
from csagent.models.providers import ModelSpec, build_chat_model, parse_model_spec
from csagent.models.roles import Role
from csagent.models.usage import metered_turn
from csagent.resilience.breaker import BreakerConfig, breakers
from csagent.understanding_model import RouterAnswer
from devstack.model_stubs import BedrockPeer, Error, Json, Malformed, OpenAIPeer, Text

ANSWER = {"clauses": [{"clause": 1, "intent": "return_policy", "confidence": 0.9}]}
#: No order id, e-mail, address, payment or customer id: every rung may receive it.
PLAIN = {"message": "what is your return policy?", "clauses": "1. what is your return policy?",
         "intents": "return_policy, order_status, warranty"}
ORDER_ID, EMAIL, STREET = "#W2611340", "noah.brown7@example.com", "986 Sunset Drive"
WITH_CUSTOMER_DATA = {**PLAIN, "message": f"where is {ORDER_ID}? ship it to {STREET}, mail {EMAIL}",
                      "clauses": f"1. where is {ORDER_ID}\n2. ship it to {STREET}\n3. mail {EMAIL}"}
GatewayFactory = Callable[..., ModelGateway]


@pytest.fixture(autouse=True)
def _closed_breakers() -> Iterator[None]:
    breakers().reset()
    yield
    breakers().reset()


@pytest.fixture
def gateway(bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer, bedrock_spec: str) -> GatewayFactory:
    """A gateway whose every role has the chain given by peer names ("bedrock", "openai"), built
    with the product's `build_chat_model` against the peers."""
    names = {"bedrock": bedrock_spec, "openai": openai_peer.model_spec()}

    def build(spec: ModelSpec, role: Role) -> Any:
        return build_chat_model(spec, timeout_s=1.0, region="us-east-1",
                                bedrock_endpoint_url=bedrock_peer.url)

    def make(*chain: str) -> ModelGateway:
        specs = [parse_model_spec(names[name]) for name in chain]
        return ModelGateway({role: specs for role in Role}, build)

    return make


def _router(gw: ModelGateway, variables: dict[str, str] = PLAIN, customer_data: bool | None = False) -> Any:
    """The router's call. Chain mechanics tests declare the plain prompt free of customer data
    (`customer_data=False`); the data-routing tests pass None so the detectors decide."""
    return gw.structured(Role.ROUTER, "router", variables, RouterAnswer, customer_data=customer_data)


# ------------------------------------------------------------------------------------ success
def test_openai_answer_is_parsed_and_metered(gateway: GatewayFactory, openai_peer: OpenAIPeer) -> None:
    # Given the self-hosted endpoint answers the router's schema
    openai_peer.script(Json(ANSWER))
    # When the router asks through the gateway inside a metered turn
    with metered_turn() as usage:
        reply = _router(gateway("openai"))
    # Then the answer is parsed, attributed to the endpoint, and its tokens are on the turn's meter
    assert reply.value == RouterAnswer.model_validate(ANSWER)
    assert reply.model == openai_peer.model_spec()
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    assert usage.calls == 1
    assert (usage.input_tokens, usage.output_tokens) == (reply.input_tokens, reply.output_tokens)
    # And the request constrained the answer with a JSON-schema response_format of RouterAnswer
    fmt = openai_peer.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "RouterAnswer"


def test_bedrock_answer_comes_from_the_forced_schema_tool(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer) -> None:
    # Given Bedrock answers the schema tool
    bedrock_peer.script(Json(ANSWER))
    # When the router asks with a prompt free of customer data
    reply = _router(gateway("bedrock"))
    # Then the tool's input is the parsed answer
    assert reply.value == RouterAnswer.model_validate(ANSWER)
    assert reply.steps == [f"{reply.model}: answered"]
    # And the request forced the RouterAnswer tool and carried the rendered router prompt
    (request,) = bedrock_peer.requests
    assert request.body["toolConfig"]["toolChoice"] == {"tool": {"name": "RouterAnswer"}}
    assert "what is your return policy?" in request.prompt_text


def test_a_fenced_json_answer_is_repaired_without_a_second_call(
        gateway: GatewayFactory, openai_peer: OpenAIPeer) -> None:
    # Given the model wraps its JSON in a code fence with a sentence before it
    openai_peer.script(Text('Here you go:\n```json\n{"clauses": [{"clause": 1, "intent": "warranty", '
                            '"confidence": 0.8}]}\n```'))
    # When the router asks
    reply = _router(gateway("openai"))
    # Then the JSON is recovered from the fence, with one call
    assert reply.value.clauses[0].intent == "warranty"
    assert len(openai_peer.requests) == 1


# ------------------------------------------------------------------------------ repair + retry
@pytest.mark.parametrize("peer_name", ["openai", "bedrock"])
def test_unparseable_output_is_retried_once_with_the_error_as_a_hint(
        gateway: GatewayFactory, request: pytest.FixtureRequest, peer_name: str) -> None:
    # Given the model first answers broken JSON, then a valid answer
    peer: OpenAIPeer | BedrockPeer = request.getfixturevalue(f"{peer_name}_peer")
    peer.script(Malformed('{"clauses": [{"clause": 1, "intent": '), Json(ANSWER))
    # When the router asks
    reply = _router(gateway(peer_name))
    # Then the second answer is used, on the same endpoint
    assert reply.value == RouterAnswer.model_validate(ANSWER)
    assert reply.steps == [f"{reply.model}: answered after a retry"]
    # And the second request repeated the conversation plus the broken answer and the error as a hint
    first, second = peer.requests
    assert "could not be used" not in first.prompt_text
    assert "could not be used" in second.prompt_text and "JSON" in second.prompt_text
    assert '{"clauses": [{"clause": 1, "intent": ' in second.prompt_text
    assert "what is your return policy?" in second.prompt_text


def test_an_answer_that_violates_the_schema_names_the_field_in_the_hint(
        gateway: GatewayFactory, openai_peer: OpenAIPeer) -> None:
    # Given a first answer whose clause has no intent, then a valid one
    unlabelled = {"clauses": [{"clause": 1, "confidence": 0.7}]}
    openai_peer.script(Json(unlabelled), Json(ANSWER))
    # When the router asks
    _router(gateway("openai"))
    # Then the hint names the offending field
    assert "intent" in openai_peer.requests[1].prompt_text.split("could not be used", 1)[1]


def test_output_still_invalid_after_the_retry_moves_to_the_next_rung(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer) -> None:
    # Given Bedrock answers broken output twice and the self-hosted endpoint answers well
    bedrock_peer.script(Malformed(), Malformed())
    openai_peer.script(Json(ANSWER))
    # When the router asks over bedrock|openai
    reply = _router(gateway("bedrock", "openai"))
    # Then the secondary answered, after exactly two calls to the primary
    assert reply.model == openai_peer.model_spec()
    assert len(bedrock_peer.requests) == 2 and len(openai_peer.requests) == 1
    assert reply.steps[0].endswith("invalid output")


# ------------------------------------------------------------------------------------ failover
@pytest.mark.parametrize(("failure", "step"), [
    (Error(429), "ModelThrottled"), (Error(503), "ModelEndpointError"), (Error(500), "ModelEndpointError"),
    (Text("late", delay_s=3.0), "ModelTimeout")])
def test_a_failing_bedrock_primary_fails_over_to_the_self_hosted_secondary(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer, bedrock_spec: str,
        failure: Any, step: str) -> None:
    # Given the Bedrock primary fails this way and the secondary answers
    bedrock_peer.script(failure)
    openai_peer.script(Json(ANSWER))
    # When the router asks over bedrock|openai
    reply = _router(gateway("bedrock", "openai"))
    # Then the secondary's answer is returned and the steps say why the primary was left
    assert reply.model == openai_peer.model_spec()
    assert reply.steps == [f"{bedrock_spec}: {step}", f"{openai_peer.model_spec()}: answered"]


@pytest.mark.parametrize(("failure", "step"), [(Error(429, retry_after_s=3), "ModelThrottled"),
                                               (Error(500), "ModelEndpointError")])
def test_a_failing_openai_primary_fails_over_to_bedrock(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer,
        failure: Error, step: str) -> None:
    # Given the self-hosted primary fails and Bedrock answers
    openai_peer.script(failure)
    bedrock_peer.script(Json(ANSWER))
    # When the router asks a prompt free of customer data over openai|bedrock
    reply = _router(gateway("openai", "bedrock"))
    # Then Bedrock's answer is returned, after one call to each
    assert reply.steps[0] == f"{openai_peer.model_spec()}: {step}"
    assert reply.model.startswith("bedrock/")
    assert (len(openai_peer.requests), len(bedrock_peer.requests)) == (1, 1)


def test_every_rung_failing_raises_model_unavailable_with_the_steps(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer) -> None:
    # Given both endpoints fail
    bedrock_peer.script(Error(503))
    openai_peer.script(Error(503))
    # When the router asks
    with pytest.raises(ModelUnavailable) as raised:
        _router(gateway("bedrock", "openai"))
    # Then the caller learns every rung's outcome (its local tier answers instead)
    assert [s.rsplit(": ", 1)[1] for s in raised.value.steps] == ["ModelEndpointError", "ModelEndpointError"]


def test_the_breaker_opens_after_consecutive_failures_and_the_primary_is_skipped(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer) -> None:
    # Given a Bedrock primary failing as many times in a row as the breaker tolerates
    threshold = BreakerConfig().failure_threshold
    bedrock_peer.script(*[Error(503)] * threshold)
    gw = gateway("bedrock", "openai")
    for _ in range(threshold):
        _router(gw)
    # When the router asks once more
    reply = _router(gw)
    # Then the primary is skipped without a call, and the secondary answers
    assert reply.steps[0].endswith(": circuit open")
    assert len(bedrock_peer.requests) == threshold
    assert len(openai_peer.requests) == threshold + 1


# -------------------------------------------------------------------------------- data routing
def _variables_with_customer_data(role: Role) -> tuple[str, dict[str, str]]:
    """Each role's prompt, filled with an order id, an e-mail and a street address."""
    data = f"order {ORDER_ID}, e-mail {EMAIL}, address {STREET}, Denver, CO 80202"
    return {
        Role.ROUTER: ("router", WITH_CUSTOMER_DATA),
        Role.PLANNER: ("planner", {"message": data, "clauses": f"1. {data}", "catalogue": "order_status",
                                   "order_ids": ORDER_ID}),
        Role.TEXT2CYPHER: ("text2cypher", {"schema": "(:Order {id})", "question": f"what is in {data}?"}),
        Role.SUMMARISER: ("summariser", {"language": "en", "message": data, "results": data,
                                         "must_mention": ORDER_ID}),
    }[role]


@pytest.mark.parametrize("role", [Role.ROUTER, Role.PLANNER, Role.TEXT2CYPHER, Role.SUMMARISER])
def test_a_prompt_with_customer_data_reaches_the_self_hosted_endpoint_never_bedrock(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer, role: Role) -> None:
    # Given Bedrock first in the chain and a prompt holding an order id, an e-mail and an address
    prompt, variables = _variables_with_customer_data(role)
    # When the role asks for text
    reply = gateway("bedrock", "openai").text(role, prompt, variables)
    # Then Bedrock received nothing at all, and the self-hosted endpoint received the customer data
    assert bedrock_peer.requests == []
    (request,) = openai_peer.requests
    assert ORDER_ID in request.prompt_text
    assert reply.steps[0].endswith("withheld, customer data")


def test_the_image_reader_never_sends_a_label_to_bedrock(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer) -> None:
    # Given the image role, whose prompts always carry a label (a name and an address)
    # When it asks over bedrock|openai
    gateway("bedrock", "openai").text(Role.IMAGE, "image", {"media_type": "image/png"})
    # Then only the self-hosted endpoint was called
    assert bedrock_peer.requests == []
    assert len(openai_peer.requests) == 1


def test_customer_data_with_only_bedrock_configured_is_refused_before_any_call(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer) -> None:
    # Given only Bedrock configured and a message with an order id, an e-mail and an address
    # When the router asks
    with pytest.raises(DataRoutingRefused):
        _router(gateway("bedrock"), WITH_CUSTOMER_DATA, customer_data=None)
    # Then nothing was sent anywhere
    assert bedrock_peer.requests == []


def test_a_prompt_free_of_customer_data_may_go_to_bedrock(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer) -> None:
    # Given Bedrock first in the chain and a question about store policy only
    # When the router asks, the detectors deciding whether the prompt carries customer data
    reply = _router(gateway("bedrock", "openai"), customer_data=None)
    # Then Bedrock answered it (the rule withholds customer data, not every call)
    assert reply.model.startswith("bedrock/")
    assert len(bedrock_peer.requests) == 1 and openai_peer.requests == []


def test_the_customer_data_never_appears_in_anything_bedrock_received(
        gateway: GatewayFactory, bedrock_peer: BedrockPeer) -> None:
    # Given a mix of calls with and without customer data over bedrock|openai
    gw = gateway("bedrock", "openai")
    _router(gw)
    _router(gw, WITH_CUSTOMER_DATA, customer_data=None)
    gw.text(Role.SUMMARISER, "summariser", {"language": "en", "message": "thanks", "results": "none",
                                             "must_mention": ""})
    # When everything Bedrock received is read back
    received = "\n".join(r.prompt_text for r in bedrock_peer.requests)
    # Then it got the policy question only
    assert len(bedrock_peer.requests) == 1
    assert ORDER_ID not in received and EMAIL not in received and STREET not in received


# --------------------------------------------------------------------------- from the settings
@pytest.fixture
def settings_gateway(monkeypatch: pytest.MonkeyPatch, bedrock_peer: BedrockPeer, openai_peer: OpenAIPeer,
                     bedrock_spec: str) -> Iterator[Callable[[], ModelGateway]]:
    """`get_gateway()` as the service builds it, from CHAT_MODEL, SECONDARY_CHAT_MODEL and
    BEDROCK_ENDPOINT_URL pointing at the peers."""
    from csagent.config import get_settings
    from csagent.models.gateway import get_gateway

    monkeypatch.setenv("CHAT_MODEL", bedrock_spec)
    monkeypatch.setenv("SECONDARY_CHAT_MODEL", openai_peer.model_spec())
    monkeypatch.setenv("BEDROCK_ENDPOINT_URL", bedrock_peer.url)
    monkeypatch.setenv("MODEL_TIMEOUT_S", "1")
    get_settings.cache_clear()
    get_gateway.cache_clear()
    yield get_gateway
    get_settings.cache_clear()
    get_gateway.cache_clear()


def test_the_settings_gateway_reaches_bedrock_through_bedrock_endpoint_url(
        settings_gateway: Callable[[], ModelGateway], bedrock_peer: BedrockPeer,
        openai_peer: OpenAIPeer) -> None:
    # Given CHAT_MODEL=bedrock/… with BEDROCK_ENDPOINT_URL at the peer (AWS_ENDPOINT_URL is moto's)
    bedrock_peer.script(Json(ANSWER))
    # When the router asks a question declared free of customer data
    reply = _router(settings_gateway())
    # Then the Bedrock peer answered it, not moto and not the secondary
    assert reply.value == RouterAnswer.model_validate(ANSWER)
    assert len(bedrock_peer.requests) == 1 and openai_peer.requests == []


def test_the_settings_gateway_keeps_the_planner_on_the_self_hosted_secondary(
        settings_gateway: Callable[[], ModelGateway], bedrock_peer: BedrockPeer,
        openai_peer: OpenAIPeer) -> None:
    # Given CHAT_MODEL=bedrock/… and SECONDARY_CHAT_MODEL=openai/…, and the planner (whose prompts
    # always carry the customer's order ids)
    _, variables = _variables_with_customer_data(Role.PLANNER)
    # When the planner asks
    settings_gateway().text(Role.PLANNER, "planner", variables)
    # Then only the self-hosted endpoint received the prompt
    assert bedrock_peer.requests == []
    assert ORDER_ID in openai_peer.requests[0].prompt_text
