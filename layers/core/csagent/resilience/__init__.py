"""Self-healing building blocks: the policy table (`policy`), backoff, bounds, circuit breakers
and configurable fault injection. Pure logic, no I/O; the graph wires them in."""

from csagent.resilience.backoff import backoff_ceiling, full_jitter_delay
from csagent.resilience.bounds import Bounds, get_bounds
from csagent.resilience.breaker import (
    BreakerConfig,
    BreakerRegistry,
    BreakerState,
    CircuitBreaker,
    breakers,
    guard,
    model_breaker_name,
)
from csagent.resilience.faults import (
    FaultKind,
    FaultPlan,
    FaultyGraphStore,
    InjectedCrash,
    crash_point,
    faulty_model,
    faulty_tool,
    get_fault_plan,
    wrap_graph_store,
)
from csagent.resilience.policy import POLICY, HealAction, HealDecision, RetryKind, decide

__all__ = [
    "POLICY", "BreakerConfig", "BreakerRegistry", "BreakerState", "Bounds", "CircuitBreaker", "FaultKind",
    "FaultPlan", "FaultyGraphStore", "HealAction", "HealDecision", "InjectedCrash", "RetryKind",
    "backoff_ceiling", "breakers", "crash_point", "decide", "faulty_model", "faulty_tool",
    "full_jitter_delay", "get_bounds", "get_fault_plan", "guard", "model_breaker_name", "wrap_graph_store",
]
