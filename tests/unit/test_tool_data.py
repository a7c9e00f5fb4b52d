"""Typed tool results: each tool's data is validated into the model of its kind in one place
(`csagent.domain.tool_data.result_data`), however the result is made, and its JSON is unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from csagent.adapters.stepfunctions_dispatch import results_from_output
from csagent.domain.actions import ActionProposal
from csagent.domain.models import Task, TaskResult, TaskStatus, ToolResult
from csagent.domain.task_args import CustomerActionArgs, PredefinedCypherArgs, ProductRef
from csagent.domain.tool_data import (
    ActionDoneData,
    ActionProposedData,
    CatalogueData,
    GeneratedQueryData,
    KnowledgeData,
    OtherData,
    result_data,
)
from csagent.graph.state import task_results
from csagent.tools.events import ToolEvent

ORDER = "#W2611340"


def _task(tool: str, **args: Any) -> Task:
    return Task(task_id="t1", task_type="order_status", tool=tool, args=args)


PROPOSAL = {"action": "cancel_order", "args": {"order_id": ORDER, "reason": "no longer needed"},
            "order_id": ORDER, "summary": [f"Cancel order {ORDER}."]}


def test_each_tools_output_is_read_into_the_model_of_its_kind() -> None:
    # Given the raw output of each tool
    catalogue = ToolResult.ok(_task("predefined_cypher", template_id="order_overview"), {
        "template_id": "order_overview", "row": {"order_id": ORDER, "items": []}})
    knowledge = ToolResult.ok(_task("knowledge_search", question="returns?"), {
        "answer": "Within 30 days.", "citations": [{"doc_id": "d-1", "title": "Returns"}], "mode": "hybrid"})
    proposed = ToolResult.ok(_task("customer_actions", action="cancel_order"), {
        "phase": "propose", "action": "cancel_order", "proposal": PROPOSAL, "summary": PROPOSAL["summary"]})
    done = ToolResult.ok(_task("customer_actions", action="cancel_order"), {
        "phase": "execute", "message": "Cancelled."})
    generated = ToolResult.ok(_task("text2cypher", question="how many?"), {
        "question": "how many?", "cypher": "MATCH (p) RETURN count(p) AS n", "rows": [{"n": 3}]})

    # Then each carries its model, read by attribute
    assert isinstance(catalogue.data, CatalogueData)
    assert catalogue.data.row == {"order_id": ORDER, "items": []}
    assert isinstance(knowledge.data, KnowledgeData) and knowledge.data.citations[0].title == "Returns"
    assert isinstance(proposed.data, ActionProposedData)
    assert isinstance(proposed.data.proposal, ActionProposal) and proposed.data.proposal.order_id == ORDER
    assert isinstance(done.data, ActionDoneData) and done.data.message == "Cancelled."
    assert isinstance(generated.data, GeneratedQueryData) and generated.data.all_rows == [{"n": 3}]


def test_a_malformed_tool_result_is_refused_where_it_is_made_naming_the_field_not_the_value() -> None:
    # Given a catalogue result whose rows are not a list, and a proposal that is no proposal
    task = _task("predefined_cypher", template_id="customer_orders")

    # When they are made into results, then each is refused with the field named
    with pytest.raises(ValidationError) as rows:
        ToolResult.ok(task, {"template_id": "customer_orders", "rows": "james.li@example.com"})
    assert "the data of a predefined_cypher result is not CatalogueData (rows)" in str(rows.value)
    assert "james.li@example.com" not in str(rows.value)
    with pytest.raises(ValidationError, match=r"not ActionProposedData \(proposal.action, proposal.args\)"):
        ToolResult.ok(_task("customer_actions"), {"phase": "propose", "action": "cancel_order",
                                                  "proposal": {"order_id": ORDER}})


def test_data_of_another_tools_kind_is_refused_and_a_tool_no_registry_knows_keeps_its_own() -> None:
    # Given an action's data on a catalogue result
    refused = "a predefined_cypher result carries CatalogueData, GeneratedQueryData, not ActionDoneData"
    with pytest.raises(ValueError, match=refused):
        result_data("predefined_cypher", {"phase": "execute", "message": "done"})
    # Given a tool no registry knows: its data as given
    other = result_data("weather", {"forecast": "rain"})
    assert isinstance(other, OtherData) and other.model_dump() == {"forecast": "rain"}


def test_a_cheaper_paths_data_is_read_on_the_result_of_the_task_it_healed() -> None:
    # Given a text2cypher task healed by the keyword search: its slot keeps the task's tool
    slot = {"task_id": "t1", "task_type": "product_info", "tool": "text2cypher", "status": "fallback",
            "data": {"answer": "It is waterproof.", "citations": [], "mode": "keyword"},
            "error": None, "latency_ms": 3.0, "attempts": 2,
            "heal": [{"action": "degrade", "reason": "no query", "delay_s": 0.0}]}

    # When the state's results are read
    read = task_results({"results": {"t1": slot}})["t1"]

    # Then the data is the search's, and healing's record is typed too
    assert isinstance(read, TaskResult) and isinstance(read.data, KnowledgeData)
    assert read.status is TaskStatus.FALLBACK and read.attempts == 2 and read.heal[0].action == "degrade"


def test_the_json_of_a_result_is_the_tools_output_as_given() -> None:
    # Given a tool's raw output, with a key no model declares
    raw = {"template_id": "customer_orders", "rows": [{"order_id": ORDER, "status": "pending"}],
           "row_count": 1, "truncated": False, "params": {}, "diagnostics": {"ms": 3}}
    result = ToolResult.ok(_task("predefined_cypher", template_id="customer_orders"), raw)

    # Then its JSON carries exactly those keys and values (no defaults added), and reads back the same
    dumped = result.model_dump(mode="json")
    assert dumped["data"] == raw
    assert ToolResult.model_validate_json(json.dumps(dumped)) == result


def test_a_step_functions_output_and_a_tool_events_dependencies_are_validated_at_the_same_point() -> None:
    # Given a tool Lambda answering a result whose data is malformed, beside a good one
    tasks = [_task("predefined_cypher", template_id="order_overview"),
             Task(task_id="t2", task_type="policy", tool="knowledge_search", args={"question": "returns?"})]
    good = ToolResult.ok(tasks[1], {"answer": "Within 30 days."}).model_dump(mode="json")
    bad = {"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher", "status": "success",
           "data": {"template_id": "order_overview", "row": ["not", "a", "row"]}}

    # When the execution output is read
    first, second = results_from_output(tasks, json.dumps([bad, good]), 5.0)

    # Then the malformed one is a failed result of its own, the other is typed
    assert first.status is TaskStatus.FAILED and first.data is None
    assert isinstance(second.data, KnowledgeData) and second.data.answer == "Within 30 days."
    # And a tool event's dependency is read into its model too
    event = ToolEvent.model_validate({"task": tasks[1].model_dump(mode="json"), "session_id": "s-1",
                                      "dependencies": {"t2": good}})
    assert isinstance(event.dependencies["t2"].data, KnowledgeData)


def test_the_proposal_to_execute_and_the_grounded_product_are_typed_arguments() -> None:
    # Given an execution's arguments and a catalogue question's
    execute = CustomerActionArgs.model_validate({"action": "cancel_order", "phase": "execute",
                                                 "proposal": PROPOSAL, "confirmation_id": "s:1"})
    question = PredefinedCypherArgs.model_validate({"question": "is it waterproof?", "product": {
        "product_id": "1234567890", "name": "Hiking Boots", "options": {"color": "black"},
        "surface": "boots"}})

    # Then they are models, serialised as given
    assert isinstance(execute.proposal, ActionProposal) and execute.proposal.order_id == ORDER
    assert isinstance(question.product, ProductRef) and question.product.options == {"color": "black"}
    assert question.model_dump()["product"] == {"product_id": "1234567890", "name": "Hiking Boots",
                                                "options": {"color": "black"}, "surface": "boots"}
    # And one that is not a proposal, or a product without its id, is refused when the task is built
    with pytest.raises(ValidationError, match="proposal.action"):
        CustomerActionArgs.model_validate({"action": "cancel_order", "phase": "execute",
                                           "proposal": {"order_id": ORDER}})
    with pytest.raises(ValidationError, match="product.product_id"):
        PredefinedCypherArgs.model_validate({"question": "q", "product": {"name": "Hiking Boots"}})


# -- a catalogue template's row, where its columns have a model ----------------------------------
OVERVIEW_ROW = {
    "order_id": ORDER, "order_status": "processed", "created_at": "2024-05-02T10:00:00", "total": 54.04,
    "shipments": [{"tracking_id": 264018395572, "carrier": "UPS", "status": "in_transit",
                   "shipped_at": "2024-05-03T08:00:00", "estimated_delivery": "2024-05-07",
                   "delivered_at": None}],
    "address": {"address1": "18 Willow Bend", "address2": None, "city": "Austin", "state": "TX",
                "zip": "78701", "country": "USA"},
    "refunds": None,
    "items": [{"line_no": 1, "name": "Water Bottle", "product_id": 8310926033, "item_id": "7843064651",
               "price": 54.04, "option_text": "capacity: 750ml"}],
}


def test_an_order_overviews_row_is_read_as_its_model_and_its_json_stays_the_templates() -> None:
    # Given an order overview as the template's query returns it: ids the store keeps as numbers,
    # refunds it collected nothing into
    data = result_data("predefined_cypher", {"template_id": "order_overview", "row": OVERVIEW_ROW})
    assert isinstance(data, CatalogueData)
    # When its row is read
    overview = data.order_overview
    # Then its columns are typed, ids as their digits, the empty list as empty
    assert overview is not None
    assert (overview.order_id, overview.order_status, overview.total) == (ORDER, "processed", 54.04)
    assert [(s.tracking_id, s.carrier, s.delivered_at) for s in overview.shipments] == [
        ("264018395572", "UPS", None)]
    assert overview.address is not None and overview.address.city == "Austin"
    assert overview.refunds == []
    items = [(i.product_id, i.name, i.price) for i in overview.items]
    assert items == [("8310926033", "Water Bottle", 54.04)]
    # And the JSON the tool returns is the template's, as it was
    assert data.model_dump(mode="json") == {"template_id": "order_overview", "row": OVERVIEW_ROW}
    assert json.loads(ToolResult.ok(_task("predefined_cypher"), data).model_dump_json())["data"]["row"] \
        == OVERVIEW_ROW


def test_a_parcel_found_by_tracking_reads_as_an_order_overview_without_address_or_refunds() -> None:
    # Given the row of order_by_tracking: the order's columns without the address and the refunds
    row = {k: v for k, v in OVERVIEW_ROW.items() if k not in ("address", "refunds")}
    data = result_data("predefined_cypher", {"template_id": "order_by_tracking", "row": row})
    # When read / Then it is the same order at a glance, with no address and no refunds
    assert isinstance(data, CatalogueData) and data.order_overview is not None
    assert (data.order_overview.order_id, data.order_overview.address, data.order_overview.refunds) == (
        ORDER, None, [])


@pytest.mark.parametrize("raw", [
    {"template_id": "order_status", "row": {"order_id": ORDER, "status": "pending"}},
    {"template_id": "order_overview", "rows": []},
    {"rows": [OVERVIEW_ROW]},
], ids=["another-template", "no-row", "no-template"])
def test_only_an_order_overviews_row_is_read_as_one(raw: dict[str, Any]) -> None:
    data = result_data("predefined_cypher", raw)
    assert isinstance(data, CatalogueData) and data.order_overview is None


def test_an_order_overview_of_the_wrong_shape_is_refused_naming_the_column_not_its_value() -> None:
    # Given an order overview whose items are names, not the order's lines
    raw = {"template_id": "order_overview", "row": {**OVERVIEW_ROW, "items": ["Water Bottle"]}}
    # When its data is read / Then it is refused there, naming the column and not what the customer bought
    with pytest.raises(ValueError, match=r"not CatalogueData \(row\.items\.0\)") as refused:
        result_data("predefined_cypher", raw)
    assert "Water Bottle" not in str(refused.value)
