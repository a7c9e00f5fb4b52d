"""Concurrent sessions against a real HTTP server, as `make serve` runs it.

    with serve(port) as base_url:            # uvicorn subprocess, this process's environment
        figures, samples, timeline = bench_concurrency(base_url, ...)

The server is `uvicorn --app-dir functions/router app:app` in its own process (the same
command and environment as `make serve`, dev auth, the rate limit lifted: one customer per
session sends far fewer than its limit, but the bench's warm-up and phases come close in
aggregate). Two phases: sequential (one request at a time: the baseline) and concurrent
(`sessions` customers at once, each sending its `turns` messages in order). Every response
body is checked for other customers' identifiers (`workload.leaked_identifiers`); errors are
non-200 answers and failed requests.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devstack.bench.stats import percentile, ratio, summarise
from devstack.bench.workload import leaked_identifiers

ROOT = Path(__file__).resolve().parents[3]
SERVER_ENV = {"AUTH_MODE": "dev", "RATE_LIMIT_MAX_MESSAGES": "1000000"}


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(port: int) -> list[str]:
    """`make serve`'s command (`uvicorn devstack.web:app ...`: the router's app with the web
    pages) for `port`."""
    return [sys.executable, "-m", "uvicorn", "devstack.web:app", "--host", "127.0.0.1", "--port", str(port)]


def wait_healthy(base_url: str, proc: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    """Until GET /healthz answers 200; RuntimeError if the server exits, TimeoutError after `timeout_s`."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before answering")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=5.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{base_url}/healthz did not answer 200 within {timeout_s:.0f} s")


@contextmanager
def serve(port: int, log_path: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Run the HTTP API in a subprocess on `port` (0: a free one) until the block ends; yields
    its base URL. The server runs in its own process group and only it is stopped."""
    port = port or free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(server_command(port), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env={**os.environ, **SERVER_ENV, **(env or {})},
                                start_new_session=True)
        try:
            base_url = f"http://127.0.0.1:{port}"
            wait_healthy(base_url, proc)
            yield base_url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass
class Exchange:
    """One request and what came back."""

    customer_id: str
    text: str
    status_code: int | None
    ms: float
    finished_s: float
    leaks: list[str] = field(default_factory=list)
    error: str | None = None


def send(client: Any, base_url: str, customer_id: str, session_id: str, text: str, started: float,
         owners: Mapping[str, str], others: Sequence[str]) -> Exchange:
    """POST one message as `customer_id`; the response body checked for other customers' data."""
    t0 = time.perf_counter()
    try:
        response = client.post(f"{base_url}/v1/sessions/{session_id}/messages", json={"text": text},
                               headers={"Authorization": f"Bearer dev:{customer_id}"})
    except Exception as exc:  # noqa: BLE001 - a failed request is an error figure, not a crash
        now = time.perf_counter()
        return Exchange(customer_id, text, None, (now - t0) * 1000, now - started, error=type(exc).__name__)
    now = time.perf_counter()
    body = response.text
    error = None if response.status_code == 200 else body[:200]
    return Exchange(customer_id, text, response.status_code, (now - t0) * 1000, now - started,
                    leaked_identifiers(body, customer_id, owners, others), error)


def run_sessions(base_url: str, sessions: Sequence[tuple[str, Sequence[str]]], owners: Mapping[str, str],
                 *, concurrent: bool) -> tuple[list[Exchange], float]:
    """Every session's messages in order; sessions all at once (`concurrent`) or one after
    another. (exchanges, wall seconds)."""
    import httpx

    customers = [c for c, _ in sessions]
    exchanges: list[Exchange] = []
    lock = threading.Lock()
    limits = httpx.Limits(max_connections=len(sessions) + 5, max_keepalive_connections=len(sessions) + 5)
    with httpx.Client(timeout=180.0, limits=limits) as client:
        gate = threading.Barrier(len(sessions) + 1) if concurrent else None
        started = time.perf_counter()

        def one_session(customer_id: str, texts: Sequence[str]) -> None:
            if gate is not None:
                gate.wait()
            session_id = f"bench-http-{uuid.uuid4().hex[:10]}"
            for text in texts:
                exchange = send(client, base_url, customer_id, session_id, text, started, owners, customers)
                with lock:
                    exchanges.append(exchange)

        if concurrent:
            threads = [threading.Thread(target=one_session, args=s, daemon=True) for s in sessions]
            for thread in threads:
                thread.start()
            gate.wait()  # type: ignore[union-attr]
            started = time.perf_counter()
            for thread in threads:
                thread.join()
        else:
            for customer_id, texts in sessions:
                one_session(customer_id, texts)
        wall = time.perf_counter() - started
    return exchanges, wall


def phase_figures(exchanges: Sequence[Exchange], wall_s: float) -> dict[str, Any]:
    """Latency summary, throughput, errors and leaks of one phase."""
    ok = [e.ms for e in exchanges if e.error is None]
    return {**summarise(ok), "turns_per_s": ratio(len(exchanges), wall_s), "wall_s": round(wall_s, 2),
            "errors": sum(e.error is not None for e in exchanges),
            "leaks": sum(bool(e.leaks) for e in exchanges)}


def concurrency_figures(sequential: Mapping[str, Any], concurrent: Mapping[str, Any], sessions: int,
                        turns: int, problems: Sequence[Exchange]) -> dict[str, Any]:
    """The `concurrency` section from the two phases' figures."""
    return {
        "sessions": sessions,
        "turns_per_session": turns,
        "turns": concurrent.get("n", 0) + concurrent.get("errors", 0),
        "throughput_turns_per_s": concurrent.get("turns_per_s"),
        "p50_ms": concurrent.get("p50_ms"),
        "p95_ms": concurrent.get("p95_ms"),
        "errors": concurrent.get("errors", 0) + sequential.get("errors", 0),
        "cross_session_leaks": concurrent.get("leaks", 0) + sequential.get("leaks", 0),
        "sequential_p50_ms": sequential.get("p50_ms"),
        "sequential_throughput_turns_per_s": sequential.get("turns_per_s"),
        "throughput_over_sequential": ratio(concurrent.get("turns_per_s"), sequential.get("turns_per_s")),
        "p50_over_sequential": ratio(concurrent.get("p50_ms"), sequential.get("p50_ms")),
        # Little's law: with every session always waiting on one request, a request spends
        # sessions / throughput in the server on average - queueing, when above the sequential p50.
        "queueing_estimate_ms": round(1000 * sessions / concurrent["turns_per_s"], 1)
        if concurrent.get("turns_per_s") else None,
        "leaked_identifiers": dict(Counter(leak for e in problems for leak in e.leaks).most_common()),
        "phases": {"sequential": dict(sequential), "concurrent": dict(concurrent)},
        "problems": [{"customer": e.customer_id, "text": e.text, "status": e.status_code, "error": e.error,
                      "leaks": e.leaks} for e in problems[:10]],
        "notes": ["one uvicorn worker process (as `make serve`); FastAPI runs the sync handlers "
                  "in its thread pool, so concurrency here is threads sharing one interpreter"],
    }


def bench_concurrency(base_url: str, warm: Sequence[tuple[str, Sequence[str]]],
                      baseline: Sequence[tuple[str, Sequence[str]]],
                      sessions: Sequence[tuple[str, Sequence[str]]], owners: Mapping[str, str]
                      ) -> tuple[dict[str, Any], dict[str, list[float]], list[tuple[float, float]]]:
    """(the section, latency samples per phase, the concurrent phase's (finished s, ms) timeline)."""
    run_sessions(base_url, warm, owners, concurrent=False)
    seq, seq_wall = run_sessions(base_url, baseline, owners, concurrent=False)
    conc, conc_wall = run_sessions(base_url, sessions, owners, concurrent=True)
    problems = [e for e in (*seq, *conc) if e.error is not None or e.leaks]  # every one: counted below
    section = concurrency_figures(phase_figures(seq, seq_wall), phase_figures(conc, conc_wall),
                                  len(sessions), len(sessions[0][1]) if sessions else 0, problems)
    samples = {"sequential": [e.ms for e in seq if e.error is None],
               "concurrent": [e.ms for e in conc if e.error is None]}
    timeline = sorted((round(e.finished_s, 3), round(e.ms, 1)) for e in conc if e.error is None)
    if samples["concurrent"]:
        section["p99_ms"] = percentile(samples["concurrent"], 99)
    return section, samples, timeline
