"""Text PDFs for the knowledge-base tests and bench (pypdf's writer, Helvetica, one text line per
line): pages of text, blank pages standing in for scanned images (no text layer), an outline
(bookmarks) and a title. Dev tooling only; nothing here is shipped."""

from __future__ import annotations

import io
from collections.abc import Sequence


def _escape(line: str) -> bytes:
    text = line.encode("latin-1", "replace")
    return text.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def text_pdf(pages: Sequence[Sequence[str]], *, title: str | None = None,
             outline: Sequence[tuple[str, int]] = ()) -> bytes:
    """A PDF whose page i shows `pages[i]` (an empty page has no text layer at all);
    `outline`: (bookmark title, 0-based page) entries."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({  # noqa: SLF001 - pypdf's way to add an indirect object
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        if not lines:
            continue
        stream = DecodedStreamObject()
        body = b" ".join(b"(" + _escape(line) + b") Tj T*" for line in lines)
        stream.set_data(b"BT /F1 10 Tf 13 TL 54 750 Td " + body + b" ET")
        page[NameObject("/Contents")] = writer._add_object(stream)  # noqa: SLF001
        page[NameObject("/Resources")] = DictionaryObject({
            NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    for name, page_index in outline:
        writer.add_outline_item(name, page_index)
    if title:
        writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
