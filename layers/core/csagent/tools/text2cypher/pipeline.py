"""Text2Cypher: a catalogue question no predefined template covers -> one validated, read-only
Cypher query, run with a timeout and a row cap; or the closest predefined template.

    question ─► schema text (allowed part of the graph + the store's category/product names)
             ─► few-shot examples by vector similarity (ExampleBank)
             ─► generate ─► validate (keyword scan, EXPLAIN, read-only, schema, values) ─► execute
                   ▲                │ errors (all of them, as hints)
                   └── correct ◄────┘   at most `max_corrections` times; a corrected query is
                                        validated again from the start
             ─► still invalid, model failed, or no model (local tier): the closest
                catalogue-scope template of the predefined catalogue (`cypher_catalogue`)

Everything that happens is recorded in the `Text2CypherOutcome` (stages, every attempt with its
steps and verdicts, timings split into model time and pipeline time); `to_dict()` is the shape
the debug endpoint returns (`explain`). Failures are typed `Text2CypherError`s, never raised.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from csagent.domain.tool_data import RowsData
from csagent.tools.caches import ToolCaches
from csagent.tools.text2cypher.examples import ExampleBank, RetrievedExample
from csagent.tools.text2cypher.schema import CATALOGUE_SCHEMA, AllowedSchema
from csagent.tools.text2cypher.validation import (
    CypherExplainer,
    ModelError,
    QueryValidator,
    QuestionOutOfScope,
    StepRecord,
    Text2CypherError,
    classify_store_error,
    explainer_for,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from csagent.domain.models import ToolResult
    from csagent.ports import Embedder, GraphStore

logger = logging.getLogger(__name__)

#: What the model answers when the question cannot be answered from the allowed graph.
UNSUPPORTED = "UNSUPPORTED"
DEFAULT_MAX_CORRECTIONS = 2
DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_ROWS = 50
DEFAULT_EXAMPLES = 4
MAX_QUESTION_CHARS = 1000
#: Keys dropped from result rows (vectors are useless to a reader and large).
_DROPPED_KEYS = frozenset({"embedding"})

Status = Literal["success", "fallback", "failed"]


# ---------------------------------------------------------------------------------------------
# Prompts and model output
# ---------------------------------------------------------------------------------------------
_FENCE_RE = re.compile(r"```[ \t]*(?:cypher|neo4j|sql)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_cypher(text: str) -> str:
    """The query in a model answer: the first code fence if any, else the whole text; a leading
    'Cypher:' label and trailing semicolons removed."""
    fence = _FENCE_RE.search(text)
    body = fence.group(1) if fence else text
    body = re.sub(r"^\s*(?:cypher|query)\s*:\s*", "", body.strip(), flags=re.IGNORECASE)
    return body.strip().rstrip(";").strip()


def _message_text(message: Any) -> str:
    """Text of a chat model answer (a string, or content blocks as Bedrock Converse returns)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(block if isinstance(block, str) else str(block.get("text", ""))
                       for block in content if isinstance(block, str | Mapping))
    return str(content)


def generation_messages(schema_text: str, examples: Sequence[RetrievedExample],
                        question: str) -> list[BaseMessage]:
    """System prompt with the schema, the examples as question/answer turns (closest last), the
    question (`csagent/models/prompts/text2cypher.v*.md`)."""
    from langchain_core.messages import AIMessage, HumanMessage

    from csagent.models.prompts import load_prompt

    *system, ask = load_prompt("text2cypher").render(schema=schema_text, question=question)
    turns: list[BaseMessage] = []
    for example in reversed(examples):
        turns += [HumanMessage(example.question), AIMessage(example.cypher)]
    return [*system, *turns, ask]


def correction_messages(base: Sequence[BaseMessage], question: str, cypher: str,
                        errors: Sequence[Text2CypherError]) -> list[BaseMessage]:
    """The generation conversation, the rejected query, and every error as a hint
    (`csagent/models/prompts/text2cypher_correct.v*.md`)."""
    from langchain_core.messages import AIMessage

    from csagent.models.prompts import load_prompt

    listed = "\n".join(f"- {error.as_hint()}" for error in errors)
    ask = load_prompt("text2cypher_correct").render(question=question, cypher=cypher, errors=listed)
    return [*base, AIMessage(cypher), *ask]


# ---------------------------------------------------------------------------------------------
# The outcome
# ---------------------------------------------------------------------------------------------
@dataclass
class Attempt:
    """One generated or corrected query and every step it went through."""

    number: int
    kind: Literal["generate", "correct"]
    cypher: str | None
    steps: list[StepRecord] = field(default_factory=list)
    model_ms: float = 0.0

    @property
    def errors(self) -> list[Text2CypherError]:
        return [e for step in self.steps for e in step.errors]

    @property
    def executed(self) -> bool:
        return any(s.name == "execute" and s.verdict == "pass" for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "kind": self.kind, "cypher": self.cypher,
                "model_ms": round(self.model_ms, 3), "steps": [s.to_dict() for s in self.steps],
                "errors": [e.to_dict() for e in self.errors]}


@dataclass
class Fallback:
    """Why the predefined catalogue was used, which template answered, and its result."""

    reason: str
    template_id: str | None = None
    score: float | None = None
    cypher: str | None = None
    result: ToolResult | None = None

    def to_dict(self) -> dict[str, Any]:
        result = self.result
        return {"reason": self.reason, "template_id": self.template_id,
                "score": None if self.score is None else round(self.score, 4),
                "status": result.status.value if result else None,
                "error": result.error.model_dump(mode="json") if result and result.error else None}


@dataclass
class Text2CypherOutcome:
    """What a run did and produced. `status`: success (a generated query ran), fallback (a
    predefined template answered), failed (`error` says why, typed)."""

    question: str
    status: Status = "failed"
    stages: list[StepRecord] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    examples: list[RetrievedExample] = field(default_factory=list)
    cypher: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    error: Text2CypherError | None = None
    fallback: Fallback | None = None
    total_ms: float = 0.0

    @property
    def model_ms(self) -> float:
        return sum(a.model_ms for a in self.attempts)

    @property
    def pipeline_ms(self) -> float:
        """Time spent outside the chat model: retrieval, validation, execution, fallback."""
        return max(self.total_ms - self.model_ms, 0.0)

    @property
    def columns(self) -> list[str]:
        return list(self.rows[0]) if self.rows else []

    @property
    def corrections(self) -> int:
        return max(len(self.attempts) - 1, 0)

    def to_dict(self) -> dict[str, Any]:
        """The debug view: every attempt with its steps and verdicts, the final query and rows."""
        out: dict[str, Any] = {
            "question": self.question,
            "status": self.status,
            "stages": [s.to_dict() for s in self.stages],
            "examples": [{"example_id": e.example_id, "score": round(e.score, 4), "source": e.source}
                         for e in self.examples],
            "attempts": [a.to_dict() for a in self.attempts],
            "final": {"cypher": self.cypher, "rows": self.rows, "row_count": len(self.rows),
                      "truncated": self.truncated, "status": self.status,
                      "error": self.error.to_dict() if self.error else None},
            "timings": {"total_ms": round(self.total_ms, 3), "model_ms": round(self.model_ms, 3),
                        "pipeline_ms": round(self.pipeline_ms, 3)},
        }
        if self.fallback is not None:
            out["fallback"] = self.fallback.to_dict()
        return out


def _plain(value: Any) -> Any:
    """A JSON-friendly copy of a result value (nodes are already dicts; vectors dropped)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if k not in _DROPPED_KEYS}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


# ---------------------------------------------------------------------------------------------
# The pipeline
# ---------------------------------------------------------------------------------------------
class Text2Cypher:
    """The Text2Cypher pipeline over one graph store, one chat model (None: local tier) and one
    embedder (few-shot retrieval and the template fallback; None disables both).

    `timeout_s` and `max_rows` bound every execution of a generated query (server-side
    transaction timeout, READ transaction); `check_timeout_s` bounds EXPLAIN and value lookups.
    `caches`: what is kept between runs for this graph and embedder (the tool context's); a
    pipeline without them keeps the vocabulary, value hints and example vectors for its own life.
    """

    def __init__(self, graph: GraphStore, model: BaseChatModel | None, embedder: Embedder | None, *,
                 max_corrections: int = DEFAULT_MAX_CORRECTIONS, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_rows: int = DEFAULT_MAX_ROWS, k_examples: int = DEFAULT_EXAMPLES,
                 check_timeout_s: float = 2.0, explainer: CypherExplainer | None = None,
                 example_bank: ExampleBank | None = None, schema: AllowedSchema = CATALOGUE_SCHEMA,
                 caches: ToolCaches | None = None) -> None:
        if max_corrections < 0:
            raise ValueError("max_corrections must be >= 0")
        if timeout_s <= 0 or check_timeout_s <= 0:
            raise ValueError("timeouts must be positive")
        if max_rows < 1:
            raise ValueError("max_rows must be >= 1")
        explainer = explainer or explainer_for(graph)
        if explainer is None:
            raise ValueError("the graph store cannot EXPLAIN queries; Text2Cypher needs it to validate")
        self.graph = graph
        self.model = model
        self.embedder = embedder
        self.max_corrections = max_corrections
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.k_examples = k_examples
        self.schema = schema
        self.caches = caches if caches is not None else ToolCaches()
        self.validator = QueryValidator(graph, explainer, schema=schema, timeout_s=check_timeout_s,
                                        hint_values=self.caches.hint_values)
        if example_bank is None and embedder is not None:
            example_bank = ExampleBank(graph, embedder, vectors=self.caches.example_vectors)
        self.example_bank = example_bank

    # -- the run ---------------------------------------------------------------------------
    def run(self, question: str) -> Text2CypherOutcome:
        """Answer `question` (raises ValueError only for an empty or over-long question)."""
        question = " ".join(str(question or "").split())
        if not question:
            raise ValueError("the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise ValueError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        started = time.perf_counter()
        outcome = Text2CypherOutcome(question)
        try:
            self._run(outcome)
        finally:
            outcome.total_ms = (time.perf_counter() - started) * 1000.0
        return outcome

    def _run(self, outcome: Text2CypherOutcome) -> None:
        if self.model is None:
            self._fallback(outcome, "no generative model is configured (local tier)", None)
            return
        base = generation_messages(self._schema_text(outcome), self._examples(outcome), outcome.question)
        messages = base
        last_errors: list[Text2CypherError] = []
        for number in range(1 + self.max_corrections):
            attempt = self._generate(messages, number)
            outcome.attempts.append(attempt)
            if attempt.cypher is None:
                error = attempt.errors[0]
                reason = ("the model answered that the question is outside the catalogue graph"
                          if isinstance(error, QuestionOutOfScope) else "the model call failed")
                self._fallback(outcome, reason, error)
                return
            report = self.validator.validate(attempt.cypher)
            attempt.steps += report.steps
            errors = report.errors
            if not errors:
                errors = self._execute(outcome, attempt)
                if not errors:
                    outcome.status = "success"
                    return
            if not all(e.correctable for e in errors):
                outcome.error = next(e for e in errors if not e.correctable)
                outcome.status = "failed"
                return
            last_errors = errors
            messages = correction_messages(base, outcome.question, attempt.cypher, errors)
        self._fallback(outcome, f"no valid query after {len(outcome.attempts)} attempt(s)",
                       last_errors[0] if last_errors else None)

    # -- stages ----------------------------------------------------------------------------
    def _schema_text(self, outcome: Text2CypherOutcome) -> str:
        from csagent.tools.cypher_catalogue import store_vocabulary

        started = time.perf_counter()
        vocabulary = store_vocabulary(self.graph, self.caches.vocabulary)
        text = self.schema.prompt_text(categories=vocabulary.categories, products=vocabulary.products)
        detail = (f"{len(self.schema.nodes)} labels, {len(self.schema.relationships)} relationships, "
                  f"{len(vocabulary.categories)} category and {len(vocabulary.products)} product names "
                  f"({len(text)} characters)")
        outcome.stages.append(StepRecord("schema_injection", "pass", detail,
                                         (time.perf_counter() - started) * 1000.0))
        return text

    def _examples(self, outcome: Text2CypherOutcome) -> list[RetrievedExample]:
        started = time.perf_counter()
        if self.example_bank is None or self.k_examples <= 0:
            outcome.stages.append(StepRecord("examples", "skip", "no embedder: generating without examples"))
            return []
        try:
            examples = self.example_bank.retrieve(outcome.question, self.k_examples)
        except Exception as exc:  # noqa: BLE001 - generate without examples rather than fail
            logger.warning("few-shot retrieval failed (%s)", type(exc).__name__)
            outcome.stages.append(StepRecord("examples", "fail", f"retrieval failed ({type(exc).__name__}); "
                                             "generating without examples",
                                             (time.perf_counter() - started) * 1000.0))
            return []
        outcome.examples = examples
        sources: list[str] = sorted({e.source for e in examples}) or ["none"]
        outcome.stages.append(StepRecord(
            "examples", "pass", f"{len(examples)} example(s) from {'/'.join(sources)}: "
            + ", ".join(e.example_id for e in examples), (time.perf_counter() - started) * 1000.0))
        return examples

    def _generate(self, messages: Sequence[BaseMessage], number: int) -> Attempt:
        kind: Literal["generate", "correct"] = "generate" if number == 0 else "correct"
        attempt = Attempt(number + 1, kind, None)
        started = time.perf_counter()
        assert self.model is not None
        try:
            answer = _message_text(self.model.invoke(list(messages)))
        except Exception as exc:  # noqa: BLE001 - a model failure is data
            logger.warning("text2cypher model call failed (%s)", type(exc).__name__)
            answer = None
            error: Text2CypherError = ModelError(f"The model call failed ({type(exc).__name__}).")
        attempt.model_ms = (time.perf_counter() - started) * 1000.0
        if answer is not None:
            cypher = extract_cypher(answer)
            if cypher.upper().rstrip(".") == UNSUPPORTED:
                error = QuestionOutOfScope("The model answered that the catalogue graph cannot answer this.")
            elif not cypher:
                error = ModelError("The model returned no query.")
            else:
                attempt.cypher = cypher
                attempt.steps.append(StepRecord(kind, "pass", f"{len(cypher)} characters", attempt.model_ms))
                return attempt
        attempt.steps.append(StepRecord(kind, "fail", error.message, attempt.model_ms, [error]))
        return attempt

    def _execute(self, outcome: Text2CypherOutcome, attempt: Attempt) -> list[Text2CypherError]:
        """Run a validated query in a READ transaction with the timeout and the row cap."""
        assert attempt.cypher is not None
        started = time.perf_counter()
        try:
            rows = self.graph.read(attempt.cypher, {}, timeout_s=self.timeout_s, max_rows=self.max_rows + 1)
        except Exception as exc:  # noqa: BLE001 - typed below
            error = classify_store_error(exc, during="query")
            attempt.steps.append(StepRecord("execute", "fail", error.message,
                                            (time.perf_counter() - started) * 1000.0, [error]))
            return [error]
        outcome.cypher = attempt.cypher
        outcome.truncated = len(rows) > self.max_rows
        outcome.rows = [_plain(r) for r in rows[:self.max_rows]]
        detail = f"{len(outcome.rows)} row(s)" + (f", capped at {self.max_rows}" if outcome.truncated else "")
        attempt.steps.append(StepRecord("execute", "pass", detail + " in a READ transaction",
                                        (time.perf_counter() - started) * 1000.0))
        return []

    # -- fallback --------------------------------------------------------------------------
    def _fallback(self, outcome: Text2CypherOutcome, reason: str, error: Text2CypherError | None) -> None:
        """Answer with the closest catalogue-scope template, when one is close enough."""
        from csagent.domain.models import Task, TaskStatus
        from csagent.tools import cypher_catalogue as cc
        from csagent.tools.context import ToolContext

        started = time.perf_counter()
        fallback = Fallback(reason)
        outcome.fallback = fallback
        outcome.error = error
        outcome.status = "failed"
        if self.embedder is None:
            fallback.reason += "; no embedder to match a predefined query"
            outcome.stages.append(StepRecord("fallback", "skip", fallback.reason))
            return
        catalogue = cc.load_catalogue()
        vocabulary = cc.store_vocabulary(self.graph, self.caches.vocabulary)
        matcher = cc.matcher_for(self.embedder, catalogue, self.caches.matchers)
        ranked = matcher.rank(outcome.question, top_n=len(catalogue.templates), entities=vocabulary.products)
        closest = next(((tid, score) for tid, score, _ in ranked
                        if (t := catalogue.get(tid)) is not None and t.scope == "catalogue"), None)
        if closest is None or closest[1] < matcher.threshold:
            shown = f" (closest: {closest[0]} at {closest[1]:.2f})" if closest else ""
            fallback.reason += f"; no catalogue template is close enough{shown}"
            outcome.stages.append(StepRecord("fallback", "fail", fallback.reason,
                                             (time.perf_counter() - started) * 1000.0))
            return
        template = catalogue.get(closest[0])
        assert template is not None
        params = cc.extract_params(template, outcome.question, vocabulary=vocabulary)
        # The catalogue tool by its registry name, so its rows are read as `CatalogueData`.
        task = Task(task_id="text2cypher-fallback", task_type="lookup", tool="predefined_cypher")
        context = ToolContext(graph=self.graph, customer_id=None, embedder=self.embedder, caches=self.caches)
        result = cc.run_template(template.id, params, context, task, catalogue=catalogue)
        fallback.template_id, fallback.score, fallback.cypher, fallback.result = (
            template.id, closest[1], template.cypher.strip(), result)
        verdict: Literal["pass", "fail"] = "pass" if result.status == TaskStatus.SUCCESS else "fail"
        outcome.stages.append(StepRecord(
            "fallback", verdict, f"{reason}; template {template.id} (score {closest[1]:.2f}): "
            + (result.error.message if result.error else "answered"),
            (time.perf_counter() - started) * 1000.0))
        if result.status == TaskStatus.SUCCESS and isinstance(result.data, RowsData):
            outcome.status = "fallback"
            outcome.cypher = fallback.cypher
            data = result.data
            rows = data.rows if data.rows is not None else [data.row]
            outcome.rows = [_plain(r) for r in rows if r is not None]
            outcome.truncated = data.truncated


def explain(question: str, *, graph: GraphStore, model: BaseChatModel | None, embedder: Embedder | None,
            **options: Any) -> dict[str, Any]:
    """The debug view of one run (for `POST /v1/debug/text2cypher`, agent/admin only):
    `{question, status, stages, examples, attempts: [{cypher, steps: [{name, verdict, detail}]}],
    final: {cypher, rows, status}, fallback?, timings}`. `options` go to `Text2Cypher`."""
    return Text2Cypher(graph, model, embedder, **options).run(question).to_dict()
