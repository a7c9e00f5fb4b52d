"""Observability of a turn: the structured log line (PII masked, session as correlation id), the
EMF metrics (names, dimensions, namespace), tracer subsegments per node and per tool call, and
the router handler's Powertools wiring. Fake ports only: the real graph runs with a fake
understanding, a fake tool and LangGraph's in-memory saver; Powertools prints to stdout, which
`capsys` captures."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphInterrupt

from csagent import observability
from csagent.domain.models import ErrorType, Principal, Task, ToolResult
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.healing import run_healed
from csagent.resilience.bounds import Bounds
from csagent.resilience.breaker import breakers
from csagent.service.conversation import ConversationService
from csagent.service.schemas import MessageIn, TaskOut, TurnOut
from csagent.tools.context import ToolContext
from csagent.understanding import Clause, Understanding

ROOT = Path(__file__).resolve().parents[2]
ROUTER_APP = ROOT / "functions" / "router" / "app.py"
ORDER = "#W1234567"
EMAIL, CARD = "jane.doe@example.com", "4111 1111 1111 1111"
NAMESPACE = "CsAgentTest"
BOUNDS = Bounds(backoff_base_s=0.001, backoff_max_s=0.002)


# -- fakes -------------------------------------------------------------------------------------
def order_status_tool(task: Task, ctx: ToolContext) -> ToolResult:
    return ToolResult.ok(
        task,
        {
            "template_id": "order_overview",
            "row": {
                "order_id": task.args.params["order_id"],
                "order_status": "processed",
                "shipments": [],
                "items": [{"name": "Headphones", "product_id": "p-1"}],
            },
        },
    )


def understand_order_status(text: str, state: Any) -> Understanding:
    clause = Clause(
        text="where is my order", intent="order_status", confidence=0.9, entities={"order_id": ORDER}
    )
    return Understanding(
        route="knowledge_and_actions", intent="order_status", confidence=0.9, clauses=(clause,)
    )


class FakeSessions:
    """Owner check and turn lease always granted (the lease itself is tested elsewhere)."""

    def get_owned(self, session_id: str, owner: str) -> Any:
        return SimpleNamespace(status="active", turn_count=0)

    def begin_turn(self, session_id: str, owner: str, head: str | None) -> Any:
        return object()

    def release(self, lease: Any) -> None:
        return None


def conversation_service() -> ConversationService:
    deps = GraphDeps(
        understand=understand_order_status,
        tools={"predefined_cypher": order_status_tool},
        make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid),
    )  # type: ignore[arg-type]
    return ConversationService(build_graph().compile(checkpointer=InMemorySaver()), FakeSessions(), deps)


def one_turn(text: str = f"where is my order {ORDER}?", session_id: str = "s-obs-1") -> TurnOut:
    principal = Principal(subject="cust_1", customer_id="cust_1")
    return conversation_service().handle_message(principal, session_id, MessageIn(text=text))


class Script:
    """A tool answering from a script of outcomes: ("fail", ErrorType) or ("ok", None)."""

    def __init__(self, *outcomes: tuple[str, ErrorType | None]) -> None:
        self.outcomes = list(outcomes)

    def __call__(self, task: Task, ctx: ToolContext) -> ToolResult:
        status, error = self.outcomes.pop(0) if self.outcomes else ("ok", None)
        if status == "ok":
            return ToolResult.ok(task, {"answer": "fine"})
        assert error is not None
        return ToolResult.failed(task, error, f"{error.value} happened", retryable=True)


class RecordingSegment:
    def __init__(self, name: str) -> None:
        self.name, self.annotations, self.exceptions = name, {}, []

    def put_annotation(self, key: str, value: Any) -> None:
        self.annotations[key] = value


class RecordingProvider:
    """A tracing provider (Powertools `BaseProvider` shape) that remembers every subsegment."""

    def __init__(self) -> None:
        self.segments: list[RecordingSegment] = []
        self._lock = threading.Lock()

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any) -> Iterator[RecordingSegment]:
        segment = RecordingSegment(name or "")
        with self._lock:
            self.segments.append(segment)
        try:
            yield segment
        except BaseException as exc:
            segment.exceptions.append(exc)
            raise

    def named(self, name: str) -> list[RecordingSegment]:
        return [s for s in self.segments if s.name == name]


# -- fixtures and readers ----------------------------------------------------------------------
@pytest.fixture(autouse=True)
def metrics_on(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Metrics on (as in Lambda), a namespace, and a service name of this test's own, so that
    the Powertools logger is built now, writing to the captured stdout."""
    for name in ("LAMBDA_TASK_ROOT", "AWS_SAM_LOCAL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", f"router-test-{uuid.uuid4().hex[:8]}")
    observability.reset()
    observability.get_metrics().clear_metrics()
    breakers().reset()
    yield
    observability.get_metrics().clear_metrics()
    observability.reset()


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def turn_logs(out: str) -> list[dict[str, Any]]:
    return [line for line in json_lines(out) if line.get("message") == "turn"]


def emf(out: str) -> list[dict[str, Any]]:
    return [line for line in json_lines(out) if "_aws" in line]


def metric_points(out: str) -> list[tuple[str, str, frozenset[str], dict[str, str], list[float]]]:
    """(namespace, metric, dimension names, dimension values, values) of every metric in the output."""
    points = []
    for doc in emf(out):
        for directive in doc["_aws"]["CloudWatchMetrics"]:
            dims = directive["Dimensions"][0]
            for metric in directive["Metrics"]:
                name = metric["Name"]
                dimensions = {d: doc[d] for d in dims}
                points.append((directive["Namespace"], name, frozenset(dims), dimensions, doc[name]))
    return points


def values_of(out: str, name: str) -> list[list[float]]:
    """The values of every `name` data point (one list per EMF document)."""
    return [values for _, metric, _, _, values in metric_points(out) if metric == name]


# -- the turn's log line -----------------------------------------------------------------------
def test_a_turn_is_logged_once_with_the_session_as_correlation_id_and_its_tasks(capsys):
    # Given a message that becomes one order-status task
    # When the turn runs
    one_turn(session_id="s-obs-log")
    # Then exactly one turn line is logged, correlated by the session id, with route, tasks and node timings
    (line,) = turn_logs(capsys.readouterr().out)
    assert (line["correlation_id"], line["session_id"], line["turn"]) == ("s-obs-log", "s-obs-log", 1)
    assert (line["route"], line["status"], line["level"]) == ("knowledge_and_actions", "answered", "INFO")
    assert [(t["task_type"], t["tool"], t["status"], t["error_type"]) for t in line["tasks"]] == [
        ("order_status", "predefined_cypher", "success", None)
    ]
    assert {"load_context", "route", "plan", "summarise", "respond"} <= set(line["node_timings_ms"])


def test_email_and_card_number_in_the_customers_text_never_reach_the_log_but_the_order_id_does(capsys):
    # Given a customer who writes an e-mail address and a card number beside the order id
    text = f"I'm {EMAIL}, I paid with {CARD}; where is my order {ORDER}?"
    # When the turn runs
    one_turn(text)
    # Then nothing captured (stdout or stderr) holds the e-mail or the card; the order id is there
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert turn_logs(captured.out), "the turn was logged"
    assert EMAIL not in output
    assert CARD not in output and CARD.replace(" ", "") not in output
    assert ORDER in turn_logs(captured.out)[0]["text"]
    assert "[EMAIL]" in turn_logs(captured.out)[0]["text"] and "[CARD]" in turn_logs(captured.out)[0]["text"]


def test_the_logger_masks_any_line_not_only_the_turns(capsys):
    # Given the router's logger
    logger = observability.get_logger()
    # When code logs personal data in a free-text message
    logger.info(f"customer {EMAIL} paid with {CARD}")
    # Then the line is masked by the logger's serializer
    (line,) = json_lines(capsys.readouterr().out)
    assert line["message"] == "customer [EMAIL] paid with [CARD]"


def test_a_failing_logger_never_fails_the_turn(monkeypatch):
    # Given a logger that raises on every call
    def broken() -> Any:
        raise RuntimeError("log sink gone")

    monkeypatch.setattr(observability, "get_logger", broken)
    # When a turn runs
    turn = one_turn()
    # Then the customer still gets the answer
    assert turn.status == "answered" and ORDER in turn.reply["text"]


# -- metrics -----------------------------------------------------------------------------------
def test_a_turn_emits_its_metrics_in_the_configured_namespace(capsys):
    # Given a turn with one successful order-status task
    one_turn()
    # When the invocation's metrics are flushed (log_metrics does this around the handler)
    observability.get_metrics().flush_metrics()
    # Then the turn's counters, its route and the tool call are in the namespace, with their dimensions
    points = metric_points(capsys.readouterr().out)
    dims = {name: dimensions for _, name, _, dimensions, _ in points}
    values = {name: vals for _, name, _, _, vals in points}
    assert {ns for ns, *_ in points} == {NAMESPACE}
    for name in ("Turns", "TaskCount", "TaskFailed", "Handoff", "Clarification", "ModelCalls", "TurnLatency"):
        assert set(dims[name]) == {"service"}, name
    assert [values[n] for n in ("Turns", "TaskCount", "TaskFailed", "Handoff", "Clarification")] == [
        [1.0],
        [1.0],
        [0.0],
        [0.0],
        [0.0],
    ]
    assert values["TurnLatency"][0] > 0
    assert dims["Route"]["route"] == "knowledge_and_actions"
    assert set(dims["Route"]) == {"service", "route"}
    assert dims["ToolLatency"]["tool"] == "predefined_cypher"
    assert set(dims["ToolLatency"]) == {"service", "tool"}


def test_the_local_tier_reports_no_model_tokens_so_none_are_emitted(capsys):
    # Given a turn answered by the local tier (no generative model, no usage)
    one_turn()
    # When the metrics are flushed
    observability.get_metrics().flush_metrics()
    # Then there is no ModelTokens metric at all (not a zero)
    assert values_of(capsys.readouterr().out, "ModelTokens") == []


def test_model_tokens_are_emitted_when_a_model_reports_usage(capsys):
    # Given a turn whose trace carries a model's usage
    turn = TurnOut(
        session_id="s1",
        turn=1,
        status="answered",
        reply={"text": "ok"},
        tasks=[],
        trace={
            "route": "general",
            "model_calls": 1,
            "turn_ms": 5.0,
            "model_tokens": {"input_tokens": 120, "output_tokens": 30},
        },
    )
    # When it is recorded and flushed
    observability.record_turn(turn)
    observability.get_metrics().flush_metrics()
    # Then ModelTokens holds the total
    assert values_of(capsys.readouterr().out, "ModelTokens") == [[150.0]]


def test_a_handed_off_turn_with_a_failed_task_is_counted(capsys):
    # Given a turn that was handed to a person after its task failed
    failed = TaskOut(
        task_id="t1",
        task_type="return",
        tool="customer_actions",
        status="failed",
        latency_ms=3.0,
        error={"type": "business_rule_violation", "message": "outside the return window"},
    )
    turn = TurnOut(
        session_id="s1",
        turn=2,
        status="handed_off",
        reply={"text": "a person will reply"},
        tasks=[failed],
        trace={"route": "knowledge_and_actions", "turn_ms": 9.0},
    )
    # When it is recorded and flushed
    observability.record_turn(turn)
    observability.get_metrics().flush_metrics()
    # Then Handoff and TaskFailed count it, and the log line names the error type
    captured = capsys.readouterr().out
    assert (values_of(captured, "Handoff"), values_of(captured, "TaskFailed")) == ([[1.0]], [[1.0]])
    assert turn_logs(captured)[0]["tasks"][0]["error_type"] == "business_rule_violation"


def test_a_failed_tool_call_is_counted_by_error_type_and_its_retry_counted(capsys):
    # Given a tool that fails with a transient fault once, then answers
    tool = Script(("fail", ErrorType.TRANSIENT), ("ok", None))
    task = Task(task_id="t1", task_type="policy", tool="knowledge_search", args={"question": "returns?"})
    # When the task is healed and the metrics flushed
    run_healed(
        task,
        ToolContext(graph=None, customer_id="c1"),
        {"knowledge_search": tool},
        BOUNDS,  # type: ignore[arg-type]
        sleep=lambda s: None,
    )
    observability.get_metrics().flush_metrics()
    # Then one ToolFailure (error_type=transient), one Retry, and a latency for each of the two calls
    out = capsys.readouterr().out
    points = metric_points(out)
    failures = [(dims["error_type"], vals) for _, name, _, dims, vals in points if name == "ToolFailure"]
    assert failures == [("transient", [1.0])]
    assert values_of(out, "Retry") == [[1.0]]
    latencies = [dims["tool"] for _, name, _, dims, _ in points if name == "ToolLatency"]
    assert latencies == ["knowledge_search", "knowledge_search"]


def test_a_degraded_task_is_counted_and_its_fallback_call_measured_under_the_tool_that_answered(capsys):
    # Given an order question no template fits, and a Text2Cypher tool that answers it
    task = Task(
        task_id="t1",
        task_type="product_question",
        tool="predefined_cypher",
        args={"question": "which lamps are under $50?"},
    )
    tools = {"predefined_cypher": Script(("fail", ErrorType.NO_RESULTS)), "text2cypher": Script(("ok", None))}
    # When the task is healed and the metrics flushed
    run_healed(task, ToolContext(graph=None, customer_id="c1"), tools, BOUNDS, sleep=lambda s: None)  # type: ignore[arg-type]
    observability.get_metrics().flush_metrics()
    # Then one Degradation is counted and the second call's latency is under text2cypher
    captured = capsys.readouterr().out
    assert values_of(captured, "Degradation") == [[1.0]]
    assert [v["tool"] for _, name, _, v, _ in metric_points(captured) if name == "ToolLatency"] == [
        "predefined_cypher",
        "text2cypher",
    ]


def test_without_a_namespace_metrics_fall_back_to_csagent(monkeypatch, capsys):
    # Given an empty POWERTOOLS_METRICS_NAMESPACE
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "")
    observability.reset()
    # When a metric is emitted with a dimension (written at once) and one without (flushed)
    observability.emit("Route", "Count", 1, route="general")
    observability.emit("Turns", "Count", 1)
    observability.get_metrics().flush_metrics()
    # Then both are in the default namespace
    assert {ns for ns, *_ in metric_points(capsys.readouterr().out)} == {"csagent"}


def test_outside_lambda_metrics_are_off_unless_asked_for(monkeypatch, capsys):
    # Given no Lambda environment and no POWERTOOLS_METRICS_DISABLED
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED")
    observability.reset()
    # When a turn runs (as under `make serve`)
    one_turn()
    observability.get_metrics().flush_metrics()
    # Then only the turn's log line is printed: no EMF document
    captured = capsys.readouterr()
    assert emf(captured.out) == []
    assert len(turn_logs(captured.out)) == 1
    assert captured.err == ""


# -- traces ------------------------------------------------------------------------------------
@pytest.fixture
def tracing(monkeypatch: pytest.MonkeyPatch) -> RecordingProvider:
    """Tracing on, recorded (in Lambda this is the X-Ray provider)."""
    provider = RecordingProvider()
    tracer = SimpleNamespace(disabled=False, provider=provider)
    monkeypatch.setattr(observability, "get_tracer", lambda: tracer)
    return provider


def test_each_node_and_each_tool_call_runs_in_its_own_annotated_subsegment(tracing):
    # Given tracing is on
    # When a turn with one order-status task runs
    one_turn()
    # Then every node that ran has a node subsegment, and the tool call one annotated with its outcome
    names = {s.name for s in tracing.segments}
    assert {
        "node:load_context",
        "node:guard_input",
        "node:route",
        "node:plan",
        "node:summarise",
        "node:respond",
    } <= names
    (call,) = tracing.named("tool:predefined_cypher")
    expected = {"tool": "predefined_cypher", "task_type": "order_status", "attempt": 1, "status": "success"}
    assert expected.items() <= call.annotations.items()
    assert tracing.named("node:route")[0].annotations["node"] == "route"


def test_a_paused_turn_ends_its_subsegment_as_interrupted_not_as_a_fault(tracing):
    # Given tracing is on and a node that pauses the graph (LangGraph's interrupt)
    # When the pause bubbles up through the node's span
    with pytest.raises(GraphInterrupt), observability.node_span("node:await_approval"):
        raise GraphInterrupt(())
    # Then the subsegment is closed without an exception and says it was interrupted
    (segment,) = tracing.named("node:await_approval")
    assert segment.exceptions == []
    assert segment.annotations["interrupted"] is True


@pytest.mark.parametrize(
    ("env", "traced"),
    [
        ({}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "1"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"}, False),
    ],
)
def test_tracing_is_on_only_in_lambda_and_never_when_disabled(monkeypatch, env, traced):
    # Given an environment
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    observability.reset()
    # When the settings are read
    settings = observability.get_settings()
    # Then X-Ray is used only in a real Lambda environment that did not disable it
    assert settings.tracing_enabled is traced


def test_outside_lambda_the_tracer_is_a_no_op():
    # Given no Lambda environment
    # When a span is opened
    with observability.node_span("node:route", node="route") as segment:
        segment.put_annotation(key="status", value="ok")
    # Then the tracer is disabled and the span is the no-op one
    assert observability.get_tracer().disabled is True
    assert segment is observability.NOOP_SEGMENT


# -- the router handler ------------------------------------------------------------------------
class LambdaContext:
    function_name = "RouterFunction"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:RouterFunction"
    aws_request_id = "req-obs-1"


@pytest.fixture
def load_router_handler(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Loads functions/router/app.py (in the test itself, so that its logger writes to the captured
    stdout) with the conversation service on fake ports, and returns its `handler`."""
    from csagent import runtime

    monkeypatch.setenv("AUTH_MODE", "jwt")
    monkeypatch.setattr(runtime, "conversation_service", conversation_service)
    monkeypatch.setattr(runtime, "health", lambda: {"neo4j": True, "dynamodb": True})

    def load() -> Any:
        spec = importlib.util.spec_from_file_location("router_app_obs", ROUTER_APP)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.handler

    return load


def test_the_router_handler_logs_with_lambda_context_and_flushes_metrics_per_invocation(
    load_router_handler, capsys
):
    # Given the router handler and the API Gateway event of a message on session s-demo-1
    handler = load_router_handler()
    event = json.loads((ROOT / "events" / "router" / "message.json").read_text())
    # When the handler is invoked
    response = handler(event, LambdaContext())
    # Then the turn is answered, its log line carries the Lambda context and the session as
    # correlation id, and the invocation's metrics were flushed before it returned
    assert response["statusCode"] == 200, response["body"]
    out = capsys.readouterr().out
    (line,) = turn_logs(out)
    assert (line["correlation_id"], line["function_request_id"]) == ("s-demo-1", "req-obs-1")
    assert values_of(out, "Turns") == [[1.0]]
    assert observability.get_metrics().metric_set == {}


def test_an_invocation_without_a_turn_flushes_nothing_and_warns_nothing(load_router_handler, capsys, recwarn):
    # Given the router handler and GET /healthz (no turn, so no metric)
    handler = load_router_handler()
    event = json.loads((ROOT / "events" / "router" / "healthz.json").read_text())
    # When the handler is invoked
    response = handler(event, LambdaContext())
    # Then it answers, no EMF document is printed and Powertools did not warn about empty metrics
    assert response["statusCode"] == 200
    assert emf(capsys.readouterr().out) == []
    assert [str(w.message) for w in recwarn] == []


def test_importing_the_router_handler_loads_no_client_no_xray_recorder_and_prints_nothing():
    # Given a fresh interpreter outside Lambda, warnings shown
    code = (
        "import sys; sys.path.insert(0, 'functions/router'); import app; "
        "print(sorted(m for m in ('boto3', 'aws_xray_sdk.core', 'neo4j') if m in sys.modules))"
    )
    # When the router's handler module is imported
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    # Then no AWS client library, X-Ray recorder or Neo4j driver was loaded, and nothing else printed
    assert done.stdout.strip() == "[]"
    assert done.stderr == ""
