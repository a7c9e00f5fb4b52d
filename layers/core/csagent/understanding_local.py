"""The local tier's understanding of a message: no generative model.

Clauses from the rule-based splitter, one intent per clause from the MiniLM example
classifier (Chinese through a lexicon), entities from the rule-based extractors. An order
id mentioned once in the message, or given by the app (`order_id_hint`), serves every clause
that needs one and names none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from csagent.understanding import Clause, Understanding

GENERAL_INTENTS = frozenset({"greeting", "thanks", "smalltalk"})
HANDOFF_INTENTS = frozenset({"human_handoff"})
OUT_OF_SCOPE = "out_of_scope"
# Something shaped like an order id but with the wrong number of digits ("#W12345").
NEAR_ORDER_ID = re.compile(r"(?<![A-Za-z0-9])#?W\d{1,12}(?![A-Za-z0-9])", re.IGNORECASE)


def route_for(intents: list[str]) -> str:
    """The message's route from its clauses' intents: any actionable clause wins."""
    if any(i not in GENERAL_INTENTS | HANDOFF_INTENTS | {OUT_OF_SCOPE} for i in intents):
        return "knowledge_and_actions"
    if any(i in HANDOFF_INTENTS for i in intents):
        return "handoff"
    if intents and all(i in GENERAL_INTENTS for i in intents):
        return "general"
    if any(i in GENERAL_INTENTS for i in intents):
        return "general"
    return OUT_OF_SCOPE


class LocalUnderstanding:
    """`catalogue` returns the store's products ({product_id, name, options}) for fuzzy
    product matching; without it, products are only found through references."""

    def __init__(self, classifier: Any | None = None,
                 catalogue: Callable[[], list[dict[str, Any]]] | None = None) -> None:
        self._classifier = classifier
        self._catalogue = catalogue

    @property
    def classifier(self) -> Any:
        if self._classifier is None:
            from csagent.nlp.intents import get_intent_classifier

            self._classifier = get_intent_classifier()
        return self._classifier

    def understand(self, text: str, state: Mapping[str, Any]) -> Understanding:
        from csagent.nlp.clauses import segment
        from csagent.nlp.entities import extract_entities
        from csagent.nlp.intents import detect_language
        from csagent.nlp.reasons import find_cancel_reason

        lang = detect_language(text)
        catalogue = self._catalogue() if self._catalogue else None
        pieces = [c.text for c in segment(text)] or [text]
        predictions = self.classifier.classify_many(pieces)
        message_orders = extract_entities(text).order_ids
        fallback_order = message_orders[0] if len(message_orders) == 1 else state.get("order_id_hint")
        clauses: list[Clause] = []
        for piece, prediction in zip(pieces, predictions, strict=True):
            found = extract_entities(piece, catalogue)
            entities: dict[str, Any] = {}
            order_id = found.order_ids[0] if found.order_ids else fallback_order
            if order_id:
                entities["order_id"] = order_id
            else:
                near = NEAR_ORDER_ID.search(piece)
                if near:
                    entities["invalid_order_id"] = near.group(0)
            reason = find_cancel_reason(piece)
            if reason:
                entities["reason"] = reason
            if found.tracking_numbers:
                entities["tracking_number"] = found.tracking_numbers[0]
            if found.emails:
                entities["email"] = found.emails[0]
            if found.addresses:
                entities["address"] = found.addresses[0].as_dict()
            if found.products:
                entities["products"] = [{"product_id": p.product_id, "name": p.name, "options": p.options}
                                        for p in found.products if not p.ambiguous]
            product_refs = [r for r in found.references if r.kind == "product"]
            if product_refs:
                entities["reference"] = {"kind": "product", "hint": product_refs[0].hint}
            clauses.append(Clause(text=piece, intent=prediction.intent,
                                  confidence=round(float(prediction.confidence), 4), entities=entities))
        intents = [c.intent for c in clauses]
        route = route_for(intents)
        relevant = [c.confidence for c in clauses if route_for([c.intent]) == route] or [0.0]
        primary = next((c.intent for c in clauses if route_for([c.intent]) == route), intents[0])
        merged: dict[str, Any] = {}
        for clause in clauses:
            for key, value in clause.entities.items():
                merged.setdefault(key, value)
        return Understanding(route=route, intent=primary, confidence=max(relevant), lang=lang,
                             entities=merged, clauses=tuple(clauses))
