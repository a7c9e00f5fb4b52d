"""The versioned prompt files: every one loads, declares exactly the placeholders it uses, and
renders with realistic variables into the messages its node sends."""

from __future__ import annotations

import pytest

from csagent.models.prompts import available, load_prompt, parse_prompt
from csagent.models.roles import Role
from csagent.planning import TASK_CATALOGUE
from csagent.understanding_model import intent_descriptions, local_intents

ORDER = "#W2611340"
#: Each prompt with the variables its node gives it on a realistic turn.
REALISTIC: dict[str, dict[str, str]] = {
    "router": {"message": f"where is {ORDER} and what is the warranty on those headphones?",
               "clauses": f"1. where is {ORDER}\n2. what is the warranty on those headphones?",
               "intents": "\n".join(f"- {k}: {v}" for k, v in intent_descriptions().items())},
    "planner": {"message": f"cancel {ORDER}, I ordered it by mistake, and where is my other order #W7654321",
                "clauses": f"1. cancel {ORDER} (intent: cancel_order)\n2. where is my other order #W7654321 "
                           "(intent: order_status)",
                "catalogue": "\n".join(f"- {k}: {v}" for k, v in TASK_CATALOGUE.items()),
                "order_ids": f"{ORDER}, #W7654321"},
    "summariser": {"language": "English", "message": f"where is {ORDER}? and the warranty?",
                   "results": f"1. DONE: Order {ORDER} is on its way with UPS (tracking 111122223333).\n"
                              "2. FAILED: I could not look up the warranty right now. "
                              "Please try again later.",
                   "must_mention": f'"{ORDER}", "warranty"'},
    "text2cypher": {"schema": "(:Product)-[:HAS_VARIANT]->(:Variant)",
                    "question": "Which laptops cost under $900?"},
    "text2cypher_correct": {"question": "Which laptops cost under $900?",
                            "cypher": "MATCH (p:Product) RETURN p", "errors": "- return named columns"},
    "image": {"media_type": "image/jpeg"},
    "repair": {"error": "the JSON does not match the schema (confidence: less than or equal to 1)",
               "schema": '{"type": "object"}'},
}


def test_every_prompt_file_has_a_realistic_rendering_test() -> None:
    # Given the prompt files beside the model layer
    # Then each one is rendered below (a new prompt needs its variables here)
    assert set(available()) == set(REALISTIC)


@pytest.mark.parametrize("name", sorted(REALISTIC))
def test_every_prompt_renders_every_variable_and_leaves_no_placeholder(name: str) -> None:
    # Given the latest version of the prompt and a realistic turn's variables
    prompt = load_prompt(name)
    # When it is rendered
    messages = prompt.render(**REALISTIC[name])
    text = "\n".join(str(m.content) for m in messages)
    # Then every value is in it and no placeholder is left; the user message comes last
    assert all(value in text for value in REALISTIC[name].values())
    assert "{{" not in text and messages[-1].type == "human"


@pytest.mark.parametrize("name", sorted(REALISTIC))
def test_every_prompt_declares_its_role(name: str) -> None:
    # Given a prompt file
    prompt = load_prompt(name)
    # Then its role is a real role (or none: the repair hint serves every role)
    assert prompt.role is None if name == "repair" else isinstance(prompt.role, Role)


def test_the_router_prompt_lists_exactly_the_local_intents() -> None:
    # Given the intent descriptions the router prompt shows
    # Then they are the local tier's labels, no more, no fewer
    assert set(intent_descriptions()) == local_intents()


def test_a_missing_or_unknown_variable_is_refused() -> None:
    # Given the summariser prompt
    prompt = load_prompt("summariser")
    # Then rendering without a variable, or with an unknown one, fails loudly
    with pytest.raises(KeyError, match="missing variables \\['must_mention'\\]"):
        prompt.render(language="English", message="hi", results="1. DONE")
    with pytest.raises(KeyError, match="unknown variables \\['extra'\\]"):
        prompt.render(**REALISTIC["summariser"], extra="x")


def test_a_pinned_version_is_loaded_and_an_unknown_one_refused() -> None:
    # Given the router prompt at version 1
    assert load_prompt("router", "1").version == "1"
    # Then an unknown version or prompt name is a precise error
    with pytest.raises(KeyError, match="no version"):
        load_prompt("router", "99")
    with pytest.raises(KeyError, match="no prompt named"):
        load_prompt("no_such_prompt")


@pytest.mark.parametrize(("text", "message"), [
    ("no front matter", "starts with '---' front matter"),
    ("---\nname: x\nversion: 1\nrole: router\n---\n## user\nhi", "has no 'variables'"),
    ("---\nname: x\nversion: 1\nrole: router\nvariables: [a]\n---\n## user\nhi {{b}}",
     "differ from the declared"),
    ("---\nname: x\nversion: 1\nrole: router\nvariables: []\n---\n## system\nonly a system part",
     "no '## user' section"),
])
def test_a_broken_prompt_file_is_refused_with_the_reason(text: str, message: str) -> None:
    # Given a malformed prompt file
    # Then it is refused when loaded, saying what is wrong
    with pytest.raises(ValueError, match=message):
        parse_prompt(text, "x.v1.md")
