"""Ports: what the core needs from the outside world. Adapters in `csagent.adapters` implement
them; tests pass fakes. Nothing here does I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class GraphStore(Protocol):
    """Parameterised Cypher against the store graph. `read` and `write` raise only
    `csagent.domain.errors.StoreError` (classified by the adapter), so callers catch that."""

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        """Run a read query in a READ transaction; return rows as dicts."""
        ...

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        """Run a query in a WRITE transaction; return rows as dicts."""
        ...

    def ping(self) -> bool:
        """True when the database answers `RETURN 1`."""
        ...


class Embedder(Protocol):
    """Sentence embeddings (local MiniLM, or Bedrock Titan in AWS)."""

    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text."""
        ...


class ImageReader(Protocol):
    """Reads the text of an image (a screenshot, a shipping label): OCR locally, a multimodal
    model in AWS. Raises `ImageUnreadable` when nothing can be read."""

    def read_text(self, image: bytes, media_type: str) -> str:
        ...


class KnowledgeIndex(Protocol):
    """Where the knowledge base's documents and chunks live (Neo4j: `adapters.neo4j_knowledge`).

    `replace_document` is the one write of an ingest: the document's metadata, all its chunks and
    their MENTIONS links, and the removal of its stale chunks, in ONE transaction, so a search sees
    the old version or the new one, never a mix or nothing."""

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The document's metadata (`doc_id, version, content_hash, title, ...`), or None."""
        ...

    def documents(self) -> list[dict[str, Any]]:
        """Every document's metadata, by doc_id."""
        ...

    def embeddings(self, chunk_hashes: Sequence[str]) -> dict[str, list[float]]:
        """Stored vectors of chunks whose text hash is one of `chunk_hashes` (any document)."""
        ...

    def catalogue(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """`({product_id, name} rows, {name} category rows)` of the store, for MENTIONS."""
        ...

    def replace_document(self, document: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]], *,
                         expected_version: int) -> None:
        """Write `document` (with its new `version`) and exactly `chunks` in one transaction;
        `Conflict` when the stored version is no longer `expected_version` (0: absent)."""
        ...

    def delete_document(self, doc_id: str) -> bool:
        """Remove the document and its chunks in one transaction; False when it did not exist."""
        ...

    def chunks_for_linking(self, doc_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """`{chunk_id, section, text, doc_products, doc_categories}` for re-linking MENTIONS."""
        ...

    def set_mentions(self, links: Sequence[Mapping[str, Any]]) -> int:
        """Replace the MENTIONS of each `{chunk_id, product_ids, categories}` (one transaction);
        the number of links written."""
        ...


@dataclass(frozen=True)
class StoredObject:
    """An uploaded file as the upload store holds it (`data` empty when `too_large`)."""

    data: bytes
    size: int
    content_type: str | None
    metadata: Mapping[str, str] = field(default_factory=dict)
    too_large: bool = False


class UploadStore(Protocol):
    """The bucket knowledge-base uploads land in (S3: `adapters.s3_kb_uploads`)."""

    def presign_post(self, key: str, *, max_bytes: int, expires_in: int,
                     metadata: Mapping[str, str]) -> tuple[str, dict[str, str]]:
        """`(url, form fields)` of a presigned POST for exactly `key`, 1..max_bytes bytes."""
        ...

    def fetch(self, key: str, *, max_bytes: int) -> StoredObject:
        """The object at `key`; its body is not read when it is larger than `max_bytes`."""
        ...


class CatalogueWriter(Protocol):
    """Writes to the store's catalogue (Neo4j: `adapters.neo4j_catalogue`), one transaction each."""

    def upsert_product(self, product_id: str, name: str, category: str,
                       variants: Sequence[Mapping[str, Any]]) -> bool:
        """Create or update the product, its category link and the given variants; True if new."""
        ...

    def update_variant(self, item_id: str, changes: Mapping[str, Any]) -> str | None:
        """Set the variant's price / availability; its product id, or None if there is none."""
        ...

    def discontinue(self, product_id: str) -> int | None:
        """Every variant unavailable and the product flagged; the variant count, or None."""
        ...


class Sessions(Protocol):
    """The sessions table as the conversation service needs it (`adapters.sessions_dynamodb`):
    who owns a session, and one turn at a time per session (a lease)."""

    def get_owned(self, session_id: str, owner: str) -> Any:
        """The session's record if `owner` owns it (`NotFound` when there is none, `Forbidden`
        when another customer owns it)."""
        ...

    def begin_turn(self, session_id: str, owner: str, head: str | None) -> Any:
        """Check ownership and take the turn lease; `head` is the id of the thread's latest
        checkpoint as the caller sees it now (`Conflict` while another turn holds the lease)."""
        ...

    def release(self, lease: Any) -> None:
        """Give the lease back after a failed turn."""
        ...
