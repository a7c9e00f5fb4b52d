"""How far one turn may go: every loop the healer can start is bounded by a number here.

`Bounds` is a pydantic-settings model, so each limit can be overridden from the environment
with the `BOUNDS_` prefix (`BOUNDS_MAX_RETRIES_PER_TASK=1`, ...). A tool call's own wall-clock limit is
its dependency's (`NEO4J_QUERY_TIMEOUT_S`, the knowledge search's and Text2Cypher's timeouts).
Read it once through `get_bounds()` (cached; tests call `get_bounds.cache_clear()`).

The defaults are sized against the hard outer limit of a turn: API Gateway's HTTP API cuts an
integration off at 30 s, so a turn has about 29 s of wall-clock time, of which loading the
context, routing, summarising and checkpointing take roughly 1-2 s on the local tier.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Bounds(BaseSettings):
    """Per-turn and per-task limits for tools, retries and graph steps."""

    model_config = SettingsConfigDict(env_prefix="BOUNDS_", case_sensitive=False, extra="ignore",
                                      frozen=True)

    max_retries_per_task: int = Field(default=2, ge=0)
    """Retries of one task after its first attempt (so at most 3 runs). Two is what the
    Text2Cypher loop needs (a correction with the errors as hints, then one more) and what a
    transient fault needs (with backoff, two retries ride out a blip of a second or two); a third
    retry mostly spends the customer's patience on a dependency that is down."""

    max_tool_calls_per_turn: int = Field(default=12, ge=1)
    """Tool calls (first attempts, retries and degraded calls) in one turn. A turn plans at most
    5 tasks (`MAX_TASKS_PER_TURN`); 12 lets every task fail once and be retried or degraded once,
    plus two spare, while a turn where everything fails cannot spend 5 x 3 = 15 calls and the
    whole time budget on a dependency that is down."""

    max_node_visits_per_turn: int = Field(default=40, ge=1)
    """Node executions in one turn; beyond it the turn is handed to a human. A normal turn
    visits ~6 fixed nodes + one `run_task` per tool call + one `collect` per wave: with 12 tool
    calls in up to 5 waves that is ~25, so 40 is only reached by a loop that should not exist."""

    recursion_limit: int = Field(default=60, ge=1)
    """LangGraph's `recursion_limit` (super-steps per invoke). Kept above
    `max_node_visits_per_turn` so our own bound trips first and ends the turn with a handoff,
    rather than LangGraph raising `GraphRecursionError` mid-turn."""

    backoff_base_s: float = Field(default=0.2, gt=0)
    """First retry waits up to 0.2 s: long enough for a Neo4j leader switch or a dropped
    connection to be replaced from the pool, short enough to be invisible to a customer."""

    backoff_max_s: float = Field(default=2.0, gt=0)
    """Cap of one backoff delay. With two retries the waits add up to at most 0.2 + 0.4 s; the
    cap matters only when the retry budget is raised (the 5th retry would otherwise wait 3.2 s),
    and keeps any single wait a small part of the turn budget."""

    @model_validator(mode="after")
    def _consistent(self) -> Bounds:
        if self.recursion_limit <= self.max_node_visits_per_turn:
            raise ValueError("recursion_limit must exceed max_node_visits_per_turn, so the turn is "
                             "handed off before LangGraph raises GraphRecursionError")
        if self.backoff_max_s < self.backoff_base_s:
            raise ValueError("backoff_max_s must be at least backoff_base_s")
        return self


@lru_cache(maxsize=1)
def get_bounds() -> Bounds:
    """The process-wide bounds (cached; tests call `get_bounds.cache_clear()`)."""
    return Bounds()
