"""`make faults`: self-healing under injected faults, measured on the real local stack.

    python -m devstack.faults_eval [--turns 60] [--failure-rate 0.3] [--seed 7] [--crashes 6]
    DISPATCH_MODE=stepfunctions python -m devstack.faults_eval     # each wave through the state machine

Sends realistic customer messages drawn from tau-retail through the real `ConversationService`
(Neo4j seeded with tau-retail, DynamoDB on moto) with `FAULTS` set so that about
`--failure-rate` of the tool calls fail (`fault_spec`), then crashes turns between dispatch and
summarise and retries them. Prints a table and writes `reports/faults.json` (in-process) or
`reports/faults-stepfunctions.json`. Nothing here asserts: an evaluation reports, tests decide
(`tests/integration/test_fault_injection.py`, in both modes).

Dispatch modes (`DISPATCH_MODE`, as in the router): `inprocess` runs each task in the graph;
`stepfunctions` runs each wave as one execution of the dispatch state machine on moto's
interpreter, whose Task states invoke the real tool Lambda handlers (`devstack.sfn_bridge`). The
faults are the same in both: the plan wraps the graph store and the tools at each composition
root (the router's `csagent.runtime`, the tool Lambdas' `csagent.tools.lambda_entry`), and the
router's healer heals what comes back either way. The header says which mode ran.

Phases
    1. reseed tau-retail (`seed_store` restores the dataset exactly);
    2. baseline: each scenario's first message once without faults, to learn what the local
       tier plans for it (tool faults cannot change understanding, so a task the baseline plans
       and the faulted turn lacks was lost on the fault path);
    3. faulted: each scenario's turns under the plan (a cancellation is two turns: the request,
       then "yes" if the assistant asked for it);
    4. crash recovery: a request crashed once at `before_summarise`, then sent again unchanged
       on the same session with the crash plan removed;
    5. reseed tau-retail again.

Figures, each defined where it is computed: turns without a reply and replies showing
internals (`unkind`); silent drops (`silent_drops`); duplicate writes per confirmed
cancellation (`WriteCheck`); crash recovery (`Recovery`).

Determinism: the scenarios follow from the seed and the dataset, and the plan's dice are a hash
of (seed, fault, call number), so the same calls must reach the plan in the same order. Tasks of
a wave running concurrently would draw in thread order, and one flipped draw changes the retries
and so every later draw: the evaluation runs a wave's tasks one after another, in plan order
(`one_task_at_a_time`; through Step Functions the Map runs with MaxConcurrency 1; `--parallel`
keeps production's concurrency and gives up reproducibility).
A wave's tasks are independent, so this is one of the schedules production may run; only the
latency of compound turns differs. One thing stays wall-clock: an open circuit breaker half-opens
after its cool-down (15 s), so when a breaker opens, how many turns meet it open depends on speed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neo4j import Driver

    from csagent.service.conversation import ConversationService
    from csagent.service.schemas import TurnOut

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
TAU_DATA = ROOT.parent / "shared" / "data" / "tau-retail"

# ------------------------------------------------------------------------------ the messages
# (template, task types the message asks for); `{o}` is one of the customer's orders, `{p}` a
# product in it. Phrasings the local tier plans as intended (the baseline checks it every run).
Template = tuple[str, tuple[str, ...]]
TEMPLATES: dict[str, tuple[Template, ...]] = {
    "order_status": (("Where is my order {o}?", ("order_status",)),
                     ("What's the status of order {o}?", ("order_status",)),
                     ("Has order {o} shipped yet?", ("order_status",))),
    "order_items": (("What items are in order {o}?", ("order_items",)),),
    "tracking": (("Can I get the tracking number for order {o}?", ("order_status",)),),
    "warranty": (("What is the warranty on the {p}?", ("warranty",)),
                 ("How long is the warranty for the {p}?", ("warranty",))),
    "policy": (("What is your return policy?", ("policy",)), ("How long do refunds take?", ("policy",)),
               ("Do you ship internationally?", ("policy",)), ("How do exchanges work?", ("policy",)),
               ("What payment methods do you accept?", ("policy",)),
               ("Is there a restocking fee for returns?", ("policy",))),
    "compound": (("Where is order {o}, and what is the warranty on the {p}?", ("order_status", "warranty")),
                 ("Check order {o}, tell me the warranty of the {p}, and what is your return policy?",
                  ("order_status", "warranty", "policy")),
                 ("What's in order {o} and when will it arrive?", ("order_items", "order_status")),
                 ("Where is order {o}? Also, how do refunds work?", ("order_status", "policy"))),
}
CANCEL: Template = ("Please cancel order {o}, I ordered it by mistake.", ("cancel_order",))
CONFIRM = "yes"
OPENING = "What is your return policy?"  # the turn before a crashed read, so it has a checkpoint

# How often each kind of scenario is drawn (a cancellation is two turns).
KIND_WEIGHTS = {"order_status": 3, "order_items": 2, "tracking": 2, "warranty": 2, "policy": 3,
                "compound": 5, "cancellation": 2}
READ_KINDS = {kind: weight for kind, weight in KIND_WEIGHTS.items() if kind != "cancellation"}
# Below the refund approval threshold ($500): above it a person approves first, another flow.
MAX_CANCEL_AMOUNT = 450.0

# A failure line names a task by its order id or, for a task without one, by one of these words.
TASK_WORDS = {"warranty": ("warranty",), "policy": ("policy", "help articles"), "order_list": ("orders",),
              "product_info": ("product",), "product_availability": ("availability",),
              "update_default_address": ("address",)}
# "it has already shipped, so it can no longer be cancelled" says the cancellation was not made.
FAILURE_WORDS = ("couldn't", "could not", "can't", "cannot", "can no longer", "unable", "wasn't able")
# What must never reach a customer, whatever failed.
INTERNAL_TEXT = re.compile(r"Traceback|\b\w+(?:Error|Exception)\b|\bNeo\.\w|injected fault|(?i:system error)")


# ------------------------------------------------------------------------------- scenarios
@dataclass(frozen=True)
class Scenario:
    """One conversation: a customer, the messages they send, and what the first one asks for."""

    kind: str
    customer_id: str
    messages: tuple[str, ...]
    expected: tuple[str, ...]
    order_id: str | None = None


@dataclass(frozen=True)
class Store:
    """The tau-retail orders the scenarios are drawn from, in a fixed order."""

    orders: tuple[dict[str, Any], ...]

    @classmethod
    def load(cls, data_dir: Path) -> Store:
        orders = json.loads((data_dir / "orders.json").read_text())
        return cls(tuple(sorted(orders.values(), key=lambda o: o["order_id"])))

    def pick(self, rng: random.Random, used: set[str], *, statuses: Sequence[str] = (),
             max_amount: float | None = None) -> dict[str, Any]:
        """An order of a customer not used yet: one customer per scenario, so every scenario
        starts a fresh session and no customer comes near the per-customer rate limit."""
        pool = [o for o in self.orders if o["user_id"] not in used and o.get("items")
                and (not statuses or o["status"] in statuses)
                and (max_amount is None or 0 < paid(o) <= max_amount)]
        if not pool:
            raise ValueError(f"no order left with statuses={statuses} max_amount={max_amount}")
        order = rng.choice(pool)
        used.add(order["user_id"])
        return order


def paid(order: Mapping[str, Any]) -> float:
    """What the order's payments add up to (what a cancellation refunds)."""
    return round(sum(float(p["amount"]) for p in order.get("payment_history") or []
                     if p.get("transaction_type") == "payment"), 2)


def _fill(template: Template, order: Mapping[str, Any]) -> Template:
    text, expected = template
    return text.format(o=order["order_id"], p=order["items"][0]["name"]), expected


def scenario(kind: str, store: Store, rng: random.Random, used: set[str]) -> Scenario:
    """A scenario of `kind` for a customer not used yet."""
    if kind == "cancellation":
        order = store.pick(rng, used, statuses=("pending",), max_amount=MAX_CANCEL_AMOUNT)
        text, expected = _fill(CANCEL, order)
        return Scenario(kind, order["user_id"], (text, CONFIRM), expected, order["order_id"])
    order = store.pick(rng, used, statuses=("processed", "delivered") if kind == "tracking" else ())
    text, expected = _fill(rng.choice(TEMPLATES[kind]), order)
    return Scenario(kind, order["user_id"], (text,), expected, order["order_id"])


def build_scenarios(store: Store, turns: int, seed: int, used: set[str] | None = None,
                    kinds: Mapping[str, int] = KIND_WEIGHTS) -> list[Scenario]:
    """Scenarios adding up to `turns` turns; the same store, turns and seed give the same ones."""
    rng = random.Random(seed)
    used = set() if used is None else used
    scenarios: list[Scenario] = []
    left = turns
    while left > 0:
        kind = rng.choices(list(kinds), list(kinds.values()))[0]
        if kind == "cancellation" and left < 2:
            kind = "policy"
        scenarios.append(scenario(kind, store, rng, used))
        left -= len(scenarios[-1].messages)
    return scenarios


# -------------------------------------------------------------------------- the fault plan
FAULT_TARGETS = ("neo4j", "knowledge_search", "predefined_cypher")
CRASH_SPEC = "graph:crash_before_summarise:1.0:1"


def fault_spec(failure_rate: float) -> str:
    """`FAULTS` under which a tool call fails with probability about `failure_rate`, half the
    injected faults timeouts and half transient errors.

    Faults go in at two layers. At the store ("neo4j"): the driver's own exceptions, so the
    tools' classifiers and the write path of customer actions see what production would show
    them. At the read tools ("knowledge_search", "predefined_cypher"): the failed `ToolResult`
    the tool would return. Each layer fails a call with probability q = 1 - sqrt(1 - rate), so a
    read tool call (its tool layer, then one Neo4j read) and a confirmed action (a Neo4j read,
    then a write) both fail with probability 1 - (1 - q)^2 = rate.

    Within a target the plan rolls its entries in turn and injects the first that fires, so a
    timeout entry and an error entry of probability e fail a call with probability
    1 - (1 - e)^2 = q; e is solved for that.
    """
    if not 0.0 <= failure_rate < 1.0:
        raise ValueError("the failure rate must be in [0, 1)")
    entry = round(1.0 - (1.0 - failure_rate) ** 0.25, 4)
    return ",".join(f"{target}:{kind}:{entry}" for target in FAULT_TARGETS for kind in ("timeout", "error"))


def service_with(faults: str, seed: int) -> ConversationService:
    """The conversation service rebuilt under the plan `faults` ("" = none), breakers closed."""
    from csagent import runtime
    from csagent.resilience.breaker import breakers

    os.environ["FAULTS"] = faults
    os.environ["FAULT_SEED"] = str(seed)
    _forget_runtime()
    breakers().reset()
    return runtime.conversation_service()


def _forget_runtime() -> None:
    from csagent import runtime
    from csagent.resilience.faults import get_fault_plan

    runtime.reset()
    get_fault_plan.cache_clear()


@contextmanager
def restored_faults() -> Iterator[None]:
    """Put `FAULTS` / `FAULT_SEED` back as they were and drop the runtime built under them."""
    saved = {key: os.environ.get(key) for key in ("FAULTS", "FAULT_SEED")}
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _forget_runtime()


@contextmanager
def one_task_at_a_time() -> Iterator[None]:
    """Run each wave's tasks one after another, in plan order (LangGraph `max_concurrency=1`).

    The service builds its own run config, so the limit is passed the way a parent runnable
    passes its config to a graph it calls: LangChain's context variable, which LangGraph merges
    under the explicit config (`ensure_config`). For evaluation and tests only.
    """
    from langchain_core.runnables.config import var_child_runnable_config

    token = var_child_runnable_config.set({"max_concurrency": 1})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


# ---------------------------------------------------------------------------- one turn
@dataclass
class Turn:
    """A turn as the customer saw it (`out`, None when the service raised) and as the
    session's checkpoint holds it afterwards (`state`)."""

    customer_id: str
    session_id: str
    text: str
    out: TurnOut | None
    state: dict[str, Any]
    error: str | None = None
    ms: float = 0.0

    @property
    def reply(self) -> str:
        return str((self.out.reply if self.out else {}).get("text") or "")


def send(service: ConversationService, customer_id: str, session_id: str, text: str) -> Turn:
    """One message through the service. An exception becomes `Turn.error` (a turn without a
    reply is a finding), except an injected crash, which the caller is waiting for."""
    from csagent.domain.models import Principal
    from csagent.resilience.faults import InjectedCrash
    from csagent.service.schemas import MessageIn

    principal = Principal(subject=f"faults:{customer_id}", customer_id=customer_id)
    started = time.perf_counter()
    out, error = None, None
    try:
        out = service.handle_message(principal, session_id, MessageIn(text=text))
    except InjectedCrash:
        raise
    except Exception as exc:  # noqa: BLE001 - recorded and counted, never hidden
        error = f"{type(exc).__name__}: {exc}"
    ms = (time.perf_counter() - started) * 1000
    return Turn(customer_id, session_id, text, out, checkpoint(session_id), error, ms)


def checkpoint(session_id: str) -> dict[str, Any]:
    """The session's state as its latest checkpoint holds it."""
    from csagent import runtime

    snapshot = runtime.compiled_graph().get_state({"configurable": {"thread_id": session_id}})
    return dict(snapshot.values or {}) if snapshot is not None else {}


def order_id_of(task: Mapping[str, Any]) -> str | None:
    """The order a task is about (lookups: params; proposals: args; executions: the proposal)."""
    args = task.get("args") or {}
    for holder in (args.get("params"), args.get("args"), args.get("proposal")):
        if isinstance(holder, Mapping) and holder.get("order_id"):
            return str(holder["order_id"])
    return None


def names_failure(task: Mapping[str, Any], reply: str) -> bool:
    """Does a line of the reply say this task could not be done? The line must hold a failure
    word and the task's order id or, for a task without one, a word for its subject."""
    order_id = order_id_of(task)
    task_type = str(task.get("task_type"))
    words = (order_id,) if order_id else TASK_WORDS.get(task_type, (task_type,))
    return any(any(f in line for f in FAILURE_WORDS) and any(w.lower() in line for w in words)
               for line in reply.lower().splitlines())


def silent_drops(turn: Turn, expected: Sequence[str]) -> list[str]:
    """What the reply to this turn fails to account for; empty when nothing is dropped.

    A silent drop is any of:
    - `unreported`: a task of the turn's plan (the checkpoint's `tasks`) missing from the
      response's `tasks`;
    - `unplanned`: a task type the message asks for (`expected`) with no task of that type in
      the response, while the reply does not ask the customer for a missing detail either;
    - `unnamed`: a task whose status is `failed` or `skipped` (no result) while no line of the
      reply says it could not be done and names it (`names_failure`).
    A `fallback` result (the cheaper path answered) is an answer, not a failure. A turn without
    a response is one drop, `no reply`.
    """
    if turn.out is None:
        return [f"no reply ({turn.error})"]
    planned = {t["task_id"]: t for t in turn.state.get("tasks") or []}
    reported = {t.task_id: t for t in turn.out.tasks}
    drops = [f"unreported {i} ({t['task_type']})" for i, t in planned.items() if i not in reported]
    asked_back = bool(turn.state.get("awaiting")) or turn.out.status == "needs_clarification"
    missing = Counter(expected) - Counter(t.task_type for t in turn.out.tasks)
    if not asked_back:
        drops.extend(f"unplanned {task_type}" for task_type in sorted(missing.elements()))
    for task in turn.out.tasks:
        if task.status in ("failed", "skipped") and not names_failure(planned.get(task.task_id)
                                                                      or task.model_dump(), turn.reply):
            drops.append(f"unnamed {task.task_id} ({task.task_type}, "
                         f"{(task.error or {}).get('type', task.status)})")
    return drops


def unkind(turn: Turn) -> bool:
    """An empty reply, or one that shows internal error text."""
    return not turn.reply.strip() or bool(INTERNAL_TEXT.search(turn.reply))


# ----------------------------------------------------------------------- the store's writes
WRITES_CYPHER = """
MATCH (o:Order {order_id: $order_id})
OPTIONAL MATCH (o)-[:HAS_AUDIT]->(e:AuditEvent)
WITH o, count(DISTINCT e) AS audits
OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction {type: 'refund'})
RETURN o.status AS status, audits, count(DISTINCT t) AS refunds
"""


@dataclass(frozen=True)
class OrderWrites:
    """An order's status, AuditEvent nodes and refund Transactions, as Neo4j holds them."""

    status: str
    audits: int
    refunds: int


def order_writes(driver: Driver, order_id: str) -> OrderWrites:
    records, _, _ = driver.execute_query(WRITES_CYPHER, order_id=order_id)
    row = records[0]
    return OrderWrites(str(row["status"]), int(row["audits"]), int(row["refunds"]))


@dataclass(frozen=True)
class WriteCheck:
    """One confirmed cancellation: what the response reported and what the store gained."""

    order_id: str
    reported: str         # the execute task's status in the response ("" when none ran)
    attempts: int         # tool calls the execute task used (more than 1: it was retried)
    status: str           # the order's status afterwards
    audits_added: int
    refunds_added: int

    @property
    def applied(self) -> bool:
        return self.status == "cancelled"

    @property
    def duplicate(self) -> bool:
        return self.audits_added > 1 or self.refunds_added > 1

    @property
    def exactly_once(self) -> bool:
        """One audit and one refund when the order was cancelled; neither when it was not."""
        want = 1 if self.applied else 0
        return self.audits_added == want and self.refunds_added == want

    @property
    def consistent(self) -> bool:
        """The response reports the cancellation done exactly when the store shows it done."""
        return (self.reported in ("success", "fallback")) == self.applied


def execute_result(turn: Turn) -> tuple[str, int]:
    """(status, tool calls) of the turn's execute task; ("", 0) when none ran."""
    for task in turn.state.get("tasks") or []:
        if task.get("tool") == "customer_actions" and (task.get("args") or {}).get("phase") == "execute":
            result = (turn.state.get("results") or {}).get(task["task_id"]) or {}
            return str(result.get("status") or "skipped"), int(result.get("attempts") or 0)
    return "", 0


def write_check(driver: Driver, order_id: str, before: OrderWrites, turn: Turn) -> WriteCheck:
    after = order_writes(driver, order_id)
    reported, attempts = execute_result(turn)
    return WriteCheck(order_id, reported, attempts, after.status, after.audits - before.audits,
                      after.refunds - before.refunds)


# ------------------------------------------------------------------------------ the phases
@dataclass(frozen=True)
class TurnRecord:
    """What the report keeps of one faulted turn."""

    kind: str
    text: str
    status: str
    reply: str
    unkind: bool
    drops: list[str]
    tasks: list[dict[str, Any]]
    breakers_open: list[str]
    ms: float

    @property
    def replied(self) -> bool:
        return bool(self.reply.strip())


def task_records(turn: Turn) -> list[dict[str, Any]]:
    """Per task: status, error type, tool calls used and heal steps ("<error type>:<action>")."""
    results = turn.state.get("results") or {}
    records = []
    for task in turn.state.get("tasks") or []:
        result = results.get(task["task_id"]) or {}
        heal = [f"{step['reason'].split(':', 1)[0]}:{step['action']}" for step in result.get("heal") or []]
        records.append({"task_type": task["task_type"], "tool": task["tool"],
                        "status": result.get("status", "skipped"),
                        "error": (result.get("error") or {}).get("type"),
                        "attempts": int(result.get("attempts") or 0), "heal": heal})
    return records


def open_breakers() -> list[str]:
    from csagent.resilience.breaker import breakers

    return sorted(name for name, state in breakers().snapshot().items() if state == "open")


def record(kind: str, turn: Turn, expected: Sequence[str]) -> TurnRecord:
    return TurnRecord(kind=kind, text=turn.text, status=turn.out.status if turn.out else "no_reply",
                      reply=turn.reply, unkind=unkind(turn), drops=silent_drops(turn, expected),
                      tasks=task_records(turn), breakers_open=open_breakers(), ms=round(turn.ms, 1))


def baseline(service: ConversationService, scenarios: Sequence[Scenario],
             run_id: str) -> list[tuple[str, ...]]:
    """The task types the local tier plans for each scenario's first message, without faults."""
    planned = []
    for index, sc in enumerate(scenarios):
        turn = send(service, sc.customer_id, f"{run_id}-baseline-{index}", sc.messages[0])
        planned.append(tuple(t.task_type for t in turn.out.tasks) if turn.out else ())
    return planned


def faulted(service: ConversationService, driver: Driver, scenarios: Sequence[Scenario],
            planned: Sequence[tuple[str, ...]], run_id: str) -> tuple[list[TurnRecord], list[WriteCheck]]:
    """Every scenario's turns under the plan, and the writes of every confirmed cancellation.
    A "yes" is sent only when the turn before asked for it (a failed request proposes nothing)."""
    records: list[TurnRecord] = []
    writes: list[WriteCheck] = []
    for index, sc in enumerate(scenarios):
        first = send(service, sc.customer_id, f"{run_id}-{index}", sc.messages[0])
        records.append(record(sc.kind, first, planned[index]))
        if sc.order_id and CONFIRM in sc.messages[1:] and records[-1].status == "awaiting_confirmation":
            before = order_writes(driver, sc.order_id)
            confirmed = send(service, sc.customer_id, first.session_id, CONFIRM)
            records.append(record(f"{sc.kind}:confirm", confirmed, sc.expected))
            writes.append(write_check(driver, sc.order_id, before, confirmed))
    return records, writes


@dataclass
class Recovery:
    """One crash trial: a request crashed once at `before_summarise`, then sent again unchanged
    with the crash plan removed. Recovered = the retry replied, answered every request of the
    message, was recorded once (the public history holds the message once and the turn number
    advanced by one), and, for a confirmed cancellation, the store holds it exactly once."""

    kind: str
    text: str
    crashed: bool
    replied: bool = False
    completed: bool = False
    recorded_once: bool = False
    writes: WriteCheck | None = None
    reply: str = ""

    @property
    def recovered(self) -> bool:
        writes_ok = self.writes is None or (self.writes.applied and self.writes.exactly_once)
        return self.crashed and self.replied and self.completed and self.recorded_once and writes_ok


def crash_trial(sc: Scenario, driver: Driver, seed: int, session_id: str) -> Recovery:
    """The turn before (a question, or the cancellation request), then the crash and the retry
    of the next request (a compound read, or the "yes")."""
    from csagent.resilience.faults import InjectedCrash

    is_cancel = sc.kind == "cancellation"
    opening, request = (sc.messages[0], CONFIRM) if is_cancel else (OPENING, sc.messages[0])
    before_turn = send(service_with("", seed), sc.customer_id, session_id, opening)
    before = order_writes(driver, sc.order_id) if is_cancel and sc.order_id else None
    crashed = False
    try:
        send(service_with(CRASH_SPEC, seed), sc.customer_id, session_id, request)
    except InjectedCrash:
        crashed = True
    retry = send(service_with("", seed), sc.customer_id, session_id, request)
    trial = Recovery(kind=sc.kind, text=request, crashed=crashed, reply=retry.reply)
    if retry.out is None:
        return trial
    trial.replied = bool(retry.reply.strip())
    answered = Counter(t.task_type for t in retry.out.tasks if t.status in ("success", "fallback"))
    trial.completed = not Counter(sc.expected) - answered
    said = [m.get("text") for m in retry.state.get("messages") or [] if m.get("role") == "customer"]
    turn_before = before_turn.out.turn if before_turn.out else 0
    trial.recorded_once = said.count(request) == 1 and retry.out.turn == turn_before + 1
    if before is not None and sc.order_id:
        trial.writes = write_check(driver, sc.order_id, before, retry)
    return trial


def crash_scenarios(store: Store, count: int, seed: int, used: set[str]) -> list[Scenario]:
    """Compound reads and cancellations in turn (for a cancellation the crash lands after the write)."""
    rng = random.Random(seed + 1)
    return [scenario("cancellation" if i % 2 else "compound", store, rng, used) for i in range(count)]


# ------------------------------------------------------------------------------ the report
def share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo), 1)


def tool_figures(records: Sequence[TurnRecord]) -> dict[str, Any]:
    """Tool calls and how they ended. Each failed call gets exactly one heal decision (a
    success or a fallback gets none), so failed calls = heal steps, whatever the cause."""
    calls: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    steps: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    retried = 0
    for task in (t for r in records for t in r.tasks):
        calls[task["tool"]] += task["attempts"]
        failed[task["tool"]] += len(task["heal"])
        steps.update(task["heal"])
        statuses[task["status"]] += 1
        retried += any(step.endswith(":retry") for step in task["heal"])
    total, bad = sum(calls.values()), sum(failed.values())
    by_tool = {tool: {"calls": calls[tool], "failed": failed[tool],
                      "failed_share": share(failed[tool], calls[tool])} for tool in sorted(calls)}
    return {"calls": total, "failed": bad, "failed_share": share(bad, total), "by_tool": by_tool,
            "tasks": sum(statuses.values()), "task_status": dict(sorted(statuses.items())),
            "tasks_retried": retried, "heal_steps": dict(steps.most_common())}


def injection_figures(stats: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Draws and injected faults per target, from the plan's own counters. The plan rolls a
    target's entries in order until one fires, so its first entry sees every call."""
    targets: dict[str, dict[str, Any]] = {}
    for entry, counts in stats.items():
        target = targets.setdefault(entry.split(":", 1)[0], {"calls": counts["calls"], "injected": 0})
        target["injected"] += counts["injected"]
    calls = sum(t["calls"] for t in targets.values())
    injected = sum(t["injected"] for t in targets.values())
    return {"calls": calls, "injected": injected, "by_target": targets, "entries": dict(stats)}


def write_figures(writes: Sequence[WriteCheck]) -> dict[str, Any]:
    return {"confirmed_cancellations": len(writes), "applied": sum(w.applied for w in writes),
            "execute_retried": sum(w.attempts > 1 for w in writes),
            "duplicate_writes": sum(w.duplicate for w in writes),
            "not_exactly_once": sum(not w.exactly_once for w in writes),
            "reply_inconsistent_with_store": sum(not w.consistent for w in writes),
            "orders": [asdict(w) for w in writes]}


def recovery_figures(trials: Sequence[Recovery]) -> dict[str, Any]:
    checked = [t.writes for t in trials if t.writes is not None]
    return {"trials": len(trials), "crashed": sum(t.crashed for t in trials),
            "recovered": sum(t.recovered for t in trials), "replied": sum(t.replied for t in trials),
            "completed": sum(t.completed for t in trials),
            "recorded_once": sum(t.recorded_once for t in trials),
            "writes_checked": len(checked), "writes_exactly_once": sum(w.exactly_once for w in checked),
            "duplicate_writes": sum(w.duplicate for w in checked),
            "detail": [{**asdict(t), "recovered": t.recovered} for t in trials]}


def figures(records: Sequence[TurnRecord], writes: Sequence[WriteCheck], trials: Sequence[Recovery],
            stats: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    drops = [(r, d) for r in records for d in r.drops]
    latencies = [r.ms for r in records]
    return {
        "replies": {"turns": len(records), "with_reply": sum(r.replied for r in records),
                    "without_reply": sum(not r.replied for r in records),
                    "unkind": sum(r.unkind for r in records),
                    "turn_status": dict(Counter(r.status for r in records).most_common())},
        "silent_drops": {"total": len(drops), "by_kind": dict(Counter(d.split(" ", 1)[0] for _, d in drops)),
                         "examples": [{"text": r.text, "drop": d, "reply": r.reply} for r, d in drops[:10]]},
        "tools": tool_figures(records),
        "injected": injection_figures(stats),
        "breakers": {"turns_with_open_breaker": sum(bool(r.breakers_open) for r in records),
                     "opened": sorted({b for r in records for b in r.breakers_open})},
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                       "max": max(latencies, default=0.0)},
        "writes": write_figures(writes),
        "crash_recovery": recovery_figures(trials),
    }


# (label, path in the figures, target)
ROWS = (
    ("turns", "replies.turns", None),
    ("turns without a reply", "replies.without_reply", "0"),
    ("replies empty or showing internals", "replies.unkind", "0"),
    ("tool calls", "tools.calls", None),
    ("  failed (injected, breaker, no results)", "tools.failed", None),
    ("  share failed", "tools.failed_share", "~ failure rate"),
    ("faults injected (Neo4j + tool layer)", "injected.injected", None),
    ("tasks", "tools.tasks", None),
    ("  retried", "tools.tasks_retried", None),
    ("  outcomes", "tools.task_status", None),
    ("turns meeting an open breaker", "breakers.turns_with_open_breaker", None),
    ("silent drops", "silent_drops.total", "0"),
    ("confirmed cancellations", "writes.confirmed_cancellations", None),
    ("  applied", "writes.applied", None),
    ("  execute retried", "writes.execute_retried", None),
    ("  duplicate writes", "writes.duplicate_writes", "0"),
    ("  not exactly once", "writes.not_exactly_once", "0"),
    ("  reply disagrees with the store", "writes.reply_inconsistent_with_store", "0"),
    ("crash trials", "crash_recovery.trials", None),
    ("  crashed", "crash_recovery.crashed", "all"),
    ("  recovered on retry", "crash_recovery.recovered", "all"),
    ("    retry replied", "crash_recovery.replied", "all"),
    ("    retry answered every request", "crash_recovery.completed", "all"),
    ("    request recorded once", "crash_recovery.recorded_once", "all"),
    ("    writes exactly once", "crash_recovery.writes_exactly_once", "= writes checked"),
    ("    duplicate writes", "crash_recovery.duplicate_writes", "0"),
    ("turn latency p50 ms", "latency_ms.p50", None),
    ("turn latency p95 ms", "latency_ms.p95", None),
)


def _at(values: Mapping[str, Any], path: str) -> Any:
    value: Any = values
    for key in path.split("."):
        value = value[key]
    return value


def dispatch_mode() -> str:
    """The router's dispatch mode, as its settings read it (`DISPATCH_MODE`)."""
    from csagent.config import get_settings

    return str(get_settings().dispatch_mode)


def header(report: Mapping[str, Any]) -> str:
    dispatch = ("Step Functions: each wave one execution of the dispatch state machine on moto (local "
                "stack), tool Lambda handlers behind it" if report["dispatch_mode"] == "stepfunctions"
                else "in-process: one graph branch per task")
    return (f"dispatch: {dispatch}\nFAULTS={report['faults']}  FAULT_SEED={report['seed']}  "
            f"waves: {report['waves']}")


def print_table(report: Mapping[str, Any]) -> None:
    print(header(report))
    for label, path, target in ROWS:
        value = _at(report["figures"], path)
        print(f"  {label:42} {value!s:>12}" + (f"   (target {target})" if target else ""))


# ---------------------------------------------------------------------------------- main
@dataclass(frozen=True)
class Options:
    turns: int = 60
    failure_rate: float = 0.3
    seed: int = 7
    crashes: int = 6
    parallel: bool = False
    data: Path = TAU_DATA
    report: Path | None = None  # reports/faults.json, or reports/faults-stepfunctions.json
    run_id: str = field(default_factory=lambda: f"faults-{uuid.uuid4().hex[:8]}")


def reseed(driver: Driver, data_dir: Path) -> None:
    from devstack.seed.loader import seed_store

    seed_store(driver, data_dir)


def evaluate(options: Options, driver: Driver) -> dict[str, Any]:
    """Every phase (see the module docstring); the store is reseeded before and after."""
    from csagent.resilience.faults import get_fault_plan

    store = Store.load(options.data)
    used: set[str] = set()
    scenarios = build_scenarios(store, options.turns, options.seed, used)
    crashes = crash_scenarios(store, options.crashes, options.seed, used)
    spec = fault_spec(options.failure_rate)
    mode = dispatch_mode()
    if mode == "stepfunctions":
        from devstack.sfn_bridge import LocalStepFunctionsDispatcher

        # The process's bridge, before the runtime asks for it: one task at a time, like the graph.
        LocalStepFunctionsDispatcher.for_process(**({} if options.parallel else {"MaxConcurrency": 1}))
    reseed(driver, options.data)
    try:
        with restored_faults(), (nullcontext() if options.parallel else one_task_at_a_time()):
            planned = baseline(service_with("", options.seed), scenarios, options.run_id)
            service = service_with(spec, options.seed)
            records, writes = faulted(service, driver, scenarios, planned, options.run_id)
            plan = get_fault_plan()
            stats = plan.stats() if plan is not None else {}
            trials = [crash_trial(sc, driver, options.seed, f"{options.run_id}-crash-{i}")
                      for i, sc in enumerate(crashes)]
    finally:
        reseed(driver, options.data)
    differs = [sc.messages[0] for sc, p in zip(scenarios, planned, strict=True)
               if Counter(p) != Counter(sc.expected)]
    return {"dispatch_mode": mode, "seed": options.seed, "failure_rate": options.failure_rate, "faults": spec,
            "waves": "concurrent" if options.parallel else "one task at a time",
            "store": options.data.name,
            "scenarios": dict(Counter(sc.kind for sc in scenarios)),
            "baseline_differs_from_templates": differs,
            "figures": figures(records, writes, trials, stats), "turns": [asdict(r) for r in records]}


def neo4j_driver() -> Driver:
    from neo4j import GraphDatabase

    from csagent.config import get_settings

    settings = get_settings()
    auth = (settings.neo4j_user, settings.neo4j_password) if settings.neo4j_password else None
    return GraphDatabase.driver(settings.neo4j_uri, auth=auth, connection_timeout=5.0)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m devstack.faults_eval",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=60,
                        help="turns to plan (default 60; a 'yes' is skipped when nothing was proposed)")
    parser.add_argument("--failure-rate", type=float, default=0.3,
                        help="share of tool calls that fail (default 0.3; see fault_spec)")
    parser.add_argument("--seed", type=int, default=7, help="scenarios and fault dice (default 7)")
    parser.add_argument("--crashes", type=int, default=6, help="crash-and-retry trials (default 6)")
    parser.add_argument("--parallel", action="store_true",
                        help="run a wave's tasks concurrently as production does (not reproducible)")
    parser.add_argument("--data", type=Path, default=TAU_DATA, help="the tau-retail dataset directory")
    parser.add_argument("--report", type=Path, default=None,
                        help="where to write the JSON report (default reports/faults.json, "
                             "reports/faults-stepfunctions.json with DISPATCH_MODE=stepfunctions)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation, print the table, write the report. Exit 1 when Neo4j is unreachable."""
    from neo4j.exceptions import ServiceUnavailable

    args = _parser().parse_args(argv)
    options = Options(turns=args.turns, failure_rate=args.failure_rate, seed=args.seed, crashes=args.crashes,
                      parallel=args.parallel, data=args.data, report=args.report)
    # Healed faults log warnings and every turn logs a line: here the table is the output.
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    started = time.perf_counter()
    print(f"make faults - dispatch mode: {dispatch_mode()}", flush=True)
    with neo4j_driver() as driver:
        try:
            driver.verify_connectivity()
        except ServiceUnavailable as exc:
            print(f"error: Neo4j is unreachable ({exc}); run `make up` first", file=sys.stderr)
            return 1
        report = evaluate(options, driver)
    report["elapsed_s"] = round(time.perf_counter() - started, 1)
    print_table(report)
    name = "faults-stepfunctions.json" if report["dispatch_mode"] == "stepfunctions" else "faults.json"
    path = options.report or REPORTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"written {path} ({report['elapsed_s']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
