"""The figures of an evaluation run, each defined where it is computed, and the thresholds.

Rates are over what they can be measured on and `None` when nothing qualifies (a run of one
category has no end-state cases, say); a threshold on a `None` figure is reported, not failed.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from devstack.evaluation.cases import LoadedCase
from devstack.evaluation.checks import CaseResult, TurnResult, failed_parts_named


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def percentile(values: Sequence[float], p: float) -> float | None:
    """Linear-interpolation percentile (`devstack.bench.stats.percentile`), None for no values."""
    from devstack.bench.stats import percentile as bench_percentile

    return bench_percentile(list(values), p) if values else None


def _ok_turns(results: Sequence[CaseResult]) -> list[tuple[CaseResult, TurnResult]]:
    return [(r, t) for r in results for t in r.turns if t.http_status == 200]


def route_accuracy(results: Sequence[CaseResult], cases: Mapping[str, LoadedCase]) -> float | None:
    """Turns with an expected route (and a 200 response expected) whose trace.route is one of them."""
    hits = total = 0
    for result in results:
        turns = cases[result.case_id].case.turns
        for turn in result.turns:
            expect = turns[turn.index - 1].expect
            if expect.routes and expect.http_status == 200:
                total += 1
                hits += turn.route in expect.routes
    return rate(hits, total)


def partial_disclosure(results: Sequence[CaseResult]) -> tuple[float | None, int]:
    """Replies that left something undone - status `partial`, or any task failed or skipped -
    that name every failed part (`checks.failed_parts_named`); (rate, how many such replies)."""
    partial = [t for _, t in _ok_turns(results)
               if t.status == "partial" or any(x.get("status") in ("failed", "skipped") for x in t.tasks)]
    return rate(sum(not failed_parts_named(t) for t in partial), len(partial)), len(partial)


def out_of_scope_scores(results: Sequence[CaseResult], cases: Mapping[str, LoadedCase]) -> dict[str, Any]:
    """Per turn: gold = the expected route is `out_of_scope` (or, without a route expectation,
    the first turn of an out_of_scope case); predicted = trace.route is `out_of_scope`."""
    tp = fp = fn = 0
    for result in results:
        case = cases[result.case_id].case
        for turn in result.turns:
            if turn.http_status != 200:
                continue
            expect = case.turns[turn.index - 1].expect
            gold = "out_of_scope" in expect.routes if expect.routes else (
                case.category == "out_of_scope" and turn.index == 1)
            predicted = turn.route == "out_of_scope"
            tp += gold and predicted
            fp += predicted and not gold
            fn += gold and not predicted
    return {"precision": rate(tp, tp + fp), "recall": rate(tp, tp + fn), "true_positives": tp,
            "false_positives": fp, "false_negatives": fn}


# A task that failed with one of these error types did its job: the answer is "no" (a policy rule,
# nothing found, another customer's data, invalid input), not a broken tool.
ANSWER_IS_NO = frozenset({"business_rule_violation", "no_results", "permission_denied", "validation"})


def tool_figures(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Tasks in responses and how many failed, per tool and per error type; cases without
    injected faults and fault cases apart (under faults, failing is the point).
    `failure_rate` counts every failed task; `technical_failure_rate` leaves out the failures
    whose error type says the answer is no (`ANSWER_IS_NO`)."""
    def figures(subset: Sequence[CaseResult]) -> dict[str, Any]:
        calls: Counter[str] = Counter()
        failed: Counter[str] = Counter()
        errors: Counter[str] = Counter()
        for _, turn in _ok_turns(subset):
            for task in turn.tasks:
                calls[str(task.get("tool"))] += 1
                if task.get("status") == "failed":
                    failed[str(task.get("tool"))] += 1
                    errors[str((task.get("error") or {}).get("type") or "unknown")] += 1
        total, bad = sum(calls.values()), sum(failed.values())
        technical = sum(n for kind, n in errors.items() if kind not in ANSWER_IS_NO)
        return {"tasks": total, "failed": bad, "failure_rate": rate(bad, total),
                "technical_failure_rate": rate(technical, total), "by_error_type": dict(errors.most_common()),
                "by_tool": {tool: {"tasks": calls[tool], "failed": failed[tool]} for tool in sorted(calls)}}

    return {"without_faults": figures([r for r in results if r.category != "fault"]),
            "under_faults": figures([r for r in results if r.category == "fault"])}


def per_turn_costs(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Latency (client-side, the whole HTTP request), model calls, DynamoDB write calls and
    checkpoint bytes written, per customer turn with a 200 response."""
    turns = [t for _, t in _ok_turns(results)]
    latency = [t.latency_ms for t in turns]
    writes = [t.dynamodb_writes for t in turns]
    state_writes = [t.turn_state_writes for t in turns]
    sizes = [t.checkpoint_bytes for t in turns]
    calls = [t.model_calls for t in turns]
    return {
        "turns": len(turns),
        "latency_ms": {"p50": percentile(latency, 50), "p95": percentile(latency, 95),
                       "max": max(latency, default=None)},
        "model_calls_per_turn": {"mean": round(statistics.fmean(calls), 3) if calls else None,
                                 "max": max(calls, default=None)},
        "dynamodb_writes_per_turn": {"median": statistics.median(writes) if writes else None,
                                     "mean": round(statistics.fmean(writes), 2) if writes else None,
                                     "max": max(writes, default=None)},
        "turn_state_writes_per_turn": {"median": statistics.median(state_writes) if state_writes else None,
                                       "max": max(state_writes, default=None)},
        "checkpoint_bytes_per_turn": {"median": statistics.median(sizes) if sizes else None,
                                      "p95": percentile(sizes, 95), "max": max(sizes, default=None)},
    }


def pass_hat_k(results: Sequence[CaseResult]) -> dict[str, Any]:
    """pass^k: the share of cases that passed in every one of their k trials (k = trials run)."""
    by_case: dict[str, list[bool]] = defaultdict(list)
    for result in results:
        by_case[result.case_id].append(result.passed)
    k = min((len(v) for v in by_case.values()), default=0)
    return {"k": k, "pass_hat_k": rate(sum(all(v) for v in by_case.values()), len(by_case)),
            "flaky_cases": sorted(c for c, v in by_case.items() if any(v) and not all(v))}


def by_category(results: Sequence[CaseResult]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for category in sorted({r.category for r in results}):
        subset = [r for r in results if r.category == category]
        passed = sum(r.passed for r in subset)
        table[category] = {"cases": len(subset), "passed": passed, "pass_rate": rate(passed, len(subset)),
                           "leaks": sum(len(r.leaks) for r in subset),
                           "turns": sum(len(r.turns) for r in subset)}
    return table


def compute(results: Sequence[CaseResult], cases: Sequence[LoadedCase]) -> dict[str, Any]:
    """Every figure of eval.json except knowledge recall (`knowledge_recall`) and the run's setup."""
    index = {c.case.id: c for c in cases}
    disclosure, partial_replies = partial_disclosure(results)
    end_checked = [r for r in results if r.end_state_checked or index[r.case_id].case.end_state]
    faulted = [r for r in results if r.category == "fault"]
    tools_seen = sorted({str(t.get("tool")) for r in results if r.category == "single"
                         for t in (x for turn in r.turns for x in turn.tasks)})
    return {
        "cases": len({r.case_id for r in results}),
        "case_trials": len(results),
        "route_accuracy": route_accuracy(results, index),
        "full_resolution_rate": rate(sum(r.passed for r in results), len(results)),
        "partial_disclosure_rate": disclosure,
        "partial_replies": partial_replies,
        "out_of_scope": out_of_scope_scores(results, index),
        "data_leaks": sum(len(r.leaks) for r in results),
        "end_state_correct_rate": rate(sum(r.end_state_ok for r in end_checked), len(end_checked)),
        "end_state_cases": len(end_checked),
        "tools": tool_figures(results),
        "tool_failure_rate": tool_figures(results)["without_faults"]["failure_rate"],
        "recovery_rate": rate(sum(r.passed for r in faulted), len(faulted)),
        **per_turn_costs(results),
        "pass_k": pass_hat_k(results),
        "by_category": by_category(results),
        "tools_exercised_by_single_requests": tools_seen,
        "runner_errors": sum(r.error is not None for r in results),
    }


def knowledge_recall() -> dict[str, Any]:
    """Recall@5 / MRR of knowledge search on its labelled questions
    (`csagent.knowledge.evaluate`), on the store as the run left it (no re-ingest)."""
    from csagent import runtime
    from csagent.knowledge.evaluate import evaluate, load_questions
    from csagent.knowledge.search import KnowledgeSearch
    from csagent.nlp.embeddings import get_embedder

    graph = runtime.graph_store()
    products = graph.read("MATCH (p:Product) RETURN p.product_id AS product_id, p.name AS name")
    report = evaluate(KnowledgeSearch(graph, get_embedder()), load_questions(),
                      {str(p["name"]).lower(): str(p["product_id"]) for p in products})
    figures = report.as_dict()
    return {key: figures[key] for key in ("answerable", "recall_at_5", "mrr", "section_recall_at_5",
                                          "latency_p50_ms")}


# ------------------------------------------------------------------------------ thresholds
@dataclass(frozen=True)
class Verdict:
    metric: str
    bound: str  # "min" or "max"
    limit: float
    value: float | None

    @property
    def passed(self) -> bool:
        if self.value is None:
            return True
        return self.value >= self.limit if self.bound == "min" else self.value <= self.limit

    @property
    def text(self) -> str:
        sign = ">=" if self.bound == "min" else "<="
        shown = "not measured" if self.value is None else self.value
        return f"{self.metric} = {shown} (needs {sign} {self.limit})"


def metric_value(figures: Mapping[str, Any], path: str) -> float | None:
    """A figure by dotted path (`out_of_scope.recall`), None when absent."""
    value: Any = figures
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return None if value is None else float(value)


def judge(figures: Mapping[str, Any], thresholds: Mapping[str, Mapping[str, float]]) -> list[Verdict]:
    """One verdict per threshold: `{metric: {min: x}}` or `{metric: {max: y}}`."""
    verdicts = []
    for metric, bounds in thresholds.items():
        for bound, limit in bounds.items():
            if bound not in ("min", "max"):
                raise ValueError(f"threshold {metric}: unknown bound {bound!r} (min or max)")
            verdicts.append(Verdict(metric, bound, float(limit), metric_value(figures, metric)))
    return verdicts
