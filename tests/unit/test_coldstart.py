"""`csagent.coldstart`: the cyclic collector paused from a handler's import to its first reply,
then back on with the start-up heap frozen; once per process. Each case runs in a fresh
interpreter, so the test process's own collector is never touched."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

_PRELUDE = """
import gc, json
from csagent import coldstart
def state():
    return {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count() > 0}
"""


def _run(body: str) -> dict[str, dict[str, bool]]:
    done = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(body)], capture_output=True,
                          text=True, check=True, timeout=60)
    result: dict[str, dict[str, bool]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_collector_is_off_until_the_first_call_returns_then_on_with_the_heap_frozen() -> None:
    # Given a handler module that paused the collector as it was imported
    seen = _run("""
        coldstart.pause_gc()
        paused = state()
        handler = coldstart.resume_gc_after_first_call(lambda event: state())
        # When the first invocation runs, and returns
        during = handler({})
        print(json.dumps({"paused": paused, "during": during, "after": state()}))
    """)

    # Then the collector was off through the import and the first call, and is on after it,
    # with what existed frozen
    assert seen["paused"] == {"enabled": False, "frozen": False}
    assert seen["during"] == {"enabled": False, "frozen": False}
    assert seen["after"] == {"enabled": True, "frozen": True}


def test_a_first_call_that_raises_still_turns_the_collector_back_on() -> None:
    # Given a paused collector and a handler whose first call fails
    seen = _run("""
        coldstart.pause_gc()
        def fail(event):
            raise RuntimeError("the first request failed")
        handler = coldstart.resume_gc_after_first_call(fail)
        # When it is called
        try:
            handler({})
        except RuntimeError:
            pass
        print(json.dumps({"after": state()}))
    """)

    # Then the collector is on again
    assert seen["after"]["enabled"] is True


def test_the_pause_is_once_per_process() -> None:
    # Given a process whose first reply is out (the collector resumed)
    seen = _run("""
        coldstart.pause_gc()
        coldstart.resume_gc_after_first_call(lambda event: None)({})
        # When the handler module is imported again (tests do), pausing again
        coldstart.pause_gc()
        print(json.dumps({"again": state()}))
    """)

    # Then the collector stays on
    assert seen["again"]["enabled"] is True


def test_a_collector_turned_off_by_someone_else_is_left_off() -> None:
    # Given a process that turned its collector off itself
    seen = _run("""
        gc.disable()
        coldstart.pause_gc()
        # When the first call returns
        coldstart.resume_gc_after_first_call(lambda event: None)({})
        print(json.dumps({"after": state()}))
    """)

    # Then it is still off, and nothing was frozen
    assert seen["after"] == {"enabled": False, "frozen": False}


def test_a_tool_function_pauses_the_collector_until_its_first_result() -> None:
    # Given a tool function's module imported as Lambda imports it, and a first event (malformed:
    # answered without the store)
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = textwrap.dedent("""
        import gc, importlib.util, json
        spec = importlib.util.spec_from_file_location("tool_app", "functions/tools/predefined_cypher/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        paused = gc.isenabled()
        class Context:
            function_name, aws_request_id, function_version, memory_limit_in_mb = "tool", "r1", "1", 128
            invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:tool"
            def get_remaining_time_in_millis(self):
                return 1000
        result = module.handler(json.load(open("events/tools/malformed.json")), Context())
        frozen = gc.get_freeze_count() > 0
        print(json.dumps({"paused_enabled": paused, "after": gc.isenabled(), "frozen": frozen,
                          "status": result["status"]}))
    """)
    env = {**os.environ, "POWERTOOLS_METRICS_NAMESPACE": "CsAgent"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          timeout=120, cwd=root, env=env)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # Then the collector was off after the import, and is on after the first result, frozen
    assert seen["status"] == "failed"  # the malformed event's answer, not a crash
    assert seen["paused_enabled"] is False
    assert seen["after"] is True and seen["frozen"] is True


def test_an_asgi_app_resumes_the_collector_after_its_first_request_that_is_not_skipped() -> None:
    # Given an ASGI app whose requests to /probe are skipped, and a lifespan scope
    seen = _run("""
        import asyncio
        coldstart.pause_gc()
        async def inner(scope, receive, send):
            if scope.get("path") == "/fails":
                raise RuntimeError("the first request failed")
        app = coldstart.resume_gc_after_first_request(inner, unless=lambda scope: scope["path"] == "/probe")
        async def call(scope):
            try:
                await app(scope, None, None)
            except RuntimeError:
                pass
            return state()
        # When a lifespan scope, a skipped request, then a request that raises are served
        lifespan = asyncio.run(call({"type": "lifespan"}))
        probe = asyncio.run(call({"type": "http", "path": "/probe"}))
        first = asyncio.run(call({"type": "http", "path": "/fails"}))
        print(json.dumps({"lifespan": lifespan, "probe": probe, "first": first}))
    """)

    # Then only the request that was not skipped turned the collector back on, frozen
    assert seen["lifespan"] == {"enabled": False, "frozen": False}
    assert seen["probe"] == {"enabled": False, "frozen": False}
    assert seen["first"] == {"enabled": True, "frozen": True}


_FUNCTION_PRELUDE = """
import gc, importlib.util, json, sys
def load(path):
    spec = importlib.util.spec_from_file_location("function_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
class Context:
    function_name, aws_request_id, function_version, memory_limit_in_mb = "fn", "r1", "1", 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:fn"
    def get_remaining_time_in_millis(self):
        return 1000
"""


def _run_function(body: str, **env: str) -> dict[str, Any]:
    """`body` after `_FUNCTION_PRELUDE`, in a fresh interpreter at the repository's root; its last
    line of output, as JSON."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _FUNCTION_PRELUDE + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "POWERTOOLS_METRICS_NAMESPACE": "CsAgent", **env})
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_webhook_pauses_the_collector_until_its_first_response() -> None:
    # Given the webhook function's module imported as Lambda imports it, and a forged event
    # (answered 401 before anything is queued)
    seen = _run_function("""
        module = load("functions/webhook/app.py")
        paused = gc.isenabled()
        response = module.handler(json.load(open("events/webhook/telegram_forged.json")), Context())
        print(json.dumps({"paused": paused, "status": response["statusCode"], "after": gc.isenabled(),
                          "frozen": gc.get_freeze_count() > 0}))
    """, TELEGRAM_SECRET_TOKEN="local-telegram-secret-token",
        WEBHOOK_QUEUE_URL="http://127.0.0.1:9/123456789012/csagent-local-webhooks")
    # Then the collector was off after the import, and is on, frozen, after the first response
    assert seen == {"paused": False, "status": 401, "after": True, "frozen": True}


def test_the_worker_resumes_the_collector_after_its_batchs_first_record() -> None:
    # Given the worker function's module and a worker that notes the collector's state per message
    seen = _run_function("""
        module = load("functions/worker/app.py")
        paused = gc.isenabled()
        states = []
        class Replied:
            value = "replied"
        class Worker:
            def process(self, message):
                states.append(gc.isenabled())
                return Replied()
        module.runtime.message_worker = lambda: Worker()
        # When a batch of two records is processed
        response = module.handler(json.load(open("events/worker/sqs_batch.json")), Context())
        print(json.dumps({"paused": paused, "states": states, "failures": response["batchItemFailures"]}))
    """)
    # Then the first record ran with the collector off, the second with it on
    assert seen == {"paused": False, "states": [False, True], "failures": []}


def test_the_knowledge_ingest_resumes_the_collector_before_the_first_document() -> None:
    # Given the ingest function's module, its clients and ingest replaced by ones noting the state
    seen = _run_function("""
        module = load("functions/kb_ingest/app.py")
        paused = gc.isenabled()
        built, ingested = [], []
        module.runtime.kb_uploads = lambda: built.append(gc.isenabled())
        module.runtime.knowledge_base = lambda: built.append(gc.isenabled())
        module.runtime.ingest_kb_object = lambda key: ingested.append(gc.isenabled()) or {"key": key}
        # When the bucket's event is handled
        module.handler(json.load(open("events/kb_ingest/object_created.json")), Context())
        print(json.dumps({"paused": paused, "built": built, "ingested": ingested,
                          "frozen": gc.get_freeze_count() > 0}))
    """)
    # Then the clients were built with the collector off, and the document read with it on
    assert seen == {"paused": False, "built": [False, False], "ingested": [True], "frozen": True}


def test_the_stream_function_resumes_the_collector_after_its_first_request_that_is_no_probe() -> None:
    # Given the stream function's module as uvicorn imports it
    seen = _run_function("""
        import asyncio
        module = load("functions/stream/app.py")
        paused = gc.isenabled()
        async def get(path):
            sent = []
            async def receive():
                return {"type": "http.request", "body": b"", "more_body": False}
            async def send(message):
                sent.append(message)
            scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
                     "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
                     "root_path": "", "headers": [], "client": ("127.0.0.1", 1),
                     "server": ("127.0.0.1", 8080)}
            await module.app(scope, receive, send)
            return sent[0]["status"]
        # When the adapter's readiness probe is answered, then another request (no route: no I/O)
        probe = asyncio.run(get("/"))
        after_probe = gc.isenabled()
        other = asyncio.run(get("/nothing-here"))
        print(json.dumps({"paused": paused, "probe": probe, "after_probe": after_probe, "other": other,
                          "after": gc.isenabled(), "frozen": gc.get_freeze_count() > 0}))
    """, AUTH_MODE="dev", STAGE="local")
    # Then the probe left the collector off, and the first other request turned it back on, frozen
    assert seen == {"paused": False, "probe": 404, "after_probe": False, "other": 404, "after": True,
                    "frozen": True}


def test_a_local_server_of_a_functions_app_runs_with_the_collector_on() -> None:
    # Given `make serve`'s app, the router's FastAPI app served without its handler
    seen = _run_function("""
        from devstack import web
        web.router_app()
        print(json.dumps({"enabled": gc.isenabled()}))
    """, AUTH_MODE="dev", STAGE="local")
    # Then the collector the module paused for its cold start is on again
    assert seen == {"enabled": True}
