"""The first reply of a fresh process: what the first customer after a quiet spell waits for.

A new interpreter loads the router handler the way the Lambda runtime loads `app.handler`, then
answers one message through `handler(event, context)` with `events/router/message.json` (an
order-status question of tau-retail's james_li_5688, in his own new session), and then one more
message in another session (the warm turn, for comparison). The child times itself from the
first statement after the interpreter's start-up, as `imports` does, and reports:

- `total_ms`: loading the handler and answering the first message, end to end;
- a breakdown of that time, measured by doing first, in the order a first request does it, each
  piece of work the first turn would otherwise do lazily: the handler's import, the embedding
  model's session, the first Neo4j query and the first DynamoDB call (client and connection), the
  graph and its services, the fixed texts' embeddings (intent examples and the intent model,
  injection and scope anchors, the Cypher catalogue's examples), then the turn itself;
- `warm_turn_ms`: the second message in the same process.

Beside it, `snapstart_first_reply_ms`: a child that first does what the before-snapshot hook does
(`csagent.warmup.warm_router`), then times the after-restore hook and the first turn: what a
container resumed from the snapshot does for its first customer (Lambda's resume itself aside).

Beside them, `core_bytecode_share`: the share of the core package's modules that had an
up-to-date bytecode file as each child started (`make setup` writes them: `make bytecode`). A
module without one is compiled from source by every fresh process (where PYTHONDONTWRITEBYTECODE
is set; otherwise by the first), which no Lambda container does: the core layer ships its bytecode.

Runs round-robin with `import langgraph.graph` in fresh processes, so a slow moment of the
machine hits all alike; the figure is the median of each and the ratio to langgraph's.

The event's principal is its JWT claims (as API Gateway's authorizer gives them), so the child
runs with `AUTH_MODE=jwt`; everything else comes from the environment (`make bench`'s local stack).
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from devstack.bench.imports import LANGGRAPH, import_ms
from devstack.bench.stats import ratio

ROOT = Path(__file__).resolve().parents[3]
ROUTER_APP = ROOT / "functions" / "router" / "app.py"
CORE_PACKAGE = ROOT / "layers" / "core" / "csagent"
EVENT = ROOT / "events" / "router" / "message.json"
#: The breakdown's phases, in the order the child runs them (`turn` is the handler's call; `other`
#: what no phase holds: the lazy imports between them, the reply's parsing).
PHASES = ("imports", "model_load", "neo4j_first_query", "dynamodb_first_call", "graph_build",
          "intent_examples", "injection_anchors", "scope_anchors", "catalogue_examples", "turn", "other")
_MARK = "COLD-FIGURES "


class _Context:
    """The parts of a Lambda context the handler's decorators read."""

    function_name = "RouterFunction"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:RouterFunction"
    aws_request_id = "bench-cold"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29_000


def event_for(session_id: str, path: Path = EVENT) -> dict[str, Any]:
    """The message event addressed to `session_id` (so no run shares a session)."""
    raw = path.read_text(encoding="utf-8")
    original = json.loads(raw)["pathParameters"]["proxy"].split("/")[2]
    return json.loads(raw.replace(f"sessions/{original}", f"sessions/{session_id}"))


def _child() -> None:
    """In the fresh process: load the handler, warm each piece in turn, answer; print the figures."""
    started = time.perf_counter()
    ms: dict[str, float] = {}

    def phase(name: str, fn: Callable[[], Any]) -> Any:
        begun = time.perf_counter()
        result = fn()
        ms[name] = (time.perf_counter() - begun) * 1000
        return result

    def load_handler() -> Any:
        import importlib.util

        spec = importlib.util.spec_from_file_location("app", ROUTER_APP)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    app = phase("imports", load_handler)
    from csagent import runtime
    from csagent.guardrails.injection import get_screen
    from csagent.guardrails.scope import get_scope_checker
    from csagent.nlp.embeddings import get_embedder
    from csagent.nlp.intents import get_intent_classifier
    from csagent.tools.cypher_catalogue import load_catalogue, matcher_for

    settings = runtime.get_settings()
    phase("model_load", lambda: get_embedder().embed_np(["warm up"]))
    phase("neo4j_first_query", lambda: runtime.graph_store().ping())
    phase("dynamodb_first_call",
          lambda: runtime.dynamodb_client().describe_table(TableName=settings.sessions_table))
    phase("graph_build", runtime.conversation_service)
    phase("intent_examples", lambda: get_intent_classifier().classify("hello"))
    phase("injection_anchors", get_screen().references)
    phase("scope_anchors", lambda: get_scope_checker().similarity("hello"))
    phase("catalogue_examples",
          matcher_for(get_embedder(), load_catalogue(), runtime.template_matchers()).warm_up)
    pid = os.getpid()
    response = phase("turn", lambda: app.handler(event_for(f"bench-cold-{pid}"), _Context()))
    total = (time.perf_counter() - started) * 1000
    ms["other"] = total - sum(ms.values())
    begun = time.perf_counter()
    warm = app.handler(event_for(f"bench-cold-{pid}-warm"), _Context())
    warm_ms = (time.perf_counter() - begun) * 1000
    answered = [json.loads(r.get("body") or "{}").get("status") for r in (response, warm)]
    print(_MARK + json.dumps({"total_ms": total, "warm_turn_ms": warm_ms, "phases": ms,
                              "status_codes": [response["statusCode"], warm["statusCode"]],
                              "answered": answered}), flush=True)


def _snapstart_child() -> None:
    """In the fresh process, as under SnapStart: load the handler and run the before-snapshot
    warm-up (`init_ms`, paid once per published version), then time what a restored container
    does for its first customer: the after-restore hook and the turn. Lambda's own resume of the
    snapshot is not in it (it cannot be run here)."""
    import importlib.util

    from csagent import warmup

    started = time.perf_counter()
    spec = importlib.util.spec_from_file_location("app", ROUTER_APP)
    assert spec and spec.loader
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    warmup.warm_router()
    init_ms = (time.perf_counter() - started) * 1000
    restored = time.perf_counter()
    warmup.after_restore()
    hooks_ms = (time.perf_counter() - restored) * 1000
    response = app.handler(event_for(f"bench-snap-{os.getpid()}"), _Context())
    total = (time.perf_counter() - restored) * 1000
    print(_MARK + json.dumps({"total_ms": total, "init_ms": init_ms, "after_restore_ms": hooks_ms,
                              "turn_ms": total - hooks_ms, "status_codes": [response["statusCode"]],
                              "answered": [json.loads(response.get("body") or "{}").get("status")]}),
          flush=True)


def core_bytecode_share(package: Path = CORE_PACKAGE) -> float:
    """The share of `package`'s modules whose `__pycache__` bytecode for this interpreter is up to
    date: a timestamp pyc recording the source's mtime and size, or a hash-based one (checked by
    the import system itself)."""
    sources = sorted(package.rglob("*.py"))
    fresh = 0
    for source in sources:
        try:
            with open(importlib.util.cache_from_source(str(source)), "rb") as handle:
                header = handle.read(16)
        except OSError:
            continue
        if len(header) < 16:
            continue
        flags, mtime, size = struct.unpack("<III", header[4:16])
        stat = source.stat()
        matches = mtime == int(stat.st_mtime) & 0xFFFFFFFF and size == stat.st_size & 0xFFFFFFFF
        fresh += bool(flags) or matches
    return round(fresh / len(sources), 2) if sources else 0.0


def cold_run(env: Mapping[str, str] | None = None, *, snapstart: bool = False) -> dict[str, Any]:
    """One fresh process's figures (raises when it fails or a reply is not a 200); `snapstart`:
    the first reply of a container restored from a warmed snapshot instead. `core_bytecode` is
    `core_bytecode_share()` as the process starts."""
    core_bytecode = core_bytecode_share()
    child_env = {**(env or os.environ), "AUTH_MODE": "jwt"}
    mode = "--snapstart-child" if snapstart else "--child"
    done = subprocess.run([sys.executable, "-m", "devstack.bench.cold", mode], capture_output=True,
                          text=True, env=child_env, cwd=ROOT, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"cold run failed: {done.stderr.strip().splitlines()[-3:]}")
    figures: dict[str, Any] = json.loads(lines[-1][len(_MARK):])
    if any(code != 200 for code in figures["status_codes"]):
        raise RuntimeError(f"cold run answered {figures['status_codes']}: {figures['answered']}")
    figures["core_bytecode"] = core_bytecode
    return figures


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def cold_figures(runs: Sequence[Mapping[str, Any]], langgraph_ms: Sequence[float],
                 snapstart: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The section from the children's figures, the `import langgraph.graph` samples and the
    SnapStart children's figures (when measured)."""
    median = _median

    total = median([r["total_ms"] for r in runs])
    base = median(langgraph_ms)
    breakdown = {}
    for name in PHASES:
        value = median([r["phases"][name] for r in runs if name in r["phases"]])
        breakdown[name] = {"median_ms": value, "share": ratio(value, total)}
    return {
        "cold_first_reply_ms": total,
        "langgraph_import_ms": base,
        "ratio": ratio(total, base),
        "router_import_ms": breakdown["imports"]["median_ms"],
        "warm_turn_ms": median([r["warm_turn_ms"] for r in runs]),
        "processes": len(runs),
        "core_bytecode_share": median([r["core_bytecode"] for r in runs if "core_bytecode" in r]),
        "answered": all(a == "answered" for r in [*runs, *snapstart] for a in r.get("answered", [])),
        **({"snapstart_first_reply_ms": median([r["total_ms"] for r in snapstart]),
            "snapstart_ratio": ratio(median([r["total_ms"] for r in snapstart]), base),
            "snapstart_after_restore_ms": median([r["after_restore_ms"] for r in snapstart]),
            "snapstart_turn_ms": median([r["turn_ms"] for r in snapstart]),
            "snapstart_init_ms": median([r["init_ms"] for r in snapstart])} if snapstart else {}),
        "breakdown": breakdown,
        "notes": ["each phase is done first, in the order a first request needs it, so the turn that "
                  "follows pays only for itself; the total is the same work end to end",
                  "the child runs with AUTH_MODE=jwt: the event's JWT claims are the principal",
                  "snapstart_*: a child warms as the before-snapshot hook does (snapstart_init_ms, once "
                  "per published version), then the after-restore hook and the first turn are timed; "
                  "Lambda's resume of the snapshot itself is not included"],
    }


def bench_cold(processes: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """(the section, the samples): `processes` cold children and as many `import langgraph.graph`."""
    runs: list[dict[str, Any]] = []
    snapstart: list[dict[str, Any]] = []
    langgraph: list[float] = []
    for _ in range(processes):
        langgraph.append(import_ms(f"import {LANGGRAPH}"))
        runs.append(cold_run())
        snapstart.append(cold_run(snapstart=True))
    samples = {"cold_first_reply": [r["total_ms"] for r in runs],
               "snapstart_first_reply": [r["total_ms"] for r in snapstart], LANGGRAPH: langgraph}
    return cold_figures(runs, langgraph, snapstart), samples


if __name__ == "__main__" and sys.argv[1:] == ["--child"]:
    _child()
elif __name__ == "__main__" and sys.argv[1:] == ["--snapstart-child"]:
    _snapstart_child()
