"""Per-turn accounting of model calls: calls, tokens, estimated cost, and the rungs taken.

The service wraps each turn in `metered_turn()`. The meter is a mutable `TurnUsage` held in a
context variable: LangGraph runs nodes in a thread pool with a copy of the caller's context, and
a copy still points at the same object, so every node and task branch of the turn records on
the same meter (a lock keeps parallel branches from losing counts).

The meter also holds the turn's budget of model calls (issue 8: a single-intent turn at most 2,
a compound turn with k tasks at most k + 2): `reserve_call()` refuses a call over the cap, and
the gateway then answers `ModelBudgetExhausted`, so the caller's local tier takes over and the
bound holds by construction. The planner raises the cap to tasks + 2 once it knows the tasks.
Outside a metered turn (a tool Lambda, a script) nothing is counted and nothing is capped.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

#: Model calls a turn may make before the planner knows its tasks (the single-intent budget).
BASE_CALL_CAP = 2
#: Calls a turn may make besides one per task (router + summariser; a compound turn's planner
#: fits because it has at least two tasks).
CALLS_BEYOND_TASKS = 2


@dataclass
class TurnUsage:
    """What the models cost this turn. `steps` lists each rung's outcome ("router openai/x: answered")."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    by_role: dict[str, int] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    cap: int | None = BASE_CALL_CAP
    refused: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def reserve_call(self, role: str) -> bool:
        """Count one call for `role` if the budget allows it (False: over the cap, not counted)."""
        with self._lock:
            if self.cap is not None and self.calls >= self.cap:
                self.refused += 1
                return False
            self.calls += 1
            self.by_role[role] = self.by_role.get(role, 0) + 1
            return True

    def record_tokens(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """Add a call's tokens and its estimated cost; returns that cost."""
        cost = price_of(model, input_tokens, output_tokens)
        with self._lock:
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            self.cost_usd += cost
        return cost

    def add_steps(self, role: str, steps: list[str]) -> None:
        with self._lock:
            self.steps.extend(f"{role} {step}" for step in steps)

    def budget_for_tasks(self, tasks: int) -> None:
        """The planner knows the turn's tasks: a compound turn (k >= 2 tasks) may make k + 2 calls;
        a turn with one task or none keeps the single-intent budget."""
        with self._lock:
            if self.cap is not None:
                self.cap = tasks + CALLS_BEYOND_TASKS if tasks >= 2 else BASE_CALL_CAP

    def as_trace(self) -> dict[str, Any]:
        """The fields the turn's trace carries."""
        return {"model_calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": round(self.cost_usd, 6),
                "model_steps": list(self.steps)}


_CURRENT: ContextVar[TurnUsage | None] = ContextVar("csagent_turn_usage", default=None)


def current_usage() -> TurnUsage | None:
    """The meter of the turn running in this context, or None outside a metered turn."""
    return _CURRENT.get()


@contextmanager
def metered_turn(cap: int | None = BASE_CALL_CAP) -> Iterator[TurnUsage]:
    """Meter every model call made inside the block (and in threads started from it)."""
    usage = TurnUsage(cap=cap)
    token = _CURRENT.set(usage)
    try:
        yield usage
    finally:
        _CURRENT.reset(token)


@lru_cache(maxsize=1)
def _prices() -> tuple[tuple[str, float, float], ...]:
    from csagent import yamlio

    data = yamlio.load_file(resources.files("csagent.models").joinpath("prices.yaml"))
    entries: list[Mapping[str, Any]] = data.get("prices") or []
    return tuple((str(e["match"]), float(e["input_per_1k"]), float(e["output_per_1k"])) for e in entries)


def price_of(model: str, input_tokens: int, output_tokens: int) -> float:
    """Estimated USD for a call (0 for models prices.yaml does not list: self-hosted, local)."""
    for prefix, per_in, per_out in _prices():
        if model.startswith(prefix):
            return (input_tokens * per_in + output_tokens * per_out) / 1000.0
    return 0.0
