"""Parsing uploads into titled sections (csagent.knowledge.parsing): Markdown, HTML, plain text
and PDF, tables kept as labelled rows, and the 4xx refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csagent.knowledge.chunking import load_documents, split_sections
from csagent.knowledge.ingest import DEFAULT_DOCS_DIR
from csagent.knowledge.parsing import DocumentRejected, parse_markdown, parse_upload, table_lines
from devstack.kb_pdf import text_pdf


def _sections(parsed: object) -> list[tuple[str, str]]:
    return [(s.path, s.text) for s in parsed.sections]  # type: ignore[attr-defined]


def test_the_shipped_documents_parse_exactly_as_the_old_chunker_split_them() -> None:
    # The shipped vectors (and every citation label) stay valid: markdown-it-py finds the same sections
    for doc, path in zip(load_documents(DEFAULT_DOCS_DIR), sorted(Path(DEFAULT_DOCS_DIR).glob("*.md")),
                         strict=True):
        parsed = parse_markdown(path.read_text(encoding="utf-8"))
        assert _sections(parsed) == split_sections(doc.body, root=doc.title), path.name
        assert (parsed.doc_id, parsed.title, parsed.kind) == (doc.doc_id, doc.title, doc.kind)


def test_markdown_headings_nest_and_a_hash_in_a_code_fence_is_text() -> None:
    text = b"# Care\n\nIntro.\n\n## Cleaning\n\n```\n# not a heading\n```\n\nSetext\n------\n\nBody.\n"
    parsed = parse_upload(text, "care.md")
    assert _sections(parsed) == [("Care", "Intro."), ("Care > Cleaning", "```\n# not a heading\n```"),
                                 ("Care > Setext", "Body.")]


def test_a_markdown_table_becomes_one_labelled_line_per_row() -> None:
    parsed = parse_upload(b"# Plans\n\n| Plan | Term |\n|---|---|\n| Basic | 1 year |\n| Plus | 3 years |\n",
                          "plans.md")
    assert _sections(parsed) == [("Plans", "Plan: Basic; Term: 1 year.\nPlan: Plus; Term: 3 years.")]


def test_html_drops_scripts_and_keeps_headings_paragraphs_and_tables() -> None:
    html = (b"<html><head><title>Kettle guide</title><script>x()</script></head><body><nav>Home</nav>"
            b"<h1>Kettle</h1><p>Fill to the MAX line.</p><h2>Descaling</h2><p>Use vinegar &amp; water.</p>"
            b"<table><tr><th>Water</th><th>Every</th></tr><tr><td>Hard</td><td>month</td></tr></table></body></html>")
    parsed = parse_upload(html, "kettle.html")
    assert parsed.title == "Kettle guide"
    assert _sections(parsed) == [("Kettle", "Fill to the MAX line."),
                                 ("Kettle > Descaling", "Use vinegar & water.\n\nWater: Hard; Every: month.")]


def test_plain_text_is_one_section_under_the_given_title() -> None:
    parsed = parse_upload(b"Line one.\n\nLine two.\n", "notes.txt", title="Store notes")
    assert _sections(parsed) == [("Store notes", "Line one.\n\nLine two.")]


def test_a_pdf_outline_names_the_sections_and_a_scanned_page_is_reported() -> None:
    pdf = text_pdf([["Returns within 30 days."], [], ["Refunds in 5 days."]], title="Return policy",
                   outline=[("Returns", 0), ("Refunds", 2)])
    parsed = parse_upload(pdf, "returns.pdf")
    assert parsed.title == "Return policy" and parsed.pages == 3 and parsed.pages_without_text == (2,)
    assert _sections(parsed) == [("Return policy > Returns", "Returns within 30 days."),
                                 ("Return policy > Refunds", "Refunds in 5 days.")]


def test_several_bookmarks_on_one_page_split_it_at_their_printed_titles() -> None:
    pdf = text_pdf([["Returns", "Within 30 days.", "Exchanges", "Once per item."], ["More on exchanges."]],
                   title="Policy", outline=[("Returns", 0), ("Exchanges", 0)])
    assert _sections(parse_upload(pdf, "p.pdf")) == [
        ("Policy > Returns", "Within 30 days."),
        ("Policy > Exchanges", "Once per item.\n\nMore on exchanges.")]


def test_a_pdf_without_an_outline_cites_pages() -> None:
    parsed = parse_upload(text_pdf([["one"], ["two"]]), "manual.pdf")
    assert [s.path for s in parsed.sections] == ["Manual > Page 1", "Manual > Page 2"]


@pytest.mark.parametrize(("name", "data", "status", "code"), [
    ("a.docx", b"PK..", 415, "unsupported_type"),
    ("a.md", b"", 422, "empty_document"),
    ("a.md", b"  \n", 422, "empty_document"),
    ("a.html", b"<html><script>only()</script></html>", 422, "empty_document"),
    ("a.txt", b"\x00\x01binary", 422, "corrupt_document"),
    ("a.txt", b"caf\xe9", 422, "corrupt_document"),
    ("a.pdf", b"not a pdf", 422, "corrupt_document"),
    ("a.pdf", b"%PDF-1.7\ntruncated", 422, "corrupt_document"),
])
def test_what_cannot_be_indexed_is_refused_with_a_status_and_a_code(name: str, data: bytes, status: int,
                                                                    code: str) -> None:
    with pytest.raises(DocumentRejected) as caught:
        parse_upload(data, name)
    assert (caught.value.status_code, caught.value.code) == (status, code)


def test_a_scanned_pdf_is_refused_as_having_no_text_layer() -> None:
    with pytest.raises(DocumentRejected) as caught:
        parse_upload(text_pdf([[], []]), "scan.pdf")
    assert (caught.value.status_code, caught.value.code) == (422, "no_text_layer")


def test_an_oversized_file_is_refused_before_parsing() -> None:
    with pytest.raises(DocumentRejected) as caught:
        parse_upload(b"x" * 101, "a.txt", max_bytes=100)
    assert (caught.value.status_code, caught.value.code) == (413, "document_too_large")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_any_markdown_parses_or_is_refused_and_loses_no_word(text: str) -> None:
    try:
        parsed = parse_markdown(text)
    except DocumentRejected:
        return
    joined = " ".join(f"{s.path} {s.text}" for s in parsed.sections)
    for word in text.split():
        if word.isalnum() and not text.lstrip().startswith("---"):
            assert word in joined or word in parsed.title


@given(st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=4), max_size=5))
def test_table_rows_never_lose_a_non_blank_cell(rows: list[list[str]]) -> None:
    lines = table_lines(rows, ["A", "B"])
    for row in rows:
        for cell in row:
            if cell.strip():
                assert any(" ".join(cell.split()) in line for line in lines)
