"""The bench's outputs: targets beside figures, the console lines, `reports/bench.json` and the
Markdown summary `reports/bench.md`.

Pure functions of the report dictionary (sections of figures, plus raw `samples` for the
charts), so they are tested on synthetic numbers. Targets come from the issues; a figure is
printed beside its target and marked, never asserted: a benchmark reports, tests decide.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: (section, figure) -> (comparison, target). Section and figure names are the JSON's keys.
TARGETS: dict[tuple[str, str], tuple[str, float]] = {
    ("turns", "single_intent_p50_ms"): ("<=", 150),
    ("turns", "single_intent_p95_ms"): ("<=", 400),
    ("turns", "compound_over_single_p50"): ("<=", 2.0),
    ("imports", "ratio"): ("<=", 1.3),
    ("cold", "ratio"): ("<=", 1.5),
    ("cold", "snapstart_ratio"): ("<=", 1.5),
    ("dynamodb", "turn_state_writes_per_turn_max"): ("<=", 3),
    ("dynamodb", "checkpoint_bytes_per_turn_median"): ("<=", 6144),
    ("tools", "template_match_and_query_p50_ms"): ("<=", 20),
    ("tools", "knowledge_search_p50_ms"): ("<=", 60),
    ("concurrency", "errors"): ("==", 0),
    ("concurrency", "cross_session_leaks"): ("==", 0),
    ("kb", "reingest_unchanged_embedded"): ("==", 0),
    ("kb", "upload_to_searchable_max_ms"): ("<=", 60_000),
}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt, "==": operator.eq}

#: Section order and titles in the console and the Markdown summary.
SECTIONS: dict[str, str] = {
    "turns": "Turn latency (local model tier, in-process service)",
    "turn_types": "Turn latency by turn type",
    "concurrency": "Concurrent sessions over HTTP (uvicorn, as `make serve`)",
    "imports": "Cold import (fresh processes, medians)",
    "cold": "Cold start: the first reply of a fresh process (router handler, medians)",
    "cold_tools": "Cold start of the tool functions: import + first invocation of a fresh process (medians)",
    "dynamodb": "DynamoDB writes and checkpoint size over one session",
    "tools": "Neo4j tool latencies",
    "fanout": "Step Functions fan-out overhead (moto bridge vs in-process)",
    "models": "Model layer",
    "web": "Web pages in chromium (page weight, time to the first progress label and to the answer)",
    "kb": "Knowledge base: ingest throughput, upload to answerable, re-ingest",
}


@dataclass(frozen=True)
class TargetCheck:
    """One figure against its target; `met` is None when the figure is missing."""

    section: str
    figure: str
    value: Any
    comparison: str
    target: float
    met: bool | None


def check_targets(report: Mapping[str, Any],
                  targets: Mapping[tuple[str, str], tuple[str, float]] = TARGETS) -> list[TargetCheck]:
    """Every target with the report's figure and whether it is met."""
    checks = []
    for (section, figure), (comparison, target) in targets.items():
        value = (report.get(section) or {}).get(figure)
        met = None if not isinstance(value, int | float) else _COMPARE[comparison](value, target)
        checks.append(TargetCheck(section, figure, value, comparison, target, met))
    return checks


def target_note(section: str, figure: str, targets: Mapping[tuple[str, str], tuple[str, float]] = TARGETS,
                *, console: bool = True) -> str:
    """`(target <= 150)` (console) or `<= 150` (a table cell) for a figure with a target, else ""."""
    target = targets.get((section, figure))
    if not target:
        return ""
    return f"(target {target[0]} {target[1]})" if console else f"{target[0]} {fmt(target[1])}"


def fmt(value: Any) -> str:
    """A figure as a table cell: numbers without noise, missing as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def console_lines(section: str, figures: Mapping[str, Any]) -> list[str]:
    """`section  figure  value  (target ...)` for each scalar figure of a section; nested figures
    (tables) are left to the Markdown summary."""
    lines = []
    for key, value in figures.items():
        if isinstance(value, Mapping | list):
            continue
        lines.append(f"{section:11} {key:40} {fmt(value):>12}   {target_note(section, key)}".rstrip())
    return lines


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table; numbers right-aligned."""
    rows = [list(r) for r in rows]
    numeric = [all(isinstance(r[i], int | float) or r[i] is None for r in rows) and bool(rows)
               for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join("---:" if n else "---" for n in numeric) + " |"]
    lines += ["| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def summary_table(groups: Mapping[str, Mapping[str, Any]], label: str,
                  extra: Sequence[tuple[str, str]] = ()) -> str:
    """A table of `stats.summarise` results per group (n, p50, p95, max) plus `extra` columns
    given as (header, key)."""
    headers = [label, "n", "p50 ms", "p95 ms", "max ms", *(h for h, _ in extra)]
    rows = [[name, g.get("n"), g.get("p50_ms"), g.get("p95_ms"), g.get("max_ms"),
             *(g.get(key) for _, key in extra)] for name, g in groups.items()]
    return table(headers, rows)


def nested_tables(figures: Mapping[str, Any], label: str = "case") -> str:
    """Figures of any shape as tables: the scalars in one, then one row per mapping of scalars
    (nested mappings flattened to `outer / inner` rows), columns the union of their keys."""
    scalars = [[k, v] for k, v in figures.items() if not isinstance(v, Mapping | list)]
    rows: dict[str, Mapping[str, Any]] = {}

    def collect(prefix: str, value: Mapping[str, Any]) -> None:
        flat = {k: v for k, v in value.items() if not isinstance(v, Mapping | list)}
        if flat:
            rows[prefix] = flat
        for k, v in value.items():
            if isinstance(v, Mapping):
                collect(f"{prefix} / {k}" if prefix else k, v)

    for key, value in figures.items():
        if isinstance(value, Mapping):
            collect(key, value)
    parts = [table(["figure", "value"], scalars)] if scalars else []
    if rows:
        columns = list(dict.fromkeys(k for r in rows.values() for k in r))
        parts.append(table([label, *columns], [[name, *(r.get(c) for c in columns)]
                                               for name, r in rows.items()]))
    return "\n\n".join(parts)


def _scalars(figures: Mapping[str, Any], section: str) -> str:
    rows = [[key, value, target_note(section, key, console=False)] for key, value in figures.items()
            if not isinstance(value, Mapping | list)]
    return table(["figure", "value", "target"], rows) if rows else ""


def _section_body(name: str, figures: Mapping[str, Any]) -> list[str]:
    """The Markdown of one section: its scalar figures, then its tables."""
    if figures.get("error"):
        return [f"Not measured: {figures['error']}"]
    if figures.get("available") is False:
        return [f"Not available: {figures.get('reason', 'no reason given')}"]
    parts = [_scalars(figures, name)]
    if name == "turn_types":
        parts = [summary_table(figures.get("by_type", {}), "turn type",
                               (("tasks (median)", "tasks_median"), ("as intended", "as_intended")))]
    elif name == "imports":
        handlers = figures.get("handlers", {})
        parts.append(table(["module", "median ms", "× langgraph.graph"],
                           [[h, v.get("median_ms"), v.get("ratio")] for h, v in handlers.items()]))
    elif name == "cold":
        breakdown = figures.get("breakdown", {})
        parts.append(table(["phase of the first reply", "median ms", "share"],
                           [[p, v.get("median_ms"), v.get("share")] for p, v in breakdown.items()]))
    elif name == "cold_tools":
        columns = ("first_result_ms", "ratio", "import_ms", "warm_ms", "gc_ms", "outcome")
        functions = figures.get("functions", {})
        parts.append(table(["tool function", "first result ms", "× langgraph.graph", "import ms",
                            "warm ms", "gc ms", "outcome"],
                           [[f, *(v.get(c) for c in columns)] for f, v in functions.items()]))
        breakdown = figures.get("breakdown", {})
        parts.append(table(["phase of the first result (median ms)", *functions],
                           [[p, *(by.get(f) for f in functions)] for p, by in breakdown.items()]))
    elif name == "tools":
        parts.append(summary_table(figures.get("by_tool", {}), "tool / path"))
        parts.append(summary_table(figures.get("template_families", {}), "template family",
                                   (("templates", "templates"),)))
    elif name == "dynamodb":
        per_turn = figures.get("by_turn", [])
        if per_turn:
            parts.append(table(["turn", "writes (turn state)", "writes (with rate limit)",
                                "checkpoint bytes written"],
                               [[t["turn"], t["turn_state_writes"], t["writes"], t["checkpoint_bytes"]]
                                for t in per_turn]))
    elif name == "concurrency":
        phases = figures.get("phases", {})
        parts.append(summary_table(phases, "phase", (("turns/s", "turns_per_s"),)))
    elif name == "fanout":
        parts.append(summary_table(figures.get("waves", {}), "one wave"))
        parts.append(summary_table(figures.get("turns", {}), "compound turn"))
    elif name == "models":
        for key, value in figures.items():
            if isinstance(value, Mapping):
                parts.append(f"`{key}()`\n\n" + nested_tables(value))
    notes = figures.get("notes")
    if isinstance(notes, list):
        parts.append("\n".join(f"- {n}" for n in notes))
    return [p for p in parts if p]


def _carried_line(meta: Mapping[str, Any]) -> list[str]:
    carried = meta.get("carried_over")
    if not carried:
        return []
    return [f"Sections {', '.join(carried['sections'])} are from an earlier run (commit "
            f"{carried.get('commit') or '?'}, {carried.get('started_at') or '?'}): this one measured only "
            "the others.", ""]


def markdown(report: Mapping[str, Any], charts: Sequence[str] = ()) -> str:
    """The Markdown summary: run facts, the targets, then every section that was measured."""
    meta = report.get("meta", {})
    lines = ["# Benchmark", "",
             f"`{meta.get('command', 'python -m devstack.bench')}` — store {report.get('store', '?')}, "
             f"model tier {report.get('model_tier', '?')}, {meta.get('cpus', '?')} CPUs, "
             f"{fmt(meta.get('duration_s'))} s{' (quick run)' if meta.get('quick') else ''}. "
             "Figures are medians and percentiles of one run; compare ratios, not absolute numbers "
             "across machines.", "", *_carried_line(meta), "## Targets", ""]
    checks = check_targets(report)
    lines.append(table(["section", "figure", "value", "target", "met"],
                       [[c.section, c.figure, c.value, f"{c.comparison} {fmt(c.target)}",
                         "—" if c.met is None else ("yes" if c.met else "**no**")] for c in checks]))
    for name, title in SECTIONS.items():
        if name not in report:
            continue
        lines += ["", f"## {title}", ""]
        lines.append("\n\n".join(_section_body(name, report[name])))
    if charts:
        lines += ["", "## Charts", ""] + [f"![{Path(c).stem}]({Path(c).name})" for c in charts]
    return "\n".join(lines) + "\n"


def carry_over(report: dict[str, Any], samples: dict[str, Any], previous_path: Path) -> list[str]:
    """The sections of the previous run's report (`previous_path`, when it exists and reads) that
    `report` did not measure, copied into it (their samples into `samples`), and named in its
    `meta` with that run's commit and start: a `--only` run updates its sections and keeps the
    others. Their names."""
    try:
        previous = json.loads(previous_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    kept = [name for name in SECTIONS if name in previous and name not in report]
    for name in kept:
        report[name] = previous[name]
    for key, value in (previous.get("samples") or {}).items():
        samples.setdefault(key, value)
    if kept:
        meta = previous.get("meta") or {}
        report["meta"]["carried_over"] = {"sections": kept, "commit": meta.get("commit"),
                                          "started_at": meta.get("started_at")}
    return kept


def write_reports(report: Mapping[str, Any], json_path: Path, md_path: Path,
                  charts: Sequence[str] = ()) -> None:
    """`reports/bench.json` (everything, samples included) and `reports/bench.md`."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report, charts), encoding="utf-8")
