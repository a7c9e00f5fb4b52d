"""What the tools keep between calls about one graph store, read through one embedder.

One `ToolCaches` belongs to one store and one embedder: the composition root builds it beside
them (`csagent.runtime.tool_caches`, which the router's tool contexts, its understanding path
and warm-up, and the tool Lambdas' share) and every `ToolContext` carries it; a context built
without one gets an empty one of its own, so a cache is never shared by two stores. A catalogue
change made in this process clears what the store decides (`runtime.catalogue_sync`); other
processes' entries go stale within their TTL. The template matchers depend only on the embedder
and the template file, so they stay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from csagent.caching import IdentityCache, TTLCache

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.knowledge.asked import ShippedQuestions
    from csagent.tools.cypher_catalogue import StoreVocabulary, TemplateMatcher
    from csagent.tools.text2cypher.examples import CypherExample

#: The store's catalogue words (`cypher_catalogue.store_vocabulary`): product names, categories
#: and option texts change rarely, and a stale one only means a new name is recognised later.
VOCABULARY_TTL_S = 600.0
#: Stored values of a catalogue property that Text2Cypher's value check offers as close spellings.
HINT_VALUES_TTL_S = 600.0


def _vocabulary() -> TTLCache[str, StoreVocabulary]:
    return TTLCache(VOCABULARY_TTL_S, max_entries=1)


def _hint_values() -> TTLCache[tuple[str, str], tuple[str, ...]]:
    return TTLCache(HINT_VALUES_TTL_S)


def _example_vectors() -> TTLCache[tuple[CypherExample, ...] | None, np.ndarray]:
    return TTLCache(math.inf, max_entries=8)  # a function of the embedder and the texts alone


def _asked() -> ShippedQuestions:
    from csagent.knowledge.asked import ShippedQuestions

    return ShippedQuestions()


@dataclass(frozen=True, eq=False)
class ToolCaches:
    """The store's vocabulary (one entry), Text2Cypher's value hints by (label, property), the
    few-shot bank's normalised question vectors by example set (None: the shipped file), the
    template matchers by (embedder, catalogue) (`cypher_catalogue.matcher_for`: a catalogue's
    examples embedded and its model trained once per pair), and the knowledge documents' asked
    questions by embedder (`knowledge.asked`). The last two are kept in `caching.IdentityCache`s:
    built once per embedder, under the cache's lock."""

    vocabulary: TTLCache[str, StoreVocabulary] = field(default_factory=_vocabulary)
    hint_values: TTLCache[tuple[str, str], tuple[str, ...]] = field(default_factory=_hint_values)
    example_vectors: TTLCache[tuple[CypherExample, ...] | None, np.ndarray] = field(
        default_factory=_example_vectors)
    matchers: IdentityCache[TemplateMatcher] = field(default_factory=IdentityCache)
    asked: ShippedQuestions = field(default_factory=_asked)

    def catalogue_changed(self) -> None:
        """Drop what the catalogue decides (the vocabulary, the value hints); the example
        vectors, the template matchers and the asked questions depend only on the embedder and the
        shipped texts, and stay."""
        self.vocabulary.clear()
        self.hint_values.clear()
