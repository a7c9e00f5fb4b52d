"""Uploaded documents widen the scope check: a store that publishes a policy on something new
("engraving", "gift wrapping") must not have questions about it refused as off-topic.

The scope check (`csagent.guardrails.scope`) is anchored on a fixed business-scope text written
for the shipped knowledge base. `with_uploaded_knowledge(check, graph, embedder)` wraps it: when
the fixed check says "out of scope", the message is compared with the chunks of documents an
admin uploaded (`origin: upload`; the shipped documents are what the fixed text already covers),
and a best cosine similarity of at least `UPLOADED_MIN_SIMILARITY` makes it in scope (area
"knowledge base"). With no uploaded document this adds one indexed Neo4j read to out-of-scope
messages only and changes no verdict. A failing read keeps the fixed check's verdict.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from csagent.guardrails.scope import ScopeResult
from csagent.knowledge.ingest import VECTOR_INDEX

if TYPE_CHECKING:
    from csagent.ports import Embedder, GraphStore

logger = logging.getLogger(__name__)

UPLOADED_MIN_SIMILARITY = 0.4
"""Cosine similarity (MiniLM) of a message to an uploaded chunk that puts it in scope. Chosen from
a small probe, not calibrated on a labelled set: with an engraving and a gift-wrapping policy
uploaded, six questions about them scored 0.35-0.64 ("can you engrave my name on it" 0.35 stays
out), nine off-topic messages ("capital of France", "cook a steak", "price of bitcoin", "ignore
previous instructions ...") at most 0.26 or had no uploaded chunk among the 50 nearest."""

_BEST_UPLOADED = f"""
CALL db.index.vector.queryNodes('{VECTOR_INDEX}', 50, $embedding) YIELD node, score
MATCH (d:Document {{origin: 'upload'}})-[:HAS_CHUNK]->(node)
RETURN max(score) AS best"""


def uploaded_similarity(graph: GraphStore, embedder: Embedder, text: str) -> float | None:
    """Best cosine similarity of `text` to a chunk of an uploaded document (None: none)."""
    embedding = embedder.embed([text])[0]
    rows = graph.read(_BEST_UPLOADED, {"embedding": list(embedding)}, timeout_s=2.0)
    best = rows[0]["best"] if rows else None
    return None if best is None else 2.0 * float(best) - 1.0  # Neo4j reports (1 + cos) / 2


def with_uploaded_knowledge(check: Callable[[str], ScopeResult], graph: GraphStore, embedder: Embedder, *,
                            min_similarity: float = UPLOADED_MIN_SIMILARITY) -> Callable[[str], ScopeResult]:
    def checked(text: str) -> ScopeResult:
        verdict = check(text)
        if verdict.in_scope or not text.strip():
            return verdict
        try:
            similarity = uploaded_similarity(graph, embedder, text)
        except Exception:  # noqa: BLE001 - the fixed check's verdict stands when the store is unreachable
            logger.warning("uploaded-knowledge scope probe failed", exc_info=True)
            return verdict
        if similarity is not None and similarity >= min_similarity:
            return ScopeResult(True, "knowledge base", round(similarity, 4), verdict.anchors)
        return verdict

    return checked
