"""Knowledge base against a real Neo4j: ingest (idempotent, linked to the store) and hybrid search
(vector + fulltext + graph), through the `KnowledgeSearch` service and the tool entry point.

Needs the local stack (`make up`): the store is seeded from tau-retail once per session
(`tau_store` in tests/conftest.py) so chunks can MENTION real products and categories.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from csagent.domain.models import ErrorType, Task, TaskStatus
from csagent.knowledge.ingest import IngestReport, ensure_knowledge_schema, ingest_knowledge
from csagent.knowledge.search import KnowledgeSearch
from csagent.tools import knowledge_search
from csagent.tools.context import ToolContext

pytestmark = pytest.mark.integration

ESPRESSO_MACHINE = "4354588079"
SMART_WATCH = "6945232052"
VACUUM_CLEANER = "1762337868"
AIR_PURIFIER = "3821016478"

COUNTS = """
CALL () { MATCH (d:Document) RETURN count(d) AS documents }
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (:Document)-[r:HAS_CHUNK]->(:Chunk) RETURN count(r) AS has_chunk }
CALL () { MATCH (:Chunk)-[r:MENTIONS]->() RETURN count(r) AS mentions }
RETURN documents, chunks, has_chunk, mentions"""


@pytest.fixture(scope="module")
def graph(neo4j_driver: Any, tau_store: Any) -> Any:
    from csagent.adapters.neo4j_graph import Neo4jGraph

    store = Neo4jGraph(neo4j_driver)
    ensure_knowledge_schema(store)  # no-op when devstack's schema is applied (same names)
    return store


@pytest.fixture(scope="module")
def embedder() -> Any:
    from csagent.nlp.embeddings import get_embedder

    return get_embedder()


@pytest.fixture(scope="module")
def ingested(graph: Any, embedder: Any) -> IngestReport:
    return ingest_knowledge(graph, embedder, prune=True)


@pytest.fixture(scope="module")
def search(graph: Any, embedder: Any, ingested: IngestReport) -> KnowledgeSearch:
    from csagent.knowledge.asked import shipped

    return KnowledgeSearch(graph, embedder, asked=shipped(embedder))  # as the knowledge tool searches


def _task(**args: Any) -> Task:
    return Task(task_id="k1", task_type="knowledge", tool="knowledge_search", args=args)


# --------------------------------------------------------------------------- ingest


def test_ingest_twice_leaves_the_same_graph(graph: Any, embedder: Any, ingested: IngestReport) -> None:
    # Given the knowledge base ingested once
    before = graph.read(COUNTS)[0]
    # When it is ingested again
    again = ingest_knowledge(graph, embedder, prune=True)
    # Then documents, chunks and links are the same, not doubled
    assert graph.read(COUNTS)[0] == before
    assert (again.documents, again.chunks, again.product_mentions, again.category_mentions) == (
        ingested.documents, ingested.chunks, ingested.product_mentions, ingested.category_mentions)
    assert before["chunks"] == before["has_chunk"] == ingested.chunks


def test_every_catalogue_name_in_front_matter_resolves_to_a_store_node(ingested: IngestReport,
                                                                     tau_data: Path) -> None:
    # Front matter may also name the demo store's products ("Wireless Headphones"); every name
    # the tau-retail catalogue has must link to its Product node.
    catalogue = {p["name"] for p in json.loads((tau_data / "products.json").read_text()).values()}
    assert not catalogue & set(ingested.unresolved_products)
    assert ingested.unresolved_categories == ()
    assert ingested.product_mentions > 0 and ingested.category_mentions > 0


def test_manual_chunks_mention_their_product_and_its_category(graph: Any, ingested: IngestReport) -> None:
    rows = graph.read("""
        MATCH (:Document {doc_id: 'manual-espresso-machine'})-[:HAS_CHUNK]->(c:Chunk)
        RETURN c.chunk_id AS chunk_id,
               [(c)-[:MENTIONS]->(p:Product) | p.product_id] AS products,
               [(c)-[:MENTIONS]->(k:Category) | k.name] AS categories""")
    assert rows
    assert all(ESPRESSO_MACHINE in row["products"] for row in rows)
    assert all("Home & Kitchen" in row["categories"] for row in rows)


def test_warranty_section_of_a_category_mentions_that_category(graph: Any, ingested: IngestReport) -> None:
    rows = graph.read("""
        MATCH (:Document {doc_id: 'warranty'})-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS]->(k:Category)
        WHERE c.section ENDS WITH '> Sports'
        RETURN collect(k.name) AS categories""")
    assert rows[0]["categories"] == ["Sports"]


@pytest.fixture
def temp_doc(graph: Any) -> Iterator[str]:
    doc_id = "itest-temporary"
    yield doc_id
    graph.write("MATCH (d:Document {doc_id: $id}) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c) DETACH DELETE c, d",
                {"id": doc_id})


def test_reingesting_a_shorter_document_replaces_its_chunks(graph: Any, embedder: Any, temp_doc: str,
                                                             tmp_path: Path) -> None:
    # Given a document with three sections, ingested
    head = f"---\ndoc_id: {temp_doc}\ntitle: Temp\nkind: faq\n---\n# Temp\n"
    (tmp_path / "temp.md").write_text(head + "## A\n\nAlpha.\n\n## B\n\nBeta.\n\n## C\n\nGamma.\n")
    ingest_knowledge(graph, embedder, tmp_path)
    # When it is rewritten with one section and ingested again
    (tmp_path / "temp.md").write_text(head + "## A\n\nAlpha only.\n")
    report = ingest_knowledge(graph, embedder, tmp_path)
    # Then only the new chunk remains, under the same deterministic id
    rows = graph.read("MATCH (c:Chunk) WHERE c.doc_id = $id RETURN c.chunk_id AS id, c.text AS text",
                      {"id": temp_doc})
    assert rows == [{"id": f"{temp_doc}#0", "text": "Alpha only."}]
    assert report.chunks == 1


# --------------------------------------------------------------------------- search


def test_return_question_finds_the_return_policy(search: KnowledgeSearch) -> None:
    result = search.search("how long do I have to send something back?")
    assert not result.no_results
    assert "returns-refunds" in result.doc_ids
    assert any("once the order has been delivered" in hit.text for hit in result.hits[:2])


def test_citations_carry_document_section_and_chunk_ids(search: KnowledgeSearch) -> None:
    result = search.search("which carriers deliver my parcel?")
    citations = result.citations()
    assert citations
    for citation in citations:
        assert re.fullmatch(rf"{re.escape(citation['doc_id'])}#\d+", citation["chunk_id"])
        assert citation["title"] and citation["section"] and citation["text"]
        assert citation["score"] > 0
    assert citations[0]["doc_id"] in {"shipping-delivery", "faq"}


def test_manual_question_is_expanded_to_the_product(search: KnowledgeSearch) -> None:
    result = search.search("how do I descale my espresso machine?")
    top = result.hits[0]
    assert top.doc_id == "manual-espresso-machine"
    assert {"product_id": ESPRESSO_MACHINE, "name": "Espresso Machine"} in top.products
    assert "Home & Kitchen" in top.categories


def test_order_products_steer_a_vague_question(search: KnowledgeSearch) -> None:
    # Given a question that names no product, asked by a customer whose order has a smart watch
    result = search.search("how long is the warranty on this?", product_ids=[SMART_WATCH])
    # Then the results are about that product or its category's warranty terms
    top = result.hits[0]
    assert top.doc_id in {"warranty", "manual-smart-watch"}
    assert any(p["product_id"] == SMART_WATCH for hit in result.hits[:3] for p in hit.products)


def test_the_answer_comes_from_the_section_of_the_manual_that_holds_it(search: KnowledgeSearch) -> None:
    # Given a question whose words rank the manual's filters section first (its "every 12 months"),
    # while its "Types" section says how long a cordless model runs
    question = "how long does my vacuum run on one charge"
    result = search.search(question, product_ids=[VACUUM_CLEANER])
    # When the answer is quoted / Then it is the sentence that answers, from the manual
    answer = search.answer(question, result)
    assert "40 minutes" in answer
    assert "HEPA" not in answer


def test_a_section_that_mentions_the_words_gives_way_to_the_one_that_answers(search: KnowledgeSearch) -> None:
    # Given a question whose words rank the manual's troubleshooting section first ("If the purifier
    # gets louder, the filter is probably clogged"), while its care section says how often
    question = "how often replace air purifier filter"
    result = search.search(question, product_ids=[AIR_PURIFIER])
    # When the answer is quoted / Then it is the sentence with the interval
    assert "6 to 12 months" in search.answer(question, result)


def test_unrelated_question_is_a_typed_no_results(search: KnowledgeSearch) -> None:
    result = search.search("what is the capital of France")
    assert result.no_results and result.hits == ()
    assert result.best_similarity is not None and result.best_similarity < search.min_similarity


def test_lucene_syntax_in_a_question_is_searched_literally(search: KnowledgeSearch) -> None:
    result = search.search('earbuds "IPX7" (swimming)? AND/OR -- * ~ ^ [x] {y} !! \\')
    assert not result.no_results
    assert result.hits[0].doc_id == "manual-wireless-earbuds"


# --------------------------------------------------------------------------- the tool


def test_tool_answers_with_a_quotation_and_citations(graph: Any, embedder: Any,
                                                     ingested: IngestReport) -> None:
    ctx = ToolContext(graph=graph, customer_id=None, embedder=embedder)
    question = "Can I split a payment between a gift card and a card?"
    result = knowledge_search.run(_task(question=question), ctx)
    assert result.status == TaskStatus.SUCCESS and result.data is not None
    assert result.data.answer and result.data.answer in " ".join(
        " ".join((c.text or "").split()) for c in result.data.citations)
    assert result.data.citations[0].doc_id in {"payments-gift-cards", "faq"}


def test_tool_returns_no_results_for_an_unrelated_question(graph: Any, embedder: Any,
                                                          ingested: IngestReport) -> None:
    ctx = ToolContext(graph=graph, customer_id=None, embedder=embedder)
    result = knowledge_search.run(_task(question="what is the capital of France"), ctx)
    assert result.status == TaskStatus.FAILED and result.error is not None
    assert result.error.type == ErrorType.NO_RESULTS
    assert result.data is None


def test_tool_without_embedder_degrades_to_keyword_search(graph: Any, ingested: IngestReport) -> None:
    ctx = ToolContext(graph=graph, customer_id=None, embedder=None)
    result = knowledge_search.run(_task(question="do gift cards expire?"), ctx)
    assert result.status == TaskStatus.FALLBACK and result.data is not None
    assert result.data.mode == "keyword"
    assert result.data.citations[0].doc_id in {"payments-gift-cards", "faq"}


def test_an_answer_asked_in_other_words_is_found_by_its_asked_questions(search: KnowledgeSearch) -> None:
    # Given a question far in its words from the FAQ's "return labels are prepaid", and close to
    # the questions customers ask of that sentence (`knowledge.asked`)
    question = "do returns cost anything"
    # When it is searched and answered
    result = search.search(question)
    # Then the FAQ's chunk holding that sentence is found and answers
    assert any("return labels are prepaid" in h.text for h in result.hits)
    assert "prepaid" in search.answer(question, result)
