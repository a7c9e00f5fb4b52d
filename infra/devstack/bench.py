"""`make bench`: performance figures on the local stack with the tau-retail store.

Prints each figure and writes them all to reports/bench.json. Targets (from the issues) are
printed next to the measurements; nothing here asserts: a benchmark reports, tests decide.

    turn latency (local tier)     single intent p50/p95, three-task compound p50
    cold import                   router handler vs `import langgraph.graph` (fresh processes)
    DynamoDB per turn             writes per turn (the turn's state; and with the rate-limit counter),
                                  checkpoint bytes per turn over 10 turns
    tools                         template match + query p50, knowledge search p50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "reports" / "bench.json"

SINGLE = [
    ("james_li_5688", "where is my order #W4435622?"),
    ("james_li_5688", "what items are in order #W2611340?"),
    ("ivan_santos_6635", "show my orders"),
    ("james_li_5688", "what is your return policy?"),
]
COMPOUND = ("james_li_5688", "Check order #W4435622, tell me the warranty of those hiking boots, "
                             "and what is your return policy?")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo), 2)


def timed_ms(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def bench_turns(runs: int) -> dict[str, Any]:
    from csagent import runtime
    from csagent.domain.models import Principal
    from csagent.service import MessageIn

    service = runtime.conversation_service()
    warm = Principal(subject="bench", customer_id=SINGLE[0][0])
    service.handle_message(warm, f"bench-warm-{uuid.uuid4().hex[:6]}", MessageIn(text=COMPOUND[1]))

    single: list[float] = []
    for i in range(runs):
        customer, text = SINGLE[i % len(SINGLE)]
        principal = Principal(subject="bench", customer_id=customer)
        session = f"bench-{uuid.uuid4().hex[:8]}"
        single.append(timed_ms(lambda p=principal, s=session, t=text:
                               service.handle_message(p, s, MessageIn(text=t))))
    compound: list[float] = []
    tasks_seen = 0
    for _ in range(max(runs // 2, 5)):
        principal = Principal(subject="bench", customer_id=COMPOUND[0])
        session = f"bench-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        out = service.handle_message(principal, session, MessageIn(text=COMPOUND[1]))
        compound.append((time.perf_counter() - started) * 1000)
        tasks_seen = len(out.tasks)
    p50 = percentile(single, 50)
    return {
        "single_intent_p50_ms": p50, "single_intent_p95_ms": percentile(single, 95),
        "compound_p50_ms": percentile(compound, 50), "compound_tasks": tasks_seen,
        "compound_over_single_p50": round(percentile(compound, 50) / p50, 2) if p50 else None,
        "runs": runs,
    }


def item_bytes(value: Any) -> int:
    """DynamoDB's item size rule: attribute names plus value sizes (binary counted raw)."""
    if isinstance(value, dict):
        if len(value) == 1:
            (kind, inner), = value.items()
            if kind in {"S", "N"}:
                return len(str(inner).encode())
            if kind == "B":
                return len(inner) if isinstance(inner, bytes | bytearray) else len(str(inner))
            if kind in {"M", "L"}:
                return item_bytes(inner)
        return sum(len(k.encode()) + item_bytes(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(item_bytes(v) for v in value)
    return len(str(value).encode())


def bench_dynamodb(turns: int = 10) -> dict[str, Any]:
    """Count DynamoDB write calls and checkpoint bytes per turn with botocore event hooks."""
    from csagent import runtime
    from csagent.domain.models import Principal
    from csagent.service import MessageIn

    service = runtime.conversation_service()
    counts = {"writes": 0, "turn_writes": 0, "checkpoint_bytes": 0}

    def on_call(params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name in {"PutItem", "UpdateItem", "BatchWriteItem", "DeleteItem", "TransactWriteItems"}:
            counts["writes"] += 1
            # The turn's own state (checkpoint items and the session lease), apart from the
            # per-customer rate-limit counter the guardrails add.
            if not str(params.get("TableName", "")).endswith("-ratelimits"):
                counts["turn_writes"] += 1
            if params.get("TableName", "").endswith("-checkpoints"):
                counts["checkpoint_bytes"] += item_bytes(params.get("Item") or {})
            elif model.name == "BatchWriteItem":
                counts["checkpoint_bytes"] += sum(item_bytes(r.get("PutRequest", {}).get("Item") or {})
                                                  for rs in params["RequestItems"].values() for r in rs)

    for client in (runtime.dynamodb_client(), runtime.checkpointer().client):
        client.meta.events.register("provide-client-params.dynamodb.*", on_call)
    principal = Principal(subject="bench", customer_id="james_li_5688")
    session = f"bench-ddb-{uuid.uuid4().hex[:8]}"
    texts = ["where is my order #W4435622?", "what items are in it?", "what is your return policy?",
             "thanks!", "show my orders"]
    writes, turn_writes, sizes = [], [], []
    for i in range(turns):
        before = dict(counts)
        service.handle_message(principal, session, MessageIn(text=texts[i % len(texts)]))
        writes.append(counts["writes"] - before["writes"])
        turn_writes.append(counts["turn_writes"] - before["turn_writes"])
        sizes.append(counts["checkpoint_bytes"] - before["checkpoint_bytes"])
    return {"turn_state_writes_per_turn_max": max(turn_writes),
            "writes_per_turn_with_rate_limit_max": max(writes),
            "checkpoint_bytes_per_turn_median": statistics.median(sizes), "turns": turns}


def _import_ms(statement: str, repeats: int) -> float:
    code = ("import time; t=time.perf_counter(); " + statement +
            "; print((time.perf_counter()-t)*1000)")
    env = dict(os.environ)
    samples = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env=env, cwd=ROOT)
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def bench_imports(repeats: int) -> dict[str, Any]:
    router = ("import importlib.util as u; s=u.spec_from_file_location('app', 'functions/router/app.py'); "
              "m=u.module_from_spec(s); s.loader.exec_module(m)")
    langgraph = _import_ms("import langgraph.graph", repeats)
    handler = _import_ms(router, repeats)
    return {"router_import_ms": round(handler, 1), "langgraph_import_ms": round(langgraph, 1),
            "ratio": round(handler / langgraph, 2), "repeats": repeats}


def bench_tools(runs: int) -> dict[str, Any]:
    """Each question is asked once (distinct texts: no embedding-cache hits): the catalogue's
    own example questions for template matching, the labelled eval set for knowledge search."""
    from csagent import runtime
    from csagent.domain.models import Task
    from csagent.knowledge.search import KnowledgeSearch  # noqa: F401 - imported before timing
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools import cypher_catalogue, knowledge_search
    from csagent.tools.context import ToolContext

    ctx = ToolContext(graph=runtime.graph_store(), customer_id="james_li_5688", embedder=get_embedder())
    questions = [q for t in cypher_catalogue.load_catalogue().templates if t.matchable for q in t.examples]
    eval_file = ROOT / "layers/core/csagent/knowledge/eval/questions.jsonl"
    kb = [json.loads(line)["question"] for line in eval_file.read_text().splitlines() if line.strip()]
    warm = Task(task_id="w", task_type="q", tool="predefined_cypher", args={"question": "hi", "params": {}})
    cypher_catalogue.run(warm, ctx)  # embeds the catalogue once, as the first request of a process would
    knowledge_search.run(Task(task_id="w", task_type="policy", tool="knowledge_search",
                              args={"question": "warm up"}), ctx)
    match = [timed_ms(lambda q=q: cypher_catalogue.run(
        Task(task_id="b", task_type="q", tool="predefined_cypher", args={"question": q, "params": {}}), ctx))
        for q in questions[:runs * 3]]
    search = [timed_ms(lambda k=k: knowledge_search.run(
        Task(task_id="k", task_type="policy", tool="knowledge_search", args={"question": k}), ctx))
        for k in kb[:runs * 3]]
    return {"template_match_and_query_p50_ms": percentile(match, 50),
            "template_match_and_query_p95_ms": percentile(match, 95),
            "knowledge_search_p50_ms": percentile(search, 50),
            "knowledge_search_p95_ms": percentile(search, 95),
            "questions": {"templates": len(match), "knowledge": len(search)}}


TARGETS = {
    "single_intent_p50_ms": ("<=", 150), "single_intent_p95_ms": ("<=", 400),
    "compound_over_single_p50": ("<=", 2.0), "ratio": ("<=", 1.3),
    "turn_state_writes_per_turn_max": ("<=", 3), "checkpoint_bytes_per_turn_median": ("<=", 6144),
    "template_match_and_query_p50_ms": ("<=", 20), "knowledge_search_p50_ms": ("<=", 60),
}


def main(argv: list[str] | None = None) -> int:
    # A benchmark sends far more than a customer's 20 messages a minute.
    os.environ.setdefault("RATE_LIMIT_MAX_MESSAGES", "1000000")
    parser = argparse.ArgumentParser(prog="devstack.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--import-repeats", type=int, default=5)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"model_tier": "local", "store": "tau-retail"}
    for name, fn in (("turns", lambda: bench_turns(args.runs)), ("dynamodb", bench_dynamodb),
                     ("imports", lambda: bench_imports(args.import_repeats)),
                     ("tools", lambda: bench_tools(args.runs))):
        report[name] = fn()
        for key, value in report[name].items():
            target = TARGETS.get(key)
            mark = f"   (target {target[0]} {target[1]})" if target else ""
            print(f"{name:9} {key:34} {value}{mark}")
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {REPORT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
