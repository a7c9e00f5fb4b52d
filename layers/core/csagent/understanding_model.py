"""The router with a generative model: the same `Understanding` as the local tier, with the
clauses' intents chosen by the ROUTER model.

What the model decides and what it does not:

- clauses come from the rule-based splitter (`csagent.nlp.clauses`), numbered in the prompt;
- the model labels each clause with one intent of the local tier's list (`nlp/data/intents.jsonl`)
  and a confidence; a label outside that list, or a clause the model skipped, is labelled by the
  local classifier instead, so every route stays one the graph has an edge for;
- entities come from the rule-based extractors, as in the local tier; values the model copies
  (order id, tracking number, e-mail, cancel reason) are merged under them, and only when they
  are literally in the message (an order id the customer did not write is never taken);
- when the ROUTER role has no model, or the model is unavailable (every rung failed, the turn's
  budget is spent, customer data with only Bedrock configured), the local tier answers alone.

One model call per message, whatever the number of clauses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from csagent.models.errors import ModelUnavailable
from csagent.models.roles import Role
from csagent.understanding import Clause, Understanding

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.models.gateway import ModelGateway
    from csagent.understanding_local import LocalUnderstanding

PROMPT = "router"


class ClauseEntities(BaseModel):
    """Values written in the clause itself (empty when the clause has none)."""

    order_id: str | None = None
    tracking_number: str | None = None
    email: str | None = None
    reason: str | None = None


class ClauseLabel(BaseModel):
    """The model's label for one numbered clause."""

    clause: int = Field(description="the clause's number, from 1")
    intent: str = Field(description="one intent label of the list")
    confidence: float = Field(description="from 0 to 1")
    entities: ClauseEntities = Field(default_factory=ClauseEntities)

    @field_validator("confidence", mode="before")
    @classmethod
    def _clamped(cls, value: Any) -> Any:
        """Into [0, 1]: grammar-constrained decoders (llama.cpp) do not enforce numeric bounds,
        and a confidence of 3 says "sure", not "unusable"."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return min(max(float(value), 0.0), 1.0)
        return value


class RouterAnswer(BaseModel):
    """What the router prompt asks for: one label per clause."""

    clauses: list[ClauseLabel]


@lru_cache(maxsize=1)
def router_answer_schema() -> type[RouterAnswer]:
    """`RouterAnswer` with `intent` restricted to the label list: providers that constrain decoding
    by the schema (tool calling, JSON-schema grammars) can then only answer with a known label."""
    labels = tuple(intent_descriptions())
    known: Any = Literal[labels]  # a Literal built from data: typed as Any for the checker
    label = create_model("ClauseLabel", __base__=ClauseLabel,
                         intent=(known, Field(description="one intent label of the list")))
    return create_model("RouterAnswer", __base__=RouterAnswer, clauses=(list[label], ...))  # type: ignore[valid-type]


@lru_cache(maxsize=1)
def intent_descriptions() -> dict[str, str]:
    """Intent label → what it means, for the prompt (`models/intent_labels.yaml`)."""
    from importlib import resources

    from csagent import yamlio

    text = resources.files("csagent.models").joinpath("intent_labels.yaml").read_text("utf-8")
    return {str(k): str(v) for k, v in (yamlio.safe_load(text) or {}).items()}


@lru_cache(maxsize=1)
def local_intents() -> frozenset[str]:
    """The intent labels of the local tier: the only labels a model answer may use."""
    from csagent.nlp.intents import load_examples

    return frozenset(e.intent for e in load_examples())


@dataclass(frozen=True)
class _Label:
    """An intent prediction in the shape `LocalUnderstanding` reads (intent, confidence)."""

    intent: str
    confidence: float


class _ModelLabeller:
    """A classifier for one message: one gateway call labels every clause; the local classifier
    labels what the model did not (or everything, when the model is unavailable)."""

    def __init__(self, gateway: ModelGateway, fallback: Any, message: str) -> None:
        self._gateway = gateway
        self._fallback = fallback
        self._message = message
        self.entities: dict[int, dict[str, str]] = {}

    def classify_many(self, pieces: Sequence[str]) -> list[Any]:
        labels = self._ask(pieces)
        missing = [i for i in range(len(pieces)) if i not in labels]
        if missing:
            for i, prediction in zip(missing, self._fallback.classify_many([pieces[i] for i in missing]),
                                     strict=True):
                labels[i] = prediction
        return [labels[i] for i in range(len(pieces))]

    def _ask(self, pieces: Sequence[str]) -> dict[int, Any]:
        clauses = "\n".join(f"{n}. {text}" for n, text in enumerate(pieces, start=1))
        intents = "\n".join(f"- {label}: {meaning}" for label, meaning in intent_descriptions().items())
        try:
            variables = {"message": self._message, "clauses": clauses, "intents": intents}
            reply = self._gateway.structured(Role.ROUTER, PROMPT, variables, router_answer_schema())
        except ModelUnavailable:
            return {}
        allowed = local_intents()
        labels: dict[int, Any] = {}
        for label in reply.value.clauses:
            index = label.clause - 1
            if 0 <= index < len(pieces) and index not in labels and label.intent in allowed:
                labels[index] = _Label(label.intent, round(float(label.confidence), 4))
                self.entities[index] = {k: str(v) for k, v in label.entities.model_dump().items() if v}
        return labels


def _checked_entities(proposed: Mapping[str, str], message: str) -> dict[str, str]:
    """The model's entity values that are literally in the message (normalised)."""
    from csagent.nlp.entities.identifiers import (
        find_emails,
        find_order_ids,
        find_tracking_numbers,
        normalise_order_id,
    )
    from csagent.nlp.reasons import find_cancel_reason

    checked: dict[str, str] = {}
    order_id = normalise_order_id(proposed.get("order_id", ""))
    if order_id and order_id in find_order_ids(message):
        checked["order_id"] = order_id
    tracking = proposed.get("tracking_number", "").strip()
    if tracking and tracking in find_tracking_numbers(message):
        checked["tracking_number"] = tracking
    email = proposed.get("email", "").strip().lower()
    if email and email in find_emails(message):
        checked["email"] = email
    reason = find_cancel_reason(proposed.get("reason", ""))
    if reason:
        checked["reason"] = reason
    return checked


class ModelUnderstanding:
    """`understand(text, state)` with the ROUTER model (see the module docstring)."""

    def __init__(self, gateway: ModelGateway, local: LocalUnderstanding,
                 catalogue: Callable[[], list[dict[str, Any]]] | None = None) -> None:
        self._gateway = gateway
        self._local = local
        self._catalogue = catalogue

    def understand(self, text: str, state: Mapping[str, Any]) -> Understanding:
        if not self._gateway.has_model(Role.ROUTER):
            return self._local.understand(text, state)
        from csagent.understanding_local import LocalUnderstanding

        labeller = _ModelLabeller(self._gateway, self._local.classifier, text)
        local = LocalUnderstanding(classifier=labeller, catalogue=self._catalogue)
        understood = local.understand(text, state)
        if not labeller.entities:
            return understood
        clauses = tuple(self._merge(clause, labeller.entities.get(i, {}), text)
                        for i, clause in enumerate(understood.clauses))
        merged: dict[str, Any] = {}
        for clause in clauses:
            for key, value in clause.entities.items():
                merged.setdefault(key, value)
        return replace(understood, clauses=clauses, entities=merged)

    @staticmethod
    def _merge(clause: Clause, proposed: Mapping[str, str], message: str) -> Clause:
        """The rule-based entities, plus the model's checked values for keys the rules left empty."""
        extra = {k: v for k, v in _checked_entities(proposed, message).items() if not clause.entities.get(k)}
        if not extra:
            return clause
        entities = {**clause.entities, **extra}
        if "order_id" in extra:
            entities.pop("invalid_order_id", None)
        return replace(clause, entities=entities)

