"""Observability for the conversation path: one structured log line per turn, CloudWatch metrics
(EMF) and X-Ray subsegments per graph node and per tool call.

What is emitted (see `record_turn`, `tool_call`, `record_heal`, `node_span`):

- log: one JSON line per turn (`message: "turn"`) with the session id as correlation id; every
  string in it is PII-masked (`csagent.guardrails.pii`), and the logger itself masks every line
  (`pii_json_serializer`).
- metrics, namespace `POWERTOOLS_METRICS_NAMESPACE` (default "csagent"), dimension `service`:
  per turn Turns, TaskCount, TaskFailed, Handoff, Clarification, ModelCalls, TurnLatency,
  ModelTokens and ModelCostUSD (only when a model was called; the local tier calls none), plus Route
  (dimension `route`); per tool call ToolLatency (dimension `tool`) and ToolFailure (dimension
  `error_type`); per heal step Retry and Degradation. Metrics without an extra dimension are
  buffered and flushed by `metrics.log_metrics` around the Lambda handler; a metric with its own
  dimension needs its own EMF document (CloudWatch shares dimensions within one), so it is
  written at once, as one line.
- traces: a subsegment `node:<name>` per graph node (`csagent.graph.timing.timed`) and
  `tool:<tool>` per tool call, annotated so X-Ray filter expressions can find them.

Where it is on, and why:

- tracing only inside Lambda (not under `sam local`) and unless `POWERTOOLS_TRACE_DISABLED` is
  set; otherwise the Tracer has a no-op provider, so the X-Ray SDK (about 0.3 s of imports,
  botocore included) is never loaded in tests, `make serve` or the demo.
- metrics inside Lambda, or wherever `POWERTOOLS_METRICS_DISABLED=false` asks for them (the
  tests); elsewhere `make serve` would print EMF documents between its log lines.
- the log line always: it is the record of the turn.

Nothing here does I/O or imports Powertools at import time: the factories are lazy and cached,
and `reset()` clears them (tests). Observability never fails a turn: an error while logging or
measuring is reported as a warning on the standard `logging` logger and swallowed.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, TYPE_CHECKING, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.domain.models import TaskStatus
from csagent.guardrails.pii import mask_value, pii_json_serializer

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

    from csagent.domain.models import ToolResult
    from csagent.resilience.policy import HealDecision
    from csagent.service.schemas import TurnOut

_log = logging.getLogger(__name__)
_EMIT_LOCK = threading.Lock()  # tool calls run in parallel threads; EMF lines must not interleave
_TRUTHY = {"1", "true", "yes", "on", "y", "t"}
_FALSY = {"0", "false", "no", "off", "n", "f"}
MAX_LOGGED_TEXT = 500  # characters of the customer's (masked) message kept in the turn's log line


class ObservabilitySettings(BaseSettings):
    """The Powertools environment variables this module honours (template.yaml sets them in AWS)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    service: str = Field(default="router", validation_alias="POWERTOOLS_SERVICE_NAME")
    namespace: str = Field(default="csagent", validation_alias="POWERTOOLS_METRICS_NAMESPACE")
    trace_disabled: bool = Field(default=False, validation_alias="POWERTOOLS_TRACE_DISABLED")
    metrics_disabled: bool | None = Field(default=None, validation_alias="POWERTOOLS_METRICS_DISABLED")
    lambda_task_root: str | None = Field(default=None, validation_alias="LAMBDA_TASK_ROOT")
    sam_local: bool = Field(default=False, validation_alias="AWS_SAM_LOCAL")

    @field_validator("service", "namespace", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any, info: Any) -> Any:
        """An empty name is no name: fall back to the default (a metric needs a namespace)."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return cls.model_fields[info.field_name].default
        return value.strip() if isinstance(value, str) else value

    @field_validator("trace_disabled", "sam_local", "metrics_disabled", mode="before")
    @classmethod
    def _lenient_flag(cls, value: Any, info: Any) -> Any:
        """Flags as Powertools reads them; an unreadable value keeps the default, never crashes."""
        if isinstance(value, str):
            text = value.strip().lower()
            if text in _TRUTHY:
                return True
            if text in _FALSY:
                return False
            return cls.model_fields[info.field_name].default
        return value

    @property
    def in_lambda(self) -> bool:
        return bool(self.lambda_task_root)

    @property
    def tracing_enabled(self) -> bool:
        """X-Ray only where a daemon listens: in Lambda, not under `sam local`, unless disabled."""
        return self.in_lambda and not self.sam_local and not self.trace_disabled

    @property
    def metrics_enabled(self) -> bool:
        """An explicit POWERTOOLS_METRICS_DISABLED wins; otherwise on in Lambda only."""
        return (not self.metrics_disabled) if self.metrics_disabled is not None else self.in_lambda


@lru_cache(maxsize=1)
def get_settings() -> ObservabilitySettings:
    return ObservabilitySettings()


# -- factories ---------------------------------------------------------------------------------
def build_logger(settings: ObservabilitySettings, stream: IO[str] | None = None) -> Logger:
    """A Powertools Logger whose every line is PII-masked. `stream` defaults to stdout."""
    from aws_lambda_powertools import Logger

    return Logger(service=settings.service, json_serializer=pii_json_serializer, stream=stream)


@lru_cache(maxsize=1)
def get_logger() -> Logger:
    return build_logger(get_settings())


@lru_cache(maxsize=1)
def _quiet_emf_provider() -> type[AmazonCloudWatchEMFProvider]:
    from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

    class QuietEMFProvider(AmazonCloudWatchEMFProvider):
        """Powertools' EMF provider, silent when an invocation has nothing to flush: a request
        that is not a turn (GET /healthz, a 4xx) has no metrics, which is not worth a warning."""

        def flush_metrics(self, raise_on_empty_metrics: bool = False) -> None:
            if self.metric_set or raise_on_empty_metrics:
                super().flush_metrics(raise_on_empty_metrics=raise_on_empty_metrics)

    return QuietEMFProvider


@lru_cache(maxsize=1)
def get_metrics() -> Metrics:
    """The process's Metrics buffer (Powertools shares it across instances), flushed by
    `metrics.log_metrics`, in the namespace of the settings (never None)."""
    from aws_lambda_powertools import Metrics

    settings = get_settings()
    metrics = Metrics(service=settings.service, namespace=settings.namespace)
    metrics.provider = _quiet_emf_provider()(
        metric_set=metrics.metric_set, dimension_set=metrics.dimension_set, metadata_set=metrics.metadata_set,
        default_dimensions=metrics.default_dimensions, namespace=settings.namespace, service=settings.service)
    return metrics


@lru_cache(maxsize=1)
def get_tracer() -> Tracer:
    """The X-Ray Tracer in Lambda (botocore patched: DynamoDB, Step Functions, Bedrock calls get
    their own subsegments); elsewhere a Tracer with a no-op provider that never loads the X-Ray SDK."""
    from aws_lambda_powertools import Tracer

    settings = get_settings()
    if settings.tracing_enabled:
        return Tracer(service=settings.service, patch_modules=("botocore",))
    return Tracer(service=settings.service, disabled=True, auto_patch=False,
                  provider=NoOpProvider())  # type: ignore[arg-type]


_FACTORIES = (get_settings, get_logger, get_metrics, get_tracer)


def reset() -> None:
    """Forget the cached settings and instruments (tests change the environment)."""
    for factory in _FACTORIES:
        factory.cache_clear()


# -- tracing -----------------------------------------------------------------------------------
class NoOpSegment:
    """What a span yields when tracing is off: accepts annotations and drops them."""

    def put_annotation(self, key: str, value: Any) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        return None

    def add_subsegment(self, subsegment: Any) -> None:
        return None

    def remove_subsegment(self, subsegment: Any) -> None:
        return None

    def close(self, end_time: int | None = None) -> None:
        return None


NOOP_SEGMENT = NoOpSegment()


class NoOpProvider:
    """A Powertools tracing provider (`BaseProvider` shape) that records nothing."""

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any) -> Iterator[NoOpSegment]:
        yield NOOP_SEGMENT

    def put_annotation(self, key: str, value: Any) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def patch(self, modules: Any) -> None:
        return None

    def patch_all(self) -> None:
        return None


@contextmanager
def node_span(name: str, **annotations: Any) -> Iterator[Any]:
    """A tracer subsegment around a block, annotated; a no-op segment when tracing is off.

    LangGraph's interrupt (a paused turn) and Command bubble up as exceptions: they are ended
    as a normal subsegment with `interrupted=true`, not as an X-Ray fault."""
    tracer = get_tracer()
    if tracer.disabled:
        yield NOOP_SEGMENT
        return
    from langgraph.errors import GraphBubbleUp

    paused: GraphBubbleUp | None = None
    with tracer.provider.in_subsegment(name=name) as segment:
        for key, value in annotations.items():
            segment.put_annotation(key=key, value=value)
        try:
            yield segment
        except GraphBubbleUp as signal:
            segment.put_annotation(key="interrupted", value=True)
            paused = signal
    if paused is not None:
        raise paused


@dataclass
class ToolCall:
    """One tool call in progress: `finish(result)` annotates its span and records its metrics."""

    tool: str
    segment: Any
    started: float

    def finish(self, result: ToolResult) -> None:
        latency_ms = (time.perf_counter() - self.started) * 1000
        error_type = result.error.type.value if result.error is not None else None
        try:
            self.segment.put_annotation(key="status", value=result.status.value)
            if error_type:
                self.segment.put_annotation(key="error_type", value=error_type)
        except Exception as exc:  # noqa: BLE001 - observability never fails a turn
            _log.warning("tool span not annotated: %s", type(exc).__name__)
        emit("ToolLatency", "Milliseconds", latency_ms, tool=result.tool or self.tool)
        if result.status is TaskStatus.FAILED and error_type:
            emit("ToolFailure", "Count", 1, error_type=error_type)


@contextmanager
def tool_call(tool: str, *, task_type: str, attempt: int, degraded: bool = False) -> Iterator[ToolCall]:
    """A `tool:<tool>` subsegment around one tool call (attempts and cheaper paths each get one)."""
    with node_span(f"tool:{tool}", tool=tool, task_type=task_type, attempt=attempt,
                   degraded=degraded) as segment:
        yield ToolCall(tool=tool, segment=segment, started=time.perf_counter())


# -- metrics -----------------------------------------------------------------------------------
def _write_line(line: str) -> None:
    sys.stdout.write(line + "\n")  # one write: a line never interleaves with another thread's


def emit(name: str, unit: str, value: float, **dimensions: str) -> None:
    """One metric value. Without dimensions it joins the buffer `log_metrics` flushes; with
    dimensions it is its own EMF document, written now. Never raises."""
    settings = get_settings()
    if not settings.metrics_enabled:
        return
    try:
        with _EMIT_LOCK:
            if not dimensions:
                get_metrics().add_metric(name=name, unit=unit, value=value)
                return
            from aws_lambda_powertools.metrics import EphemeralMetrics

            single = EphemeralMetrics(namespace=settings.namespace, service=settings.service)
            for key, dimension in dimensions.items():
                single.add_dimension(name=key, value=dimension or "unknown")
            single.add_metric(name=name, unit=unit, value=value)
            _write_line(json.dumps(single.serialize_metric_set(), separators=(",", ":")))
    except Exception as exc:  # noqa: BLE001 - observability never fails a turn
        _log.warning("metric %s not emitted: %s: %s", name, type(exc).__name__, exc)


def record_heal(decision: HealDecision) -> None:
    """Count the heal steps that cost another tool call: Retry and Degradation."""
    metric = {"retry": "Retry", "degrade": "Degradation"}.get(decision.action.value)
    if metric is not None:
        emit(metric, "Count", 1)


def _model_tokens(trace: Mapping[str, Any]) -> int | None:
    """Tokens the models reported for the turn: the meter's `input_tokens` + `output_tokens`
    (`csagent.models.usage`), else `trace.model_tokens` (an int, or a usage mapping with
    total_tokens or input_tokens + output_tokens); None when nothing was reported."""
    if trace.get("model_calls") and (trace.get("input_tokens") or trace.get("output_tokens")):
        return int(trace.get("input_tokens") or 0) + int(trace.get("output_tokens") or 0)
    usage = trace.get("model_tokens")
    if isinstance(usage, bool) or usage is None:
        return None
    if isinstance(usage, int | float):
        return int(usage)
    if isinstance(usage, Mapping):
        if usage.get("total_tokens") is not None:
            return int(usage["total_tokens"])
        parts = [usage.get("input_tokens"), usage.get("output_tokens")]
        if any(p is not None for p in parts):
            return sum(int(p or 0) for p in parts)
    return None


def _measure_turn(turn: TurnOut) -> None:
    trace = turn.trace or {}
    emit("Turns", "Count", 1)
    emit("Route", "Count", 1, route=str(trace.get("route") or "unknown"))
    emit("TaskCount", "Count", len(turn.tasks))
    emit("TaskFailed", "Count", sum(1 for t in turn.tasks if t.status == "failed"))
    emit("Handoff", "Count", int(turn.status == "handed_off"))
    emit("Clarification", "Count", int(turn.status == "needs_clarification"))
    emit("ModelCalls", "Count", int(trace.get("model_calls") or 0))
    emit("TurnLatency", "Milliseconds", float(trace.get("turn_ms") or 0.0))
    tokens = _model_tokens(trace)
    if tokens is not None:
        emit("ModelTokens", "Count", tokens)
    if trace.get("model_calls"):
        emit("ModelCostUSD", "None", float(trace.get("cost_usd") or 0.0))


# -- the turn's log line -----------------------------------------------------------------------
def bind_session(session_id: str) -> None:
    """Make the session id the correlation id of every following log line of this invocation
    (the router handler starts with the API request id; `clear_state` resets it per invocation)."""
    try:
        get_logger().set_correlation_id(session_id)
    except Exception as exc:  # noqa: BLE001 - observability never fails a turn
        _log.warning("correlation id not set: %s", type(exc).__name__)


def turn_fields(turn: TurnOut, text: str | None = None) -> dict[str, Any]:
    """The turn's log record, PII-masked (so even a logger configured elsewhere leaks nothing)."""
    trace = turn.trace or {}
    fields: dict[str, Any] = {
        "session_id": turn.session_id,
        "turn": turn.turn,
        "route": trace.get("route"),
        "confidence": trace.get("confidence"),
        "status": turn.status,
        "turn_ms": trace.get("turn_ms"),
        "model_calls": trace.get("model_calls"),
        "model_tokens": {"input": trace.get("input_tokens"), "output": trace.get("output_tokens")},
        "cost_usd": trace.get("cost_usd"),
        "model_steps": trace.get("model_steps") or [],
        "tasks": [{"task_id": t.task_id, "task_type": t.task_type, "tool": t.tool, "status": t.status,
                   "error_type": (t.error or {}).get("type"), "error": (t.error or {}).get("message"),
                   "latency_ms": t.latency_ms} for t in turn.tasks],
        "node_timings_ms": trace.get("node_timings_ms") or {},
    }
    if text is not None:
        fields["text"] = text if len(text) <= MAX_LOGGED_TEXT else text[:MAX_LOGGED_TEXT] + "…"
    return mask_value(fields)


def record_turn(turn: TurnOut, *, text: str | None = None) -> None:
    """After a turn: its log line (with the customer's message, masked, if given) and its metrics."""
    try:
        get_logger().info("turn", extra=turn_fields(turn, text))
    except Exception as exc:  # noqa: BLE001 - observability never fails a turn
        _log.warning("turn not logged: %s", type(exc).__name__)
    try:
        _measure_turn(turn)
    except Exception as exc:  # noqa: BLE001 - observability never fails a turn
        _log.warning("turn not measured: %s", type(exc).__name__)
