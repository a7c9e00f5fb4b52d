"""`make demo`: a customer conversation through the real HTTP API on the built-in store.

Starts the router app with the web pages (`devstack.web`, uvicorn) on 127.0.0.1:PORT against
the local stack, talks to it as the demo customer with dev auth, prints each exchange with its
route, tasks and timings, then prints the chat's and the console's URLs. In a terminal it keeps
serving them until Ctrl-C (`--serve`/`--no-serve` choose); otherwise it stops the server.
Model tier: the local tier (no generative model).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]


def _wait(base: str, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the API server exited; see .local/serve.log")
        try:
            if httpx.get(f"{base}/healthz", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"the API at {base} did not become healthy in {timeout_s:.0f}s")


def _show(who: str, text: str, out: dict[str, Any] | None = None) -> None:
    print(f"\n{who}: {text}")
    if out is None:
        return
    trace = out.get("trace", {})
    tasks = ", ".join(f"{t['task_type']}={t['status']} ({t['latency_ms']:.0f} ms)"
                      for t in out.get("tasks", []))
    print(f"   [turn {out.get('turn')} · status {out.get('status')} · route {trace.get('route')} "
          f"({trace.get('confidence')}) · tasks: {tasks or 'none'} · {trace.get('turn_ms', 0):.0f} ms]")


def run(port: int, customer_id: str, messages: list[str], serve: bool = False) -> int:
    base = f"http://127.0.0.1:{port}"
    log = (ROOT / ".local" / "serve.log").open("wb")
    env = dict(os.environ, AUTH_MODE="dev", STAGE="local")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "devstack.web:app",
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        _wait(base, proc)
        session = f"demo-{uuid.uuid4().hex[:8]}"
        headers = {"Authorization": f"Bearer dev:{customer_id}"}
        print(f"Demo on the built-in store · customer {customer_id} · session {session} · model tier: local")
        with httpx.Client(base_url=base, headers=headers, timeout=60.0) as client:
            for text in messages:
                response = client.post(f"/v1/sessions/{session}/messages", json={"text": text})
                if response.status_code != 200:
                    print(f"   HTTP {response.status_code}: {response.text}")
                    return 1
                out = response.json()
                _show("customer", text)
                _show("assistant", out["reply"]["text"], out)
            history = client.get(f"/v1/sessions/{session}").json()
            print(f"\nsession {session}: status {history['status']}, {history['turn_count']} turns, "
                  f"{len(history['messages'])} public messages (checkpointed in DynamoDB)")
        print(f"\nIn a browser: the customer chat at {base}/ (sign in as {customer_id} or any seeded "
              f"customer)\nand the agent console at {base}/console.html (any agent name).")
        if serve:
            print("Serving until Ctrl-C.", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                proc.wait()
        return 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    from devstack.seed.demo_store import DEMO_CUSTOMER_ID, DEMO_ORDER_ID, DEMO_PENDING_ORDER_ID

    parser = argparse.ArgumentParser(prog="devstack.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--serve", action=argparse.BooleanOptionalAction, default=sys.stdin.isatty(),
                        help="keep serving the pages after the conversation (default: in a terminal)")
    args = parser.parse_args(argv)
    messages = [
        "Hi there!",
        f"Where is my order {DEMO_ORDER_ID}?",
        f"Check order {DEMO_ORDER_ID}, what is the warranty on those headphones, "
        "and what is your return policy?",
        f"Please cancel order {DEMO_PENDING_ORDER_ID}",
        "I ordered it by mistake",
        "yes",
        "我的订单 " + DEMO_ORDER_ID + " 在哪里？",
        "thanks!",
    ]
    return run(args.port, DEMO_CUSTOMER_ID, messages, serve=args.serve)


if __name__ == "__main__":
    raise SystemExit(main())
