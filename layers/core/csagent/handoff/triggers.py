"""Should this turn go to a human? Pure functions over what the turn produced; no I/O (beyond the
shipped staff-process model, read once).

Six triggers, each a `HandoffReason`:

- **explicit request** — the router chose the `handoff` route, a clause's intent is
  `human_handoff`, or the text asks for a person (`data/explicit_requests.json`);
- **staff process** — the customer asks to start something only the store's team runs, a
  warranty claim, a replacement of an item that came damaged, wrong or missing, or a carrier
  investigation (`data/staff_processes.json`, or the trained reader of `nlp.staff_process` for a
  whole message about a delivered order): the turn answers what it can, and a person takes the
  claim over with everything gathered;
- **business-rule conflict** — a task failed with `business_rule_violation` (a policy blocked
  a return, a cancellation...) AND the customer asks for a person or insists (frustrated again
  after an earlier frustrated turn): the rule is explained with what is allowed instead, and only
  a person can grant an exception;
- **repeated failure** — system failures (timeouts, transient errors...) that retrying did not
  cure: one task failed on `repeated_failures` attempts, or that many tasks failed this turn, or
  this turn failed after `repeated_failures - 1` failed turns in a row;
- **node budget exceeded** — the graph stopped because it hit its node-visit budget;
- **frustration** — the customer's words (`data/frustration.json`: a weighted lexicon plus
  shouting, `!!`, `?!` and `sooooo` heuristics), when they insist: the turn before was frustrated
  too, or the words say it was asked before (`data/insistence.json`), or something failed this
  turn. An angry first message that gets its answer is answered, not passed on.

Urgency: **high** when the customer is frustrated, money at stake reaches the policy's
threshold, or failures repeated; **normal** when something failed or was blocked; **low** when
the customer simply asked for a person.

`signals_from_state` reads the graph state into `TurnSignals`; `evaluate` decides. Customer
data never enters the signals: only intents, statuses, error types and one amount.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache, cached_property, lru_cache
from importlib import resources
from typing import Any

from csagent.domain.models import Task
from csagent.domain.task_args import CustomerActionArgs
from csagent.domain.tool_data import ActionProposedData, ToolData, result_data
from csagent.understanding import PASSIVE_INTENTS


class HandoffReason(StrEnum):
    """Why a turn goes to a human, strongest first (the order of `evaluate`'s `reasons`)."""

    EXPLICIT_REQUEST = "explicit_request"
    STAFF_PROCESS = "staff_process"
    BUSINESS_RULE_CONFLICT = "business_rule_conflict"
    REPEATED_FAILURE = "repeated_failure"
    NODE_BUDGET_EXCEEDED = "node_budget_exceeded"
    FRUSTRATION = "frustration"


class Urgency(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


# Failures of the system, not of the customer's request: these are what "repeated failure"
# counts. no_results / validation / low_confidence go to clarification instead, and a
# business-rule violation is its own trigger.
SYSTEM_FAILURES = frozenset({"timeout", "transient", "parse_error", "unknown"})
HANDOFF_INTENT = "human_handoff"
# Below this confidence a handoff reading gives way to a request read at least this surely.
WEAK_HANDOFF = 0.5
# Readings that ask for nothing a person or the assistant could do (a complaint says what is wrong).
NO_REQUEST_INTENTS = PASSIVE_INTENTS | {"complaint"}


@dataclass(frozen=True)
class TriggerPolicy:
    """Thresholds of the triggers (the composition root fills them from `Settings`)."""

    repeated_failures: int = 2
    high_value_amount: float = 200.0
    system_failures: frozenset[str] = SYSTEM_FAILURES


DEFAULT_POLICY = TriggerPolicy()


@dataclass(frozen=True)
class TaskOutcome:
    """How one task of the turn ended: enough to decide, nothing of the customer's data."""

    task_id: str
    task_type: str
    status: str  # success | failed | fallback | skipped
    error_type: str | None = None
    attempts: int = 1


@dataclass(frozen=True)
class TurnSignals:
    """Everything the triggers look at for one turn."""

    texts: tuple[str, ...]
    intents: tuple[str, ...] = ()
    #: The clauses as the understanding step read them, misspellings put right ("warrenty claim"):
    #: what a request for a person or a staff process is looked for in, beside `texts`.
    clause_texts: tuple[str, ...] = ()
    route: str = ""
    outcomes: tuple[TaskOutcome, ...] = ()
    amount_at_stake: float | None = None
    failed_turns_before: int = 0
    frustrated_turns_before: int = 0
    node_budget_exceeded: bool = False
    #: The statuses of the orders the clauses were grounded to (a claim is about a delivered one).
    order_statuses: tuple[str, ...] = ()
    #: A clause asks for a remedy only the store's team runs, as the understanding step read it
    #: (`staff_remedy_asked`).
    staff_remedy: bool = False


@dataclass(frozen=True)
class FrustrationReading:
    """How frustrated a text sounds: the score, the verdict and the cues that made it."""

    score: float
    frustrated: bool
    cues: tuple[str, ...] = ()


@dataclass(frozen=True)
class HandoffDecision:
    """A turn that goes to a human: every reason that fired (strongest first) and the urgency."""

    reasons: tuple[HandoffReason, ...]
    urgency: Urgency
    frustration: FrustrationReading = field(default_factory=lambda: FrustrationReading(0.0, False))
    amount_at_stake: float | None = None

    @property
    def reason(self) -> HandoffReason:
        """The strongest reason: what the summary leads with."""
        return self.reasons[0]


# ----------------------------------------------------------------------------------------------
# Lexicons (data files)
# ----------------------------------------------------------------------------------------------
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Negation does not reach across these: "No, I'm angry" is angry.
_CLAUSE_BREAK = re.compile(r"[,.;:!?…\n，。；：！？]+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("\u2019", "'"))


@dataclass(frozen=True)
class Lexicon:
    """Weighted phrases with negation and exclusions (see the data files' descriptions)."""

    terms: Mapping[str, float]
    negators: frozenset[str] = frozenset()
    negation_window: int = 3
    cjk_negators: str = ""
    exclusions: tuple[str, ...] = ()
    #: Patterns removed like `exclusions` ("how many times you charged me" counts, it does not vent).
    exclusion_patterns: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Lexicon:
        return cls(terms=dict(data["terms"]), negators=frozenset(data.get("negators", ())),
                   negation_window=int(data.get("negation_window", 3)),
                   cjk_negators=str(data.get("cjk_negators", "")),
                   exclusions=tuple(data.get("exclusions", ())),
                   exclusion_patterns=tuple(re.compile(p) for p in data.get("exclusion_patterns", ())))

    @cached_property
    def _latin(self) -> list[tuple[tuple[str, ...], str]]:
        phrases = [(tuple(_words(term)), term) for term in self.terms if not _CJK.search(term)]
        return sorted(phrases, key=lambda p: -len(p[0]))

    def matches(self, text: str) -> list[tuple[str, float]]:
        """The phrases found in `text` with their weights (each phrase once)."""
        lowered = text.lower().replace("\u2019", "'")
        for excluded in self.exclusions:
            lowered = lowered.replace(excluded, " ")
        for pattern in self.exclusion_patterns:
            lowered = pattern.sub(" ", lowered)
        found: dict[str, float] = {}
        for clause in _CLAUSE_BREAK.split(lowered):
            self._match_latin(_words(clause), found)
        self._match_cjk(lowered, found)
        return list(found.items())

    def _match_latin(self, words: list[str], found: dict[str, float]) -> None:
        used = [False] * len(words)
        for phrase, term in self._latin:
            n = len(phrase)
            for i in range(len(words) - n + 1):
                if tuple(words[i:i + n]) != phrase or any(used[i:i + n]):
                    continue
                used[i:i + n] = [True] * n
                before = words[max(0, i - self.negation_window):i]
                if phrase[0] in self.negators or not self.negators.intersection(before):
                    found.setdefault(term, self.terms[term])

    def _match_cjk(self, text: str, found: dict[str, float]) -> None:
        # Longest term first, each character counted once: 太离谱 wins over the 离谱 inside it.
        used = [False] * len(text)
        for term in sorted((t for t in self.terms if _CJK.search(t)), key=len, reverse=True):
            for match in re.finditer(re.escape(term), text):
                start, end = match.span()
                if any(used[start:end]):
                    continue
                used[start:end] = [True] * (end - start)
                if start == 0 or text[start - 1] not in self.cjk_negators:
                    found.setdefault(term, self.terms[term])


def _data(name: str) -> dict[str, Any]:
    path = resources.files("csagent.handoff").joinpath("data", name)
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class FrustrationDetector:
    """The lexicon plus the shouting / punctuation / elongation heuristics of frustration.json."""

    lexicon: Lexicon
    threshold: float
    caps: Mapping[str, Any]
    punctuation: Mapping[str, Mapping[str, Any]]
    elongation: Mapping[str, Any]

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> FrustrationDetector:
        return cls(lexicon=Lexicon.from_data(data), threshold=float(data["threshold"]), caps=data["caps"],
                   punctuation=data["punctuation"], elongation=data["elongation"])

    def read(self, text: str) -> FrustrationReading:
        """Score `text`; frustrated when the summed cue weights reach the threshold."""
        cues: list[tuple[str, float]] = [(f"word:{term}", w) for term, w in self.lexicon.matches(text)]
        if self._shouting(text):
            cues.append(("shouting", float(self.caps["weight"])))
        for name, rule in self.punctuation.items():
            if re.search(rule["pattern"], text):
                cues.append((name, float(rule["weight"])))
        if re.search(self.elongation["pattern"], text.lower()):
            cues.append(("elongation", float(self.elongation["weight"])))
        score = round(float(sum(w for _, w in cues)), 3)
        return FrustrationReading(score=score, frustrated=score >= self.threshold,
                                  cues=tuple(name for name, _ in cues))

    def _shouting(self, text: str) -> bool:
        ignore = set(self.caps["ignore"])
        words = [w for w in re.findall(r"[A-Za-z]+", text) if len(w) >= 2 and w.upper() not in ignore]
        shouted = [w for w in words if w.isupper()]
        enough = len(shouted) >= int(self.caps["min_words"])
        return enough and len(shouted) >= float(self.caps["min_ratio"]) * len(words)


@lru_cache(maxsize=1)
def frustration_detector() -> FrustrationDetector:
    """The detector built from `data/frustration.json` (read once)."""
    return FrustrationDetector.from_data(_data("frustration.json"))


@cache
def lexicon(name: str) -> Lexicon:
    """The phrases of `data/<name>` (each file read once): explicit_requests.json,
    staff_processes.json, insistence.json."""
    return Lexicon.from_data(_data(name))


def asks_for_staff_process(text: str, *, order_statuses: Iterable[str] = (), whole: bool = True) -> bool:
    """True when the text asks to start a warranty claim, a replacement of an item that came
    damaged, wrong or missing, or a carrier investigation: in the words of the lexicon, or as a
    request (not a question) for the warranty's remedy ("I want it fixed or replaced under
    warranty"); else, for a whole message (`whole`; a clause cut out of one is not what the model
    learnt from), as the model trained on customers' messages reads it (`nlp.staff_process`: "I
    want to use the warranty for it", "just send me the colour I ordered"; not "how long is the
    warranty?" nor "it's broken, refund me", whose money back asked for, and no other item, is a
    return whatever the model reads). The model is asked only when the message is about a
    delivered order, or about no order found (`order_statuses`, as grounding found them): what has
    not arrived cannot be broken, and "still not here, where is it?" asks where it is."""
    if lexicon("staff_processes.json").matches(text) or warranty_remedy_asked(text):
        return True
    statuses = set(order_statuses)
    if not whole or (statuses and "delivered" not in statuses):
        return False
    from csagent.grounding.frame import asks_another_item, asks_money_back
    from csagent.nlp.script import sentences
    from csagent.nlp.speech_acts import asks_for_change

    if asks_money_back(text) and not asks_another_item(text) \
            and any(asks_for_change(s) for s in sentences(text)):
        # "The laptop arrived with a cracked screen ... I want it returned and refunded to my visa.
        # I'm done with this.": the remedy the customer chose is their money back, a return. (Asked
        # in one of its sentences, whatever another declines: "I'm not putting that on my kid's
        # head. Send it back and put the money back on my Visa.")
        return False
    from csagent.nlp.staff_process import reads_as_staff_process

    return bool(reads_as_staff_process(text))


def staff_process_asked(texts: Iterable[str], clause_texts: Iterable[str],
                        order_statuses: Iterable[str] = ()) -> bool:
    """Does the turn ask for a staff process: the message as written (`texts`) or one of its clauses
    as the understanding step read them ("warrenty claim" put right)?"""
    statuses = tuple(order_statuses)
    return any(asks_for_staff_process(t, order_statuses=statuses) for t in texts if t) or any(
        asks_for_staff_process(t, whole=False) for t in clause_texts if t)


def staff_process_in_turn(text: str, clauses: Sequence[Mapping[str, Any]]) -> bool:
    """`staff_process_asked` of a message and its clauses (`text`, `entities`) as the understanding
    step read them."""
    clause_texts = [str(c.get("text") or "") for c in clauses]
    return staff_remedy_asked(clauses) \
        or staff_process_asked([text], clause_texts, order_statuses_of(clauses))


def staff_remedy_asked(clauses: Iterable[Mapping[str, Any]]) -> bool:
    """Did the understanding step read a demand for a remedy that is no return, and one only the
    store's team runs (`understanding_local.passes.returns_named_by_their_words`: "I don't want my
    money back, I want a replacement machine that actually works")?"""
    return any((c.get("entities") or {}).get("staff_remedy") for c in clauses)


def order_statuses_of(clauses: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The statuses of the orders the clauses were grounded to."""
    return tuple(str(s) for s in dict.fromkeys((c.get("entities") or {}).get("order_status")
                                               for c in clauses) if s)


def warranty_remedy_asked(text: str) -> bool:
    """A request (not a question) for the warranty's remedy: "I want it fixed or replaced under
    warranty", "I want to use the warranty to repair it"; not "will the warranty replace it?"."""
    from csagent.nlp.speech_acts import asks_for_change

    # (the remedy a word of its own: "保修" names the warranty, its "修" no repair asked)
    return bool(_WARRANTY.search(text) and _REMEDY.search(_WARRANTY.sub(" ", text))) and asks_for_change(text)


_WARRANTY = re.compile(r"\bwarrant(?:y|ee|ies)\b|保修", re.IGNORECASE)
_REMEDY = re.compile(r"\b(?:fix(?:ed)?|repair(?:ed)?|replac(?:e|ed|ement)|claim)\b|修|换", re.IGNORECASE)


def says_asked_before(text: str) -> bool:
    """True when the text says the customer has asked before ("the third time I'm asking")."""
    return bool(lexicon("insistence.json").matches(text))


def detect_frustration(text: str) -> FrustrationReading:
    """How frustrated `text` sounds (see `data/frustration.json`)."""
    return frustration_detector().read(text)


def is_explicit_request(text: str) -> bool:
    """True when the text asks for a person in words the lexicon knows."""
    return bool(lexicon("explicit_requests.json").matches(text))


def asks_what_answers(text: str) -> bool:
    """ "Are you even a real person or just another bot?", "am I talking to a human?": a question
    about who answers (the explicit lexicon's `exclusion_patterns`), with no request for a person
    beside it. It asks what the assistant is; it is answered, never handed off on its own."""
    lowered = text.lower().replace("\u2019", "'")
    asked = any(p.search(lowered) for p in lexicon("explicit_requests.json").exclusion_patterns)
    return asked and not is_explicit_request(text)


# A request for a person that waits on something ("if it's lost I want to talk to a human"): the
# turn answers first, and the triggers decide after it. Polite forms ("if possible") wait on nothing.
_CONDITION = re.compile(r"\b(?:if|unless|in case|otherwise|or else)\b(?!\s+(?:possible|you can|you could))",
                        re.IGNORECASE)


def is_conditional(text: str) -> bool:
    """True when the text makes its request depend on something ("if it's lost …", "unless …")."""
    return bool(_CONDITION.search(text))


def asks_for_person_now(clauses: Iterable[Mapping[str, Any]]) -> bool:
    """Does a clause ask for a person without a condition (by its intent, or in words the explicit
    lexicon knows, which backs the intent up)? Such a message goes to a person first,
    whatever else it says: its order ids and complaint travel in the handoff's request text, and
    no lookup runs (or fails) before the person takes over."""
    clauses = list(clauses)
    return any((is_explicit_request(str(c.get("text") or ""))
                or (c.get("intent") == HANDOFF_INTENT and not _outweighed_handoff(c, clauses)
                    and not asks_what_answers(str(c.get("text") or ""))))
               and not is_conditional(str(c.get("text") or "")) for c in clauses)


def _outweighed_handoff(clause: Mapping[str, Any], clauses: Sequence[Mapping[str, Any]]) -> bool:
    """A handoff read weakly beside a request read surely ("my sister told me to just message you
    guys. I'd like to track order #W1"): the request is what the message asks, not a person. The
    customer's own words for a person (the explicit lexicon) are never outweighed."""
    from csagent.nlp.speech_acts import asks_something

    text = str(clause.get("text") or "")
    if float(clause.get("confidence") or 1.0) >= WEAK_HANDOFF or is_explicit_request(text):
        return False
    # (a statement beside it asks nothing: "That's my OLD apartment in Indianapolis! ... I want this
    # investigated by someone who can actually do something.")
    return any(c.get("intent") not in NO_REQUEST_INTENTS | {HANDOFF_INTENT}
               and float(c.get("confidence") or 0.0) >= WEAK_HANDOFF
               and asks_something(str(c.get("text") or "")) for c in clauses)


# ----------------------------------------------------------------------------------------------
# Signals from the graph state, and the decision
# ----------------------------------------------------------------------------------------------
def amount_at_stake(task: Task, data: ToolData | None) -> float | None:
    """The money one task puts at stake: the refund or charge a proposed change lists back
    (`ActionProposedData.amount`, the one amount a tool's result data declares; a proposal refused
    by policy carries no data), and, once the customer said yes, the same amount in the proposal
    the execute task carries (`CustomerActionArgs.proposal`), whether the change was made or failed
    (a change carried out says what changed, not the amount). No other argument adds any: a
    lookup's parameters are its template's, and no template takes an amount."""
    if isinstance(data, ActionProposedData) and data.amount is not None:
        return float(data.amount)
    args = task.args
    if isinstance(args, CustomerActionArgs) and args.phase == "execute" and args.proposal is not None \
            and args.proposal.amount is not None:
        return float(args.proposal.amount)
    return None


def _largest(amounts: Iterable[float | None]) -> float | None:
    present = [a for a in amounts if a is not None]
    return max(present) if present else None


def signals_from_state(state: Mapping[str, Any]) -> TurnSignals:
    """Read one turn's graph state into `TurnSignals`.

    State keys read: `text`, `route`, `intent`, `clauses[].intent`, `tasks[]`, `results{}`
    (`status`, `error.type`, `attempts` when the healer records retries, and `data` read as the
    model of its tool's kind, `domain.tool_data.result_data`, with the task as its model, for the
    amount at stake, `amount_at_stake`),
    `consecutive_failed_turns` (earlier turns in a row that ended with a system failure),
    `frustrated_turns` (earlier turns in a row that read as frustrated), `budget_exceeded` (set
    by the graph's node budget guard; also read from `trace`) and `trace.unsaid_failures` (failed
    tasks the reply leaves unsaid as moot: they are not read as the turn's failures).
    """
    results: Mapping[str, Any] = state.get("results") or {}
    trace = state.get("trace") or {}
    unsaid = set(trace.get("unsaid_failures") or ())
    outcomes: list[TaskOutcome] = []
    amounts: list[float | None] = []
    for task in state.get("tasks") or []:
        if task["task_id"] in unsaid:  # moot: the reply answered without it (`summarise`)
            continue
        result = results.get(task["task_id"]) or {}
        error = result.get("error") or {}
        outcomes.append(TaskOutcome(task_id=task["task_id"], task_type=task.get("task_type", ""),
                                    status=str(result.get("status") or "skipped"),
                                    error_type=error.get("type"), attempts=int(result.get("attempts") or 1)))
        amounts.append(amount_at_stake(Task.model_validate(task),
                                       result_data(str(task.get("tool") or ""), result.get("data"))))
    clauses = state.get("clauses") or []
    unasked = [c for c in clauses if c.get("intent") == HANDOFF_INTENT and (
        _outweighed_handoff(c, clauses) or asks_what_answers(str(c.get("text") or "")))]
    intents = [c.get("intent", "") for c in clauses if c not in unasked]
    if state.get("intent") and not (state["intent"] == HANDOFF_INTENT and unasked
                                     and not any(c.get("intent") == HANDOFF_INTENT
                                                 for c in clauses if c not in unasked)):
        intents.append(str(state["intent"]))
    return TurnSignals(
        texts=tuple(t for t in [state.get("text") or ""] if t),
        clause_texts=tuple(str(c.get("text")) for c in clauses if c.get("text")),
        intents=tuple(i for i in intents if i),
        route=str(state.get("route") or ""),
        outcomes=tuple(outcomes),
        amount_at_stake=_largest(amounts),
        failed_turns_before=int(state.get("consecutive_failed_turns") or 0),
        frustrated_turns_before=int(state.get("frustrated_turns") or 0),
        node_budget_exceeded=bool(state.get("budget_exceeded") or trace.get("budget_exceeded")),
        order_statuses=order_statuses_of(clauses),
        staff_remedy=staff_remedy_asked(clauses),
    )


def system_failures(signals: TurnSignals, policy: TriggerPolicy = DEFAULT_POLICY) -> list[TaskOutcome]:
    """The turn's failed tasks whose error is the system's fault (timeouts, transient errors...)."""
    return [o for o in signals.outcomes if o.status == "failed" and o.error_type in policy.system_failures]


def repeated_failure(signals: TurnSignals, policy: TriggerPolicy = DEFAULT_POLICY) -> bool:
    """System failures that retrying did not cure, within the turn or across turns."""
    failed = system_failures(signals, policy)
    if not failed:
        return False
    return (any(o.attempts >= policy.repeated_failures for o in failed)
            or len(failed) >= policy.repeated_failures
            or signals.failed_turns_before + 1 >= policy.repeated_failures)


def explicit_request(signals: TurnSignals) -> bool:
    """An intent or the customer's own words ask for a person (the route alone does not: it also
    hands over a frustrated customer, or a claim our team runs, who asked for no one)."""
    return HANDOFF_INTENT in signals.intents or any(
        is_explicit_request(t) for t in (*signals.texts, *signals.clause_texts))


def evaluate(signals: TurnSignals, policy: TriggerPolicy = DEFAULT_POLICY) -> HandoffDecision | None:
    """Hand off or not: None for a turn the assistant can finish on its own."""
    frustration = detect_frustration("\n".join(signals.texts))
    asked = explicit_request(signals)
    blocked = any(o.status == "failed" and o.error_type == "business_rule_violation"
                  for o in signals.outcomes)
    insists = frustration.frustrated and (signals.frustrated_turns_before > 0
                                          or any(says_asked_before(t) for t in signals.texts))
    failed = any(o.status == "failed" and o.error_type != "business_rule_violation" for o in signals.outcomes)
    fired = {
        HandoffReason.EXPLICIT_REQUEST: asked,
        HandoffReason.STAFF_PROCESS: signals.staff_remedy or staff_process_asked(
            signals.texts, signals.clause_texts, signals.order_statuses),
        # A rule that blocks is explained, not escalated: the conflict goes to a person only when
        # the customer asks for one or insists, never on its own.
        HandoffReason.BUSINESS_RULE_CONFLICT: blocked and (asked or insists),
        HandoffReason.REPEATED_FAILURE: repeated_failure(signals, policy),
        HandoffReason.NODE_BUDGET_EXCEEDED: signals.node_budget_exceeded,
        # Anger answered is anger heard: a person takes over when it persists or the turn failed.
        HandoffReason.FRUSTRATION: insists or (frustration.frustrated and failed),
    }
    reasons = tuple(reason for reason in HandoffReason if fired[reason])
    if not reasons:
        return None
    return HandoffDecision(reasons=reasons, urgency=_urgency(signals, reasons, frustration, policy),
                           frustration=frustration, amount_at_stake=signals.amount_at_stake)


def _urgency(signals: TurnSignals, reasons: tuple[HandoffReason, ...], frustration: FrustrationReading,
             policy: TriggerPolicy) -> Urgency:
    high_value = signals.amount_at_stake is not None and signals.amount_at_stake >= policy.high_value_amount
    if frustration.frustrated or high_value or HandoffReason.REPEATED_FAILURE in reasons:
        return Urgency.HIGH
    something_failed = any(o.status == "failed" for o in signals.outcomes)
    if something_failed or set(reasons) - {HandoffReason.EXPLICIT_REQUEST}:
        return Urgency.NORMAL
    return Urgency.LOW
