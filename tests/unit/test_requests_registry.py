"""The change requests' registry (`csagent.requests`) agrees with the parts that act on it: every
write it proposes is an action with wording, every read that answers a question about it is a
template, every intent is one the classifier and the router model know."""

from __future__ import annotations

from pathlib import Path

import yaml

from csagent.actions.kinds import kind
from csagent.actions.policy import ActionName
from csagent.nlp.intents import INTENTS
from csagent.requests import WRITE_REQUESTS
from csagent.tools.cypher_catalogue import load_catalogue

LABELS = Path(__file__).resolve().parents[2] / "layers" / "core" / "csagent" / "models" / "intent_labels.yaml"


def test_every_write_a_request_proposes_is_an_action_with_its_wording() -> None:
    for request in WRITE_REQUESTS:
        for action in request.proposes:
            assert ActionName(action).value == action
            assert kind(ActionName(action)).proposal and kind(ActionName(action)).done, action


def test_every_read_about_a_change_is_a_template() -> None:
    templates = {t.id for t in load_catalogue().templates}
    for request in WRITE_REQUESTS:
        assert set(request.about or ()) <= templates, request.intent


def test_every_request_intent_is_known_to_the_classifier_and_the_router_model() -> None:
    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    for request in WRITE_REQUESTS:
        assert request.intent in INTENTS and request.intent in labels, request.intent
        assert request.required and request.description


def test_a_request_about_an_order_names_its_statuses_and_needs_the_order() -> None:
    for request in WRITE_REQUESTS:
        assert bool(request.statuses) == ("order_id" in request.required), request.intent
