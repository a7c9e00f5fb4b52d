"""The knowledge-base service: one document in (upload, replace), one out (delete), the whole base
rebuilt offline, and the chunks' product links kept in step with the catalogue.

    KnowledgeBase(index: KnowledgeIndex, embedder: Embedder)
        .upload(bytes, filename, ...)  parse (csagent.knowledge.parsing) -> ingest
        .ingest(doc_id, parsed, ...)   chunk -> hash -> embed only what is new -> one swap
        .delete(doc_id) / .documents() / .document(doc_id)
        .rebuild(docs_dir)             the offline full build (`make kb-rebuild`)
        .relink()                      MENTIONS recomputed from the catalogue as it is now

**Incremental by content hash.** A document's hash covers everything that shapes its chunks
(title, kind, front-matter links, every section, the chunking settings and `PIPELINE`); the
same hash as the stored version is a no-op (nothing embedded, nothing written, same version).
Each chunk carries the SHA-256 of the text that is embedded; a chunk whose hash is already in
the index (this document's previous version, or any other document) reuses the stored vector,
so re-ingesting a document with one edited paragraph embeds only the chunks that paragraph is in.

**Versioned, all or nothing.** Every content change gives the document `version + 1`; each
chunk records the `doc_version` it was written at, and a search hit's citation carries the
document's version and content hash (so a turn's trace names the version that answered).
Parsing, chunking and embedding happen before anything is written; the write is one
transaction (`KnowledgeIndex.replace_document`): the new metadata, every chunk, their links and
the removal of the previous version's stale chunks. If any step fails, the previous version keeps
serving. Two concurrent ingests of one document: the second one's expected version no longer
matches and it gets `Conflict` (409) instead of overwriting silently.

No I/O here except through the two ports.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal

from csagent.domain.errors import Conflict, InvalidInput, NotFound
from csagent.domain.ids import DOCUMENT_ID_PATTERN
from csagent.knowledge.chunking import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MIN_CHARS,
    DEFAULT_OVERLAP,
    Chunk,
    split_text,
)
from csagent.knowledge.ingest import MentionResolver
from csagent.knowledge.parsing import DEFAULT_MAX_BYTES, ParsedDocument, parse_markdown, parse_upload

if TYPE_CHECKING:
    from csagent.ports import Embedder, KnowledgeIndex

PIPELINE = "kb-1"
"""Bumped when parsing or chunking changes what a document's chunks are: every hash changes."""
EMBED_BATCH = 32
DOC_ID = re.compile(DOCUMENT_ID_PATTERN)

Mode = Literal["create", "replace", "upsert"]


def _sha256(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def doc_id_from(filename: str) -> str:
    """A document id from a file name: lower-case letters, digits and '-' ("Return Policy.pdf" ->
    "return-policy")."""
    stem = PurePath(filename or "").stem.lower()
    slug = re.sub(r"[^a-z0-9_]+", "-", stem).strip("-_")[:64].strip("-_")
    if not slug:
        raise InvalidInput("cannot derive a document id from the file name; pass document_id")
    return slug


@dataclass(frozen=True)
class IngestResult:
    """What one ingest did. `embedded` + `reused` = `chunks` unless `unchanged`."""

    document_id: str
    version: int
    chunks: int
    embedded: int = 0
    reused: int = 0
    removed_chunks: int = 0
    unchanged: bool = False
    title: str = ""
    format: str = ""
    pages: int = 0
    pages_without_text: tuple[int, ...] = ()
    content_hash: str = ""
    elapsed_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"document_id": self.document_id, "version": self.version, "chunks": self.chunks,
                "embedded": self.embedded, "reused": self.reused, "removed_chunks": self.removed_chunks,
                "unchanged": self.unchanged, "title": self.title, "format": self.format,
                "pages": self.pages, "pages_without_text": list(self.pages_without_text),
                "content_hash": self.content_hash}


@dataclass(frozen=True)
class RebuildReport:
    """What the offline full build did, document by document."""

    results: tuple[IngestResult, ...]
    removed_documents: tuple[str, ...] = ()
    relinked_chunks: int = 0
    elapsed_ms: float = 0.0
    pages: int = 0

    @property
    def embedded(self) -> int:
        return sum(r.embedded for r in self.results)

    @property
    def chunks(self) -> int:
        return sum(r.chunks for r in self.results)


@dataclass
class KnowledgeBase:
    """The knowledge-base service over the `KnowledgeIndex` and `Embedder` ports."""

    index: KnowledgeIndex
    embedder: Embedder
    max_bytes: int = DEFAULT_MAX_BYTES
    max_chars: int = DEFAULT_MAX_CHARS
    min_chars: int = DEFAULT_MIN_CHARS
    overlap: int = DEFAULT_OVERLAP
    known_vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    """Vectors already computed elsewhere, by chunk hash (the layer's shipped arrays)."""

    # ------------------------------------------------------------------- reads

    def documents(self) -> list[dict[str, Any]]:
        return self.index.documents()

    def document(self, doc_id: str) -> dict[str, Any]:
        found = self.index.document(doc_id)
        if found is None:
            raise NotFound(f"no knowledge document '{doc_id}'")
        return found

    # ------------------------------------------------------------------- writes

    def upload(self, data: bytes, filename: str, content_type: str | None = None, *, title: str | None = None,
               document_id: str | None = None, mode: Mode = "upsert", actor: str = "",
               source: str | None = None) -> IngestResult:
        """Parse an uploaded file and ingest it as `document_id` (else its front matter's doc_id,
        else the file name). `mode`: create (409 if it exists), replace (404 if it does not),
        upsert. Raises `DocumentRejected` (413/415/422) before anything is written."""
        parsed = parse_upload(data, filename, content_type, title=title, max_bytes=self.max_bytes)
        doc_id = document_id or parsed.doc_id or doc_id_from(filename)
        return self.ingest(doc_id, parsed, source=source or PurePath(filename).name, mode=mode, actor=actor,
                           origin="upload")

    def ingest(self, doc_id: str, parsed: ParsedDocument, *, source: str = "", mode: Mode = "upsert",
               actor: str = "", origin: str = "upload") -> IngestResult:
        """Chunk, embed what is new, and swap the document in (one transaction)."""
        started = time.perf_counter()
        if not DOC_ID.match(doc_id):
            raise InvalidInput(f"document_id '{doc_id}' must be 1-64 lower-case letters, digits, '-' or '_'")
        current = self.index.document(doc_id)
        if mode == "create" and current is not None:
            raise Conflict(f"knowledge document '{doc_id}' exists (version {current.get('version')}); "
                           "replace it with PUT /v1/kb/documents/{document_id}")
        if mode == "replace" and current is None:
            raise NotFound(f"no knowledge document '{doc_id}' to replace")
        chunks = self.plan_chunks(doc_id, parsed)
        content_hash = self.content_hash(parsed)
        base = IngestResult(document_id=doc_id, version=0, chunks=len(chunks), title=parsed.title,
                            format=parsed.format, pages=parsed.pages,
                            pages_without_text=parsed.pages_without_text, content_hash=content_hash)
        if current is not None and current.get("content_hash") == content_hash:
            return replace(base, version=int(current.get("version") or 1), unchanged=True,
                           elapsed_ms=(time.perf_counter() - started) * 1000)
        vectors, embedded = self._vectors(chunks)
        expected = int(current.get("version") or 0) if current is not None else 0
        version = expected + 1
        resolver = MentionResolver.from_rows(*self.index.catalogue())
        doc_products, _ = resolver.product_ids(parsed.products)
        doc_categories, _ = resolver.category_names(parsed.categories)
        rows = []
        for chunk in chunks:
            named = resolver.products_in(f"{chunk.section}\n{chunk.text}")
            products = list(dict.fromkeys([*doc_products, *named]))
            headed = resolver.categories_in_section(chunk.section)
            categories = list(dict.fromkeys([*doc_categories, *headed]))
            rows.append({"chunk_id": chunk.chunk_id, "product_ids": products, "categories": categories,
                         "props": {"chunk_id": chunk.chunk_id, "doc_id": doc_id, "seq": chunk.seq,
                                   "section": chunk.section, "text": chunk.text,
                                   "content_hash": chunk.content_hash, "doc_version": version,
                                   "embedding": [float(x) for x in vectors[chunk.content_hash]]}})
        document = {"doc_id": doc_id, "title": parsed.title, "kind": parsed.kind,
                    "categories": list(parsed.categories), "products": list(parsed.products),
                    "source": source, "format": parsed.format, "content_hash": content_hash,
                    "version": version, "chunk_count": len(chunks), "origin": origin,
                    "updated_at": datetime.now(UTC).isoformat(timespec="seconds"), "updated_by": actor,
                    "pages": parsed.pages, "pages_without_text": list(parsed.pages_without_text)}
        self.index.replace_document(document, rows, expected_version=expected)
        previous = int(current.get("chunk_count") or 0) if current is not None else 0
        return replace(base, version=version, embedded=embedded, reused=len(chunks) - embedded,
                       removed_chunks=max(0, previous - len(chunks)),
                       elapsed_ms=(time.perf_counter() - started) * 1000)

    def delete(self, doc_id: str) -> None:
        """Remove a document and its chunks at once (one transaction); `NotFound` if absent."""
        if not self.index.delete_document(doc_id):
            raise NotFound(f"no knowledge document '{doc_id}'")

    # ------------------------------------------------------------------- offline build

    def rebuild(self, docs_dir: Path, *, prune: bool = True, actor: str = "kb-rebuild") -> RebuildReport:
        """Every Markdown document in `docs_dir` ingested (unchanged ones skipped by hash); with
        `prune`, shipped documents no longer in the folder are deleted (uploads are never pruned);
        then every chunk's MENTIONS re-linked to the catalogue as it is now."""
        started = time.perf_counter()
        results = []
        names: set[str] = set()
        for path in sorted(Path(docs_dir).glob("*.md")):
            parsed = parse_markdown(path.read_text(encoding="utf-8"), filename=path.name)
            doc_id = parsed.doc_id or doc_id_from(path.name)
            if doc_id in names:
                raise InvalidInput(f"doc_id '{doc_id}' is used twice in {docs_dir}")
            names.add(doc_id)
            results.append(self.ingest(doc_id, parsed, source=path.name, origin="shipped", actor=actor))
        removed: list[str] = []
        if prune:
            for doc in self.index.documents():
                if doc.get("origin", "shipped") in ("shipped", None) and doc["doc_id"] not in names:
                    self.index.delete_document(doc["doc_id"])
                    removed.append(doc["doc_id"])
        relinked = self.relink()
        return RebuildReport(results=tuple(results), removed_documents=tuple(removed),
                             relinked_chunks=relinked,
                             elapsed_ms=(time.perf_counter() - started) * 1000,
                             pages=sum(max(1, r.pages) for r in results))

    # ------------------------------------------------------------------- catalogue sync

    def relink(self, doc_ids: Sequence[str] | None = None) -> int:
        """Recompute every chunk's MENTIONS from the catalogue as it is now (a new product named in
        a manual gets linked, a deleted one unlinked, a renamed one follows); only chunks whose
        links differ are written. Returns how many chunks were re-linked."""
        resolver = MentionResolver.from_rows(*self.index.catalogue())
        changed = []
        for row in self.index.chunks_for_linking(doc_ids):
            doc_products, _ = resolver.product_ids(row.get("doc_products") or [])
            doc_categories, _ = resolver.category_names(row.get("doc_categories") or [])
            text = f"{row.get('section') or ''}\n{row.get('text') or ''}"
            products = list(dict.fromkeys([*doc_products, *resolver.products_in(text)]))
            categories = list(dict.fromkeys([*doc_categories,
                                             *resolver.categories_in_section(str(row.get("section") or ""))]))
            if set(products) != set(row.get("product_ids") or []) or \
                    set(categories) != set(row.get("categories") or []):
                changed.append({"chunk_id": row["chunk_id"], "product_ids": products,
                                "categories": categories})
        if changed:
            self.index.set_mentions(changed)
        return len(changed)

    # ------------------------------------------------------------------- helpers

    def plan_chunks(self, doc_id: str, parsed: ParsedDocument) -> list[Chunk]:
        chunks: list[Chunk] = []
        for section in parsed.sections:
            for piece in split_text(section.text, max_chars=self.max_chars, min_chars=self.min_chars,
                                    overlap=self.overlap):
                seq = len(chunks)
                chunks.append(Chunk(f"{doc_id}#{seq}", doc_id, seq, section.path, piece))
        return chunks

    def content_hash(self, parsed: ParsedDocument) -> str:
        parts: list[str] = [PIPELINE, f"{self.max_chars}/{self.min_chars}/{self.overlap}", parsed.title,
                            parsed.kind, "|".join(parsed.products), "|".join(parsed.categories)]
        for section in parsed.sections:
            parts.extend((section.path, section.text))
        return _sha256(*parts)

    def _vectors(self, chunks: Iterable[Chunk]) -> tuple[dict[str, list[float]], int]:
        """Vectors by chunk hash: shipped, stored, or embedded now (the count embedded)."""
        texts: dict[str, str] = {c.content_hash: c.embedding_text for c in chunks}
        known = self.known_vectors
        vectors: dict[str, list[float]] = {h: list(known[h]) for h in texts if h in known}
        missing = [h for h in texts if h not in vectors]
        if missing:
            vectors.update(self.index.embeddings(missing))
        todo = [h for h in texts if h not in vectors]
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start:start + EMBED_BATCH]
            out = self.embedder.embed([texts[h] for h in batch])
            if len(out) != len(batch):
                raise ValueError(f"embedder returned {len(out)} vectors for {len(batch)} texts")
            vectors.update(zip(batch, (list(v) for v in out), strict=True))
        dimension = getattr(self.embedder, "dimension", None)
        if dimension and any(len(vectors[h]) != dimension for h in texts):
            raise ValueError(f"a chunk vector is not {dimension}-dimensional")
        return vectors, len(todo)
