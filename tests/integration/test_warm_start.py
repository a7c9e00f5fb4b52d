"""A container resumed from the SnapStart snapshot answers without importing anything of ours.

`csagent.warmup.warm_router` (the before-snapshot hook) must leave nothing for the first customer
to load: a fresh process warms as the hook does, runs the after-restore hook, then answers turns of
different kinds through the router handler with the `events/` message event; every module of the
project, of the ASGI thread pool and of LangChain that the turns needed was already imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: Turns of different kinds for james_li_5688 (the event's customer): an order's status, a return
#: and a warranty question, a cancellation (proposed, not made), Chinese, a complaint and a person.
MESSAGES = (
    "where is my order #W4435622?",
    "I want to return the headphones from my last order and whats the warranty on them",
    "cancel order #W4435622 please, I ordered it by mistake",
    "我的订单到哪了",
    "my kettle arrived broken and I was charged twice, I want to talk to a person",
)

_CHILD = """
import importlib.util, json, os, sys
from devstack.bench import cold
from csagent import warmup

spec = importlib.util.spec_from_file_location("app", cold.ROUTER_APP)
app = importlib.util.module_from_spec(spec)
spec.loader.exec_module(app)
warmup.warm_router()
warmup.after_restore()
before = set(sys.modules)
codes = []
for i, text in enumerate(json.loads(sys.argv[1])):
    event = cold.event_for(f"warm-start-{os.getpid()}-{i}")
    event["body"] = json.dumps({"text": text})
    codes.append(app.handler(event, cold._Context())["statusCode"])
print("WARM-START " + json.dumps({"codes": codes, "new": sorted(set(sys.modules) - before)}))
"""


def _restored_turns(messages: tuple[str, ...]) -> dict[str, Any]:
    env = {**os.environ, "AUTH_MODE": "jwt"}
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(messages)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("WARM-START ")]
    assert done.returncode == 0 and lines, done.stderr[-2000:]
    figures: dict[str, Any] = json.loads(lines[-1][len("WARM-START "):])
    return figures


def test_a_restored_router_imports_nothing_of_ours_for_its_turns(tau_store: Any, moto_endpoint: str) -> None:
    # Given a router process warmed as the before-snapshot hook warms it, then restored
    # When it answers turns of five kinds
    figures = _restored_turns(MESSAGES)
    # Then each was answered, and none imported a module of the project, of the ASGI thread pool
    # or of LangChain's tracing on the way (each would be paid by a customer after every restore)
    assert figures["codes"] == [200] * len(MESSAGES)
    ours = {"csagent", "anyio", "langchain_core", "langgraph"}
    late = [m for m in figures["new"] if m.split(".")[0] in ours]
    assert late == [], late
