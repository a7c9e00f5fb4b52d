"""Per-role model settings validated at start-up, the gateway built from them, Bedrock's endpoint
URL and guardrail, and the customer-data detectors of the data-routing rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from csagent.config import Settings, get_settings
from csagent.models.gateway import get_gateway, role_chain, role_timeout_s
from csagent.models.providers import build_chat_model, parse_model_spec
from csagent.models.roles import Role
from csagent.models.sensitivity import carries_customer_data, customer_data_found, eligible

BEDROCK = "bedrock/anthropic.claude-3-haiku-20240307-v1:0"
VLLM = "openai/qwen2.5-7b@http://vllm.internal:8000/v1"


@pytest.fixture
def fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    get_settings.cache_clear()
    get_gateway.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()
    get_gateway.cache_clear()


@pytest.mark.parametrize("variable", ["PLANNER_MODEL", "SUMMARISER_MODEL", "IMAGE_MODEL"])
def test_a_customer_data_role_set_to_only_bedrock_is_refused_at_start_up(
        variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a role whose prompts always carry customer data, set to Bedrock alone
    monkeypatch.setenv(variable, f"{BEDROCK}|local")
    # Then the settings refuse to load, naming the variable and the way out
    with pytest.raises(ValueError, match=f"{variable}=.*always carry customer data.*self-hosted endpoint"):
        Settings()


def test_a_customer_data_role_may_list_bedrock_behind_a_self_hosted_endpoint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the planner on the self-hosted endpoint with Bedrock after it
    monkeypatch.setenv("PLANNER_MODEL", f"{VLLM}|{BEDROCK}")
    # Then the settings load (the gateway withholds customer data from the Bedrock rung)
    assert Settings().planner_model == f"{VLLM}|{BEDROCK}"


def test_label_photos_are_never_read_by_bedrock(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the old IMAGE_READER=bedrock setting
    monkeypatch.setenv("IMAGE_READER", "bedrock")
    # Then start-up refuses it and says what to use instead
    with pytest.raises(ValueError, match="IMAGE_READER=bedrock is refused.*IMAGE_READER=model"):
        Settings()


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("ROUTER_MODEL", "gpt-4", "unknown model spec"),
    ("ROUTER_TIMEOUT_S", "0", "positive number of seconds"),
    ("BEDROCK_GUARDRAIL_VERSION", "3", "without BEDROCK_GUARDRAIL_ID"),
    ("IMAGE_READER", "model", "needs IMAGE_MODEL"),
])
def test_malformed_model_settings_fail_at_start_up_precisely(
        variable: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given one malformed model setting
    monkeypatch.setenv(variable, value)
    # Then loading the settings fails with a precise message
    with pytest.raises(ValueError, match=message):
        Settings()


def test_roles_inherit_chat_model_and_the_secondary_but_the_image_role_does_not() -> None:
    # Given a primary and a secondary chat model, and a router of its own
    s = Settings(chat_model=BEDROCK, secondary_chat_model=VLLM, router_model=f"{VLLM}|local",
                 router_timeout_s=3)
    # Then each role's chain and timeout follow the documented defaults
    assert role_chain(s, Role.PLANNER) == f"{BEDROCK}|{VLLM}"
    assert role_chain(s, Role.ROUTER) == f"{VLLM}|local"
    assert role_chain(s, Role.IMAGE) == "local"
    assert (role_timeout_s(s, Role.ROUTER), role_timeout_s(s, Role.SUMMARISER)) == (3.0, 20.0)


def test_the_settings_gateway_is_local_by_default_and_cleared_by_reset(
        fresh_settings: pytest.MonkeyPatch) -> None:
    # Given no model settings
    gateway = get_gateway()
    # Then no role has a model (the graph runs on the local tier)
    assert not any(gateway.has_model(role) for role in Role)
    # When CHAT_MODEL changes and the runtime is reset
    fresh_settings.setenv("CHAT_MODEL", VLLM)
    from csagent import runtime

    runtime.reset()
    # Then the new gateway has the model for every role but the image reader
    assert [r for r in Role if get_gateway().has_model(r)] == [r for r in Role if r != Role.IMAGE]


def test_bedrock_gets_the_endpoint_url_and_the_guardrail() -> None:
    # Given a Bedrock spec, a local Converse endpoint and a guardrail
    model = build_chat_model(BEDROCK, timeout_s=2, region="us-east-1",
                             bedrock_endpoint_url="http://127.0.0.1:4599", guardrail=("gr-123", "2"))
    # Then the client talks to that endpoint and every call carries the guardrail
    assert model.endpoint_url == "http://127.0.0.1:4599"  # type: ignore[union-attr]
    assert model.guardrail_config == {"guardrailIdentifier": "gr-123", "guardrailVersion": "2",  # type: ignore[union-attr]
                                      "trace": "disabled"}


# ------------------------------------------------------------------------------ the detectors
@pytest.mark.parametrize(("text", "kind"), [
    ("where is #W2611340?", "order id"), ("订单W2611340在哪里", "order id"),
    ("mail me at noah.brown7@example.com", "email"), ("ship it to 986 Sunset Drive", "street address"),
    ("I moved to Denver, CO 80279", "zip code"), ("refund to credit_card_7815826", "payment method"),
    ("card 4111 1111 1111 1111", "card number"), ("the card ending in 4242", "card number"),
    ("I am noah_brown_6181", "customer id"), ("parcel 123456789012", "tracking number"),
])
def test_customer_data_is_detected(text: str, kind: str) -> None:
    # Given a message with one kind of customer data
    # Then the detectors find it, and a router prompt with it carries customer data
    assert kind in customer_data_found(text)
    assert carries_customer_data(Role.ROUTER, text)


@pytest.mark.parametrize("text", ["what is the warranty on headphones?", "how much are 3 water bottles?",
                                  "what is your 30 day return policy?", "Which laptops cost under $900?"])
def test_catalogue_and_policy_questions_carry_no_customer_data(text: str) -> None:
    # Given a question about the store only
    # Then the router and Text2Cypher may send it anywhere; the summariser never to Bedrock
    assert not carries_customer_data(Role.ROUTER, text) and not carries_customer_data(Role.TEXT2CYPHER, text)
    assert carries_customer_data(Role.SUMMARISER, text)


def test_only_self_hosted_and_local_models_are_eligible_for_customer_data() -> None:
    # Given Bedrock, a public API, a self-hosted endpoint and the local tier
    specs = [parse_model_spec(s) for s in (BEDROCK, "openai/gpt-4o@https://api.openai.com/v1", VLLM, "local")]
    # Then with customer data only the last two qualify; without it all do
    assert [eligible(s, True) for s in specs] == [False, False, True, True]
    assert all(eligible(s, False) for s in specs)
