"""Neo4j tool latencies, each tool called directly (no graph around it), warm, every question once.

- predefined queries, per template family (`template_families` in workload.yaml): each
  template's own example questions, with the order ids and tracking numbers in them replaced by
  the bench customer's own (so customer-scoped queries return rows). A matchable template is
  asked by question (embedding match + parameters + query); one the planner asks for by id
  (`matchable: false`) is run by id with the parameters read from its examples;
- knowledge search: the labelled eval questions (hybrid search, fusion, expansion, citations);
- Text2Cypher, two paths: `text2cypher_fallback` is the tool as the local tier runs it (no
  generative model: its template fallback); `text2cypher_validated` is the pipeline with a
  model that replays each example-bank query (retrieval, EXPLAIN, read-only / schema / value
  checks, execution) - model time excluded, since any real model's time is the model's;
- customer actions: the customer_actions tasks inside the timed turns (propose in the
  confirmation requests, execute in the "yes" turns and approval resumes), so the bench does not
  write to the store more than the turns do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from devstack.bench.stats import group_summaries, summarise, timed_ms
from devstack.bench.workload import StoreData, load_workload

ROOT = Path(__file__).resolve().parents[3]
EVAL_QUESTIONS = ROOT / "layers/core/csagent/knowledge/eval/questions.jsonl"
CUSTOMER = "james_li_5688"
ORDER_ID_RE = re.compile(r"#?\bW\d{7}\b")
TRACKING_RE = re.compile(r"\b\d{12}\b")
PROPOSE_TURNS = frozenset({"single_customer_actions", "confirmation_request"})
EXECUTE_TURNS = frozenset({"confirmation_yes", "approval_resume"})


def family_of(template_ids: Iterable[str], families: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """template id -> family; templates no family lists go to "unlisted"."""
    listed = {tid: family for family, ids in families.items() for tid in ids}
    return {tid: listed.get(tid, "unlisted") for tid in template_ids}


def own_question(example: str, order_ids: Sequence[str], tracking: str | None, i: int) -> str:
    """A catalogue example with its order id / tracking number replaced by the customer's own."""
    text = ORDER_ID_RE.sub(order_ids[i % len(order_ids)], example) if order_ids else example
    return TRACKING_RE.sub(tracking, text) if tracking else text


def _task(tool: str, args: dict[str, Any]) -> Any:
    from csagent.domain.models import Task

    return Task(task_id="b", task_type="bench", tool=tool, args=args)


def template_latencies(ctx: Any, data: StoreData, runs: int) -> tuple[dict[str, list[float]], dict[str, int]]:
    """(latencies per family, templates per family); at most `runs` examples per template."""
    from csagent.tools import cypher_catalogue

    catalogue = cypher_catalogue.load_catalogue()
    families = family_of(catalogue.ids, load_workload()["template_families"])
    orders = [o for o in data.orders if o["user_id"] == CUSTOMER]
    order_ids = [o["order_id"] for o in orders]
    tracking = next((str(t) for o in orders for f in o.get("fulfillments") or [] for t in f["tracking_id"]),
                    None)
    vocabulary = cypher_catalogue.store_vocabulary(ctx.graph, ctx.caches.vocabulary)
    samples: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    for template in catalogue.templates:
        family = families[template.id]
        counts[family] = counts.get(family, 0) + 1
        for i, example in enumerate(template.natural_examples[:runs]):
            question = own_question(example, order_ids, tracking, i)
            if template.matchable:
                args: dict[str, Any] = {"question": question, "params": {}}
            else:
                params = cypher_catalogue.extract_params(template, question, vocabulary=vocabulary)
                args = {"template_id": template.id, "params": params}
            samples.setdefault(family, []).append(
                timed_ms(partial(cypher_catalogue.run, _task("predefined_cypher", args), ctx)))
    return samples, counts


def knowledge_latencies(ctx: Any, runs: int) -> list[float]:
    from csagent.tools import knowledge_search

    lines = EVAL_QUESTIONS.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()][:runs]
    return [timed_ms(partial(knowledge_search.run, _task("knowledge_search", {"question": q}), ctx))
            for q in questions]


def text2cypher_latencies(ctx: Any, runs: int) -> tuple[list[float], list[float], int]:
    """(fallback tool latencies, validated pipeline latencies without model time, validated runs
    that succeeded)."""
    from csagent.tools import text2cypher
    from csagent.tools.text2cypher.examples import load_examples
    from csagent.tools.text2cypher.pipeline import Text2Cypher
    from devstack.bench.replay import ReplayModel

    examples = load_examples()[:runs]
    fallback = [timed_ms(partial(text2cypher.run, _task("text2cypher", {"question": e.question,
                                                                         "model": "local"}), ctx))
                for e in examples]
    validated, succeeded = [], 0
    for example in examples:
        pipeline = Text2Cypher(ctx.graph, ReplayModel(reply=example.cypher), ctx.embedder)
        outcome = pipeline.run(example.question)
        validated.append(outcome.pipeline_ms)
        succeeded += outcome.status == "success"
    return fallback, validated, succeeded


def action_latencies(turn_tasks: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """customer_actions task latencies from the timed turns, split into propose and execute."""
    out: dict[str, list[float]] = {"customer_actions_propose": [], "customer_actions_execute": []}
    for task in turn_tasks:
        if task.get("tool") != "customer_actions" or task.get("status") == "failed":
            continue
        if task.get("turn_type") in PROPOSE_TURNS:
            out["customer_actions_propose"].append(float(task["latency_ms"]))
        elif task.get("turn_type") in EXECUTE_TURNS:
            out["customer_actions_execute"].append(float(task["latency_ms"]))
    return out


def bench_tools(data: StoreData, runs: int, turn_tasks: Sequence[Mapping[str, Any]] = ()
                ) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """(the `tools` section, latency samples per tool path for the chart)."""
    from csagent import runtime
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools import cypher_catalogue, knowledge_search
    from csagent.tools.context import ToolContext

    runtime.configure_text2cypher()
    ctx = ToolContext(graph=runtime.graph_store(), customer_id=CUSTOMER, embedder=get_embedder(),
                      caches=runtime.tool_caches())
    # The first call of a process embeds the catalogue and reads the vocabulary: not a figure.
    cypher_catalogue.run(_task("predefined_cypher", {"question": "hi", "params": {}}), ctx)
    knowledge_search.run(_task("knowledge_search", {"question": "warm up"}), ctx)
    families, counts = template_latencies(ctx, data, runs)
    all_templates = [v for values in families.values() for v in values]
    knowledge = knowledge_latencies(ctx, runs * 10)
    fallback, validated, succeeded = text2cypher_latencies(ctx, runs * 4)
    paths = {"predefined_cypher (all families)": all_templates, "knowledge_search": knowledge,
             "text2cypher_fallback": fallback, "text2cypher_validated": validated,
             **action_latencies(turn_tasks)}
    by_family = group_summaries(families)
    for family, n in counts.items():
        by_family.setdefault(family, {"n": 0})["templates"] = n
    template, search = summarise(all_templates), summarise(knowledge)
    section = {
        "template_match_and_query_p50_ms": template.get("p50_ms"),
        "template_match_and_query_p95_ms": template.get("p95_ms"),
        "knowledge_search_p50_ms": search.get("p50_ms"),
        "knowledge_search_p95_ms": search.get("p95_ms"),
        "text2cypher_fallback_p50_ms": summarise(fallback).get("p50_ms"),
        "text2cypher_validated_p50_ms": summarise(validated).get("p50_ms"),
        "text2cypher_validated_succeeded": f"{succeeded}/{len(validated)}",
        "customer_actions_propose_p50_ms": summarise(paths["customer_actions_propose"]).get("p50_ms"),
        "customer_actions_execute_p50_ms": summarise(paths["customer_actions_execute"]).get("p50_ms"),
        "questions": {"templates": len(all_templates), "knowledge": len(knowledge),
                      "text2cypher": len(fallback)},
        "by_tool": group_summaries(paths),
        "template_families": by_family,
        "notes": ["text2cypher_validated: a model replaying the example bank's query; model time "
                  "excluded (the pipeline's own retrieval, EXPLAIN, checks and execution)",
                  "customer actions: task latency inside the timed turns (propose: confirmation "
                  "requests; execute: the 'yes' turns and approval resumes)"],
    }
    return section, paths
