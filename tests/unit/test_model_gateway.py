"""The model gateway with fake chat models (no network): the data-routing rule for every role,
structured output per provider, repair and one retry, failover down the chain, breakers, typed
failures, usage accounting and the per-turn call budget."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from model_fakes import BEDROCK, VLLM, ScriptedChat, gateway_of
from pydantic import BaseModel, Field, ValidationError

from csagent.models.errors import (
    DataRoutingRefused,
    ModelBudgetExhausted,
    ModelEndpointError,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
)
from csagent.models.gateway import classify_failure, extract_json, response_format
from csagent.models.roles import ALWAYS_CUSTOMER_DATA, Role
from csagent.models.usage import metered_turn, price_of
from csagent.resilience.breaker import BreakerConfig, BreakerState, breakers
from csagent.understanding_model import RouterAnswer

ORDER = "#W2611340"
ROUTER_OK = {"clauses": [{"clause": 1, "intent": "policy_question", "confidence": 0.9}]}
PLAIN_ROUTER = {"message": "what is your return policy?", "clauses": "1. what is your return policy?",
                "intents": "- policy_question: the store's policies"}
#: Every role's prompt filled with realistic variables that carry customer data.
WITH_CUSTOMER_DATA: dict[Role, tuple[str, dict[str, str]]] = {
    Role.ROUTER: ("router", {"message": f"where is {ORDER}?", "clauses": f"1. where is {ORDER}?",
                             "intents": "- order_status: where an order is"}),
    Role.PLANNER: ("planner", {"message": f"cancel {ORDER} and where is it", "clauses": f"1. cancel {ORDER}",
                               "catalogue": "- cancel_order: cancel an order", "order_ids": ORDER}),
    Role.TEXT2CYPHER: ("text2cypher", {"schema": "(:Product)-[:HAS_VARIANT]->(:Variant)",
                                       "question": f"which products are in order {ORDER}?"}),
    Role.SUMMARISER: ("summariser", {"language": "English", "message": "where is my order?",
                                     "results": f"1. DONE: Order {ORDER} is shipped.",
                                     "must_mention": ORDER}),
    Role.IMAGE: ("image", {"media_type": "image/png"}),
}


class Answer(BaseModel):
    intent: str
    confidence: float = Field(ge=0.0, le=1.0)


@pytest.fixture(autouse=True)
def _fresh_breakers() -> Iterator[None]:
    breakers().reset()
    yield
    breakers().reset()


def two_rungs(bedrock_replies: list[Any] | None = None, vllm_replies: list[Any] | None = None
              ) -> tuple[Any, ScriptedChat, ScriptedChat]:
    bedrock, vllm = ScriptedChat(replies=bedrock_replies or []), ScriptedChat(replies=vllm_replies or [])
    return gateway_of([BEDROCK, VLLM], {BEDROCK: bedrock, VLLM: vllm}), bedrock, vllm


# ----------------------------------------------------------------------------- data routing
@pytest.mark.parametrize("role", list(Role))
def test_a_prompt_with_customer_data_never_reaches_bedrock_for_any_role(role: Role) -> None:
    # Given Bedrock first in the role's chain and the role's prompt carrying customer data
    gateway, bedrock, vllm = two_rungs(vllm_replies=["an answer"])
    prompt, variables = WITH_CUSTOMER_DATA[role]
    # When the role asks
    reply = gateway.text(role, prompt, variables)
    # Then Bedrock was never invoked, and the self-hosted endpoint answered
    assert bedrock.calls == []
    assert len(vllm.calls) == 1 and reply.model == VLLM
    assert reply.steps == [f"{BEDROCK}: withheld, customer data", f"{VLLM}: answered"]


@pytest.mark.parametrize("role", [Role.ROUTER, Role.TEXT2CYPHER])
def test_an_eligible_bedrock_rung_is_invoked_when_the_prompt_has_no_customer_data(role: Role) -> None:
    # Given Bedrock first and a prompt about the catalogue or store policy only
    gateway, bedrock, vllm = two_rungs(bedrock_replies=["an answer"])
    variables = PLAIN_ROUTER if role == Role.ROUTER else {"schema": "(:Product)",
                                                          "question": "which laptops cost under $900?"}
    # When the role asks
    reply = gateway.text(role, role.value, variables)
    # Then Bedrock answered it and the self-hosted endpoint was not needed
    assert len(bedrock.calls) == 1 and vllm.calls == []
    assert reply.model == BEDROCK


@pytest.mark.parametrize("role", sorted(ALWAYS_CUSTOMER_DATA))
def test_roles_that_always_carry_customer_data_skip_bedrock_even_for_harmless_text(role: Role) -> None:
    # Given a role whose prompts always carry customer data, with a caller saying "no customer data"
    gateway, bedrock, vllm = two_rungs(vllm_replies=["ok"])
    prompt, variables = WITH_CUSTOMER_DATA[role]
    # When it asks
    gateway.text(role, prompt, variables, customer_data=False)
    # Then the role's rule wins: Bedrock is still skipped
    assert bedrock.calls == [] and len(vllm.calls) == 1


def test_customer_data_with_only_bedrock_is_refused_before_any_call() -> None:
    # Given only Bedrock configured
    bedrock = ScriptedChat(replies=["never"])
    gateway = gateway_of([BEDROCK], {BEDROCK: bedrock})
    # When the router's prompt names an order
    with pytest.raises(DataRoutingRefused) as refused:
        gateway.text(Role.ROUTER, *WITH_CUSTOMER_DATA[Role.ROUTER])
    # Then nothing was sent, and the caller gets a ModelUnavailable (its local tier answers)
    assert bedrock.calls == [] and isinstance(refused.value, ModelUnavailable)


def test_a_public_hosted_api_is_treated_like_bedrock() -> None:
    # Given an OpenAI-compatible spec pointing at a public hosted API, then a self-hosted one
    public, hosted = "openai/gpt-4o-mini@https://api.openai.com/v1", ScriptedChat(replies=["ok"])
    gateway = gateway_of([public, VLLM], {public: ScriptedChat(), VLLM: hosted})
    # When the summariser asks
    reply = gateway.text(Role.SUMMARISER, *WITH_CUSTOMER_DATA[Role.SUMMARISER])
    # Then the public API is withheld and the self-hosted endpoint answers
    assert reply.steps[0] == f"{public}: withheld, customer data" and reply.model == VLLM


def test_has_model_is_false_for_the_local_tier_and_for_a_data_role_with_only_bedrock() -> None:
    # Given a router on Bedrock and nothing else
    gateway = gateway_of({Role.ROUTER: [BEDROCK], Role.PLANNER: [BEDROCK], Role.SUMMARISER: ["local"]}, {})
    # Then the router has a model; the planner (always customer data) and the summariser have none
    assert gateway.has_model(Role.ROUTER)
    assert not gateway.has_model(Role.PLANNER) and not gateway.has_model(Role.SUMMARISER)


# ------------------------------------------------------------------------ structured output
def test_bedrock_structured_output_comes_from_a_forced_tool_call() -> None:
    # Given Bedrock answering with the arguments of the schema's tool
    gateway, bedrock, _ = two_rungs(bedrock_replies=[ROUTER_OK])
    # When the router asks for its schema
    reply = gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, RouterAnswer, customer_data=False)
    # Then the tool's arguments are the validated answer, and the call bound the schema as a tool
    assert reply.value == RouterAnswer.model_validate(ROUTER_OK)
    tools = bedrock.calls[0][1]["tools"]
    assert tools[0]["function"]["name"] == "RouterAnswer"


def test_openai_structured_output_is_constrained_by_a_json_schema_response_format() -> None:
    # Given the self-hosted endpoint answering JSON text
    vllm = ScriptedChat(replies=['{"intent": "warranty", "confidence": 0.8}'])
    gateway = gateway_of([VLLM], {VLLM: vllm})
    # When a structured answer is asked for
    reply = gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, Answer)
    # Then it is parsed, and the request carried the schema as response_format
    assert reply.value == Answer(intent="warranty", confidence=0.8)
    fmt = vllm.calls[0][1]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Answer"
    assert fmt["json_schema"]["schema"]["properties"]["confidence"]["maximum"] == 1.0


def test_json_object_mode_sends_the_schema_beside_json_object_for_llama_cpp() -> None:
    # Given the gateway in json_object mode (llama.cpp's server refuses "json_schema")
    # Then the response_format is json_object with the schema
    fmt = response_format(Answer, "json_object")
    assert fmt["type"] == "json_object" and fmt["schema"]["required"] == ["intent", "confidence"]


@pytest.mark.parametrize("text", [
    '```json\n{"intent": "warranty", "confidence": 0.5}\n```',
    'Sure! {"intent": "warranty", "confidence": 0.5} Hope this helps.',
    '{"intent": "warranty", "confidence": 0.5}\n\nExplanation: the customer asks about a warranty.',
])
def test_fences_and_surrounding_text_are_repaired_without_another_call(text: str) -> None:
    # Given an answer wrapped in a fence or in prose
    vllm = ScriptedChat(replies=[text])
    gateway = gateway_of([VLLM], {VLLM: vllm})
    # When it is parsed
    reply = gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, Answer)
    # Then the JSON inside is used, after one call
    assert reply.value.intent == "warranty" and len(vllm.calls) == 1


def test_an_invalid_answer_is_retried_once_with_the_validation_error_as_a_hint() -> None:
    # Given a first answer that breaks the schema (confidence 7), then a valid one
    vllm = ScriptedChat(replies=['{"intent": "warranty", "confidence": 7}',
                                 '{"intent": "warranty", "confidence": 0.7}'])
    gateway = gateway_of([VLLM], {VLLM: vllm})
    # When the router asks
    reply = gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, Answer)
    # Then the second answer is used; the retry showed the bad answer and named the field
    assert reply.value.confidence == 0.7 and reply.steps == [f"{VLLM}: answered after a retry"]
    retry = vllm.prompts()[1]
    assert '"confidence": 7' in retry and "confidence" in retry.split("could not be used", 1)[1]
    assert "what is your return policy?" in retry


def test_output_invalid_after_the_retry_moves_to_the_next_rung() -> None:
    # Given Bedrock answering garbage twice and the self-hosted endpoint answering well
    gateway, bedrock, vllm = two_rungs(bedrock_replies=["no json here", "still none"],
                                       vllm_replies=['{"intent": "thanks", "confidence": 0.9}'])
    # When the router asks (no customer data)
    reply = gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, Answer, customer_data=False)
    # Then the secondary answered after exactly two calls to the primary
    assert reply.model == VLLM and len(bedrock.calls) == 2
    assert reply.steps[0] == f"{BEDROCK}: invalid output"


def test_invalid_output_never_opens_the_endpoints_breaker() -> None:
    # Given a primary that answers unusable text as many turns in a row as the breaker tolerates
    threshold = BreakerConfig().failure_threshold
    gateway, bedrock, _ = two_rungs(bedrock_replies=["no json"] * (2 * threshold),
                                    vllm_replies=['{"intent": "thanks", "confidence": 0.9}'] * threshold)
    for _ in range(threshold):
        gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, Answer, customer_data=False)
    # Then its breaker stays closed: the endpoint works, its answers did not
    assert breakers().get(f"model:{BEDROCK}").state is BreakerState.CLOSED


# ---------------------------------------------------------------------- failover and breakers
@pytest.mark.parametrize(("error", "step"), [
    (TimeoutError("read timed out"), "ModelTimeout"),
    (type("RateLimitError", (Exception,), {"status_code": 429})("slow down"), "ModelThrottled"),
    (ConnectionError("connection refused"), "ModelEndpointError"),
])
def test_a_failing_primary_fails_over_to_the_secondary_and_says_why(error: Exception, step: str) -> None:
    # Given a primary that fails this way
    gateway, _, vllm = two_rungs(bedrock_replies=[error], vllm_replies=["fine"])
    # When the router asks
    reply = gateway.text(Role.ROUTER, "router", PLAIN_ROUTER, customer_data=False)
    # Then the secondary answered and the steps name the primary's failure
    assert reply.steps == [f"{BEDROCK}: {step}", f"{VLLM}: answered"]


def test_every_rung_failing_raises_model_unavailable_with_every_step() -> None:
    # Given both rungs failing
    gateway, _, _ = two_rungs(bedrock_replies=[ConnectionError()], vllm_replies=[TimeoutError()])
    # When the router asks
    with pytest.raises(ModelUnavailable) as raised:
        gateway.text(Role.ROUTER, "router", PLAIN_ROUTER, customer_data=False)
    # Then the caller learns what each rung did
    assert raised.value.steps == [f"{BEDROCK}: ModelEndpointError", f"{VLLM}: ModelTimeout"]


def test_an_open_breaker_skips_its_endpoint_without_a_call() -> None:
    # Given a primary failing as often as its breaker tolerates
    threshold = BreakerConfig().failure_threshold
    gateway, bedrock, vllm = two_rungs(bedrock_replies=[ConnectionError()] * threshold,
                                       vllm_replies=["ok"] * (threshold + 1))
    for _ in range(threshold):
        gateway.text(Role.ROUTER, "router", PLAIN_ROUTER, customer_data=False)
    # When the router asks once more
    reply = gateway.text(Role.ROUTER, "router", PLAIN_ROUTER, customer_data=False)
    # Then the primary was skipped without a call
    assert reply.steps[0] == f"{BEDROCK}: circuit open"
    assert len(bedrock.calls) == threshold


@pytest.mark.parametrize(("exc", "kind"), [
    (type("ClientError", (Exception,), {"response": {"Error": {"Code": "ThrottlingException"}}})(),
     ModelThrottled),
    (type("ReadTimeoutError", (Exception,), {})(), ModelTimeout),
    (type("InternalServerError", (Exception,), {"status_code": 500})(), ModelEndpointError),
])
def test_provider_exceptions_are_typed(exc: Exception, kind: type) -> None:
    # Given an exception as a provider raises it
    # Then it becomes the matching typed model error
    assert isinstance(classify_failure(exc), kind)


def test_extract_json_refuses_text_without_an_object() -> None:
    # Given a plain sentence
    # Then there is nothing to repair
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("I cannot help with that.")


# --------------------------------------------------------------------------- usage and budget
def test_a_metered_turn_counts_calls_tokens_cost_and_steps() -> None:
    # Given Bedrock answering a harmless router question inside a metered turn
    gateway, _, _ = two_rungs(bedrock_replies=["fine"])
    with metered_turn() as usage:
        # When the router asks
        gateway.text(Role.ROUTER, "router", PLAIN_ROUTER, customer_data=False)
    # Then the call, its tokens, its list-price cost and the rung taken are on the meter
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 120, 30)
    assert usage.cost_usd == pytest.approx(price_of(BEDROCK, 120, 30)) and usage.cost_usd > 0
    assert usage.by_role == {"router": 1}
    assert usage.steps == [f"router {BEDROCK}: answered"]
    assert usage.as_trace()["model_calls"] == 1


def test_a_retry_counts_as_a_second_call_and_self_hosted_calls_cost_nothing() -> None:
    # Given a self-hosted model that needs the retry
    vllm = ScriptedChat(replies=["nonsense", '{"intent": "thanks", "confidence": 1}'])
    gateway = gateway_of([VLLM], {VLLM: vllm})
    with metered_turn() as usage:
        gateway.structured(Role.ROUTER, "router", PLAIN_ROUTER, Answer)
    # Then both calls are counted, with their tokens, at no cost
    assert (usage.calls, usage.input_tokens, usage.cost_usd) == (2, 240, 0.0)


def test_the_turn_budget_refuses_a_call_over_the_cap_without_sending_it() -> None:
    # Given a turn that has spent its two calls
    vllm = ScriptedChat(replies=["one", "two", "three"])
    gateway = gateway_of([VLLM], {VLLM: vllm})
    with metered_turn() as usage:
        gateway.text(Role.ROUTER, "router", PLAIN_ROUTER)
        gateway.text(Role.SUMMARISER, *WITH_CUSTOMER_DATA[Role.SUMMARISER])
        # When a third call is attempted
        with pytest.raises(ModelBudgetExhausted):
            gateway.text(Role.SUMMARISER, *WITH_CUSTOMER_DATA[Role.SUMMARISER])
    # Then it never reached the model, and the meter says it was refused
    assert len(vllm.calls) == 2 and (usage.calls, usage.refused) == (2, 1)


@pytest.mark.parametrize(("tasks", "cap"), [(0, 2), (1, 2), (2, 4), (3, 5), (5, 7)])
def test_the_plan_sets_the_budget_to_tasks_plus_two_for_compound_turns(tasks: int, cap: int) -> None:
    # Given a metered turn whose plan has this many tasks
    with metered_turn() as usage:
        usage.budget_for_tasks(tasks)
    # Then a single-intent turn keeps 2 calls and a compound one gets k + 2
    assert usage.cap == cap


def test_outside_a_metered_turn_nothing_is_counted_or_capped() -> None:
    # Given no metered turn (a tool Lambda, a script)
    vllm = ScriptedChat(replies=["a", "b", "c"])
    gateway = gateway_of([VLLM], {VLLM: vllm})
    # When three calls are made
    for _ in range(3):
        gateway.text(Role.ROUTER, "router", PLAIN_ROUTER)
    # Then all three went through
    assert len(vllm.calls) == 3


def test_the_router_schema_admits_only_known_intent_labels() -> None:
    # Given the schema the router asks models for
    from csagent.understanding_model import intent_descriptions, router_answer_schema

    schema = router_answer_schema()
    # Then the intent is an enum of exactly the label list (grammar-constrained decoders obey it)
    rendered = json.dumps(schema.model_json_schema())
    assert all(f'"{label}"' in rendered for label in intent_descriptions())
    # And an invented label is refused, so the repair hint or the next rung takes over
    with pytest.raises(ValidationError):
        schema.model_validate({"clauses": [{"clause": 1, "intent": "where", "confidence": 0.5}]})


def test_a_confidence_outside_zero_to_one_is_clamped_not_refused() -> None:
    # Given a decoder that does not enforce numeric bounds answers a confidence of 3 and of -1
    from csagent.understanding_model import router_answer_schema

    answer = router_answer_schema().model_validate({"clauses": [
        {"clause": 1, "intent": "warranty", "confidence": 3},
        {"clause": 2, "intent": "thanks", "confidence": -1}]})
    # Then they read as certain and as not at all
    assert [c.confidence for c in answer.clauses] == [1.0, 0.0]


@pytest.mark.parametrize("role", [Role.ROUTER, Role.TEXT2CYPHER])
def test_a_caller_cannot_declare_customer_data_away(role: Role) -> None:
    # Given Bedrock first and a prompt whose values carry an order id
    gateway, bedrock, vllm = two_rungs(vllm_replies=["an answer"])
    prompt, variables = WITH_CUSTOMER_DATA[role]
    # When the caller claims the prompt holds no customer data
    reply = gateway.text(role, prompt, variables, customer_data=False)
    # Then the detectors still decide: Bedrock is skipped
    assert bedrock.calls == [] and reply.model == VLLM
