"""Build, start, wait for and stop the local Neo4j (the real engine, from Maven Central).

`infra/neo4j` is a tiny Maven project: neo4j-harness 5.26.18 + APOC core, and one class,
`store.neo4j.LocalNeo4j`, that starts an in-process Neo4j with Bolt on 127.0.0.1. Why 5.26:
it is the long-term-support line, runs on the machine's default Java 17 (2025.x needs Java 21+),
and has everything the project uses (vector and fulltext indexes, EXPLAIN, READ transactions).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "infra" / "neo4j"
TARGET = PROJECT / "target"
PLUGINS = TARGET / "plugins"


def is_built() -> bool:
    return (TARGET / "classes" / "store" / "neo4j" / "LocalNeo4j.class").exists() and any(
        PLUGINS.glob("apoc-core-*.jar")
    )


def build(*, quiet: bool = True) -> float:
    """Resolve the artefacts and compile the launcher (first run downloads ~250 jars). Returns seconds."""
    started = time.perf_counter()
    cmd = ["mvn", "-B", "package", "-DskipTests"] + (["-q"] if quiet else [])
    subprocess.run(cmd, cwd=PROJECT, check=True)
    PLUGINS.mkdir(parents=True, exist_ok=True)
    for jar in (TARGET / "lib").glob("apoc-*.jar"):
        shutil.copy2(jar, PLUGINS / jar.name)
    return time.perf_counter() - started


def start(port: int, work_dir: Path, log_path: Path, heap: str = "1g") -> subprocess.Popen[bytes]:
    """Start the launcher in its own process group; the caller records the pid."""
    if work_dir.exists():
        shutil.rmtree(work_dir)  # the local store is disposable: `make seed` rebuilds it
    work_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, NEO4J_BOLT_PORT=str(port), NEO4J_WORK_DIR=str(work_dir),
               NEO4J_PLUGIN_DIR=str(PLUGINS))
    classpath = f"{TARGET / 'classes'}:{TARGET / 'lib'}/*"
    java = os.environ.get("JAVA_HOME") and str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") or "java"
    log = log_path.open("wb")
    return subprocess.Popen(
        [java, f"-Xmx{heap}", "-XX:+UseSerialGC", "-cp", classpath, "store.neo4j.LocalNeo4j"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True,
    )


def wait_ready(uri: str, timeout_s: float = 120.0, proc: subprocess.Popen[bytes] | None = None) -> float:
    """Block until a Bolt `RETURN 1` succeeds. Returns the seconds waited."""
    from neo4j import GraphDatabase
    from neo4j.exceptions import Neo4jError, ServiceUnavailable

    started = time.perf_counter()
    deadline = started + timeout_s
    while time.perf_counter() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"neo4j exited with code {proc.returncode}; see its log")
        try:
            with GraphDatabase.driver(uri, auth=None, connection_timeout=2.0) as driver, \
                    driver.session() as session:  # a plain session: no driver-side retry noise
                if session.run("RETURN 1 AS ok").single(strict=True)["ok"] == 1:
                    return time.perf_counter() - started
        except (ServiceUnavailable, Neo4jError, OSError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"neo4j at {uri} did not answer RETURN 1 within {timeout_s:.0f}s")
