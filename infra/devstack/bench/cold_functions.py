"""The first result of a fresh process for the functions `make bench` does not start cold (the
webhook, the worker, the knowledge ingest and the stream function), each with its event from
events/, before and after a change: the handler modules of a commit against the working tree's.

    python -m devstack.bench.cold_functions --against 907b248 [--processes 5] [--rounds 2] [stream ...]

Each process is `devstack.bench.cold.function_run` (the cold section's children): the module's
import and its first invocation, timed from inside, with the collector's time up to the first
result. Per round, `--processes` processes of each variant, alternating, so a slow moment of the
machine hits both alike; the figure is each round's median. The local stack must be seeded with
tau-retail (`make seed DATA=...`), as for `make bench`.

- webhook: events/webhook/telegram_message.json, valid as committed (Telegram's secret token has no
  timestamp), queued on the local webhook queue (drained after);
- worker: events/worker/sqs_batch.json with fresh message and user ids per process, its Telegram
  sender linked to james_li_5688 beforehand: one record runs a turn, the other is asked to verify;
  replies go to a local server answering 200;
- kb_ingest: events/kb_ingest/object_created.json, its object (a small HTML guide) put under a fresh
  document id, deleted from the bucket and the index after;
- stream: the Lambda Web Adapter's readiness probe (GET /), then the router's message
  (events/router/message.json) as a streamed turn, signed in with a dev token.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import itertools
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from devstack.bench.cold import FunctionCase, function_run

ROOT = Path(__file__).resolve().parents[3]
EVENTS = ROOT / "events"
FUNCTIONS = ("webhook", "worker", "kb_ingest", "stream")
CUSTOMER = "james_li_5688"
#: The secrets events/webhook/ is signed with and the worker's tokens (tests/webhook_support.py).
LOCAL_SECRETS = {"SLACK_SIGNING_SECRET": "local-slack-signing-secret",
                 "TELEGRAM_SECRET_TOKEN": "local-telegram-secret-token",
                 "WHATSAPP_APP_SECRET": "local-whatsapp-app-secret",
                 "WHATSAPP_VERIFY_TOKEN": "local-whatsapp-verify-token",
                 "TELEGRAM_BOT_TOKEN": "123456:local-telegram-bot-token",
                 "WHATSAPP_ACCESS_TOKEN": "local-whatsapp-access-token",
                 "WHATSAPP_PHONE_NUMBER_ID": "106540352242922"}
QUEUE, TABLE = "csagent-local-webhooks", "csagent-local-idempotency"
_USERS = itertools.count(1)
GUIDE = b"""<html><head><title>Leather care guide</title></head><body><h1>Leather care guide</h1>
<h2>Cleaning</h2><p>Wipe leather boots with a damp cloth and let them dry away from radiators.</p>
</body></html>"""


@dataclass
class Prepared:
    """One process's case, its environment, and what to undo after it."""

    case: FunctionCase
    env: dict[str, str]
    cleanup: Callable[[], None] = lambda: None


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _client(service: str) -> Any:
    import boto3

    return boto3.client(service, endpoint_url=os.environ.get("AWS_ENDPOINT_URL"), region_name="us-east-1")


def _webhook(app: Path, tag: str, base: dict[str, str]) -> Prepared:
    url = _client("sqs").get_queue_url(QueueName=QUEUE)["QueueUrl"]
    event = _load(EVENTS / "webhook" / "telegram_message.json")
    return Prepared(FunctionCase(app, (event,), expect=frozenset({"http 200"})),
                    {**base, **LOCAL_SECRETS, "WEBHOOK_QUEUE_URL": url})


def _worker(app: Path, tag: str, base: dict[str, str]) -> Prepared:
    from csagent.messaging.identity import DynamoDBLinks
    from csagent.messaging.models import Platform

    event = copy.deepcopy(_load(EVENTS / "worker" / "sqs_batch.json"))
    telegram_user = ""
    for i, record in enumerate(event["Records"]):
        body = json.loads(record["body"])
        user = f"9{os.getpid() % 10**5:05d}{next(_USERS):05d}"
        body.update(platform_message_id=f"{tag}-{i}", platform_user_id=user, chat_id=user)
        record["body"] = json.dumps(body)
        record["messageId"] = f"{tag}-{i}"
        if body["platform"] == "telegram":
            telegram_user = user
    ddb = _client("dynamodb")
    links = DynamoDBLinks(ddb, TABLE, link_ttl_s=3600, lockout_s=60)
    links.link(Platform.TELEGRAM, telegram_user, CUSTOMER)

    def cleanup() -> None:
        ddb.delete_item(TableName=TABLE, Key={"id": {"S": links.link_key(Platform.TELEGRAM, telegram_user)}})

    return Prepared(FunctionCase(app, (event,), expect=frozenset({"0 failed"})), base, cleanup)


def _kb_ingest(app: Path, tag: str, base: dict[str, str]) -> Prepared:
    from csagent import runtime

    event = copy.deepcopy(_load(EVENTS / "kb_ingest" / "object_created.json"))
    bucket = event["detail"]["bucket"]["name"]
    doc_id = f"cold-{tag}".lower()
    key = f"kb/uploads/{doc_id}/Care Guide.html"
    event["detail"]["object"].update(key=key, size=len(GUIDE))
    s3 = _client("s3")
    s3.put_object(Bucket=bucket, Key=key, Body=GUIDE, ContentType="text/html")

    def cleanup() -> None:
        s3.delete_object(Bucket=bucket, Key=key)
        if runtime.knowledge_base().index.document(doc_id) is not None:
            runtime.knowledge_base().delete(doc_id)

    return Prepared(FunctionCase(app, (event,), expect=frozenset({"results"})), base, cleanup)


def _stream(app: Path, tag: str, base: dict[str, str]) -> Prepared:
    router_event = _load(EVENTS / "router" / "message.json")
    request = {"method": "POST", "path": f"/v1/sessions/cold-{tag}/messages:stream",
               "headers": {"authorization": f"Bearer dev:{CUSTOMER}", "content-type": "application/json"},
               "body": router_event["body"]}
    case = FunctionCase(app, (request,), ("readiness_probe",), frozenset({"http 200 done"}), asgi=True)
    return Prepared(case, {**base, "AUTH_MODE": "dev"})


CASES: dict[str, Callable[[Path, str, dict[str, str]], Prepared]] = {
    "webhook": _webhook, "worker": _worker, "kb_ingest": _kb_ingest, "stream": _stream}


@contextlib.contextmanager
def _platforms() -> Iterator[str]:
    """A local stand-in for the platforms' send APIs: 200 `{"ok": true}` to every POST."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _drain_queue() -> None:
    sqs = _client("sqs")
    url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in batch:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def committed_app(commit: str, function: str, into: Path) -> Path:
    """functions/<function>/app.py as `commit` has it, written under `into`."""
    text = subprocess.run(["git", "show", f"{commit}:functions/{function}/app.py"], capture_output=True,
                          text=True, check=True, cwd=ROOT).stdout
    path = into / function / "app.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def measure(function: str, apps: dict[str, Path], processes: int, rounds: int,
            env: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Per variant, each process's figures, in order (`processes` per round, variants alternating)."""
    runs: dict[str, list[dict[str, Any]]] = {variant: [] for variant in apps}
    for _ in range(rounds):
        for i in range(processes):
            for variant, app in apps.items():
                prepared = CASES[function](app, f"{variant}{os.getpid()}x{len(runs[variant])}x{i}", env)
                try:
                    runs[variant].append(function_run(prepared.case, prepared.env))
                finally:
                    prepared.cleanup()
    return runs


def round_medians(runs: list[dict[str, Any]], processes: int, key: str = "total_ms") -> list[float]:
    """The median of `key` in each round of `processes` runs."""
    return [round(statistics.median(r[key] for r in runs[start:start + processes]), 1)
            for start in range(0, len(runs), processes)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.bench.cold_functions",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("functions", nargs="*", help=f"among {', '.join(FUNCTIONS)} (default: all four)")
    parser.add_argument("--against", required=True, help="the commit whose handler modules are 'before'")
    parser.add_argument("--processes", type=int, default=5, help="processes per variant and round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    unknown = set(args.functions) - set(FUNCTIONS)
    if unknown:
        parser.error(f"unknown functions: {', '.join(sorted(unknown))}")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    with tempfile.TemporaryDirectory() as tmp, _platforms() as platforms:
        env = {**os.environ, **{f"{name.upper()}_API_BASE": f"{platforms}/{name}"
                                for name in ("slack", "telegram", "whatsapp")}}
        for function in args.functions or FUNCTIONS:
            started = time.perf_counter()
            apps = {"before": committed_app(args.against, function, Path(tmp)),
                    "after": ROOT / "functions" / function / "app.py"}
            runs = measure(function, apps, args.processes, args.rounds, env)
            if function == "webhook":
                _drain_queue()
            figures = {variant: {"first_result_ms": round_medians(r, args.processes),
                                 "import_ms": round_medians([{"v": x["phases"]["imports"]} for x in r],
                                                            args.processes, "v"),
                                 "gc_ms": round_medians(r, args.processes, "gc_ms"),
                                 "gc_collections": round_medians(r, args.processes, "gc_collections")}
                       for variant, r in runs.items()}
            print(json.dumps({"function": function, "against": args.against, **figures,
                              "seconds": round(time.perf_counter() - started, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
