"""Self-healing on the real local stack: turns through `ConversationService` (Neo4j seeded with
tau-retail, DynamoDB on moto) with faults injected by `FAULTS`.

- with 30% of tool calls failing, every turn gets a reply and nothing is dropped silently;
- a turn that crashed between dispatch and summarise is completed once by retrying the request;
- a confirmed cancellation whose execution fails transiently once is applied exactly once;
- with Neo4j down, the breaker opens and later turns fail fast with a kind reply.

Every test runs in both dispatch modes (`dispatch_mode`): in-process (one `Send` per task) and
Step Functions (each wave one execution of the real state machine on moto, the tool Lambda
handlers behind it, faults injected in the tool Lambdas as in the router): the healing is the
same. What a silent drop is, is defined once in `devstack.faults_eval.silent_drops` (the check
`make faults` reports over 60 turns). Each test builds the service under its own fault plan
(`faults`) and leaves the environment, the cached runtime and the breakers as it found them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from neo4j.exceptions import IncompleteCommit

from csagent import runtime
from csagent.adapters.neo4j_graph import classify_neo4j_error
from csagent.resilience.breaker import breakers
from csagent.resilience.faults import InjectedCrash, get_fault_plan
from csagent.service.conversation import ConversationService
from devstack.aws import provision
from devstack.faults_eval import (
    CRASH_SPEC,
    INTERNAL_TEXT,
    READ_KINDS,
    Store,
    Turn,
    build_scenarios,
    fault_spec,
    one_task_at_a_time,
    order_writes,
    send,
    silent_drops,
)

pytestmark = pytest.mark.integration

# From the seeded tau-retail store.
OMAR, OMAR_PENDING = "omar_kim_3528", "#W1080318"              # pending, $53.43 by credit card
JUAN, JUAN_PENDING = "juan_garcia_9528", "#W1013897"           # pending, $152.56 by gift card
EVELYN, EVELYN_PENDING = "evelyn_kovacs_6742", "#W5694685"     # pending, $98.25
AARAV, AARAV_DELIVERED = "aarav_nguyen_7344", "#W7728728"      # delivered: Wireless Earbuds, Hiking Boots
MASON, MASON_PROCESSED = "mason_johansson_2485", "#W9549057"   # processed (shipped)
CANCEL = "Please cancel order {order}, I ordered it by mistake."

BuildService = Callable[[str], ConversationService]


@pytest.fixture(scope="module")
def stack(tau_store: Any, moto_endpoint: str) -> None:
    """The tables, buckets and queues the service needs on the moto server (idempotent)."""
    provision(moto_endpoint)


@pytest.fixture(scope="module", params=["inprocess", "stepfunctions"])
def dispatch_mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """The dispatch mode of the module's tests; Step Functions through this process's bridge,
    one task at a time (MaxConcurrency 1: the fault plan's dice are drawn in plan order)."""
    mode: str = request.param
    if mode == "inprocess":
        yield mode
        return
    from devstack.sfn_bridge import LocalStepFunctionsDispatcher

    LocalStepFunctionsDispatcher.close_process()
    LocalStepFunctionsDispatcher.for_process(MaxConcurrency=1)
    yield mode
    LocalStepFunctionsDispatcher.close_process()  # one bridge per process: free it for other tests


@pytest.fixture
def faults(stack: None, dispatch_mode: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[BuildService]:
    """`faults(spec)`: the conversation service rebuilt under the fault plan `spec` ("" = none),
    with closed breakers. Afterwards the cached runtime is dropped (monkeypatch restores the
    environment), so the next test builds its own."""

    monkeypatch.setenv("DISPATCH_MODE", dispatch_mode)

    def build(spec: str) -> ConversationService:
        monkeypatch.setenv("FAULTS", spec)
        monkeypatch.setenv("FAULT_SEED", "7")
        runtime.reset()
        get_fault_plan.cache_clear()
        breakers().reset()
        service = runtime.conversation_service()
        assert (runtime.graph_deps().dispatcher is not None) == (dispatch_mode == "stepfunctions")
        return service

    yield build
    runtime.reset()
    get_fault_plan.cache_clear()
    breakers().reset()


def new_session() -> str:
    return f"faults-it-{uuid.uuid4().hex[:10]}"


def customer_messages(turn: Turn) -> list[str]:
    return [m["text"] for m in turn.state.get("messages") or [] if m.get("role") == "customer"]


def result_of(turn: Turn, task_type: str) -> dict[str, Any]:
    """The checkpointed result (with its heal record) of the turn's task of `task_type`."""
    [task] = [t for t in turn.state["tasks"] if t["task_type"] == task_type]
    result: dict[str, Any] = turn.state["results"][task["task_id"]]
    return result


def proposed(service: ConversationService, customer: str, session: str, order: str) -> None:
    """The customer asks to cancel `order`; the assistant lists the change back and waits."""
    turn = send(service, customer, session, CANCEL.format(order=order))
    assert turn.out is not None and turn.out.status == "awaiting_confirmation", turn.reply


# ------------------------------------------------------------------ (a) 30% of tool calls fail
def test_with_30_percent_of_tool_calls_failing_every_turn_gets_a_reply_and_nothing_is_dropped(
        faults: BuildService, tau_data: Path) -> None:
    # Given 20 read turns drawn from tau-retail and a plan failing ~30% of tool calls
    scenarios = build_scenarios(Store.load(tau_data), 20, seed=11, kinds=READ_KINDS)
    service = faults(fault_spec(0.3))

    # When each turn runs (a wave's tasks in plan order, so the plan's dice are reproducible)
    with one_task_at_a_time():
        turns = [(send(service, sc.customer_id, new_session(), sc.messages[0]), sc.expected)
                 for sc in scenarios]

    # Then faults reached the tools and were healed, every turn has a kind reply, and no task
    # was dropped silently
    steps = [s["action"] for turn, _ in turns for r in turn.state["results"].values() for s in r["heal"]]
    assert "retry" in steps, "no injected fault reached a tool: this run proves nothing"
    assert [turn.text for turn, _ in turns if not turn.reply.strip()] == []
    assert [turn.reply for turn, _ in turns if INTERNAL_TEXT.search(turn.reply)] == []
    assert {turn.text: drops for turn, expected in turns if (drops := silent_drops(turn, expected))} == {}


# ------------------------------------------------------------------------ (b) crash and retry
def test_a_request_that_crashed_before_summarise_is_completed_once_when_retried(
        faults: BuildService) -> None:
    # Given a session with one answered turn
    session = new_session()
    opening = send(faults(""), AARAV, session, "What is your return policy?")
    assert opening.out is not None and opening.out.turn == 1
    request = f"Where is order {AARAV_DELIVERED}, and what is the warranty on the Hiking Boots?"

    # When the next request crashes between dispatch and summarise ...
    with pytest.raises(InjectedCrash):
        send(faults(CRASH_SPEC), AARAV, session, request)
    # ... and the customer sends it again once the crash is gone
    retry = send(faults(""), AARAV, session, request)

    # Then the retry answers both questions as the second turn, and the history holds it once
    assert retry.out is not None
    assert [(t.task_type, t.status) for t in retry.out.tasks] == [("order_status", "success"),
                                                                   ("warranty", "success")]
    assert retry.out.turn == 2
    assert customer_messages(retry) == ["What is your return policy?", request]


def test_a_confirmed_cancellation_that_crashed_before_its_reply_is_reported_once_on_retry(
        faults: BuildService, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a cancellation listed back and waiting for the customer's yes
    session = new_session()
    proposed(faults(""), OMAR, session, OMAR_PENDING)
    before = order_writes(neo4j_driver, OMAR_PENDING)

    # When the "yes" turn crashes after the cancellation ran, and the customer says yes again
    with pytest.raises(InjectedCrash):
        send(faults(CRASH_SPEC), OMAR, session, "yes")
    retry = send(faults(""), OMAR, session, "yes")

    # Then the reply reports the cancellation, and the store holds it exactly once
    assert f"Order {OMAR_PENDING} is cancelled" in retry.reply
    after = order_writes(neo4j_driver, OMAR_PENDING)
    assert (after.status, after.audits - before.audits, after.refunds - before.refunds) == ("cancelled", 1, 1)


# ---------------------------------------------------------- (c) an execution fails once, then heals
def test_a_cancellation_whose_execution_fails_transiently_once_is_retried_and_applied_once(
        faults: BuildService, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a cancellation listed back and waiting for the customer's yes
    session = new_session()
    proposed(faults(""), JUAN, session, JUAN_PENDING)
    before = order_writes(neo4j_driver, JUAN_PENDING)

    # When the customer confirms and the execution's first Neo4j call fails transiently
    done = send(faults("neo4j:error:1.0:1"), JUAN, session, "yes")

    # Then the execution was retried, the reply says it is done, and it was applied once
    result = result_of(done, "cancel_order")
    assert (result["status"], result["attempts"], [s["action"] for s in result["heal"]]) == (
        "success", 2, ["retry"])
    assert f"Order {JUAN_PENDING} is cancelled" in done.reply
    after = order_writes(neo4j_driver, JUAN_PENDING)
    assert (after.status, after.audits - before.audits, after.refunds - before.refunds) == ("cancelled", 1, 1)


class LosesFirstWriteAnswer:
    """The real store, except that the answer to the first write is lost after it committed:
    what a connection dropped during COMMIT looks like to the driver (`IncompleteCommit`).
    Injected faults always fail before the call; this is the case that can repeat an effect."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lost = False

    def read(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.inner.read(*args, **kwargs)
        return rows

    def write(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.inner.write(*args, **kwargs)
        if not self.lost:
            self.lost = True
            lost = IncompleteCommit("the connection closed before the commit was acknowledged")
            raise classify_neo4j_error(lost) from lost  # what the adapter raises for it
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_cancellation_whose_committed_write_lost_its_answer_is_not_applied_again(
        faults: BuildService, neo4j_driver: Any, reseed_tau: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a cancellation listed back and waiting for the customer's yes
    session = new_session()
    proposed(faults(""), EVELYN, session, EVELYN_PENDING)
    before = order_writes(neo4j_driver, EVELYN_PENDING)

    # When the customer confirms and the write commits but its answer is lost on the way back
    real = runtime.graph_store()
    monkeypatch.setattr(runtime, "graph_store", lru_cache(maxsize=1)(lambda: LosesFirstWriteAnswer(real)))
    done = send(faults(""), EVELYN, session, "yes")

    # Then the retry finds the change already made: one cancellation, reported as done
    assert result_of(done, "cancel_order")["attempts"] == 2
    assert f"Order {EVELYN_PENDING} is cancelled" in done.reply
    after = order_writes(neo4j_driver, EVELYN_PENDING)
    assert (after.status, after.audits - before.audits, after.refunds - before.refunds) == ("cancelled", 1, 1)


# ------------------------------------------------------------------ (d) Neo4j down: fail fast
def test_with_neo4j_down_the_breaker_opens_and_later_turns_fail_fast_with_a_kind_reply(
        faults: BuildService) -> None:
    # Given Neo4j failing every call, and order questions until the breaker opens
    service = faults("neo4j:error:1.0")
    question = f"Where is my order {MASON_PROCESSED}?"
    for _ in range(5):
        send(service, MASON, new_session(), question)
        if breakers().get("neo4j").state.value == "open":
            break
    assert breakers().get("neo4j").state.value == "open"

    # When the customer asks again
    later = send(service, MASON, new_session(), question)

    # Then the lookup was not even tried (no retry, no backoff), and the reply says kindly
    # what could not be done and what to do, without internals
    result = result_of(later, "order_status")
    assert (result["status"], result["attempts"]) == ("failed", 1)
    assert "I couldn't check the status of order" in later.reply
    assert "try again" in later.reply.lower()
    assert not INTERNAL_TEXT.search(later.reply)


def test_a_failed_lookup_names_the_order_the_customer_asked_about(faults: BuildService) -> None:
    # Given Neo4j failing every call
    service = faults("neo4j:error:1.0")

    # When the customer asks about one of their orders
    turn = send(service, MASON, new_session(), f"Where is my order {MASON_PROCESSED}?")

    # Then the reply names that order (the customer's own words back), not a redaction
    assert turn.out is not None and [t.status for t in turn.out.tasks] == ["failed"]
    assert f"I couldn't check the status of order {MASON_PROCESSED}" in turn.reply


# ------------------------------------------------- (e) the cheaper path, and a person after that
def test_a_knowledge_search_that_finds_nothing_answers_from_the_keyword_search_and_says_so(
        faults: BuildService) -> None:
    # Given the knowledge search finding nothing once (with embeddings)
    service = faults("knowledge_search:empty:1.0:1")

    # When the customer asks about the return policy
    turn = send(service, MASON, new_session(), "What is your return policy?")

    # Then the cheaper path (the keyword search, without embeddings) answered, as a fallback,
    # and the reply says plainly that this is the closest answer
    result = result_of(turn, "policy")
    assert (result["status"], result["attempts"], [s["action"] for s in result["heal"]]) == (
        "fallback", 2, ["degrade"])
    assert result["data"]["mode"] == "keyword" and result["data"]["citations"]
    # (it found nothing, which is no slowness: the note says so)
    assert turn.reply.startswith("I couldn't find an answer to exactly that, so here is the closest one")


def test_a_lookup_that_keeps_failing_after_its_retries_goes_to_a_person(faults: BuildService) -> None:
    # Given the order lookups failing every time at the tool
    service = faults("predefined_cypher:error:1.0")

    # When the customer asks where their order is
    turn = send(service, MASON, new_session(), f"Where is my order {MASON_PROCESSED}?")

    # Then the lookup was retried with backoff until its retries were spent, and the turn was
    # handed to a person, the reply saying so without internals
    result = result_of(turn, "order_status")
    assert (result["status"], result["attempts"], [s["action"] for s in result["heal"]]) == (
        "failed", 3, ["retry", "retry", "fail"])
    assert turn.out is not None and turn.out.status == "handed_off"
    assert not INTERNAL_TEXT.search(turn.reply)
