"""Parse an uploaded knowledge document (Markdown, HTML, plain text, PDF) into titled sections.

Every format ends in the same shape, `ParsedDocument`: a title and the sections in document
order, each with its heading path ("Return policy > Refunds") and its text. The chunker cuts
sections into chunks and never lets a chunk span two sections, so a citation names the section
an answer came from.

- **Markdown** (`.md`, `.markdown`): markdown-it-py (CommonMark + GFM tables) finds the
  headings (ATX and setext; a `#` inside a fenced block is text) and the tables; a section's text
  is its source lines. An optional front-matter block (`doc_id`, `title`, `kind`, `products`,
  `categories`: the shipped documents' format, `chunking.parse_front_matter`) is honoured.
- **HTML** (`.html`, `.htm`): the standard library's `html.parser`; `<h1>`..`<h6>` are headings,
  `<title>` (else the first `<h1>`) the title; `script`, `style`, `head`, `nav`, `template`,
  `noscript` are dropped.
- **Plain text** (`.txt`): one section under the title; paragraphs are kept.
- **PDF** (`.pdf`): pypdf's text layer, page by page. The outline (bookmarks), when the file has
  one, names the sections ("Manual > Cleaning"): a bookmark points at a page, and its section
  starts at the line that prints its title (so several sections can share a page), else at the
  top of that page. Without an outline each page is a section ("Manual > Page 3"). Headings that
  are only big type (no bookmark) are not detected: pypdf's plain text has no font sizes. A page
  with no text layer (a scanned image) is skipped and reported in
  `pages_without_text`; no OCR runs on uploads. A PDF with no text on any page is rejected.

A table, in any format that marks one (Markdown, HTML), becomes one line per row with each cell
named by its column header ("Plan: Premium; Price: $20; Term: 2 years"), so a chunk cut between
rows still says what each value is. PDF has no table markup; its tables are text as extracted.

Bad input is a `DocumentRejected` with an HTTP status and a stable code: unsupported type (415),
too large (413), empty or corrupt (422). Pure functions; nothing is read or written here.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePath
from typing import Any

from csagent.domain.errors import DomainError
from csagent.knowledge.chunking import SECTION_SEPARATOR, DocumentError, parse_front_matter

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""Largest accepted upload (the API's body limit is 6 MB: Lambda's synchronous payload)."""
MAX_SECTIONS = 2000

FORMATS: dict[str, str] = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
                           ".txt": "text", ".pdf": "pdf"}
MEDIA_TYPES: dict[str, str] = {"text/markdown": "markdown", "text/x-markdown": "markdown",
                               "text/html": "html", "application/xhtml+xml": "html",
                               "text/plain": "text", "application/pdf": "pdf"}
DOC_KINDS = ("policy", "faq", "warranty", "manual")


class DocumentRejected(DomainError):
    """An upload that cannot be indexed (the HTTP edge answers `status_code` with `code`);
    nothing is written for it."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status_code = status
        self.code = code


@dataclass(frozen=True, slots=True)
class Section:
    """A titled part of a document: `path` joins the enclosing headings with " > "."""

    path: str
    text: str


@dataclass(frozen=True)
class ParsedDocument:
    """What a parser found: the title, the sections in order, and what it could not read."""

    title: str
    sections: tuple[Section, ...]
    format: str
    kind: str = "policy"
    doc_id: str | None = None
    products: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    pages: int = 0
    pages_without_text: tuple[int, ...] = field(default=())

# --------------------------------------------------------------------------- format detection


def detect_format(filename: str, content_type: str | None = None) -> str:
    """The parser for an upload: by file extension, else by media type; 415 when neither fits."""
    suffix = PurePath(filename or "").suffix.lower()
    if suffix in FORMATS:
        return FORMATS[suffix]
    media = (content_type or "").split(";")[0].strip().lower()
    if not suffix and media in MEDIA_TYPES:
        return MEDIA_TYPES[media]
    raise DocumentRejected(415, "unsupported_type",
                           f"'{filename or 'the file'}' is not a supported type: upload Markdown (.md), "
                           "HTML (.html), plain text (.txt) or PDF (.pdf)")


def title_from_filename(filename: str) -> str:
    stem = PurePath(filename or "document").stem
    words = re.sub(r"[_\-]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else "Document"


def _decode(data: bytes) -> str:
    if b"\x00" in data:
        raise DocumentRejected(422, "corrupt_document", "the file holds binary data, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentRejected(422, "corrupt_document",
                               f"the file is not UTF-8 text (byte {exc.start} is invalid)") from None


# --------------------------------------------------------------------------- tables


def table_lines(rows: Sequence[Sequence[str]], header: Sequence[str] | None) -> list[str]:
    """One line per body row, each cell named by its column header when there is one."""
    lines = []
    for row in rows:
        cells = [" ".join(c.split()) for c in row]
        if header:
            parts = [f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=False) if c]
            parts.extend(c for c in cells[len(header):] if c)
        else:
            parts = [c for c in cells if c]
        if parts:
            lines.append("; ".join(parts) + ".")
    return lines


# --------------------------------------------------------------------------- sections


class _Sections:
    """Collects (heading path, text) as headings and text blocks arrive in document order."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.stack: list[tuple[int, str]] = []
        self.buffer: list[str] = []
        self.out: list[Section] = []
        self.bare = False  # the last heading has no text yet

    def path(self) -> str:
        return SECTION_SEPARATOR.join(t for _, t in self.stack) if self.stack else self.root

    def flush(self) -> None:
        text = "\n".join(self.buffer).strip()
        if text:
            self.out.append(Section(self.path(), text))
            self.bare = False
        self.buffer.clear()

    def _keep_a_bare_heading(self) -> None:
        """A heading with no text under it and none below it ("Returns" followed straight by a
        heading of its level) keeps its words as its own section's text."""
        if self.bare and self.stack:
            self.out.append(Section(self.path(), self.stack[-1][1]))
        self.bare = False

    def heading(self, level: int, title: str) -> None:
        self.flush()
        title = " ".join(title.split())
        if self.stack and level <= self.stack[-1][0]:
            self._keep_a_bare_heading()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        if title:
            self.stack.append((level, title))
        self.bare = bool(title)

    def text(self, text: str) -> None:
        self.buffer.append(text)

    def done(self) -> tuple[Section, ...]:
        self.flush()
        self._keep_a_bare_heading()
        if len(self.out) > MAX_SECTIONS:
            raise DocumentRejected(413, "too_many_sections",
                                   f"the document has {len(self.out)} sections; at most {MAX_SECTIONS}")
        return tuple(self.out)


# --------------------------------------------------------------------------- Markdown


def _markdown_parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _inline_text(token: Any) -> str:
    return " ".join(str(token.content).split())


def parse_markdown(text: str, *, title: str | None = None, filename: str = "") -> ParsedDocument:
    """Headings and tables by markdown-it-py; a section's text is its source lines."""
    meta: dict[str, Any] = {}
    body = text.lstrip("\ufeff")
    if body.startswith("---"):
        try:
            meta, body = parse_front_matter(body)
        except DocumentError as exc:
            raise DocumentRejected(422, "corrupt_document", f"the front matter is invalid: {exc}") from None
    tokens = _markdown_parser().parse(body)
    lines = body.splitlines()
    headings: dict[int, tuple[int, int, str]] = {}  # start line -> (end line, level, title)
    tables: dict[int, tuple[int, list[str]]] = {}  # start line -> (end line, rendered rows)
    first_h1 = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level == 0 and tok.type == "heading_open" and tok.map:
            heading = _inline_text(tokens[i + 1])
            headings[tok.map[0]] = (tok.map[1], int(tok.tag[1]), heading)
            if first_h1 is None and tok.tag == "h1":
                first_h1 = heading
        elif tok.level == 0 and tok.type == "table_open" and tok.map:
            start, end = tok.map
            header: list[str] = []
            rows: list[list[str]] = []
            in_head = False
            while tokens[i].type != "table_close":
                t = tokens[i]
                if t.type == "thead_open":
                    in_head = True
                elif t.type == "thead_close":
                    in_head = False
                elif t.type == "tr_open":
                    if in_head:
                        header.clear()
                    else:
                        rows.append([])
                elif t.type == "inline":
                    (header if in_head else rows[-1]).append(_inline_text(t))
                i += 1
            tables[start] = (end, table_lines(rows, header))
        i += 1
    meta_title = str(meta["title"]) if isinstance(meta.get("title"), str) and meta["title"] else None
    doc_title = title or meta_title or first_h1 or title_from_filename(filename)
    sections = _Sections(doc_title)
    n = 0
    while n < len(lines):
        if n in headings:
            end, level, heading = headings[n]
            sections.heading(level, heading)
            n = end
        elif n in tables:
            end, rendered = tables[n]
            sections.text("\n".join(rendered))
            n = end
        else:
            sections.text(lines[n])
            n += 1
    kind = str(meta.get("kind") or "policy")
    return ParsedDocument(title=doc_title, sections=sections.done(), format="markdown",
                          kind=kind if kind in DOC_KINDS else "policy",
                          doc_id=str(meta["doc_id"]) if isinstance(meta.get("doc_id"), str) else None,
                          products=_as_tuple(meta.get("products")),
                          categories=_as_tuple(meta.get("categories")))


def _as_tuple(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, Iterable):
        return tuple(str(v) for v in value if v)
    return ()


# --------------------------------------------------------------------------- HTML

_SKIPPED = frozenset({"script", "style", "head", "nav", "template", "noscript", "svg"})
_BLOCKS = frozenset({"p", "div", "li", "ul", "ol", "section", "article", "main", "br", "dd", "dt", "dl",
                     "blockquote", "pre", "header", "footer", "aside", "figure", "figcaption", "hr"})


class _HtmlSections(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple[str, Any]] = []  # ("h", (level, text)) | ("p", text) | ("t", lines)
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._heading: tuple[int, list[str]] | None = None
        self._para: list[str] = []
        self._table: list[tuple[bool, list[str]]] | None = None  # rows: (is header row, cells)
        self._cell: list[str] | None = None
        self._cell_is_header = False

    def _flush_para(self) -> None:
        text = " ".join("".join(self._para).split())
        if text:
            self.events.append(("p", text))
        self._para = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _SKIPPED:
            self._skip += 1
            return
        if self._skip:
            return
        if re.fullmatch(r"h[1-6]", tag):
            self._flush_para()
            self._heading = (int(tag[1]), [])
        elif tag == "table":
            self._flush_para()
            self._table = []
        elif tag == "tr" and self._table is not None:
            self._table.append((True, []))
        elif tag in ("td", "th") and self._table is not None:
            self._cell, self._cell_is_header = [], tag == "th"
        elif tag in _BLOCKS and self._table is None:
            self._flush_para()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIPPED:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        if self._heading is not None and tag == f"h{self._heading[0]}":
            self.events.append(("h", (self._heading[0], " ".join("".join(self._heading[1]).split()))))
            self._heading = None
        elif tag in ("td", "th") and self._table is not None and self._cell is not None:
            if not self._table:
                self._table.append((True, []))
            is_header, cells = self._table[-1]
            cells.append(" ".join("".join(self._cell).split()))
            self._table[-1] = (is_header and self._cell_is_header, cells)
            self._cell = None
        elif tag == "table" and self._table is not None:
            rows = [(h, c) for h, c in self._table if c]
            header = rows[0][1] if rows and rows[0][0] else None
            body = [c for _, c in (rows[1:] if header else rows)]
            lines = table_lines(body, header)
            if lines:
                self.events.append(("t", lines))
            self._table = None
        elif tag in _BLOCKS and self._table is None:
            self._flush_para()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._skip:
            return
        if self._heading is not None:
            self._heading[1].append(data)
        elif self._cell is not None:
            self._cell.append(data)
        elif self._table is None:
            self._para.append(data)

    def close(self) -> None:
        super().close()
        self._flush_para()


def parse_html(text: str, *, title: str | None = None, filename: str = "") -> ParsedDocument:
    parser = _HtmlSections()
    try:
        parser.feed(text)
        parser.close()
    except Exception as exc:  # noqa: BLE001 - html.parser is lenient; anything it raises is bad input
        raise DocumentRejected(422, "corrupt_document", f"the HTML could not be parsed: {exc}") from None
    first_h1 = next((e[1][1] for e in parser.events if e[0] == "h" and e[1][0] == 1 and e[1][1]), None)
    doc_title = title or " ".join(parser.title.split()) or first_h1 or title_from_filename(filename)
    sections = _Sections(doc_title)
    for kind, value in parser.events:
        if kind == "h":
            sections.heading(*value)
        elif kind == "p":
            sections.text(value + "\n")
        else:
            sections.text("\n".join(value) + "\n")
    return ParsedDocument(title=doc_title, sections=sections.done(), format="html")


# --------------------------------------------------------------------------- plain text


def parse_text(text: str, *, title: str | None = None, filename: str = "") -> ParsedDocument:
    doc_title = title or title_from_filename(filename)
    body = "\n".join(line.rstrip() for line in text.splitlines()).strip()
    sections = (Section(doc_title, body),) if body else ()
    return ParsedDocument(title=doc_title, sections=sections, format="text")


# --------------------------------------------------------------------------- PDF


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _outline_starts(reader: Any) -> dict[int, list[str]]:
    """Page (0-based) -> heading paths of the outline entries that start on it, in order (nested
    entries joined with " > ")."""
    starts: dict[int, list[str]] = {}

    def walk(items: Sequence[Any], parents: tuple[str, ...]) -> None:
        last: tuple[str, ...] = parents
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            name = " ".join(str(getattr(item, "title", "") or "").split())
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # noqa: BLE001 - a broken bookmark is ignored, the text is not
                page = None
            last = (*parents, name) if name else parents
            if page is not None and page >= 0 and name:
                starts.setdefault(page, []).append(SECTION_SEPARATOR.join(last))

    try:
        walk(reader.outline or [], ())
    except Exception:  # noqa: BLE001 - no usable outline: pages become sections
        return {}
    return starts


def parse_pdf(data: bytes, *, title: str | None = None, filename: str = "") -> ParsedDocument:
    if not data.startswith(b"%PDF-"):
        raise DocumentRejected(422, "corrupt_document", "the file is not a PDF (no %PDF- header)")
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise DocumentRejected(422, "encrypted_document",
                                   "the PDF is encrypted; upload it without a password")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
        meta_title = str(info.title or "").strip() if info is not None else ""
        starts = _outline_starts(reader)
    except DocumentRejected:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf's errors for damaged files vary (PdfReadError, ...)
        raise DocumentRejected(422, "corrupt_document",
                               f"the PDF could not be read: {type(exc).__name__}") from None
    doc_title = title or meta_title or title_from_filename(filename)
    empty = tuple(n + 1 for n, text in enumerate(pages) if not text.strip())
    if pages and len(empty) == len(pages):
        raise DocumentRejected(422, "no_text_layer",
                               "the PDF has no text layer on any page (scanned images?); OCR is not run "
                               "on uploads: upload a PDF with text, or the text itself")
    sections: list[Section] = []
    current: str | None = None

    def add(heading: str | None, page: int, lines: Sequence[str]) -> None:
        path = SECTION_SEPARATOR.join(p for p in (doc_title, heading or f"Page {page + 1}") if p)
        body = "\n".join(line.rstrip() for line in lines).strip()
        if not body:
            return
        if sections and sections[-1].path == path:
            sections[-1] = Section(path, sections[-1].text + "\n\n" + body)
        else:
            sections.append(Section(path, body))

    for n, text in enumerate(pages):
        lines = text.splitlines()
        start, deferred = 0, None
        for heading in starts.get(n, []):
            # A bookmark points at a page; its section starts at its title's line when the page
            # prints it (several sections on one page), else at the top of the page - or, after a
            # section found on this page, at the next page.
            title = _norm(heading.split(SECTION_SEPARATOR)[-1])
            found = next((i for i in range(start, len(lines)) if _norm(lines[i]) == title), None)
            if found is None and start > 0:
                deferred = heading
                continue
            cut = start if found is None else found
            add(current, n, lines[start:cut])
            current, start = heading, cut if found is None else found + 1
        add(current, n, lines[start:])
        current = deferred or current
    return ParsedDocument(title=doc_title, sections=tuple(sections), format="pdf", pages=len(pages),
                          pages_without_text=empty)


# --------------------------------------------------------------------------- entry point


def parse_upload(data: bytes, filename: str, content_type: str | None = None, *, title: str | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedDocument:
    """Parse one uploaded file; `DocumentRejected` (413, 415, 422) for anything not indexable."""
    fmt = detect_format(filename, content_type)
    if len(data) > max_bytes:
        raise DocumentRejected(413, "document_too_large",
                               f"the file is {len(data)} bytes; at most {max_bytes} bytes are accepted")
    if not data.strip():
        raise DocumentRejected(422, "empty_document", "the file is empty")
    title = " ".join((title or "").split())[:200] or None
    if fmt == "pdf":
        parsed = parse_pdf(data, title=title, filename=filename)
    else:
        text = _decode(data)
        parser = {"markdown": parse_markdown, "html": parse_html, "text": parse_text}[fmt]
        parsed = parser(text, title=title, filename=filename)
    if not parsed.sections:
        raise DocumentRejected(422, "empty_document", "the file has no text to index")
    return parsed
