"""Ingest the knowledge base into the store graph (GraphRAG's "knowledge part").

    (:Document {doc_id, version, content_hash, title, kind, format, origin, categories, products, ...})
        -[:HAS_CHUNK]->(:Chunk {chunk_id, doc_id, seq, section, text, content_hash, doc_version,
                                embedding})
    (:Chunk)-[:MENTIONS]->(:Product)     product named in the chunk (section or text) or in the
                                          document's front matter
    (:Chunk)-[:MENTIONS]->(:Category)    category in the document's front matter, or a heading of
                                          the chunk's section path ("Warranty terms > Sports")

Mentions link to store nodes that already exist (products by name, case-insensitive; categories
by name): seed the store first, then ingest. `devstack.seed.loader.seed_store` keeps the
knowledge base and restores these links by chunk id when it re-creates the store.

`ingest_knowledge` is the offline full build, through the knowledge-base service
(`csagent.knowledge.service`): incremental by content hash, one transaction per changed document
(`adapters.neo4j_knowledge`), so a concurrent search sees a document's old version or its new one.
This module keeps what the service and the search share: the schema, the mention resolver, the
shipped vectors.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from csagent.knowledge.chunking import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MIN_CHARS,
    DEFAULT_OVERLAP,
    SECTION_SEPARATOR,
    chunk_document,
    load_documents,
)

if TYPE_CHECKING:
    from csagent.ports import Embedder, GraphStore, KnowledgeIndex

DEFAULT_DOCS_DIR = Path(__file__).resolve().parent / "docs"
VECTOR_INDEX = "chunk_embedding"
FULLTEXT_INDEX = "chunk_text"
EMBED_BATCH = 32
WRITE_TIMEOUT_S = 60.0


def knowledge_schema(dimension: int = 384) -> list[str]:
    """DDL for the knowledge part: key constraints, the vector and the fulltext index.

    `infra/devstack/schema.cypher` owns the schema of the local stack (the layer cannot import
    devstack); these statements mirror its knowledge part with the same names and IF NOT EXISTS,
    so applying both is a no-op. Used by the evaluation and by environments without devstack.
    """
    return [
        "CREATE CONSTRAINT doc_id IF NOT EXISTS FOR (d:Document) REQUIRE d.doc_id IS UNIQUE",
        "CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.chunk_id IS UNIQUE",
        f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (c:Chunk) ON c.embedding "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimension)}, "
        "`vector.similarity_function`: 'cosine'}}",
        f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text, c.section]",
    ]


def ensure_knowledge_schema(graph: GraphStore, dimension: int = 384) -> None:
    """Create the knowledge constraints and indexes if they are missing, and wait until online."""
    for statement in knowledge_schema(dimension):
        graph.write(statement)
    graph.write("CALL db.awaitIndexes(120)", timeout_s=130.0)


@dataclass(frozen=True)
class IngestReport:
    """What an ingest run wrote."""

    documents: int
    chunks: int
    product_mentions: int
    category_mentions: int
    removed_documents: int = 0
    unresolved_products: tuple[str, ...] = ()
    unresolved_categories: tuple[str, ...] = ()
    doc_ids: tuple[str, ...] = field(default=(), repr=False)
    elapsed_ms: float = 0.0
    embedded: int = 0
    unchanged_documents: int = 0


# --------------------------------------------------------------------------- mentions


def _name_pattern(name: str) -> re.Pattern[str]:
    """Whole-phrase, case-insensitive match of a product name, plural allowed ("Laptops")."""
    words = [re.escape(word) for word in name.split()]
    return re.compile(r"(?<![\w-])" + r"\s+".join(words) + r"(?:s|es)?(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class MentionResolver:
    """Finds the store's products and categories a chunk talks about."""

    products: Mapping[str, str]  # lower-cased product name -> product_id
    categories: Mapping[str, str]  # lower-cased category name -> category name as stored
    _patterns: tuple[tuple[str, re.Pattern[str]], ...] = field(default=(), repr=False)

    @classmethod
    def from_rows(cls, products: Iterable[Mapping[str, Any]],
                  categories: Iterable[Mapping[str, Any]]) -> MentionResolver:
        """From `{product_id, name}` and `{name}` rows as the graph returns them."""
        by_name = {str(row["name"]).strip().lower(): str(row["product_id"])
                   for row in products if row.get("name") and row.get("product_id")}
        cats = {str(row["name"]).strip().lower(): str(row["name"]) for row in categories if row.get("name")}
        # Longest names first, so "Smart Watch" is tried before any shorter overlapping name.
        patterns = tuple((pid, _name_pattern(name))
                         for name, pid in sorted(by_name.items(), key=lambda kv: -len(kv[0])))
        return cls(products=by_name, categories=cats, _patterns=patterns)

    def products_in(self, text: str) -> list[str]:
        """Product ids whose name occurs in `text`, in catalogue order of discovery."""
        return [pid for pid, pattern in self._patterns if pattern.search(text)]

    def product_ids(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """`(resolved ids, unresolved names)` for front-matter product names."""
        found: list[str] = []
        missing: list[str] = []
        for name in names:
            pid = self.products.get(name.strip().lower())
            (found if pid else missing).append(pid or name)
        return found, missing

    def category_names(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """`(stored names, unresolved names)` for category names."""
        found: list[str] = []
        missing: list[str] = []
        for name in names:
            stored = self.categories.get(name.strip().lower())
            (found if stored else missing).append(stored or name)
        return found, missing

    def categories_in_section(self, section: str) -> list[str]:
        """Categories that are a heading of the section path ("Warranty terms > Outdoor")."""
        return [self.categories[part.strip().lower()] for part in section.split(SECTION_SEPARATOR)
                if part.strip().lower() in self.categories]


# --------------------------------------------------------------------------- running


def as_graph_store(graph_or_driver: Any, database: str = "neo4j") -> GraphStore:
    """A `GraphStore` as is, or a neo4j `Driver` wrapped in the Neo4j adapter."""
    if hasattr(graph_or_driver, "read") and hasattr(graph_or_driver, "write"):
        return graph_or_driver  # type: ignore[no-any-return]
    if hasattr(graph_or_driver, "session"):
        from csagent.adapters.neo4j_graph import Neo4jGraph

        return Neo4jGraph(graph_or_driver, database=database, default_timeout_s=WRITE_TIMEOUT_S)
    raise TypeError(f"expected a GraphStore or a neo4j Driver, got {type(graph_or_driver).__name__}")


def default_chunk_texts() -> list[str]:
    """What `ingest_knowledge` embeds for the shipped knowledge base with the default chunking."""
    return [chunk.embedding_text for doc in load_documents(DEFAULT_DOCS_DIR)
            for chunk in chunk_document(doc)]


def _embed(embedder: Embedder, texts: Sequence[str], *,
           shipped_name: str | None = None) -> list[list[float]]:
    """The vectors of `texts`: the layer's arrays under `shipped_name` when fresh
    (`csagent.nlp.fixed_vectors`), else embedded in batches; checked for count and dimension."""
    from csagent.nlp.fixed_vectors import fingerprint_of, fixed_vectors

    vectors: list[list[float]] = []
    if shipped_name is not None and fingerprint_of(embedder) is not None:
        vectors = fixed_vectors(shipped_name, texts, embedder).tolist()
    else:
        for start in range(0, len(texts), EMBED_BATCH):
            vectors.extend(embedder.embed(texts[start:start + EMBED_BATCH]))
    if len(vectors) != len(texts):
        raise ValueError(f"embedder returned {len(vectors)} vectors for {len(texts)} texts")
    dimension = getattr(embedder, "dimension", None)
    if dimension and any(len(v) != dimension for v in vectors):
        raise ValueError(f"embedder returned vectors that are not {dimension}-dimensional")
    return vectors


def knowledge_index(graph_or_driver: Any, database: str = "neo4j") -> KnowledgeIndex:
    """The Neo4j `KnowledgeIndex` over a neo4j `Driver` or a `Neo4jGraph` (its driver)."""
    from csagent.adapters.neo4j_knowledge import Neo4jKnowledgeIndex

    driver = graph_or_driver
    if not hasattr(driver, "session"):
        driver = getattr(graph_or_driver, "driver", None)
    if driver is None or not hasattr(driver, "session"):
        raise TypeError(f"expected a neo4j Driver or a Neo4jGraph, got {type(graph_or_driver).__name__}")
    return Neo4jKnowledgeIndex(driver, database=getattr(graph_or_driver, "_database", database))


def shipped_vectors(embedder: Embedder) -> dict[str, list[float]]:
    """The layer's precomputed vectors of the shipped documents' chunks, by chunk hash (empty
    when the embedder is not the one they were made with)."""
    docs = load_documents(DEFAULT_DOCS_DIR)
    chunks = [c for doc in docs for c in chunk_document(doc)]
    texts = [c.embedding_text for c in chunks]
    from csagent.nlp.fixed_vectors import fingerprint_of

    if fingerprint_of(embedder) is None:
        return {}
    vectors = _embed(embedder, texts, shipped_name="knowledge_chunks")
    return {c.content_hash: v for c, v in zip(chunks, vectors, strict=True)}


_LINK_COUNTS = """
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.doc_id IN $doc_ids
RETURN count(c) AS chunks, sum(COUNT { (c)-[:MENTIONS]->(:Product) }) AS products,
       sum(COUNT { (c)-[:MENTIONS]->(:Category) }) AS categories"""


def ingest_knowledge(graph_or_driver: Any, embedder: Embedder, docs_dir: Path | str | None = None, *,
                     prune: bool = False, database: str = "neo4j",
                     max_chars: int = DEFAULT_MAX_CHARS, min_chars: int = DEFAULT_MIN_CHARS,
                     overlap: int = DEFAULT_OVERLAP) -> IngestReport:
    """The offline full build of `docs_dir` (the shipped knowledge base when None), through the
    knowledge-base service (`csagent.knowledge.service.KnowledgeBase.rebuild`): unchanged
    documents are skipped by content hash, changed ones swapped in one transaction each, and every
    chunk re-linked to the catalogue as it is now.

    `graph_or_driver` is a `Neo4jGraph` or a neo4j `Driver`. With `prune=True` shipped documents
    that are not in `docs_dir` are deleted with their chunks (uploaded documents are kept). Store
    nodes are only linked to, never created. The report counts what the documents hold after the
    build (so a second run reports the same numbers), plus what this run embedded.
    """
    from csagent.knowledge.service import KnowledgeBase

    started = time.perf_counter()
    folder = Path(docs_dir) if docs_dir is not None else DEFAULT_DOCS_DIR
    index = knowledge_index(graph_or_driver, database)
    shipped = docs_dir is None and (max_chars, min_chars, overlap) == (
        DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, DEFAULT_OVERLAP)
    base = KnowledgeBase(index, embedder, max_chars=max_chars, min_chars=min_chars, overlap=overlap,
                         known_vectors=shipped_vectors(embedder) if shipped else {})
    report = base.rebuild(folder, prune=prune)
    docs = load_documents(folder)
    resolver = MentionResolver.from_rows(*index.catalogue())
    missing_products = {name for doc in docs for name in resolver.product_ids(doc.products)[1]}
    missing_categories = {name for doc in docs for name in resolver.category_names(doc.categories)[1]}
    doc_ids = [r.document_id for r in report.results]
    graph = as_graph_store(graph_or_driver, database)
    counts = graph.read(_LINK_COUNTS, {"doc_ids": doc_ids})[0]
    return IngestReport(documents=len(doc_ids), chunks=int(counts["chunks"] or 0),
                        product_mentions=int(counts["products"] or 0),
                        category_mentions=int(counts["categories"] or 0),
                        removed_documents=len(report.removed_documents),
                        unresolved_products=tuple(sorted(missing_products)),
                        unresolved_categories=tuple(sorted(missing_categories)),
                        doc_ids=tuple(doc_ids), elapsed_ms=(time.perf_counter() - started) * 1000,
                        embedded=report.embedded,
                        unchanged_documents=sum(r.unchanged for r in report.results))
