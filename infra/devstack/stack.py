"""`make up` / `make down` / `make status`: the local stack, started and stopped by pid.

    python -m devstack.stack up      # build Neo4j if needed, start Neo4j + moto, provision, wait
    python -m devstack.stack down    # stop only what `up` started (pids in .local/pids/)
    python -m devstack.stack status

Ports: NEO4J_BOLT_PORT (7687) and MOTO_PORT (4566). Every file a service leaves under .local
(pid, log, Neo4j store) is named by its port, so two stacks on other ports never read each
other's pids or wipe each other's store, even from one directory. `up` is idempotent: a service
whose recorded pid is alive and answering is left as it is.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from devstack import neo4j

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".local"
PIDS = LOCAL / "pids"
TEMPLATE = ROOT / "template.yaml"
STACK_NAME = "csagent-local"


def _ports() -> tuple[int, int]:
    return int(os.environ.get("NEO4J_BOLT_PORT", "7687")), int(os.environ.get("MOTO_PORT", "4566"))


def _names() -> dict[str, str]:
    """The service's file stem under .local: `neo4j-7687`, `moto-4566` (keyed by port)."""
    bolt_port, moto_port = _ports()
    return {"neo4j": f"neo4j-{bolt_port}", "moto": f"moto-{moto_port}"}


def _pid_alive(name: str) -> int | None:
    path = PIDS / f"{_names()[name]}.pid"
    if not path.exists():
        return None
    pid = int(path.read_text().strip() or 0)
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        path.unlink(missing_ok=True)
        return None
    return pid


def _record(name: str, pid: int) -> None:
    PIDS.mkdir(parents=True, exist_ok=True)
    (PIDS / f"{_names()[name]}.pid").write_text(str(pid))


def up() -> dict[str, float]:
    """Start whatever is not running yet and wait until everything answers."""
    from devstack import aws

    bolt_port, moto_port = _ports()
    timings: dict[str, float] = {}
    LOCAL.mkdir(exist_ok=True)
    if not neo4j.is_built():
        timings["neo4j_build_s"] = neo4j.build()
    uri = f"bolt://127.0.0.1:{bolt_port}"
    if _pid_alive("neo4j") is None:
        started = time.perf_counter()
        proc = neo4j.start(bolt_port, LOCAL / _names()["neo4j"], LOCAL / f"{_names()['neo4j']}.log")
        _record("neo4j", proc.pid)
        neo4j.wait_ready(uri, proc=proc)
        timings["neo4j_start_s"] = time.perf_counter() - started
    else:
        neo4j.wait_ready(uri)
    endpoint = f"http://127.0.0.1:{moto_port}"
    if _pid_alive("moto") is None:
        started = time.perf_counter()
        proc = aws.start_moto(moto_port, LOCAL / f"{_names()['moto']}.log")
        _record("moto", proc.pid)
        aws.wait_moto(moto_port, 60.0)
        timings["moto_start_s"] = time.perf_counter() - started
    aws.enable_stepfunctions_execution(endpoint)
    aws.provision(endpoint, TEMPLATE, STACK_NAME)
    return timings


def down() -> list[str]:
    """Stop the processes `up` started (their whole process groups), and nothing else."""
    stopped = []
    for name in ("moto", "neo4j"):
        pid = _pid_alive(name)
        if pid is None:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        for _ in range(60):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.25)
        else:
            os.killpg(pid, signal.SIGKILL)
        (PIDS / f"{_names()[name]}.pid").unlink(missing_ok=True)
        stopped.append(name)
    return stopped


def status() -> dict[str, int | None]:
    return {name: _pid_alive(name) for name in ("neo4j", "moto")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devstack.stack", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "down", "status"])
    args = parser.parse_args(argv)
    if args.command == "up":
        try:
            timings = up()
        except (RuntimeError, TimeoutError) as exc:
            print(f"stack up failed: {exc} (logs in {LOCAL})", file=sys.stderr)
            return 1
        bolt_port, moto_port = _ports()
        print(f"local stack ready: neo4j bolt://127.0.0.1:{bolt_port}, moto http://127.0.0.1:{moto_port}"
              + (f" {json.dumps({k: round(v, 1) for k, v in timings.items()})}" if timings else ""))
    elif args.command == "down":
        stopped = down()
        print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    else:
        print(json.dumps(status()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
