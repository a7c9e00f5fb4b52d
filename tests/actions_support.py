"""Driving customer actions through the tool entry (`customer_actions.run`) against the local
stack, for the integration tests of the actions (`test_customer_actions.py`, the reference
oracle): the tool's settings with the idempotency table from `template.yaml` on the moto
server, propose and execute helpers, and a runner without the DynamoDB guard.

Confirmation ids are unique per call, so records the moto server keeps from an earlier run
never replay into this one.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import boto3

from csagent.domain.models import Task, TaskStatus, ToolResult
from csagent.domain.tool_data import ActionProposedData
from csagent.tools import customer_actions as tool
from csagent.tools.context import ToolContext
from devstack.template import create_resources, local_resources

TEMPLATE = Path(__file__).resolve().parents[1] / "template.yaml"
STORE_TODAY = date(2024, 7, 1)


def action_settings(moto_endpoint: str, store_today: date = STORE_TODAY) -> tool.ActionSettings:
    """The tool's settings for the local stack, with the idempotency table created from the
    template on the moto server if it is not there yet."""
    resources = local_resources(TEMPLATE, stack_name="csagent-local")
    table = resources.table("IdempotencyTable")
    session = boto3.session.Session(region_name="us-east-1")
    create_resources(session, dataclasses.replace(resources, tables=(table,), buckets=(), queues=()),
                     endpoint_url=moto_endpoint)
    return tool.ActionSettings(idempotency_table=table.table_name, region="us-east-1",
                               endpoint_url=moto_endpoint, store_today=store_today)


class DirectRunner:
    """No DynamoDB record at all: only the Neo4j guard stands between a replay and a repeat."""

    def run_once(self, key: str, operation: Any) -> dict[str, Any]:
        result: dict[str, Any] = operation()
        return result


def confirmation() -> str:
    return f"it-{uuid.uuid4().hex}:2"


def propose(graph: Any, settings: tool.ActionSettings, customer_id: str, action: str,
            args: dict[str, Any], confirmation_id: str | None = None) -> ToolResult:
    task = Task(task_id="t1", task_type=action, tool=tool.TOOL_NAME,
                args={"action": action, "args": args, "phase": "propose",
                      "confirmation_id": confirmation_id or confirmation()})
    return tool.run(task, ToolContext(graph=graph, customer_id=customer_id), settings=settings)


def execute(graph: Any, settings: tool.ActionSettings, customer_id: str, proposal: dict[str, Any],
            approved_by: str | None = None, **kwargs: Any) -> ToolResult:
    args: dict[str, Any] = {"phase": "execute", "proposal": proposal}
    if approved_by:
        args["approved_by"] = approved_by
    task = Task(task_id="t2", task_type=str(proposal["action"]), tool=tool.TOOL_NAME, args=args)
    return tool.run(task, ToolContext(graph=graph, customer_id=customer_id), settings=settings, **kwargs)


def proposed(result: ToolResult) -> dict[str, Any]:
    """The proposal of a successful propose phase, as JSON (fails the test with the error otherwise)."""
    assert result.status is TaskStatus.SUCCESS, result.error
    assert isinstance(result.data, ActionProposedData)
    return result.data.proposal.model_dump(mode="json")
