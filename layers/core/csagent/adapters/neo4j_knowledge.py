"""`KnowledgeIndex` on Neo4j: documents, chunks (vector and fulltext indexed) and their MENTIONS.

    (:Document {doc_id, version, content_hash, title, kind, format, origin, source, chunk_count,
                updated_at, updated_by, pages, pages_without_text, categories, products})
        -[:HAS_CHUNK]->(:Chunk {chunk_id, doc_id, seq, section, text, content_hash, doc_version,
                                embedding})-[:MENTIONS]->(:Product | :Category)

An ingest's write is one transaction (`replace_document`): it locks the document node first
(so concurrent ingests of one document serialise and the later one sees the version moved),
removes the chunks the new version no longer has, and writes every chunk and its links. Neo4j
updates the vector and fulltext indexes as part of the commit, so the first search after the
call returns already sees the new version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from csagent.adapters.neo4j_graph import _classified
from csagent.domain.errors import Conflict, DomainError

WRITE_TIMEOUT_S = 60.0
READ_TIMEOUT_S = 10.0

_DOC_FIELDS = """d {.doc_id, .version, .content_hash, .title, .kind, .format, .origin, .source,
  .chunk_count, .updated_at, .updated_by, .pages, .pages_without_text, .categories, .products}"""

_LOCK = """
MERGE (d:Document {doc_id: $doc_id})
ON CREATE SET d.version = 0
SET d.locked = true
RETURN d.version AS version"""

_REMOVE_STALE = """
MATCH (c:Chunk) WHERE c.doc_id = $doc_id AND NOT c.chunk_id IN $chunk_ids
DETACH DELETE c"""

_WRITE_DOCUMENT = """
MATCH (d:Document {doc_id: $doc_id})
SET d += $props
REMOVE d.locked"""

# A chunk's MENTIONS replaced by the products and categories of `row` (with `c` and `row` in scope).
_RELINK = """
CALL (c) { MATCH (c)-[m:MENTIONS]->() DELETE m }
CALL (c, row) {
  UNWIND row.product_ids AS product_id
  MATCH (p:Product {product_id: product_id})
  MERGE (c)-[:MENTIONS]->(p)
  RETURN count(*) AS products
}
CALL (c, row) {
  UNWIND row.categories AS name
  MATCH (k:Category {name: name})
  MERGE (c)-[:MENTIONS]->(k)
  RETURN count(*) AS categories
}"""

_WRITE_CHUNKS = """
UNWIND $rows AS row
MATCH (d:Document {doc_id: $doc_id})
MERGE (c:Chunk {chunk_id: row.chunk_id})
SET c = row.props
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c, row""" + _RELINK + """
RETURN count(c) AS chunks"""

_DELETE = """
MATCH (d:Document {doc_id: $doc_id})
OPTIONAL MATCH (c:Chunk) WHERE c.doc_id = $doc_id OR (d)-[:HAS_CHUNK]->(c)
WITH d, collect(DISTINCT c) AS chunks
FOREACH (c IN chunks | DETACH DELETE c)
DETACH DELETE d
RETURN count(d) AS deleted"""

_FOR_LINKING = """
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)
WHERE $doc_ids IS NULL OR d.doc_id IN $doc_ids
RETURN c.chunk_id AS chunk_id, c.section AS section, c.text AS text,
       coalesce(d.products, []) AS doc_products, coalesce(d.categories, []) AS doc_categories,
       [(c)-[:MENTIONS]->(p:Product) | p.product_id] AS product_ids,
       [(c)-[:MENTIONS]->(k:Category) | k.name] AS categories"""

_SET_MENTIONS = """
UNWIND $rows AS row
MATCH (c:Chunk {chunk_id: row.chunk_id})""" + _RELINK + """
RETURN sum(products) + sum(categories) AS links"""


class Neo4jKnowledgeIndex:
    """The knowledge index on a neo4j `Driver` (multi-statement write transactions)."""

    def __init__(self, driver: Any, database: str = "neo4j") -> None:
        self._driver = driver
        self._database = database

    def _read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        from neo4j import unit_of_work

        @unit_of_work(timeout=READ_TIMEOUT_S)
        def work(tx: Any) -> list[dict[str, Any]]:
            return [record.data() for record in tx.run(cypher, dict(params or {}))]

        def run() -> list[dict[str, Any]]:
            # The document projection names optional properties on purpose: a fresh store would
            # log a "property key does not exist" notification for each one.
            with self._driver.session(database=self._database,
                                      notifications_min_severity="OFF") as session:
                return session.execute_read(work)

        return _classified(run)

    def _write(self, work: Any) -> Any:
        from neo4j import unit_of_work

        def run() -> tuple[Any, DomainError | None]:
            # A domain error raised inside the transaction (Conflict) rolls it back and is the
            # caller's answer, not a store failure to classify.
            with self._driver.session(database=self._database) as session:
                try:
                    return session.execute_write(unit_of_work(timeout=WRITE_TIMEOUT_S)(work)), None
                except DomainError as exc:
                    return None, exc

        value, error = _classified(run)
        if error is not None:
            raise error
        return value

    # ------------------------------------------------------------------- reads

    def document(self, doc_id: str) -> dict[str, Any] | None:
        rows = self._read(f"MATCH (d:Document {{doc_id: $doc_id}}) "
                          f"RETURN {_DOC_FIELDS} AS d", {"doc_id": doc_id})
        return rows[0]["d"] if rows else None

    def documents(self) -> list[dict[str, Any]]:
        rows = self._read(f"MATCH (d:Document) RETURN {_DOC_FIELDS} AS d "
                          "ORDER BY d.doc_id")
        return [row["d"] for row in rows]

    def embeddings(self, chunk_hashes: Sequence[str]) -> dict[str, list[float]]:
        rows = self._read("MATCH (c:Chunk) WHERE c.content_hash IN $hashes AND c.embedding IS NOT NULL "
                          "WITH c.content_hash AS h, head(collect(c.embedding)) AS e RETURN h, e",
                          {"hashes": list(chunk_hashes)})
        return {row["h"]: list(row["e"]) for row in rows}

    def catalogue(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        products = self._read("MATCH (p:Product) RETURN p.product_id AS product_id, p.name AS name")
        categories = self._read("MATCH (c:Category) RETURN c.name AS name")
        return products, categories

    def chunks_for_linking(self, doc_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        return self._read(_FOR_LINKING, {"doc_ids": list(doc_ids) if doc_ids is not None else None})

    # ------------------------------------------------------------------- writes

    def replace_document(self, document: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]], *,
                         expected_version: int) -> None:
        doc_id = str(document["doc_id"])

        def work(tx: Any) -> None:
            version = tx.run(_LOCK, {"doc_id": doc_id}).single()["version"]
            if int(version or 0) != expected_version:
                # Raising aborts the transaction: the lock's MERGE is rolled back with it.
                raise Conflict(f"knowledge document '{doc_id}' changed while it was being ingested "
                               f"(version {version}, expected {expected_version}); try again")
            tx.run(_REMOVE_STALE, {"doc_id": doc_id, "chunk_ids": [c["chunk_id"] for c in chunks]}).consume()
            tx.run(_WRITE_DOCUMENT, {"doc_id": doc_id, "props": dict(document)}).consume()
            for start in range(0, len(chunks), 64):
                rows = [dict(c) for c in chunks[start:start + 64]]
                tx.run(_WRITE_CHUNKS, {"doc_id": doc_id, "rows": rows}).consume()

        self._write(work)

    def delete_document(self, doc_id: str) -> bool:
        def work(tx: Any) -> int:
            row = tx.run(_DELETE, {"doc_id": doc_id}).single()
            return int(row["deleted"]) if row else 0

        return bool(self._write(work))

    def set_mentions(self, links: Sequence[Mapping[str, Any]]) -> int:
        def work(tx: Any) -> int:
            total = 0
            for start in range(0, len(links), 200):
                row = tx.run(_SET_MENTIONS, {"rows": [dict(x) for x in links[start:start + 200]]}).single()
                total += int(row["links"] or 0) if row else 0
            return total

        return int(self._write(work))
