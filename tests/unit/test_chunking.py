"""Unit tests for the knowledge base: documents, heading-aware chunking, and the pure parts of
knowledge search (query escaping, fusion, answer trimming, failure mapping of the tool).

No database and no model: the search tests use a fake `GraphStore` and a fake `Embedder`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from knowledge_support import FakeGraph, chunk_detail, search_row
from pydantic import ValidationError

from csagent.domain.models import ErrorType, Task, TaskStatus
from csagent.knowledge.chunking import (
    DocumentError,
    chunk_document,
    load_documents,
    parse_document,
    parse_front_matter,
    split_sections,
    split_spans,
)
from csagent.knowledge.ingest import DEFAULT_DOCS_DIR, MentionResolver
from csagent.knowledge.search import (
    KnowledgeSearch,
    content_terms,
    escape_lucene,
    fulltext_query,
    rrf,
    split_sentences,
)
from csagent.tools import knowledge_search
from csagent.tools.context import ToolContext

DOC = """---
doc_id: sample-doc
title: Sample policy
kind: policy
categories: [Electronics, Home & Kitchen]
products:
  - Wireless Earbuds
  - "Laptop"
---

# Sample policy

Intro text under the title.

## Returns

Returns are accepted within 30 days.

### Damaged items

Report damage within 7 days.

## Empty heading

### Only child

Child text.

```
# not a heading inside a code block
```
"""

LOREM = ("Refunds go back to the original payment method. Gift cards are credited immediately. "
         "Credit cards and PayPal take five to seven business days to show the refund. ")


# --------------------------------------------------------------------------- documents


def test_front_matter_inline_and_block_lists_are_parsed() -> None:
    # Given a document whose front matter uses an inline list and a block list
    # When it is parsed
    doc = parse_document(DOC, source="sample.md")
    # Then every field is read, quotes are stripped and the body starts after the block
    assert (doc.doc_id, doc.title, doc.kind) == ("sample-doc", "Sample policy", "policy")
    assert doc.categories == ("Electronics", "Home & Kitchen")
    assert doc.products == ("Wireless Earbuds", "Laptop")
    assert doc.body.startswith("# Sample policy")


def test_document_without_front_matter_is_rejected() -> None:
    # Given Markdown with no front matter
    # When it is parsed
    # Then a DocumentError says what is missing
    with pytest.raises(DocumentError, match="front-matter"):
        parse_document("# Just a title\n\nText.")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("kind", "brochure", "kind"),
    ("doc_id", "Has Spaces", "doc_id"),
])
def test_invalid_front_matter_values_are_rejected(field: str, value: str, message: str) -> None:
    # Given a document with an invalid value
    text = re.sub(rf"^{field}: .*$", f"{field}: {value}", DOC, count=1, flags=re.MULTILINE)
    # When it is parsed / Then the error names the field
    with pytest.raises(DocumentError, match=message):
        parse_document(text)


def test_unclosed_front_matter_is_rejected() -> None:
    with pytest.raises(DocumentError, match="not closed"):
        parse_front_matter("---\ndoc_id: x\n# body")


# --------------------------------------------------------------------------- sections


def test_sections_carry_their_heading_path() -> None:
    # Given a body with nested headings
    doc = parse_document(DOC)
    # When it is split into sections
    sections = dict(split_sections(doc.body, root=doc.title))
    # Then each text knows the headings above it
    assert sections["Sample policy"] == "Intro text under the title."
    assert sections["Sample policy > Returns"] == "Returns are accepted within 30 days."
    assert sections["Sample policy > Returns > Damaged items"] == "Report damage within 7 days."


def test_heading_without_text_is_not_a_section_but_stays_in_the_path() -> None:
    doc = parse_document(DOC)
    paths = [path for path, _ in split_sections(doc.body, root=doc.title)]
    assert "Sample policy > Empty heading" not in paths
    assert "Sample policy > Empty heading > Only child" in paths


def test_hash_lines_inside_code_fences_are_not_headings() -> None:
    doc = parse_document(DOC)
    sections = dict(split_sections(doc.body))
    assert "# not a heading inside a code block" in sections["Sample policy > Empty heading > Only child"]


def test_text_before_any_heading_belongs_to_the_root() -> None:
    assert split_sections("Loose text.\n\n# Title\n\nBody.", root="Doc") == [
        ("Doc", "Loose text."), ("Title", "Body.")]


# --------------------------------------------------------------------------- windows


def test_short_text_is_one_chunk() -> None:
    text = "A short section of text."
    assert split_spans(text) == [(0, len(text))]


def test_long_text_is_cut_into_windows_of_500_to_800_chars_with_overlap() -> None:
    # Given a section of about 3,000 characters made of sentences
    text = LOREM * 20
    # When it is split with the defaults
    spans = split_spans(text)
    # Then every window but the last is 500..800 characters and ends at a sentence end
    assert len(spans) >= 4
    for start, end in spans[:-1]:
        assert 500 <= end - start <= 800
        assert text[end - 1] == "."
    # And neighbours overlap by roughly 100 characters
    for (_, end), (next_start, _) in zip(spans, spans[1:], strict=False):
        assert 0 < end - next_start <= 130
    # And together they cover the whole text
    assert spans[0][0] == 0 and spans[-1][1] == len(text.rstrip())


def test_invalid_window_options_are_rejected() -> None:
    with pytest.raises(ValueError):
        split_spans("text", max_chars=100, overlap=100)


words = st.text(alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters="-'.,"),
                min_size=1, max_size=30)
separators = st.sampled_from([" ", "  ", "\n", "\n\n", ". "])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(words, separators), min_size=1, max_size=200),
       st.integers(min_value=60, max_value=400), st.integers(min_value=0, max_value=50))
def test_windows_never_split_inside_a_word(parts: list[tuple[str, str]], max_chars: int,
                                           overlap: int) -> None:
    # Given arbitrary text and window settings
    text = "".join(word + sep for word, sep in parts)
    min_chars = max(1, max_chars // 2)
    # When it is split
    spans = split_spans(text, max_chars=max_chars, min_chars=min_chars, overlap=overlap)
    # Then no span starts or ends inside a word, spans move forward, and every word is covered
    covered = set()
    previous_start = -1
    for start, end in spans:
        assert start > previous_start
        previous_start = start
        assert start == 0 or text[start - 1].isspace()
        assert end == len(text) or text[end].isspace()
        assert not text[start].isspace() and not text[end - 1].isspace()
        covered.update(range(start, end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_windows_are_at_most_max_chars_unless_a_single_word_is_longer() -> None:
    text = ("word " * 300) + ("x" * 900) + " tail"
    spans = split_spans(text, max_chars=200, min_chars=120, overlap=40)
    long_ones = [text[a:b] for a, b in spans if b - a > 200]
    assert long_ones and all("x" * 900 in piece for piece in long_ones)


# --------------------------------------------------------------------------- chunks


def test_chunk_ids_are_doc_id_and_sequence_and_deterministic() -> None:
    # Given a document
    doc = parse_document(DOC)
    # When it is chunked twice
    first, second = chunk_document(doc), chunk_document(doc)
    # Then ids are "<doc_id>#<n>" in order, and identical across runs
    assert [c.chunk_id for c in first] == [f"sample-doc#{i}" for i in range(len(first))]
    assert first == second


def test_a_chunk_never_spans_two_sections() -> None:
    doc = parse_document(DOC.replace("Returns are accepted within 30 days.", LOREM * 12))
    chunks = chunk_document(doc)
    returns = [c for c in chunks if c.section == "Sample policy > Returns"]
    assert len(returns) > 1
    assert all("Report damage" not in c.text for c in returns)


def test_embedding_text_includes_the_heading_path() -> None:
    chunk = chunk_document(parse_document(DOC))[1]
    assert chunk.embedding_text.startswith("Sample policy > Returns\n")


# --------------------------------------------------------------------------- the shipped knowledge base

try:  # the product -> category map the seed uses (infra/devstack); the layer itself has no copy
    from devstack.seed.augment import PRODUCT_CATEGORIES
except ImportError:  # pragma: no cover - devstack is installed with the project
    PRODUCT_CATEGORIES = {}


def test_knowledge_base_documents_all_parse_with_unique_ids() -> None:
    docs = load_documents(DEFAULT_DOCS_DIR)
    kinds = [d.kind for d in docs]
    assert len({d.doc_id for d in docs}) == len(docs)
    assert {"policy", "faq", "warranty", "manual"} <= set(kinds)
    assert kinds.count("manual") >= 10


def test_faq_has_at_least_fifteen_questions() -> None:
    faq = next(d for d in load_documents(DEFAULT_DOCS_DIR) if d.kind == "faq")
    questions = [path for path, _ in split_sections(faq.body) if path.endswith("?")]
    assert len(questions) >= 15


@pytest.mark.skipif(not PRODUCT_CATEGORIES, reason="devstack is not importable")
def test_front_matter_names_real_products_and_store_categories() -> None:
    docs = load_documents(DEFAULT_DOCS_DIR)
    categories = set(PRODUCT_CATEGORIES.values())
    for doc in docs:
        assert all(p.lower() in PRODUCT_CATEGORIES for p in doc.products), doc.doc_id
        assert all(c in categories for c in doc.categories), doc.doc_id
        for product in doc.products:  # a manual's category is its product's category
            assert PRODUCT_CATEGORIES[product.lower()] in doc.categories, doc.doc_id


@pytest.mark.skipif(not PRODUCT_CATEGORIES, reason="devstack is not importable")
def test_warranty_has_a_section_for_every_store_category() -> None:
    warranty = next(d for d in load_documents(DEFAULT_DOCS_DIR) if d.doc_id == "warranty")
    headings = {path.split(" > ")[-1] for path, _ in split_sections(warranty.body)}
    assert set(PRODUCT_CATEGORIES.values()) <= headings


def test_cancellation_policy_states_the_two_reasons_and_refund_timing() -> None:
    doc = next(d for d in load_documents(DEFAULT_DOCS_DIR) if d.doc_id == "cancellations")
    assert "no longer needed" in doc.body and "ordered by mistake" in doc.body
    assert "5 to 7 business days" in doc.body and "immediately" in doc.body


# --------------------------------------------------------------------------- mentions


def test_product_mentions_match_whole_names_and_plurals_only() -> None:
    # Given a resolver over three products
    resolver = MentionResolver.from_rows(
        [{"product_id": "1", "name": "Laptop"}, {"product_id": "2", "name": "Smart Watch"},
         {"product_id": "3", "name": "Tablet"}], [{"name": "Electronics"}])
    # When text mentions "laptops" and "smart watch" but only contains "tablet" inside a word
    found = resolver.products_in("Our laptops and the Smart  Watch; see tablets2go for Tabletop.")
    # Then plurals and case differences match, words containing the name do not
    assert found == ["2", "1"] or sorted(found) == ["1", "2"]
    assert "3" not in found


def test_categories_come_from_section_headings() -> None:
    resolver = MentionResolver.from_rows([], [{"name": "Sports"}, {"name": "Home & Kitchen"}])
    assert resolver.categories_in_section("Warranty terms > Home & Kitchen") == ["Home & Kitchen"]
    assert resolver.categories_in_section("Shipping > Sports bags") == []


# --------------------------------------------------------------------------- search text helpers


@given(st.text(max_size=80))
def test_escaped_queries_have_no_bare_lucene_operators(text: str) -> None:
    escaped = escape_lucene(text)
    bare = re.sub(r"\\.", "", escaped)  # drop every escaped character
    assert not re.search(r'[+\-!(){}\[\]^"~*?:/&|]', bare)


def test_fulltext_query_keeps_content_words_and_disarms_operators() -> None:
    query = fulltext_query('How do I return a T-Shirt AND "jeans" (size M)? NOT ok: order #W2611340')
    assert "AND" not in query and "NOT" not in query
    assert "t\\-shirt" in query and "return" in query and "w2611340" in query
    assert "how" not in query.split()


def test_content_terms_drop_stopwords() -> None:
    assert content_terms("What is the warranty on my laptop?") == ["warranty", "laptop"]


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = rrf([["a", "b", "c"], ["b", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)


def test_sentences_are_split_at_sentence_ends_not_at_decimals() -> None:
    assert split_sentences("Fill to 1.5L max. Then boil.\n\nWait 30 seconds!") == [
        "Fill to 1.5L max.", "Then boil.", "Wait 30 seconds!"]


# --------------------------------------------------------------------------- search with fakes


class FakeEmbedder:
    """Maps texts onto a few fixed directions by keyword, so similarities are predictable."""

    dimension = 3

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            lower = text.lower()
            if "return" in lower or "30 days" in lower:
                out.append([1.0, 0.0, 0.0])
            elif "clean" in lower:
                out.append([0.0, 1.0, 0.0])
            else:
                out.append([0.0, 0.0, 1.0])
        return out


RETURNS = chunk_detail("returns#0", 0.8, "You have 30 days to return an item. Refunds take 5 to 7 days.")
MAT = chunk_detail("manual-yoga-mat#2", 0.35, "Wipe the mat with mild soap after practice. Let it dry flat.",
              [{"product_id": "mat", "name": "Yoga Mat"}], ["Sports"])
CHAIR = chunk_detail("manual-office-chair#2", 0.55, "Vacuum the mesh back. Spot-clean the fabric seat.",
                [{"product_id": "chair", "name": "Office Chair"}], ["Office"])


def test_search_fuses_rankings_and_returns_citations() -> None:
    # Given a graph whose vector and fulltext rankings both put the returns chunk first
    search = KnowledgeSearch(FakeGraph(search_row([RETURNS, CHAIR], [RETURNS])), FakeEmbedder())
    # When a customer asks about returns
    result = search.search("how long do I have to return it?")
    # Then the returns chunk is first, with a citation carrying its ids
    assert not result.no_results
    citation = result.citations()[0]
    assert (citation["doc_id"], citation["chunk_id"], citation["section"]) == (
        "returns", "returns#0", "T > returns#0")
    assert result.hits[0].score == pytest.approx(2 / 61)


def test_low_similarity_is_a_typed_no_results() -> None:
    weak = chunk_detail("faq#3", 0.12, "Gift cards never expire.")
    result = KnowledgeSearch(FakeGraph(search_row([weak], [])), FakeEmbedder()).search("capital of France")
    assert result.no_results and result.hits == ()
    assert "below" in result.reason


def test_products_of_the_order_pull_their_manual_to_the_top() -> None:
    # Given a vague question whose vector ranking prefers another product's manual
    graph = FakeGraph(search_row([CHAIR, MAT, RETURNS], []))
    search = KnowledgeSearch(graph, FakeEmbedder())
    # When the customer's order contains the yoga mat
    result = search.search("how do I clean it?", product_ids=["mat"])
    # Then the mat's chunk (ranked again through MENTIONS) comes first and cites its product
    assert result.hits[0].chunk_id == "manual-yoga-mat#2"
    assert result.hits[0].products == ({"product_id": "mat", "name": "Yoga Mat"},)
    assert graph.calls[0]["product_ids"] == ["mat"]


def test_answer_is_trimmed_to_the_relevant_sentences() -> None:
    search = KnowledgeSearch(FakeGraph(search_row([RETURNS], [RETURNS])), FakeEmbedder())
    result = search.search("can I return it after 30 days?")
    assert search.answer("can I return it after 30 days?", result) == "You have 30 days to return an item."


def test_without_an_embedder_search_runs_in_keyword_mode() -> None:
    graph = FakeGraph(search_row([], [RETURNS]))
    result = KnowledgeSearch(graph, None).search("return an item within days")
    assert result.mode == "keyword" and result.hits[0].chunk_id == "returns#0"
    assert graph.calls[0]["embedding"] is None


# --------------------------------------------------------------------------- the tool


def _task(**args: Any) -> Task:
    return Task(task_id="t1", task_type="knowledge", tool="knowledge_search", args=args)


def _ctx(graph: Any, embedder: Any = None) -> ToolContext:
    return ToolContext(graph=graph, customer_id="c1", embedder=embedder or FakeEmbedder())


def test_tool_returns_answer_and_citations() -> None:
    result = knowledge_search.run(_task(question="how long to return?"),
                                  _ctx(FakeGraph(search_row([RETURNS], [RETURNS]))))
    assert result.status == TaskStatus.SUCCESS
    assert result.data is not None and "30 days" in result.data.answer
    assert result.data.citations[0].chunk_id == "returns#0"


def test_tool_reports_no_results_as_a_typed_failure() -> None:
    weak = chunk_detail("faq#3", 0.1, "Gift cards never expire.")
    graph = FakeGraph(search_row([weak], []))
    result = knowledge_search.run(_task(question="capital of France"), _ctx(graph))
    assert result.status == TaskStatus.FAILED and result.error is not None
    assert result.error.type == ErrorType.NO_RESULTS and not result.error.retryable


@pytest.mark.parametrize("args", [{}, {"question": "  "}])
def test_tool_rejects_bad_arguments(args: dict[str, Any]) -> None:
    result = knowledge_search.run(_task(**args), _ctx(FakeGraph()))
    assert result.error is not None and result.error.type == ErrorType.VALIDATION


@pytest.mark.parametrize("args", [{"question": "ok", "k": 0}, {"question": "ok", "product_ids": [1.5]}])
def test_arguments_of_the_wrong_shape_never_make_a_task(args: dict[str, Any]) -> None:
    # When a knowledge search task is built with them (the planner; the tool Lambda's event)
    # Then it is refused before the tool is reached, naming the argument
    with pytest.raises(ValidationError) as refused:
        _task(**args)
    assert {error["loc"][:2] for error in refused.value.errors()} <= {("args", "k"), ("args", "product_ids")}


def _neo4j_errors() -> list[tuple[BaseException, ErrorType, bool]]:
    """Failures as the store's adapter raises them (its classification of the driver's errors)."""
    from neo4j.exceptions import ClientError, ServiceUnavailable, TransientError

    from csagent.adapters.neo4j_graph import classify_neo4j_error

    timed_out = ClientError._hydrate_neo4j(code="Neo.ClientError.Transaction.TransactionTimedOut",
                                           message="timed out")
    no_index = ClientError._hydrate_neo4j(code="Neo.ClientError.Procedure.ProcedureCallFailed",
                                          message="There is no such vector schema index: chunk_embedding")
    cases: list[tuple[BaseException, ErrorType, bool]] = [
        (TimeoutError("slow"), ErrorType.TIMEOUT, True),
        (timed_out, ErrorType.TIMEOUT, True),
        (ServiceUnavailable("down"), ErrorType.TRANSIENT, True),
        (TransientError("deadlock"), ErrorType.TRANSIENT, True),
        (no_index, ErrorType.TRANSIENT, False),
        (RuntimeError("bug"), ErrorType.UNKNOWN, False)]
    return [(classify_neo4j_error(error), expected, retryable) for error, expected, retryable in cases]


@pytest.mark.parametrize(("error", "expected", "retryable"), _neo4j_errors())
def test_tool_turns_failures_into_typed_errors(error: BaseException, expected: ErrorType,
                                               retryable: bool) -> None:
    # Given a graph that fails
    # When the tool runs
    result = knowledge_search.run(_task(question="how long to return?"), _ctx(FakeGraph(error=error)))
    # Then it does not raise: the failure is data with a type and a retry hint
    assert result.status == TaskStatus.FAILED and result.error is not None
    assert (result.error.type, result.error.retryable) == (expected, retryable)
    assert "Traceback" not in result.error.message


def test_tool_without_embedder_falls_back_to_keyword_search() -> None:
    ctx = ToolContext(graph=FakeGraph(search_row([], [RETURNS])), customer_id="c1", embedder=None)
    result = knowledge_search.run(_task(question="return an item within days"), ctx)
    assert result.status == TaskStatus.FALLBACK and result.data is not None
    assert result.data.mode == "keyword"


def test_a_how_long_answer_comes_from_the_hit_that_gives_a_duration() -> None:
    # Given a manual that mentions the warranty ranking above the warranty terms that give its period
    manual = chunk_detail("manual-headphones#3", 0.7, "Wipe the cushions with a damp cloth. Replacement ear "
                                                 "cushions are not covered by the warranty.")
    terms = chunk_detail("warranty#2", 0.6, "Headphones and Laptops: 1 year of parts and labour.")
    search = KnowledgeSearch(FakeGraph(search_row([manual, terms], [manual, terms])), FakeEmbedder())
    result = search.search("how long is the warranty on the headphones?")
    assert result.hits[0].chunk_id == "manual-headphones#3"
    # When the answer is taken
    answer = search.answer("how long is the warranty on the headphones?", result)
    # Then it gives the period, from the warranty terms
    assert answer == "Headphones and Laptops: 1 year of parts and labour."


def test_the_period_of_the_product_asked_about_is_its_own_sentence_not_its_neighbours() -> None:
    # Given warranty terms whose electronics paragraph names the smart watch in its first sentence and
    # says more about batteries in the next, and a wristwatch's own term ranked first
    watch = chunk_detail("warranty#5", 0.7, "Wristwatch: 2 years on the movement; straps and glass are "
                                            "not covered.")
    electronics = chunk_detail("warranty#2", 0.6, "Laptop, Headphones and Smart Watch: 1 year of parts and "
                                                  "labour. Built-in batteries are covered for the same year "
                                                  "if they fall below 70% of their original capacity.")
    hits = [watch, electronics]
    search = KnowledgeSearch(FakeGraph(search_row(hits, hits)), FakeEmbedder())
    question = "is my smart watch still covered by warranty?"
    result = search.search(question)
    # When the answer is taken for the Smart Watch
    answer = search.answer(question, result, products=["Smart Watch"])
    # Then it is the Smart Watch's term, first
    assert answer.startswith("Laptop, Headphones and Smart Watch: 1 year of parts and labour.")
    # And without the product asked about, the best-ranked hit with a period answers, as before
    assert search.answer(question, result).startswith("Wristwatch: 2 years")


@pytest.mark.parametrize("question", ["what is the warranty on those headphones?",
                                      "What's the warranty period for the headphones",
                                      "whats the warranty on the headphones I ordered"])
def test_asking_what_the_warranty_is_gets_its_term(question: str) -> None:
    # Given the manual above the warranty terms, as for "how long"
    manual = chunk_detail("manual-headphones#3", 0.7,
                          "Replacement ear cushions are not covered by the warranty.")
    terms = chunk_detail("warranty#2", 0.6, "Headphones and Laptops: 1 year of parts and labour.")
    search = KnowledgeSearch(FakeGraph(search_row([manual, terms], [manual, terms])), FakeEmbedder())
    # When the customer asks what the warranty is
    answer = search.answer(question, search.search(question))
    # Then the answer is the term, not a remark from the manual
    assert answer == "Headphones and Laptops: 1 year of parts and labour."

def test_a_question_not_asking_for_a_duration_is_answered_from_the_best_hit() -> None:
    # Given the same two hits
    manual = chunk_detail("manual-headphones#3", 0.7,
                          "Replacement ear cushions are not covered by the warranty.")
    terms = chunk_detail("warranty#2", 0.6, "Headphones and Laptops: 1 year of parts and labour.")
    search = KnowledgeSearch(FakeGraph(search_row([manual, terms], [manual, terms])), FakeEmbedder())
    # When the question asks whether something is covered
    answer = search.answer("are ear cushions covered?", search.search("are ear cushions covered?"))
    # Then the best-ranked hit answers
    assert answer == "Replacement ear cushions are not covered by the warranty."


def test_the_paragraph_opener_that_states_the_rule_comes_with_its_details() -> None:
    # Given a policy paragraph whose first sentence states the rule and whose next one details it
    text = ("A delivered order can be exchanged within 30 days of delivery. Each item can be exchanged "
            "for the same product in another size.")
    search = KnowledgeSearch(FakeGraph(search_row([chunk_detail("exchanges#0", 0.8, text)], [])), None)
    result = search.search("can I exchange an item for a different size?")
    # When the answer is taken
    answer = search.answer("can I exchange an item for a different size?", result)
    # Then the rule (with its 30 days) opens the answer
    assert answer.startswith("A delivered order can be exchanged within 30 days of delivery.")


def test_a_paragraph_opener_about_something_else_is_left_out() -> None:
    # Given an FAQ answer whose opener answers only its heading
    text = "Not at the moment. We deliver to addresses in the United States, including PO boxes."
    search = KnowledgeSearch(FakeGraph(search_row([chunk_detail("faq#9", 0.8, text)], [])), None)
    result = search.search("do you deliver to PO boxes?")
    # When the answer is taken
    answer = search.answer("do you deliver to PO boxes?", result)
    # Then the unrelated opener is not in it
    assert answer == "We deliver to addresses in the United States, including PO boxes."


def test_a_question_whether_something_is_covered_gets_the_sentence_that_says_so() -> None:
    # Given the warranty terms for a category: the period, then what is not covered
    terms = chunk_detail("warranty#4", 0.7, "Coffee Maker, Vacuum Cleaner and Air Purifier: 1 year. Espresso "
                                       "Machine: 2 years. Filters, vacuum bags and brushes are consumables "
                                       "and are not covered.")
    from csagent.knowledge.asked import shipped
    from csagent.nlp.embeddings import get_embedder

    # (MiniLM scores the sentences with the asked questions, as in the product)
    embedder = get_embedder()
    search = KnowledgeSearch(FakeGraph(search_row([terms], [terms])), embedder, asked=shipped(embedder))
    question = "air purifier filter worn out, will the warranty replace it?"
    # When the customer asks whether their case is covered
    answer = search.answer(question, search.search(question))
    # Then the answer says what is not covered, not only the period
    assert "Filters, vacuum bags and brushes are consumables and are not covered." in answer
