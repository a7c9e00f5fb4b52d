"""guard_input: what must not reach the planner. Empty or oversized text is refused; prompt
injection is screened (patterns plus similarity to known attacks): a pattern hit is refused. A
similarity-only hit (it can be a false alarm):

- goes on as it is when the understanding grounds it in the customer's own orders and what is left
  without the flagged sentences does not ("pls send order W8343509 to my home adress insted" is near
  an exfiltration attack by its words; every query is bound to the customer anyway);
- else loses the sentences that alone look like an attack when the rest screens clean ("I am so done
  with this store. Where is my camera?" goes on as its question; whether the dropped sentences ask
  something off-topic, as the understanding reads them, is recorded for `route`);
- else goes on as it is when the scope check calls it the store's business and each of its sentences
  screens clean alone (only their mixture came near an attack);
- else goes on as it is when it asks for a person (who reads it before anything runs);
- else gets the polite out-of-scope answer when the scope check also calls the message outside the
  business, else a clarifying question.

The scope check (anchored on the graph schema and the business-scope text) is recorded for
`route`. The understanding the guard runs is run once per text in a turn; when it read the text it
passes on to `route`, it passes that reading on too (`understood` in the state), and `route` uses it
rather than reading the same text again."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from csagent.graph.context import GraphDeps
from csagent.graph.state import State
from csagent.graph.timing import timed
from csagent.guardrails.injection import Trimmed, only_the_whole_is_flagged, without_flagged_sentences
from csagent.understanding import Understanding


def clean_text(text: str) -> str:
    """Drop control and format characters (except newlines and tabs), trim whitespace."""
    return "".join(
        ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co"}
    ).strip()


@timed("guard_input")
def guard_input(state: State, runtime: Runtime[GraphDeps]) -> dict[str, Any]:
    understood: dict[str, Understanding] = {}

    def understand(words: str) -> Understanding:
        """The turn's understanding of `words`, read once however often the guard asks."""
        if words not in understood:
            understood[words] = runtime.context.understand(words, state)
        return understood[words]

    update = _guard(state, runtime.context, understand)
    # A message passed on to `route` (no route decided here) whose text the guard already read:
    # `route` takes that reading instead of reading the same text again.
    kept = understood.get(update["text"]) if not update.get("route") else None
    return {**update, "understood": {"text": update["text"], "understanding": kept.as_dict()} if kept else {}}


def _guard(state: State, deps: GraphDeps, understand: Callable[[str], Understanding]) -> dict[str, Any]:
    text = clean_text(state.get("text", ""))
    if not text:
        return {"text": text, "route": "refused", "confidence": 1.0, "trace": {"guard": "empty_message"}}
    if len(text) > deps.max_message_chars:
        return {"text": text, "route": "refused", "confidence": 1.0, "trace": {"guard": "message_too_long"}}
    trace: dict[str, Any] = {"guard": "passed"}
    if deps.scope_check is not None:
        scope = deps.scope_check(text)
        trace["scope"] = {"in_scope": scope.in_scope, "area": scope.area}
    if deps.screen is not None:
        verdict = deps.screen(text)
        if verdict.blocked:
            guard = {"guard": "prompt_injection", "guard_reasons": list(verdict.reasons)}
            trimmed = without_flagged_sentences(text, deps.screen) if verdict.semantic_only else None
            if verdict.semantic_only and _drops_own_orders(text, trimmed, understand):
                # Similar to an attack by its words alone, and about the customer's own orders in
                # words the flagged sentences hold: what the tools read is the customer's whatever
                # the words, and a change is confirmed first.
                return {"text": text, "trace": {**trace, "guard": "passed_grounded",
                                                "guard_reasons": list(verdict.reasons)}}
            if trimmed is not None:
                # The flagged sentences are dropped, never passed on; the rest screened clean. Whether
                # they asked something off-topic tells `route` what courtesy left alone answers.
                off_topic = understand(trimmed.dropped).route == "out_of_scope"
                return {"text": trimmed.rest, "trace": {**trace, "guard": "passed_without_flagged_sentences",
                                                "guard_reasons": list(verdict.reasons),
                                                "dropped_off_topic": off_topic}}
            inside = trace.get("scope", {}).get("in_scope") is True
            if verdict.semantic_only and inside and only_the_whole_is_flagged(text, deps.screen):
                # A store message whose sentences each screen clean, near an attack only as a whole
                # (an address change reads a little like exfiltration): passed on, and traced.
                return {"text": text, "trace": {**trace, "guard": "passed_whole_text_only",
                                                "guard_reasons": list(verdict.reasons)}}
            if verdict.semantic_only and _asks_for_a_person(text, understand):
                # "I don't care what your system says. Put me through to someone who can actually
                # look at this.": near an attack by its words, and asking for a person, who reads it
                # (nothing runs before they do).
                return {"text": text, "trace": {**trace, "guard": "passed_person_asked",
                                                "guard_reasons": list(verdict.reasons)}}
            if verdict.semantic_only:
                # Only similar to an attack (can be a false alarm): a message outside the business
                # gets the polite out-of-scope answer, anything else a clarifying question.
                outside = trace.get("scope", {}).get("in_scope") is False
                return {"text": text, "route": "out_of_scope" if outside else "clarify", "confidence": 1.0,
                        "trace": {**trace, **guard}}
            return {"text": text, "route": "refused", "confidence": 1.0, "trace": guard}
    return {"text": text, "trace": trace}


def _asks_for_a_person(text: str, understand: Callable[[str], Understanding]) -> bool:
    """Does the message ask for a person, without a condition (`handoff.triggers.asks_for_person_now`)?"""
    from csagent.handoff.triggers import asks_for_person_now

    return asks_for_person_now(understand(text).clauses_as_dicts())


def _drops_own_orders(text: str, trimmed: Trimmed | None, understand: Callable[[str], Understanding]) -> bool:
    """Does the message refer to the customer's own orders (`grounded_in_customer_data`) where what
    is left without its flagged sentences (`trimmed`; None: nothing usable) does not, or do the
    flagged sentences name their orders themselves ("On my card statement I see 6305.19 from your
    shop. For which things is this?": the amount picks the order the question is about)?"""
    if not understand(text).grounded_in_customer_data():
        return False
    return trimmed is None or not understand(trimmed.rest).grounded_in_customer_data() \
        or understand(trimmed.dropped).grounded_in_customer_data()


def route_after_guard(state: State) -> str:
    return {"refused": "respond", "clarify": "clarify", "out_of_scope": "clarify"}.get(
        state.get("route") or "", "route")
