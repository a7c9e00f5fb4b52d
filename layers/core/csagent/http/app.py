"""The router's HTTP API (FastAPI). Routes parse input, resolve the caller, call the service
and map domain errors to JSON error bodies. No business logic here.

Every error body has one shape: {"error": {"code": str, "message": str, "details"?: [...]}}.
A 500 never carries a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI, File, Form, Path, Query, Request, Response, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from csagent.domain.errors import DependencyUnavailable, DomainError, Forbidden, InvalidInput
from csagent.domain.models import Principal
from csagent.http import contract
from csagent.http.auth import principal_from
from csagent.http.contract import HealthOut, errors, json_answer, lazily_documented
from csagent.http.sse import STREAM_HEADERS, EventPump, turn_stream
from csagent.service.conversation import ConversationService
from csagent.service.schemas import (
    NOT_BLANK_PATTERN,
    AgentSessionOut,
    ApprovalOut,
    DecisionIn,
    MessageIn,
    SessionOut,
    TurnOut,
    on_string,
)

logger = logging.getLogger("csagent.http")
MAX_BODY_BYTES = 6 * 1024 * 1024  # Lambda's synchronous payload limit; text alone is capped at 4,000


def _allowed_methods(app: FastAPI, scope: Any) -> list[str]:
    """Every method the routes matching the request's path serve, sorted."""
    from starlette.routing import Match, Route

    methods: set[str] = set()
    for route in app.router.routes:
        if isinstance(route, Route) and route.methods and route.matches(
                {**scope, "method": next(iter(route.methods))})[0] == Match.FULL:
            methods |= set(route.methods)
    return sorted(methods)


def _error(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": {"code": code, "message": message}}
    if details:
        body["error"]["details"] = details
    return JSONResponse(status_code=status, content=body, headers=headers)


def _validation_response(exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return _error(400, "malformed_json", "the request body is not valid JSON")
    details = []
    for e in errors:
        loc = [str(part) for part in e.get("loc", ()) if part != "body"]
        details.append({"field": ".".join(loc) or "body", "problem": e.get("msg", "invalid"),
                        "type": e.get("type", "")})
    if any(d["field"] == "text" and d["type"] == "string_too_long" for d in details):
        return _error(422, "text_too_long", "text is longer than 4000 characters", details)
    if any(d["type"] == "extra_forbidden" for d in details):
        unknown = ", ".join(d["field"] for d in details if d["type"] == "extra_forbidden")
        return _error(422, "unknown_field", f"unknown field(s): {unknown}", details)
    return _error(422, "invalid_input", "; ".join(f"{d['field']}: {d['problem']}" for d in details), details)


class Text2CypherIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    question: str = Field(min_length=1, max_length=1000,
                          json_schema_extra=on_string(pattern=NOT_BLANK_PATTERN))
    model: str | None = Field(
        default=None, max_length=200, json_schema_extra=on_string(format="model-spec"),
        description="A model chain as TEXT2CYPHER_MODEL takes it ('local', 'bedrock/<model-id>', "
                    "'openai/<model>@<base_url>', joined by '|'); default: the configured one. A malformed "
                    "one is a 422.")


class KbUploadIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    filename: str = Field(min_length=1, max_length=200, description="returns.pdf (.md, .html, .txt or .pdf)")
    document_id: str | None = Field(default=None, max_length=64)
    title: str | None = Field(default=None, max_length=200)


class VariantBody(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    item_id: str = Field(min_length=1, max_length=64)
    price: float = Field(gt=0)
    available: bool = True
    options: dict[str, str] = Field(default_factory=dict, max_length=10)


class ProductBody(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, max_length=120)
    category: str = Field(min_length=1, max_length=80)
    variants: list[VariantBody] = Field(default_factory=list, max_length=200)


class VariantPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    price: float | None = Field(default=None, gt=0)
    available: bool | None = None


class AgentReplyIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    text: str = Field(min_length=1, max_length=4000, json_schema_extra=on_string(pattern=NOT_BLANK_PATTERN))


STREAM_DOC = """The same turn as POST /v1/sessions/{session_id}/messages, as server-sent events
(text/event-stream): `progress` events ({"node", "label", "step"}) while the assistant works,
then, once the turn is decided, the reply in `answer` events ({"text"}: append them) and `done`
with the full turn (the body the non-streaming endpoint returns). A failure after the stream
started is an `error` event ({"error": {"code", "message"}}); before it, a JSON error as for the
non-streaming endpoint. Comment lines (`: keep-alive`) keep a slow turn's connection open."""


def create_app(get_service: Callable[[], ConversationService], get_health: Callable[[], dict[str, bool]],
               auth_mode: Callable[[], str], get_handoffs: Callable[[], Any] | None = None,
               get_approvals: Callable[[], Any] | None = None,
               text2cypher_debug: Callable[[str, str | None], dict[str, Any]] | None = None,
               verify_token: Callable[[str | None], dict[str, Any]] | None = None,
               stream_heartbeat_s: float = 10.0,
               get_knowledge: Callable[[], Any] | None = None,
               presign_kb_upload: Callable[[str, str | None, str | None], dict[str, Any]] | None = None,
               get_catalogue: Callable[[], Any] | None = None) -> FastAPI:
    """The app. Factories are called per request (they are cached at the composition root),
    so importing and creating the app does no I/O.

    `verify_token` (bearer header → verified claims) is for a deployment with no API Gateway
    authorizer in front (the streaming Function URL, `csagent.http.tokens`); with AUTH_MODE=jwt
    its claims stand in for the authorizer's. `stream_heartbeat_s`: the longest silence on a
    streamed turn before a keep-alive comment. `get_knowledge`: the knowledge-base service
    (`csagent.knowledge.service.KnowledgeBase`) behind the admin API /v1/kb/...;
    `presign_kb_upload`: a presigned S3 POST for one document (`csagent.knowledge.uploads`);
    `get_catalogue`: catalogue changes with the knowledge base following
    (`csagent.knowledge.catalogue.CatalogueSync`)."""
    app = FastAPI(title="Customer-service agent API", version="1.0.0",
                  description="Chat with the store's assistant; one message may hold several requests.")

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Callable[..., Any]) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return _error(413, "body_too_large", f"the request body must be at most {MAX_BODY_BYTES} bytes")
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def on_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation_response(exc)

    @app.exception_handler(DomainError)
    async def on_domain(_: Request, exc: DomainError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        retry_after = getattr(exc, "retry_after_s", None)
        if retry_after is not None:
            headers = {"Retry-After": str(retry_after)}
        return _error(exc.status_code, exc.code, exc.message, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed"}
        headers = dict(exc.headers) if exc.headers else None
        if exc.status_code == 405:
            # RFC 9110 wants every method of the resource in `Allow`; Starlette names only those of
            # the first route whose path matched (GET and POST on one path are two routes here).
            headers = {**(headers or {}), "Allow": ", ".join(_allowed_methods(app, request.scope))}
        return _error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail),
                      headers=headers)

    @app.exception_handler(Exception)
    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error: %s", type(exc).__name__)
        return _error(500, "internal_error",
                      "something went wrong on our side; nothing was changed, please try again")

    def caller(request: Request) -> Principal:
        scope, authorization, mode = dict(request.scope), request.headers.get("authorization"), auth_mode()
        if verify_token is not None and mode == "jwt":
            # The claims in the shape API Gateway's JWT authorizer gives them: one claims → Principal mapping.
            claims = verify_token(authorization)
            scope["aws.event"] = {"requestContext": {"authorizer": {"jwt": {"claims": claims}}}}
        return principal_from(scope, authorization, mode)

    # What every signed-in route may answer before it runs: 401, and 503 when this app checks
    # tokens itself and cannot (`verify_token`, the stream function).
    signed_in = (401, 503) if verify_token is not None else (401,)
    # The ids' patterns are documented here and checked by the services (their messages).
    session_path = Path(json_schema_extra=contract.SESSION_ID)
    handoff_path = Path(json_schema_extra=contract.HANDOFF_ID)
    approval_path = Path(json_schema_extra=contract.APPROVAL_ID)
    document_path = Path(json_schema_extra=contract.DOCUMENT_ID)
    product_path = Path(json_schema_extra=contract.CATALOGUE_ID)
    item_path = Path(json_schema_extra=contract.CATALOGUE_ID)

    @app.post("/v1/sessions/{session_id}/messages", response_model=TurnOut,
              responses=errors(400, *signed_in, 403, 409, 422, 429, 503))
    def post_message(message: MessageIn, session_id: str = session_path,
                     who: Principal = Depends(caller)) -> TurnOut:  # noqa: B008
        return get_service().handle_message(who, session_id, message)

    @app.post("/v1/sessions/{session_id}/messages:stream", response_class=StreamingResponse,
              description=STREAM_DOC,
              responses={200: {"description": "The turn as server-sent events (each event below).",
                               "content": {"text/event-stream": {"schema": contract.stream_event_schema()}}},
                         **errors(400, *signed_in, 403, 409, 422, 429, 503)})
    async def stream_message(message: MessageIn, session_id: str = session_path,
                             who: Principal = Depends(caller)) -> StreamingResponse:  # noqa: B008
        pump = EventPump(lambda: get_service().stream_message(who, session_id, message)).start()
        try:
            first = await pump.first()  # a refused turn (403, 409, 422, 429) raises here: a JSON error
        except BaseException:
            pump.close()
            raise
        return StreamingResponse(turn_stream(pump, first, heartbeat_s=stream_heartbeat_s),
                                 media_type="text/event-stream", headers=STREAM_HEADERS)

    @app.get("/v1/sessions/{session_id}", response_model=SessionOut,
             responses=errors(*signed_in, 403, 404, 422))
    def get_session(session_id: str = session_path, who: Principal = Depends(caller)) -> SessionOut:  # noqa: B008
        return get_service().get_session(who, session_id)

    # -- human in the loop (agent role) -----------------------------------------------------
    @app.get("/v1/agent/sessions/{session_id}", response_model=AgentSessionOut,
             responses=errors(*signed_in, 403, 404, 422))
    def agent_session(session_id: str = session_path, turns: int = Query(20, ge=1, le=50),
                      who: Principal = Depends(caller)) -> AgentSessionOut:  # noqa: B008
        """The session viewer (agent role): public messages beside each turn's trace."""
        return get_service().agent_session(who, session_id, turns=turns)

    def handoffs() -> Any:
        if get_handoffs is None:
            raise DependencyUnavailable("human handoff is not configured")
        return get_handoffs()

    @app.post("/v1/approvals/{approval_id}", response_model=ApprovalOut,
              responses=errors(400, *signed_in, 403, 404, 409, 422))
    def decide_approval(body: DecisionIn, approval_id: str = approval_path,
                        who: Principal = Depends(caller)) -> ApprovalOut:  # noqa: B008
        return get_service().decide_approval(who, approval_id, body)

    @app.get("/v1/agent/approvals",
             responses={200: json_answer("ApprovalPage"), **errors(*signed_in, 403, 422, 503)})
    def pending_approvals(limit: int = Query(25, ge=1, le=100),
                          cursor: str | None = Query(None,
                                                     json_schema_extra=contract.cursor("pending-approvals")),
                          who: Principal = Depends(caller)) -> Any:  # noqa: B008
        if get_approvals is None:
            raise DependencyUnavailable("approvals are not configured")
        return get_approvals().list_pending(who, limit=limit, cursor=cursor).model_dump(mode="json")

    @app.get("/v1/agent/handoffs",
             responses={200: json_answer("HandoffPage"), **errors(*signed_in, 403, 422, 503)})
    def open_handoffs(limit: int = Query(25, ge=1, le=100),
                      cursor: str | None = Query(None, json_schema_extra=contract.cursor("open-handoffs")),
                      who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return handoffs().list_open(who, limit=limit, cursor=cursor).model_dump(mode="json")

    handoff_answers: dict[int | str, dict[str, Any]] = {200: json_answer("HandoffPackage")}

    @app.get("/v1/agent/handoffs/{handoff_id}", responses={**handoff_answers,
                                                           **errors(*signed_in, 403, 404, 422, 503)})
    def get_handoff(handoff_id: str = handoff_path, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return handoffs().get(who, handoff_id).model_dump(mode="json")

    @app.post("/v1/agent/handoffs/{handoff_id}/claim",
              responses={**handoff_answers, **errors(*signed_in, 403, 404, 409, 422, 503)})
    def claim_handoff(handoff_id: str = handoff_path, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return handoffs().claim(who, handoff_id).model_dump(mode="json")

    @app.post("/v1/agent/handoffs/{handoff_id}/replies",
              responses={**handoff_answers, **errors(400, *signed_in, 403, 404, 409, 422, 503)})
    def reply_handoff(body: AgentReplyIn, handoff_id: str = handoff_path,
                      who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return handoffs().reply(who, handoff_id, body.text).model_dump(mode="json")

    @app.post("/v1/agent/handoffs/{handoff_id}/close",
              responses={**handoff_answers, **errors(*signed_in, 403, 404, 409, 422, 503)})
    def close_handoff(handoff_id: str = handoff_path, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return handoffs().close(who, handoff_id).model_dump(mode="json")

    @app.post("/v1/debug/text2cypher", response_model=dict[str, Any],
              responses=errors(400, *signed_in, 403, 422, 503))
    def debug_text2cypher(body: Text2CypherIn, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """The generated query, each validation step and its verdict (agent/admin only)."""
        if not who.is_agent:
            raise Forbidden("the Text2Cypher debugger is for agents and admins")
        if text2cypher_debug is None:
            raise DependencyUnavailable("Text2Cypher is not configured")
        try:
            return text2cypher_debug(body.question, body.model)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None

    # -- knowledge base (admin role) ----------------------------------------------------------
    def knowledge(who: Principal) -> Any:
        if not who.is_admin:
            raise Forbidden("the knowledge-base API is for admins")
        if get_knowledge is None:
            raise DependencyUnavailable("the knowledge base is not configured")
        return get_knowledge()

    def upload(who: Principal, file: UploadFile, title: str | None, document_id: str | None,
               mode: str) -> dict[str, Any]:
        kb = knowledge(who)
        data = file.file.read(kb.max_bytes + 1)  # one byte over the limit is enough to refuse it
        result = kb.upload(data, file.filename or "", file.content_type, title=title,
                           document_id=document_id, mode=mode, actor=who.subject)
        return result.as_dict()

    kb_errors = errors(400, *signed_in, 403, 404, 409, 413, 415, 422, 503)

    @app.post("/v1/kb/documents", status_code=201, responses=kb_errors)
    def upload_document(file: UploadFile = File(..., description="Markdown, HTML, plain text or PDF"),  # noqa: B008
                        title: str | None = Form(None, max_length=200),  # noqa: B008
                        document_id: str | None = Form(None, max_length=64),  # noqa: B008
                        who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """Upload a new document: parsed, chunked, embedded and searchable when this returns
        (`{document_id, version, chunks, ...}`); 409 if the id exists (replace it with PUT)."""
        return upload(who, file, title, document_id, "create")

    @app.put("/v1/kb/documents/{document_id}", responses=kb_errors)
    def replace_document(document_id: str = document_path, file: UploadFile = File(...),  # noqa: B008
                         title: str | None = Form(None, max_length=200),  # noqa: B008
                         who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """Replace a document with a new file: the new version serves as soon as this returns, and
        the old version's stale chunks are gone; an identical file changes nothing."""
        return upload(who, file, title, document_id, "replace")

    @app.post("/v1/kb/uploads", status_code=201, responses=kb_errors)
    def presign_upload(body: KbUploadIn, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """A presigned S3 POST for one document (files larger than the direct upload's limit): the
        browser posts `upload.fields` and the file to `upload.url`; the bucket's event ingests it
        (GET /v1/kb/documents/{document_id} shows the new version once it is done)."""
        knowledge(who)
        if presign_kb_upload is None:
            raise DependencyUnavailable("uploads through S3 are not configured")
        return presign_kb_upload(body.filename, body.document_id, body.title)

    @app.get("/v1/kb/documents", responses=errors(400, *signed_in, 403, 422, 503))
    def list_documents(who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return {"documents": knowledge(who).documents()}

    @app.get("/v1/kb/documents/{document_id}", responses=errors(400, *signed_in, 403, 404, 422, 503))
    def get_document(document_id: str = document_path, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        return knowledge(who).document(document_id)

    @app.delete("/v1/kb/documents/{document_id}", status_code=204,
                responses=errors(400, *signed_in, 403, 404, 422, 503))
    def delete_document(document_id: str = document_path, who: Principal = Depends(caller)) -> Response:  # noqa: B008
        """Remove a document: no answer cites it from the moment this returns."""
        knowledge(who).delete(document_id)
        return Response(status_code=204)

    # -- catalogue (admin role): the knowledge links and answers follow without a rebuild -----
    def catalogue(who: Principal) -> Any:
        if not who.is_admin:
            raise Forbidden("the catalogue API is for admins")
        if get_catalogue is None:
            raise DependencyUnavailable("catalogue changes are not configured")
        return get_catalogue()

    @app.put("/v1/catalogue/products/{product_id}",
             responses=errors(400, *signed_in, 403, 409, 422, 503))
    def put_product(body: ProductBody, product_id: str = product_path,
                    who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """Add a product or change one (name, category, variants); chunks that name it are linked."""
        from csagent.knowledge.catalogue import ProductIn, VariantIn

        sync = catalogue(who)
        variants = [VariantIn(v.item_id, v.price, v.available, v.options) for v in body.variants]
        return sync.upsert_product(ProductIn(product_id, body.name, body.category, variants))

    @app.patch("/v1/catalogue/variants/{item_id}", responses=errors(400, *signed_in, 403, 404, 422, 503))
    def patch_variant(body: VariantPatch, item_id: str = item_path,
                      who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """Change a variant's price or availability; the next answer quotes the new value."""
        return catalogue(who).update_variant(item_id, price=body.price, available=body.available)

    @app.post("/v1/catalogue/products/{product_id}/discontinue",
              responses=errors(400, *signed_in, 403, 404, 422, 503))
    def discontinue_product(product_id: str = product_path, who: Principal = Depends(caller)) -> Any:  # noqa: B008
        """Discontinue a product: every variant unavailable; its manuals stay linked."""
        return catalogue(who).discontinue(product_id)

    @app.get("/healthz", response_model=HealthOut,
             responses={503: {"model": HealthOut, "description": "A dependency is unreachable."}, **errors()})
    def healthz() -> JSONResponse:
        checks = get_health()
        healthy = all(checks.values())
        return JSONResponse(status_code=200 if healthy else 503,
                            content={"status": "ok" if healthy else "degraded", "checks": checks})

    lazily_documented(app)
    return app
