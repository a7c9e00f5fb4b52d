"""A task's typed contract (csagent.domain.task_args): one argument model per tool, the planner's
notes beside them, the JSON the planner wrote kept, and tasks of the earlier shape (notes among
the arguments, as checkpoints written before the change hold them) read into this one."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.domain.task_args import (
    CustomerActionArgs,
    KnowledgeSearchArgs,
    OtherToolArgs,
    PredefinedCypherArgs,
    ProductsFrom,
    TaskNotes,
    Text2CypherArgs,
)
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.graph.state import planned_tasks
from csagent.tools.context import ToolContext
from csagent.tools.events import ToolEvent
from csagent.understanding import Understanding

ORDER = "#W1234567"

#: A complaint's two tasks as a checkpoint written before the change holds them: the planner's
#: notes (`supplementary`, `products_from`) inside `args`, no `notes`.
OLD_TASKS: list[dict[str, Any]] = [
    {"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher",
     "args": {"template_id": "order_overview", "params": {"order_id": ORDER}}, "depends_on": []},
    {"task_id": "t2", "task_type": "policy", "tool": "knowledge_search",
     "args": {"question": "the parcel never came", "supplementary": True,
              "products_from": {"task": "t1", "hint": "headphones"}}, "depends_on": ["t1"]},
]


@pytest.mark.parametrize(("tool", "model"), [
    ("predefined_cypher", PredefinedCypherArgs), ("knowledge_search", KnowledgeSearchArgs),
    ("text2cypher", Text2CypherArgs), ("customer_actions", CustomerActionArgs), ("teleporter", OtherToolArgs),
])
def test_a_tasks_arguments_are_its_tools_model(tool: str, model: type) -> None:
    # When a task is built from JSON arguments
    task = Task(task_id="t1", task_type="x", tool=tool, args={"question": "q"} if tool != "customer_actions"
                else {"action": "cancel_order"})
    # Then they are its tool's model
    assert type(task.args) is model


def test_the_json_of_a_task_is_the_one_the_planner_wrote() -> None:
    # Given a task built with some arguments and notes, the rest left to their defaults
    task = Task(task_id="t2", task_type="warranty", tool="knowledge_search", depends_on=("t1",),
                args=KnowledgeSearchArgs(question="warranty?", topic="warranty"),
                notes=TaskNotes(products_from=ProductsFrom(task="t1")))
    # When it is written as JSON (the state, the checkpoint, the tool Lambda's event)
    dumped = task.model_dump(mode="json")
    # Then only what was given is written, and it reads back as the same task
    assert dumped == {"task_id": "t2", "task_type": "warranty", "tool": "knowledge_search",
                      "args": {"question": "warranty?", "topic": "warranty"},
                      "notes": {"products_from": {"task": "t1"}}, "depends_on": ["t1"]}
    assert Task.model_validate(dumped) == task


def test_a_task_of_the_earlier_shape_has_its_notes_moved_out_of_its_arguments() -> None:
    # When a task written before the change is read
    old, lookup = Task.model_validate(OLD_TASKS[1]), Task.model_validate(OLD_TASKS[0])
    # Then the tool's arguments and the planner's notes are apart
    assert old.args == KnowledgeSearchArgs(question="the parcel never came")
    assert old.notes == TaskNotes(supplementary=True,
                                  products_from=ProductsFrom(task="t1", hint="headphones"))
    assert lookup.args.model_dump() == OLD_TASKS[0]["args"] and lookup.notes == TaskNotes()
    # And a tool Lambda given such a task by an older router reads it the same way
    event = ToolEvent.model_validate({"task": OLD_TASKS[1], "session_id": "s-1"})
    assert event.task == old


def test_arguments_of_the_wrong_shape_are_refused_naming_the_argument() -> None:
    # When a task's arguments are not its tool's (a count as text, an unknown mode, a number as the question)
    for args in ({"question": "q", "k": "5"}, {"question": "q", "mode": "semantic"}, {"question": 5}):
        with pytest.raises(ValidationError) as refused:
            Task(task_id="t1", task_type="policy", tool="knowledge_search", args=args)
        # Then the error names the argument
        assert all(error["loc"][0] == "args" for error in refused.value.errors())


def test_another_tools_arguments_are_read_as_the_running_tools_when_they_fit() -> None:
    # Given a knowledge search task handed to a tool reading text2cypher arguments
    task = Task(task_id="t1", task_type="policy", tool="knowledge_search", args={"question": "q"})
    # Then the question is read as that tool's; arguments that do not fit say so without values
    assert task.args_as(Text2CypherArgs) == Text2CypherArgs(question="q")
    with pytest.raises(ValueError, match=r"not CustomerActionArgs \(phase\)"):
        Task(task_id="t1", task_type="x", tool="teleporter", args={"phase": "approve"}).args_as(
            CustomerActionArgs)


def test_a_turn_checkpointed_before_the_change_resumes_with_its_notes_honoured() -> None:
    # Given a turn checkpointed before the change, after its wave ran (next: collect, then summarise):
    # the order was found and the supplementary policy search (its note inside `args`) found nothing
    graph = build_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "old"}}
    found = ToolResult.ok(Task.model_validate(OLD_TASKS[0]), {"template_id": "order_overview", "row": {
        "order_id": ORDER, "order_status": "processed", "shipments": [], "items": []}})
    missed = ToolResult.failed(Task.model_validate(OLD_TASKS[1]), ErrorType.NO_RESULTS, "nothing found")
    graph.update_state(config, {
        "session_id": "old", "customer_id": "cust_1", "text": f"my parcel {ORDER} never came", "lang": "en",
        "tasks": OLD_TASKS,
        "results": {"t1": found.model_dump(mode="json"), "t2": missed.model_dump(mode="json")},
    }, as_node="dispatch_wave")
    deps = GraphDeps(understand=lambda text, state: Understanding(route="general", intent="x",
                                                                  confidence=1.0),
                     tools={}, make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid))

    # When the turn resumes after the change
    state = graph.invoke(None, config, context=deps)

    # Then the old tasks are read with their notes: the supplementary miss is left unsaid
    assert [t.notes.supplementary for t in planned_tasks(state)] == [False, True]
    assert state["status"] == "answered"
    assert state["trace"]["unsaid_failures"] == ["t2"]
    assert ORDER in state["reply"]["text"]
