"""The few-shot example bank: question / Cypher pairs (`examples.yaml`) stored in Neo4j as
`(:CypherExample {example_id, question, cypher, embedding, content_hash})` with a vector index,
and retrieved by similarity to the customer's question.

- `ensure_example_bank(graph, embedder)` creates the constraint and the vector index if missing
  and loads the file idempotently: only new or changed examples are written (the shipped
  file's vectors come from the layer's arrays, `csagent.nlp.fixed_vectors`; others are embedded),
  and examples no longer in the file are removed. Call it where the store is provisioned (the seed,
  a deploy step); the Text2Cypher tool itself never writes.
- `ExampleBank.retrieve(question, k)` queries the vector index. When the bank is missing (not
  provisioned, index not online) it degrades to ranking the file's examples in memory with the
  same embedder, and says so in `RetrievedExample.source`.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from csagent.caching import TTLCache

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.ports import Embedder, GraphStore

logger = logging.getLogger(__name__)

EXAMPLES_PATH = Path(__file__).resolve().parent / "examples.yaml"
LABEL = "CypherExample"
VECTOR_INDEX = "cypher_example_embedding"
CONSTRAINT = "cypher_example_id"
MIN_EXAMPLES = 30
WRITE_TIMEOUT_S = 60.0
RETRIEVE_TIMEOUT_S = 2.0


class CypherExample(BaseModel):
    """One question with the Cypher that answers it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    question: str = Field(min_length=8, max_length=300)
    cypher: str = Field(min_length=10)

    def content_hash(self, embedding_model: str) -> str:
        """Changes when the text or the embedding model changes (then the example is re-embedded)."""
        payload = "\x1f".join((self.question, self.cypher.strip(), embedding_model))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


class ExampleFile(BaseModel):
    """The parsed `examples.yaml`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    examples: tuple[CypherExample, ...] = Field(min_length=MIN_EXAMPLES)

    @model_validator(mode="after")
    def _unique(self) -> ExampleFile:
        for field_name in ("id", "question"):
            values = [getattr(e, field_name) for e in self.examples]
            dupes = sorted({v for v in values if values.count(v) > 1})
            if dupes:
                raise ValueError(f"duplicate example {field_name}s: {dupes}")
        return self


@lru_cache(maxsize=4)
def load_examples(path: Path | str | None = None) -> tuple[CypherExample, ...]:
    """The examples of the file (default: the shipped `examples.yaml`), validated."""
    from csagent import yamlio

    raw = yamlio.load_file(Path(path or EXAMPLES_PATH))
    return ExampleFile.model_validate(raw).examples


def embedding_model_id(embedder: Embedder) -> str:
    """What identifies the vectors an embedder makes (its class and dimension)."""
    return f"{type(embedder).__name__}/{embedder.dimension}"


def example_bank_schema(dimension: int) -> list[str]:
    """DDL for the bank: a key constraint and the vector index (idempotent)."""
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= 4096:
        raise ValueError(f"embedding dimension must be an integer in 1..4096, got {dimension!r}")
    return [
        f"CREATE CONSTRAINT {CONSTRAINT} IF NOT EXISTS FOR (e:{LABEL}) REQUIRE e.example_id IS UNIQUE",
        f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (e:{LABEL}) ON (e.embedding) "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimension}, "
        "`vector.similarity_function`: 'cosine'}}",
    ]


def default_bank_vectors(embedder: Embedder) -> np.ndarray:
    """Vectors of the shipped examples' questions, in file order: the layer's arrays when fresh
    (`csagent.nlp.fixed_vectors`), else embedded now."""
    from csagent.nlp.fixed_vectors import fixed_vectors

    return fixed_vectors("cypher_examples", [e.question for e in load_examples()], embedder)


@dataclass(frozen=True)
class BankReport:
    """What `ensure_example_bank` changed."""

    created: int
    updated: int
    removed: int
    unchanged: int
    elapsed_ms: float


_EXISTING = f"MATCH (e:{LABEL}) RETURN e.example_id AS id, e.content_hash AS hash"
_UPSERT = f"""
UNWIND $rows AS row
MERGE (e:{LABEL} {{example_id: row.id}})
SET e.question = row.question, e.cypher = row.cypher, e.embedding = row.embedding,
    e.content_hash = row.hash"""
_REMOVE = f"MATCH (e:{LABEL}) WHERE NOT e.example_id IN $ids DETACH DELETE e RETURN count(*) AS removed"


def ensure_example_bank(graph: GraphStore, embedder: Embedder, *,
                        examples: Sequence[CypherExample] | None = None) -> BankReport:
    """Create the bank's constraint and index if missing and bring its content in line with the
    examples (default: the shipped file). Idempotent: a second call embeds and writes nothing."""
    started = time.perf_counter()
    shipped = examples is None
    examples = tuple(examples if examples is not None else load_examples())
    for statement in example_bank_schema(embedder.dimension):
        graph.write(statement, timeout_s=WRITE_TIMEOUT_S)
    model_id = embedding_model_id(embedder)
    stored = graph.read(_EXISTING, timeout_s=WRITE_TIMEOUT_S, max_rows=100_000)
    existing = {r["id"]: r["hash"] for r in stored}
    stale = [e for e in examples if existing.get(e.id) != e.content_hash(model_id)]
    if stale:
        if shipped:  # the layer's arrays (`csagent.nlp.fixed_vectors`), embedded only when stale
            by_id = dict(zip((e.id for e in examples), default_bank_vectors(embedder).tolist(), strict=True))
            vectors = [by_id[e.id] for e in stale]
        else:
            vectors = embedder.embed([e.question for e in stale])
        rows = [{"id": e.id, "question": e.question, "cypher": e.cypher.strip(),
                 "embedding": [float(x) for x in vector], "hash": e.content_hash(model_id)}
                for e, vector in zip(stale, vectors, strict=True)]
        graph.write(_UPSERT, {"rows": rows}, timeout_s=WRITE_TIMEOUT_S)
    removed_rows = graph.write(_REMOVE, {"ids": [e.id for e in examples]}, timeout_s=WRITE_TIMEOUT_S)
    graph.write("CALL db.awaitIndexes(120)", timeout_s=130.0)
    created = sum(1 for e in stale if e.id not in existing)
    return BankReport(created=created, updated=len(stale) - created,
                      removed=int(removed_rows[0]["removed"]) if removed_rows else 0,
                      unchanged=len(examples) - len(stale),
                      elapsed_ms=round((time.perf_counter() - started) * 1000.0, 3))


@dataclass(frozen=True)
class RetrievedExample:
    """A few-shot example chosen for a question, with its similarity and where it came from."""

    example_id: str
    question: str
    cypher: str
    score: float
    source: Literal["neo4j", "memory"]


_RETRIEVE = f"""
CALL db.index.vector.queryNodes('{VECTOR_INDEX}', $k, $embedding) YIELD node, score
RETURN node.example_id AS example_id, node.question AS question, node.cypher AS cypher, score"""

class ExampleBank:
    """Few-shot retrieval by vector similarity (Neo4j index, in-memory when it is missing).

    `vectors` keeps the in-memory ranking's normalised question vectors between banks; it must
    belong to `embedder` (`ToolCaches.example_vectors` of the tool context). Without it the bank
    keeps them for its own life only."""

    def __init__(self, graph: GraphStore, embedder: Embedder, *,
                 examples: Sequence[CypherExample] | None = None,
                 vectors: TTLCache[tuple[CypherExample, ...] | None, np.ndarray] | None = None) -> None:
        self.graph = graph
        self.embedder = embedder
        self._examples = tuple(examples) if examples is not None else None
        self._vectors = vectors if vectors is not None else TTLCache(math.inf, max_entries=1)

    @property
    def examples(self) -> tuple[CypherExample, ...]:
        return self._examples if self._examples is not None else load_examples()

    def retrieve(self, question: str, k: int = 4) -> list[RetrievedExample]:
        """The `k` examples closest to `question`, best first."""
        if k <= 0 or not question.strip():
            return []
        vector = [float(x) for x in self.embedder.embed([question])[0]]
        try:
            rows = self.graph.read(_RETRIEVE, {"k": k, "embedding": vector}, timeout_s=RETRIEVE_TIMEOUT_S,
                                   max_rows=k)
        except Exception as exc:  # noqa: BLE001 - degrade to the in-memory ranking
            logger.warning("example bank unavailable in Neo4j (%s); ranking in memory", type(exc).__name__)
            rows = []
        if rows:
            return [RetrievedExample(str(r["example_id"]), str(r["question"]), str(r["cypher"]),
                                     float(r["score"]), "neo4j") for r in rows]
        return self._rank_in_memory(vector, k)

    def _rank_in_memory(self, vector: Sequence[float], k: int) -> list[RetrievedExample]:
        import numpy as np

        examples = self.examples
        matrix = self._vectors.get_or_load(self._examples, self._question_vectors)
        query = np.asarray(vector, dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        scores = matrix @ query
        order = np.argsort(-scores)[:k]
        # Same scale as Neo4j's cosine score: (1 + cosine) / 2.
        return [RetrievedExample(examples[i].id, examples[i].question, examples[i].cypher.strip(),
                                 float((1.0 + scores[i]) / 2.0), "memory") for i in order]

    def _question_vectors(self) -> np.ndarray:
        """The examples' question vectors, one unit row each (the shipped file's from the layer)."""
        import numpy as np

        if self._examples is None:
            matrix = np.array(default_bank_vectors(self.embedder), dtype=np.float32)
        else:
            matrix = np.asarray(self.embedder.embed([e.question for e in self._examples]), dtype=np.float32)
        matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
        return matrix
