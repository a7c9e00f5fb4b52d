"""Run one wave of tasks on the dispatch state machine (AWS Step Functions, Express, synchronous).

    dispatcher = StepFunctionsDispatcher(boto3.client("stepfunctions"), state_machine_arn)
    results = dispatcher.run_wave(tasks, customer_id, session_id, dependencies)

The state machine (`infra/statemachines/tools.asl.json`) fans the wave out with a Map state, one
tool Lambda per task; it retries only infrastructure errors (Lambda service errors, throttling)
and hands every tool failure back as a ToolResult (the tool's own, or one its Catch builds). What
is left for this adapter is the execution as a whole: when it cannot be started, fails, times
out, or answers something unreadable, every task of the wave gets a failed ToolResult (TRANSIENT
or TIMEOUT) - `run_wave` never raises, so no exception crosses a node. Healing any of these
results (a retry in a new wave, the cheaper tool, breakers) is the router's: `csagent.healing`.

Locally the same class runs over `devstack.sfn_bridge`, which emulates StartSyncExecution on moto.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import ValidationError

from csagent.domain.models import ErrorType, Task, ToolResult

logger = logging.getLogger(__name__)

#: Error codes of StartSyncExecution worth retrying later (throttling, service hiccups).
_RETRYABLE_CODES = frozenset({
    "ThrottlingException", "TooManyRequestsException", "ServiceUnavailable", "InternalServerError",
    "InternalFailure", "ServiceException", "RequestTimeout", "RequestTimeoutException",
})


class WaveDispatcher(Protocol):
    """Runs the ready tasks of one wave and returns one ToolResult per task, in task order."""

    def run_wave(self, tasks: Sequence[Task], customer_id: str | None, session_id: str,
                 dependencies: Mapping[str, Mapping[str, Any]] | None = None) -> list[ToolResult]:
        """Never raises: a failure of the dispatch itself is a failed ToolResult per task."""
        ...


class SyncExecutionClient(Protocol):
    """The one Step Functions call the dispatcher makes (a boto3 `stepfunctions` client has it)."""

    def start_sync_execution(self, *, stateMachineArn: str, input: str) -> dict[str, Any]:  # boto3's names
        """StartSyncExecution: run an Express execution and return its outcome."""
        ...


def wave_input(tasks: Sequence[Task], customer_id: str | None, session_id: str,
               dependencies: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    """The execution input the ASL expects: every key present (its JSONPaths are not optional)."""
    return {
        "tasks": [t.model_dump(mode="json") for t in tasks],
        "customer_id": customer_id,
        "session_id": session_id,
        "dependencies": {k: dict(v) for k, v in (dependencies or {}).items()},
    }


def failed_wave(tasks: Sequence[Task], error_type: ErrorType, message: str, *, retryable: bool,
                latency_ms: float = 0.0) -> list[ToolResult]:
    """The same failure for every task of a wave that could not run."""
    return [ToolResult.failed(t, error_type, message, retryable=retryable, latency_ms=latency_ms)
            for t in tasks]


def results_from_output(tasks: Sequence[Task], output: str | None, latency_ms: float) -> list[ToolResult]:
    """One ToolResult per task from the execution output (the Map's list), matched by task id.

    A task whose result is missing or unreadable gets a failed ToolResult of its own; the others
    keep theirs. Results without a latency (the ASL's Catch states write 0) get the wave's.
    """
    try:
        items = json.loads(output or "null")
    except ValueError:
        items = None
    if not isinstance(items, list):
        return failed_wave(tasks, ErrorType.UNKNOWN, "The dispatch returned no readable results.",
                           retryable=False, latency_ms=latency_ms)
    by_id: dict[str, ToolResult] = {}
    for item in items:
        try:
            parsed = ToolResult.model_validate(item)
        except ValidationError:
            continue
        by_id.setdefault(parsed.task_id, parsed)
    missing = "The dispatch returned no result for this task."
    out: list[ToolResult] = []
    for task in tasks:
        result = by_id.get(task.task_id)
        if result is None:
            out.append(ToolResult.failed(task, ErrorType.UNKNOWN, missing, latency_ms=latency_ms))
        else:
            out.append(result if result.latency_ms else result.model_copy(update={"latency_ms": latency_ms}))
    return out


def _error_code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def classify_client_error(exc: Exception) -> tuple[ErrorType, bool, str]:
    """(error type, retryable, message) for an exception of the StartSyncExecution call."""
    name = type(exc).__name__
    if isinstance(exc, TypeError | ValueError):  # the input could not be serialised: no retry helps
        return ErrorType.UNKNOWN, False, "The tasks could not be sent to the tools."
    if "Timeout" in name:  # botocore ReadTimeoutError / ConnectTimeoutError: the wave's time is spent
        return ErrorType.TIMEOUT, False, "The tools did not answer in time."
    code = _error_code(exc)
    if code:
        return ErrorType.TRANSIENT, code in _RETRYABLE_CODES, f"The tools could not be started ({code})."
    # No service answer at all: connection refused, DNS, closed pool...
    return ErrorType.TRANSIENT, True, f"The tools could not be reached ({name})."


class StepFunctionsDispatcher:
    """`WaveDispatcher` over StartSyncExecution of the Express dispatch state machine.

    `client` is a boto3 `stepfunctions` client (give it a read timeout longer than the longest
    wave and no SDK retries: a retried StartSyncExecution would run the tools twice) or anything
    with the same `start_sync_execution` method, such as the local bridge's emulation.
    """

    def __init__(self, client: SyncExecutionClient, state_machine_arn: str) -> None:
        self._client = client
        self._state_machine_arn = state_machine_arn

    @property
    def state_machine_arn(self) -> str:
        return self._state_machine_arn

    def run_wave(self, tasks: Sequence[Task], customer_id: str | None, session_id: str,
                 dependencies: Mapping[str, Mapping[str, Any]] | None = None) -> list[ToolResult]:
        """Run the wave as one synchronous execution; one ToolResult per task, in task order."""
        if not tasks:
            return []
        started = time.perf_counter()

        def elapsed() -> float:
            return round((time.perf_counter() - started) * 1000, 3)

        try:
            payload = json.dumps(wave_input(tasks, customer_id, session_id, dependencies))
            response = self._client.start_sync_execution(stateMachineArn=self._state_machine_arn,
                                                         input=payload)
        except Exception as exc:  # noqa: BLE001 - a dispatch failure is data for every task
            error_type, retryable, message = classify_client_error(exc)
            logger.warning("dispatch of %d tasks failed to start: %s", len(tasks), type(exc).__name__)
            return failed_wave(tasks, error_type, message, retryable=retryable, latency_ms=elapsed())
        status = response.get("status")
        if status == "SUCCEEDED":
            return results_from_output(tasks, response.get("output"), elapsed())
        logger.warning("dispatch execution %s: %s (%s)", status, response.get("error"),
                       response.get("executionArn"))
        if status == "TIMED_OUT":  # not retried: another wait that long does not fit in the turn
            return failed_wave(tasks, ErrorType.TIMEOUT, "The tools did not answer in time.", retryable=False,
                               latency_ms=elapsed())
        return failed_wave(tasks, ErrorType.TRANSIENT, "The tools could not complete this request.",
                           retryable=True, latency_ms=elapsed())
