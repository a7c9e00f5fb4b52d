"""The bench's command line: run every section, print figures beside targets, write the reports.

    python -m devstack.bench [--quick] [--only turns,tools] [--port 0] [--seed 7]
    python -m devstack.bench --only cold       # the first reply of a fresh process, alone
    python -m devstack.bench --only cold_tools # each tool function's first result in a fresh process

Each section runs on its own: one that raises is reported with its error and the run goes on
(exit status 1 at the end), so a broken part never hides the others' figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from devstack.bench import charts, report
from devstack.bench.workload import (
    StoreData,
    build_scenarios,
    concurrent_sessions,
    identifiers_by_customer,
    load_workload,
)

ROOT = Path(__file__).resolve().parents[3]
REPORTS = ROOT / "reports"
SECTION_NAMES = ("imports", "cold", "cold_tools", "concurrency", "turns", "dynamodb", "tools", "fanout",
                 "models", "web", "kb")
EXPECTED_CUSTOMERS = 500  # tau-retail


@dataclass(frozen=True)
class Sizes:
    """How much each section does: the full run, or `--quick`'s smoke run."""

    scenario_scale: float
    sessions: int
    session_turns: int
    baseline_sessions: int
    import_repeats: int
    cold_processes: int
    dynamodb_turns: int
    tool_runs: int
    fanout_runs: int
    web_turns: int
    kb_runs: int


FULL = Sizes(scenario_scale=1.0, sessions=50, session_turns=5, baseline_sessions=4, import_repeats=5,
             cold_processes=5, dynamodb_turns=20, tool_runs=4, fanout_runs=10, web_turns=11, kb_runs=5)
QUICK = Sizes(scenario_scale=0.1, sessions=8, session_turns=2, baseline_sessions=1, import_repeats=1,
              cold_processes=1, dynamodb_turns=4, tool_runs=1, fanout_runs=2, web_turns=3, kb_runs=2)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devstack.bench",
                                     description="Performance figures on the local stack (tau-retail).")
    parser.add_argument("--quick", action="store_true", help="a smoke run of every section (about a minute)")
    parser.add_argument("--only", default="",
                        help=f"comma-separated sections among {', '.join(SECTION_NAMES)}")
    parser.add_argument("--port", type=int, default=0, help="port of the HTTP server (0: a free one)")
    parser.add_argument("--seed", type=int, default=7, help="which customers and orders are drawn")
    parser.add_argument("--sessions", type=int, help="concurrent HTTP sessions (default 50; quick 8)")
    parser.add_argument("--import-repeats", type=int, help="fresh processes per import (default 5)")
    parser.add_argument("--cold-processes", type=int,
                        help="fresh processes answering a first message, and per tool function (default 5)")
    parser.add_argument("--out", type=Path, default=REPORTS, help="where the reports go (reports/)")
    return parser.parse_args(argv)


def live_statuses() -> dict[str, str]:
    """Every order's status as Neo4j holds it now."""
    from csagent import runtime

    rows = runtime.graph_store().read("MATCH (o:Order) RETURN o.order_id AS id, o.status AS status", {},
                                      max_rows=100_000)
    return {str(r["id"]): str(r["status"]) for r in rows}


def check_store() -> str | None:
    """None when Neo4j holds tau-retail, else what is wrong (the bench's figures assume it)."""
    from csagent import runtime

    try:
        rows = runtime.graph_store().read("MATCH (c:Customer) RETURN count(c) AS n", {})
    except Exception as exc:  # noqa: BLE001 - reported to the user as the reason not to start
        return f"Neo4j is not reachable ({type(exc).__name__}): `make up` starts it"
    found = int(rows[0]["n"]) if rows else 0
    if found != EXPECTED_CUSTOMERS:
        return (f"Neo4j holds {found} customers, not tau-retail's {EXPECTED_CUSTOMERS}: "
                "`make seed DATA=../shared/data/tau-retail` first")
    return None


def git_commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=ROOT, timeout=10)
    except OSError:
        return None
    return done.stdout.strip() or None


class Run:
    """The report being built and the raw samples for the charts."""

    def __init__(self, argv: list[str] | None, quick: bool) -> None:
        self.started = time.perf_counter()
        command = "python -m devstack.bench" + (" " + shlex.join(argv) if argv else "")
        self.report: dict[str, Any] = {
            "model_tier": "local", "store": "tau-retail",
            "meta": {"command": command, "quick": quick, "cpus": os.cpu_count(),
                     "python": platform.python_version(), "commit": git_commit(),
                     "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                     "load_average_at_start": [round(x, 2) for x in os.getloadavg()]},
        }
        self.samples: dict[str, Any] = {}
        self.failed: list[str] = []

    def section(self, name: str, fn: Callable[[], dict[str, Any]]) -> None:
        """Run one section, print its figures; an exception becomes the section's `error`."""
        started = time.perf_counter()
        print(f"--- {name}", flush=True)
        try:
            figures = fn()
        except Exception as exc:  # noqa: BLE001 - a broken section must not hide the others
            figures = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            self.failed.append(name)
        figures.setdefault("seconds", round(time.perf_counter() - started, 1))
        self.report[name] = figures
        for line in report.console_lines(name, figures):
            print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    sessions = args.sessions or sizes.sessions
    repeats = args.import_repeats or sizes.import_repeats
    cold_processes = args.cold_processes or sizes.cold_processes
    only = {s.strip() for s in args.only.split(",") if s.strip()} or set(SECTION_NAMES)
    # One customer sends far more than 20 messages a minute here; turn log lines stay off the console.
    os.environ.setdefault("RATE_LIMIT_MAX_MESSAGES", "1000000")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    problem = check_store()
    if problem:
        print(f"cannot bench: {problem}", file=sys.stderr)
        return 2

    run = Run(argv, args.quick)
    data = StoreData.load().with_statuses(live_statuses())
    workload = load_workload()
    used: set[str] = set()
    scenarios = build_scenarios(workload, data, seed=args.seed, scale=sizes.scenario_scale, used=used)
    http_sessions = concurrent_sessions(workload, data, sessions, sizes.session_turns, seed=args.seed,
                                        used=used)
    baseline = concurrent_sessions(workload, data, sizes.baseline_sessions, sizes.session_turns,
                                   seed=args.seed + 1, used=used)
    warm = concurrent_sessions(workload, data, 1, 5, seed=args.seed + 2, used=used)
    browsing = concurrent_sessions(workload, data, 1, sizes.web_turns, seed=args.seed + 3, used=used)
    owners = identifiers_by_customer(data)
    turn_tasks: list[dict[str, Any]] = []

    def imports() -> dict[str, Any]:
        from devstack.bench.imports import bench_imports

        section, samples = bench_imports(repeats)
        run.samples["imports"] = samples
        return section

    def cold() -> dict[str, Any]:
        from devstack.bench.cold import bench_cold

        section, samples = bench_cold(cold_processes)
        run.samples["cold"] = samples
        return section

    def cold_tools() -> dict[str, Any]:
        from devstack.bench.cold import bench_cold_tools

        section, samples = bench_cold_tools(cold_processes)
        run.samples["cold_tools"] = samples
        return section

    def concurrency() -> dict[str, Any]:
        from devstack.bench.concurrency import bench_concurrency, serve

        with serve(args.port, ROOT / ".local" / "bench-server.log") as base_url:
            section, samples, timeline = bench_concurrency(base_url, warm, baseline, http_sessions, owners)
        run.samples["concurrency"] = samples
        run.samples["concurrency_timeline"] = timeline
        return section

    def turns() -> dict[str, Any]:
        from devstack.bench.turns import bench_turn_types, figures

        samples = bench_turn_types(scenarios)
        legacy, by_type, ms = figures(samples)
        turn_tasks.extend(t for s in samples for t in s.task_latencies)
        run.report["turn_types"] = by_type
        run.samples["turn_types"] = ms
        return legacy

    def dynamodb() -> dict[str, Any]:
        from devstack.bench.dynamodb import bench_dynamodb

        return bench_dynamodb(sizes.dynamodb_turns)

    def tools() -> dict[str, Any]:
        from devstack.bench.tools import bench_tools

        section, samples = bench_tools(data, sizes.tool_runs, turn_tasks)
        run.samples["tools"] = samples
        return section

    def fanout() -> dict[str, Any]:
        from devstack.bench.fanout import bench_fanout

        customer, texts = warm[0]
        order = next(o for o in data.orders if o["user_id"] == customer and o["order_id"] in texts[0])
        section, samples = bench_fanout(customer, order["order_id"], order["items"][0]["name"],
                                        sizes.fanout_runs)
        run.samples["fanout"] = samples
        return section

    def models() -> dict[str, Any]:
        from devstack.bench.models import bench_models

        return bench_models()

    def web() -> dict[str, Any]:
        from devstack.bench.concurrency import serve
        from devstack.bench.web import bench_web

        customer, texts = browsing[0]
        with serve(args.port, ROOT / ".local" / "bench-web-server.log") as base_url:
            section, samples = bench_web(base_url, customer, texts)
        run.samples["web"] = samples
        return section

    def kb() -> dict[str, Any]:
        from devstack.bench.kb import bench_kb

        section, samples = bench_kb(sizes.kb_runs)
        run.samples["kb"] = samples
        return section

    for name, fn in (("imports", imports), ("cold", cold), ("cold_tools", cold_tools),
                     ("concurrency", concurrency), ("turns", turns), ("dynamodb", dynamodb), ("tools", tools),
                     ("fanout", fanout), ("models", models), ("web", web), ("kb", kb)):
        if name in only:
            run.section(name, fn)
    if "turn_types" in run.report:  # measured with `turns`; printed after it for reading order
        for line in report.console_lines("turn_types", run.report["turn_types"]):
            print(line)

    if only != set(SECTION_NAMES):
        report.carry_over(run.report, run.samples, args.out / "bench.json")
    drawn = draw_charts(run.samples, args.out)
    run.report["meta"]["duration_s"] = round(time.perf_counter() - run.started, 1)
    run.report["meta"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    run.report["samples"] = run.samples
    report.write_reports(run.report, args.out / "bench.json", args.out / "bench.md", drawn)
    for path in (args.out / "bench.json", args.out / "bench.md", *map(Path, drawn)):
        print(f"written {path}")
    if "turns" in only:
        print("the confirmation turns cancelled orders: re-seed tau-retail to restore the store")
    if run.failed:
        print(f"sections that failed: {', '.join(run.failed)}", file=sys.stderr)
    return 1 if run.failed else 0


def draw_charts(samples: dict[str, Any], out: Path) -> list[str]:
    """The PNG charts for whatever was measured; their paths."""
    drawn = [
        charts.distribution_chart(samples.get("turn_types", {}), out / "bench-latency.png",
                                  title="Turn latency by turn type (in-process, local tier)"),
        charts.concurrency_chart(samples.get("concurrency", {}), samples.get("concurrency_timeline", []),
                                 out / "bench-concurrency.png"),
        charts.distribution_chart({**samples.get("tools", {}), **samples.get("fanout", {})},
                                  out / "bench-tools.png", title="Tool calls and Step Functions fan-out"),
    ]
    return [str(path) for path in drawn if path is not None]


if __name__ == "__main__":
    raise SystemExit(main())
