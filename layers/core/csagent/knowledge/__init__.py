"""The knowledge base (policies, warranty terms, manuals, FAQ) and hybrid search over it.

- `parsing`: uploads (Markdown, HTML, text, PDF) into titled sections, refusals as 4xx (pure);
- `service`: `KnowledgeBase(index, embedder)`: upload / ingest (incremental by content hash,
  versioned, one transaction), delete, the offline rebuild, re-linking to the catalogue;
- `uploads`, `catalogue`, `scope`: S3 uploads, catalogue changes, uploaded topics in scope;
- `chunking`: front matter and heading-aware chunking (pure functions);
- `ingest`: the schema, mention resolver, and `ingest_knowledge` (the offline full build);
- `search`: `KnowledgeSearch(graph, embedder).search(question)` (vector + fulltext + graph);
- `evaluate`: `python -m csagent.knowledge.evaluate` (Recall@5, MRR, latency).

Importing this package does no I/O and pulls in no driver or model code.
"""

from csagent.knowledge.chunking import Chunk, KnowledgeDoc, chunk_document, load_documents
from csagent.knowledge.ingest import DEFAULT_DOCS_DIR, IngestReport, ensure_knowledge_schema, ingest_knowledge
from csagent.knowledge.search import Hit, KnowledgeSearch, SearchResult

__all__ = [
    "DEFAULT_DOCS_DIR",
    "Chunk",
    "Hit",
    "IngestReport",
    "KnowledgeDoc",
    "KnowledgeSearch",
    "SearchResult",
    "chunk_document",
    "ensure_knowledge_schema",
    "ingest_knowledge",
    "load_documents",
]
