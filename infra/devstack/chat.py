"""`make chat`: talk to the assistant in a terminal, on the local stack, with any model.

    python -m devstack.chat [--model openai/<m>@http://127.0.0.1:PORT/v1] [--customer <id>]

Each line you type is one turn through the router's HTTP app (the FastAPI app of
`functions/router/app.py`, in this process; dev auth as the customer), so it runs exactly what
the API runs: guards, routing, planning, tools on the seeded store, the summary, the output guard.
After each reply it prints the turn's status, route, tasks, and the model calls with every rung
taken ("router openai/x@url: answered"). No `--model` (or an empty one): the local tier.

`/new` starts a new session, `/quit` (or Ctrl-D) ends. Lines piped on stdin are echoed, so a
session can be scripted: `printf 'hi\\nwhere is #W2611340?\\n' | python -m devstack.chat`.

For llama.cpp's server (`make llm-up`) structured output goes as `{"type": "json_object",
"schema": ...}` (MODEL_JSON_MODE=json_object), which this sets when the model is the one
`devstack.llm` serves; `--json-mode` or MODEL_JSON_MODE decide otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[2]
ROUTER_APP = ROOT / "functions" / "router" / "app.py"
QUIT = {"/quit", "/exit", "/q"}


def configure_environment(model: str, json_mode: str | None) -> dict[str, str]:
    """The settings a chat session runs with (before anything reads them); returns what was set."""
    from devstack.llm import MODEL_ALIAS

    chosen = model.strip() or "local"
    settings = {"CHAT_MODEL": chosen, "AUTH_MODE": "dev", "STAGE": os.environ.get("STAGE", "local")}
    mode = json_mode or os.environ.get("MODEL_JSON_MODE")
    if mode is None and chosen.startswith(f"openai/{MODEL_ALIAS}@"):
        mode = "json_object"  # llama-cpp-python's server refuses the json_schema form
    if mode:
        settings["MODEL_JSON_MODE"] = mode
    # The REPL is for reading replies: JSON log lines stay below the prompt's noise floor.
    settings["POWERTOOLS_LOG_LEVEL"] = os.environ.get("POWERTOOLS_LOG_LEVEL", "ERROR")
    os.environ.update(settings)
    return settings


def load_router_app() -> Any:
    """The router Lambda's FastAPI app, loaded from its file (it is not a package). Its module
    paused the cyclic collector until the handler's first reply (`csagent.coldstart`); the app is
    called here, never the handler, so the collector is turned back on at once."""
    from csagent import coldstart

    spec = importlib.util.spec_from_file_location("router_app_chat", ROUTER_APP)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {ROUTER_APP}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    coldstart.resume_gc()
    return module.app


def customer_exists(customer_id: str) -> bool:
    """Whether the seeded store knows the customer (the dev token would be accepted anyway).
    Raises RuntimeError when Neo4j does not answer."""
    from neo4j.exceptions import ServiceUnavailable

    from csagent import runtime

    try:
        rows = runtime.graph_store().read("MATCH (c:Customer {customer_id: $id}) RETURN count(c) AS n",
                                          {"id": customer_id})
    except ServiceUnavailable as exc:
        raise RuntimeError(f"Neo4j does not answer at {os.environ.get('NEO4J_URI')}: run `make up`") from exc
    return bool(rows and rows[0]["n"])


def describe_turn(out: dict[str, Any], elapsed_s: float) -> list[str]:
    """The lines printed under a reply: status and route, tasks, model calls and their steps."""
    trace = out.get("trace") or {}
    lines = [f"  [turn {out.get('turn')} · {out.get('status')} · route {trace.get('route')} "
             f"({trace.get('confidence')}) · {elapsed_s:.1f} s]"]
    for task in out.get("tasks") or []:
        error = f" ({(task.get('error') or {}).get('type')})" if task.get("error") else ""
        lines.append(f"  task {task['task_id']} {task['task_type']} → {task['tool']}: "
                     f"{task['status']}{error} in {task['latency_ms']:.0f} ms")
    calls = int(trace.get("model_calls") or 0)
    lines.append(f"  models: {calls} call{'s' if calls != 1 else ''}, "
                 f"{trace.get('input_tokens', 0)} tokens in, {trace.get('output_tokens', 0)} out, "
                 f"${float(trace.get('cost_usd') or 0):.6f}")
    lines.extend(f"    {step}" for step in trace.get("model_steps") or [])
    return lines


def read_lines(stream: TextIO, echo: bool) -> Iterator[str]:
    """What the customer types, one turn per non-empty line, until /quit or end of input."""
    while True:
        try:
            line = input("you> ") if stream.isatty() else stream.readline()
        except EOFError:
            print()  # Ctrl-D: end the prompt's line
            return
        if not stream.isatty():
            if not line:
                return
            if echo:
                print(f"you> {line.rstrip()}")
        text = line.strip()
        if text in QUIT:
            return
        if text:
            yield text


def chat(client: Any, customer_id: str, lines: Iterator[str]) -> int:
    """Run one turn per line through the HTTP API and print each outcome; returns an exit code."""
    session = f"chat-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": f"Bearer dev:{customer_id}"}
    for text in lines:
        if text == "/new":
            session = f"chat-{uuid.uuid4().hex[:8]}"
            print(f"  [new session {session}]")
            continue
        started = time.perf_counter()
        response = client.post(f"/v1/sessions/{session}/messages", json={"text": text}, headers=headers)
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            print(f"  HTTP {response.status_code}: {response.text}")
            continue
        out = response.json()
        print(f"assistant> {out['reply']['text']}")
        print("\n".join(describe_turn(out, elapsed)), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devstack.chat", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("MODEL", ""),
                        help="a model spec for every role (openai/<m>@<url>, bedrock/<id>); "
                             "empty: the local tier")
    parser.add_argument("--customer", default="",
                        help="who you are (a customer id of the seeded store); default: the demo customer")
    parser.add_argument("--json-mode", choices=["json_schema", "json_object"], default=None,
                        help="how structured output is asked of an OpenAI-compatible endpoint")
    args = parser.parse_args(argv)

    from devstack.seed.demo_store import DEMO_CUSTOMER_ID

    customer = args.customer or DEMO_CUSTOMER_ID
    settings = configure_environment(args.model, args.json_mode)
    logging.getLogger().setLevel(logging.ERROR)  # model fallbacks show in the steps below each reply

    from csagent.models.providers import parse_model_spec

    try:
        parse_model_spec(settings["CHAT_MODEL"])
    except ValueError as exc:
        print(f"MODEL: {exc}", file=sys.stderr)
        return 2
    try:
        known = customer_exists(customer)
    except RuntimeError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if not known:
        print(f"customer {customer!r} is not in the store at {os.environ.get('NEO4J_URI')}: seed it "
              "(`make seed`, or `make seed DATA=../shared/data/tau-retail` and CUSTOMER=james_li_5688)",
              file=sys.stderr)
        return 2

    from fastapi.testclient import TestClient

    echo = not sys.stdin.isatty()
    print(f"chat as {customer} · model {settings['CHAT_MODEL']}"
          + (f" ({settings['MODEL_JSON_MODE']})" if "MODEL_JSON_MODE" in settings else "")
          + " · /new for a new session, /quit to end")
    with TestClient(load_router_app()) as client:
        return chat(client, customer, read_lines(sys.stdin, echo))


if __name__ == "__main__":
    raise SystemExit(main())
