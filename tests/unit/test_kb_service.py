"""The knowledge-base service's rules on an in-memory index (the Neo4j adapter has its own tests
in tests/integration): what is embedded, what is versioned, what an ingest leaves when it fails."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from csagent.domain.errors import Conflict, NotFound
from csagent.knowledge.parsing import DocumentRejected
from csagent.knowledge.service import KnowledgeBase


class CountingEmbedder:
    dimension = 3

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail:
            raise RuntimeError("model endpoint down")
        self.texts.extend(texts)
        return [[1.0, float(len(t)), 0.0] for t in texts]


class MemoryIndex:
    def __init__(self) -> None:
        self.docs: dict[str, dict[str, Any]] = {}
        self.chunks: dict[str, dict[str, Any]] = {}
        self.products = [{"product_id": "p1", "name": "Travel Pillow"}]

    def document(self, doc_id: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.docs.get(doc_id))

    def documents(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(d) for _, d in sorted(self.docs.items())]

    def embeddings(self, chunk_hashes: Sequence[str]) -> dict[str, list[float]]:
        return {c["props"]["content_hash"]: c["props"]["embedding"] for c in self.chunks.values()
                if c["props"]["content_hash"] in chunk_hashes}

    def catalogue(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return self.products, []

    def replace_document(self, document: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]], *,
                         expected_version: int) -> None:
        current = self.docs.get(str(document["doc_id"]))
        if (int(current["version"]) if current else 0) != expected_version:
            raise Conflict("moved")
        doc_id = str(document["doc_id"])
        self.chunks = {k: v for k, v in self.chunks.items() if v["props"]["doc_id"] != doc_id}
        self.chunks.update({str(c["chunk_id"]): copy.deepcopy(dict(c)) for c in chunks})
        self.docs[doc_id] = dict(document)

    def delete_document(self, doc_id: str) -> bool:
        self.chunks = {k: v for k, v in self.chunks.items() if v["props"]["doc_id"] != doc_id}
        return self.docs.pop(doc_id, None) is not None

    def chunks_for_linking(self, doc_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        return [{"chunk_id": k, "section": c["props"]["section"], "text": c["props"]["text"],
                 "doc_products": [], "doc_categories": [], "product_ids": c["product_ids"],
                 "categories": c["categories"]} for k, c in self.chunks.items()]

    def set_mentions(self, links: Sequence[Mapping[str, Any]]) -> int:
        for link in links:
            self.chunks[str(link["chunk_id"])]["product_ids"] = list(link["product_ids"])
        return len(links)


DOC = b"# Gift wrapping\n\n## Price\n\nWrapping costs $4.\n\n## Cards\n\nA card is free.\n"


@pytest.fixture
def kb() -> tuple[KnowledgeBase, MemoryIndex, CountingEmbedder]:
    index, embedder = MemoryIndex(), CountingEmbedder()
    return KnowledgeBase(index, embedder), index, embedder


def test_a_new_document_is_version_1_with_every_chunk_embedded(kb: Any) -> None:
    base, index, embedder = kb
    result = base.upload(DOC, "gift.md")
    assert (result.document_id, result.version, result.chunks, result.embedded) == ("gift", 1, 2, 2)
    assert {c["props"]["doc_version"] for c in index.chunks.values()} == {1}


def test_an_unchanged_document_embeds_and_writes_nothing(kb: Any) -> None:
    base, index, embedder = kb
    base.upload(DOC, "gift.md")
    before = len(embedder.texts)
    again = base.upload(DOC, "gift.md")
    assert (again.version, again.embedded, again.unchanged) == (1, 0, True)
    assert len(embedder.texts) == before


def test_an_edited_section_is_the_only_chunk_embedded_and_the_version_moves(kb: Any) -> None:
    base, index, embedder = kb
    base.upload(DOC, "gift.md")
    result = base.upload(DOC.replace(b"$4", b"$6"), "gift.md")
    assert (result.version, result.embedded, result.reused) == (2, 1, 1)
    assert embedder.texts[-1] == "Gift wrapping > Price\nWrapping costs $6."


def test_a_shorter_replacement_removes_the_stale_chunks(kb: Any) -> None:
    base, index, _ = kb
    base.upload(DOC, "gift.md")
    result = base.upload(b"# Gift wrapping\n\nDiscontinued.\n", "gift.md", mode="replace")
    assert result.removed_chunks == 1
    assert [c["props"]["text"] for c in index.chunks.values()] == ["Discontinued."]


def test_a_failure_before_the_swap_leaves_the_previous_version(kb: Any) -> None:
    base, index, embedder = kb
    base.upload(DOC, "gift.md")
    embedder.fail = True
    with pytest.raises(RuntimeError):
        base.upload(DOC.replace(b"$4", b"$9"), "gift.md")
    assert index.docs["gift"]["version"] == 1
    assert any("$4" in c["props"]["text"] for c in index.chunks.values())


def test_a_rejected_file_writes_nothing(kb: Any) -> None:
    base, index, _ = kb
    with pytest.raises(DocumentRejected):
        base.upload(b"", "gift.md")
    assert index.docs == {} and index.chunks == {}


def test_create_refuses_an_existing_id_and_replace_a_missing_one(kb: Any) -> None:
    base, _, _ = kb
    base.upload(DOC, "gift.md", mode="create")
    with pytest.raises(Conflict):
        base.upload(DOC, "gift.md", mode="create")
    with pytest.raises(NotFound):
        base.upload(DOC, "other.md", mode="replace")


def test_a_product_added_later_is_linked_by_relink(kb: Any) -> None:
    base, index, _ = kb
    index.products = []
    base.upload(b"# Pillow\n\nWash the Travel Pillow cover cold.\n", "pillow.md")
    assert [c["product_ids"] for c in index.chunks.values()] == [[]]
    index.products = [{"product_id": "p1", "name": "Travel Pillow"}]
    assert base.relink() == 1
    assert [c["product_ids"] for c in index.chunks.values()] == [["p1"]]
    assert base.relink() == 0
