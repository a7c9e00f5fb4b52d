"""A catalogue template's rows are read as the template's row model (`csagent.domain.template_rows`)
once, when the result's data is validated; the JSON the result carries stays the template's rows as
the store returned them, so a checkpoint written before the models loads and answers the same. The
resumed turns run on the in-memory saver and on the DynamoDB saver (the `saver` fixture)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from csagent.domain.models import Task, ToolResult
from csagent.domain.template_rows import (
    ROW_MODELS,
    CategoryRow,
    OrderItemRow,
    PaymentMethodRow,
    VariantRow,
)
from csagent.domain.tool_data import CatalogueData, result_data
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.graph.state import task_results
from csagent.tools.context import ToolContext
from csagent.tools.cypher_catalogue import load_catalogue
from csagent.understanding import Understanding

ORDER = "#W2611340"
#: The lines of an order as the store may hold them: item and product ids kept as numbers, a line
#: whose options the query found none of.
ITEM_ROWS: list[dict[str, Any]] = [
    {"order_id": ORDER, "line_no": 1, "product_name": "Backpack", "product_id": 2524789262,
     "item_id": 6309044598, "price": 201.95, "options": {"color": "grey", "size": "large"}},
    {"order_id": ORDER, "line_no": 2, "product_name": "Pet Bed", "product_id": 2747247837,
     "item_id": 8941974610, "price": 193.22, "options": None},
]


def _task(**notes: Any) -> Task:
    return Task(task_id="t1", task_type="order_items", tool="predefined_cypher",
                args={"template_id": "order_items", "params": {"order_id": ORDER}}, notes=notes)


def test_every_templates_rows_have_a_model_declaring_its_columns() -> None:
    # Given the catalogue's templates
    catalogue = load_catalogue()
    # When each is looked up / Then it has a row model, and every column it returns is a field of it
    undeclared = {t.id: sorted(set(t.result.columns) - set(ROW_MODELS[t.id].model_fields))
                  for t in catalogue.templates if t.id in ROW_MODELS}
    assert [t.id for t in catalogue.templates if t.id not in ROW_MODELS] == []
    assert {k: v for k, v in undeclared.items() if v} == {}


def test_rows_are_read_as_the_templates_model_with_the_stores_numbers_as_digits() -> None:
    # Given the rows of an order's items as the store returned them
    data = result_data("predefined_cypher", {"template_id": "order_items", "rows": ITEM_ROWS})
    assert isinstance(data, CatalogueData)
    # When they are read as the template's model
    items = data.rows_as(OrderItemRow)
    # Then ids kept as numbers read as their digits, and options found nowhere as none
    assert [(i.product_id, i.item_id, i.price, i.options) for i in items] == [
        ("2524789262", "6309044598", 201.95, {"color": "grey", "size": "large"}),
        ("2747247837", "8941974610", 193.22, {})]
    # And as another template's model they are nothing
    assert data.rows_as(VariantRow) == []
    # And the JSON the result carries is the rows as the store returned them
    result = ToolResult.ok(_task(), data)
    assert json.loads(result.model_dump_json())["data"]["rows"] == ITEM_ROWS


def test_a_one_record_answer_is_read_as_its_row() -> None:
    # Given a one-record template's answer and a many-record one's
    one = result_data("predefined_cypher", {"template_id": "variant_price", "row": {
        "item_id": 6469567736, "price": 54.04, "product_name": "Water Bottle",
        "option_text": "capacity: 750ml", "available": True}})
    many = result_data("predefined_cypher", {"template_id": "categories", "rows": [
        {"category": "Footwear", "products": 3, "names": None}]})
    assert isinstance(one, CatalogueData) and isinstance(many, CatalogueData)
    # When read / Then the one row is its model, and a list the query collected nothing into is empty
    assert one.row_as(VariantRow) == VariantRow(item_id="6469567736", price=54.04,
                                                product_name="Water Bottle", option_text="capacity: 750ml",
                                                available=True)
    assert many.row_as(CategoryRow) is None
    assert [(c.category, c.products, c.names) for c in many.rows_as(CategoryRow)] == [("Footwear", 3, [])]


@pytest.mark.parametrize(("raw", "columns"), [
    ({"template_id": "payment_methods", "rows": [{"payment_method": "gift card", "balance": 10.0},
                                                 {"payment_method": "PayPal", "balance": "lots"}]},
     "rows.1.balance"),
    ({"template_id": "product_availability", "row": {"product_name": "Kettle", "in_stock": "perhaps",
                                                     "available_options": "color: red"}},
     "row.available_options, row.in_stock"),
], ids=["a-balance-in-words", "a-list-as-text"])
def test_rows_not_of_the_templates_model_are_refused_where_the_result_is_made(
        raw: dict[str, Any], columns: str) -> None:
    # Given rows whose columns are not what the template returns
    # When the result is made / Then it is refused, naming the columns and not their values
    with pytest.raises(ValidationError, match=rf"not CatalogueData \({columns}\)") as refused:
        ToolResult.ok(_task(), raw)
    assert "lots" not in str(refused.value) and "perhaps" not in str(refused.value)


def test_a_column_a_newer_template_adds_is_kept_as_given() -> None:
    # Given a payment method with a column this router's model does not declare
    row = {"payment_method": "gift card", "source": "gift_card", "balance": 10.0, "expires": "2025-01-01"}
    data = result_data("predefined_cypher", {"template_id": "gift_card_balance", "rows": [row]})
    assert isinstance(data, CatalogueData)
    # When read / Then the row is still the model, and the JSON keeps the column
    assert [m.balance for m in data.rows_as(PaymentMethodRow)] == [10.0]
    assert data.model_dump(mode="json")["rows"] == [row]


def test_a_turn_checkpointed_before_the_row_models_resumes_and_adds_up_the_items_named(saver: Any) -> None:
    # Given a turn checkpointed before the rows had models, after its wave ran: "if I return the
    # backpack and the pet bed, how much do I get back?", the order's lines with their ids as numbers
    graph = build_graph().compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "rows"}}
    task = _task(named_items=["6309044598", "8941974610"])
    found = {"task_id": "t1", "task_type": "order_items", "tool": "predefined_cypher", "status": "success",
             "data": {"template_id": "order_items", "scope": "customer", "params": {"order_id": ORDER},
                      "rows": ITEM_ROWS, "row_count": 2, "truncated": False},
             "error": None, "latency_ms": 3.0, "attempts": 1, "heal": []}
    graph.update_state(config, {
        "session_id": "rows", "customer_id": "cust_1", "lang": "en",
        "text": f"if I return the backpack and the pet bed from {ORDER}, how much do I get back?",
        "tasks": [task.model_dump(mode="json")], "results": {"t1": found}}, as_node="dispatch_wave")
    deps = GraphDeps(understand=lambda text, state: Understanding(route="general", intent="x",
                                                                  confidence=1.0),
                     tools={}, make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid))

    # When the turn resumes
    state = graph.invoke(None, config, context=deps)

    # Then the reply lists the order's lines and adds up the two named by their ids
    assert state["status"] == "answered"
    assert "Together, Backpack and Pet Bed come to $395.17." in state["reply"]["text"]
    # And the checkpoint still holds the rows as the store returned them, and reads them as the model
    saved = graph.get_state(config).values
    assert saved["results"]["t1"]["data"]["rows"] == ITEM_ROWS
    read = task_results(saved)["t1"].data
    assert isinstance(read, CatalogueData)
    assert [i.item_id for i in read.rows_as(OrderItemRow)] == ["6309044598", "8941974610"]
