"""Local protocol peers for the model layer: an Amazon Bedrock Runtime Converse server and an
OpenAI chat-completions server on 127.0.0.1, for contract tests, benchmarks and `make chat`.

    python -m devstack.model_stubs openai  --port 8011     # CHAT_MODEL=openai/stub@http://127.0.0.1:8011/v1
    python -m devstack.model_stubs bedrock --port 8012     # endpoint_url http://127.0.0.1:8012, dummy creds

They speak the real wire formats, so the real clients (boto3 under langchain-aws
`ChatBedrockConverse`, the `openai` SDK under langchain-openai `ChatOpenAI`) run unmodified:

- Bedrock (rest-json, botocore's `bedrock-runtime/2023-09-30` service model):
  `POST /model/{modelId}/converse` and `/converse-stream` (AWS event-stream framing). Responses
  carry `output.message.content` (text / toolUse blocks), `stopReason`, `usage` and `metrics`;
  errors carry the `x-amzn-ErrorType` header and a `{"message": ...}` body, which botocore turns
  into `ClientError` with the right code. SigV4 signatures are accepted without verification.
- OpenAI: `POST /v1/chat/completions` (JSON or server-sent events) and `GET /v1/models`.
  Responses carry `choices[].message.content` / `tool_calls`, `finish_reason` and `usage`;
  errors use OpenAI's `{"error": {...}}` body, 429 with `retry-after`.

Each peer is scriptable per test: `peer.script(Text("hi"), Error(429), Json({...}))` queues
replies answered in order; when the queue is empty the `default` responder answers (`Auto`:
a minimal instance of whatever schema the request asked for, else a short text). Every request
is recorded (`peer.requests`) so a test can assert what the client sent: the schema or tool
spec, the prompt, and that no customer data reached a peer.

No third-party packages: `http.server` in a background thread (a context manager).
"""

from __future__ import annotations

import argparse
import binascii
import contextlib
import json
import re
import signal
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"


# ------------------------------------------------------------------------------------ replies
@dataclass(frozen=True)
class Text:
    """A plain assistant message."""

    text: str
    delay_s: float = 0.0


@dataclass(frozen=True)
class ToolCall:
    """A call of one tool with these arguments (`name=None`: the tool the request forced, else
    its first tool)."""

    args: Mapping[str, Any]
    name: str | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class Json:
    """A structured answer in the form the request asked for: the JSON document as the message
    content for a `response_format` / Bedrock `outputConfig` request, a call of the forced (or
    first) tool for a tool-calling request, else the JSON text as plain content."""

    value: Any
    delay_s: float = 0.0


@dataclass(frozen=True)
class Malformed:
    """Output that does not parse: as content (or as tool arguments on OpenAI when only tools
    were offered). Bedrock tool input is a JSON document on the wire, so there a malformed answer
    is the model writing this text instead of calling the tool, as real models do."""

    raw: str = '{"intent": "order_status", "confidence": '
    delay_s: float = 0.0


@dataclass(frozen=True)
class Error:
    """An error response. `kind` is the Bedrock error type (default by status, e.g. 429 →
    ThrottlingException) or the OpenAI error code; `retry_after_s` sets OpenAI's `retry-after`."""

    status: int
    kind: str | None = None
    message: str | None = None
    retry_after_s: float | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class Auto:
    """The default: a minimal valid instance of the schema the request carries (response_format,
    outputConfig, or the forced tool's input schema), else the text `text`."""

    text: str = "OK"
    delay_s: float = 0.0


Reply = Text | ToolCall | Json | Malformed | Error | Auto


# --------------------------------------------------------------------------- recorded requests
@dataclass(frozen=True)
class RecordedRequest:
    """One request as the peer received it."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    received_at: float = field(default_factory=time.time)

    @property
    def prompt_text(self) -> str:
        """Every piece of text the client sent (system + messages), joined by newlines."""
        if not isinstance(self.body, Mapping):
            return ""
        parts: list[str] = []
        _collect_text(self.body.get("system"), parts)
        _collect_text(self.body.get("messages"), parts)
        return "\n".join(parts)

    @property
    def requested_schema(self) -> dict[str, Any] | None:
        """The JSON schema the client asked the answer to satisfy, whichever way it asked."""
        return _requested_schema(self.body)


def _collect_text(node: Any, out: list[str]) -> None:
    """Text found in OpenAI (`content` str or parts) and Bedrock (`{"text": ...}`) messages."""
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, Mapping):
        for key in ("text", "content"):
            if key in node:
                _collect_text(node[key], out)
        if isinstance(node.get("toolResult"), Mapping):
            _collect_text(node["toolResult"].get("content"), out)
        if isinstance(node.get("toolUse"), Mapping):
            out.append(json.dumps(node["toolUse"].get("input"), ensure_ascii=False))
        for call in node.get("tool_calls") or ():
            out.append(str(call.get("function", {}).get("arguments", "")))
    elif isinstance(node, list):
        for item in node:
            _collect_text(item, out)


def _tools(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """(name, input schema) of each tool offered, OpenAI `tools` or Bedrock `toolConfig.tools`."""
    if not isinstance(body, Mapping):
        return []
    found: list[tuple[str, dict[str, Any]]] = []
    for tool in body.get("tools") or ():
        function = tool.get("function", {})
        found.append((function.get("name", ""), function.get("parameters") or {}))
    for tool in (body.get("toolConfig") or {}).get("tools") or ():
        spec = tool.get("toolSpec")
        if spec:
            found.append((spec.get("name", ""), (spec.get("inputSchema") or {}).get("json") or {}))
    return found


def _forced_tool(body: Mapping[str, Any]) -> str | None:
    """The tool the request forces, if it names one (OpenAI `tool_choice`, Bedrock `toolChoice`)."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        return choice.get("function", {}).get("name")
    bedrock_choice = (body.get("toolConfig") or {}).get("toolChoice") or {}
    return (bedrock_choice.get("tool") or {}).get("name")


def _chosen_tool(body: Mapping[str, Any], name: str | None) -> tuple[str, dict[str, Any]]:
    tools = _tools(body)
    wanted = name or _forced_tool(body)
    for tool_name, schema in tools:
        if wanted is None or tool_name == wanted:
            return tool_name, schema
    return (wanted or "answer"), {}


def _response_format_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format")
    if isinstance(fmt, Mapping):
        if fmt.get("type") == "json_schema":
            return dict((fmt.get("json_schema") or {}).get("schema") or {})
        if fmt.get("type") == "json_object":  # llama.cpp's form carries the schema beside the type
            return dict(fmt.get("schema") or {})
    text_format = (body.get("outputConfig") or {}).get("textFormat") or {}
    if text_format.get("type") == "json_schema":
        raw = ((text_format.get("structure") or {}).get("jsonSchema") or {}).get("schema")
        try:
            return dict(json.loads(raw)) if isinstance(raw, str) else None
        except ValueError:
            return None
    return None


def _requested_schema(body: Any) -> dict[str, Any] | None:
    if not isinstance(body, Mapping):
        return None
    schema = _response_format_schema(body)
    if schema is not None:
        return schema
    if _tools(body):
        return _chosen_tool(body, None)[1]
    return None


# ------------------------------------------------------------------- minimal schema instances
def minimal_instance(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """The smallest JSON value that satisfies `schema` (the subset pydantic and OpenAI emit:
    $ref/$defs, allOf/anyOf/oneOf, enum/const, defaults, types, required, minItems, minLength,
    minimum). Used by `Auto` so a peer answers any structured request validly."""
    root = schema if root is None else root
    if "$ref" in schema:
        return minimal_instance(_resolve_ref(root, schema["$ref"]), root)
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return minimal_instance(options[0], root)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = _resolve_ref(root, part["$ref"]) if "$ref" in part else part
            merged = {**merged, **part}
        return minimal_instance(merged, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _minimal_of_type(kind, schema, root)


def _minimal_of_type(kind: str, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: minimal_instance(props.get(name, {}), root) for name in schema.get("required", ())}
    if kind == "array":
        item = minimal_instance(schema.get("items") or {}, root)
        return [item for _ in range(int(schema.get("minItems", 0)))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 1))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = low + 1 if "exclusiveMinimum" in schema else low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    return None


def _resolve_ref(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $refs are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def estimate_tokens(text: str) -> int:
    """A deterministic token count (4 characters a token) for the `usage` fields."""
    return max(1, len(text) // 4)


# ------------------------------------------------------------------------------- the server
Responder = Callable[[RecordedRequest], Reply]
Rendered = tuple[int, dict[str, str], bytes]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real clients' connection pools expect
    # Headers and body leave in two writes; with Nagle on, the body waits for the client's delayed
    # ACK (40 ms on Linux), which would swamp every latency figure measured against the peer.
    disable_nagle_algorithm = True
    server: _PeerServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.server.peer.handle(self)

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence access logs
        return


class _PeerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], peer: StubPeer) -> None:
        self.peer = peer
        super().__init__(address, _Handler)


class StubPeer:
    """A scriptable local HTTP peer; subclasses speak one protocol (`route` + `render`)."""

    protocol: ClassVar[str]

    def __init__(self, port: int = 0, host: str = LOOPBACK, default: Responder | None = None) -> None:
        self._address = (host, port)
        self.default: Responder = default or (lambda _request: Auto())
        self._queue: deque[Reply] = deque()
        self._records: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _PeerServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> Self:
        """Bind (port 0: a free ephemeral port) and serve in a daemon thread."""
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _PeerServer(self._address, self)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"{self.protocol}-peer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; replies still sleeping in a delay are cut short."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"the {self.protocol} peer is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The server's root URL, e.g. http://127.0.0.1:54321."""
        return f"http://{LOOPBACK}:{self.port}"

    # scripting and records ---------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order before the default responder takes over."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The model requests received so far (oldest first)."""
        with self._lock:
            return list(self._records)

    def reset(self, default: Responder | None = None) -> None:
        """Forget scripted replies and recorded requests; set the default responder."""
        with self._lock:
            self._queue.clear()
            self._records.clear()
        self.default = default or (lambda _request: Auto())

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._records.append(request)
            scripted = self._queue.popleft() if self._queue else None
        return scripted if scripted is not None else self.default(request)

    # request handling ----------------------------------------------------------------------
    def handle(self, http: BaseHTTPRequestHandler) -> None:
        """Read, record, answer (after the reply's delay) and write one request."""
        length = int(http.headers.get("Content-Length") or 0)
        raw = http.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = urlsplit(http.path).path
        request = RecordedRequest(http.command, path, {k.lower(): v for k, v in http.headers.items()}, body)
        rendered = self.route(request)
        if rendered is None:
            reply = self._next_reply(request)
            self._stopping.wait(max(0.0, reply.delay_s))
            rendered = self.render(reply, request)
        self._write(http, rendered)

    def route(self, request: RecordedRequest) -> Rendered | None:
        """A fixed answer for requests that are not model calls (not recorded), else None."""
        raise NotImplementedError

    def render(self, reply: Reply, request: RecordedRequest) -> Rendered:
        """The HTTP response for a reply to a model call."""
        raise NotImplementedError

    @staticmethod
    def _write(http: BaseHTTPRequestHandler, rendered: Rendered) -> None:
        status, headers, payload = rendered
        try:
            http.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(payload))}.items():
                http.send_header(name, value)
            http.end_headers()
            http.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
            http.close_connection = True


def _json_response(status: int, document: Any, headers: Mapping[str, str] | None = None) -> Rendered:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(document).encode()


def _structured_value(reply: Json | Auto, request: RecordedRequest) -> Any:
    if isinstance(reply, Json):
        return reply.value
    schema = request.requested_schema
    return minimal_instance(schema) if schema is not None else None


# ------------------------------------------------------------------------------ Bedrock peer
BEDROCK_ERROR_TYPES = {
    400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
    408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
    500: "InternalServerException", 503: "ServiceUnavailableException",
}
_BEDROCK_MESSAGES = {
    "ThrottlingException": "Too many requests, please wait before trying again.",
    "ModelTimeoutException": "Model has timed out in processing the request. Try your request again.",
    "ValidationException": "The provided request is not valid",
    "InternalServerException": "The system encountered an unexpected error during processing. Try again.",
    "ServiceUnavailableException": "The service is temporarily unable to handle the request.",
}
_CORAL_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
_CONVERSE_RE = re.compile(r"^/model/(?P<model>[^/]+)/(?P<op>converse|converse-stream)$")


class BedrockPeer(StubPeer):
    """Amazon Bedrock Runtime's Converse and ConverseStream operations (rest-json)."""

    protocol = "bedrock"

    @property
    def endpoint_url(self) -> str:
        """What boto3 takes as `endpoint_url` for the `bedrock-runtime` client."""
        return self.url

    def route(self, request: RecordedRequest) -> Rendered | None:
        if request.method == "POST" and _CONVERSE_RE.match(request.path):
            if not isinstance(request.body, Mapping) or not request.body.get("messages"):
                return self._error(Error(400, message="messages: must not be empty"))
            return None
        return self._error(Error(404, "UnknownOperationException", "Unknown operation"))

    def render(self, reply: Reply, request: RecordedRequest) -> Rendered:
        if isinstance(reply, Error):
            return self._error(reply)
        content, stop_reason = self._content(reply, request)
        output_text = json.dumps(content, ensure_ascii=False)
        usage = self._usage(request, output_text)
        latency = {"latencyMs": int(reply.delay_s * 1000) + 1}
        match = _CONVERSE_RE.match(request.path)
        if match and match["op"] == "converse-stream":
            return self._stream(content, stop_reason, usage, latency)
        document = {"output": {"message": {"role": "assistant", "content": content}},
                    "stopReason": stop_reason, "usage": usage, "metrics": latency}
        return _json_response(200, document, {"x-amzn-RequestId": str(uuid.uuid4())})

    def _content(self, reply: Reply, request: RecordedRequest) -> tuple[list[dict[str, Any]], str]:
        body = request.body
        if isinstance(reply, Auto) and request.requested_schema is None:
            return [{"text": reply.text}], "end_turn"
        if isinstance(reply, Json | Auto):
            value = _structured_value(reply, request)
            if _tools(body) and _response_format_schema(body) is None:
                reply = ToolCall(value)
            else:
                return [{"text": json.dumps(value, ensure_ascii=False)}], "end_turn"
        if isinstance(reply, ToolCall):
            name, _ = _chosen_tool(body, reply.name)
            tool_use = {"toolUseId": f"tooluse_{uuid.uuid4().hex[:22]}", "name": name,
                        "input": dict(reply.args)}
            return [{"toolUse": tool_use}], "tool_use"
        if isinstance(reply, Malformed):
            return [{"text": reply.raw}], "end_turn"
        assert isinstance(reply, Text)
        return [{"text": reply.text}], "end_turn"

    @staticmethod
    def _usage(request: RecordedRequest, output_text: str) -> dict[str, int]:
        prompt = estimate_tokens(request.prompt_text)
        completion = estimate_tokens(output_text)
        return {"inputTokens": prompt, "outputTokens": completion, "totalTokens": prompt + completion}

    @staticmethod
    def _error(error: Error) -> Rendered:
        kind = error.kind or BEDROCK_ERROR_TYPES.get(error.status, "InternalServerException")
        message = error.message or _BEDROCK_MESSAGES.get(kind, kind)
        headers = {"x-amzn-ErrorType": kind + _CORAL_SUFFIX, "x-amzn-RequestId": str(uuid.uuid4())}
        return _json_response(error.status, {"message": message}, headers)

    @staticmethod
    def _stream(content: list[dict[str, Any]], stop_reason: str, usage: dict[str, int],
                metrics: dict[str, int]) -> Rendered:
        """The ConverseStream events for the same answer, in AWS event-stream framing."""
        events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
        for index, block in enumerate(content):
            if "toolUse" in block:
                tool = block["toolUse"]
                start = {"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"]}}
                events.append(("contentBlockStart", {"contentBlockIndex": index, "start": start}))
                delta: dict[str, Any] = {"toolUse": {"input": json.dumps(tool["input"])}}
            else:
                delta = {"text": block["text"]}
            events.append(("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
            events.append(("contentBlockStop", {"contentBlockIndex": index}))
        events.append(("messageStop", {"stopReason": stop_reason}))
        events.append(("metadata", {"usage": usage, "metrics": metrics}))
        payload = b"".join(event_stream_message(name, doc) for name, doc in events)
        return 200, {"Content-Type": "application/vnd.amazon.eventstream",
                     "x-amzn-RequestId": str(uuid.uuid4())}, payload


def event_stream_message(event_type: str, document: Mapping[str, Any]) -> bytes:
    """One AWS event-stream message: prelude (lengths + CRC), string headers, JSON payload, CRC."""
    headers = b"".join(_event_header(name, value) for name, value in (
        (":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")))
    payload = json.dumps(document).encode()
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", binascii.crc32(message))


def _event_header(name: str, value: str) -> bytes:
    name_bytes, value_bytes = name.encode(), value.encode()
    return (struct.pack(">B", len(name_bytes)) + name_bytes + b"\x07"
            + struct.pack(">H", len(value_bytes)) + value_bytes)


# ------------------------------------------------------------------------------- OpenAI peer
_OPENAI_ERRORS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


class OpenAIPeer(StubPeer):
    """The OpenAI chat-completions API as vLLM and llama.cpp serve it."""

    protocol = "openai"

    def __init__(self, port: int = 0, host: str = LOOPBACK, default: Responder | None = None,
                 models: Sequence[str] = ("stub",)) -> None:
        super().__init__(port, host, default)
        self.models = tuple(models)

    @property
    def base_url(self) -> str:
        """What `ChatOpenAI(base_url=...)` takes."""
        return f"{self.url}/v1"

    def model_spec(self, model: str = "stub") -> str:
        """The CHAT_MODEL string for this peer."""
        return f"openai/{model}@{self.base_url}"

    def route(self, request: RecordedRequest) -> Rendered | None:
        if request.method == "GET" and request.path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in self.models]
            return _json_response(200, {"object": "list", "data": data})
        if request.method == "POST" and request.path == "/v1/chat/completions":
            if not isinstance(request.body, Mapping) or not request.body.get("messages"):
                return self._error(Error(400, message="'messages' is a required property"))
            return None
        return self._error(Error(404, "not_found", f"Unknown request URL: {request.method} {request.path}"))

    def render(self, reply: Reply, request: RecordedRequest) -> Rendered:
        if isinstance(reply, Error):
            return self._error(reply)
        message, finish_reason = self._message(reply, request)
        body = request.body
        prompt = estimate_tokens(request.prompt_text)
        completion = estimate_tokens(json.dumps(message, ensure_ascii=False))
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion}
        base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "created": int(time.time()),
                "model": body.get("model", "stub"), "system_fingerprint": "fp_stub"}
        if body.get("stream"):
            return self._stream(base, message, finish_reason, usage, body)
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        return _json_response(200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage})

    def _message(self, reply: Reply, request: RecordedRequest) -> tuple[dict[str, Any], str]:
        body = request.body
        wants_format = (body.get("response_format") or {}).get("type") in ("json_object", "json_schema")
        if isinstance(reply, Auto) and request.requested_schema is None:
            return self._content(reply.text), "stop"
        if isinstance(reply, Json | Auto):
            value = _structured_value(reply, request)
            if wants_format or not _tools(body):
                return self._content(json.dumps(value, ensure_ascii=False)), "stop"
            reply = ToolCall(value)
        if isinstance(reply, Malformed):
            if _tools(body) and not wants_format:
                return self._tool_call(body, None, reply.raw), "tool_calls"
            return self._content(reply.raw), "stop"
        if isinstance(reply, ToolCall):
            return self._tool_call(body, reply.name, json.dumps(dict(reply.args))), "tool_calls"
        assert isinstance(reply, Text)
        return self._content(reply.text), "stop"

    @staticmethod
    def _content(text: str) -> dict[str, Any]:
        return {"role": "assistant", "content": text, "refusal": None}

    @staticmethod
    def _tool_call(body: Mapping[str, Any], name: str | None, arguments: str) -> dict[str, Any]:
        tool_name, _ = _chosen_tool(body, name)
        call = {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                "function": {"name": tool_name, "arguments": arguments}}
        return {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}

    @staticmethod
    def _error(error: Error) -> Rendered:
        kind, code, message = _OPENAI_ERRORS.get(error.status, ("server_error", None, "Server error."))
        document = {"error": {"message": error.message or message, "type": kind,
                              "param": None, "code": error.kind or code}}
        headers: dict[str, str] = {"x-request-id": f"req_{uuid.uuid4().hex}"}
        if error.status == 429:
            retry_after = 1.0 if error.retry_after_s is None else error.retry_after_s
            headers["retry-after"] = f"{retry_after:g}"
        return _json_response(error.status, document, headers)

    @staticmethod
    def _stream(base: Mapping[str, Any], message: Mapping[str, Any], finish_reason: str,
                usage: Mapping[str, int], body: Mapping[str, Any]) -> Rendered:
        """Server-sent events: role, content or tool-call delta, finish, [usage], [DONE]."""
        def chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}
            return {**base, "object": "chat.completion.chunk", "choices": [choice]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        if message.get("tool_calls"):
            calls = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
            chunks.append(chunk({"tool_calls": calls}))
        else:
            chunks.append(chunk({"content": message["content"]}))
        chunks.append(chunk({}, finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": dict(usage)})
        events = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
        return 200, {"Content-Type": "text/event-stream"}, "".join(events).encode()


# ------------------------------------------------------------------------------------- CLI
PEERS: dict[str, type[StubPeer]] = {"openai": OpenAIPeer, "bedrock": BedrockPeer}


@dataclass
class _Banner:
    peer: StubPeer

    def lines(self) -> Iterator[str]:
        yield f"{self.peer.protocol} peer on {self.peer.url} (Ctrl-C stops it)"
        if isinstance(self.peer, OpenAIPeer):
            yield f"  CHAT_MODEL={self.peer.model_spec()}"
        else:
            yield f"  BEDROCK_ENDPOINT_URL={self.peer.url}  CHAT_MODEL=bedrock/<any-model-id>"
        yield "  answers: a minimal valid instance of the requested schema, else the text 'OK'"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one peer in the foreground until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m devstack.model_stubs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("protocol", choices=sorted(PEERS))
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--text", default="OK", help="the answer to a request that asks for no schema")
    args = parser.parse_args(argv)
    text = args.text
    peer = PEERS[args.protocol](port=args.port, default=lambda _request: Auto(text=text))
    with peer:
        for line in _Banner(peer).lines():
            print(line, flush=True)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # `kill <pid>` stops it cleanly too
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
