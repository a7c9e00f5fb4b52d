"""Evaluate knowledge search on the labelled questions: `python -m csagent.knowledge.evaluate`.

Needs a running Neo4j with the store seeded (products and categories, for MENTIONS); connection
settings come from `csagent.config` (NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE).
The run ensures the knowledge indexes exist, ingests the shipped knowledge base (pruning stale
documents), then asks every question of two sets and prints, for each:

- **development** (`eval/questions.jsonl`): written with the documents, used to tune the search;
- **held-out** (`eval/independent.jsonl`): written by someone who did not write the documents,
  each question with the short fact a correct reply must contain; never tuned on.

For each set:

- Recall@5: share of answerable questions with a relevant document in the top 5 hits;
- MRR: mean of 1 / rank of the first relevant hit (0 when none in the top 5);
- section-level Recall@5 and MRR (a hit counts only if its section matches the label);
- the no-results check: out-of-scope questions (`"relevant": []`) must come back `no_results`,
  answerable ones must not;
- p50 / p95 latency of `KnowledgeSearch.search` (question embedding + one Neo4j round trip),
  measured after one warm-up query;
- fact-in-answer: for questions with a `"fact"`, the share whose answer (`KnowledgeSearch.answer`,
  the sentences the knowledge tool quotes) contains it (case and spacing ignored). The same rate
  on the assistant's whole reply through the chat API is `python -m devstack.kb_eval`.

Labels: `"doc_id"` (any chunk of the document) or `"doc_id#text"` (a chunk of that document whose
section path contains `text`, case-insensitive). `"product_names"` are resolved to product ids
and passed as `product_ids`, as the planner does with the products of a customer's order.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from csagent.knowledge.search import Hit, KnowledgeSearch, SearchResult

if TYPE_CHECKING:
    from csagent.ports import Embedder, GraphStore

QUESTIONS_PATH = Path(__file__).resolve().parent / "eval" / "questions.jsonl"
HELDOUT_PATH = Path(__file__).resolve().parent / "eval" / "independent.jsonl"
SETS = {"development": QUESTIONS_PATH, "held-out": HELDOUT_PATH}


@dataclass(frozen=True)
class Question:
    question: str
    relevant: tuple[str, ...]
    product_names: tuple[str, ...] = ()
    fact: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


def load_questions(path: Path = QUESTIONS_PATH) -> list[Question]:
    """The labelled questions (one JSON object per line; blank lines ignored)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Question(row["question"], tuple(row.get("relevant", [])),
                                tuple(row.get("product_names", [])), row.get("fact") or None))
    return out


def contains_fact(text: str, fact: str) -> bool:
    """`fact` in `text`, case and spacing ignored."""
    return " ".join(fact.lower().split()) in " ".join(text.lower().split())


def _matches(hit: Hit, label: str, *, by_section: bool) -> bool:
    doc_id, _, section = label.partition("#")
    if hit.doc_id != doc_id:
        return False
    return not (by_section and section) or section.lower() in hit.section.lower()


def first_relevant_rank(hits: Sequence[Hit], labels: Sequence[str], *, by_section: bool) -> int | None:
    """1-based rank of the first hit matching any label, or None."""
    for rank, hit in enumerate(hits, start=1):
        if any(_matches(hit, label, by_section=by_section) for label in labels):
            return rank
    return None


@dataclass
class Report:
    answerable: int = 0
    recalled: int = 0
    reciprocal_ranks: list[float] = field(default_factory=list)
    section_recalled: int = 0
    section_reciprocal_ranks: list[float] = field(default_factory=list)
    false_no_results: list[str] = field(default_factory=list)
    negatives: int = 0
    true_no_results: int = 0
    false_answers: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    facts: int = 0
    facts_in_answer: int = 0
    fact_misses: list[str] = field(default_factory=list)

    @property
    def fact_in_answer_rate(self) -> float:
        return self.facts_in_answer / self.facts if self.facts else 0.0

    @property
    def recall_at_5(self) -> float:
        return self.recalled / self.answerable if self.answerable else 0.0

    @property
    def mrr(self) -> float:
        return statistics.fmean(self.reciprocal_ranks) if self.reciprocal_ranks else 0.0

    @property
    def section_recall_at_5(self) -> float:
        return self.section_recalled / self.answerable if self.answerable else 0.0

    @property
    def section_mrr(self) -> float:
        return statistics.fmean(self.section_reciprocal_ranks) if self.section_reciprocal_ranks else 0.0

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile of the search latencies."""
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
        return ordered[index]

    def as_dict(self) -> dict[str, Any]:
        return {"answerable": self.answerable, "recall_at_5": round(self.recall_at_5, 4),
                "mrr": round(self.mrr, 4), "section_recall_at_5": round(self.section_recall_at_5, 4),
                "section_mrr": round(self.section_mrr, 4), "negatives": self.negatives,
                "true_no_results": self.true_no_results, "false_no_results": self.false_no_results,
                "false_answers": self.false_answers, "misses": self.misses,
                "latency_p50_ms": round(self.percentile(50), 1),
                "latency_p95_ms": round(self.percentile(95), 1),
                "facts": self.facts, "fact_in_answer_rate": round(self.fact_in_answer_rate, 4),
                "fact_misses": self.fact_misses}


def evaluate(search: KnowledgeSearch, questions: Sequence[Question],
             product_ids_by_name: dict[str, str], k: int = 5) -> Report:
    """Ask every question and score the results."""
    report = Report()
    search.search("warm-up: how do returns work?", k=k)
    for q in questions:
        pids = [product_ids_by_name[n.lower()] for n in q.product_names if n.lower() in product_ids_by_name]
        started = time.perf_counter()
        result: SearchResult = search.search(q.question, k=k, product_ids=pids)
        report.latencies_ms.append((time.perf_counter() - started) * 1000)
        if not q.answerable:
            report.negatives += 1
            if result.no_results:
                report.true_no_results += 1
            else:
                report.false_answers.append(f"{q.question} -> {result.hits[0].chunk_id} "
                                            f"(sim {result.best_similarity:.2f})")
            continue
        report.answerable += 1
        if result.no_results:
            report.false_no_results.append(f"{q.question} ({result.reason})")
        doc_rank = first_relevant_rank(result.hits, q.relevant, by_section=False)
        section_rank = first_relevant_rank(result.hits, q.relevant, by_section=True)
        report.recalled += doc_rank is not None
        report.reciprocal_ranks.append(1.0 / doc_rank if doc_rank else 0.0)
        report.section_recalled += section_rank is not None
        report.section_reciprocal_ranks.append(1.0 / section_rank if section_rank else 0.0)
        if doc_rank is None:
            got = ", ".join(h.chunk_id for h in result.hits) or "nothing"
            report.misses.append(f"{q.question} -> {got}")
        if q.fact:
            report.facts += 1
            answer = search.answer(q.question, result)
            if contains_fact(answer, q.fact):
                report.facts_in_answer += 1
            else:
                report.fact_misses.append(f"{q.question} [{q.fact}] -> {answer[:160]!r}")
    return report


def _connect() -> tuple[GraphStore, Embedder]:
    from csagent.adapters.neo4j_graph import Neo4jGraph, neo4j_driver
    from csagent.config import get_settings
    from csagent.nlp.embeddings import get_embedder

    settings = get_settings()
    driver = neo4j_driver(settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password)
    return Neo4jGraph(driver, database=settings.neo4j_database), get_embedder()


def _print_report(name: str, path: Path, report: Report, k: int, *, verbose: bool) -> None:
    print(f"== {name} set ({path.name}): {report.answerable} answerable, {report.negatives} out-of-scope")
    print(f"Recall@{k} (document): {report.recall_at_5:.3f}   MRR: {report.mrr:.3f}")
    print(f"Recall@{k} (section):  {report.section_recall_at_5:.3f}   MRR: {report.section_mrr:.3f}")
    print(f"no_results on out-of-scope: {report.true_no_results}/{report.negatives}; "
          f"no_results on answerable: {len(report.false_no_results)}/{report.answerable}")
    if report.facts:
        print(f"fact in the quoted answer: {report.facts_in_answer}/{report.facts} "
              f"({report.fact_in_answer_rate:.3f})")
    print(f"search latency p50 {report.percentile(50):.1f} ms, p95 {report.percentile(95):.1f} ms "
          f"({len(report.latencies_ms)} searches)")
    lists: tuple[tuple[str, list[str]], ...] = (
        ("misses", report.misses), ("false no_results", report.false_no_results),
        ("answered out-of-scope", report.false_answers))
    if verbose:
        lists = (*lists, ("fact not in answer", report.fact_misses))
    for title, items in lists:
        for item in items:
            print(f"  {title}: {item}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m csagent.knowledge.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=Path, default=None, help="one question file instead of the sets")
    parser.add_argument("--set", choices=[*SETS, "both"], default="both", help="which set (default: both)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--no-ingest", action="store_true", help="search what the graph holds now")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--verbose", action="store_true", help="also list the facts missing from answers")
    args = parser.parse_args(argv)

    from csagent.knowledge.ingest import ensure_knowledge_schema, ingest_knowledge

    graph, embedder = _connect()
    products = graph.read("MATCH (p:Product) RETURN p.product_id AS product_id, p.name AS name")
    if not products:
        print("warning: no Product nodes; seed the store first for MENTIONS and product questions",
              file=sys.stderr)
    ensure_knowledge_schema(graph, embedder.dimension)
    if not args.no_ingest:
        ingest = ingest_knowledge(graph, embedder, prune=True)
        print(f"ingested {ingest.documents} documents, {ingest.chunks} chunks, "
              f"{ingest.product_mentions} product and {ingest.category_mentions} category mentions "
              f"in {ingest.elapsed_ms:.0f} ms ({ingest.embedded} chunks embedded)")
    if args.questions is not None:
        sets = {args.questions.stem: args.questions}
    else:
        sets = SETS if args.set == "both" else {args.set: SETS[args.set]}
    ids = {str(p["name"]).lower(): str(p["product_id"]) for p in products}
    from csagent.knowledge.asked import shipped

    search = KnowledgeSearch(graph, embedder, asked=shipped(embedder))
    reports = {name: evaluate(search, load_questions(path), ids, k=args.k) for name, path in sets.items()}
    if args.json:
        print(json.dumps({name: r.as_dict() for name, r in reports.items()}, indent=2))
        return 0
    for name, report in reports.items():
        _print_report(name, sets[name], report, args.k, verbose=args.verbose)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
