"""The questions customers ask of the documents' sentences (`knowledge.asked`) and how an answer
uses them. A word-direction embedder stands in for MiniLM, so closeness is predictable; the data
file is checked against the shipped documents."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources

import pytest
from knowledge_support import FakeGraph, chunk_detail, search_row

from csagent.knowledge import asked as asked_module
from csagent.knowledge.asked import ShippedQuestions, build, load_rows, sentence_key
from csagent.knowledge.search import KnowledgeSearch

WORDS = ("cost", "label", "clean", "return", "ship")


class WordEmbedder:
    """One direction per word of `WORDS` a text holds (a text with none: its own direction)."""

    dimension = len(WORDS) + 1

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [1.0 if word in text.lower() else 0.0 for word in WORDS]
            out.append([*vector, 0.0 if any(vector) else 1.0])
        return out


def test_the_shipped_questions_are_built_once_per_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the shipped questions' holder, and a build that counts its embedders
    built: list[object] = []

    def counting(embedder: object) -> object:
        built.append(embedder)
        return build(WordEmbedder(), [("does it cost anything?", "Return labels are prepaid.")])

    monkeypatch.setattr(asked_module, "shipped", counting)
    holder, first, second = ShippedQuestions(), WordEmbedder(), WordEmbedder()
    # When each of two embedders asks twice (and a keyword search asks without one)
    kept = [holder.on(e) for e in (first, second, first, second)]
    # Then each embedder's questions were built once and are kept; none are built without one
    assert built == [first, second]
    assert kept[0] is kept[2] and kept[1] is kept[3] and kept[0] is not kept[1]
    assert holder.on(None) is None and len(built) == 2


def test_a_sentence_is_as_close_as_the_closest_question_it_answers() -> None:
    asked = build(WordEmbedder(), [("does it cost anything?", "Return labels are prepaid."),
                                   ("how do I clean it", "Wipe it with a damp cloth. Never  soak it."),
                                   ("will it cost me", "Return labels are prepaid.")])
    closeness = asked.closeness(WordEmbedder().embed(["what does it cost"])[0])
    # the first and third questions are the asked one's direction; case and spacing do not matter
    assert closeness(["return labels are  prepaid.", "Never soak it.", "Something else."]) == pytest.approx(
        [1.0, 0.0, 0.0])
    # a two-sentence answer is about each of its sentences
    near_clean = asked.closeness(WordEmbedder().embed(["clean"])[0])
    assert near_clean(["Wipe it with a damp cloth.", "Never soak it."]) == pytest.approx([1.0, 1.0])


def test_a_hit_whose_sentence_answers_a_question_asked_in_other_words_answers() -> None:
    # Given the returns policy ranked first for "do returns cost anything", and the FAQ's shipping
    # answer, which says return labels are prepaid, second
    policy = chunk_detail("returns#0", 0.7, "You can return items once they are delivered. Refunds go to the "
                                       "original payment method.")
    prepaid = "Standard shipping is free on every order and return labels are prepaid."
    faq = chunk_detail("faq#3", 0.6, prepaid)
    graph = FakeGraph(search_row([policy, faq], [policy, faq]))
    question = "does a return cost anything?"
    asked = build(WordEmbedder(), [("do I pay for the return label? what does it cost", prepaid)])
    with_questions = KnowledgeSearch(graph, WordEmbedder(), asked=asked)
    without = KnowledgeSearch(graph, WordEmbedder(), asked=None)
    result = with_questions.search(question)
    assert result.hits[0].chunk_id == "returns#0"
    # When the answer is quoted / Then it is the FAQ's sentence only with the asked questions
    assert "prepaid" in with_questions.answer(question, result)
    assert "prepaid" not in without.answer(question, result)


def test_the_sentences_answering_the_closest_asked_questions_are_where_the_search_looks() -> None:
    prepaid = "Standard shipping is free on every order and return labels are prepaid."
    asked = build(WordEmbedder(), [("what does it cost", f"No. {prepaid}"),
                                   ("how do I clean it", "Wipe it with a damp cloth and dry it well.")])
    query = WordEmbedder().embed(["does it cost anything"])[0]
    # the answer of the question asked in other words; "No." too short to find its chunk
    assert asked.answering(query, 0.8, 3) == [prepaid]
    assert asked.answering(query, 1.01, 3) == []  # none close enough
    assert asked.answering(query, 0.0, 1) == [prepaid]  # at most `limit`, the closest first


def test_a_chunk_holding_an_answer_asked_in_other_words_joins_the_ranking() -> None:
    # Given the returns policy found by the question's own words, and the FAQ chunk holding the
    # sentence an asked question close to it answers, found only by that sentence
    prepaid = "Standard shipping is free on every order and return labels are prepaid."
    policy = chunk_detail("returns#0", 0.7, "You can return items once they are delivered.")
    faq = chunk_detail("faq#3", 0.6, prepaid)
    graph = FakeGraph({**search_row([policy], [policy], extra=[faq]), "asked": ["faq#3"]})
    asked = build(WordEmbedder(), [("do I pay for the return label? what does it cost", prepaid)])
    result = KnowledgeSearch(graph, WordEmbedder(), asked=asked).search("does a return cost anything?")
    # Then the query was given the sentence, and the FAQ chunk is among the hits
    assert graph.calls[0]["asked_sentences"] == [prepaid]
    assert "faq#3" in [h.chunk_id for h in result.hits]
    # And without the asked questions the query looks for no sentence
    KnowledgeSearch(graph, WordEmbedder(), asked=None).search("does a return cost anything?")
    assert graph.calls[1]["asked_sentences"] == []


def test_a_document_without_asked_questions_is_answered_as_before() -> None:
    # Given questions about sentences none of the hits hold (an uploaded document, say)
    policy = chunk_detail("returns#0", 0.7, "You can return items once they are delivered.")
    faq = chunk_detail("faq#3", 0.6, "Return labels cost nothing.")
    graph = FakeGraph(search_row([policy, faq], [policy, faq]))
    asked = build(WordEmbedder(), [("what does the return cost", "A sentence of another document.")])
    question = "does a return cost anything?"
    search = KnowledgeSearch(graph, WordEmbedder(), asked=asked)
    without = KnowledgeSearch(graph, WordEmbedder(), asked=None)
    result = search.search(question)
    # Then the answer is the one chosen without them
    assert search.answer(question, result) == without.answer(question, result)


def test_every_asked_question_answers_a_sentence_of_a_shipped_document() -> None:
    # A question whose answer is no longer in the documents would never match: edit both together
    docs = resources.files("csagent.knowledge").joinpath("docs")
    text = {entry.name: " ".join(entry.read_text("utf-8").split()) for entry in docs.iterdir()
            if entry.name.endswith(".md")}
    raw = resources.files("csagent.knowledge").joinpath("data", "asked.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    assert len(rows) == len(load_rows()) >= 400
    orphans = [row["question"] for row in rows
               if " ".join(row["answer"].split()) not in text.get(row["doc"], "")]
    assert orphans == []
    assert len({sentence_key(row["question"]) for row in rows}) == len(rows)
