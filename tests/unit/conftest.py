"""Unit tests run with the network blocked: only loopback connections are allowed (moto's
in-process server and `mock_aws` need none at all). AWS_ENDPOINT_URL is removed so boto3
clients talk to `mock_aws`, never to the moto server of the local stack. `saver` is a checkpoint
saver, in memory and on DynamoDB, for tests that run the same turns on both."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
REGION = "us-east-1"
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in _LOOPBACK and not host.startswith("/"):
        raise OSError(f"network access is blocked in unit tests (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)


@pytest.fixture
def dynamodb_saver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The DynamoDB checkpoint saver (langgraph-checkpoint-aws) on the template's table and bucket,
    inside `mock_aws`."""
    import boto3
    from langgraph_checkpoint_aws import DynamoDBSaver
    from moto import mock_aws

    from devstack.template import create_resources, local_resources

    for var in [v for v in os.environ if v.startswith(("AWS_ENDPOINT_URL", "AWS_PROFILE"))]:
        monkeypatch.delenv(var)
    resources = local_resources(TEMPLATE, stack_name="csagent-local")
    with mock_aws():
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="testing",
                                        aws_secret_access_key="testing")
        create_resources(session, resources)
        bucket = resources.bucket("CheckpointBucket").bucket_name
        yield DynamoDBSaver(table_name=resources.table("CheckpointsTable").table_name, session=session,
                            region_name=REGION, ttl_seconds=3600, s3_offload_config={"bucket_name": bucket})


@pytest.fixture(params=["memory", "dynamodb"])
def saver(request: pytest.FixtureRequest) -> Any:
    """A checkpoint saver: in memory, then the DynamoDB one (`dynamodb_saver`)."""
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver() if request.param == "memory" else request.getfixturevalue("dynamodb_saver")
