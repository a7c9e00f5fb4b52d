"""The degradation ladder over model endpoints: primary model → secondary model → the local
tier. Each endpoint sits behind its own circuit breaker ("model:<spec>"): an endpoint whose
breaker is open is skipped without a call, and a failing call moves on to the next rung.

When every model rung fails, `ModelLadderExhausted` is raised; the caller's local tier takes
over (Text2Cypher falls back to the closest predefined template), and below that the healer's
FAQ keyword match and, at last, a human handoff. The rungs taken are kept on the ladder's
`last_steps` for the trace and emitted as `Degradation` metrics.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from csagent.models.providers import ModelSpec, parse_model_spec
from csagent.resilience.breaker import breakers, model_breaker_name

LADDER_SEPARATOR = "|"


class ModelLadderExhausted(RuntimeError):
    """Every model endpoint of the ladder failed or was skipped (circuit open)."""


class ModelLadder:
    """A chat model made of several endpoints tried in order (same `invoke` interface)."""

    def __init__(self, rungs: Sequence[tuple[str, Any]]) -> None:
        if not rungs:
            raise ValueError("a model ladder needs at least one model")
        self.rungs = list(rungs)
        self._local = threading.local()

    @property
    def last_steps(self) -> list[str]:
        """What the last `invoke` in this thread did, rung by rung ("bedrock/x: circuit open", …)."""
        return list(getattr(self._local, "steps", []))

    def invoke(self, messages: Any, **kwargs: Any) -> Any:
        steps: list[str] = []
        self._local.steps = steps
        for spec, model in self.rungs:
            breaker = breakers().get(model_breaker_name(spec))
            if not breaker.allow():
                steps.append(f"{spec}: circuit open")
                _degraded(spec, "circuit_open")
                continue
            try:
                answer = model.invoke(messages, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the next rung answers instead
                breaker.record_failure()
                steps.append(f"{spec}: {type(exc).__name__}")
                _degraded(spec, "error")
                continue
            breaker.record_success()
            steps.append(f"{spec}: answered")
            return answer
        raise ModelLadderExhausted("; ".join(steps))


def record_degradation(spec: str, why: str) -> None:
    """A `Degradation` metric for a rung that was skipped or failed (dimension: provider, reason)."""
    from csagent import observability

    observability.emit("Degradation", "Count", 1, rung=spec.split("/", 1)[0], reason=why)


_degraded = record_degradation


def parse_chain(spec: str) -> list[ModelSpec]:
    """The rungs of "primary|secondary|local" as validated specs, up to the first `local`
    (below it is the caller's local tier anyway). An empty result means the local tier only."""
    rungs: list[ModelSpec] = []
    for one in (s.strip() for s in spec.split(LADDER_SEPARATOR)):
        if not one:
            continue
        parsed = parse_model_spec(one)
        if parsed.is_local:
            break
        if parsed not in rungs:
            rungs.append(parsed)
    return rungs


def build_ladder(spec: str, build: Any) -> Any:
    """`spec` is one model spec or several joined by "|" (primary first); `build(spec)` makes
    one model (None for `local`). One model is returned as it is; several become a ladder.
    `local` rungs end the ladder: below them is the caller's local tier anyway."""
    specs = [s.strip() for s in spec.split(LADDER_SEPARATOR) if s.strip()]
    rungs = []
    for one in specs:
        model = build(one)
        if model is None:
            break
        rungs.append((one, model))
    if not rungs:
        return None
    return rungs[0][1] if len(rungs) == 1 else ModelLadder(rungs)
