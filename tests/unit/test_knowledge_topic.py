"""knowledge_search's topic: the hits about what the question is about answer first."""

from __future__ import annotations

from csagent.knowledge.search import Hit, SearchResult
from csagent.tools.knowledge_search import on_topic_first


def _hit(doc: str, title: str, section: str) -> Hit:
    return Hit(chunk_id=f"{doc}#{section}", doc_id=doc, title=title, kind="manual", section=section,
               text="…", score=0.05)


def test_the_warranty_terms_answer_a_warranty_question_before_a_manual_ranked_level_with_them() -> None:
    # Given a search whose best hit is the kettle's manual and whose second is the warranty terms
    result = SearchResult("warranty on an electric kettle?", (
        _hit("manual-electric-kettle", "Electric Kettle user guide", "Safe use"),
        _hit("warranty", "Warranty terms", "Home & Kitchen"),
        _hit("manual-electric-kettle", "Electric Kettle user guide", "Descaling")))
    # When the hits are ordered for the warranty topic
    ordered = on_topic_first(result, "warranty")
    # Then the warranty terms come first and the rest keep their order
    assert [h.doc_id for h in ordered.hits] == ["warranty", *["manual-electric-kettle"] * 2]
    assert [h.section for h in ordered.hits][1:] == ["Safe use", "Descaling"]
    # And no topic changes nothing
    assert on_topic_first(result, None) is result


def test_the_returns_pages_state_a_return_rule_before_the_warranty_list_naming_the_item() -> None:
    # Given "can I return an electric toothbrush once used?", whose best hit is the warranty list
    result = SearchResult("Can I return Electric Toothbrush once it has been opened or used?", (
        _hit("warranty", "Warranty terms", "Beauty & Personal Care"),
        _hit("returns-refunds", "Return and refund policy", "Condition of returned items")))
    # Then for the returns topic the returns policy answers first
    assert [h.doc_id for h in on_topic_first(result, "returns").hits] == ["returns-refunds", "warranty"]


def test_a_complaint_is_answered_by_the_products_manual_only_when_it_is_as_close() -> None:
    from dataclasses import replace

    from csagent.tools.knowledge_search import _own_pages_closer

    def result(*hits: Hit) -> SearchResult:
        return SearchResult("q", hits, no_results=not hits)

    manual = replace(_hit("manual-bluetooth-speaker", "Bluetooth Speaker user guide", "Care"),
                     similarity=0.36)
    faq = replace(_hit("faq", "Frequently asked questions", "Delivered but missing"), kind="policy",
                  similarity=0.56)
    passing = replace(_hit("faq", "Frequently asked questions", "Opened perfume or makeup"), kind="policy",
                      similarity=0.60)
    # "delivered but nothing at my door": the general pages are closer than the speaker's manual
    assert not _own_pages_closer(result(manual), result(faq))
    # "the speaker won't pair": its manual, as close as anything
    assert _own_pages_closer(result(replace(manual, similarity=0.6)), result(faq))
    # a policy naming the product in passing is no product's page, however close
    assert not _own_pages_closer(result(passing), result(faq))
    assert _own_pages_closer(result(manual), result()) and not _own_pages_closer(result(), result(faq))


def _row(*chunks: dict) -> dict:
    """A search's row with every chunk among the vector search's candidates, in the order given."""
    return {"vec": [[c["chunk_id"], c["similarity"]] for c in chunks], "ft": [], "product_categories": [],
            "details": list(chunks)}


def _chunk(cid: str, cos: float, *products: str) -> dict:
    kind = "manual" if cid.startswith("manual") else "policy"
    return {"chunk_id": cid, "doc_id": cid.split("#")[0], "title": cid, "kind": kind, "section": cid,
            "text": "…", "similarity": (1 + cos) / 2,  # as Neo4j reports it
            "products": [{"product_id": p, "name": p} for p in products], "categories": []}


def test_a_chunk_answers_only_when_relevant_or_about_the_asked_product_alone() -> None:
    from csagent.knowledge.search import KnowledgeSearch

    search = KnowledgeSearch(graph=None)  # type: ignore[arg-type]  # ranking needs no store
    row = _row(
        # the warranty list naming the coffee maker among others, below the relevance threshold
        _chunk("warranty#home", 0.28, "coffee", "kettle", "vacuum"),
        # another product's manual, relevant in its words
        _chunk("manual-espresso#brewing", 0.33, "espresso"),
        # a policy page naming no product, relevant
        _chunk("faq#timers", 0.35),
        # a policy naming other products in passing, relevant: a policy is about no one product
        _chunk("returns#condition", 0.34, "perfume"))
    result = search._rank("does my coffee maker have a timer?", row, 5, ["coffee"], "hybrid", [0.0])
    # Then only the relevant pages that are no other product's manual may answer
    assert [h.doc_id for h in result.hits] == ["faq", "returns"]
    # And a vague question reaches its own product's manual, however low its similarity
    row = _row(_chunk("warranty#claims", 0.25), _chunk("manual-vacuum#troubleshooting", 0.32, "vacuum"),
               _chunk("manual-earbuds#troubleshooting", 0.23, "earbuds"))
    result = search._rank("it keeps cutting out, what can I do?", row, 5, ["earbuds"], "hybrid", [0.0])
    assert [h.doc_id for h in result.hits] == ["manual-earbuds"]
    # And when nothing may answer, the result says so
    row = _row(_chunk("warranty#home", 0.28, "coffee", "kettle"))
    assert search._rank("does it have a timer?", row, 5, ["coffee"], "hybrid", [0.0]).no_results
