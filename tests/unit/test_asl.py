"""The dispatch state machine (`infra/statemachines/tools.asl.json`) keeps its promises on paper:
it is valid once template.yaml's DefinitionSubstitutions are applied, moto's ASL parser accepts
it, every tool Task state has TimeoutSeconds, Retry and Catch, and every way out of an iteration
is a ToolResult. tests/integration/test_stepfunctions_dispatch.py runs it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from csagent.domain.models import ErrorType, TaskStatus, ToolResult
from devstack.sfn_bridge import ASL_PATH, deployment_from_template, render_definition
from devstack.template import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
LAMBDA_TRANSIENT_ERRORS = {"Lambda.ServiceException", "Lambda.AWSLambdaException",
                           "Lambda.SdkClientException", "Lambda.TooManyRequestsException"}
TOOLS = {"predefined_cypher", "knowledge_search", "text2cypher", "customer_actions"}


@pytest.fixture(scope="module")
def definition() -> dict[str, Any]:
    return json.loads(render_definition(deployment_from_template(TEMPLATE).substitutions))


@pytest.fixture(scope="module")
def iteration_states(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    states: dict[str, dict[str, Any]] = definition["States"]["RunTasks"]["ItemProcessor"]["States"]
    return states


def _task_states(states: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: state for name, state in states.items() if state["Type"] == "Task"}


def _sample(value: Any) -> Any:
    """A Pass state's Parameters with every JSONPath / intrinsic value replaced by a sample."""
    if isinstance(value, dict):
        return {k.removesuffix(".$"): "sample" if k.endswith(".$") else _sample(v) for k, v in value.items()}
    return value


def test_every_placeholder_is_a_definition_substitution_of_the_template() -> None:
    # Given the placeholders of the ASL file and the state machine's DefinitionSubstitutions
    placeholders = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", ASL_PATH.read_text(encoding="utf-8")))
    template = load_template(TEMPLATE)
    substitutions = template["Resources"]["DispatchStateMachine"]["Properties"]["DefinitionSubstitutions"]

    # Then each placeholder is provided, and nothing is provided that the ASL does not use
    assert placeholders
    assert placeholders == set(substitutions)


def test_the_substituted_definition_is_an_express_map_over_the_tasks(definition: dict[str, Any]) -> None:
    # Given the ASL with the template's substitutions (the fixture parsed it as JSON)
    run_tasks = definition["States"]["RunTasks"]

    # Then it starts with a Map over $.tasks whose concurrency is the template's parameter default
    template = load_template(TEMPLATE)
    assert definition["StartAt"] == "RunTasks"
    assert run_tasks["Type"] == "Map"
    assert run_tasks["ItemsPath"] == "$.tasks"
    assert run_tasks["MaxConcurrency"] == template["Parameters"]["DispatchMaxConcurrency"]["Default"]
    assert template["Resources"]["DispatchStateMachine"]["Properties"]["Type"] == "EXPRESS"


def test_every_tool_task_has_a_timeout(iteration_states: dict[str, dict[str, Any]]) -> None:
    # Given every Task state of the iteration
    tasks = _task_states(iteration_states)

    # Then each one has a positive whole-number TimeoutSeconds
    assert len(tasks) == len(TOOLS)
    assert all(isinstance(t["TimeoutSeconds"], int) and t["TimeoutSeconds"] > 0 for t in tasks.values())


def test_every_tool_task_retries_transient_errors_with_jittered_backoff(
        iteration_states: dict[str, dict[str, Any]]) -> None:
    # Given every Task state of the iteration
    tasks = _task_states(iteration_states)

    # Then each retries the Lambda service errors and throttling, and only those (every tool
    # failure is the router's healer's), with exponential backoff and full jitter, a bounded number of times
    for name, task in tasks.items():
        (retrier,) = task["Retry"]
        assert set(retrier["ErrorEquals"]) == LAMBDA_TRANSIENT_ERRORS, name
        assert retrier["BackoffRate"] > 1 and retrier["IntervalSeconds"] >= 1, name
        assert 1 <= retrier["MaxAttempts"] <= 3, name
        assert retrier["JitterStrategy"] == "FULL", name


def test_no_tool_error_is_retried_by_the_state_machine() -> None:
    # Given the ASL as written
    text = ASL_PATH.read_text(encoding="utf-8")

    # Then no retry or catch names an error of the tools themselves: the router heals those
    assert "TransientToolError" not in text


def test_every_tool_task_catches_everything_into_a_failed_result(
        iteration_states: dict[str, dict[str, Any]]) -> None:
    # Given every Task state of the iteration
    tasks = _task_states(iteration_states)

    # Then its catchers keep the input under $.error and end with States.ALL; a timeout has its own
    for name, task in tasks.items():
        catchers = task["Catch"]
        assert catchers[-1]["ErrorEquals"] == ["States.ALL"], name
        assert all(c["ResultPath"] == "$.error" for c in catchers), name
        error_type_after = {e: iteration_states[c["Next"]]["Parameters"]["error"]["type"]
                            for c in catchers for e in c["ErrorEquals"]}
        assert error_type_after["States.Timeout"] == ErrorType.TIMEOUT, name
        assert all(error_type_after[e] == ErrorType.TRANSIENT for e in LAMBDA_TRANSIENT_ERRORS), name
        assert error_type_after["States.ALL"] == ErrorType.UNKNOWN, name


def test_every_failure_state_builds_a_failed_tool_result(iteration_states: dict[str, dict[str, Any]]) -> None:
    # Given the Pass states the catchers and the unknown-tool branch lead to
    passes = {name: s for name, s in iteration_states.items() if s["Type"] == "Pass"}

    # When their Parameters are filled with sample values
    results = {name: ToolResult.model_validate(_sample(s["Parameters"])) for name, s in passes.items()}

    # Then each is a failed ToolResult carrying the task's ids and a typed error, and ends the iteration
    assert set(passes) == {"ToolTimedOut", "ToolUnavailable", "ToolFailed", "UnknownTool"}
    for name, result in results.items():
        params = passes[name]["Parameters"]
        assert result.status is TaskStatus.FAILED and result.error is not None, name
        assert (params["task_id.$"], params["task_type.$"], params["tool.$"]) == \
            ("$.task.task_id", "$.task.task_type", "$.task.tool"), name
        assert passes[name]["End"] is True, name


def test_the_choice_routes_each_tool_to_the_function_built_from_its_code(
        iteration_states: dict[str, dict[str, Any]]) -> None:
    # Given the Choice rules, and which function ARN each Task state invokes
    choice = iteration_states["ChooseTool"]
    deployment = deployment_from_template(TEMPLATE)

    # When each tool name is followed to the code of the function it invokes
    routed = {rule["StringEquals"]: iteration_states[rule["Next"]]["Parameters"]["FunctionName"]
              for rule in choice["Choices"]}
    code_of = {tool: deployment.tools_by_arn[arn] for tool, arn in routed.items()}

    # Then every tool reaches functions/tools/<that tool>, which has a handler, and others fail as data
    assert code_of == {tool: tool for tool in TOOLS}
    assert all((ROOT / "functions" / "tools" / tool / "app.py").is_file() for tool in TOOLS)
    assert iteration_states[choice["Default"]]["Parameters"]["error"]["type"] == ErrorType.UNKNOWN


def test_moto_accepts_the_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given moto with state machine execution (its ASL parser validates definitions)
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL")]:
        monkeypatch.delenv(var)
    definition = render_definition(deployment_from_template(TEMPLATE).substitutions)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")

        # When the dispatch state machine is created as an Express machine
        arn = sfn.create_state_machine(name="dispatch", definition=definition, type="EXPRESS",
                                       roleArn="arn:aws:iam::123456789012:role/dispatch")["stateMachineArn"]

        # Then it exists with that definition
        described = sfn.describe_state_machine(stateMachineArn=arn)
        assert json.loads(described["definition"]) == json.loads(definition)
        assert described["type"] == "EXPRESS"
