"""Runs the cases through the real HTTP API against the local stack.

The API is the router's own FastAPI app (`functions/router/app.py`, as `make serve` serves it),
run by `uvicorn.Server` in a background thread of this process on a free loopback port. The
runner talks to it only over HTTP (httpx), as a client would; being in the same process lets it
also count what a turn costs where no response shows it: DynamoDB writes and checkpoint bytes
(a botocore event hook on the runtime's clients, as `devstack.bench` does) and the planned tasks
of the turn (the checkpoint, read through `runtime.compiled_graph()`).

Per case (`Runner.run_case`):
    1. fault cases: `FAULTS` / `FAULT_SEED` set and the runtime rebuilt under them
       (`faults_eval.service_with`: `runtime.reset()`, fault plan cache cleared, breakers closed);
       restored afterwards;
    2. attack cases with `session_owner`: the owner opens the session first ("hi");
    3. every turn: POST /v1/sessions/{id}/messages (label PNG drawn when the turn has `image`),
       then, when the turn says `approve`, the agent's decision on the pending approval
       (POST /v1/approvals/{id} with `Bearer dev-agent:eval`);
    4. the leak check on every reply, the turn checks, the end state in Neo4j;
    5. the customers the case changed are restored from the dataset (`store.restore_changed`).

Everything a case produced is kept in a `CaseResult` (failures as data); nothing here raises on
a failed expectation, and an unexpected exception in one case is recorded as that case's failure.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from devstack.evaluation.cases import Case, ImageSpec, LoadedCase, Turn
from devstack.evaluation.checks import (
    CaseResult,
    Failure,
    LeakIndex,
    TurnResult,
    check_end_state,
    check_turn,
)
from devstack.evaluation.store import Dataset, reset_store, restore_changed

if TYPE_CHECKING:
    from neo4j import Driver

ROOT = Path(__file__).resolve().parents[3]
TAU_DATA = ROOT.parent / "shared" / "data" / "tau-retail"
ROUTER_APP = ROOT / "functions" / "router" / "app.py"
AGENT_AUTH = "Bearer dev-agent:eval"
OWNER_OPENING = "hi"
logger = logging.getLogger("devstack.evaluation")

# What the runner needs the process to be: the local stack with dev auth, the store's "today",
# and no per-customer rate limit (many cases share a customer; the limit has tests of its own).
LOCAL_ENV = {"STAGE": "local", "AUTH_MODE": "dev", "STORE_TODAY": "2024-07-01", "HF_HUB_OFFLINE": "1",
             "RATE_LIMIT_MAX_MESSAGES": "100000", "AWS_REGION": "us-east-1",
             "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
             "AWS_SECRET_ACCESS_KEY": "testing"}


# ---------------------------------------------------------------------------- the server
class ApiServer:
    """The router's app under uvicorn in a daemon thread on 127.0.0.1 (a free port)."""

    def __init__(self, port: int | None = None) -> None:
        from devstack.aws import free_port

        self.port = port or free_port()
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        import uvicorn

        app = _router_app()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="eval-api", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the HTTP API did not start on {self.url}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)


def _router_app() -> Any:
    """The FastAPI app of the router Lambda, loaded from its file (what `make serve` serves). Its
    module paused the cyclic collector until the handler's first reply (`csagent.coldstart`); the
    app is served here, never the handler, so the collector is turned back on at once."""
    from csagent import coldstart

    spec = importlib.util.spec_from_file_location("eval_router_app", ROUTER_APP)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {ROUTER_APP}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    coldstart.resume_gc()
    return module.app


# ----------------------------------------------------------------------------- metering
class DynamoMeter:
    """DynamoDB write calls and checkpoint bytes, counted by the bench's botocore hook
    (`devstack.bench.dynamodb.WriteCounter`) on the runtime's two DynamoDB clients, re-attached
    whenever the runtime is rebuilt. Counts are process-wide totals; the runner takes
    differences around each request, which runs alone."""

    def __init__(self) -> None:
        from devstack.bench.dynamodb import WriteCounter

        self.counter = WriteCounter()
        self._hooked: set[int] = set()

    def attach(self) -> None:
        from csagent import runtime

        for client in (runtime.dynamodb_client(), runtime.checkpointer().client):
            if id(client) not in self._hooked:
                client.meta.events.register("provide-client-params.dynamodb.*", self.counter)
                self._hooked.add(id(client))

    def snapshot(self) -> tuple[int, int, int]:
        """(write calls, write calls of the turn's own state - all but the rate-limit counter,
        checkpoint bytes) so far."""
        return self.counter.snapshot()


def planned_tasks(session_id: str) -> list[dict[str, Any]]:
    """The tasks of the session's latest turn as the checkpoint holds them (with their args)."""
    from devstack.faults_eval import checkpoint

    try:
        return list(checkpoint(session_id).get("tasks") or [])
    except Exception:  # noqa: BLE001 - a session the caller may not create has no checkpoint
        return []


def label_png(spec: ImageSpec) -> str:
    """A shipping label (base64 PNG) with the order id and/or tracking number (the bench's
    drawing, `devstack.bench.workload.label_png`); a blank label when the case gives neither."""
    from devstack.bench.workload import label_png as draw_label

    lines = ["SHIP TO: customer"]
    if spec.order_id:
        lines.append(f"Order {spec.order_id}")
    if spec.tracking_number:
        lines.append(f"Tracking {spec.tracking_number}")
    if not spec.order_id and not spec.tracking_number:
        lines = [""]
    return draw_label(lines)


# ------------------------------------------------------------------------------- faults
@contextmanager
def fault_plan(spec: str | None, seed: int | None, meter: DynamoMeter) -> Iterator[None]:
    """Run the block under `FAULTS=spec` (nothing when None); the runtime is rebuilt before and
    after (eagerly, so the next case's latency does not include building it), and the
    environment put back as it was."""
    if not spec:
        yield
        return
    from csagent import runtime
    from devstack.faults_eval import restored_faults, service_with

    with restored_faults():
        service_with(spec, 7 if seed is None else seed)
        meter.attach()
        yield
    runtime.conversation_service()
    meter.attach()


# ------------------------------------------------------------------------------- runner
@dataclass
class Runner:
    """Runs cases against a started `ApiServer`; one instance per evaluation run."""

    server: ApiServer
    driver: Driver
    dataset: Dataset
    leak_index: LeakIndex
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    meter: DynamoMeter = field(default_factory=DynamoMeter)
    client: httpx.Client | None = None

    def __post_init__(self) -> None:
        # No keep-alive: uvicorn closes a connection after a request whose handler raised (an
        # injected crash answers 500 and then drops it), and a pooled connection reused after
        # that would be reset; a fresh loopback connection per request costs well under 1 ms.
        self.client = self.client or httpx.Client(base_url=self.server.url, timeout=120.0,
                                                  limits=httpx.Limits(max_keepalive_connections=0))
        self.meter.attach()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    # -- one case ------------------------------------------------------------------------
    def run_case(self, loaded: LoadedCase, trial: int = 1) -> CaseResult:
        """One trial of one case on a session of its own; the store and the circuit breakers are
        put back afterwards, so cases are independent of their order."""
        from csagent.resilience.breaker import breakers

        case = loaded.case
        session = f"eval-{self.run_id}-{trial}-{case.id}"[:128]
        result = CaseResult(case.id, case.category, case.intent, trial, session)
        started = time.perf_counter()
        try:
            with fault_plan(case.faults, case.fault_seed, self.meter):
                if case.session_owner:
                    self._post(session, case.session_owner, OWNER_OPENING, None, {})
                for index, turn in enumerate(case.turns, start=1):
                    self._turn(case, turn, index, session, result)
            if case.end_state:
                result.end_state_checked = True
                end = check_end_state(self.driver, case.end_state)
                result.end_state_ok = not end
                result.failures.extend(end)
        except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
            logger.exception("case %s raised", case.id)
            result.error = f"{type(exc).__name__}: {exc}"
            result.failures.append(Failure("runner", 0, result.error))
            result.end_state_ok = not case.end_state
        finally:
            result.restored = restore_changed(self.driver, self.dataset)
            breakers().reset()  # an outage one case provoked must not meet the next
        result.elapsed_s = round(time.perf_counter() - started, 3)
        return result

    def _turn(self, case: Case, turn: Turn, index: int, session: str, result: CaseResult) -> None:
        customer = case.auth.split(":", 1)[1] if case.auth and case.auth.startswith("dev:") else case.customer
        before = self.meter.snapshot()
        t0 = time.perf_counter()
        try:
            response = self._post(session, case.customer, turn.text, turn, case.headers or {}, auth=case.auth)
            status, body = response.status_code, _json(response)
        except httpx.TransportError as exc:  # the server dropped the connection: a finding, not a crash
            dropped = f"{type(exc).__name__}: {exc}"
            status, body = 0, {"error": {"code": "connection_error", "message": dropped}}
        latency = (time.perf_counter() - t0) * 1000
        done = TurnResult(index=index, text=turn.text, http_status=status, body=body,
                          latency_ms=round(latency, 1), principal=customer)
        if status == 200:
            done.planned = planned_tasks(session)
        if turn.decision:
            done.approval = self._decide(body, turn.decision)
            if done.approval.get("http_status") != 200 or not done.approval.get("resumed"):
                result.failures.append(Failure("approval", index, f"the agent's {turn.decision} did not "
                                                                  f"resume the turn: {done.approval}"))
        after = self.meter.snapshot()
        done.dynamodb_writes, done.turn_state_writes, done.checkpoint_bytes = (
            a - b for a, b in zip(after, before, strict=True))
        result.turns.append(done)
        result.failures.extend(check_turn(turn.expect, done))
        texts = [done.reply]
        if done.approval and isinstance(done.approval.get("turn"), dict):
            texts.append(str((done.approval["turn"].get("reply") or {}).get("text") or ""))
        supplied = "\n".join(_supplied(t) for t in case.turns[:index])
        for text in texts:
            result.leaks.extend(self.leak_index.leaks(text, customer, index, supplied))

    def _post(self, session: str, customer: str, text: str, turn: Turn | None, headers: dict[str, str],
              auth: str | None = None) -> httpx.Response:
        assert self.client is not None
        payload: dict[str, Any] = {"text": text}
        if turn is not None and turn.order_id is not None:
            payload["order_id"] = turn.order_id
        if turn is not None and turn.image is not None:
            picture = {"type": "image", "media_type": "image/png", "data": label_png(turn.image)}
            payload["attachments"] = [picture]
        sent = {"Authorization": f"Bearer {auth or 'dev:' + customer}", **headers}
        return self.client.post(f"/v1/sessions/{session}/messages", json=payload, headers=sent)

    def _decide(self, body: dict[str, Any], decision: str) -> dict[str, Any]:
        assert self.client is not None
        return decide_approval(self.client, body, decision)

    # -- many cases ----------------------------------------------------------------------
    def run(self, cases: Sequence[LoadedCase], trials: int = 1,
            progress: Callable[[CaseResult], None] | None = None) -> list[CaseResult]:
        results = []
        for trial in range(1, trials + 1):
            for loaded in cases:
                outcome = self.run_case(loaded, trial)
                results.append(outcome)
                if progress is not None:
                    progress(outcome)
        return results


def _supplied(turn: Turn) -> str:
    """What the customer gave in a turn: the text, the order id field, the picture's contents."""
    image = turn.image
    parts = [turn.text, turn.order_id or "", image.order_id or "" if image else "",
             image.tracking_number or "" if image else ""]
    return " ".join(p for p in parts if p)


def decide_approval(client: Any, body: Mapping[str, Any], decision: str) -> dict[str, Any]:
    """The store's agent decides the approval a turn paused on (POST /v1/approvals/{id} with
    `Bearer dev-agent:eval`): the HTTP status, whether the paused turn resumed, the approval's
    status and the resumed turn (the body the customer then sees)."""
    approval_id = (body.get("trace") or {}).get("approval_id")
    if not approval_id:
        return {"http_status": 0, "error": "no pending approval after this turn"}
    response = client.post(f"/v1/approvals/{approval_id}", json={"decision": decision},
                           headers={"Authorization": AGENT_AUTH})
    out = _json(response)
    return {"http_status": response.status_code, "resumed": bool(out.get("resumed")),
            "status": (out.get("approval") or {}).get("status"), "turn": out.get("turn")}


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"error": {"code": "not_json", "message": response.text[:500]}}
    return body if isinstance(body, dict) else {"value": body}


# ------------------------------------------------------------------------ whole-run setup
@dataclass
class Session:
    """Everything a run needs, started in order and stopped in reverse (`evaluation_session`)."""

    runner: Runner
    reset_s: float


def prepare_environment(model: str | None = None) -> None:
    """The process environment the runtime reads (`setdefault`: what the caller set wins),
    then a fresh runtime. `model` sets CHAT_MODEL (and so Text2Cypher's model too)."""
    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)
    if model:
        os.environ["CHAT_MODEL"] = model
    from csagent import runtime

    runtime.reset()


@contextmanager
def evaluation_session(driver: Driver, data_dir: Path = TAU_DATA, *, model: str | None = None,
                       reset: bool = True) -> Iterator[Session]:
    """Reset the store (unless `reset=False`), start the API, yield a ready `Runner`; stop the
    API and restore any customer still changed on the way out."""
    prepare_environment(model)
    reset_s = reset_store(driver, data_dir) if reset else 0.0
    dataset = Dataset(data_dir)
    restore_changed(driver, dataset)
    server = ApiServer()
    server.start()
    runner = Runner(server, driver, dataset, LeakIndex.from_store(driver))
    try:
        yield Session(runner, round(reset_s, 2))
    finally:
        runner.close()
        server.stop()
        restore_changed(driver, dataset)


@contextmanager
def api_session(data_dir: Path = TAU_DATA) -> Iterator[tuple[Driver, Dataset, httpx.Client]]:
    """For harnesses that play conversations themselves (`devstack.tau`,
    `devstack.understanding_eval`): the store reset to the dataset, the router's app on a free
    loopback port, an HTTP client on it; on the way out the server stops and every changed
    customer is restored."""
    from neo4j import GraphDatabase

    from csagent.config import get_settings

    prepare_environment()
    driver = GraphDatabase.driver(get_settings().neo4j_uri, auth=None, notifications_min_severity="OFF")
    try:
        reset_store(driver, data_dir)
        dataset = Dataset(data_dir)
        server = ApiServer()
        server.start()
        try:
            with httpx.Client(base_url=server.url, timeout=60.0) as client:
                yield driver, dataset, client
        finally:
            server.stop()
            restore_changed(driver, dataset)
    finally:
        driver.close()


# ------------------------------------------------------------------------------ the run
THRESHOLDS = ROOT / "infra" / "eval" / "thresholds.yaml"
REPORTS = ROOT / "reports"
DETERMINISM = ("The local model tier is deterministic (embeddings, nearest examples, templates): "
               "repeated trials give identical replies, so pass^k = pass^1 unless --model names a "
               "generative model. Fault cases with a fault probability below 1.0 may draw differently "
               "when a wave's tasks run concurrently.")


@dataclass(frozen=True)
class Options:
    """One evaluation run (the CLI's flags)."""

    paths: tuple[Path, ...] = (ROOT / "infra" / "eval" / "cases",)
    slice_only: bool = False
    categories: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    trials: int = 1
    model: str | None = None
    thresholds: Path = THRESHOLDS
    out_dir: Path | None = REPORTS
    data_dir: Path = TAU_DATA
    reset: bool = True
    knowledge: bool = True
    command: str = "python -m devstack.evaluation"


@dataclass
class Outcome:
    """What a run produced: the report (eval.json without the cases), every case trial, and
    the threshold verdicts (the run fails when any fails)."""

    report: dict[str, Any]
    results: list[CaseResult]
    verdicts: list[Any]

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)


def evaluate(driver: Driver, options: Options,
             progress: Callable[[CaseResult], None] | None = None) -> Outcome:
    """Load and select the cases, reset the store, run every case `trials` times through the
    HTTP API, compute the figures, judge the thresholds, write the reports (unless `out_dir`
    is None)."""
    from devstack.evaluation import metrics, report
    from devstack.evaluation.cases import load_cases, load_yaml_mapping, select

    cases = select(load_cases(options.paths), slice_only=options.slice_only,
                   categories=options.categories, ids=options.ids)
    if not cases:
        raise ValueError("no case matches the selection")
    started = time.perf_counter()
    with evaluation_session(driver, options.data_dir, model=options.model, reset=options.reset) as session:
        results = session.runner.run(cases, options.trials, progress)
        figures = metrics.compute(results, cases)
        figures["knowledge"] = metrics.knowledge_recall() if options.knowledge else None
        restore_ms = session.runner.dataset.restored
    verdicts = metrics.judge(figures, load_yaml_mapping(options.thresholds))
    selection = "slice" if options.slice_only else "full suite"
    if options.categories or options.ids:
        selection += " (filtered)"
    median_restore = round(sorted(restore_ms)[len(restore_ms) // 2], 1) if restore_ms else None
    body = {
        "selection": selection, "command": options.command,
        "model": options.model or os.environ.get("CHAT_MODEL", "local"), "trials": options.trials,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "store": {"full_reset_s": session.reset_s, "restores": len(restore_ms),
                  "restore_ms_median": median_restore},
        "thresholds": report.verdict_records(verdicts), "passed": all(v.passed for v in verdicts),
        "figures": figures, "determinism": DETERMINISM,
    }
    if options.out_dir is not None:
        report.write(body, results, options.out_dir)
    return Outcome(body, results, verdicts)
