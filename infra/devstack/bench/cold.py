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

The same children serve any other function (`FunctionCase`, `function_run`): a fresh process loads
its handler module, does first the lazy work the case names (`WARM_UPS`: the embedding model's
session, the first Neo4j query, the first DynamoDB call; for an ASGI app, the Lambda Web Adapter's
readiness probe), then serves its first event and any further ones (the warm invocations). It
reports a breakdown of the same kind (`imports`, each phase, `invocation` where the router has
`turn`, `other`), the outcome of each invocation, and the cyclic collector's collections up to
the first result and their time. The `cold_tools` section
(`bench_cold_tools`) runs it for each tool function with its event in events/tools/,
round-robin with `import langgraph.graph`.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import json
import os
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
#: The tool functions and the lazy work each one's first invocation does (checked: the embedding
#: model's session is opened by the tools that embed the question, never by the other two).
TOOL_PHASES: dict[str, tuple[str, ...]] = {
    "predefined_cypher": ("neo4j_first_query",),
    "knowledge_search": ("model_load", "neo4j_first_query"),
    "customer_actions": ("neo4j_first_query",),
    "text2cypher": ("model_load", "neo4j_first_query"),
}
#: The phases of a function's first invocation, in the order the child runs them.
FUNCTION_PHASES = ("imports", "readiness_probe", "model_load", "neo4j_first_query", "dynamodb_first_call",
                   "invocation", "other")


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


def _load_app(path: Path) -> Any:
    """The handler module at `path`, loaded the way the Lambda runtime loads `app.handler`."""
    spec = importlib.util.spec_from_file_location("app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _model_load() -> Any:
    from csagent.nlp.embeddings import get_embedder

    return get_embedder().embed_np(["warm up"])


def _neo4j_first_query() -> Any:
    from csagent import runtime

    return runtime.graph_store().ping()


def _dynamodb_first_call() -> Any:
    from csagent import runtime

    return runtime.dynamodb_client().describe_table(TableName=runtime.get_settings().sessions_table)


#: Lazy work of a first request, done first as a phase of its own: the embedding model's session,
#: the first Neo4j query (the driver and its first connection, which the function's calls reuse),
#: the first DynamoDB call (client and connection).
WARM_UPS: dict[str, Callable[[], Any]] = {"model_load": _model_load, "neo4j_first_query": _neo4j_first_query,
                                          "dynamodb_first_call": _dynamodb_first_call}


class _Phases:
    """Milliseconds per named phase of a child, in the order they ran."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        begun = time.perf_counter()
        result = fn()
        self.ms[name] = (time.perf_counter() - begun) * 1000
        return result


def _child() -> None:
    """In the fresh process: load the handler, warm each piece in turn, answer; print the figures."""
    started = time.perf_counter()
    phase = _Phases()
    ms = phase.ms
    app = phase("imports", lambda: _load_app(ROUTER_APP))
    from csagent import runtime
    from csagent.guardrails.injection import get_screen
    from csagent.guardrails.scope import get_scope_checker
    from csagent.nlp.embeddings import get_embedder
    from csagent.nlp.intents import get_intent_classifier
    from csagent.tools.cypher_catalogue import load_catalogue, matcher_for

    runtime.get_settings()  # read before the phases, not inside the first one that needs it
    for name in ("model_load", "neo4j_first_query", "dynamodb_first_call"):
        phase(name, WARM_UPS[name])
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
    from csagent import warmup

    started = time.perf_counter()
    app = _load_app(ROUTER_APP)
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


@dataclass(frozen=True)
class FunctionCase:
    """A function's first invocation in a fresh process: its handler module, the events it serves
    in turn (the first one, then the warm ones), the lazy work done first as phases of their own
    (`WARM_UPS`, and `readiness_probe` for an ASGI app), and the outcomes (`outcome`) that count as
    served. `asgi`: the module's `app` is an ASGI app and each event an HTTP request
    (`{"method", "path", "headers", "body"}`), as the Lambda Web Adapter forwards it."""

    app: Path
    events: tuple[dict[str, Any], ...]
    phases: tuple[str, ...] = ()
    expect: frozenset[str] = frozenset({"success"})
    asgi: bool = False

    def spec(self) -> dict[str, Any]:
        """What the child reads from its stdin."""
        return {"app": str(self.app), "events": list(self.events), "phases": list(self.phases),
                "asgi": self.asgi}


def outcome(result: Any) -> str:
    """A handler's result in a word: `http 200` for an HTTP response (`http 200 done` for a stream
    of server-sent events whose last event is `done`), a tool result's status, `N failed` for an
    SQS batch response, else the names of its keys."""
    if not isinstance(result, Mapping):
        return type(result).__name__
    if "statusCode" in result:
        last = result.get("last_event")
        return f"http {result['statusCode']}" + (f" {last}" if last else "")
    if isinstance(result.get("status"), str):
        return str(result["status"])
    if isinstance(result.get("batchItemFailures"), list):
        return f"{len(result['batchItemFailures'])} failed"
    return ",".join(sorted(map(str, result))) or "empty"


class _LambdaContext:
    """A Lambda context for any function's handler (`_Context` is the router's)."""

    function_name = "Function"
    function_version = "$LATEST"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:Function"
    aws_request_id = "bench-cold-function"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29_000


async def asgi_request(app: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    """One HTTP request served by an ASGI app, its whole response read: `{"statusCode"}`, and
    `last_event` for a stream of server-sent events (the name of its last event)."""
    body = str(request.get("body") or "").encode()
    headers = [(k.lower().encode(), str(v).encode()) for k, v in request.get("headers", {}).items()]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "scheme": "http",
             "method": request["method"], "path": request["path"], "raw_path": request["path"].encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 50000),
             "server": ("127.0.0.1", 8080), "headers": headers}
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays until the response is over
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    events = [line[len("event: "):].strip() for line in b"".join(chunks).decode(errors="replace").splitlines()
              if line.startswith("event: ")]
    return {"statusCode": status, **({"last_event": events[-1]} if events else {})}


def _gc_timer() -> dict[str, float]:
    """The cyclic collector's collections from now on and their milliseconds, counted as they end."""
    seen = {"collections": 0.0, "ms": 0.0}
    begun: list[float] = []

    def callback(stage: str, info: Mapping[str, Any]) -> None:
        if stage == "start":
            begun.append(time.perf_counter())
        elif begun:
            seen["collections"] += 1
            seen["ms"] += (time.perf_counter() - begun.pop()) * 1000

    gc.callbacks.append(callback)
    return seen


def _function_child() -> None:
    """In the fresh process: load the function's module, do the case's phases, serve its events
    (`FunctionCase.spec()` on stdin); print the figures."""
    spec = json.loads(sys.stdin.read())
    collector = _gc_timer()
    started = time.perf_counter()
    phase = _Phases()
    module = phase("imports", lambda: _load_app(Path(spec["app"])))
    loop = asyncio.new_event_loop() if spec["asgi"] else None

    def invoke(event: dict[str, Any]) -> Any:
        if loop is not None:
            return loop.run_until_complete(asgi_request(module.app, event))
        return module.handler(event, _LambdaContext())

    for name in spec["phases"]:
        if name == "readiness_probe":  # the adapter's GET / until the app answers (any status < 500)
            phase(name, lambda: invoke({"method": "GET", "path": "/", "headers": {}}))
        else:
            phase(name, WARM_UPS[name])
    first, *more = spec["events"]
    results = [phase("invocation", lambda: invoke(first))]
    total = (time.perf_counter() - started) * 1000
    phase.ms["other"] = total - sum(phase.ms.values())
    gc_at_first = dict(collector)
    warm = []
    for event in more:
        begun = time.perf_counter()
        results.append(invoke(event))
        warm.append((time.perf_counter() - begun) * 1000)
    print(_MARK + json.dumps({"total_ms": total, "phases": phase.ms, "warm_ms": warm,
                              "outcomes": [outcome(r) for r in results],
                              "gc_collections": int(gc_at_first["collections"]), "gc_ms": gc_at_first["ms"],
                              "gc_enabled_after": gc.isenabled()}), flush=True)


def _run_child(mode: str, env: Mapping[str, str], stdin: str | None = None) -> dict[str, Any]:
    """The figures a child printed (raises when it failed)."""
    done = subprocess.run([sys.executable, "-m", "devstack.bench.cold", mode], capture_output=True, text=True,
                          env=dict(env), cwd=ROOT, timeout=300, input=stdin)
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"cold run failed: {done.stderr.strip().splitlines()[-3:]}")
    figures: dict[str, Any] = json.loads(lines[-1][len(_MARK):])
    return figures


def function_run(case: FunctionCase, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One fresh process's figures for `case` (raises when it fails or an outcome is not one
    `case.expect` names). The metrics namespace is the template's (Globals) unless `env` sets one."""
    child_env = {"POWERTOOLS_METRICS_NAMESPACE": "CsAgent", **(env or os.environ)}
    figures = _run_child("--function", child_env, json.dumps(case.spec()))
    unexpected = [o for o in figures["outcomes"] if o not in case.expect]
    if unexpected:
        raise RuntimeError(f"{case.app.parent.name} answered {figures['outcomes']}")
    return figures


def tool_case(tool: str, events: Path = ROOT / "events" / "tools") -> FunctionCase:
    """The tool function's event (events/tools/<tool>.json), served twice: cold, then warm. The
    local tier's Text2Cypher answers from its template fallback (`fallback`)."""
    event = json.loads((events / f"{tool}.json").read_text(encoding="utf-8"))
    expect = {"success", "fallback"} if tool == "text2cypher" else {"success"}
    return FunctionCase(ROOT / "functions" / "tools" / tool / "app.py", (event, event), TOOL_PHASES[tool],
                        frozenset(expect))


def function_figures(runs: Mapping[str, Sequence[Mapping[str, Any]]],
                     langgraph_ms: Sequence[float]) -> dict[str, Any]:
    """The section from each function's children's figures and the `import langgraph.graph`
    samples: per function, the median first result (import and first invocation), its ratio to
    langgraph's median, the median import, warm invocation and collector time; and per phase that
    any function went through, each function's median (None: not one of its phases)."""
    base = _median(langgraph_ms)
    scalars: dict[str, Any] = {"langgraph_import_ms": base}
    functions: dict[str, dict[str, Any]] = {}
    breakdown: dict[str, dict[str, Any]] = {}
    for name, samples in runs.items():
        total = _median([r["total_ms"] for r in samples])
        imports = _median([r["phases"]["imports"] for r in samples if "imports" in r["phases"]])
        warm = _median([r["warm_ms"][0] for r in samples if r.get("warm_ms")])
        scalars.update({f"{name}_first_result_ms": total, f"{name}_ratio": ratio(total, base),
                        f"{name}_import_ms": imports, f"{name}_warm_ms": warm})
        outcomes = sorted({r["outcomes"][0] for r in samples if r.get("outcomes")})
        functions[name] = {"first_result_ms": total, "ratio": ratio(total, base), "import_ms": imports,
                           "warm_ms": warm, "gc_ms": _median([r["gc_ms"] for r in samples if "gc_ms" in r]),
                           "processes": len(samples), "outcome": ", ".join(outcomes) or None}
    for phase in FUNCTION_PHASES:
        medians = {name: _median([r["phases"][phase] for r in samples if phase in r["phases"]])
                   for name, samples in runs.items()}
        if any(value is not None for value in medians.values()):
            breakdown[phase] = medians
    return {**scalars, "processes": max((len(s) for s in runs.values()), default=0),
            "functions": functions, "breakdown": breakdown,
            "notes": ["first result: the handler module's import and its first invocation in a fresh "
                      "process (the interpreter's own start-up aside), with the function's event",
                      "breakdown: the lazy work the first invocation does (the embedding model's session, "
                      "the first Neo4j query) is done first, so `invocation` is the rest of it",
                      "gc ms: the cyclic collector's time up to the first result (paused there: 0)"]}


def bench_cold_tools(processes: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """(the section, the samples): `processes` rounds of one fresh process per tool function and
    one `import langgraph.graph`."""
    cases = {tool: tool_case(tool) for tool in TOOL_PHASES}
    runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in cases}
    langgraph: list[float] = []
    for _ in range(processes):
        langgraph.append(import_ms(f"import {LANGGRAPH}"))
        for tool, case in cases.items():
            runs[tool].append(function_run(case))
    samples = {tool: [r["total_ms"] for r in values] for tool, values in runs.items()}
    return function_figures(runs, langgraph), {**samples, LANGGRAPH: langgraph}


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
    figures = _run_child("--snapstart-child" if snapstart else "--child", child_env)
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
elif __name__ == "__main__" and sys.argv[1:] == ["--function"]:
    _function_child()
