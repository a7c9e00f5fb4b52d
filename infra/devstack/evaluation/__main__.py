"""CLI: `python -m devstack.evaluation` (see `infra/eval/README.md`).

Exit codes: 0 every threshold held (or `--check` found the cases valid and complete); 1 a
threshold failed, a case file is invalid, coverage falls short (`--check`), or Neo4j is not
answering; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from devstack.evaluation.cases import CASES_DIR, CaseFileError, coverage, load_cases
from devstack.evaluation.checks import CaseResult


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m devstack.evaluation",
                                     description="Run the evaluation suite through the HTTP API.")
    parser.add_argument("--cases", type=Path, action="append", default=None,
                        help=f"a case file or directory (repeatable; default {CASES_DIR})")
    parser.add_argument("--check", action="store_true",
                        help="validate the case files and their coverage, run nothing")
    parser.add_argument("--slice", action="store_true", help="only the `slice: true` cases (the CI slice)")
    parser.add_argument("--category", action="append", default=[], help="only this category (repeatable)")
    parser.add_argument("--case", action="append", default=[], help="only this case id (repeatable)")
    parser.add_argument("--trials", type=int, default=1, help="run every case K times; reports pass^k")
    parser.add_argument("--model", default=None, help="CHAT_MODEL for the run, e.g. openai/smollm2@http://…")
    parser.add_argument("--thresholds", type=Path, default=None, help="default infra/eval/thresholds.yaml")
    parser.add_argument("--out", type=Path, default=None, help="report directory (default reports/)")
    parser.add_argument("--data", type=Path, default=None, help="the tau-retail dataset directory")
    parser.add_argument("--no-reset", action="store_true", help="do not reseed the store first")
    parser.add_argument("--no-knowledge", action="store_true", help="skip knowledge Recall@5")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    return parser


def check(paths: Sequence[Path]) -> int:
    """Validate every file and report coverage against the issue's minimums."""
    try:
        cases = load_cases(paths)
    except CaseFileError as exc:
        print(f"invalid: {exc}", file=sys.stderr)
        return 1
    report = coverage(cases)
    print(f"{len(cases)} cases valid")
    for category, count in sorted(report.counts.items()):
        print(f"  {category:14} {count:4}   in the slice: {report.slice_counts.get(category, 0)}")
    for shortfall in report.shortfalls:
        print(f"shortfall: {shortfall}")
    return 0 if report.ok else 1


def _progress(result: CaseResult) -> None:
    mark = "ok  " if result.passed else "FAIL"
    print(f"{mark} {result.case_id} ({result.elapsed_s:.2f} s)"
          + "".join(f"\n       turn {f.turn} {f.check}: {f.detail}" for f in result.failures), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    paths = tuple(args.cases or [CASES_DIR])
    if args.check:
        return check(paths)
    if args.trials < 1:
        print("error: --trials must be at least 1", file=sys.stderr)
        return 2

    from neo4j import GraphDatabase
    from neo4j.exceptions import ServiceUnavailable

    from devstack.evaluation.runner import LOCAL_ENV, Options, evaluate

    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")  # the table is the output, not turn logs
    defaults = Options()
    given = list(argv) if argv is not None else sys.argv[1:]
    options = Options(paths=paths, slice_only=args.slice, categories=tuple(args.category),
                      ids=tuple(args.case), trials=args.trials, model=args.model,
                      thresholds=args.thresholds or defaults.thresholds, out_dir=args.out or defaults.out_dir,
                      data_dir=args.data or defaults.data_dir, reset=not args.no_reset,
                      knowledge=not args.no_knowledge,
                      command=" ".join(["python -m devstack.evaluation", shlex.join(given)]).strip())
    from csagent.config import get_settings

    started = time.perf_counter()
    uri = get_settings().neo4j_uri
    with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as driver:
        try:
            driver.verify_connectivity()
        except ServiceUnavailable as exc:
            print(f"error: Neo4j is unreachable ({exc}); run `make up` first", file=sys.stderr)
            return 1
        try:
            outcome = evaluate(driver, options, _progress if args.verbose else None)
        except (CaseFileError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    figures = outcome.report["figures"]
    print(f"{figures['cases']} cases, {figures['turns']} turns in {time.perf_counter() - started:.1f} s; "
          f"full resolution {figures['full_resolution_rate']}, route accuracy {figures['route_accuracy']}, "
          f"leaks {figures['data_leaks']}, end state {figures['end_state_correct_rate']}")
    for verdict in outcome.verdicts:
        print(("pass " if verdict.passed else "FAIL ") + verdict.text)
    if options.out_dir is not None:
        print(f"written {options.out_dir / 'eval.json'} and {options.out_dir / 'eval.md'}")
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
