"""Streaming a turn (POST /v1/sessions/{id}/messages:stream): the order of the events, the answer
only once the graph has decided, errors before and after the stream starts, and token checks
where no API Gateway authorizer stands in front.

The real graph and `ConversationService` run with a fake understanding, a fake tool, fake
sessions and LangGraph's in-memory saver; the HTTP edge is the real FastAPI app."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from csagent.domain.errors import Conflict, DependencyUnavailable, Forbidden
from csagent.domain.models import Principal, Task, ToolResult
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.guardrails.ratelimit import RateLimited
from csagent.http.app import create_app
from csagent.http.sse import INTERRUPTED, answer_chunks
from csagent.http.tokens import TokenVerifier
from csagent.resilience.bounds import Bounds
from csagent.resilience.faults import FaultPlan
from csagent.service.conversation import ConversationService
from csagent.service.schemas import MessageIn, TurnOut
from csagent.streaming.progress import progress_labels, received
from csagent.tools.context import ToolContext
from csagent.understanding import Clause, Understanding

CUSTOMER = "james_li_5688"
DEV = {"Authorization": f"Bearer dev:{CUSTOMER}"}
ORDER = "#W1234567"
STATUS_PHRASE = "processed"  # the fake order's status: it may appear in the answer, never in progress


# -- fakes -------------------------------------------------------------------------------------
def order_status_tool(delay_s: float = 0.0) -> Callable[[Task, ToolContext], ToolResult]:
    def tool(task: Task, ctx: ToolContext) -> ToolResult:
        time.sleep(delay_s)
        return ToolResult.ok(task, {"template_id": "order_overview", "row": {
            "order_id": task.args.params["order_id"], "order_status": STATUS_PHRASE, "shipments": [],
            "items": [{"name": "Headphones", "product_id": "p-1"}]}})
    return tool


def understand_order_status(text: str, state: Any) -> Understanding:
    clause = Clause(text="where is my order", intent="order_status", confidence=0.9,
                    entities={"order_id": ORDER})
    return Understanding(route="knowledge_and_actions", intent="order_status", confidence=0.9,
                         clauses=(clause,))


class FakeSessions:
    """Owner check and lease as the DynamoDB adapter decides them, in memory."""

    def __init__(self, owner: str = CUSTOMER, busy: bool = False) -> None:
        self.owner, self.busy = owner, busy
        self.begun: list[str] = []
        self.released: list[str] = []

    def get_owned(self, session_id: str, owner: str) -> Any:
        return SimpleNamespace(status="active", turn_count=len(self.begun))

    def begin_turn(self, session_id: str, owner: str, head: str | None) -> Any:
        if owner != self.owner:
            raise Forbidden("this session belongs to another customer")
        if self.busy:
            raise Conflict("another message on this session is still being answered; retry shortly")
        lease = f"lease-{len(self.begun) + 1}"
        self.begun.append(lease)
        return lease

    def release(self, lease: Any) -> None:
        self.released.append(lease)


class Limiter:
    def __init__(self, allow: bool) -> None:
        self.allow = allow

    def consume(self, customer_id: str) -> None:
        if not self.allow:
            raise RateLimited(7)


def service(*, sessions: FakeSessions | None = None, tool_delay_s: float = 0.0, faults: str | None = None,
            rate_limited: bool = False) -> ConversationService:
    deps = GraphDeps(understand=understand_order_status,
                     tools={"predefined_cypher": order_status_tool(tool_delay_s)},
                     make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid),  # type: ignore[arg-type]
                     bounds=Bounds(backoff_base_s=0.001, backoff_max_s=0.002),
                     fault_plan=FaultPlan.parse(faults) if faults else None)
    graph = build_graph().compile(checkpointer=InMemorySaver())
    return ConversationService(graph, sessions or FakeSessions(), deps,
                               rate_limiter=Limiter(allow=not rate_limited))


def client_for(svc: Any, *, heartbeat_s: float = 10.0, auth_mode: str = "dev",
               verify_token: Callable[[str | None], dict[str, Any]] | None = None) -> TestClient:
    app = create_app(lambda: svc, lambda: {"neo4j": True}, lambda: auth_mode, verify_token=verify_token,
                     stream_heartbeat_s=heartbeat_s)
    return TestClient(app, raise_server_exceptions=False)


def parse_sse(body: str) -> list[tuple[str, Any]]:
    """(event, data) per event, ("comment", text) per comment line, in order."""
    events: list[tuple[str, Any]] = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        if block.startswith(":"):
            events.append(("comment", block[1:].strip()))
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def stream(client: TestClient, session_id: str = "s1", body: dict[str, Any] | None = None,
           headers: dict[str, str] | None = None) -> Any:
    return client.post(f"/v1/sessions/{session_id}/messages:stream",
                       json=body or {"text": f"where is {ORDER}?"},
                       headers=DEV if headers is None else headers)


# -- a streamed turn ---------------------------------------------------------------------------
def test_a_streamed_turn_is_progress_then_the_answer_then_done() -> None:
    # Given the real graph behind the streaming endpoint
    client = client_for(service())
    # When a customer asks where her order is
    response = stream(client)
    # Then the stream is progress events (accepted first), then the answer in chunks, then done
    assert response.status_code == 200
    kinds = [kind for kind, _ in parse_sse(response.text)]
    first_answer, done = kinds.index("answer"), kinds.index("done")
    assert kinds[0] == "progress" and set(kinds[:first_answer]) == {"progress"}
    assert set(kinds[first_answer:done]) == {"answer"} and done == len(kinds) - 1


def test_the_answer_chunks_add_up_to_the_reply_in_the_done_event() -> None:
    # Given a streamed turn
    events = parse_sse(stream(client_for(service())).text)
    # When the answer chunks are appended
    text = "".join(data["text"] for kind, data in events if kind == "answer")
    # Then they are exactly the reply of the final turn, which answers the question
    done = dict(events)["done"]
    assert text == done["reply"]["text"] and STATUS_PHRASE in text
    assert done["status"] == "answered" and done["tasks"][0]["status"] == "success"


def test_no_answer_text_is_sent_before_the_graph_has_finished() -> None:
    # Given a streamed turn
    events = parse_sse(stream(client_for(service())).text)
    progress = [data for kind, data in events if kind == "progress"]
    first_answer = [kind for kind, _ in events].index("answer")
    # Then the last progress before the answer is the graph's last node (respond), nothing of the
    # answer shows in any progress event, and no progress follows the answer
    assert events[first_answer - 1] == ("progress", progress[-1]) and progress[-1]["node"] == "respond"
    assert all(STATUS_PHRASE not in json.dumps(data) for data in progress)
    assert "progress" not in [kind for kind, _ in events[first_answer:]]


def test_progress_names_the_steps_in_the_customers_words_and_nothing_else() -> None:
    # Given a streamed turn
    progress = [data for kind, data in parse_sse(stream(client_for(service())).text) if kind == "progress"]
    labels = progress_labels()
    # Then each event is a node, its label and a step, counted from 0 ("received") without gaps
    assert progress[0] == received().as_dict()
    assert [p["step"] for p in progress] == list(range(len(progress)))
    assert {"route", "plan", "run_task", "summarise", "respond"} <= {p["node"] for p in progress}
    assert all(set(p) == {"node", "label", "step"} for p in progress)
    assert all(p["label"] == labels.label(p["node"]) for p in progress[1:])


def test_every_node_of_the_graph_has_its_own_label() -> None:
    # Given the graph's nodes and the labels file
    nodes = set(build_graph().nodes)
    # Then none falls back to the generic label
    assert nodes - set(progress_labels().nodes) == set()


def test_the_done_event_is_the_turn_the_non_streaming_endpoint_returns() -> None:
    # Given two identical sessions, one asked through each endpoint
    client = client_for(service())
    streamed = dict(parse_sse(stream(client, "s-stream").text))["done"]
    plain = client.post("/v1/sessions/s-plain/messages", json={"text": f"where is {ORDER}?"},
                        headers=DEV).json()
    # Then both are the same TurnOut (but for the session id and the measured times)
    def comparable(turn: dict[str, Any]) -> dict[str, Any]:
        trace = {k: v for k, v in turn["trace"].items() if k not in ("turn_ms", "node_timings_ms")}
        tasks = [{k: v for k, v in t.items() if k != "latency_ms"} for t in turn["tasks"]]
        return {**turn, "session_id": None, "trace": trace, "tasks": tasks}
    assert comparable(TurnOut.model_validate(streamed).model_dump(mode="json")) == comparable(plain)
    assert set(streamed["trace"]["node_timings_ms"]) == set(plain["trace"]["node_timings_ms"])


def test_the_stream_has_no_buffering_headers() -> None:
    # When a turn is streamed
    response = stream(client_for(service()))
    # Then it is an event stream that no cache or proxy holds back
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache" and response.headers["x-accel-buffering"] == "no"


def test_a_slow_turn_sends_keep_alive_comments_while_it_works() -> None:
    # Given a tool that takes 0.4 s and a heartbeat after 0.05 s of silence
    client = client_for(service(tool_delay_s=0.4), heartbeat_s=0.05)
    # When a turn is streamed
    events = parse_sse(stream(client).text)
    kinds = [kind for kind, _ in events]
    # Then keep-alive comments come while the tool works, before the answer, and the turn still ends
    assert ("comment", "keep-alive") in events
    assert kinds.index("comment") < kinds.index("answer") and kinds[-1] == "done"


def test_the_openapi_document_describes_the_event_stream() -> None:
    # Given the app's OpenAPI document
    spec = client_for(service()).get("/openapi.json").json()
    operation = spec["paths"]["/v1/sessions/{session_id}/messages:stream"]["post"]
    # Then the route takes the message body and answers with text/event-stream or a JSON error
    assert "text/event-stream" in operation["responses"]["200"]["content"]
    assert {"401", "403", "409", "422", "429"} <= set(operation["responses"])
    assert "answer" in operation["description"] and "done" in operation["description"]


# -- errors before the stream starts: plain JSON -------------------------------------------------
@pytest.mark.parametrize(("make", "request_kwargs", "status", "code"), [
    (lambda: service(), {"headers": {}}, 401, "unauthenticated"),
    (lambda: service(sessions=FakeSessions(owner="someone_else")), {}, 403, "forbidden"),
    (lambda: service(sessions=FakeSessions(busy=True)), {}, 409, "conflict"),
    (lambda: service(), {"body": {"text": ""}}, 422, "invalid_input"),
    (lambda: service(), {"body": {"text": "hi", "admin": True}}, 422, "unknown_field"),
    (lambda: service(), {"session_id": "bad id!"}, 422, "invalid_input"),
    (lambda: service(rate_limited=True), {}, 429, "rate_limited"),
])
def test_a_refused_turn_is_a_json_error_not_a_stream(make, request_kwargs, status, code) -> None:
    # Given a request the turn refuses (no sign-in, another's session, busy, invalid, rate limited)
    # When it is streamed
    response = stream(client_for(make()), **request_kwargs)
    # Then it is the same JSON error the non-streaming endpoint gives, and no stream
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == code


def test_a_rate_limited_stream_says_when_to_retry() -> None:
    response = stream(client_for(service(rate_limited=True)))
    assert response.status_code == 429 and response.headers["retry-after"] == "7"


def test_a_body_over_the_limit_is_refused_before_anything_runs() -> None:
    sessions = FakeSessions()
    response = client_for(service(sessions=sessions)).post(
        "/v1/sessions/s1/messages:stream", content=b"x" * (7 * 1024 * 1024),
        headers={**DEV, "content-type": "application/json"})
    assert response.status_code == 413 and sessions.begun == []


# -- errors after the stream started: an error event, the session left free --------------------
def test_a_turn_that_fails_midway_ends_with_an_error_event_and_frees_the_lease() -> None:
    # Given a graph that crashes just before it would summarise
    sessions = FakeSessions()
    client = client_for(service(sessions=sessions, faults="graph:crash_before_summarise:1.0"))
    # When a turn is streamed
    events = parse_sse(stream(client).text)
    kinds = [kind for kind, _ in events]
    # Then progress came, then one error event says what to do; no answer, no done
    assert kinds[0] == "progress" and kinds[-1] == "error"
    assert "answer" not in kinds and "done" not in kinds
    assert events[-1][1] == {"error": {"code": "internal_error", "message": INTERRUPTED}}
    # And the turn's lease was given back: the next message is not refused as busy
    assert sessions.released == sessions.begun == ["lease-1"]


def test_an_error_event_shows_no_internals() -> None:
    # Given a service whose turn fails with an internal message after it started
    class Failing:
        def stream_message(self, principal: Principal, session_id: str, message: MessageIn) -> Any:
            yield received()
            raise RuntimeError("neo4j password is hunter2")
    # When it is streamed
    body = stream(client_for(Failing())).text
    # Then the customer reads the public message only
    assert "hunter2" not in body and "Traceback" not in body and INTERRUPTED in body


def test_a_domain_error_after_the_start_keeps_its_code() -> None:
    # Given a turn that loses a dependency after it started
    class Unavailable:
        def stream_message(self, principal: Principal, session_id: str, message: MessageIn) -> Any:
            yield received()
            raise DependencyUnavailable("the store's database is not reachable right now")
    # When it is streamed
    events = parse_sse(stream(client_for(Unavailable())).text)
    # Then the error event names it precisely
    assert events[-1] == ("error", {"error": {"code": "dependency_unavailable",
                                              "message": "the store's database is not reachable right now"}})


# -- the answer's chunks -----------------------------------------------------------------------
@given(st.text(max_size=400))
def test_answer_chunks_always_add_up_to_the_reply(text: str) -> None:
    # Property: appending the chunks gives the reply back, and no chunk is empty
    chunks = answer_chunks(text, 48)
    assert "".join(chunks) == text and all(chunks)


def test_answer_chunks_cut_between_words() -> None:
    chunks = answer_chunks("Your order #W1234567 was processed and ships with UPS tomorrow morning.", 24)
    assert all(chunk.endswith(" ") for chunk in chunks[:-1]) and len(chunks) > 1


# -- tokens verified in the app (the Function URL has no authorizer) ----------------------------
ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_TEST"
CLIENT_ID = "app-client-1"


@pytest.fixture(scope="module")
def keys() -> dict[str, Any]:
    from joserfc.jwk import RSAKey

    signing, other = RSAKey.generate_key(2048, parameters={"kid": "k1"}), RSAKey.generate_key(2048)
    return {"signing": signing, "other": other, "jwks": {"keys": [signing.as_dict(private=False)]}}


def token(key: Any, kid: str = "k1", alg: str = "RS256", **overrides: Any) -> str:
    from joserfc import jwt

    now = int(time.time())
    claims = {"sub": str(uuid.uuid4()), "iss": ISSUER, "aud": CLIENT_ID, "token_use": "id", "iat": now,
              "exp": now + 600, "custom:customer_id": CUSTOMER, **overrides}
    return jwt.encode({"alg": alg, "kid": kid}, {k: v for k, v in claims.items() if v is not None}, key)


def verifier(jwks: dict[str, Any], fetches: list[str] | None = None) -> TokenVerifier:
    def fetch(issuer: str) -> dict[str, Any]:
        if fetches is not None:
            fetches.append(issuer)
        return jwks
    return TokenVerifier(ISSUER, [CLIENT_ID], fetch)


def test_a_valid_cognito_token_streams_the_turn_as_its_customer(keys) -> None:
    # Given the app verifying tokens itself (AUTH_MODE=jwt, no authorizer in front)
    sessions = FakeSessions()
    client = client_for(service(sessions=sessions), auth_mode="jwt",
                        verify_token=verifier(keys["jwks"]).claims)
    # When the customer streams a turn with her ID token
    response = stream(client, headers={"Authorization": f"Bearer {token(keys['signing'])}"})
    # Then the turn runs as the customer the token names
    assert response.status_code == 200 and parse_sse(response.text)[-1][0] == "done"
    assert sessions.begun == ["lease-1"]


@pytest.mark.parametrize("case", ["expired", "other_issuer", "other_audience", "forged", "no_token",
                                  "dev_token", "access_token_of_another_client", "unknown_kid"])
def test_a_token_the_authorizer_would_refuse_is_refused(keys, case) -> None:
    # Given tokens that are expired, from another pool or app, signed by another key, or absent
    tokens = {
        "expired": token(keys["signing"], exp=int(time.time()) - 120),
        "other_issuer": token(keys["signing"], iss="https://cognito-idp.us-east-1.amazonaws.com/other"),
        "other_audience": token(keys["signing"], aud="another-app"),
        "forged": token(keys["other"]),
        "no_token": None,
        "dev_token": f"dev:{CUSTOMER}",
        "access_token_of_another_client": token(keys["signing"], token_use="access", aud=None,
                                                client_id="another-app"),
        "unknown_kid": token(keys["other"], kid="k-unknown"),
    }
    headers = {} if tokens[case] is None else {"Authorization": f"Bearer {tokens[case]}"}
    sessions = FakeSessions()
    client = client_for(service(sessions=sessions), auth_mode="jwt",
                        verify_token=verifier(keys["jwks"]).claims)
    # When one is used to stream a turn
    response = stream(client, headers=headers)
    # Then it is a 401 and no turn began
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
    assert sessions.begun == []


def test_an_access_token_of_the_app_client_is_accepted(keys) -> None:
    # Given an access token (client_id, no aud) of the accepted app client
    claims = verifier(keys["jwks"]).claims(
        f"Bearer {token(keys['signing'], token_use='access', aud=None, client_id=CLIENT_ID)}")
    # Then its claims come back verified
    assert claims["client_id"] == CLIENT_ID and claims["iss"] == ISSUER


def test_an_unsigned_or_hmac_token_never_passes(keys) -> None:
    # Given a token signed with HS256 using the public key's bytes as the secret (alg confusion)
    from joserfc import jwt
    from joserfc.jwk import OctKey

    from csagent.domain.errors import Unauthenticated

    now = int(time.time())
    forged = jwt.encode({"alg": "HS256", "kid": "k1"},
                        {"sub": "x", "iss": ISSUER, "aud": CLIENT_ID, "token_use": "id", "exp": now + 600},
                        OctKey.import_key(json.dumps(keys["jwks"]).encode()))
    # Then it is refused
    with pytest.raises(Unauthenticated):
        verifier(keys["jwks"]).claims(f"Bearer {forged}")


def test_a_rotated_key_is_fetched_once_and_forged_key_ids_do_not_flood_the_issuer(keys) -> None:
    from joserfc.jwk import RSAKey

    from csagent.domain.errors import Unauthenticated

    # Given a verifier that has the pool's current keys, and a new key the pool starts signing with
    rotated = RSAKey.generate_key(2048, parameters={"kid": "k2"})
    jwks = {"keys": [keys["signing"].as_dict(private=False)]}
    fetches: list[str] = []
    clock = [1_000.0]
    checker = TokenVerifier(ISSUER, [CLIENT_ID], lambda issuer: fetches.append(issuer) or jwks,
                            refetch_after_s=60, clock=lambda: clock[0])
    times = {"iat": 1_000, "exp": 5_000}
    checker.claims(f"Bearer {token(keys['signing'], **times)}")
    # When the pool rotates (the new key is published) a minute later
    jwks["keys"].append(rotated.as_dict(private=False))
    clock[0] += 61
    checker.claims(f"Bearer {token(rotated, kid='k2', **times)}")
    # Then the new key was fetched once; tokens with made-up key ids right after fetch nothing more
    for _ in range(5):
        with pytest.raises(Unauthenticated):
            checker.claims(f"Bearer {token(keys['other'], kid='forged', **times)}")
    assert len(fetches) == 2


def test_an_unreachable_identity_provider_is_a_503_not_a_401(keys) -> None:
    # Given a verifier whose JWKS cannot be fetched
    def unreachable(issuer: str) -> dict[str, Any]:
        raise OSError("connection refused")
    checker = TokenVerifier(ISSUER, [CLIENT_ID], unreachable)
    client = client_for(service(), auth_mode="jwt", verify_token=checker.claims)
    # When a turn is streamed
    response = stream(client, headers={"Authorization": f"Bearer {token(keys['signing'])}"})
    # Then the customer hears it is on our side, not that her sign-in is bad
    assert response.status_code == 503 and response.json()["error"]["code"] == "dependency_unavailable"


# -- the node budget ---------------------------------------------------------------------------
def test_a_turn_stopped_at_the_recursion_limit_is_handed_to_a_person_and_frees_the_lease() -> None:
    # Given a graph allowed far fewer steps than a turn takes (validation bypassed on purpose)
    sessions = FakeSessions()
    deps = GraphDeps(understand=understand_order_status, tools={"predefined_cypher": order_status_tool(0.0)},
                     make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid),  # type: ignore[arg-type]
                     bounds=Bounds.model_construct(**{**Bounds().model_dump(), "recursion_limit": 2}))
    svc = ConversationService(build_graph().compile(checkpointer=InMemorySaver()), sessions, deps)
    # When a customer asks where her order is
    turn = svc.handle_message(Principal(subject="c", customer_id=CUSTOMER), "s-budget",
                              MessageIn(text=f"where is {ORDER}?"))
    # Then LangGraph's recursion limit is answered as a spent node budget, not an error, and the
    # session is free for the next message
    assert turn.trace["route"] == "node_budget_exceeded"
    assert sessions.released == sessions.begun == ["lease-1"]
