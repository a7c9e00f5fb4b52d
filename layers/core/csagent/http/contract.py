"""What the HTTP API documents beyond its request and response models: the error body every
non-2xx answer carries, which status codes each route can answer with (and the headers that
come with them), the formats of the ids in its paths, and the shape of a streamed turn's events.

The OpenAPI document (`/openapi.json`) is built from these, and the schemathesis run in
`tests/e2e/test_openapi_fuzz.py` checks the served API against that document with every check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from csagent.domain.ids import (
    APPROVAL_ID_PATTERN,
    CATALOGUE_ID_PATTERN,
    DOCUMENT_ID_PATTERN,
    HANDOFF_ID_PATTERN,
)
from csagent.service.schemas import SESSION_ID_PATTERN

# -- the ids in the paths: the same patterns the services check -----------------------------------
SESSION_ID = {"pattern": SESSION_ID_PATTERN,
              "description": "1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit; "
                             "the client chooses it (one per conversation)."}
HANDOFF_ID = {"pattern": HANDOFF_ID_PATTERN, "description": "32 lowercase hexadecimal characters."}
APPROVAL_ID = {"pattern": APPROVAL_ID_PATTERN, "description": "32 lowercase hexadecimal characters."}
DOCUMENT_ID = {"pattern": DOCUMENT_ID_PATTERN,
               "description": "1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit."}
CATALOGUE_ID = {"pattern": CATALOGUE_ID_PATTERN,
                "description": "1-64 letters, digits, '_' or '-', starting with a letter or digit "
                               "(the store's are ten digits)."}


def cursor(listing: str) -> Callable[[dict[str, Any]], None]:
    """The schema of an optional `cursor` query parameter: a string (absent on the first page) in
    the custom format `<listing>-cursor`. A cursor is opaque: only a `next_cursor` this listing
    returned continues it, anything else is a 422; a fuzzer generates them by that format's name
    (`tests/e2e/fuzz_hooks.py`)."""

    def shape(schema: dict[str, Any]) -> None:
        schema.pop("anyOf", None)  # `str | None`: in a query string it is a string or absent
        schema.update({"type": "string", "format": f"{listing}-cursor",
                       "description": "The `next_cursor` of the previous page, as returned (opaque)."})

    return shape


# -- the error body --------------------------------------------------------------------------------
class ErrorDetail(BaseModel):
    field: str = Field(description="The offending field, dotted ('attachments.0.data'), or 'body'.")
    problem: str
    type: str = Field(description="The validator's error type ('string_too_long', 'extra_forbidden', ...).")


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable, machine-readable: 'invalid_input', 'forbidden', ...")
    message: str = Field(description="For people; never internals.")
    details: list[ErrorDetail] | None = Field(default=None, description="Per-field problems (422 only).")


class ErrorBody(BaseModel):
    """Every error answer: {"error": {"code", "message", "details"?}}."""

    error: ErrorInfo


class HealthOut(BaseModel):
    status: Literal["ok", "degraded"]
    checks: dict[str, bool] = Field(description="Each dependency's reachability.")


_WHY = {
    400: "The body is not valid JSON (`malformed_json`).",
    401: "No or bad credentials (`unauthenticated`).",
    403: "Not yours: another customer's session, or a route for another role (`forbidden`).",
    404: "No such resource (`not_found`).",
    409: "In a state that forbids it: the session is answering another message, the approval was "
         "already decided or expired, the handoff is someone else's (`conflict`).",
    413: "The body is over 6 MiB (`body_too_large`), or an uploaded document over its limit.",
    415: "An uploaded document's type is not one the knowledge base reads (`unsupported_type`).",
    422: "Invalid input: a field, a path id, a query parameter (`invalid_input`, `text_too_long`, "
         "`unknown_field`).",
    429: "Too many messages (`rate_limited`); `Retry-After` says when to try again.",
    500: "Something failed on our side; nothing was changed (`internal_error`, no internals).",
    503: "A dependency this route needs is unavailable or not configured (`dependency_unavailable`).",
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "Always `Bearer`.", "required": True,
                               "schema": {"type": "string", "const": "Bearer"}}},
    429: {"Retry-After": {"description": "Seconds until a message is accepted again.", "required": True,
                          "schema": {"type": "string", "pattern": r"^[1-9][0-9]*$"}}},
}
#: What any route may answer: a body over the limit (the middleware), an unexpected failure.
ANY_ROUTE = (413, 500)


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` entries of these error statuses, each with the error body's schema."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in sorted(set(statuses) | set(ANY_ROUTE)):
        entry: dict[str, Any] = {"model": ErrorBody, "description": _WHY[status]}
        if status in _HEADERS:
            entry["headers"] = _HEADERS[status]
        out[status] = entry
    return out


# -- a streamed turn's events ----------------------------------------------------------------------
def _json_event(name: str, data_schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "object", "description": description, "required": ["event", "data"],
            "properties": {"event": {"const": name},
                           "data": {"type": "string", "contentMediaType": "application/json",
                                    "contentSchema": data_schema},
                           "id": {"type": "string"}, "retry": {"type": "integer"}}}


PROGRESS_DATA = {"type": "object", "required": ["node", "label", "step"], "additionalProperties": False,
                 "properties": {"node": {"type": "string"}, "label": {"type": "string"},
                                "step": {"type": "integer", "minimum": 0}}}
ANSWER_DATA = {"type": "object", "required": ["text"], "additionalProperties": False,
               "properties": {"text": {"type": "string", "minLength": 1}}}


def stream_event_schema() -> dict[str, Any]:
    """One event of a streamed turn, as an SSE parser gives it ({"event", "data", "id"?,
    "retry"?}); in OpenAPI 3.1 the `schema` of a text/event-stream body describes each event.
    Keep-alive comments are not events."""
    return {"oneOf": [
        _json_event("progress", PROGRESS_DATA, "A step of the graph finished (step 0: received)."),
        _json_event("answer", ANSWER_DATA, "A piece of the reply; append them in order."),
        _json_event("done", {"$ref": "#/components/schemas/TurnOut"},
                    "The whole turn, as POST .../messages returns it; the last event."),
        _json_event("error", {"$ref": "#/components/schemas/ErrorBody"},
                    "The turn failed after the stream started; the last event."),
    ]}


# -- answers documented without importing their models at start-up ---------------------------------
#: Models of 200 answers whose packages a cold start should not import to build the app (the
#: agents' queues); their schemas join the document when it is first built.
LAZY_MODELS = {"ApprovalPage": ("csagent.approvals.service", "ApprovalPage"),
               "HandoffPage": ("csagent.handoff.service", "HandoffPage"),
               "HandoffPackage": ("csagent.handoff.package", "HandoffPackage")}


def json_answer(model: str) -> dict[str, Any]:
    """A 200 answer whose body is the lazily documented `model`."""
    return {"description": "Successful Response",
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model}"}}}}


def lazily_documented(app: Any) -> None:
    """`app.openapi()` as FastAPI builds it, plus the schemas of LAZY_MODELS (and of the models
    they refer to), imported only when the document is first asked for."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema  # type: ignore[no-any-return]
        import importlib

        from pydantic.json_schema import models_json_schema

        document: dict[str, Any] = build()
        models = [getattr(importlib.import_module(module), name) for module, name in LAZY_MODELS.values()]
        _, defs = models_json_schema([(m, "serialization") for m in models],
                                     ref_template="#/components/schemas/{model}")
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in defs.get("$defs", {}).items():
            schemas.setdefault(name, schema)
        app.openapi_schema = document
        return document

    app.openapi = openapi
