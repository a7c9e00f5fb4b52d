"""Turn latency by turn type: the workload's scenarios through the real `ConversationService`
in this process (Neo4j seeded with tau-retail, DynamoDB on moto, the local model tier).

Each step of a scenario is one timed sample: `handle_message` for a message, or the agent's
`decide_approval` (which resumes the paused turn) for an approval. What the turn showed (route,
status, the tools that finally ran) is read after the clock stops, from the response and the
session's checkpoint, and compared with the step's `expect`.
"""

from __future__ import annotations

import statistics
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from devstack.bench.stats import group_summaries, percentile, ratio, summarise, timed
from devstack.bench.workload import Scenario, Step, label_png

SINGLE_PREFIX = "single_"
AGENT = {"subject": "bench-agent", "roles": frozenset({"agent"})}


@dataclass
class Sample:
    """One timed step and what it showed."""

    type: str
    ms: float
    status: str | None = None
    route: str | None = None
    tools: list[str] = field(default_factory=list)
    tasks: int = 0
    intended: bool = False
    error: str | None = None
    task_latencies: list[dict[str, Any]] = field(default_factory=list)  # tool, status, latency_ms


def meets(expect: Mapping[str, Any], *, route: str | None, status: str | None, tools: Sequence[str],
          tasks: int) -> bool:
    """Whether a turn showed what its step expects (route, a tool among its tasks, status, at
    least `tasks` tasks); keys the step does not name are not checked."""
    return ((expect.get("route") is None or expect["route"] == route)
            and (expect.get("status") is None or expect["status"] == status)
            and (expect.get("tool") is None or expect["tool"] in tools)
            and tasks >= int(expect.get("tasks", 0)))


def final_tools(session_id: str) -> list[str]:
    """The tool that finally served each task of the session's last turn (a task the healer
    degraded shows its fallback tool), from the checkpoint."""
    from csagent import runtime

    snapshot = runtime.compiled_graph().get_state({"configurable": {"thread_id": session_id}})
    results = (snapshot.values or {}).get("results") or {} if snapshot is not None else {}
    return [str(r.get("tool")) for r in results.values() if isinstance(r, Mapping)]


def _message(step: Step) -> Any:
    from csagent.service.schemas import Attachment, MessageIn

    attachments = [Attachment(media_type="image/png", data=label_png(step.label))] if step.label else []
    return MessageIn(text=step.text, attachments=attachments)


def run_scenario(service: Any, scenario: Scenario) -> list[Sample]:
    """Every step of one scenario, in one fresh session; a step that raises is a sample with
    `error` set, and the scenario stops there (its later steps depend on it)."""
    from csagent.domain.models import Principal
    from csagent.service.schemas import DecisionIn

    principal = Principal(subject=scenario.customer_id, customer_id=scenario.customer_id)
    session = f"bench-{scenario.kind}-{uuid.uuid4().hex[:10]}"
    samples: list[Sample] = []
    last: Any = None
    for step in scenario.steps:
        try:
            if step.decide:
                approval_id = (last.trace or {}).get("approval_id") if last is not None else None
                if not approval_id:
                    raise RuntimeError("no approval to decide: the previous turn did not pause")
                decision = DecisionIn(decision=step.decide)
                agent = Principal(**AGENT)
                decided, ms = timed(partial(service.decide_approval, agent, approval_id, decision))
                last = decided.turn
            else:
                last, ms = timed(partial(service.handle_message, principal, session, _message(step)))
        except Exception as exc:  # noqa: BLE001 - a failed turn is a finding, recorded
            samples.append(Sample(step.type, 0.0, error=f"{type(exc).__name__}: {exc}"[:300]))
            break
        status = getattr(last, "status", None)
        route = (getattr(last, "trace", None) or {}).get("route")
        tasks = len(getattr(last, "tasks", None) or [])
        tools = final_tools(session)
        latencies = [{"turn_type": step.type, "tool": t.tool, "status": t.status, "latency_ms": t.latency_ms}
                     for t in getattr(last, "tasks", None) or []]
        samples.append(Sample(step.type, round(ms, 2), status, route, tools, tasks,
                              meets(step.expect, route=route, status=status, tools=tools, tasks=tasks),
                              task_latencies=latencies))
    return samples


def warm_up(service: Any, scenarios: Sequence[Scenario]) -> None:
    """One untimed turn of each read-only kind: loads the embedder, the catalogue index, the
    store vocabulary and Tesseract, as a process's first requests would."""
    seen: set[str] = set()
    for scenario in scenarios:
        if scenario.kind in seen or len(scenario.steps) != 1 or "confirmation" in scenario.kind:
            continue
        seen.add(scenario.kind)
        run_scenario(service, Scenario(scenario.kind, scenario.customer_id, scenario.steps))


def figures(samples: Sequence[Sample]) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[float]]]:
    """(the legacy `turns` section, the `turn_types` section, latency samples per turn type)."""
    by_type: dict[str, list[Sample]] = {}
    for sample in samples:
        by_type.setdefault(sample.type, []).append(sample)
    ms = {t: [s.ms for s in group if s.error is None] for t, group in by_type.items()}
    types = group_summaries(ms)
    for name, group in by_type.items():
        types[name]["as_intended"] = ratio(sum(s.intended for s in group), len(group))
        types[name]["tasks_median"] = statistics.median(s.tasks for s in group)
        types[name]["errors"] = sum(s.error is not None for s in group)
    single = [v for t, values in ms.items() if t.startswith(SINGLE_PREFIX) for v in values]
    compound = ms.get("compound", [])
    single_p50 = percentile(single, 50) if single else None
    compound_p50 = percentile(compound, 50) if compound else None
    legacy = {
        "single_intent_p50_ms": single_p50,
        "single_intent_p95_ms": percentile(single, 95) if single else None,
        "compound_p50_ms": compound_p50,
        "compound_tasks": types.get("compound", {}).get("tasks_median"),
        "compound_over_single_p50": ratio(compound_p50, single_p50),
        "runs": len(samples),
    }
    section = {
        "turns": len(samples),
        "all_p50_ms": summarise([v for values in ms.values() for v in values]).get("p50_ms"),
        "as_intended": ratio(sum(s.intended for s in samples), len(samples)),
        "errors": sum(s.error is not None for s in samples),
        "by_type": types,
        "failures": [{k: v for k, v in asdict(s).items() if k != "task_latencies"}
                     for s in samples if s.error is not None or not s.intended][:20],
        "notes": ["single intent = the single_* types together (one task, any tool); "
                  "single_text2cypher: the predefined query finds nothing and the healer degrades "
                  "to Text2Cypher (local tier: its template fallback)",
                  "confirmation_yes executes the cancellation (a Neo4j write, exactly once); "
                  "approval_resume is the agent's decision resuming the paused turn"],
    }
    return legacy, section, ms


def bench_turn_types(scenarios: Sequence[Scenario]) -> list[Sample]:
    """Warm up, then time every step of every scenario."""
    from csagent import runtime

    service = runtime.conversation_service()
    warm_up(service, scenarios)
    return [sample for scenario in scenarios for sample in run_scenario(service, scenario)]
