"""Healing one task: retries that change something, cheaper paths, breakers, budgets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from csagent.domain.models import ErrorType, Task, TaskResult, TaskStatus, ToolResult
from csagent.healing import run_healed, run_healed_waves
from csagent.resilience.bounds import Bounds
from csagent.resilience.breaker import breakers
from csagent.tools.context import ToolContext

BOUNDS = Bounds(backoff_base_s=0.001, backoff_max_s=0.002)
CTX = ToolContext(graph=None, customer_id="c1", embedder=object())  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _fresh_breakers() -> Iterator[None]:
    breakers().reset()
    yield


class Script:
    """A tool that answers from a script of results, recording each call's task and context."""

    def __init__(self, *outcomes: tuple[str, ErrorType | None]) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[tuple[Task, ToolContext]] = []

    def __call__(self, task: Task, ctx: ToolContext) -> ToolResult:
        self.calls.append((task, ctx))
        status, error = self.outcomes.pop(0) if self.outcomes else ("ok", None)
        if status == "ok":  # data of the tool's own kind (`csagent.domain.tool_data.RESULT_KINDS`)
            data = {"answer": "fine"} if task.tool == "knowledge_search" else {"rows": []}
            return ToolResult.ok(task, data)
        return ToolResult.failed(task, error, f"{error.value} happened", retryable=True)


def task(tool: str = "knowledge_search", **args) -> Task:
    return Task(task_id="t1", task_type="policy", tool=tool, args=args or {"question": "returns?"})


def test_a_transient_failure_is_retried_after_a_backoff_and_then_succeeds():
    tool = Script(("fail", ErrorType.TRANSIENT), ("ok", None))
    result, decisions, calls = run_healed(
        task(), CTX, {"knowledge_search": tool}, BOUNDS, sleep=lambda s: None
    )
    assert result.status is TaskStatus.SUCCESS
    assert (calls, [d.action.value for d in decisions]) == (2, ["retry"])
    assert decisions[0].retry_kind.value == "backoff"
    assert 0 <= decisions[0].delay_s <= BOUNDS.backoff_max_s


def test_a_parse_error_is_retried_with_the_error_as_a_hint():
    tool = Script(("fail", ErrorType.PARSE_ERROR), ("ok", None))
    run_healed(task(), CTX, {"knowledge_search": tool}, BOUNDS, sleep=lambda s: None)
    assert tool.calls[0][0].args.hint is None
    assert "parse_error happened" in (tool.calls[1][0].args.hint or "")


def test_no_results_degrades_to_the_keyword_search_and_says_it_is_a_fallback():
    # Given a knowledge search that finds nothing with embeddings
    tool = Script(("fail", ErrorType.NO_RESULTS), ("ok", None))
    # When the task is healed
    result, decisions, _ = run_healed(task(), CTX, {"knowledge_search": tool}, BOUNDS, sleep=lambda s: None)
    # Then the second call asked for the search without embeddings (FAQ / fulltext keyword match)
    assert [d.action.value for d in decisions] == ["degrade"]
    assert tool.calls[1][0].args.model_dump() == {"question": "returns?", "mode": "keyword"}
    assert result.status is TaskStatus.FALLBACK


def test_a_template_that_found_nothing_has_answered_and_is_not_degraded_to_a_generated_query():
    # Given a predefined template that ran and found nothing ("There is no gift card on your account.")
    template = Script(("fail", ErrorType.NO_RESULTS))
    generated = Script(("fail", ErrorType.LOW_CONFIDENCE))
    # When the task is healed
    result, decisions, calls = run_healed(
        task("predefined_cypher", question="how much is left on my gift card?",
             fallback_template="customer_profile"), CTX,
        {"predefined_cypher": template, "text2cypher": generated}, BOUNDS, sleep=lambda s: None)
    # Then the empty answer stands: Text2Cypher is never asked to guess another question
    assert calls == 1 and not generated.calls
    assert result.error.type is ErrorType.NO_RESULTS and [d.action.value for d in decisions] == ["fail"]


def test_a_business_rule_violation_is_not_retried():
    tool = Script(("fail", ErrorType.BUSINESS_RULE_VIOLATION))
    result, decisions, calls = run_healed(
        task("customer_actions", action="cancel_order"),
        CTX,
        {"customer_actions": tool},
        BOUNDS,
        sleep=lambda s: None,
    )
    assert calls == 1 and result.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert decisions[-1].action.value == "handoff"


def test_an_open_breaker_routes_around_the_dependency_without_calling_it():
    # Given the neo4j breaker opened by repeated timeouts
    failing = Script(*[("fail", ErrorType.TIMEOUT)] * 20)
    for _ in range(3):
        run_healed(
            task("predefined_cypher", template_id="order_status"),
            CTX,
            {"predefined_cypher": failing},
            BOUNDS,
            sleep=lambda s: None,
        )
    assert breakers().get("neo4j").state.value == "open"
    healthy = Script(("ok", None))
    # When another task needs Neo4j
    result, _, _ = run_healed(
        task("predefined_cypher", template_id="order_status"),
        CTX,
        {"predefined_cypher": healthy},
        BOUNDS,
        sleep=lambda s: None,
    )
    # Then it fails fast as temporarily unavailable, and the tool was never called
    assert healthy.calls == [] and result.error.type is ErrorType.TRANSIENT


def test_the_turns_tool_call_budget_stops_retries():
    tool = Script(*[("fail", ErrorType.TRANSIENT)] * 5)
    _, _, calls = run_healed(
        task(), CTX, {"knowledge_search": tool}, BOUNDS, tool_calls_left=1, sleep=lambda s: None
    )
    assert calls == 1


def test_an_answer_from_the_cheaper_path_says_so_kindly():
    from csagent.replies import describe_success

    # Given a knowledge answer that came from the keyword fallback after a failed search
    task = Task(task_id="t1", task_type="policy", tool="knowledge_search")
    result = TaskResult.model_validate({
        "task_id": "t1", "task_type": "policy", "tool": "knowledge_search", "status": "fallback",
        "heal": [{"action": "degrade", "reason": "timeout: degrade to the cheaper path",
                  "error_type": "timeout"}],
        "data": {"answer": "Returns are accepted within 30 days.", "citations": []}})
    # When it is described
    text = describe_success(task, result, "en")
    # Then the reply says plainly that this is the closest answer, then gives it
    assert text.startswith("Part of our system is slow right now")
    assert text.endswith("Returns are accepted within 30 days.")


def test_an_answer_from_the_cheaper_path_after_finding_nothing_blames_no_slowness():
    from csagent.replies import describe_success

    # Given a knowledge answer from the keyword search after the usual search found nothing
    task = Task(task_id="t1", task_type="warranty", tool="knowledge_search")
    result = TaskResult.model_validate({
        "task_id": "t1", "task_type": "warranty", "tool": "knowledge_search", "status": "fallback",
        "heal": [{"action": "degrade", "reason": "no_results: degrade to the cheaper path",
                  "error_type": "no_results"}],
        "data": {"answer": "Warranty periods start on the delivery date.", "citations": []}})
    # When it is described
    text = describe_success(task, result, "en")
    # Then it says the closest answer was found, not that the system is slow
    assert text.startswith("I couldn't find an answer to exactly that, so here is the closest one I found:")
    assert "slow" not in text and text.endswith("Warranty periods start on the delivery date.")


# ------------------------------------------------------------ the same healer, wave by wave
class Waves:
    """A dispatcher that answers each wave from one script per tool, recording the waves."""

    def __init__(self, **scripts: Script) -> None:
        self.scripts = scripts
        self.waves: list[list[Task]] = []

    def __call__(self, wave):
        self.waves.append(list(wave))
        return [self.scripts[t.tool](t, CTX) for t in wave]


def test_through_a_dispatcher_a_retry_is_a_new_wave_of_only_the_failed_task():
    # Given two tasks, the first failing transiently once
    tasks = [task(), Task(task_id="t2", task_type="order_status", tool="predefined_cypher",
                          args={"template_id": "order_status"})]
    waves = Waves(knowledge_search=Script(("fail", ErrorType.TRANSIENT), ("ok", None)),
                  predefined_cypher=Script(("ok", None)))
    slept: list[float] = []
    # When they are healed wave by wave
    healers = run_healed_waves(tasks, waves, {"knowledge_search", "predefined_cypher"}, BOUNDS,
                               sleep=slept.append)
    # Then the second wave held only the retry, after its backoff, and both tasks answered
    assert [[t.task_id for t in w] for w in waves.waves] == [["t1", "t2"], ["t1"]]
    delay = healers[0].decisions[0].delay_s  # full jitter: rounded to the millisecond, may be 0
    assert healers[0].decisions[0].retry_kind == "backoff" and slept == ([delay] if delay else [])
    assert [h.record()["status"] for h in healers] == ["success", "success"]
    assert [h.record()["attempts"] for h in healers] == [2, 1]


def test_through_a_dispatcher_the_cheaper_path_is_a_task_the_wave_carries():
    # Given a knowledge question that finds nothing
    waves = Waves(knowledge_search=Script(("fail", ErrorType.NO_RESULTS), ("ok", None)))
    # When it is healed wave by wave
    (healer,) = run_healed_waves([task()], waves, {"knowledge_search"}, BOUNDS, sleep=lambda s: None)
    # Then the second wave asked for the keyword search, and the answer is a fallback under the task's ids
    assert waves.waves[1][0].args.model_dump() == {"question": "returns?", "mode": "keyword"}
    record = healer.record()
    assert (record["status"], record["task_id"], record["tool"]) == ("fallback", "t1", "knowledge_search")
    assert [s["action"] for s in record["heal"]] == ["degrade"]


def test_through_a_dispatcher_a_missing_result_is_a_failure_not_a_crash():
    # Given a dispatcher that answers nothing for the wave
    def silent(wave):
        return []
    # When a task is healed through it
    (healer,) = run_healed_waves([task()], silent, {"knowledge_search"}, BOUNDS, sleep=lambda s: None)
    # Then the task failed with a reason, as an unexplained failure: one retry, the cheaper path, a person
    record = healer.record()
    assert record["status"] == "failed" and record["error"]["type"] == "unknown"
    assert [s["action"] for s in record["heal"]] == ["retry", "degrade", "handoff"]


def test_through_a_dispatcher_the_turns_tool_call_budget_stops_retries():
    # Given a task failing every time and a budget of one call
    waves = Waves(knowledge_search=Script(*[("fail", ErrorType.TRANSIENT)] * 5))
    # When it is healed wave by wave
    (healer,) = run_healed_waves([task()], waves, {"knowledge_search"}, BOUNDS, tool_calls_left=1,
                                 sleep=lambda s: None)
    # Then only one wave ran
    assert len(waves.waves) == 1 and healer.calls == 1
