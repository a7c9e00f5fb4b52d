"""A streamed turn through a real uvicorn server (the stream function's app, as run.sh starts it)
on the local stack: Neo4j with tau-retail, DynamoDB checkpoints and sessions on moto. The client
is httpx reading the event stream as it arrives."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
CUSTOMER = "james_li_5688"  # owns #W4435622: delivered, tracking 967193221991
HEADERS = {"Authorization": f"Bearer dev:{CUSTOMER}"}
QUESTION = {"text": "where is my order #W4435622?"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tau_store: Any, moto_endpoint: str) -> Iterator[str]:
    """uvicorn serving functions/stream/app.py (dev auth, the local stack), stopped after the module."""
    port = _free_port()
    env = dict(os.environ, AUTH_MODE="dev", STAGE="local", POWERTOOLS_TRACE_DISABLED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--app-dir", str(ROOT / "functions" / "stream"),
         "--host", "127.0.0.1", "--port", str(port), "--no-access-log", "app:app"],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"uvicorn stopped: {process.stderr.read()[-2000:] if process.stderr else ''}")
            try:
                httpx.get(f"{base}/healthz", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            pytest.fail("uvicorn did not answer within 60 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def read_stream(base: str, session_id: str) -> tuple[list[tuple[float, str, Any]], float]:
    """(seconds since the request, event, data) per event as it arrived; and the total time."""
    started = time.perf_counter()
    events: list[tuple[float, str, Any]] = []
    with httpx.stream("POST", f"{base}/v1/sessions/{session_id}/messages:stream", json=QUESTION,
                      headers=HEADERS, timeout=60) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event is not None:
                events.append((time.perf_counter() - started, event, json.loads(line.removeprefix("data: "))))
                event = None
    return events, time.perf_counter() - started


@pytest.fixture
def session_id() -> str:
    return f"stream-{uuid.uuid4().hex[:12]}"


def test_progress_arrives_while_the_graph_works_and_the_answer_after_it(server: str, session_id: str) -> None:
    # Given the stream app under uvicorn on the local stack
    # When james_li_5688 streams a question about his order
    events, total_s = read_stream(server, session_id)
    kinds = [kind for _, kind, _ in events]
    arrival = {kind: min(t for t, k, _ in events if k == kind) for kind in set(kinds)}
    # Then progress events arrived first, each node as it finished, and the answer only after them
    assert kinds[0] == "progress" and kinds[-1] == "done"
    assert kinds.index("answer") > max(i for i, kind in enumerate(kinds) if kind == "progress")
    assert {"route", "plan", "summarise", "respond"} <= {data["node"] for _, kind, data in events
                                                          if kind == "progress"}
    # And the first progress reached the client before the turn was over, not with its answer
    assert arrival["progress"] < arrival["answer"] <= arrival["done"] <= total_s
    answer = "".join(data["text"] for _, kind, data in events if kind == "answer")
    assert "#W4435622" in answer and "967193221991" in answer
    print(f"\nfirst event {arrival['progress'] * 1000:.0f} ms, answer {arrival['answer'] * 1000:.0f} ms, "
          f"total {total_s * 1000:.0f} ms, {kinds.count('progress')} progress events")


def test_the_done_event_is_what_the_session_then_shows(server: str, session_id: str) -> None:
    # Given a streamed turn
    events, _ = read_stream(server, session_id)
    done = events[-1][2]
    # When the customer then reads the session
    session = httpx.get(f"{server}/v1/sessions/{session_id}", headers=HEADERS, timeout=30).json()
    # Then it holds exactly that turn: its status, one turn, his message and the streamed reply
    assert done["status"] == session["status"] == "answered"
    assert session["turn_count"] == done["turn"] == 1
    assert [(m["role"], m["text"]) for m in session["messages"]] == [
        ("customer", QUESTION["text"]), ("assistant", done["reply"]["text"])]


def test_a_second_message_after_a_streamed_turn_is_not_refused_as_busy(server: str, session_id: str) -> None:
    # Given a streamed turn that has ended
    read_stream(server, session_id)
    # When the customer sends the next message on the same session (not streamed)
    response = httpx.post(f"{server}/v1/sessions/{session_id}/messages", json={"text": "thanks!"},
                          headers=HEADERS, timeout=60)
    # Then the lease was free: it is answered as turn 2
    assert response.status_code == 200, response.text
    assert response.json()["turn"] == 2
