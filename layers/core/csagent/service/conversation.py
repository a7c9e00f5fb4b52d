"""The conversation use case: `ConversationService` runs a customer's turn (both as one answer and
as a stream of progress events), the approval of a paused refund, and the session views.

It checks who owns the session, takes the turn lease, runs the graph on the session's
checkpoint thread, records the outcome and shapes the public response. It knows nothing of
HTTP or Lambda events.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from csagent import observability
from csagent.domain.errors import Forbidden, InvalidInput, NotFound
from csagent.domain.models import Principal
from csagent.ports import Sessions
from csagent.service.checkpoints import crashed_on, head, node_budget_spent, paused_approval, resume_command
from csagent.service.outcome import proposed_actions, shape_turn, turn_trace
from csagent.service.schemas import (
    AgentSessionOut,
    ApprovalOut,
    DecisionIn,
    MessageIn,
    SessionOut,
    TurnEvent,
    TurnOut,
    TurnTrace,
    check_session_id,
)
from csagent.streaming.progress import Progress, progress_of, received


def customer_of(principal: Principal) -> str:
    """The signed-in customer's id; `Forbidden` (403) for anyone else (an agent, no customer)."""
    if not principal.customer_id:
        raise Forbidden("only a signed-in customer can talk to the assistant")
    return principal.customer_id


class ConversationService:
    """A customer's turns, an agent's approvals and the session views, over the compiled graph,
    the sessions port and the turn's dependencies (`deps`, the graph's context)."""

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
        (`csagent.models.usage`; `outcome.shape_turn` puts them into the trace)."""
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
        lease = self._sessions.begin_turn(session_id, customer_id, head(snapshot))
        started = time.perf_counter()
        outcome: TurnOut | dict[str, Any]
        try:
            yield received()  # inside the try: a caller that stops listening here frees the lease
            paused = paused_approval(snapshot) if self._approvals is not None else None
            if paused is not None:
                # A refund is waiting for a person: the customer hears where it stands; an
                # expired review is closed now and reported.
                approval = self._approvals.get(paused)
                if approval.status.value == "pending":
                    self._sessions.release(lease)
                    outcome = self._waiting(session_id, config, (time.perf_counter() - started) * 1000)
                else:
                    outcome = yield from self._run(resume_command(approval), config)
            elif crashed_on(snapshot, message):
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
            if not node_budget_spent(exc):
                raise
            # The node budget is spent (a turn that would not converge): a person takes over.
            elapsed = (time.perf_counter() - started) * 1000
            yield self._over_budget(session_id, customer_id, message.text, elapsed)
            return
        if isinstance(outcome, TurnOut):
            yield outcome
            return
        yield shape_turn(session_id, outcome, (time.perf_counter() - started) * 1000)

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
        if paused_approval(snapshot) != approval.approval_id:
            return None  # already resumed: approving twice changes nothing
        from csagent.models.usage import metered_turn

        observability.bind_session(approval.session_id)
        lease = self._sessions.begin_turn(approval.session_id, approval.customer_id, head(snapshot))
        started = time.perf_counter()
        with metered_turn():  # the resumed turn's model calls are counted and capped like any turn's
            try:
                state = _result(self._run(resume_command(approval), config))
            except BaseException:
                self._sessions.release(lease)
                raise
            turn = shape_turn(approval.session_id, state, (time.perf_counter() - started) * 1000)
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
                          proposed=proposed_actions(values))

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
            by_turn[turn] = turn_trace(state)
            if len(by_turn) >= turns:
                break
        return AgentSessionOut(session_id=session_id, customer_id=values.get("customer_id"),
                               status=str(values.get("status") or "active"),
                               messages=list(values.get("messages") or []),
                               summary=values.get("summary") or "",
                               turns=[by_turn[t] for t in sorted(by_turn)])


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
