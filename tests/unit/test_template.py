"""`template.yaml` is the one source of truth: it parses, it is valid, and it keeps its promises.

Durability and encryption of every table, least-privilege IAM, JWT auth everywhere but the
health check, and names that resolve for the local stack exactly as the application's
settings expect them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from csagent.config import Settings
from devstack.template import load_template, local_resources

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(TEMPLATE)


def _resources_of_type(template: dict[str, Any], *types: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in template["Resources"].items() if res["Type"] in types}


def _tables(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: res["Properties"] for name, res in _resources_of_type(template, "AWS::DynamoDB::Table").items()
    }


def _allow_statements(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every Allow statement an identity policy in the template grants, with its owner."""
    for name, res in template["Resources"].items():
        props = res.get("Properties", {})
        documents: list[Any] = []
        if res["Type"] in ("AWS::Serverless::Function", "AWS::Serverless::StateMachine"):
            policies = props.get("Policies", [])
            for policy in policies if isinstance(policies, list) else [policies]:
                if isinstance(policy, dict) and "Statement" in policy:
                    documents.append(policy)
        elif res["Type"] == "AWS::IAM::Role":
            documents.extend(p["PolicyDocument"] for p in props.get("Policies", []))
        elif res["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            documents.append(props["PolicyDocument"])
        for document in documents:
            statements = document["Statement"]
            for statement in statements if isinstance(statements, list) else [statements]:
                if statement.get("Effect") == "Allow":
                    yield name, statement


def _environments(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    globals_env = template.get("Globals", {}).get("Function", {}).get("Environment", {})
    yield "Globals", globals_env.get("Variables", {})
    for name, res in _resources_of_type(
        template, "AWS::Serverless::Function", "AWS::Lambda::Function"
    ).items():
        yield name, res.get("Properties", {}).get("Environment", {}).get("Variables", {})


def test_template_parses_with_cloudformation_short_tags(template: dict[str, Any]) -> None:
    # Given the SAM template with short tags (!Ref, !GetAtt, !Sub)
    # When it is loaded
    router_env = template["Resources"]["RouterFunction"]["Properties"]["Environment"]["Variables"]
    policies = template["Resources"]["RouterFunction"]["Properties"]["Policies"]

    # Then it is a SAM template and the tags are in CloudFormation's long form
    assert template["Transform"] == "AWS::Serverless-2016-10-31"
    assert router_env["CHECKPOINTS_TABLE"] == {"Ref": "CheckpointsTable"}
    assert {"SQSSendMessagePolicy": {"QueueName": {"Fn::GetAtt": ["HandoffQueue", "QueueName"]}}} in policies


def test_cfn_lint_passes() -> None:
    # Given the cfn-lint of the project's environment
    cfn_lint = Path(sys.executable).parent / "cfn-lint"
    executable = str(cfn_lint) if cfn_lint.exists() else shutil.which("cfn-lint")
    assert executable, "cfn-lint is a dev dependency; install requirements/dev.in"

    # When it lints the template
    result = subprocess.run(
        [executable, str(TEMPLATE)], capture_output=True, text=True, timeout=120, check=False
    )

    # Then it reports nothing at all (no errors, no warnings)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_table_is_billed_on_demand(template: dict[str, Any]) -> None:
    # Given every DynamoDB table of the template
    tables = _tables(template)

    # Then each one is PAY_PER_REQUEST
    assert tables
    assert {name: props.get("BillingMode") for name, props in tables.items()} == dict.fromkeys(
        tables, "PAY_PER_REQUEST"
    )


def test_every_table_has_point_in_time_recovery(template: dict[str, Any]) -> None:
    # Given every DynamoDB table of the template
    tables = _tables(template)

    # Then each one can be restored to any point in the last 35 days
    without_pitr = [
        name
        for name, props in tables.items()
        if props.get("PointInTimeRecoverySpecification", {}).get("PointInTimeRecoveryEnabled") is not True
    ]
    assert without_pitr == []


def test_every_table_is_encrypted(template: dict[str, Any]) -> None:
    # Given every DynamoDB table of the template
    tables = _tables(template)

    # Then each one has server-side encryption switched on
    unencrypted = [
        name
        for name, props in tables.items()
        if props.get("SSESpecification", {}).get("SSEEnabled") is not True
    ]
    assert unencrypted == []


def test_checkpoints_table_has_the_saver_key_layout_and_ttl(template: dict[str, Any]) -> None:
    # Given the checkpoints table (langgraph-checkpoint-aws DynamoDBSaver layout)
    props = _tables(template)["CheckpointsTable"]

    # Then it has string PK/SK keys and expires items on "ttl"
    assert props["KeySchema"] == [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ]
    assert {(a["AttributeName"], a["AttributeType"]) for a in props["AttributeDefinitions"]} == {
        ("PK", "S"),
        ("SK", "S"),
    }
    assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}


def test_idempotency_table_has_the_powertools_layout(template: dict[str, Any]) -> None:
    # Given the idempotency table used by Powertools' DynamoDBPersistenceLayer defaults
    props = _tables(template)["IdempotencyTable"]

    # Then its key is "id" and records expire on "expiration"
    assert props["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}


def test_no_allow_statement_uses_a_wildcard_action(template: dict[str, Any]) -> None:
    # Given every Allow statement of every identity policy in the template
    statements = list(_allow_statements(template))

    # Then none grants "*", "service:*" or "service:Get*"-style actions, and none uses NotAction
    offending = []
    for owner, statement in statements:
        actions = statement.get("Action", [])
        actions = actions if isinstance(actions, list) else [actions]
        if "NotAction" in statement or any("*" in str(action) for action in actions):
            offending.append((owner, statement.get("Sid"), actions))
    assert statements, "expected the router's inline statements to be found"
    assert offending == []


def test_no_function_attaches_a_broad_managed_policy(template: dict[str, Any]) -> None:
    # Given the policies attached to every serverless function
    functions = _resources_of_type(template, "AWS::Serverless::Function", "AWS::Serverless::StateMachine")
    names = [
        policy
        for res in functions.values()
        for policy in res["Properties"].get("Policies", [])
        if isinstance(policy, str)
    ]

    # Then none is an AWS "full access" / admin managed policy
    assert [n for n in names if "FullAccess" in n or n in ("AdministratorAccess", "PowerUserAccess")] == []


def test_auth_mode_is_jwt_everywhere_and_never_dev(template: dict[str, Any]) -> None:
    # Given the environment of the globals and of every function
    auth_modes = {owner: env["AUTH_MODE"] for owner, env in _environments(template) if "AUTH_MODE" in env}

    # Then the two functions that serve the HTTP API set JWT auth (each function is given only
    # what its model reads: csagent.env_vars), the default elsewhere is JWT, and nothing sets dev
    assert auth_modes.get("RouterFunction") == auth_modes.get("StreamFunction") == "jwt"
    assert set(auth_modes.values()) == {"jwt"}
    from csagent.config import Auth

    assert Auth.model_fields["auth_mode"].default == "jwt"


def test_only_the_health_check_is_reachable_without_a_jwt(template: dict[str, Any]) -> None:
    # Given the HTTP API and the router's routes
    api_auth = template["Resources"]["HttpApi"]["Properties"]["Auth"]
    events = template["Resources"]["RouterFunction"]["Properties"]["Events"]

    # Then the JWT authorizer is the default and only GET /healthz opts out of it
    assert api_auth["DefaultAuthorizer"] == "JwtAuthorizer"
    assert "JwtConfiguration" in api_auth["Authorizers"]["JwtAuthorizer"]
    public = [
        (e["Properties"]["Method"], e["Properties"]["Path"])
        for e in events.values()
        if e["Properties"].get("Auth", {}).get("Authorizer") == "NONE"
    ]
    assert public == [("GET", "/healthz")]


def test_local_table_names_match_the_settings_defaults() -> None:
    # Given the application's settings defaults (the names the code uses when nothing is set)
    defaults = Settings.model_fields

    # When the template is resolved for the local stack name
    resources = local_resources(TEMPLATE, stack_name="csagent-local")

    # Then the checkpoints and sessions tables carry exactly those names
    assert resources.table("CheckpointsTable").table_name == defaults["checkpoints_table"].default
    assert resources.table("SessionsTable").table_name == defaults["sessions_table"].default


def test_every_physical_name_is_derived_from_the_stack_name() -> None:
    # Given the template resolved for two different stacks
    first = local_resources(TEMPLATE, stack_name="csagent-a").names()
    second = local_resources(TEMPLATE, stack_name="csagent-b").names()

    # Then every table, bucket and queue name is prefixed by its stack and none collide
    assert all(name.startswith("csagent-a-") for name in first.values())
    assert all(name.startswith("csagent-b-") for name in second.values())
    assert set(first.values()).isdisjoint(second.values())


def test_router_environment_points_at_template_resources(template: dict[str, Any]) -> None:
    # Given the router's environment
    env = template["Resources"]["RouterFunction"]["Properties"]["Environment"]["Variables"]

    # Then the names the application reads are references to resources of this template
    assert env["CHECKPOINTS_TABLE"] == {"Ref": "CheckpointsTable"}
    assert env["SESSIONS_TABLE"] == {"Ref": "SessionsTable"}
    assert env["CHECKPOINT_BUCKET"] == {"Ref": "CheckpointBucket"}
    assert env["NEO4J_URI"] == {"Ref": "Neo4jUri"}
    assert env["NEO4J_SECRET_ARN"] == {"Ref": "Neo4jSecretArn"}


def test_samconfig_deploys_each_stage_to_its_own_stack() -> None:
    # Given samconfig.toml
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))

    # Then dev and prod deploy their own stage to their own stack, with IAM capability
    assert config["version"] == 0.1
    for env, stack in (("default", "csagent-dev"), ("dev", "csagent-dev"), ("prod", "csagent-prod")):
        deploy = config[env]["deploy"]["parameters"]
        assert config[env]["global"]["parameters"]["stack_name"] == stack
        assert deploy["capabilities"] == "CAPABILITY_IAM"
        assert f'Stage="{stack.removeprefix("csagent-")}"' in deploy["parameter_overrides"]


def _alarms(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [res["Properties"] for res in _resources_of_type(template, "AWS::CloudWatch::Alarm").values()]


def _alarmed(template: dict[str, Any], namespace: str, metric: str) -> set[str]:
    """Logical ids whose metric `namespace`/`metric` some alarm watches (through Ref or GetAtt)."""
    return {
        dim["Value"]["Ref"] if "Ref" in dim["Value"] else dim["Value"]["Fn::GetAtt"][0]
        for alarm in _alarms(template)
        if alarm["Namespace"] == namespace and alarm["MetricName"] == metric
        for dim in alarm["Dimensions"]
    }


@pytest.mark.parametrize("metric", ["Errors", "Throttles"])
def test_every_function_has_an_errors_and_a_throttles_alarm(template: dict[str, Any], metric: str) -> None:
    # Given every function of the template
    functions = set(_resources_of_type(template, "AWS::Serverless::Function"))

    # Then an alarm watches the metric of each one
    assert functions
    assert functions - _alarmed(template, "AWS/Lambda", metric) == set()


def test_the_router_has_a_p99_latency_alarm_on_a_parameter(template: dict[str, Any]) -> None:
    # Given the alarms on the router's duration
    latency = [
        alarm for alarm in _alarms(template)
        if alarm["MetricName"] == "Duration" and {"Ref": "RouterFunction"} in
        [dim["Value"] for dim in alarm["Dimensions"]]
    ]

    # Then one alarms on its p99 above the RouterLatencyP99ThresholdMs parameter (10 s by default)
    assert [(a["ExtendedStatistic"], a["Threshold"]) for a in latency] == [
        ("p99", {"Ref": "RouterLatencyP99ThresholdMs"})
    ]
    assert template["Parameters"]["RouterLatencyP99ThresholdMs"]["Default"] == 10000


def test_every_dead_letter_queue_has_a_depth_alarm(template: dict[str, Any]) -> None:
    # Given every queue whose name ends in -dlq
    names = local_resources(TEMPLATE).names()
    dlqs = {logical_id for logical_id, physical in names.items() if physical.endswith("-dlq")}

    # Then an alarm fires on the first visible message of each
    assert dlqs >= {"HandoffDLQ", "WebhookDLQ"}
    assert dlqs - _alarmed(template, "AWS/SQS", "ApproximateNumberOfMessagesVisible") == set()


@pytest.mark.parametrize("metric", ["ExecutionsFailed", "ExecutionsTimedOut"])
def test_the_dispatch_state_machine_alarms_on_failed_and_timed_out_waves(
    template: dict[str, Any], metric: str
) -> None:
    # Given the alarms on the Step Functions metric
    watched = _alarmed(template, "AWS/States", metric)

    # Then the dispatch state machine is among them
    assert watched == {"DispatchStateMachine"}


def test_alarm_actions_are_the_topic_parameter_or_nothing(template: dict[str, Any]) -> None:
    # Given every alarm and the condition on the topic parameter
    alarms = _alarms(template)
    notify = {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}

    # Then each notifies the topic exactly when one is given (no topic by default)
    assert alarms
    assert [a.get("AlarmActions") for a in alarms] == [notify] * len(alarms)
    assert template["Parameters"]["AlarmTopicArn"]["Default"] == ""


def test_no_bedrock_statement_has_a_wildcard_resource(template: dict[str, Any]) -> None:
    # Given every Allow statement with a Bedrock action
    bedrock = [
        (owner, statement) for owner, statement in _allow_statements(template)
        if any(str(action).startswith("bedrock:") for action in
               (statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]))
    ]

    # Then each names foundation-model ARNs built from BedrockModelIds, never a "*"
    assert {owner for owner, _ in bedrock} == {"RouterFunction", "StreamFunction", "Text2CypherFunction",
                                               "WorkerFunction"}
    for _, statement in bedrock:
        assert "*" not in str(statement["Resource"])
        assert str(statement["Resource"]).count("foundation-model/${Id}") == 4
        assert "BedrockModelIds" in str(statement["Resource"])


def test_the_default_bedrock_model_is_one_placeholder_that_the_default_models_never_call(
        template: dict[str, Any]) -> None:
    # Given the defaults of BedrockModelIds and of the model the functions use
    default = template["Parameters"]["BedrockModelIds"]["Default"]

    # Then the permission names one foundation model, and by default no function calls Bedrock
    # (the local tier answers; image reading is Tesseract)
    assert len(default.split(",")) == 1 and "*" not in default
    assert template["Parameters"]["ChatModel"]["Default"] == "local"
    assert Settings.model_fields["chat_model"].default == "local"
    assert Settings.model_fields["image_reader"].default == "tesseract"


def test_vpc_config_is_conditional_on_has_vpc(template: dict[str, Any]) -> None:
    # Given the functions that reach Neo4j or a model endpoint, and the webhook (SQS only)
    functions = _resources_of_type(template, "AWS::Serverless::Function")
    vpc = {name: res["Properties"].get("VpcConfig") for name, res in functions.items()}
    expected = {"Fn::If": [
        "HasVpc",
        {"SubnetIds": {"Ref": "VpcSubnetIds"}, "SecurityGroupIds": {"Ref": "VpcSecurityGroupIds"}},
        {"Ref": "AWS::NoValue"},
    ]}

    # Then each of those joins the VPC only when subnets are given; the webhook never does
    in_vpc = {name for name, config in vpc.items() if config == expected}
    assert in_vpc == set(functions) - {"WebhookFunction"}
    assert vpc["WebhookFunction"] is None
    assert "VpcConfig" not in template["Globals"]["Function"]
    assert template["Conditions"]["HasVpc"] == {"Fn::Not": [{"Fn::Equals": [
        {"Fn::Join": ["", {"Ref": "VpcSubnetIds"}]}, ""]}]}
    assert template["Parameters"]["VpcSubnetIds"]["Default"] == ""


# ----------------------------------------------------------------------------------------------
# The stream function: the router's turn as server-sent events on a Function URL
# ----------------------------------------------------------------------------------------------
STREAM_OWN_VARIABLES = {"POWERTOOLS_SERVICE_NAME", "AWS_LAMBDA_EXEC_WRAPPER", "AWS_LWA_INVOKE_MODE",
                        "JWT_ISSUER", "JWT_AUDIENCE"}


def test_the_stream_function_streams_through_the_lambda_web_adapter(template: dict[str, Any]) -> None:
    # Given the stream function
    props = template["Resources"]["StreamFunction"]["Properties"]
    env = props["Environment"]["Variables"]

    # Then its Function URL streams, the adapter's wrapper starts run.sh, and the adapter streams too
    assert props["FunctionUrlConfig"]["InvokeMode"] == "RESPONSE_STREAM"
    assert props["Handler"] == "run.sh"
    assert env["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream"
    # And the adapter layer is AWS's arm64 one, its version a parameter
    [layer] = props["Layers"]
    assert layer == {"Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:753240598075:layer:"
                                "LambdaAdapterLayerArm64:${LambdaWebAdapterLayerVersion}"}
    assert template["Parameters"]["LambdaWebAdapterLayerVersion"]["Type"] == "Number"


def test_the_chat_on_another_origin_can_read_a_429s_wait(template: dict[str, Any]) -> None:
    # Given the stream Function URL's CORS (the chat is served from WebUrl, another origin)
    cors = template["Resources"]["StreamFunction"]["Properties"]["FunctionUrlConfig"]["Cors"]

    # Then a browser lets the page read Retry-After (not a CORS-safelisted response header)
    assert "retry-after" in [h.lower() for h in cors["ExposeHeaders"]]
    assert {"authorization", "content-type"} <= {h.lower() for h in cors["AllowHeaders"]}


def test_run_sh_starts_the_stream_app_where_the_adapter_looks_for_it() -> None:
    # Given the stream function's start script
    script = ROOT / "functions" / "stream" / "run.sh"

    # Then Lambda can execute it, and it runs uvicorn with app:app on the adapter's default port
    text = script.read_text(encoding="utf-8")
    assert script.stat().st_mode & 0o111, "run.sh must be executable (git keeps the mode)"
    assert text.startswith("#!/bin/bash")
    assert "exec python -m uvicorn" in text and "--port 8080" in text and text.rstrip().endswith("app:app")


def test_a_function_url_without_iam_auth_verifies_callers_in_code(template: dict[str, Any]) -> None:
    # Given every function with a Function URL
    urls = {name: res["Properties"]["FunctionUrlConfig"]
            for name, res in _resources_of_type(template, "AWS::Serverless::Function").items()
            if "FunctionUrlConfig" in res["Properties"]}
    stream_env = template["Resources"]["StreamFunction"]["Properties"]["Environment"]["Variables"]
    authorizer = template["Resources"]["HttpApi"]["Properties"]["Auth"]["Authorizers"]["JwtAuthorizer"]

    # Then the open ones are exactly the webhook (platform signatures) and the stream function,
    # which verifies the very tokens the HTTP API's authorizer accepts
    assert {name for name, config in urls.items() if config["AuthType"] == "NONE"} == {
        "WebhookFunction", "StreamFunction"}
    assert stream_env["JWT_ISSUER"] == authorizer["JwtConfiguration"]["issuer"] == {"Ref": "JwtIssuer"}
    assert stream_env["JWT_AUDIENCE"] == {"Fn::Join": [",", authorizer["JwtConfiguration"]["audience"]]}


def test_the_stream_function_runs_the_routers_turn_with_the_routers_rights(template: dict[str, Any]) -> None:
    # Given the router and the stream function
    router = template["Resources"]["RouterFunction"]["Properties"]
    stream = template["Resources"]["StreamFunction"]["Properties"]

    # Then the stream function has the router's configuration and policies, and nothing more
    own = {k: v for k, v in stream["Environment"]["Variables"].items() if k not in STREAM_OWN_VARIABLES}
    router_env = router["Environment"]["Variables"]
    assert own == {k: v for k, v in router_env.items() if k != "POWERTOOLS_SERVICE_NAME"}
    assert _strip_sids(stream["Policies"]) == _strip_sids(router["Policies"])


def _strip_sids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_sids(v) for k, v in value.items() if k != "Sid"}
    if isinstance(value, list):
        return [_strip_sids(v) for v in value]
    return value


_READS_ENTRY_POINTS = """
import sys
read = []
sys.addaudithook(lambda event, args: read.append(str(args[0])) if event == "open" else None)
from pydantic import BaseModel
class Reply(BaseModel):
    text: str
print(sum(name.endswith("entry_points.txt") for name in read))
"""


def test_the_functions_environment_spares_cold_starts_pydantics_plugin_scan(template: dict[str, Any]) -> None:
    # Given a fresh process with the switch every function gets from the Globals (and `make` exports)
    switch = template["Globals"]["Function"]["Environment"]["Variables"]["PYDANTIC_DISABLE_PLUGINS"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"export PYDANTIC_DISABLE_PLUGINS := {switch}" in makefile
    env = {"PATH": "/usr/bin:/bin", "PYDANTIC_DISABLE_PLUGINS": switch}

    # When it builds its first pydantic model
    done = subprocess.run([sys.executable, "-c", _READS_ENTRY_POINTS], env=env, capture_output=True,
                          text=True, check=True, timeout=60)

    # Then no installed distribution's entry points were read
    assert done.stdout.strip() == "0"
