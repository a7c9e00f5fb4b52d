"""Ports: what the core needs from the outside world. Adapters in `csagent.adapters` implement
them; tests pass fakes. Nothing here does I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
