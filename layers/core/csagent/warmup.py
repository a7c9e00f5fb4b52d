"""Doing before the first request what every request needs.

`warm_fixed_texts()` loads (or, without the layer's arrays, computes) every fixed text set a
turn compares against and the intent model: the build step (`csagent.nlp.fixed_vectors`) runs it
to write the arrays, and a warm-up runs it to hold them in memory.
"""

from __future__ import annotations


def warm_fixed_texts() -> None:
    """The embedding model's session, the intent examples and model, the injection and scope
    anchors and the Cypher catalogue's examples, on the process-wide embedder."""
    from csagent.guardrails.injection import get_screen
    from csagent.guardrails.scope import get_scope_checker
    from csagent.nlp.embeddings import get_embedder
    from csagent.nlp.intents import get_intent_classifier
    from csagent.tools.cypher_catalogue import matcher_for

    embedder = get_embedder()
    embedder.load()
    get_intent_classifier().warm_up()
    get_screen().references()
    get_scope_checker().warm_up()
    matcher_for(embedder).warm_up()
