"""What the tools keep between calls about one graph store, read through one embedder.

One `ToolCaches` belongs to one store and one embedder: the composition root builds it beside
them (`csagent.runtime.tool_caches`, which the router's tool contexts and the tool Lambdas'
share) and every `ToolContext` carries it; a context built without one gets an empty one of
its own, so a cache is never shared by two stores. A catalogue change made in this process
clears it (`runtime.catalogue_sync`); other processes' entries go stale within their TTL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from csagent.caching import TTLCache

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.tools.cypher_catalogue import StoreVocabulary
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


@dataclass(frozen=True, eq=False)
class ToolCaches:
    """The store's vocabulary (one entry), Text2Cypher's value hints by (label, property), and
    the few-shot bank's normalised question vectors by example set (None: the shipped file)."""

    vocabulary: TTLCache[str, StoreVocabulary] = field(default_factory=_vocabulary)
    hint_values: TTLCache[tuple[str, str], tuple[str, ...]] = field(default_factory=_hint_values)
    example_vectors: TTLCache[tuple[CypherExample, ...] | None, np.ndarray] = field(
        default_factory=_example_vectors)

    def catalogue_changed(self) -> None:
        """Drop what the catalogue decides (the vocabulary, the value hints); the example
        vectors depend only on the embedder and stay."""
        self.vocabulary.clear()
        self.hint_values.clear()
