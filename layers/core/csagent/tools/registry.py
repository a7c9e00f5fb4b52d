"""Which function serves which tool name. Locally the router calls these in-process; in AWS
each is also a tool Lambda (`functions/tools/<tool>/app.py`) behind Step Functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from csagent.domain.models import Task, ToolResult
    from csagent.tools.context import ToolContext

ToolFn = Callable[["Task", "ToolContext"], "ToolResult"]


def _predefined_cypher(task: Task, ctx: ToolContext) -> ToolResult:
    from csagent.tools.cypher_catalogue import run

    return run(task, ctx)


def _knowledge_search(task: Task, ctx: ToolContext) -> ToolResult:
    from csagent.tools.knowledge_search import run

    return run(task, ctx)


def _customer_actions(task: Task, ctx: ToolContext) -> ToolResult:
    from csagent.tools.customer_actions import run

    return run(task, ctx)


def _text2cypher(task: Task, ctx: ToolContext) -> ToolResult:
    from csagent.tools.text2cypher import run

    return run(task, ctx)


def default_tools() -> dict[str, ToolFn]:
    """Tool modules are imported on first use, not when the registry is built."""
    return {"predefined_cypher": _predefined_cypher, "knowledge_search": _knowledge_search,
            "customer_actions": _customer_actions, "text2cypher": _text2cypher}
