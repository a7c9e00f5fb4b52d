"""Cold import of every Lambda handler beside `import langgraph.graph`, in fresh processes.

Each handler module (`functions/**/app.py`: the router, each tool, the webhook, the worker and
any function added later) is loaded the way the Lambda runtime loads `app.handler`, in a new
interpreter, timed from inside it (the interpreter's own start-up is not counted). The
statements run round-robin, repetition after repetition, so a slow moment of the machine hits
all of them alike; the figure is each statement's median, and its ratio to langgraph's
median in the same run. Import cost is a product metric: the handlers promise no I/O and no
heavy provider at import time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from devstack.bench.stats import ratio

ROOT = Path(__file__).resolve().parents[3]
LANGGRAPH = "langgraph.graph"
_TIMER = "import time; t=time.perf_counter(); {statement}; print((time.perf_counter()-t)*1000)"
_LOAD = ("import importlib.util as u; s=u.spec_from_file_location('app', {path!r}); "
         "m=u.module_from_spec(s); s.loader.exec_module(m)")


def handler_modules(functions_dir: Path = ROOT / "functions") -> dict[str, Path]:
    """`{"router": .../functions/router/app.py, "tools/text2cypher": ..., ...}`, sorted."""
    return {str(path.parent.relative_to(functions_dir)): path
            for path in sorted(functions_dir.glob("**/app.py"))}


def statements(modules: Mapping[str, Path]) -> dict[str, str]:
    """The statement timed for each name: `import langgraph.graph`, then each handler's load."""
    out = {LANGGRAPH: f"import {LANGGRAPH}"}
    out.update({name: _LOAD.format(path=str(path)) for name, path in modules.items()})
    return out


def import_ms(statement: str, env: Mapping[str, str] | None = None) -> float:
    """Milliseconds `statement` takes in a fresh interpreter (raises on a failing import)."""
    done = subprocess.run([sys.executable, "-c", _TIMER.format(statement=statement)], capture_output=True,
                          text=True, env=dict(env or os.environ), cwd=ROOT, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"import failed: {done.stderr.strip().splitlines()[-1:]}")
    return float(done.stdout.strip().splitlines()[-1])


def import_figures(samples: Mapping[str, Sequence[float]], repeats: int) -> dict[str, Any]:
    """The section from the samples per statement; `router_import_ms` and `ratio` (router over
    langgraph) keep the names earlier reports used."""
    medians = {name: round(statistics.median(values), 1) for name, values in samples.items() if values}
    base = medians.get(LANGGRAPH)
    handlers = {name: {"median_ms": ms, "ratio": ratio(ms, base)} for name, ms in medians.items()
                if name != LANGGRAPH}
    slowest = max(handlers, key=lambda n: medians[n]) if handlers else None
    return {
        "router_import_ms": medians.get("router"),
        "langgraph_import_ms": base,
        "ratio": ratio(medians.get("router"), base),
        "slowest_handler": slowest,
        "slowest_handler_ratio": handlers[slowest]["ratio"] if slowest else None,
        "repeats": repeats,
        "handlers": {LANGGRAPH: {"median_ms": base, "ratio": 1.0} if base else {}, **handlers},
    }


def bench_imports(repeats: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """(the section, the samples per statement)."""
    timed = statements(handler_modules())
    samples: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(repeats):
        for name, statement in timed.items():
            samples[name].append(import_ms(statement))
    return import_figures(samples, repeats), samples
