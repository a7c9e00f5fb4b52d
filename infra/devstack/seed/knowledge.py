"""What the assistant reads besides the store: the knowledge base (chunks linked to the
store's products by id, so it is re-ingested after every store seed) and Text2Cypher's
few-shot example bank. `make seed` and the test fixtures both call `load_knowledge`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KnowledgeReport:
    knowledge: Any  # csagent.knowledge.ingest.IngestReport
    examples: Any  # csagent.tools.text2cypher.BankReport


def load_knowledge(driver: Any, *, database: str = "neo4j") -> KnowledgeReport:
    from csagent.adapters.neo4j_graph import Neo4jGraph
    from csagent.knowledge.ingest import ingest_knowledge
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools.text2cypher import ensure_example_bank

    knowledge = ingest_knowledge(driver, get_embedder(), prune=True, database=database)
    examples = ensure_example_bank(Neo4jGraph(driver, database), get_embedder())
    return KnowledgeReport(knowledge=knowledge, examples=examples)
