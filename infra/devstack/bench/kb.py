"""The knowledge-base section of the bench (`python -m devstack.bench --only kb`).

- **ingest throughput**: the 23 shipped documents rendered as text PDFs (about 45 lines a page,
  one bookmark per section, titles prefixed "Bench" so no stored vector can be reused) uploaded
  one by one through `KnowledgeBase.upload`: parse (pypdf) + chunk + embed + one Neo4j swap each.
  Pages per second and chunks per second over the wall time; every chunk is embedded.
- **upload to answerable**: `POST /v1/kb/documents` on the router's HTTP app (uvicorn on a
  loopback port), then the knowledge search polled until a hit comes from the new document
  ("searchable"), then one customer chat turn asking "how much is engraving?" ("cited": the
  reply cites the new document).
  Both timed from the start of the upload.
- **re-ingest**: the same file again (`PUT`, nothing should be embedded), and the file with one
  section edited (only the chunks of that section should be).

Every document the section creates is deleted at the end.
"""

from __future__ import annotations

import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

from devstack.bench.stats import summarise

ADMIN = {"Authorization": "Bearer dev-admin:bench"}
CUSTOMER = "mei_gonzalez_4785"
LINES_PER_PAGE = 45


def corpus_pdfs() -> list[tuple[str, bytes, int]]:
    """(doc id, PDF, pages) for every shipped document, one bookmark per section."""
    from csagent.knowledge.ingest import DEFAULT_DOCS_DIR
    from csagent.knowledge.parsing import parse_markdown
    from devstack.kb_pdf import text_pdf

    out = []
    for path in sorted(Path(DEFAULT_DOCS_DIR).glob("*.md")):
        parsed = parse_markdown(path.read_text(encoding="utf-8"), filename=path.name)
        pages: list[list[str]] = [[]]
        outline: list[tuple[str, int]] = []
        for section in parsed.sections:
            lines = [w for para in section.text.split("\n") for w in (textwrap.wrap(para, 95) or [""])]
            if len(pages[-1]) + 2 > LINES_PER_PAGE:
                pages.append([])
            heading = section.path.split(" > ")[-1]
            outline.append((heading, len(pages) - 1))
            for line in [heading, *lines]:
                if len(pages[-1]) >= LINES_PER_PAGE:
                    pages.append([])
                pages[-1].append(line)
            pages[-1].append("")
        out.append((f"bench-{path.stem}", text_pdf(pages, title=f"Bench {parsed.title}", outline=outline),
                    len(pages)))
    return out


def bench_ingest(kb: Any) -> dict[str, Any]:
    pdfs = corpus_pdfs()
    started = time.perf_counter()
    results = [kb.upload(data, f"{doc_id}.pdf", document_id=doc_id, actor="bench")
               for doc_id, data, _ in pdfs]
    seconds = time.perf_counter() - started
    pages = sum(p for _, _, p in pdfs)
    chunks = sum(r.chunks for r in results)
    for doc_id, _, _ in pdfs:
        kb.delete(doc_id)
    return {"ingest_documents": len(pdfs), "ingest_pages": pages, "ingest_chunks": chunks,
            "ingest_embedded": sum(r.embedded for r in results), "ingest_seconds": round(seconds, 2),
            "ingest_pages_per_s": round(pages / seconds, 2),
            "ingest_chunks_per_s": round(chunks / seconds, 1)}


def _policy(code: str, price: int, extra: str = "") -> bytes:
    return (f"# Engraving service {code}\n\n## Price\n\nEngraving service {code} costs ${price} per item."
            f"\n\n## Turnaround\n\nEngraved items ship two days later than the rest of the order.{extra}\n"
            ).encode()


def bench_answerable(kb: Any, runs: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
    import httpx

    from csagent import runtime
    from csagent.knowledge.search import KnowledgeSearch
    from csagent.nlp.embeddings import get_embedder
    from devstack.evaluation.runner import ApiServer

    search = KnowledgeSearch(runtime.graph_store(), get_embedder())
    searchable: list[float] = []
    cited: list[float] = []
    polls: list[int] = []
    reingest: dict[str, Any] = {}
    server = ApiServer()
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=60.0) as client:
            for i in range(runs):
                code = f"EN{uuid.uuid4().hex[:6].upper()}"
                doc_id = f"bench-engraving-{i}"
                started = time.perf_counter()
                up = client.post("/v1/kb/documents", headers=ADMIN, data={"document_id": doc_id},
                                 files={"file": (f"{doc_id}.md", _policy(code, 10 + i), "text/markdown")})
                up.raise_for_status()
                tries = 0
                while time.perf_counter() - started < 30:
                    tries += 1
                    if any(h.doc_id == doc_id for h in search.search(f"engraving service {code} price").hits):
                        searchable.append((time.perf_counter() - started) * 1000)
                        break
                polls.append(tries)
                turn = client.post(f"/v1/sessions/kbb-{uuid.uuid4().hex[:8]}/messages",
                                   json={"text": "how much is engraving?"},
                                   headers={"Authorization": f"Bearer dev:{CUSTOMER}"}).json()
                if any(c.get("doc_id") == doc_id for c in (turn.get("reply") or {}).get("citations") or []):
                    cited.append((time.perf_counter() - started) * 1000)
                if i == 0:
                    reingest = _reingest(client, doc_id, code)
                client.delete(f"/v1/kb/documents/{doc_id}", headers=ADMIN)
    finally:
        server.stop()
    s, c = summarise(searchable), summarise(cited)
    section = {"answerable_runs": runs, "upload_to_searchable_p50_ms": s.get("p50_ms"),
               "upload_to_searchable_max_ms": s.get("max_ms"), "searchable_first_poll": polls.count(1),
               "upload_to_cited_reply_p50_ms": c.get("p50_ms"),
               "upload_to_cited_reply_max_ms": c.get("max_ms"),
               "cited_replies": len(cited), **reingest}
    return section, {"kb upload->searchable": searchable, "kb upload->cited reply": cited}


def _reingest(client: Any, doc_id: str, code: str) -> dict[str, Any]:
    def put(body: bytes) -> tuple[dict[str, Any], float]:
        started = time.perf_counter()
        response = client.put(f"/v1/kb/documents/{doc_id}", headers=ADMIN,
                              files={"file": (f"{doc_id}.md", body, "text/markdown")})
        response.raise_for_status()
        return response.json(), (time.perf_counter() - started) * 1000

    same, same_ms = put(_policy(code, 10))
    edited, edited_ms = put(_policy(code, 10, " Gift boxes are extra."))
    return {"reingest_unchanged_embedded": same["embedded"], "reingest_unchanged_ms": round(same_ms, 1),
            "reingest_unchanged_version_kept": same["unchanged"],
            "reingest_one_section_changed_embedded": edited["embedded"],
            "reingest_one_section_changed_chunks": edited["chunks"],
            "reingest_one_section_changed_ms": round(edited_ms, 1)}


def bench_kb(runs: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
    from csagent import runtime

    kb = runtime.knowledge_base()
    section = bench_ingest(kb)
    answerable, samples = bench_answerable(kb, runs)
    return {**section, **answerable}, samples
