"""The offline full build of the knowledge base: `python -m csagent.knowledge.rebuild` (`make kb-rebuild`).

Every shipped document (`knowledge/docs/*.md`, or `--docs DIR`) goes through the same service as
an upload (`KnowledgeBase.rebuild`): unchanged documents are skipped by content hash, changed ones
swapped in one transaction each, shipped documents no longer in the folder removed (uploaded ones
are kept), and every chunk re-linked to the catalogue as it is now. Needs Neo4j (NEO4J_URI, ...)
and the store seeded for the product links. Prints one line per document and the totals.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m csagent.knowledge.rebuild", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=None,
                        help="folder of Markdown documents (default: the shipped ones)")
    parser.add_argument("--no-prune", action="store_true",
                        help="keep shipped documents missing from the folder")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)

    from csagent.config import get_settings
    from csagent.knowledge.ingest import (
        DEFAULT_DOCS_DIR,
        ensure_knowledge_schema,
        knowledge_index,
        shipped_vectors,
    )
    from csagent.knowledge.service import KnowledgeBase
    from csagent.nlp.embeddings import get_embedder
    from csagent.runtime import graph_store

    settings = get_settings()
    embedder = get_embedder()
    graph = graph_store()
    ensure_knowledge_schema(graph, embedder.dimension)
    known = shipped_vectors(embedder) if args.docs is None else {}
    base = KnowledgeBase(knowledge_index(graph, settings.neo4j_database), embedder, known_vectors=known)
    report = base.rebuild(args.docs or DEFAULT_DOCS_DIR, prune=not args.no_prune)
    if args.json:
        print(json.dumps({"documents": [r.as_dict() for r in report.results],
                          "removed": list(report.removed_documents),
                          "relinked_chunks": report.relinked_chunks,
                          "elapsed_ms": round(report.elapsed_ms, 1)}, indent=2))
        return 0
    for r in report.results:
        state = "unchanged" if r.unchanged else f"v{r.version}"
        print(f"{r.document_id:32} {state:>9}  {r.chunks:3} chunks, {r.embedded:3} embedded")
    for doc_id in report.removed_documents:
        print(f"{doc_id:32} removed")
    print(f"{len(report.results)} documents, {report.chunks} chunks, {report.embedded} embedded, "
          f"{report.relinked_chunks} chunks re-linked, {len(report.removed_documents)} removed "
          f"in {report.elapsed_ms / 1000:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
