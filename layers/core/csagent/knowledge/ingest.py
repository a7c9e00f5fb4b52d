"""Ingest the knowledge base into the store graph (GraphRAG's "knowledge part").

    (:Document {doc_id, title, kind, categories, products, source, content_hash})
        -[:HAS_CHUNK]->(:Chunk {chunk_id, doc_id, seq, section, text, embedding})
    (:Chunk)-[:MENTIONS]->(:Product)     product named in the chunk (section or text) or in the
                                          document's front matter
    (:Chunk)-[:MENTIONS]->(:Category)    category in the document's front matter, or a heading of
                                          the chunk's section path ("Warranty terms > Sports")

Mentions link to store nodes that already exist (products by name, case-insensitive; categories
by name): seed the store first, then ingest. `devstack.seed.loader.seed_store` keeps the
knowledge base and restores these links by chunk id when it re-creates the store.

Idempotent: re-ingesting a document deletes its chunks and writes them again with the same
ids, so counts never grow. Writes are batched `UNWIND $rows` statements through the
`GraphStore` port (each statement is its own transaction; a concurrent search may briefly see
a document without chunks while it is being replaced).
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
    Chunk,
    KnowledgeDoc,
    chunk_document,
    load_documents,
)

if TYPE_CHECKING:
    from csagent.ports import Embedder, GraphStore

DEFAULT_DOCS_DIR = Path(__file__).resolve().parent / "docs"
VECTOR_INDEX = "chunk_embedding"
FULLTEXT_INDEX = "chunk_text"
WRITE_BATCH = 64
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


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def chunk_rows(doc: KnowledgeDoc, chunks: Sequence[Chunk], resolver: MentionResolver,
               embeddings: Sequence[Sequence[float]]) -> tuple[list[dict[str, Any]], set[str], set[str]]:
    """Rows for the chunk write, plus the front-matter names that matched no store node."""
    doc_products, missing_products = resolver.product_ids(doc.products)
    doc_categories, missing_categories = resolver.category_names(doc.categories)
    rows = []
    for chunk, vector in zip(chunks, embeddings, strict=True):
        products = _unique([*doc_products, *resolver.products_in(f"{chunk.section}\n{chunk.text}")])
        categories = _unique([*doc_categories, *resolver.categories_in_section(chunk.section)])
        rows.append({"doc_id": doc.doc_id, "chunk_id": chunk.chunk_id, "product_ids": products,
                     "categories": categories,
                     "props": {"chunk_id": chunk.chunk_id, "doc_id": doc.doc_id, "seq": chunk.seq,
                               "section": chunk.section, "text": chunk.text,
                               "embedding": [float(x) for x in vector]}})
    return rows, set(missing_products), set(missing_categories)


# --------------------------------------------------------------------------- Cypher

_READ_PRODUCTS = "MATCH (p:Product) RETURN p.product_id AS product_id, p.name AS name"
_READ_CATEGORIES = "MATCH (c:Category) RETURN c.name AS name"

_DELETE_CHUNKS = """
UNWIND $doc_ids AS doc_id
CALL (doc_id) {
  MATCH (:Document {doc_id: doc_id})-[:HAS_CHUNK]->(c:Chunk) RETURN c
  UNION
  MATCH (c:Chunk {doc_id: doc_id}) RETURN c
}
DETACH DELETE c
RETURN count(*) AS deleted"""

_UPSERT_DOCUMENTS = """
UNWIND $rows AS row
MERGE (d:Document {doc_id: row.doc_id})
SET d.title = row.title, d.kind = row.kind, d.categories = row.categories,
    d.products = row.products, d.source = row.source, d.content_hash = row.content_hash,
    d.chunk_count = row.chunk_count"""

_WRITE_CHUNKS = """
UNWIND $rows AS row
MATCH (d:Document {doc_id: row.doc_id})
MERGE (c:Chunk {chunk_id: row.chunk_id})
SET c = row.props
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c, row
CALL (c, row) {
  UNWIND row.product_ids AS product_id
  MATCH (p:Product {product_id: product_id})
  MERGE (c)-[:MENTIONS]->(p)
  RETURN count(p) AS products
}
CALL (c, row) {
  UNWIND row.categories AS name
  MATCH (k:Category {name: name})
  MERGE (c)-[:MENTIONS]->(k)
  RETURN count(k) AS categories
}
RETURN sum(products) AS products, sum(categories) AS categories, count(c) AS chunks"""

_PRUNE_DOCUMENTS = """
MATCH (d:Document) WHERE NOT d.doc_id IN $doc_ids
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
WITH d, collect(c) AS chunks
FOREACH (c IN chunks | DETACH DELETE c)
DETACH DELETE d
RETURN count(d) AS removed"""


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


def ingest_knowledge(graph_or_driver: Any, embedder: Embedder, docs_dir: Path | str | None = None, *,
                     prune: bool = False, database: str = "neo4j",
                     max_chars: int = DEFAULT_MAX_CHARS, min_chars: int = DEFAULT_MIN_CHARS,
                     overlap: int = DEFAULT_OVERLAP) -> IngestReport:
    """Chunk, embed and write every document in `docs_dir` (the shipped knowledge base when None).

    `graph_or_driver` is a `GraphStore` or a neo4j `Driver`. With `prune=True` documents in the
    graph that are not in `docs_dir` are deleted with their chunks (use it when `docs_dir` is the
    whole knowledge base). Store nodes are only linked to, never created.
    """
    started = time.perf_counter()
    graph = as_graph_store(graph_or_driver, database)
    docs = load_documents(Path(docs_dir) if docs_dir is not None else DEFAULT_DOCS_DIR)
    resolver = MentionResolver.from_rows(graph.read(_READ_PRODUCTS), graph.read(_READ_CATEGORIES))

    chunks_by_doc = {doc.doc_id: chunk_document(doc, max_chars=max_chars, min_chars=min_chars,
                                                overlap=overlap) for doc in docs}
    all_chunks = [chunk for doc in docs for chunk in chunks_by_doc[doc.doc_id]]
    texts = [chunk.embedding_text for chunk in all_chunks]
    shipped = docs_dir is None and (max_chars, min_chars, overlap) == (
        DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, DEFAULT_OVERLAP)
    vectors = iter(_embed(embedder, texts, shipped_name="knowledge_chunks" if shipped else None))

    rows: list[dict[str, Any]] = []
    missing_products: set[str] = set()
    missing_categories: set[str] = set()
    for doc in docs:
        doc_chunks = chunks_by_doc[doc.doc_id]
        doc_rows, lost_products, lost_categories = chunk_rows(
            doc, doc_chunks, resolver, [next(vectors) for _ in doc_chunks])
        rows.extend(doc_rows)
        missing_products |= lost_products
        missing_categories |= lost_categories

    doc_ids = [doc.doc_id for doc in docs]
    graph.write(_DELETE_CHUNKS, {"doc_ids": doc_ids}, timeout_s=WRITE_TIMEOUT_S)
    graph.write(_UPSERT_DOCUMENTS, {"rows": [
        {"doc_id": doc.doc_id, "title": doc.title, "kind": doc.kind, "categories": list(doc.categories),
         "products": list(doc.products), "source": doc.source, "content_hash": doc.content_hash,
         "chunk_count": len(chunks_by_doc[doc.doc_id])} for doc in docs]}, timeout_s=WRITE_TIMEOUT_S)
    product_links = category_links = chunk_count = 0
    for start in range(0, len(rows), WRITE_BATCH):
        for out in graph.write(_WRITE_CHUNKS, {"rows": rows[start:start + WRITE_BATCH]},
                               timeout_s=WRITE_TIMEOUT_S):
            product_links += int(out.get("products") or 0)
            category_links += int(out.get("categories") or 0)
            chunk_count += int(out.get("chunks") or 0)
    removed = 0
    if prune:
        out_rows = graph.write(_PRUNE_DOCUMENTS, {"doc_ids": doc_ids}, timeout_s=WRITE_TIMEOUT_S)
        removed = int(out_rows[0]["removed"]) if out_rows else 0
    return IngestReport(documents=len(docs), chunks=chunk_count, product_mentions=product_links,
                        category_mentions=category_links, removed_documents=removed,
                        unresolved_products=tuple(sorted(missing_products)),
                        unresolved_categories=tuple(sorted(missing_categories)),
                        doc_ids=tuple(doc_ids), elapsed_ms=(time.perf_counter() - started) * 1000)
