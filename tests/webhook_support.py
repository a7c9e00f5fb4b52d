"""Test helpers for the messaging webhooks: the local secrets the event files are signed with,
events re-stamped and re-signed for "now", a local HTTP server that records outbound replies,
and a Lambda context.

The files in events/webhook/ are signed with `LOCAL_SECRETS`. Telegram and WhatsApp events
stay valid as committed; a Slack event carries a timestamp, so after five minutes it is stale
and `fresh_slack` re-stamps and re-signs it (`sam local invoke -e` on a Slack event is refused
as stale unless re-signed the same way).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "events"

LOCAL_SECRETS = {
    "SLACK_SIGNING_SECRET": "local-slack-signing-secret",
    "TELEGRAM_SECRET_TOKEN": "local-telegram-secret-token",
    "WHATSAPP_APP_SECRET": "local-whatsapp-app-secret",
    "WHATSAPP_VERIFY_TOKEN": "local-whatsapp-verify-token",
    "SLACK_BOT_TOKEN": "xoxb-local-bot-token",
    "TELEGRAM_BOT_TOKEN": "123456:local-telegram-bot-token",
    "WHATSAPP_ACCESS_TOKEN": "local-whatsapp-access-token",
    "WHATSAPP_PHONE_NUMBER_ID": "106540352242922",
}


def load_event(name: str) -> dict[str, Any]:
    """An event from events/webhook/ (or events/worker/ for `worker/<name>`)."""
    path = EVENTS / name if "/" in name else EVENTS / "webhook" / name
    return json.loads(path.read_text())


def raw_body(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    return base64.b64decode(body) if event.get("isBase64Encoded") else body.encode()


def _with_raw_body(event: dict[str, Any], raw: bytes) -> dict[str, Any]:
    out = copy.deepcopy(event)
    out["body"] = base64.b64encode(raw).decode() if event.get("isBase64Encoded") else raw.decode()
    out["headers"]["content-length"] = str(len(raw))
    return out


def fresh_slack(event: dict[str, Any], now: float, *, resign: bool = True) -> dict[str, Any]:
    """The Slack event stamped `now`; re-signed with the local secret unless `resign=False`
    (a forged event stays forged)."""
    out = copy.deepcopy(event)
    timestamp = str(int(now))
    out["headers"]["x-slack-request-timestamp"] = timestamp
    if resign:
        base = f"v0:{timestamp}:".encode() + raw_body(out)
        digest = hmac.new(LOCAL_SECRETS["SLACK_SIGNING_SECRET"].encode(), base, hashlib.sha256).hexdigest()
        out["headers"]["x-slack-signature"] = "v0=" + digest
    return out


def slack_event(payload: dict[str, Any], now: float, *, retry: int = 0) -> dict[str, Any]:
    """slack_message.json carrying another payload, signed for `now`."""
    event = _with_raw_body(load_event("slack_message.json"), json.dumps(payload).encode())
    if retry:
        event["headers"]["x-slack-retry-num"] = str(retry)
        event["headers"]["x-slack-retry-reason"] = "http_timeout"
    return fresh_slack(event, now)


def slack_message(text: str, *, ts: str, user: str = "U0LOCAL01", channel: str = "D0LOCAL01",
                  channel_type: str = "im", **extra: Any) -> dict[str, Any]:
    """An Events API `event_callback` for one message."""
    event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts,
             "event_ts": ts, "channel_type": channel_type, **extra}
    return {"type": "event_callback", "team_id": "T0LOCAL01", "event_id": f"Ev{ts.replace('.', '')}",
            "event_time": int(float(ts)), "event": event}


def telegram_event(text: str, *, message_id: int, user_id: int = 700000001, chat_type: str = "private",
                   chat_id: int | None = None, is_bot: bool = False) -> dict[str, Any]:
    """telegram_message.json carrying another message (same secret token header)."""
    update = {"update_id": 840170000 + message_id, "message": {
        "message_id": message_id, "from": {"id": user_id, "is_bot": is_bot, "first_name": "Noah"},
        "chat": {"id": chat_id if chat_id is not None else user_id, "type": chat_type},
        "date": 1741774529, "text": text}}
    return _with_raw_body(load_event("telegram_message.json"), json.dumps(update).encode())


def whatsapp_event(payload: dict[str, Any]) -> dict[str, Any]:
    """whatsapp_message.json (base64 body) carrying another notification, signed."""
    raw = json.dumps(payload).encode()
    event = _with_raw_body(load_event("whatsapp_message.json"), raw)
    digest = hmac.new(LOCAL_SECRETS["WHATSAPP_APP_SECRET"].encode(), raw, hashlib.sha256).hexdigest()
    event["headers"]["x-hub-signature-256"] = "sha256=" + digest
    return event


def whatsapp_text(text: str, *, wamid: str, sender: str = "15555550123") -> dict[str, Any]:
    """A Cloud API notification with one text message."""
    return {"object": "whatsapp_business_account", "entry": [{"id": "102290129340398", "changes": [{
        "field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
            "messages": [{"from": sender, "id": wamid, "timestamp": "1741774529", "type": "text",
                          "text": {"body": text}}]}}]}]}


class LambdaContext:
    function_name = "WebhookFunction"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:WebhookFunction"
    aws_request_id = "test-request"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 10_000


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (the timeout tests do that on purpose) is not an error to print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@dataclass
class RecordingServer:
    """A tiny HTTP server on 127.0.0.1 (free port) that records every POST and answers from a
    script: each entry a status (body `{"ok": status < 300}`) or a (status, JSON body) pair; once
    the script is used up, 200 `{"ok": true}`. `delay_s` holds every answer back (timeouts)."""

    requests: list[RecordedRequest] = field(default_factory=list)
    script: list[int | tuple[int, dict[str, Any]]] = field(default_factory=list)
    retry_after: str | None = None
    delay_s: float = 0.0
    url: str = ""

    def answer(self) -> tuple[int, dict[str, Any]]:
        entry = self.script.pop(0) if self.script else 200
        return entry if isinstance(entry, tuple) else (entry, {"ok": entry < 300})


def _handler_for(server: RecordingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("content-length") or 0)
            payload = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.requests.append(RecordedRequest("POST", self.path, headers, json.loads(payload or b"{}")))
            status, answer = server.answer()
            time.sleep(server.delay_s)
            body = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            if server.retry_after is not None:
                self.send_header("retry-after", server.retry_after)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
            return

    return Handler


def recording_server() -> Iterator[RecordingServer]:
    """Generator for a pytest fixture: yields a running `RecordingServer`, stops it after."""
    recorder = RecordingServer()
    httpd = _QuietServer(("127.0.0.1", 0), _handler_for(recorder))
    recorder.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def outbound_env(base_url: str) -> dict[str, str]:
    """Environment pointing every platform's send API at the recording server."""
    return {"SLACK_API_BASE": f"{base_url}/slack", "TELEGRAM_API_BASE": f"{base_url}/telegram",
            "WHATSAPP_API_BASE": f"{base_url}/whatsapp", "OUTBOUND_BACKOFF_S": "0.01",
            "OUTBOUND_TIMEOUT_S": "2"}
