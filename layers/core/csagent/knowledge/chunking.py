"""Knowledge-base documents: front matter parsing and heading-aware chunking.

A knowledge document is Markdown with a small front-matter block:

    ---
    doc_id: returns-refunds
    title: Return and refund policy
    kind: policy            # policy | faq | warranty | manual
    categories: [Electronics]
    products: [Wireless Earbuds]
    ---
    # Return and refund policy
    ## Return window
    ...

Chunking follows the document's structure: the body is split on Markdown headings, every
chunk remembers its heading path (`"Return and refund policy > Return window"`) as `section`,
and a chunk never spans two sections. A section longer than `max_chars` is cut into windows of
roughly `min_chars`..`max_chars` characters, preferring paragraph and sentence ends, with about
`overlap` characters repeated between neighbours, and never inside a word. Chunk ids are
`<doc_id>#<n>` with `n` counting from 0 in document order, so the same text always yields the
same ids (re-ingesting replaces chunks in place, and seed scripts can restore links by id).

Pure functions, no I/O except `load_documents`, which reads a directory when called.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

DOC_KINDS: frozenset[str] = frozenset({"policy", "faq", "warranty", "manual"})
SECTION_SEPARATOR = " > "
DEFAULT_MAX_CHARS = 800
DEFAULT_MIN_CHARS = 500
DEFAULT_OVERLAP = 100

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_DOC_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)")
_WHITESPACE = re.compile(r"\s")


class DocumentError(ValueError):
    """A knowledge document whose front matter is missing or invalid."""


@dataclass(frozen=True, slots=True)
class KnowledgeDoc:
    """One knowledge-base document: front-matter fields and the Markdown body."""

    doc_id: str
    title: str
    kind: str
    body: str
    categories: tuple[str, ...] = ()
    products: tuple[str, ...] = ()
    source: str = ""

    @property
    def content_hash(self) -> str:
        """SHA-256 of everything that shapes the chunks (front matter and body)."""
        parts = (self.doc_id, self.title, self.kind, "|".join(self.categories),
                 "|".join(self.products), self.body)
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable piece of a document: `chunk_id` is `<doc_id>#<seq>`."""

    chunk_id: str
    doc_id: str
    seq: int
    section: str
    text: str

    @property
    def embedding_text(self) -> str:
        """What is embedded: the heading path gives the body its context ("Warranty > Sports")."""
        return f"{self.section}\n{self.text}" if self.section else self.text

    @property
    def content_hash(self) -> str:
        """SHA-256 of what is embedded: an unchanged chunk keeps its vector (`knowledge.service`)."""
        return hashlib.sha256(self.embedding_text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- front matter


def _parse_scalar(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _parse_list(raw: str) -> list[str]:
    inner = raw.strip()[1:-1]
    return [item for item in (_parse_scalar(part) for part in inner.split(",")) if item]


def parse_front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """Split `text` into its front-matter mapping and the body after it.

    Supports the subset the knowledge base uses: `key: value`, `key: [a, b]` and block lists
    (`key:` followed by `- item` lines). Raises `DocumentError` when there is no front matter.
    """
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise DocumentError("document does not start with a '---' front-matter block")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise DocumentError("front-matter block is not closed with '---'") from None
    meta: dict[str, str | list[str]] = {}
    current_list: list[str] | None = None
    for number, line in enumerate(lines[1:end], start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and current_list is not None:
            current_list.append(_parse_scalar(stripped[2:]))
            continue
        key, sep, value = stripped.partition(":")
        if not sep or not key.strip():
            raise DocumentError(f"front-matter line {number} is not 'key: value': {line!r}")
        key, value = key.strip(), value.strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key], current_list = _parse_list(value), None
        elif value == "":
            current_list = []
            meta[key] = current_list
        else:
            meta[key], current_list = _parse_scalar(value), None
    return meta, "\n".join(lines[end + 1:]).strip("\n")


def _as_tuple(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(value)


def parse_document(text: str, *, source: str = "") -> KnowledgeDoc:
    """Build a `KnowledgeDoc` from Markdown with front matter; validates the required fields."""
    meta, body = parse_front_matter(text)
    where = f" in {source}" if source else ""
    for key in ("doc_id", "title", "kind"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise DocumentError(f"front matter lacks '{key}'{where}")
    doc_id, title, kind = str(meta["doc_id"]), str(meta["title"]), str(meta["kind"])
    if not _DOC_ID.match(doc_id):
        raise DocumentError(f"doc_id {doc_id!r}{where} must be lowercase letters, digits, '-' or '_'")
    if kind not in DOC_KINDS:
        raise DocumentError(f"kind {kind!r}{where} is not one of {sorted(DOC_KINDS)}")
    return KnowledgeDoc(doc_id=doc_id, title=title, kind=kind, body=body,
                        categories=_as_tuple(meta.get("categories")),
                        products=_as_tuple(meta.get("products")), source=source)


def load_documents(docs_dir: Path) -> list[KnowledgeDoc]:
    """Every `*.md` document in `docs_dir` (sorted by file name); doc ids must be unique."""
    docs: list[KnowledgeDoc] = []
    seen: dict[str, str] = {}
    for path in sorted(Path(docs_dir).glob("*.md")):
        doc = parse_document(path.read_text(encoding="utf-8"), source=path.name)
        if doc.doc_id in seen:
            raise DocumentError(f"doc_id {doc.doc_id!r} is used by both {seen[doc.doc_id]} and {path.name}")
        seen[doc.doc_id] = path.name
        docs.append(doc)
    return docs


# --------------------------------------------------------------------------- sections


def split_sections(body: str, *, root: str = "") -> list[tuple[str, str]]:
    """`(heading path, text)` for every section of a Markdown body that has text of its own.

    The path joins the enclosing headings with " > " (an `## A` under `# T` is "T > A"); text
    before the first heading belongs to `root`. Headings inside fenced code blocks are text.
    Sections with no text (a heading directly followed by a sub-heading) are skipped.
    """
    sections: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    buffer: list[str] = []
    in_fence = False

    def path() -> str:
        return SECTION_SEPARATOR.join(title for _, title in stack) if stack else root

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if text:
            sections.append((path(), text))
        buffer.clear()

    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            buffer.append(line)
            continue
        flush()
        level, title = len(match.group(1)), match.group(2).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    flush()
    return sections


# --------------------------------------------------------------------------- windows


def _last_match_end(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> int | None:
    """End of the last match of `pattern` that ends within (lo, hi]."""
    best = None
    for match in pattern.finditer(text, lo, hi + 1):
        if lo < match.end() <= hi:
            best = match.end()
    return best


def _cut_point(text: str, start: int, lo: int, hi: int) -> int:
    """Where to end a window that starts at `start`: the last paragraph break, else sentence end,
    else whitespace in [lo, hi]; failing that the last whitespace after `start`; failing that
    (one enormous word) the next whitespace after `hi`. Never inside a word."""
    for pattern in (_PARAGRAPH_BREAK, _SENTENCE_END):
        end = _last_match_end(pattern, text, lo, hi)
        if end is not None:
            return end
    for low in (lo, start + 1):
        space = max(text.rfind(ch, low, hi + 1) for ch in " \n\t")
        if space > start:
            return space
    nxt = _WHITESPACE.search(text, hi)
    return nxt.start() if nxt else len(text)


def _rstrip_index(text: str, end: int) -> int:
    """Move `end` back over trailing whitespace."""
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


def _next_word_start(text: str, pos: int) -> int:
    """The first index >= pos where a word starts (preceded by whitespace or the text start)."""
    n = len(text)
    while pos < n and (text[pos].isspace() or (pos > 0 and not text[pos - 1].isspace())):
        pos += 1
    return pos


def split_spans(text: str, *, max_chars: int = DEFAULT_MAX_CHARS, min_chars: int = DEFAULT_MIN_CHARS,
                overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, int]]:
    """Character spans `[start, end)` covering `text` in windows of at most `max_chars`.

    Windows end at a paragraph or sentence end between `min_chars` and `max_chars` when there
    is one, else at whitespace; the next window starts about `overlap` characters earlier, at
    the start of a word. A span never starts or ends inside a word, so a single word longer than
    `max_chars` yields a longer span. Spans are trimmed of surrounding whitespace.
    """
    if max_chars <= 0 or not 0 <= overlap < max_chars or not 0 < min_chars <= max_chars:
        raise ValueError("need 0 < min_chars <= max_chars and 0 <= overlap < max_chars")
    spans: list[tuple[int, int]] = []
    n = len(text)
    start = _next_word_start(text, 0)
    while start < n:
        end = n if n - start <= max_chars else _cut_point(text, start, start + min_chars, start + max_chars)
        trimmed_end = _rstrip_index(text, end)
        if trimmed_end > start:
            spans.append((start, trimmed_end))
        if end >= n:
            break
        nxt = _next_word_start(text, max(end - overlap, start + 1))
        if nxt >= end:  # no word starts inside the overlap: continue after the cut
            nxt = _next_word_start(text, end)
        start = nxt
    return spans


def split_text(text: str, *, max_chars: int = DEFAULT_MAX_CHARS, min_chars: int = DEFAULT_MIN_CHARS,
               overlap: int = DEFAULT_OVERLAP) -> list[str]:
    """The windows of `split_spans` as strings."""
    return [text[a:b] for a, b in split_spans(text, max_chars=max_chars, min_chars=min_chars,
                                               overlap=overlap)]


# --------------------------------------------------------------------------- documents


def chunk_document(doc: KnowledgeDoc, *, max_chars: int = DEFAULT_MAX_CHARS,
                   min_chars: int = DEFAULT_MIN_CHARS, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """The chunks of one document, in order, with ids `<doc_id>#0`, `<doc_id>#1`, ..."""
    chunks: list[Chunk] = []
    for section, text in split_sections(doc.body, root=doc.title):
        for piece in split_text(text, max_chars=max_chars, min_chars=min_chars, overlap=overlap):
            seq = len(chunks)
            chunks.append(Chunk(chunk_id=f"{doc.doc_id}#{seq}", doc_id=doc.doc_id, seq=seq,
                                section=section, text=piece))
    return chunks
