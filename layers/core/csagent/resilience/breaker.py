"""Circuit breakers per dependency ("neo4j", "model:<spec>", "knowledge_search").

Why: when a dependency is down, every task that needs it would otherwise wait for its own
timeout and retries, and the turn would spend its whole budget discovering the same fact. An
open breaker answers at once with the fallback, so the turn degrades quickly and the
dependency gets room to recover.

    closed ──(N consecutive failures, or failure ratio >= R over the last W calls)──► open
    open ──(cool-down elapsed)──► half-open: exactly one probe call is let through
    half-open ──probe succeeds──► closed          half-open ──probe fails──► open (new cool-down)

A probe that never reports back (its caller crashed) frees the probe slot after one more
cool-down, so a breaker cannot stay half-open forever.

Breakers live in process memory: in AWS each Lambda execution environment has its own, which
is what we want (no I/O on the hot path; a cold start begins closed). Thread-safe (one lock per
breaker); the clock is injectable for tests.

Where they are consulted: by the healer (`csagent.healing`), which runs in the router (and the
messaging worker) in both dispatch modes; the tool Lambdas behind Step Functions make one call
per invocation and never decide whether to call, so they hold none. Why per container is
enough rather than a shared item (say in DynamoDB): a breaker's two jobs are failing fast for
the customer once a dependency is known to be down, and sparing the dependency. A router
container opens after `failure_threshold` dependency faults - within its first one or two
failing turns (one task alone makes three attempts) - and from then on its turns fail fast;
with N warm containers the outage costs the dependency at most N x threshold calls plus one
probe per container per cool-down, which is nothing next to the reads Neo4j serves when
healthy. A shared item would put a read on every wave's hot path, a write on every failure
(every container writing the same key during an outage: a hot partition that throttles just
when it is needed), conditional writes to keep half-open's single probe, and a dependency of
its own that the breaker would then have to survive. Revisit for a dependency whose capacity
is small enough that N x threshold calls matter (a self-hosted model endpoint with few GPUs).

Only dependency faults should count as failures (timeouts, transient errors): "no results" or a
validation error says nothing about the dependency's health. `guard` applies that rule to
`ToolResult`s by default.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from enum import StrEnum
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.domain.models import ErrorType, TaskStatus, ToolResult

T = TypeVar("T")
Clock = Callable[[], float]


def model_breaker_name(spec: str) -> str:
    """The breaker name of a model endpoint, e.g. "model:bedrock/anthropic.claude-3-haiku"."""
    return f"model:{spec}"


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class BreakerConfig(BaseSettings):
    """When a breaker opens and for how long (env prefix `BREAKER_`)."""

    model_config = SettingsConfigDict(env_prefix="BREAKER_", case_sensitive=False, extra="ignore",
                                      frozen=True)

    failure_threshold: int = Field(default=5, ge=1)
    """Consecutive failures that open the breaker: five in a row is past any blip the retry
    policy (2 retries per task) rides out on its own."""

    failure_ratio: float = Field(default=0.5, gt=0, le=1)
    """Failure share over the window that opens the breaker (a flapping dependency)."""

    window_size: int = Field(default=20, ge=1)
    """Calls in the sliding window used for the ratio."""

    min_calls: int = Field(default=10, ge=1)
    """The ratio is judged only once the window holds this many calls (no opening on 1 of 2)."""

    cool_down_s: float = Field(default=15.0, gt=0)
    """How long an open breaker refuses calls before one probe: about half a turn's budget, so
    a customer retrying after the failure reply meets a dependency that has been probed again."""


class CircuitBreaker:
    """One dependency's breaker: `allow()` before a call, then `record_success()` or `record_failure()`."""

    def __init__(self, name: str, config: BreakerConfig | None = None, *,
                 clock: Clock = time.monotonic) -> None:
        self.name = name
        self.config = config or BreakerConfig()
        self._clock = clock
        self._lock = threading.Lock()
        self._state = BreakerState.CLOSED
        self._consecutive = 0
        self._window: deque[bool] = deque(maxlen=self.config.window_size)  # True = failure
        self._opened_at = 0.0
        self._probe_started: float | None = None

    # -- state -----------------------------------------------------------------------------
    @property
    def state(self) -> BreakerState:
        """The current state (an open breaker whose cool-down has elapsed reports half-open)."""
        with self._lock:
            self._refresh()
            return self._state

    def _refresh(self) -> None:
        """Move open → half-open once the cool-down has elapsed (caller holds the lock)."""
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.config.cool_down_s:
            self._state = BreakerState.HALF_OPEN
            self._probe_started = None

    def _open(self) -> None:
        self._state = BreakerState.OPEN
        self._opened_at = self._clock()
        self._probe_started = None

    def _close(self) -> None:
        self._state = BreakerState.CLOSED
        self._consecutive = 0
        self._window.clear()
        self._probe_started = None

    # -- protocol --------------------------------------------------------------------------
    def allow(self) -> bool:
        """May a call go to the dependency now? In half-open, only the first caller gets True."""
        with self._lock:
            self._refresh()
            if self._state is BreakerState.CLOSED:
                return True
            if self._state is BreakerState.OPEN:
                return False
            now = self._clock()
            stuck = self._probe_started is not None and now - self._probe_started >= self.config.cool_down_s
            if self._probe_started is None or stuck:
                self._probe_started = now
                return True
            return False

    def record_success(self) -> None:
        """The call succeeded: a half-open breaker closes; a closed one resets its failure streak."""
        with self._lock:
            self._refresh()
            if self._state is BreakerState.HALF_OPEN:
                self._close()
            elif self._state is BreakerState.CLOSED:
                self._consecutive = 0
                self._window.append(False)

    def record_failure(self) -> None:
        """The call failed with a dependency fault: may open the breaker (re-open if half-open)."""
        with self._lock:
            self._refresh()
            if self._state is BreakerState.HALF_OPEN:
                self._open()
                return
            if self._state is BreakerState.OPEN:
                return
            self._consecutive += 1
            self._window.append(True)
            if self._consecutive >= self.config.failure_threshold or self._ratio_exceeded():
                self._open()

    def _ratio_exceeded(self) -> bool:
        calls = len(self._window)
        return calls >= self.config.min_calls and sum(self._window) / calls >= self.config.failure_ratio

    def reset(self) -> None:
        """Back to closed with no history (tests, or an operator's manual reset)."""
        with self._lock:
            self._close()

    def __repr__(self) -> str:
        return f"CircuitBreaker({self.name!r}, state={self.state.value})"


class BreakerRegistry:
    """Named breakers, created on first use with one shared config and clock."""

    def __init__(self, config: BreakerConfig | None = None, *, clock: Clock = time.monotonic) -> None:
        self._config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._breakers: dict[str, CircuitBreaker] = {}

    def get(self, name: str) -> CircuitBreaker:
        """The breaker called `name` (created closed if new)."""
        with self._lock:
            breaker = self._breakers.get(name)
            if breaker is None:
                breaker = CircuitBreaker(name, self._config, clock=self._clock)
                self._breakers[name] = breaker
            return breaker

    def snapshot(self) -> dict[str, str]:
        """Name → state of every breaker (for `/healthz` and the turn trace)."""
        with self._lock:
            breakers = list(self._breakers.values())
        return {b.name: b.state.value for b in breakers}

    def reset(self) -> None:
        """Forget every breaker (tests)."""
        with self._lock:
            self._breakers.clear()


@lru_cache(maxsize=1)
def breakers() -> BreakerRegistry:
    """The process-wide registry (cached; tests call `breakers().reset()` or `breakers.cache_clear()`)."""
    return BreakerRegistry(BreakerConfig())


DEPENDENCY_FAULTS = frozenset({ErrorType.TIMEOUT, ErrorType.TRANSIENT})


def is_dependency_fault(result: Any) -> bool:
    """True for a failed `ToolResult` whose error is a timeout or transient fault (the default judge)."""
    return (isinstance(result, ToolResult) and result.status is TaskStatus.FAILED
            and result.error is not None and result.error.type in DEPENDENCY_FAULTS)


def guard(name: str, fn: Callable[[], T], fallback: Callable[[], T], *,
          is_failure: Callable[[T], bool] = is_dependency_fault,
          registry: BreakerRegistry | None = None) -> T:
    """Call `fn` through the breaker `name`; while it is open, return `fallback()` without calling `fn`.

    The outcome is recorded: `is_failure(result)` (by default: a timeout / transient
    `ToolResult`) or an exception counts as a failure. Exceptions are recorded and re-raised:
    the breaker routes around a dependency, it does not hide errors.
    """
    breaker = (registry or breakers()).get(name)
    if not breaker.allow():
        return fallback()
    try:
        result = fn()
    except Exception:  # any failure counts against the dependency, then goes on up
        breaker.record_failure()
        raise
    if is_failure(result):
        breaker.record_failure()
    else:
        breaker.record_success()
    return result
