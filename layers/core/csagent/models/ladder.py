"""The degradation ladder's notation and its metric: a chain of model endpoints written
"primary|secondary|local" (`parse_chain`), and the `Degradation` metric of a rung that was
skipped or failed (`record_degradation`). The gateway walks the chain
(`csagent.models.gateway`), each endpoint behind its own circuit breaker; below the last model
is the caller's local tier.
"""

from __future__ import annotations

from csagent.models.providers import ModelSpec, parse_model_spec

LADDER_SEPARATOR = "|"


def record_degradation(spec: str, why: str) -> None:
    """A `Degradation` metric for a rung that was skipped or failed (dimension: provider, reason)."""
    from csagent import observability

    observability.emit("Degradation", "Count", 1, rung=spec.split("/", 1)[0], reason=why)


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
