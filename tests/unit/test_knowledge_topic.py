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
