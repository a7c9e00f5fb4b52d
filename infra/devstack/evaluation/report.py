"""`reports/eval.json` (every figure, every case) and `reports/eval.md` (the summary a person
reads: the thresholds, a table per category, every failing case with what failed)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from devstack.evaluation.checks import CaseResult
from devstack.evaluation.metrics import Verdict

TASK_FIELDS = ("task_type", "tool", "status", "error")
SUMMARY_ROWS = (
    ("route accuracy", "route_accuracy"),
    ("full resolution", "full_resolution_rate"),
    ("partial disclosure (failed parts named)", "partial_disclosure_rate"),
    ("out-of-scope precision", "out_of_scope.precision"),
    ("out-of-scope recall", "out_of_scope.recall"),
    ("data leaks", "data_leaks"),
    ("correct end state", "end_state_correct_rate"),
    ("tool failure rate (no faults injected)", "tool_failure_rate"),
    ("  technical failures only", "tools.without_faults.technical_failure_rate"),
    ("tool failure rate (faults injected)", "tools.under_faults.failure_rate"),
    ("recovery (fault cases fully resolved)", "recovery_rate"),
    ("latency p50 ms", "latency_ms.p50"),
    ("latency p95 ms", "latency_ms.p95"),
    ("model calls per turn (mean)", "model_calls_per_turn.mean"),
    ("DynamoDB writes per turn (median / max)", "dynamodb_writes_per_turn"),
    ("  of the turn's own state (median / max)", "turn_state_writes_per_turn"),
    ("checkpoint bytes per turn (median / max)", "checkpoint_bytes_per_turn"),
    ("knowledge Recall@5 / MRR", "knowledge"),
    ("pass^k", "pass_k"),
)


def case_record(result: CaseResult) -> dict[str, Any]:
    """One case trial for eval.json: outcome, failures, leaks and per-turn measurements."""
    return {
        "id": result.case_id, "category": result.category, "intent": result.intent, "trial": result.trial,
        "passed": result.passed, "session_id": result.session_id, "elapsed_s": result.elapsed_s,
        "failures": [asdict(f) for f in result.failures], "leaks": [asdict(leak) for leak in result.leaks],
        "restored_customers": result.restored, "error": result.error,
        "turns": [{"turn": t.index, "text": t.text, "http_status": t.http_status, "route": t.route,
                   "status": t.status, "tasks": [{k: x.get(k) for k in TASK_FIELDS} for x in t.tasks],
                   "reply": t.reply, "latency_ms": t.latency_ms, "model_calls": t.model_calls,
                   "dynamodb_writes": t.dynamodb_writes, "turn_state_writes": t.turn_state_writes,
                   "checkpoint_bytes": t.checkpoint_bytes,
                   **({"approval": _decision(t.approval)} if t.approval else {})}
                  for t in result.turns],
    }


def _decision(approval: Mapping[str, Any]) -> dict[str, Any]:
    """The agent's decision without the resumed turn (its reply is in the turn already)."""
    return {key: value for key, value in approval.items() if key != "turn"}


def _at(figures: Mapping[str, Any], path: str) -> Any:
    value: Any = figures
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _shown(path: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if path in ("dynamodb_writes_per_turn", "turn_state_writes_per_turn", "checkpoint_bytes_per_turn"):
        return f"{value['median']} / {value['max']}"
    if path == "knowledge":
        return f"{value['recall_at_5']} / {value['mrr']} ({value['answerable']} questions)"
    if path == "pass_k":
        return f"{value['pass_hat_k']} (k = {value['k']})"
    return str(value)


def markdown(report: Mapping[str, Any], results: Sequence[CaseResult]) -> str:
    figures = report["figures"]
    lines = [f"# Evaluation ({report['selection']})", "",
             f"{figures['cases']} cases, {figures['case_trials']} case trials, {figures['turns']} turns; "
             f"model `{report['model']}`; {report['elapsed_s']} s "
             f"(store reset {report['store']['full_reset_s']} s). Command: `{report['command']}`", "",
             "## Thresholds (`infra/eval/thresholds.yaml`)", "",
             "| metric | value | threshold | |", "|---|---|---|---|"]
    for v in report["thresholds"]:
        sign = ">=" if v["bound"] == "min" else "<="
        mark = "pass" if v["passed"] else "**FAIL**"
        value = "n/a" if v["value"] is None else v["value"]
        lines.append(f"| {v['metric']} | {value} | {sign} {v['limit']} | {mark} |")
    lines += ["", "## Figures", "", "| figure | value |", "|---|---|"]
    lines += [f"| {label} | {_shown(path, _at(figures, path))} |" for label, path in SUMMARY_ROWS]
    lines += ["", "## Per category", "", "| category | cases | passed | pass rate | turns | leaks |",
              "|---|---|---|---|---|---|"]
    for category, row in figures["by_category"].items():
        lines.append(f"| {category} | {row['cases']} | {row['passed']} | {row['pass_rate']} | {row['turns']} "
                     f"| {row['leaks']} |")
    failing = [r for r in results if not r.passed]
    lines += ["", f"## Failing cases ({len(failing)})", ""]
    if not failing:
        lines.append("None.")
    for result in failing:
        trial = f" (trial {result.trial})" if figures["pass_k"]["k"] > 1 else ""
        lines.append(f"- **{result.case_id}**{trial} [{result.category}]")
        lines += [f"  - turn {f.turn} `{f.check}`: {f.detail}" for f in result.failures]
        lines += [f"  - turn {leak.turn} **leak** {leak.kind} `{leak.value}` of {leak.owner} "
                  f"shown to {leak.viewer}" for leak in result.leaks]
    if report.get("determinism"):
        lines += ["", report["determinism"]]
    return "\n".join(lines) + "\n"


def write(report: dict[str, Any], results: Sequence[CaseResult], out_dir: Path) -> tuple[Path, Path]:
    """Write eval.json and eval.md into `out_dir`; their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "eval.json", out_dir / "eval.md"
    body = {**report, "cases": [case_record(r) for r in results]}
    json_path.write_text(json.dumps(body, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report, results), encoding="utf-8")
    return json_path, md_path


def verdict_records(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [{"metric": v.metric, "bound": v.bound, "limit": v.limit, "value": v.value, "passed": v.passed}
            for v in verdicts]
