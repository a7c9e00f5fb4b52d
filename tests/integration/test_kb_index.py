"""The Neo4j knowledge index (csagent.adapters.neo4j_knowledge) on the real database: one ingest
is one transaction - a write that fails half-way leaves the previous version serving - and a
stale expected version is a conflict, not an overwrite."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from csagent.adapters.neo4j_knowledge import Neo4jKnowledgeIndex
from csagent.domain.errors import Conflict, StoreError
from csagent.knowledge.service import KnowledgeBase

pytestmark = pytest.mark.integration

DOC_ID = "itest-index-swap"
DOC = b"# Swap test\n\n## One\n\nThe first section.\n\n## Two\n\nThe second section.\n"


@pytest.fixture
def kb(neo4j_driver: Any, tau_store: Any) -> Iterator[KnowledgeBase]:
    from csagent.nlp.embeddings import get_embedder

    base = KnowledgeBase(Neo4jKnowledgeIndex(neo4j_driver), get_embedder())
    yield base
    base.index.delete_document(DOC_ID)


def _texts(neo4j_driver: Any) -> list[str]:
    query = "MATCH (:Document {doc_id: $id})-[:HAS_CHUNK]->(c) RETURN c.text AS t ORDER BY c.seq"
    records = neo4j_driver.execute_query(query, id=DOC_ID).records
    return [r["t"] for r in records]


def test_a_write_that_fails_half_way_leaves_the_previous_version(kb: KnowledgeBase,
                                                                 neo4j_driver: Any) -> None:
    # Given version 1 indexed
    kb.upload(DOC, "swap.md", document_id=DOC_ID)
    current = kb.index.document(DOC_ID)
    assert current is not None
    # When a version 2 write fails on its second chunk (a value Neo4j cannot store)
    good = {"chunk_id": f"{DOC_ID}#0", "product_ids": [], "categories": [],
            "props": {"chunk_id": f"{DOC_ID}#0", "doc_id": DOC_ID, "seq": 0, "text": "changed"}}
    bad = {"chunk_id": f"{DOC_ID}#1", "product_ids": [], "categories": [],
           "props": {"chunk_id": f"{DOC_ID}#1", "doc_id": DOC_ID, "seq": 1, "text": {"not": "storable"}}}
    with pytest.raises(StoreError):
        kb.index.replace_document({**current, "version": 2, "content_hash": "x"}, [good, bad],
                                  expected_version=1)
    # Then nothing of version 2 is visible: same version, same chunks
    assert kb.index.document(DOC_ID)["version"] == 1  # type: ignore[index]
    assert _texts(neo4j_driver) == ["The first section.", "The second section."]


def test_a_stale_expected_version_is_a_conflict(kb: KnowledgeBase) -> None:
    kb.upload(DOC, "swap.md", document_id=DOC_ID)
    current = kb.index.document(DOC_ID)
    assert current is not None
    with pytest.raises(Conflict):
        kb.index.replace_document({**current, "version": 5}, [], expected_version=3)
    assert kb.index.document(DOC_ID)["version"] == 1  # type: ignore[index]


def test_a_new_document_that_fails_leaves_no_trace(kb: KnowledgeBase) -> None:
    bad = {"chunk_id": f"{DOC_ID}#0", "product_ids": [], "categories": [],
           "props": {"chunk_id": f"{DOC_ID}#0", "doc_id": DOC_ID, "seq": 0, "text": {"not": "storable"}}}
    with pytest.raises(StoreError):
        kb.index.replace_document({"doc_id": DOC_ID, "version": 1}, [bad], expected_version=0)
    assert kb.index.document(DOC_ID) is None
