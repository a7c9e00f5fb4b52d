"""Fault injection per dependency, switched on by configuration (tests, evaluation, demos).

    FAULTS="neo4j:timeout:0.3,knowledge_search:empty:1.0,model:malformed:0.5,graph:crash_before_summarise:1.0"
    FAULT_SEED=7

Each entry is `target:kind[:probability[:limit]]`:

- target: a dependency or tool name ("neo4j", "knowledge_search", "predefined_cypher") or a
  prefix of one ("model" matches every "model:<spec>"); "graph" for crash points.
- kind: `timeout` (the dependency did not answer in time), `error` (a transient fault), `empty`
  (no results), `malformed` (model output that does not parse), `crash_<point>` (an
  `InjectedCrash` raised at a named point of the graph, e.g. `crash_before_summarise`, that
  escapes the turn so recovery from the checkpoint can be tested).
- probability: 0..1 (default 1.0); limit: inject at most this many times per process.

Deterministic: whether call n of a fault fires is a hash of (seed, target, kind, n), not
`random`, so two processes given the same plan and the same sequence of calls inject the same
faults. Disabled means zero overhead: with no plan (or no fault for a name) the wrappers return
the wrapped object itself. Faults are refused when `STAGE=prod`.

Injected Neo4j faults are the driver's own exception classes with the codes a real server
sends (checked against Neo4j 5.26: a transaction timeout is a `ClientError` with code
`Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration`), classified by the
adapter's own `classify_neo4j_error` as a real one is, so the tools see exactly the
`StoreError` production would show them. Injected timeouts fail at once rather
than after `timeout_s`: tests stay fast; latency under real timeouts is a benchmark's business.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache, wraps
from typing import TYPE_CHECKING, Any, Literal, ParamSpec

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.domain.models import ErrorType, Task, ToolResult

if TYPE_CHECKING:
    from csagent.ports import GraphStore
    from csagent.tools.context import ToolContext

P = ParamSpec("P")

NEO4J_TIMEOUT_CODE = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
NEO4J_TRANSIENT_CODE = "Neo.TransientError.General.DatabaseUnavailable"


class FaultKind(StrEnum):
    TIMEOUT = "timeout"
    ERROR = "error"
    EMPTY = "empty"
    MALFORMED = "malformed"
    CRASH = "crash"


class InjectedCrash(RuntimeError):  # noqa: N818 - named for what it is, not "...Error"
    """A crash injected at a graph point. Deliberately escapes the turn (never becomes data): the
    service treats it like any crash (lease released, 500), and the client's retry re-runs the
    turn from the last checkpoint. A RuntimeError, not a BaseException, so cleanup still runs."""

    def __init__(self, point: str) -> None:
        super().__init__(f"injected crash at {point}")
        self.point = point


@dataclass(frozen=True)
class Fault:
    """One entry of a plan."""

    target: str
    kind: FaultKind
    probability: float = 1.0
    point: str | None = None   # crash faults only: the graph point ("before_summarise")
    limit: int | None = None   # at most this many injections per process

    def matches(self, name: str) -> bool:
        """True for the target itself and for names below it ("model" matches "model:local")."""
        return name == self.target or name.startswith(self.target + ":")


def parse_fault(entry: str) -> Fault:
    """Parse `target:kind[:probability[:limit]]` (the target may itself contain colons)."""
    tokens = [t.strip() for t in entry.strip().split(":")]
    kind_at = next((i for i, t in enumerate(tokens) if i > 0 and _is_kind(t)), None)
    if kind_at is None:
        raise ValueError(f"fault {entry!r}: no kind (one of {', '.join(k.value for k in FaultKind)}, "
                         "or crash_<point>)")
    target, kind_token, rest = ":".join(tokens[:kind_at]), tokens[kind_at].lower(), tokens[kind_at + 1:]
    if len(rest) > 2:
        raise ValueError(f"fault {entry!r}: expected target:kind[:probability[:limit]]")
    try:
        probability = float(rest[0]) if rest else 1.0
        limit = int(rest[1]) if len(rest) > 1 else None
    except ValueError:
        raise ValueError(f"fault {entry!r}: probability must be a number and limit an integer") from None
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"fault {entry!r}: probability must be between 0 and 1")
    if limit is not None and limit < 1:
        raise ValueError(f"fault {entry!r}: limit must be at least 1")
    if kind_token.startswith("crash"):
        point = kind_token.removeprefix("crash").lstrip("_") or None
        return Fault(target, FaultKind.CRASH, probability, point=point, limit=limit)
    return Fault(target, FaultKind(kind_token), probability, limit=limit)


def _is_kind(token: str) -> bool:
    token = token.lower()
    return token in FaultKind.__members__.values() or token.startswith("crash_")


class FaultPlan:
    """The faults to inject and the deterministic dice that decide each call."""

    def __init__(self, faults: Sequence[Fault], seed: int = 0) -> None:
        self.faults: tuple[Fault, ...] = tuple(faults)
        self.seed = seed
        self._lock = threading.Lock()
        self._calls = [0] * len(self.faults)
        self._fired = [0] * len(self.faults)

    @classmethod
    def parse(cls, spec: str, seed: int = 0) -> FaultPlan:
        """A plan from the `FAULTS` syntax (comma-separated entries)."""
        return cls([parse_fault(e) for e in spec.split(",") if e.strip()], seed)

    def covers(self, name: str) -> bool:
        """True when at least one fault may fire for `name` (wrappers skip names that are not covered)."""
        return any(f.matches(name) for f in self.faults)

    def draw(self, name: str, kinds: Collection[FaultKind]) -> FaultKind | None:
        """The fault to inject into this call to `name`, if any (one counter tick per matching fault)."""
        with self._lock:
            for index, fault in enumerate(self.faults):
                if fault.kind not in kinds or not fault.matches(name):
                    continue
                if self._fires(index, fault):
                    return fault.kind
        return None

    def maybe_crash(self, point: str, target: str = "graph") -> None:
        """Raise `InjectedCrash` if a crash fault for `point` fires now."""
        with self._lock:
            for index, fault in enumerate(self.faults):
                if fault.kind is FaultKind.CRASH and fault.point == point and fault.matches(target) \
                        and self._fires(index, fault):
                    raise InjectedCrash(point)

    def _fires(self, index: int, fault: Fault) -> bool:
        """Tick the fault's call counter and roll its dice (caller holds the lock)."""
        call = self._calls[index]
        self._calls[index] += 1
        if fault.limit is not None and self._fired[index] >= fault.limit:
            return False
        if _unit_hash(self.seed, fault, call) >= fault.probability:
            return False
        self._fired[index] += 1
        return True

    def stats(self) -> dict[str, dict[str, int]]:
        """Calls seen and faults injected per entry (for eval reports)."""
        with self._lock:
            return {_describe(f): {"calls": c, "injected": n}
                    for f, c, n in zip(self.faults, self._calls, self._fired, strict=True)}


def _unit_hash(seed: int, fault: Fault, call: int) -> float:
    """A number in [0, 1) fixed by (seed, fault, call number): the plan's deterministic dice."""
    digest = hashlib.sha256(f"{seed}|{_describe(fault)}|{call}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _describe(fault: Fault) -> str:
    kind = f"crash_{fault.point}" if fault.kind is FaultKind.CRASH and fault.point else fault.kind.value
    return f"{fault.target}:{kind}"


# -- configuration ---------------------------------------------------------------------------
class FaultSettings(BaseSettings):
    """`FAULTS` and `FAULT_SEED`; refused in production."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    faults: str = ""
    fault_seed: int = 0
    stage: Literal["local", "dev", "prod"] = "local"

    @model_validator(mode="after")
    def _never_in_prod(self) -> FaultSettings:
        if self.faults.strip() and self.stage == "prod":
            raise ValueError("FAULTS must not be set when STAGE=prod")
        return self


def plan_from_settings(settings: FaultSettings) -> FaultPlan | None:
    """The plan the settings describe, or None when fault injection is off."""
    if not settings.faults.strip():
        return None
    return FaultPlan.parse(settings.faults, settings.fault_seed)


@lru_cache(maxsize=1)
def get_fault_plan() -> FaultPlan | None:
    """The process-wide plan from the environment (cached; tests call `get_fault_plan.cache_clear()`)."""
    return plan_from_settings(FaultSettings())


def crash_point(point: str, plan: FaultPlan | None) -> None:
    """Raise `InjectedCrash` at a named graph point if the plan says so; no-op without a plan."""
    if plan is not None:
        plan.maybe_crash(point)


# -- Neo4j -----------------------------------------------------------------------------------
def neo4j_error(code: str, message: str) -> Exception:
    """A driver exception of the class the driver itself would raise for `code`."""
    from neo4j import exceptions

    hydrate = getattr(exceptions.Neo4jError, "_hydrate_neo4j", None)  # the driver's own factory
    if hydrate is not None:
        return hydrate(code=code, message=message)  # type: ignore[no-any-return]
    # A driver without the factory: exceptions the tools classify the same way.
    if "TimedOut" in code:
        return TimeoutError(message)
    return exceptions.ServiceUnavailable(message)


def neo4j_timeout() -> Exception:
    """What a server-side transaction timeout looks like (a `ClientError`, not retryable by the driver)."""
    return neo4j_error(NEO4J_TIMEOUT_CODE, "The transaction has been terminated (injected fault: the "
                                          "transaction has not completed within the timeout).")


def neo4j_transient() -> Exception:
    """A transient server fault (`TransientError`)."""
    return neo4j_error(NEO4J_TRANSIENT_CODE, "Database unavailable (injected fault).")


class FaultyGraphStore:
    """A `GraphStore` that injects faults before delegating to `inner`.

    read: timeout → `StoreTimeout` (from `ClientError(TransactionTimedOut…)`), error →
    `StoreUnavailable` (from `TransientError`), empty → `[]`.
    write: timeout and error only (an "empty" write would silently claim a change that never happened).
    ping: timeout or error → False (a health check never raises).
    """

    _READ = frozenset({FaultKind.TIMEOUT, FaultKind.ERROR, FaultKind.EMPTY})
    _WRITE = frozenset({FaultKind.TIMEOUT, FaultKind.ERROR})

    def __init__(self, inner: GraphStore, plan: FaultPlan, name: str = "neo4j") -> None:
        self.inner = inner
        self.plan = plan
        self.name = name

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        kind = self.plan.draw(self.name, self._READ)
        if kind is FaultKind.EMPTY:
            return []
        _raise_for(kind)
        return self.inner.read(cypher, params, timeout_s=timeout_s, max_rows=max_rows)

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        _raise_for(self.plan.draw(self.name, self._WRITE))
        return self.inner.write(cypher, params, timeout_s=timeout_s)

    def ping(self) -> bool:
        if self.plan.draw(self.name, self._WRITE) is not None:
            return False
        return self.inner.ping()

    def __getattr__(self, attribute: str) -> Any:
        # Anything beyond the port (e.g. `driver`) is the inner store's. Only called for missing
        # attributes; `inner` itself is refused so a half-built copy cannot recurse forever.
        if attribute == "inner":
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)


def _raise_for(kind: FaultKind | None) -> None:
    """What the Neo4j adapter raises for the driver's exception of this kind of fault."""
    if kind is None or kind not in (FaultKind.TIMEOUT, FaultKind.ERROR):
        return
    from csagent.adapters.neo4j_graph import classify_neo4j_error

    driver_error = neo4j_timeout() if kind is FaultKind.TIMEOUT else neo4j_transient()
    raise classify_neo4j_error(driver_error) from driver_error


def wrap_graph_store(inner: GraphStore, plan: FaultPlan | None, name: str = "neo4j") -> GraphStore:
    """`inner` itself when no fault covers `name` (zero overhead), else a `FaultyGraphStore`."""
    if plan is None or not plan.covers(name):
        return inner
    return FaultyGraphStore(inner, plan, name)


# -- tools and models ------------------------------------------------------------------------
ToolFn = Callable[[Task, "ToolContext"], ToolResult]

_TOOL_FAULTS: dict[FaultKind, tuple[ErrorType, str, bool]] = {
    FaultKind.TIMEOUT: (ErrorType.TIMEOUT, "{name} did not answer in time (injected fault)", True),
    FaultKind.ERROR: (ErrorType.TRANSIENT, "{name} is temporarily unavailable (injected fault)", True),
    FaultKind.EMPTY: (ErrorType.NO_RESULTS, "nothing was found (injected fault)", False),
    FaultKind.MALFORMED: (ErrorType.PARSE_ERROR, "the model output was not valid JSON: expecting ',' "
                                                 "delimiter (injected fault)", True),
}


def faulty_tool(fn: ToolFn, plan: FaultPlan | None, name: str) -> ToolFn:
    """Wrap a tool so injected faults come back as the failed `ToolResult` the tool would return.

    Returns `fn` itself when no fault covers `name`.
    """
    if plan is None or not plan.covers(name):
        return fn

    @wraps(fn)
    def wrapper(task: Task, ctx: ToolContext) -> ToolResult:
        kind = plan.draw(name, _TOOL_FAULTS.keys())
        if kind is None:
            return fn(task, ctx)
        error_type, message, retryable = _TOOL_FAULTS[kind]
        return ToolResult.failed(task, error_type, message.format(name=name), retryable=retryable)

    return wrapper


def corrupt(text: str) -> str:
    """Model output cut in half with a stray token: what a truncated or confused generation looks like."""
    return text[: len(text) // 2] + ' ,,"<<'


def faulty_model(fn: Callable[P, str], plan: FaultPlan | None, name: str) -> Callable[P, str]:
    """Wrap a text-returning model call ("model:<spec>"): timeout → `TimeoutError`, error →
    `ConnectionError`, empty → "", malformed → the real output corrupted. `fn` itself when not covered."""
    if plan is None or not plan.covers(name):
        return fn

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        kind = plan.draw(name, (FaultKind.TIMEOUT, FaultKind.ERROR, FaultKind.EMPTY, FaultKind.MALFORMED))
        if kind is FaultKind.TIMEOUT:
            raise TimeoutError(f"{name} did not answer in time (injected fault)")
        if kind is FaultKind.ERROR:
            raise ConnectionError(f"{name} is temporarily unavailable (injected fault)")
        if kind is FaultKind.EMPTY:
            return ""
        text = fn(*args, **kwargs)
        return corrupt(text) if kind is FaultKind.MALFORMED else text

    return wrapper
