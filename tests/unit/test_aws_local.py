"""The local AWS resources are built from `template.yaml`, in `moto.mock_aws` and on a moto server.

The same `devstack.template` functions serve both, so what the tests run against is what the
template deploys.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from devstack import aws
from devstack.template import LocalResources, create_resources, load_template, local_resources

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
REGION = "us-east-1"


def _dummy_session() -> boto3.session.Session:
    return boto3.session.Session(
        region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
    )


@pytest.fixture(scope="module")
def resources() -> LocalResources:
    return local_resources(TEMPLATE, stack_name="csagent-local")


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Iterator[boto3.session.Session]:
    """A boto3 session inside `mock_aws`; endpoint overrides from the shell would bypass moto."""
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL") or v.startswith("AWS_PROFILE")]:
        monkeypatch.delenv(var)
    with mock_aws():
        yield _dummy_session()


@pytest.fixture
def provisioned(session: boto3.session.Session, resources: LocalResources) -> boto3.session.Session:
    create_resources(session, resources)
    return session


def test_create_resources_builds_every_table_with_its_template_key_schema(
    provisioned: boto3.session.Session, resources: LocalResources
) -> None:
    # Given the resources created from the template
    dynamodb = provisioned.client("dynamodb")

    # When the tables are described
    described = {
        t.table_name: dynamodb.describe_table(TableName=t.table_name)["Table"] for t in resources.tables
    }

    # Then every template table exists, with the template's keys and indexes
    assert set(dynamodb.list_tables()["TableNames"]) == {t.table_name for t in resources.tables}
    for table in resources.tables:
        actual = described[table.table_name]
        assert actual["KeySchema"] == list(table.key_schema)
        assert {i["IndexName"] for i in actual.get("GlobalSecondaryIndexes", [])} == {
            i["IndexName"] for i in table.global_secondary_indexes
        }


def test_create_resources_builds_every_bucket(
    provisioned: boto3.session.Session, resources: LocalResources
) -> None:
    # Given the resources created from the template
    s3 = provisioned.client("s3")

    # When the buckets are listed
    names = {b["Name"] for b in s3.list_buckets()["Buckets"]}

    # Then the checkpoint, knowledge and web-page buckets exist under their stack-derived names
    assert names == {
        "csagent-local-checkpoints-123456789012-us-east-1",
        "csagent-local-knowledge-123456789012-us-east-1",
        "csagent-local-web-123456789012-us-east-1",
    }
    assert {b.bucket_name for b in resources.buckets} == names


def test_create_resources_builds_every_queue_with_its_dead_letter_queue(
    provisioned: boto3.session.Session, resources: LocalResources
) -> None:
    # Given the resources created from the template
    sqs = provisioned.client("sqs")

    # When the handoff queue's redrive policy is read
    url = sqs.get_queue_url(QueueName="csagent-local-handoffs")["QueueUrl"]
    redrive = json.loads(
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"][
            "RedrivePolicy"
        ]
    )

    # Then all four queues exist and failed handoffs land in the handoff DLQ
    listed = {u.rsplit("/", 1)[-1] for u in sqs.list_queues()["QueueUrls"]}
    assert (
        listed
        == {q.queue_name for q in resources.queues}
        == {
            "csagent-local-handoffs",
            "csagent-local-handoffs-dlq",
            "csagent-local-webhooks",
            "csagent-local-webhooks-dlq",
        }
    )
    assert redrive["deadLetterTargetArn"] == "arn:aws:sqs:us-east-1:123456789012:csagent-local-handoffs-dlq"
    assert int(redrive["maxReceiveCount"]) == 5


def test_create_resources_is_idempotent(session: boto3.session.Session, resources: LocalResources) -> None:
    # Given a stack that is already provisioned
    create_resources(session, resources)

    # When it is provisioned again
    create_resources(session, resources)

    # Then nothing fails and nothing is duplicated
    assert len(session.client("dynamodb").list_tables()["TableNames"]) == len(resources.tables)
    assert len(session.client("s3").list_buckets()["Buckets"]) == len(resources.buckets)
    assert len(session.client("sqs").list_queues()["QueueUrls"]) == len(resources.queues)


def test_checkpoints_table_expires_items_on_ttl(provisioned: boto3.session.Session) -> None:
    # Given the resources created from the template
    dynamodb = provisioned.client("dynamodb")

    # When the checkpoints table's time-to-live is described
    ttl = dynamodb.describe_time_to_live(TableName="csagent-local-checkpoints")["TimeToLiveDescription"]

    # Then DynamoDB expires checkpoints on their "ttl" attribute
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}


def test_checkpoint_saver_round_trips_on_the_template_table(
    provisioned: boto3.session.Session, resources: LocalResources
) -> None:
    # Given the real DynamoDB checkpoint saver on the template's table and bucket, with the
    # template's default retention
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph_checkpoint_aws import DynamoDBSaver

    template = load_template(TEMPLATE)
    retention = template["Parameters"]["CheckpointRetention"]["Default"]
    ttl_seconds = int(template["Mappings"]["CheckpointRetention"][retention]["Seconds"])
    saver = DynamoDBSaver(
        table_name=resources.table("CheckpointsTable").table_name,
        session=provisioned,
        region_name=REGION,
        ttl_seconds=ttl_seconds,
        s3_offload_config={"bucket_name": resources.bucket("CheckpointBucket").bucket_name},
    )
    config: dict[str, Any] = {"configurable": {"thread_id": "s-demo-1", "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()

    # When a checkpoint is written and read back
    saved = saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
    loaded = saver.get_tuple(saved)

    # Then it comes back intact
    assert loaded is not None
    assert loaded.checkpoint["id"] == checkpoint["id"]


def test_checkpoint_saver_finds_the_template_lifecycle_rule(
    provisioned: boto3.session.Session, resources: LocalResources
) -> None:
    # Given the checkpoint bucket created from the template
    from langgraph_checkpoint_aws import DynamoDBSaver

    bucket = resources.bucket("CheckpointBucket").bucket_name
    s3 = provisioned.client("s3")
    before = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]

    # When the saver starts with the template's default retention (7 days)
    DynamoDBSaver(
        table_name=resources.table("CheckpointsTable").table_name,
        session=provisioned,
        region_name=REGION,
        ttl_seconds=7 * 24 * 3600,
        s3_offload_config={"bucket_name": bucket},
    )

    # Then it finds its expiry rule already declared and does not need to write one
    # (so the router role needs no s3:PutLifecycleConfiguration)
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"] == before
    assert "root-ttl-expiration-7d" in {rule["ID"] for rule in before}


# ---------------------------------------------------------------------------------------------
# A real moto server, as the local stack runs it
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto server on a free port, Step Functions execution enabled, provisioned; stopped after."""
    port = aws.free_port()
    proc = aws.start_moto(port, tmp_path_factory.mktemp("moto") / "moto.log")
    try:
        aws.wait_moto(port, 30.0, proc)
        endpoint = aws.endpoint_for(port)
        aws.enable_stepfunctions_execution(endpoint)
        aws.provision(endpoint, TEMPLATE, "csagent-local")
        yield endpoint
    finally:
        aws.stop_moto(proc)


@pytest.mark.timeout(60)
def test_provisioned_moto_server_has_the_checkpoints_table(moto_endpoint: str) -> None:
    # Given a moto server provisioned from the template
    dynamodb = _dummy_session().client("dynamodb", endpoint_url=moto_endpoint)

    # When the checkpoints table is described through the endpoint
    table = dynamodb.describe_table(TableName="csagent-local-checkpoints")["Table"]

    # Then it exists with the template's keys
    assert table["TableStatus"] == "ACTIVE"
    assert [k["AttributeName"] for k in table["KeySchema"]] == ["PK", "SK"]


@pytest.mark.timeout(60)
def test_moto_server_executes_state_machines(moto_endpoint: str) -> None:
    # Given a trivial Pass state machine on the moto server
    sfn = _dummy_session().client("stepfunctions", endpoint_url=moto_endpoint)
    definition = {
        "StartAt": "Echo",
        "States": {"Echo": {"Type": "Pass", "Result": {"ok": True}, "End": True}},
    }
    machine = sfn.create_state_machine(
        name="probe-pass",
        definition=json.dumps(definition),
        roleArn="arn:aws:iam::123456789012:role/probe",
    )["stateMachineArn"]

    # When it is executed
    execution = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    deadline = time.monotonic() + 20
    described = sfn.describe_execution(executionArn=execution)
    while described["status"] == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.1)
        described = sfn.describe_execution(executionArn=execution)

    # Then it really ran (moto without the config leaves executions RUNNING with no output)
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"]) == {"ok": True}
