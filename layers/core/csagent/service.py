"""The conversation service: the one use case the router handler calls.

It checks who owns the session, takes the turn lease, runs the graph on the session's
checkpoint thread, records the outcome and shapes the public response. It knows nothing of
HTTP or Lambda events.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from csagent import observability
from csagent.domain.errors import Forbidden, InvalidInput, NotFound
from csagent.domain.models import Principal
from csagent.streaming.progress import Progress, progress_of, received

#: The session id rule, also the pattern of `session_id` in the OpenAPI document (`csagent.http.contract`).
SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
SESSION_ID = re.compile(SESSION_ID_PATTERN)
SESSION_ID_RULE = "session_id must be 1-128 characters of letters, digits, '_', '.', ':' or '-'"
ORDER_ID_PATTERN = r"^#?W[0-9]{7}$"  # [0-9], not \d: Python's \d takes any Unicode digit
ORDER_ID = re.compile(ORDER_ID_PATTERN)


MAX_IMAGE_BYTES = 3 * 1024 * 1024
#: Standard base64 with its padding, and nothing else (no whitespace, no stray '='): the check of
#: `Attachment.data` and its pattern in the OpenAPI document.
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


#: "Not blank": a character pydantic's `str_strip_whitespace` keeps. It strips Unicode White_Space
#: (not the same set as Python's `str.isspace` nor as a JSON Schema regex's `\s`), so the set is
#: spelled out. The pattern of every text field whose model strips and then needs one character.
NOT_BLANK_PATTERN = r"[^\t\n\x0b\x0c\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def on_string(**keywords: Any) -> Callable[[dict[str, Any]], None]:
    """`json_schema_extra` that adds JSON Schema keywords (a pattern, a format) to the string
    branch of an optional field's schema (`anyOf: [string, null]`), or to a string's own."""

    def add(schema: dict[str, Any]) -> None:
        for branch in schema.get("anyOf", [schema]):
            if branch.get("type") == "string":
                branch.update(keywords)

    return add


def is_base64(value: str) -> bool:
    """Whether `value` matches BASE64_PATTERN (ten times quicker than the regex on 4 MB):
    whole quanta, at most two '=' and only at the end, the standard alphabet."""
    body = value.rstrip("=")
    if len(value) % 4 or len(value) - len(body) > 2 or "=" in body:
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


class Attachment(BaseModel):
    """An image the customer attached (a shipping label, a screenshot), base64-encoded."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["image"] = "image"
    media_type: Literal["image/png", "image/jpeg", "image/webp", "image/gif"]
    data: str = Field(min_length=8, max_length=MAX_IMAGE_BYTES * 4 // 3 + 4,
                      description="The image bytes, base64-encoded (at most 3 MiB decoded).",
                      json_schema_extra=on_string(pattern=BASE64_PATTERN))

    @field_validator("data")
    @classmethod
    def _base64(cls, value: str) -> str:
        if not is_base64(value):
            raise ValueError("data must be base64-encoded image bytes")
        return value

    def image_bytes(self) -> bytes:
        return base64.b64decode(self.data)


class MessageIn(BaseModel):
    """The body of POST /v1/sessions/{session_id}/messages."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    text: str = Field(min_length=1, max_length=4000, description="What the customer wrote.",
                      json_schema_extra=on_string(pattern=NOT_BLANK_PATTERN))
    order_id: str | None = Field(
        default=None,
        description="The order the customer is looking at in the app (e.g. '#W2611340'), if any.",
        json_schema_extra=on_string(pattern=ORDER_ID_PATTERN),
    )
    attachments: list[Attachment] = Field(default_factory=list, max_length=3)

    @field_validator("order_id")
    @classmethod
    def _order_id(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not ORDER_ID.fullmatch(value):
            raise ValueError("order_id must look like '#W' followed by 7 digits, e.g. '#W2611340'")
        return value if value.startswith("#") else "#" + value


class TaskOut(BaseModel):
    task_id: str
    task_type: str
    tool: str
    status: str
    latency_ms: float
    error: dict[str, Any] | None = None


class ProposedAction(BaseModel):
    """A change listed back to the customer and waiting for their yes: exactly what will change
    (`summary`, the words of the reply), and whether a person must approve it afterwards."""

    action: str
    order_id: str | None = None
    summary: str
    requires_approval: bool = False
    amount: float | None = None


class TurnOut(BaseModel):
    session_id: str
    turn: int
    status: str
    reply: dict[str, Any]
    tasks: list[TaskOut]
    trace: dict[str, Any]
    proposed: list[ProposedAction] = Field(
        default_factory=list,
        description="With status awaiting_confirmation: the changes a 'yes' will make (else empty).")


# What a turn yields as it runs: progress while the graph works, the TurnOut once it has decided.
TurnEvent = Progress | TurnOut


class SessionOut(BaseModel):
    session_id: str
    status: str
    turn_count: int
    messages: list[dict[str, Any]]
    summary: str = Field(default="", description="Older turns, compressed (after 10 turns).")
    handoff: dict[str, Any] | None = Field(
        default=None, description="The conversation with a person, when the session was handed off.")
    proposed: list[ProposedAction] = Field(
        default_factory=list, description="The changes waiting for the customer's yes, if any.")


class TurnTrace(BaseModel):
    """One turn as the session viewer shows it: why the assistant did what it did."""

    turn: int
    status: str
    text: str = Field(description="What the customer wrote.")
    reply: str
    route: str
    confidence: float
    tasks: list[dict[str, Any]] = Field(
        description="Each task: type, tool, status, latency, attempts, healing steps, error.")
    node_timings_ms: dict[str, float]
    trace: dict[str, Any] = Field(
        description="The turn's notes: guard verdicts, summariser, degradations, model usage and cost.")


class AgentSessionOut(BaseModel):
    """GET /v1/agent/sessions/{session_id} (agent role): the public messages and the turn traces."""

    session_id: str
    customer_id: str | None
    status: str
    messages: list[dict[str, Any]]
    summary: str = ""
    turns: list[TurnTrace] = Field(description="The latest turns' traces, oldest first.")


class DecisionIn(BaseModel):
    """The body of POST /v1/approvals/{approval_id}."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    decision: Literal["approve", "reject"]
    note: str | None = Field(default=None, max_length=1000)


class ApprovalOut(BaseModel):
    approval: dict[str, Any]
    resumed: bool = Field(description="Whether this decision finished the customer's paused turn now.")
    turn: TurnOut | None = None


class Sessions(Protocol):
    def get_owned(self, session_id: str, owner: str) -> Any: ...
    def begin_turn(self, session_id: str, owner: str, head: str | None) -> Any: ...
    def release(self, lease: Any) -> None: ...


def check_session_id(session_id: str) -> str:
    if not SESSION_ID.fullmatch(session_id):  # fullmatch: `$` alone would let a trailing newline in
        raise InvalidInput(SESSION_ID_RULE)
    return session_id


def customer_of(principal: Principal) -> str:
    if not principal.customer_id:
        raise Forbidden("only a signed-in customer can talk to the assistant")
    return principal.customer_id


class ConversationService:
    def __init__(self, graph: Any, sessions: Sessions, deps: Any, *, handoffs: Any = None,
                 approvals: Any = None, rate_limiter: Any = None) -> None:
        self._rate_limiter = rate_limiter
        self._graph = graph
        self._sessions = sessions
        self._deps = deps
        self._handoffs = handoffs
        self._approvals = approvals

    def handle_message(self, principal: Principal, session_id: str, message: MessageIn) -> TurnOut:
        """One customer turn, logged once and measured (`csagent.observability.record_turn`)."""
        return _final(self.stream_message(principal, session_id, message))

    def stream_message(self, principal: Principal, session_id: str,
                       message: MessageIn) -> Iterator[TurnEvent]:
        """The same turn as `handle_message`, as it happens (POST .../messages:stream).

        Lazy: nothing runs until the first `next()`. That call runs every check that can refuse
        the turn (403, 422, 429, 409 raise there) and yields `Progress` step 0 ("received");
        then one `Progress` per graph node that finished; the last event is the `TurnOut`, the
        very object `handle_message` returns, logged and measured the same way. Pull every
        event on one thread (the turn may hold context variables across its steps)."""
        for event in self._turn(principal, session_id, message):
            if isinstance(event, TurnOut):
                observability.record_turn(event, text=message.text)
            yield event

    def _turn(self, principal: Principal, session_id: str, message: MessageIn) -> Iterator[TurnEvent]:
        """The one implementation of a customer turn, for both endpoints (see `stream_message`),
        metered: model calls, tokens and cost of the turn, and its call budget
        (`csagent.models.usage`; `_shape` puts them into the trace)."""
        from csagent.models.usage import metered_turn

        with metered_turn():
            yield from self._metered_turn(principal, session_id, message)

    def _metered_turn(self, principal: Principal, session_id: str, message: MessageIn) -> Iterator[TurnEvent]:
        customer_id = customer_of(principal)
        check_session_id(session_id)
        observability.bind_session(session_id)  # the correlation id of every log line of the turn
        if self._rate_limiter is not None:
            self._rate_limiter.consume(customer_id)  # RateLimited → 429 with Retry-After
        config = {"configurable": {"thread_id": session_id}, "recursion_limit": self._recursion_limit()}
        # One checkpoint read tells the head (for the lease), a paused approval, a crashed turn.
        snapshot = self._graph.get_state(config)
        lease = self._sessions.begin_turn(session_id, customer_id, _head(snapshot))
        started = time.perf_counter()
        outcome: TurnOut | dict[str, Any]
        try:
            yield received()  # inside the try: a caller that stops listening here frees the lease
            paused = _paused_approval(snapshot) if self._approvals is not None else None
            if paused is not None:
                # A refund is waiting for a person: the customer hears where it stands; an
                # expired review is closed now and reported.
                approval = self._approvals.get(paused)
                if approval.status.value == "pending":
                    self._sessions.release(lease)
                    outcome = self._waiting(session_id, config, (time.perf_counter() - started) * 1000)
                else:
                    outcome = yield from self._run(_resume_command(approval), config)
            elif _crashed_on(snapshot, message):
                # The last attempt at this same request stopped mid-turn: finish it from its
                # checkpoint, so nothing that already ran runs again.
                outcome = yield from self._run(None, config)
            else:
                # durability="exit": one checkpoint when the turn ends; writing it ends the lease.
                outcome = yield from self._run(
                    {"session_id": session_id, "customer_id": customer_id, "text": message.text,
                     "attachments": [a.model_dump() for a in message.attachments],
                     "order_id_hint": message.order_id},
                    config,
                )
        except BaseException as exc:
            self._sessions.release(lease)
            if not _node_budget_spent(exc):
                raise
            # The node budget is spent (a turn that would not converge): a person takes over.
            elapsed = (time.perf_counter() - started) * 1000
            yield self._over_budget(session_id, customer_id, message.text, elapsed)
            return
        if isinstance(outcome, TurnOut):
            yield outcome
            return
        yield self._shape(session_id, outcome, (time.perf_counter() - started) * 1000)

    def _run(self, graph_input: Any, config: dict[str, Any]) -> Generator[Progress, None, dict[str, Any]]:
        """Run the graph once: a `Progress` per node that finished, then (as the generator's
        return value) the final state, exactly what `graph.invoke` would have returned.

        `Pregel.invoke` is this same stream of "updates" and "values" collected: the last values
        are the state, and an interrupt (an approval pause) is kept under "__interrupt__"."""
        state: dict[str, Any] = {}
        interrupts: list[Any] = []
        step = 1
        for mode, chunk in self._graph.stream(graph_input, config, context=self._deps, durability="exit",
                                              stream_mode=["updates", "values"]):
            if mode == "values":
                state = chunk
                continue
            if isinstance(chunk, dict):
                interrupts.extend(chunk.get("__interrupt__") or ())
            for progress in progress_of(chunk, step):
                step = progress.step + 1
                yield progress
        return {**state, "__interrupt__": interrupts} if interrupts else state

    def _over_budget(self, session_id: str, customer_id: str, text: str, elapsed_ms: float) -> TurnOut:
        from csagent.handoff.triggers import HandoffDecision, HandoffReason, Urgency
        from csagent.replies import render

        status, reply = "partial", render("handoff_unavailable", "en")
        if self._handoffs is not None:
            state = {"session_id": session_id, "customer_id": customer_id, "text": text, "tasks": [],
                     "results": {}, "budget_exceeded": True}
            decision = HandoffDecision((HandoffReason.NODE_BUDGET_EXCEEDED,), Urgency.HIGH)
            try:
                self._handoffs.open(state, decision)
                status = "handed_off"
                why = render("handoff_why_node_budget_exceeded", "en")
                reply = render("handoff_reason", "en", reason=why)
            except Exception:  # noqa: BLE001 - the reply below says the team could not be reached
                pass
        trace = {"route": "node_budget_exceeded", "confidence": 1.0, "node_timings_ms": {},
                 "model_calls": 0, "turn_ms": round(elapsed_ms, 2)}
        return TurnOut(session_id=session_id, turn=0, status=status, reply={"text": reply, "citations": []},
                       tasks=[], trace=trace)

    def decide_approval(self, principal: Principal, approval_id: str, body: DecisionIn) -> ApprovalOut:
        """An agent approves or rejects; the customer's paused turn then finishes (once)."""
        from csagent.approvals.service import ApprovalExpired

        if self._approvals is None:
            raise InvalidInput("approvals are not configured")
        try:
            approval = self._approvals.decide(principal, approval_id, body.decision, body.note)
        except ApprovalExpired:
            approval = self._approvals.get(approval_id)
            self._finish_paused(approval)
            raise
        turn = self._finish_paused(approval)
        return ApprovalOut(approval=approval.model_dump(mode="json"), resumed=turn is not None, turn=turn)

    def _finish_paused(self, approval: Any) -> TurnOut | None:
        """Resume the approval's session if it is still paused on this approval (else no-op)."""
        config = {"configurable": {"thread_id": approval.session_id}}
        snapshot = self._graph.get_state(config)
        if _paused_approval(snapshot) != approval.approval_id:
            return None  # already resumed: approving twice changes nothing
        from csagent.models.usage import metered_turn

        observability.bind_session(approval.session_id)
        lease = self._sessions.begin_turn(approval.session_id, approval.customer_id, _head(snapshot))
        started = time.perf_counter()
        with metered_turn():  # the resumed turn's model calls are counted and capped like any turn's
            try:
                state = _result(self._run(_resume_command(approval), config))
            except BaseException:
                self._sessions.release(lease)
                raise
            turn = self._shape(approval.session_id, state, (time.perf_counter() - started) * 1000)
        observability.record_turn(turn)
        return turn

    def _waiting(self, session_id: str, config: dict[str, Any], elapsed_ms: float) -> TurnOut:
        from csagent.replies import render

        values = self._graph.get_state(config).values or {}
        text = render("approval_still_pending", values.get("lang", "en"))
        return TurnOut(session_id=session_id, turn=int(values.get("turn") or 0), status="awaiting_approval",
                       reply={"text": text, "citations": []}, tasks=[],
                       trace={"route": "awaiting_approval", "confidence": 1.0, "node_timings_ms": {},
                              "model_calls": 0, "turn_ms": round(elapsed_ms, 2)})

    def _recursion_limit(self) -> int:
        bounds = getattr(self._deps, "bounds", None)
        return int(bounds.recursion_limit) if bounds is not None else 60

    def get_session(self, principal: Principal, session_id: str) -> SessionOut:
        customer_id = customer_of(principal)
        record = self._sessions.get_owned(check_session_id(session_id), customer_id)
        snapshot = self._graph.get_state({"configurable": {"thread_id": session_id}})
        values = (snapshot.values if snapshot is not None else None) or {}
        # The session's standing (e.g. handed_off) wins over the last turn's own status; a last turn
        # that handed off on a session active again means the handoff was closed since: active.
        status = record.status if record.status != "active" else values.get("status") or "active"
        if status == "handed_off" and record.status == "active":
            status = "active"
        handoff = self._handoffs.customer_view(session_id, customer_id) if self._handoffs else None
        return SessionOut(session_id=session_id, status=status, turn_count=record.turn_count,
                          messages=list(values.get("messages") or []), summary=values.get("summary") or "",
                          handoff=handoff.model_dump(mode="json") if handoff is not None else None,
                          proposed=_proposed(values))

    def agent_session(self, principal: Principal, session_id: str, *, turns: int = 20) -> AgentSessionOut:
        """A session as a support agent reads it (agent role only): the public messages beside
        each turn's trace, read from the session's checkpoints (one per turn), newest `turns`."""
        if not principal.is_agent:
            raise Forbidden("the session viewer is for the store's agents")
        config = {"configurable": {"thread_id": check_session_id(session_id)}}
        snapshot = self._graph.get_state(config)
        values = (snapshot.values if snapshot is not None else None) or {}
        if not values:
            raise NotFound(f"session {session_id} does not exist")
        by_turn: dict[int, TurnTrace] = {}
        for past in self._graph.get_state_history(config, limit=turns * 3):
            state = past.values or {}
            turn = int(state.get("turn") or 0)
            if turn <= 0 or turn in by_turn or not state.get("reply"):
                continue  # newest first: a turn resumed after an approval shows how it ended
            by_turn[turn] = _turn_trace(state)
            if len(by_turn) >= turns:
                break
        return AgentSessionOut(session_id=session_id, customer_id=values.get("customer_id"),
                               status=str(values.get("status") or "active"),
                               messages=list(values.get("messages") or []),
                               summary=values.get("summary") or "",
                               turns=[by_turn[t] for t in sorted(by_turn)])

    @staticmethod
    def _shape(session_id: str, state: dict[str, Any], elapsed_ms: float) -> TurnOut:
        results = state.get("results") or {}
        tasks = []
        for task in state.get("tasks") or []:
            result = results.get(task["task_id"]) or {}
            tasks.append(TaskOut(task_id=task["task_id"], task_type=task["task_type"], tool=task["tool"],
                                 status=result.get("status", "skipped"),
                                 latency_ms=float(result.get("latency_ms") or 0.0),
                                 error=result.get("error")))
        from csagent.models.usage import TurnUsage, current_usage

        trace = {
            "route": state.get("route", ""),
            "confidence": round(float(state.get("confidence") or 0.0), 3),
            "node_timings_ms": state.get("node_timings_ms") or {},
            # model_calls, input_tokens, output_tokens, cost_usd, model_steps (zeros when unmetered)
            **(current_usage() or TurnUsage()).as_trace(),
            "turn_ms": round(elapsed_ms, 2),
        }
        sources = (state.get("trace") or {}).get("knowledge_sources")
        if sources:  # the document versions the reply's citations come from
            trace["knowledge_sources"] = sources
        if state.get("__interrupt__"):
            trace["approval_id"] = ((state.get("trace") or {}).get("approval") or {}).get("approval_id")
        return TurnOut(session_id=session_id, turn=int(state.get("turn") or 0),
                       status=state.get("status") or "answered", reply=state.get("reply") or {"text": ""},
                       tasks=tasks, trace=trace, proposed=_proposed(state))


def _proposed(state: dict[str, Any]) -> list[ProposedAction]:
    """The changes a turn listed back and a yes will make: only while it waits for that yes."""
    if state.get("status") != "awaiting_confirmation":
        return []
    return [ProposedAction(action=str(p.get("action") or ""),
                           order_id=(p.get("proposal") or {}).get("order_id"),
                           summary=str(p.get("summary") or ""),
                           requires_approval=bool(p.get("requires_approval")),
                           amount=float(p["amount"]) if p.get("amount") is not None else None)
            for p in state.get("pending_actions") or []]


def _turn_trace(state: dict[str, Any]) -> TurnTrace:
    results = state.get("results") or {}
    tasks = []
    for task in state.get("tasks") or []:
        result = results.get(task["task_id"]) or {}
        tasks.append({"task_id": task["task_id"], "task_type": task.get("task_type", ""),
                      "tool": task.get("tool", ""), "depends_on": list(task.get("depends_on") or []),
                      "status": result.get("status", "skipped"),
                      "latency_ms": round(float(result.get("latency_ms") or 0.0), 2),
                      "attempts": int(result.get("attempts") or (1 if result else 0)),
                      "heal": list(result.get("heal") or []), "error": result.get("error")})
    timings = state.get("node_timings_ms") or {}
    return TurnTrace(turn=int(state.get("turn") or 0), status=str(state.get("status") or ""),
                     text=str(state.get("text") or ""),
                     reply=str((state.get("reply") or {}).get("text") or ""),
                     route=str(state.get("route") or ""),
                     confidence=round(float(state.get("confidence") or 0.0), 3), tasks=tasks,
                     node_timings_ms={k: round(float(v), 2) for k, v in timings.items()},
                     trace=dict(state.get("trace") or {}))


def _final(events: Iterable[TurnEvent]) -> TurnOut:
    """The TurnOut that ends a turn's events (the progress before it is dropped)."""
    turn: TurnOut | None = None
    for event in events:
        if isinstance(event, TurnOut):
            turn = event
    if turn is None:  # _turn always ends with one; this guards the contract, not a known path
        raise RuntimeError("the turn ended without an outcome")
    return turn


def _result(run: Generator[Progress, None, dict[str, Any]]) -> dict[str, Any]:
    """Run a graph run to its end, without its progress; its final state."""
    while True:
        try:
            next(run)
        except StopIteration as done:
            return done.value


def _resume_command(approval: Any) -> Any:
    """The `Command` that resumes a turn paused for `approval`, with the person's decision."""
    from langgraph.types import Command

    decision = {"approved": "approved", "rejected": "rejected"}.get(approval.status.value, "expired")
    return Command(resume={"decision": decision, "approved_by": approval.decided_by})


def _node_budget_spent(exc: BaseException) -> bool:
    """Did LangGraph stop the turn at its recursion limit? Imported here, not at module import:
    langgraph is loaded by the time a turn runs, and a cold import of the handler stays cheap."""
    from langgraph.errors import GraphRecursionError

    return isinstance(exc, GraphRecursionError)


def _head(snapshot: Any) -> str | None:
    """The id of the thread's latest checkpoint (None before the first turn)."""
    return (snapshot.config.get("configurable") or {}).get("checkpoint_id") if snapshot else None


def _paused_approval(snapshot: Any) -> str | None:
    """The approval id the thread is paused on, if it is paused."""
    for pending in getattr(snapshot, "interrupts", ()) or ():
        value = getattr(pending, "value", None) or {}
        if isinstance(value, dict) and value.get("approval_id"):
            return str(value["approval_id"])
    return None


def _crashed_on(snapshot: Any, message: MessageIn) -> bool:
    """Did the thread's last turn stop on a node that raised, while answering this same message?

    With durability "exit" LangGraph still checkpoints the steps that finished when a node
    raises, with the error on the task that did not. A new turn started from there would
    record the message twice and lose what the finished steps did (a confirmed change no
    longer pending, so the repeated "yes" would have nothing to confirm); resuming the
    stopped turn (`invoke(None)`) runs only what did not finish."""
    if snapshot is None or not snapshot.next or not any(task.error for task in snapshot.tasks):
        return False
    values = snapshot.values or {}
    return (values.get("text") == message.text and values.get("order_id_hint") == message.order_id
            and (values.get("attachments") or []) == [a.model_dump() for a in message.attachments])
