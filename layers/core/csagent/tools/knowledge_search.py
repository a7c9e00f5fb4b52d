"""Tool: answer a question from the knowledge base (policies, warranty terms, manuals, FAQ).

    task.args (KnowledgeSearchArgs) = {"question": str, "product_ids"?: [str], "k"?: int,
                                       "mode"?: "keyword", "topic"?: "warranty" | "returns",
                                       "general_too"?: bool}

`topic` is what the understanding step read the question to be about: the hits whose document or
section is about it answer first ("warranty on an electric kettle?" is answered from the warranty
terms, not from the kettle's manual that ranks level with them).

`general_too` (with `product_ids`): the store's pages are searched without the products too, and
answer unless the product's own manual is at least as close to the question (a complaint names a
product whether it is about the product or about its parcel).

`mode: keyword` searches without embeddings (the FAQ and fulltext keyword match): the healer's
cheaper path (`csagent.healing.degraded_task`), the same whether it runs here or in the Lambda.

Success: `{"answer": <the best chunk trimmed to the sentences that answer>, "citations": [...],
"mode": "hybrid" | "keyword"}`. The answer is always a quotation from the knowledge base, never
generated text. Status is `fallback` instead of `success` when the search ran in keyword mode
because no embedder was available.

Failures are data (never raised): an empty or too long question -> VALIDATION (the arguments'
shapes are checked when the task is built, `csagent.domain.task_args`); nothing relevant -> NO_RESULTS
(the healer degrades to FAQ / keyword search or says so); a missing knowledge index -> TRANSIENT
(not retryable: the knowledge base has not been ingested); the store's timeouts and outages as
its adapter classifies them, and anything else, through `csagent.tools.failures`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from csagent.domain.errors import StoreRejected
from csagent.domain.models import ErrorType, Task, TaskStatus, ToolResult
from csagent.domain.task_args import KnowledgeSearchArgs
from csagent.knowledge.search import MAX_QUESTION_CHARS, KnowledgeSearch, SearchResult
from csagent.nlp.gloss import english_query
from csagent.nlp.script import has_ideographs
from csagent.tools.context import ToolContext
from csagent.tools.failures import failed_result

logger = logging.getLogger(__name__)

TOOL_NAME = "knowledge_search"
MAX_PRODUCT_IDS = 20


def _question(args: KnowledgeSearchArgs) -> str:
    """The question, stripped; raises ValueError with a hint for the planner."""
    if not args.question.strip():
        raise ValueError("args.question must be a non-empty string")
    if len(args.question) > MAX_QUESTION_CHARS:
        raise ValueError(f"args.question is longer than {MAX_QUESTION_CHARS} characters")
    return args.question.strip()


def _index_missing(exc: BaseException) -> bool:
    """The store refused the search because a knowledge index does not exist (not ingested)."""
    return isinstance(exc, StoreRejected) and ("Procedure" in exc.code or "Schema" in exc.code) \
        and "index" in exc.detail.lower()


#: Topics a planner may name, as the words a document's title or section carries.
TOPICS = {"warranty": ("warranty", "warranties"), "returns": ("return", "returns")}


def on_topic_first(result: SearchResult, topic: Any, product_ids: Sequence[str] = ()) -> SearchResult:
    """`result` with the hits whose title or section is about `topic` first, those of them about
    the products asked about before the others (stable otherwise)."""
    if not TOPICS.get(str(topic)) or result.no_results:
        return result
    wanted = set(product_ids)
    return replace(result, hits=tuple(sorted(
        result.hits, key=lambda hit: (not _about(hit, topic), not _mentions(hit, wanted)))))


def _about(hit: Any, topic: Any) -> bool:
    heading = f"{hit.title} {hit.section}".lower()
    return any(w in heading for w in TOPICS.get(str(topic), ()))


def _mentions(hit: Any, product_ids: set[str]) -> bool:
    return any(p.get("product_id") in product_ids for p in hit.products)


def _with_the_products_terms(searcher: Any, result: SearchResult, topic: Any, product_ids: Sequence[str],
                             k: int) -> SearchResult:
    """`result`, with the topic's section about the products asked about first when the search
    missed it ("my water bottle leaks from the lid, is that covered?" finds the accessories' terms
    by "water damage"; the bottle's own terms are searched by its name and the topic)."""
    wanted = set(product_ids)
    if not TOPICS.get(str(topic)) or not wanted or result.no_results \
            or any(_about(h, topic) and _mentions(h, wanted) for h in result.hits):
        return result
    names = _names_asked(result, wanted)
    if not names:
        return result
    focused = searcher.search(f"{' '.join(names)} {topic}", k=k, product_ids=list(product_ids))
    own = [h for h in focused.hits if _about(h, topic) and _mentions(h, wanted)]
    if not own:
        return result
    return replace(result, hits=(own[0], *(h for h in result.hits if h.chunk_id != own[0].chunk_id)))


def _names_asked(result: SearchResult, product_ids: set[str]) -> list[str]:
    """The catalogue names of the products asked about, as the hits linked to them carry them."""
    return sorted({str(p.get("name")) for h in result.hits for p in h.products
                   if p.get("product_id") in product_ids and p.get("name")})


def _own_pages_closer(scoped: SearchResult, general: SearchResult) -> bool:
    """Does the search with the products answer from a product's own manual at least as close in
    meaning to the question as the general search's best hit (or is the general one empty)? A
    policy naming the product in passing ("Perfume and Makeup Kit items can only be returned
    unopened") is no product's page."""
    if scoped.no_results or not scoped.hits:
        return False
    if general.no_results or not general.hits:
        return True
    top = scoped.hits[0]
    return top.kind == "manual" and (top.similarity or -1.0) >= (general.hits[0].similarity or -1.0)


def prepare() -> None:
    """The shipped asked questions (`knowledge.asked`) on the process-wide embedder, built once in
    the process's tool caches: the tool function's warm-up before the SnapStart snapshot, and a
    no-op after."""
    from csagent import runtime
    from csagent.nlp.embeddings import get_embedder

    runtime.tool_caches().asked.on(get_embedder())


def run(task: Task, ctx: ToolContext) -> ToolResult:
    """Search the knowledge base for `task.args.question`; never raises."""
    started = time.perf_counter()

    def elapsed() -> float:
        return (time.perf_counter() - started) * 1000

    try:
        args = task.args_as(KnowledgeSearchArgs)  # another tool's arguments: validated as these
        question = _question(args)
    except ValueError as exc:
        return ToolResult.failed(task, ErrorType.VALIDATION, str(exc), latency_ms=elapsed())
    product_ids, k = args.product_ids[:MAX_PRODUCT_IDS], args.k
    # The knowledge base is English: a Chinese question searches by the English words it holds.
    # The questions asked of the documents are English customers' words: a Chinese question,
    # searched by the English words it holds, is not compared with them.
    chinese = has_ideographs(question)
    question = english_query(question)
    try:
        embedder = None if args.mode == "keyword" else ctx.embedder
        asked = None if chinese else ctx.caches.asked.on(embedder)
        searcher = KnowledgeSearch(ctx.graph, embedder, asked=asked)
        result = searcher.search(question, k=k, product_ids=product_ids)
        if product_ids and args.general_too:
            # "delivered but nothing at my door" names the speaker, whose manual says nothing of
            # parcels: the store's general pages answer when they are closer to the words.
            general = searcher.search(question, k=k)
            if not _own_pages_closer(result, general):
                result = general if not general.no_results else result
        if result.no_results:
            return ToolResult.failed(
                task, ErrorType.NO_RESULTS,
                "No knowledge-base article answers this question "
                f"({result.reason}).", latency_ms=elapsed())
        result = on_topic_first(_with_the_products_terms(searcher, result, args.topic, product_ids, k),
                                args.topic, product_ids)
        # The hits about the asked topic answer ("is my laptop still under warranty?": the warranty
        # terms, not the manual's "opening the case voids the warranty").
        names = _names_asked(result, set(product_ids))
        answer = searcher.answer(question, result, keep_first=bool(args.topic), products=names)
        data = {"answer": answer, "citations": result.citations(), "mode": result.mode}
        outcome = ToolResult.ok(task, data, latency_ms=elapsed())
        if result.mode == "keyword":
            outcome = outcome.model_copy(update={"status": TaskStatus.FALLBACK})
        return outcome
    except Exception as exc:  # noqa: BLE001 - failures become data for the healer, in one place
        if _index_missing(exc):  # no retry helps until the knowledge base is ingested
            return ToolResult.failed(task, ErrorType.TRANSIENT, "the knowledge index is not available",
                                     retryable=False, latency_ms=elapsed())
        return failed_result(task, exc, latency_ms=elapsed())
