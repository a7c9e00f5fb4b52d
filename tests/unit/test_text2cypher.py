"""Text2Cypher with a scripted chat model and a fake `GraphStore` (no database, no network):
validation (keyword scan, EXPLAIN, read-only, schema, values), corrections with every error as a
hint, refusals that never execute, typed timeouts, the template fallback, the local tier, the
debug view and the tool entry point. The real embedder (MiniLM on onnxruntime) ranks few-shot
examples and matches fallback templates."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

import csagent.tools.text2cypher as t2c
from csagent.domain.models import ErrorType, Task, TaskStatus
from csagent.nlp.embeddings import get_embedder
from csagent.tools import cypher_catalogue as cc
from csagent.tools.context import ToolContext
from csagent.tools.text2cypher.examples import load_examples
from csagent.tools.text2cypher.pipeline import Text2Cypher, explain, extract_cypher
from csagent.tools.text2cypher.schema import CATALOGUE_SCHEMA
from csagent.tools.text2cypher.validation import (
    OutsideSchema,
    ParameterNotAllowed,
    QuestionOutOfScope,
    SyntaxInvalid,
    Timeout,
    UnknownLabel,
    UnknownProperty,
    UnknownValue,
    WriteAttempt,
    WrongDirection,
    mask_cypher,
    scan_keywords,
    validate_statically,
)

# ------------------------------------------------------------------------------- the fake store
PRODUCTS = {"Headphones": "Electronics", "Laptop": "Electronics", "Water Bottle": "Outdoor",
            "Yoga Mat": "Sports", "Dumbbell Set": "Sports"}
VALUES: dict[tuple[str, str], list[str]] = {
    ("Product", "name"): list(PRODUCTS),
    ("Product", "category"): sorted(set(PRODUCTS.values())),
    ("Category", "name"): sorted(set(PRODUCTS.values())),
    ("Variant", "option_text"): ["color: black, size: M", "color: blue, size: L"],
    ("Document", "kind"): ["policy", "faq", "manual", "warranty"],
}
VALID = ("MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant) WHERE p.name = 'Headphones' "
         "RETURN v.item_id AS item_id, v.price AS price ORDER BY price LIMIT 5")
VALID_ROWS = [{"item_id": "1234567890", "price": 79.5}, {"item_id": "2234567890", "price": 99.0}]
PRICE_QUESTION = "How much does the Laptop cost?"


def store_error(code: str, message: str) -> Exception:
    """What the Neo4j adapter raises when the server answers `code` (the driver's own exception
    for it, classified by the adapter): the store port's errors."""
    from csagent.adapters.neo4j_graph import classify_neo4j_error
    from csagent.resilience.faults import neo4j_error

    return classify_neo4j_error(neo4j_error(code, message))


_LOOKUP_RE = re.compile(r"MATCH \(n:`(\w+)`\) (?:UNWIND n\.`(\w+)` AS value WITH DISTINCT value WHERE "
                        r"toLower\(value\)|WHERE toLower\(n\.`(\w+)`\)) (=|CONTAINS|STARTS WITH|ENDS WITH) "
                        r"toLower\(\$value\)")
_HINTS_RE = re.compile(r"MATCH \(n:`(\w+)`\) (?:RETURN DISTINCT n\.`(\w+)` AS value|UNWIND (?:n\.`(\w+)`|"
                       r"split\(n\.`(\w+)`, ', '\)) AS value RETURN DISTINCT value)")


class FakeGraph:
    """A `GraphStore` with EXPLAIN. Internal lookups (vocabulary, values, example retrieval)
    are answered from `VALUES`; every other read is an execution, recorded in `executed`."""

    def __init__(self, rows: Callable[[str, Mapping[str, Any]], list[dict[str, Any]]] | None = None, *,
                 syntax_errors: Mapping[str, str] | None = None, query_types: Mapping[str, str] | None = None,
                 execute_error: BaseException | None = None) -> None:
        self._rows = rows or (lambda cypher, params: list(VALID_ROWS))
        self.syntax_errors = dict(syntax_errors or {})
        self.query_types = dict(query_types or {})
        self.execute_error = execute_error
        self.explained: list[str] = []
        self.executed: list[dict[str, Any]] = []
        self.writes: list[str] = []

    def explain(self, cypher: str, *, timeout_s: float | None = None) -> Mapping[str, Any]:
        self.explained.append(cypher)
        if cypher in self.syntax_errors:
            raise store_error("Neo.ClientError.Statement.SyntaxError", self.syntax_errors[cypher])
        return {"query_type": self.query_types.get(cypher, "r"), "notifications": []}

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        params = dict(params or {})
        if cypher == cc._VOCABULARY_CYPHER:
            return [{"name": n, "category": c, "texts": []} for n, c in PRODUCTS.items()]
        if "db.index.vector.queryNodes" in cypher:
            return []  # the bank is not provisioned: the pipeline ranks the file's examples in memory
        if (m := _LOOKUP_RE.match(cypher)) is not None:
            label, prop, op = m.group(1), m.group(2) or m.group(3), m.group(4)
            wanted = str(params["value"]).lower()
            test = {"=": str.__eq__, "CONTAINS": str.__contains__, "STARTS WITH": str.startswith,
                    "ENDS WITH": str.endswith}[op]
            return [{"value": v} for v in VALUES.get((label, prop), []) if test(v.lower(), wanted)][:5]
        if (m := _HINTS_RE.match(cypher)) is not None:
            prop = m.group(2) or m.group(3) or m.group(4)
            return [{"value": v} for v in VALUES.get((m.group(1), prop), [])]
        self.executed.append({"cypher": cypher, "params": params, "timeout_s": timeout_s,
                              "max_rows": max_rows})
        if self.execute_error is not None:
            raise self.execute_error
        rows = self._rows(cypher, params)
        return rows[:max_rows] if max_rows is not None else rows

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        self.writes.append(cypher)
        raise AssertionError("Text2Cypher must never write")

    def ping(self) -> bool:
        return True

    def ran(self, cypher: str) -> bool:
        return any(call["cypher"] == cypher for call in self.executed)


class ScriptedModel(BaseChatModel):
    """A chat model that answers from a script and records every conversation it was sent."""

    replies: list[Any]
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        if not self.replies:
            raise AssertionError("the model was called more often than scripted")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def last_prompt(self) -> str:
        return str(self.calls[-1][-1].content)


@pytest.fixture(scope="module")
def embedder() -> Any:
    return get_embedder()


def _pipeline(graph: FakeGraph, replies: Sequence[Any] | None, embedder: Any = None, **options: Any
              ) -> tuple[Text2Cypher, ScriptedModel | None]:
    model = ScriptedModel(replies=list(replies)) if replies is not None else None
    return Text2Cypher(graph, model, embedder, **options), model


def _product_price_rows(cypher: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    if cypher == cc.load_catalogue().get("product_price").cypher:  # type: ignore[union-attr]
        assert params == {"product_name": "laptop"}
        return [{"product_name": "Laptop", "product_id": "4760268021", "min_price": 999.0,
                 "max_price": 2999.0, "avg_price": 1800.0, "variants": 12}]
    return []


# ------------------------------------------------------------------------------- happy path
def test_a_valid_first_query_runs_once_in_a_read_with_timeout_and_row_cap() -> None:
    # Given a model whose first query is valid
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [VALID], timeout_s=3.0, max_rows=20)
    # When the question is answered
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the query ran once, through the READ path, with the timeout and one row over the cap
    assert outcome.status == "success"
    assert outcome.rows == VALID_ROWS and outcome.cypher == VALID
    assert [c["cypher"] for c in graph.executed] == [VALID]
    assert (graph.executed[0]["timeout_s"], graph.executed[0]["max_rows"]) == (3.0, 21)
    # And every check passed on the single attempt
    assert model is not None and len(model.calls) == 1
    steps = {s.name: s.verdict for s in outcome.attempts[0].steps}
    assert steps == {"generate": "pass", "keyword_scan": "pass", "explain": "pass", "read_only": "pass",
                     "schema": "pass", "values": "pass", "execute": "pass"}


def test_the_first_prompt_injects_the_schema_and_similar_examples(embedder: Any) -> None:
    # Given the pipeline with the example bank (ranked in memory: the fake has no vector index)
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [VALID], embedder)
    # When a counting question is asked
    outcome = pipeline.run("How many products does each category have?")
    # Then the system prompt holds the allowed schema and the store's names, never customer data
    assert model is not None
    system = str(model.calls[0][0].content)
    assert "(:Product)-[:HAS_VARIANT]->(:Variant)" in system and "Water Bottle" in system
    assert "Customer {" not in system and ":Order" not in system
    # And the closest example of the bank is one of the few-shot turns
    assert outcome.examples[0].example_id == "products_per_category"
    assert outcome.examples[0].source == "memory"
    assert any("count(p) AS products" in str(m.content) for m in model.calls[0][1:-1])


def test_the_answer_is_read_from_a_code_fence() -> None:
    # Given a model that wraps its query in a fence with an explanation
    graph = FakeGraph()
    pipeline, _ = _pipeline(graph, [f"Here you go:\n```cypher\n{VALID};\n```\nThis lists prices."])
    # When the question is answered
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the fenced query is the one that ran
    assert outcome.status == "success" and graph.ran(VALID)


def test_rows_are_capped_and_vectors_dropped() -> None:
    # Given a query whose result is longer than the cap and carries chunk embeddings
    rows = [{"chunk": {"chunk_id": f"faq#{i}", "embedding": [0.1] * 384}} for i in range(8)]
    query = "MATCH (c:Chunk) RETURN c AS chunk LIMIT 10"
    graph = FakeGraph(lambda cypher, params: rows)
    pipeline, _ = _pipeline(graph, [query], max_rows=5)
    # When it runs
    outcome = pipeline.run("Show me some help passages")
    # Then at most max_rows rows come back, marked truncated, without vectors
    assert outcome.truncated and len(outcome.rows) == 5
    assert outcome.rows[0] == {"chunk": {"chunk_id": "faq#0"}}


# ------------------------------------------------------------------------------- corrections
def test_a_syntax_error_is_corrected_with_neo4j_message_as_hint() -> None:
    # Given a first query Neo4j cannot parse, and a fixed second one
    broken = "MATCH (p:Product WHERE p.name = 'Headphones' RETURN p.name AS name"
    # (as Neo4j words it: the echoed query is quoted, the caret sits under the offending token)
    echoed = f'"EXPLAIN {broken}"'
    message = (f"Invalid input 'RETURN': expected ')' (line 1, column 54 (offset: 53))\n{echoed}\n"
               + " " * echoed.index("RETURN") + "^")
    graph = FakeGraph(syntax_errors={broken: message})
    pipeline, model = _pipeline(graph, [broken, VALID])
    # When the question is answered
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the first attempt failed EXPLAIN with a typed syntax error and was never executed
    first = outcome.attempts[0]
    assert [type(e) for e in first.errors if isinstance(e, SyntaxInvalid)] == [SyntaxInvalid]
    assert not graph.ran(broken)
    # And the correction prompt quoted Neo4j's message and where it points
    assert model is not None and "Invalid input 'RETURN'" in model.last_prompt()
    assert "near 'RETURN p.name AS name'" in model.last_prompt()
    # And the corrected query ran
    assert outcome.status == "success" and len(outcome.attempts) == 2 and graph.ran(VALID)


def test_a_reversed_relationship_is_corrected() -> None:
    # Given a query that walks HAS_VARIANT from the variant to the product, then the fix
    reversed_query = ("MATCH (v:Variant)-[:HAS_VARIANT]->(p:Product) WHERE p.name = 'Laptop' "
                      "RETURN v.price AS price")
    fixed = ("MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant) WHERE p.name = 'Laptop' "
             "RETURN v.price AS price")
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [reversed_query, fixed])
    # When the question is answered
    outcome = pipeline.run("What are the Laptop prices?")
    # Then the first attempt is a WrongDirection whose hint shows the stored direction
    errors = outcome.attempts[0].errors
    assert [type(e) for e in errors] == [WrongDirection]
    assert model is not None and "write (:Product)-[:HAS_VARIANT]->(:Variant)" in model.last_prompt()
    # And only the corrected query ran
    assert not graph.ran(reversed_query) and graph.ran(fixed) and outcome.status == "success"


def test_an_unknown_label_is_corrected() -> None:
    # Given a misspelt label, then the fix
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, ["MATCH (p:Prodcut) RETURN p.name AS name", VALID])
    # When the question is answered
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the label is reported unknown with a suggestion, and the fix ran
    error = outcome.attempts[0].errors[0]
    assert isinstance(error, UnknownLabel) and "did you mean Product" in (error.hint or "")
    assert model is not None and "[unknown_label]" in model.last_prompt()
    assert outcome.status == "success"


def test_a_value_missing_from_the_store_is_corrected_with_close_values() -> None:
    # Given a query comparing the product name with a value the store does not hold
    wrong = "MATCH (p:Product) WHERE p.name = 'Headphone' RETURN p.product_id AS product_id"
    fixed = "MATCH (p:Product) WHERE p.name = 'Headphones' RETURN p.product_id AS product_id"
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [wrong, fixed])
    # When the question is answered
    outcome = pipeline.run("What is the id of the headphone?")
    # Then the value check failed with the stored spelling as a hint, before execution
    error = outcome.attempts[0].errors[0]
    assert isinstance(error, UnknownValue) and "'Headphones'" in (error.hint or "")
    assert not graph.ran(wrong)
    # And the corrected query (which passes the same check) ran
    assert model is not None and "close stored values: 'Headphones'" in model.last_prompt()
    assert outcome.status == "success" and graph.ran(fixed)


def test_a_case_mismatch_on_a_case_sensitive_comparison_is_an_unknown_value() -> None:
    # Given a literal that exists only in another letter case, compared with '='
    graph = FakeGraph()
    pipeline, _ = _pipeline(graph, ["MATCH (p:Product) WHERE p.name = 'headphones' RETURN p.name AS n",
                                    VALID])
    # When it is validated
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then it fails (it would silently return nothing) and names the stored spelling
    error = outcome.attempts[0].errors[0]
    assert isinstance(error, UnknownValue) and "'Headphones'" in error.message


def test_every_error_of_an_attempt_is_sent_back() -> None:
    # Given a query with a reversed relationship AND an unknown property
    bad = "MATCH (v:Variant)-[:HAS_VARIANT]->(p:Product) RETURN p.price AS price"
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [bad, VALID])
    # When it is corrected
    pipeline.run("What do the Headphones variants cost?")
    # Then the correction prompt lists both problems
    assert model is not None
    prompt = model.last_prompt()
    assert "[wrong_direction]" in prompt and "[unknown_property]" in prompt
    assert "Product has no property price" in prompt


def test_a_corrected_query_is_validated_again_from_the_start() -> None:
    # Given a correction that fixes one problem and introduces another
    first = "MATCH (v:Variant)-[:HAS_VARIANT]->(p:Product) RETURN v.price AS price"
    second = "MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant) RETURN v.cost AS price"
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [first, second, VALID])
    # When the question is answered
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the second query's new error was caught too, and only the third ran
    assert isinstance(outcome.attempts[1].errors[0], UnknownProperty)
    assert [c["cypher"] for c in graph.executed] == [VALID]
    assert [a.kind for a in outcome.attempts] == ["generate", "correct", "correct"]


# ------------------------------------------------------------------------------- refusals
WRITES = {
    "create": "CREATE (p:Product {product_id: '1', name: 'Rocket', category: 'Toys'})",
    "merge": "MERGE (c:Category {name: 'Rockets'}) RETURN c.name AS name",
    "set": "MATCH (v:Variant) SET v.price = 0 RETURN count(v) AS n",
    "delete": "MATCH (p:Product)-[:HAS_VARIANT]->(v:Variant) DETACH DELETE v",
    "remove": "MATCH (v:Variant) REMOVE v.available RETURN count(v) AS n",
    "load_csv": "LOAD CSV FROM 'https://example.com/prices.csv' AS row RETURN row",
    "write_procedure": "CALL apoc.create.node(['Product'], {name: 'Rocket'}) YIELD node RETURN node",
    "periodic": "CALL apoc.periodic.iterate('MATCH (p:Product) RETURN p', 'DETACH DELETE p', {})",
    "dbms": "CALL dbms.setConfigValue('db.logs.query.enabled', 'OFF')",
    "foreach": "MATCH (p:Product) FOREACH (x IN [1] | SET p.name = 'x')",
}


@pytest.mark.parametrize("query", list(WRITES.values()), ids=list(WRITES))
def test_a_write_attempt_is_refused_and_never_sent_to_the_database(query: str) -> None:
    # Given a model that keeps writing (and no embedder, so no template can answer instead)
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, [query, query, query])
    # When the question is answered
    outcome = pipeline.run("Add a product called Rocket to the catalogue")
    # Then every attempt was refused as a write by the keyword scan ...
    assert model is not None and len(model.calls) == 3
    assert all(any(isinstance(e, WriteAttempt) for e in a.errors) for a in outcome.attempts)
    # ... and the query was never executed, never EXPLAINed, never written
    assert graph.executed == [] and graph.explained == [] and graph.writes == []
    # And the tool reports a typed refusal
    result = t2c.to_tool_result(outcome, Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME))
    assert result.status == TaskStatus.FAILED and result.error is not None
    assert result.error.type == ErrorType.PERMISSION_DENIED


def test_a_query_explain_plans_as_a_write_is_refused_by_the_query_type() -> None:
    # Given a query the keyword scan lets through but Neo4j plans as read-write
    sneaky = "MATCH (p:Product) RETURN p.name AS name"
    graph = FakeGraph(query_types={sneaky: "rw"})
    pipeline, _ = _pipeline(graph, [sneaky, VALID])
    # When it is validated
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the read-only step refused it (second line of defence) and it never ran
    step = next(s for s in outcome.attempts[0].steps if s.name == "read_only")
    assert step.verdict == "fail" and isinstance(step.errors[0], WriteAttempt)
    assert not graph.ran(sneaky) and graph.ran(VALID)


@pytest.mark.parametrize("query", [
    "MATCH (c:Customer) RETURN c.email AS email",
    "MATCH (o:Order) RETURN o.order_id AS id, o.total AS total",
    "MATCH (c:Customer)-[:PLACED]->(o:Order)-[:HAS_LINE]->(l:OrderLine) RETURN c.first_name, l.name",
    "MATCH (l)-[:OF_VARIANT]->(v:Variant) RETURN l",
    "MATCH (n) RETURN n LIMIT 5",
    "MATCH (p:Product)-[*]-(x) RETURN x LIMIT 5",
], ids=["customer", "order", "order_lines", "of_variant", "any_node", "untyped_path"])
def test_reaching_customer_data_is_refused_and_never_executed(query: str) -> None:
    # Given a model that tries to read customer-side data
    graph = FakeGraph()
    pipeline, _ = _pipeline(graph, [query, query, query])
    # When the question is answered
    outcome = pipeline.run("Who bought the most headphones?")
    # Then every attempt is refused as outside the schema and nothing ran
    assert all(any(isinstance(e, OutsideSchema) for e in a.errors) for a in outcome.attempts)
    assert graph.executed == []
    assert outcome.status == "failed" and isinstance(outcome.error, OutsideSchema)


def test_parameters_are_refused_because_none_are_supplied() -> None:
    # Given a query with a $parameter
    graph = FakeGraph()
    pipeline, _ = _pipeline(graph, ["MATCH (p:Product {name: $name}) RETURN p.name AS n", VALID])
    # When it is validated
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then it is refused with a hint to inline the value
    error = outcome.attempts[0].errors[0]
    assert isinstance(error, ParameterNotAllowed) and "literals" in (error.hint or "")


# ------------------------------------------------------------------------------- failures
def test_a_timeout_is_typed_retryable_and_not_corrected() -> None:
    # Given a valid query that the database stops at its time limit
    graph = FakeGraph(execute_error=store_error(
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration", "terminated"))
    pipeline, model = _pipeline(graph, [VALID, VALID])
    # When it runs
    outcome = pipeline.run("What do the Headphones variants cost?")
    # Then the outcome is a typed Timeout, the model is not asked again
    assert outcome.status == "failed" and isinstance(outcome.error, Timeout)
    assert model is not None and len(model.calls) == 1
    # And the tool result is a retryable TIMEOUT
    result = t2c.to_tool_result(outcome, Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME))
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == (ErrorType.TIMEOUT, True)


def test_an_empty_result_is_no_results() -> None:
    # Given a valid query that matches nothing
    graph = FakeGraph(lambda cypher, params: [])
    pipeline, _ = _pipeline(graph, [VALID])
    # When the tool result is built
    outcome = pipeline.run("What do the Headphones variants cost?")
    result = t2c.to_tool_result(outcome, Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME))
    # Then it is NO_RESULTS (the healer degrades to other search), with the query kept for debugging
    assert outcome.status == "success" and result.error is not None
    assert result.error.type == ErrorType.NO_RESULTS
    assert result.data is not None and result.data.cypher == VALID


def test_an_exhausted_correction_budget_falls_back_to_the_closest_template(embedder: Any) -> None:
    # Given a model that never produces a valid query
    bad = "MATCH (p:Prodcut) RETURN p.price AS price"
    graph = FakeGraph(_product_price_rows)
    pipeline, model = _pipeline(graph, [bad, bad, bad], embedder)
    # When a price question is answered
    outcome = pipeline.run(PRICE_QUESTION)
    # Then the model was asked 1 + 2 times, then the product_price template answered
    assert model is not None and len(model.calls) == 3
    assert outcome.status == "fallback" and outcome.fallback is not None
    assert outcome.fallback.template_id == "product_price"
    assert "no valid query after 3 attempt(s)" in outcome.fallback.reason
    assert outcome.rows[0]["product_name"] == "Laptop" and outcome.rows[0]["min_price"] == 999.0
    # And the tool result is a FALLBACK carrying the template's data and why
    result = t2c.to_tool_result(outcome, Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME))
    assert result.status == TaskStatus.FALLBACK and result.data is not None
    assert result.data.template_id == "product_price"
    assert result.data.text2cypher["errors"][0]["code"] == "unknown_label"


def test_no_fallback_when_no_catalogue_template_is_close(embedder: Any) -> None:
    # Given invalid queries for a question no template resembles
    bad = "MATCH (p:Prodcut) RETURN p.name AS name"
    graph = FakeGraph()
    pipeline, _ = _pipeline(graph, [bad, bad, bad], embedder)
    # When it is answered
    outcome = pipeline.run("Which product names are palindromes?")
    # Then it fails with the typed validation error, saying no template was close enough
    assert outcome.status == "failed" and isinstance(outcome.error, UnknownLabel)
    assert outcome.fallback is not None and "no catalogue template is close enough" in outcome.fallback.reason


def test_the_local_tier_goes_straight_to_the_templates(embedder: Any) -> None:
    # Given no generative model (the local tier)
    graph = FakeGraph(_product_price_rows)
    pipeline, _ = _pipeline(graph, None, embedder)
    # When a price question is answered
    outcome = pipeline.run(PRICE_QUESTION)
    # Then no query was generated, a template answered, and the outcome says why
    assert outcome.attempts == []
    assert outcome.status == "fallback" and outcome.fallback is not None
    assert outcome.fallback.template_id == "product_price"
    assert "local tier" in outcome.fallback.reason


def test_a_model_failure_falls_back_without_correction(embedder: Any) -> None:
    # Given a model endpoint that fails
    graph = FakeGraph(_product_price_rows)
    pipeline, model = _pipeline(graph, [ConnectionError("endpoint down")], embedder)
    # When a price question is answered
    outcome = pipeline.run(PRICE_QUESTION)
    # Then the model was called once and the template answered
    assert model is not None and len(model.calls) == 1
    assert outcome.attempts[0].errors[0].code == "model_error"
    assert outcome.status == "fallback" and outcome.fallback is not None
    assert "the model call failed" in outcome.fallback.reason


def test_an_unsupported_answer_is_not_corrected() -> None:
    # Given a model that says the question is outside the catalogue graph
    graph = FakeGraph()
    pipeline, model = _pipeline(graph, ["UNSUPPORTED"])
    # When the question is answered
    outcome = pipeline.run("Where is my order?")
    # Then there is no correction round and the failure is typed
    assert model is not None and len(model.calls) == 1
    assert isinstance(outcome.error, QuestionOutOfScope) and graph.executed == []


# ------------------------------------------------------------------------------- debug view
def test_explain_returns_every_attempt_step_and_the_final_answer() -> None:
    # Given a run that needed one correction
    graph = FakeGraph()
    model = ScriptedModel(replies=["MATCH (p:Prodcut) RETURN p.name AS name", VALID])
    # When the debug view is built
    view = explain("What do the Headphones variants cost?", graph=graph, model=model, embedder=None)
    # Then it lists both attempts with their steps and verdicts, and the final query and rows
    assert view["question"] == "What do the Headphones variants cost?"
    assert [a["cypher"] for a in view["attempts"]] == ["MATCH (p:Prodcut) RETURN p.name AS name", VALID]
    first_steps = {s["name"]: s["verdict"] for s in view["attempts"][0]["steps"]}
    assert first_steps["schema"] == "fail" and first_steps["values"] == "skip"
    assert all(set(s) >= {"name", "verdict", "detail"} for a in view["attempts"] for s in a["steps"])
    assert view["final"] == {"cypher": VALID, "rows": VALID_ROWS, "row_count": 2, "truncated": False,
                             "status": "success", "error": None}
    assert "fallback" not in view
    assert set(view["timings"]) == {"total_ms", "model_ms", "pipeline_ms"}


def test_explain_shows_the_fallback_when_used(embedder: Any) -> None:
    # Given the local tier
    view = explain(PRICE_QUESTION, graph=FakeGraph(_product_price_rows), model=None, embedder=embedder)
    # Then the view names the template and the reason
    assert view["final"]["status"] == "fallback"
    assert view["fallback"]["template_id"] == "product_price" and view["fallback"]["status"] == "success"


# ------------------------------------------------------------------------------- the tool entry
@pytest.fixture
def reset_config() -> Iterator[None]:
    saved = t2c.current_config()
    yield
    t2c._CONFIG = saved


def _ctx(graph: Any, embedder: Any = None) -> ToolContext:
    return ToolContext(graph=graph, customer_id="james_li_5688", embedder=embedder)


def test_the_tool_refuses_a_missing_question() -> None:
    # Given a task without a question
    result = t2c.run(Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME), _ctx(FakeGraph()))
    # Then it is a VALIDATION failure, not a crash
    assert result.error is not None and result.error.type == ErrorType.VALIDATION


def test_the_tool_refuses_an_invalid_model_setting() -> None:
    # Given a task naming a malformed model spec
    task = Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME,
                args={"question": PRICE_QUESTION, "model": "openai/llama3"})
    # When the tool runs
    result = t2c.run(task, _ctx(FakeGraph()))
    # Then the setting is reported, precisely
    assert result.error is not None and result.error.type == ErrorType.VALIDATION
    assert "has no endpoint" in result.error.message


def test_the_tool_in_the_local_tier_answers_from_a_template(embedder: Any, reset_config: None) -> None:
    # Given the tool configured for the local tier
    t2c.configure("local")
    task = Task(task_id="t7", task_type="lookup", tool=t2c.TOOL_NAME, args={"question": PRICE_QUESTION})
    # When it runs
    result = t2c.run(task, _ctx(FakeGraph(_product_price_rows), embedder))
    # Then the result is the template's, marked FALLBACK, for this task
    assert (result.task_id, result.status) == ("t7", TaskStatus.FALLBACK)
    assert result.data is not None and result.data.rows[0]["product_name"] == "Laptop"
    assert "local tier" in result.data.text2cypher["reason"]


def test_the_tool_answers_with_a_generated_query(monkeypatch: pytest.MonkeyPatch, reset_config: None) -> None:
    # Given a configured model (scripted here)
    model = ScriptedModel(replies=[VALID])
    monkeypatch.setattr(t2c, "model_for", lambda spec, question: model)
    t2c.configure("openai/smollm2@http://127.0.0.1:8001/v1", max_rows=10)
    task = Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME,
                args={"question": "What do the Headphones variants cost?"})
    # When the tool runs
    graph = FakeGraph()
    result = t2c.run(task, _ctx(graph))
    # Then the rows of the generated query come back with the query and its columns
    assert result.status == TaskStatus.SUCCESS and result.data is not None
    assert (result.data.cypher, result.data.columns, result.data.rows) == (
        VALID, ["item_id", "price"], VALID_ROWS)
    assert graph.executed[0]["max_rows"] == 11


@pytest.mark.parametrize(("question", "bedrock_calls", "vllm_calls"), [
    ("What do the Headphones variants cost?", 1, 0),
    ("What do the Headphones in my order #W2611340 cost?", 0, 1),
])
def test_the_tool_asks_the_text2cypher_role_through_the_gateway_and_its_data_rule(
        monkeypatch: pytest.MonkeyPatch, reset_config: None, question: str, bedrock_calls: int,
        vllm_calls: int) -> None:
    # Given the TEXT2CYPHER chain bedrock|self-hosted, both answering a valid query
    from model_fakes import BEDROCK, VLLM, ScriptedChat, gateway_of

    import csagent.models.gateway as gateway_module

    bedrock, vllm = ScriptedChat(replies=[VALID]), ScriptedChat(replies=[VALID])
    monkeypatch.setattr(gateway_module, "get_gateway",
                        lambda: gateway_of(["local"], {BEDROCK: bedrock, VLLM: vllm}))
    t2c.configure(f"{BEDROCK}|{VLLM}")
    task = Task(task_id="t", task_type="lookup", tool=t2c.TOOL_NAME, args={"question": question})
    # When the tool runs
    result = t2c.run(task, _ctx(FakeGraph()))
    # Then the generated query answered; Bedrock saw the catalogue question, never the one naming an order
    assert result.status == TaskStatus.SUCCESS
    assert (len(bedrock.calls), len(vllm.calls)) == (bedrock_calls, vllm_calls)


def test_configure_validates_the_model_spec(reset_config: None) -> None:
    # Given a malformed model setting at start-up
    # Then configuration fails at once, not at the first question
    with pytest.raises(ValueError, match="unknown model provider"):
        t2c.configure("gpt/4")


# ------------------------------------------------------------------------------- static parts
EXAMPLES = load_examples()


def test_the_example_bank_has_at_least_30_distinct_examples() -> None:
    # Given the shipped example file
    # Then it has at least 30 examples with unique ids and questions
    assert len(EXAMPLES) >= 30
    assert len({e.id for e in EXAMPLES}) == len({e.question for e in EXAMPLES}) == len(EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_every_example_passes_the_static_checks(example: Any) -> None:
    # Given an example query
    # Then it is one read-only statement within the catalogue schema
    assert validate_statically(example.cypher) == []


def test_the_schema_text_names_every_allowed_pattern_and_no_customer_data() -> None:
    # Given the schema text the model sees
    text = CATALOGUE_SCHEMA.prompt_text()
    # Then every allowed label and relationship (with its direction) is there, and no forbidden name
    assert all(f"(:{label})" in text for label in CATALOGUE_SCHEMA.labels)
    assert all(rel.pattern in text for rel in CATALOGUE_SCHEMA.relationships)
    assert not any(re.search(rf"\b{name}\b", text) for name in CATALOGUE_SCHEMA.forbidden_labels
                   | CATALOGUE_SCHEMA.forbidden_relationships - {"CONTAINS"})


@pytest.mark.parametrize(("answer", "expected"), [
    ("MATCH (n:Product) RETURN n.name AS name;", "MATCH (n:Product) RETURN n.name AS name"),
    ("```cypher\nMATCH (n:Product) RETURN n\n```", "MATCH (n:Product) RETURN n"),
    ("Cypher: MATCH (n:Product) RETURN n", "MATCH (n:Product) RETURN n"),
    ("  ```\nMATCH (n:Product) RETURN n;\n```  ", "MATCH (n:Product) RETURN n"),
])
def test_the_query_is_extracted_from_the_model_answer(answer: str, expected: str) -> None:
    # Given a model answer in one of the usual shapes
    # Then the bare query is extracted
    assert extract_cypher(answer) == expected


_LITERAL_TEXT = st.text(alphabet=st.characters(blacklist_characters="'\\", blacklist_categories=("Cs",)),
                        max_size=40)


@settings(max_examples=150, deadline=None)
@given(text=_LITERAL_TEXT)
def test_keywords_inside_string_literals_never_count_as_writes(text: str) -> None:
    # Given any text (including 'SET', 'DELETE', '//', ';') inside a string literal
    query = f"MATCH (p:Product) WHERE p.name = '{text}' RETURN p.name AS name"
    # Then the keyword scan finds nothing to refuse
    assert scan_keywords(mask_cypher(query)) == []


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=120))
def test_the_static_checks_never_crash_on_any_text(text: str) -> None:
    # Given arbitrary model output
    # Then the static validation returns a list of typed errors (possibly empty), never raises
    errors = validate_statically(text)
    assert all(hasattr(e, "code") for e in errors)


@settings(max_examples=60, deadline=None)
@given(label=st.sampled_from(sorted(CATALOGUE_SCHEMA.forbidden_labels)),
       form=st.sampled_from(["MATCH (x:{l}) RETURN x", "MATCH (p:Product) WHERE p:{l} RETURN p",
                             "MATCH (p:Product|{l}) RETURN p", "MATCH (p:Product), (x:{l}) RETURN p",
                             "MATCH (p:Product)-[:HAS_VARIANT]->(v) WHERE v IS {l} RETURN p"]))
def test_any_customer_side_label_is_outside_the_schema(label: str, form: str) -> None:
    # Given a query naming a customer-side label in any position
    errors = validate_statically(form.format(l=label))
    # Then it is refused as outside the schema
    assert any(isinstance(e, OutsideSchema) for e in errors)
