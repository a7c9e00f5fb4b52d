"""Stand-ins for knowledge-search unit tests: a chunk's details as the search query returns
them, the query's row, and a `GraphStore` answering with that row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def chunk_detail(chunk_id: str, similarity: float, text: str, products: list[dict[str, str]] | None = None,
            categories: list[str] | None = None) -> dict[str, Any]:
    return {"chunk_id": chunk_id, "doc_id": chunk_id.split("#")[0], "title": "T", "kind": "policy",
            "section": f"T > {chunk_id}", "text": text, "similarity": (1 + similarity) / 2,
            "products": products or [], "categories": categories or []}


class FakeGraph:
    """A `GraphStore` that answers the search query with a canned row (or raises)."""

    def __init__(self, row: dict[str, Any] | None = None, error: BaseException | None = None) -> None:
        self.row = row
        self.error = error
        self.calls: list[Mapping[str, Any]] = []

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        self.calls.append(dict(params or {}))
        if self.error is not None:
            raise self.error
        return [self.row] if self.row is not None else []

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        raise AssertionError("search must not write")

    def ping(self) -> bool:
        return True


def search_row(vec: list[dict[str, Any]], ft: list[dict[str, Any]],
         extra: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    details = {d["chunk_id"]: d for d in [*vec, *ft, *extra]}
    return {"vec": [[d["chunk_id"], d["similarity"]] for d in vec],
            "ft": [[d["chunk_id"], 1.0] for d in ft], "details": list(details.values()),
            "product_categories": []}
