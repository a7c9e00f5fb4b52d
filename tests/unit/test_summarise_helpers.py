"""What a turn leaves for the next one: the order and the catalogue product it was about."""

from __future__ import annotations

from csagent.graph.nodes.summarise import last_order_id, last_product

LAPTOP = {"product_id": "4760268021", "name": "Laptop", "options": {"ram": "32GB"}}


def _task(task_id: str, **args: object) -> dict:
    return {"task_id": task_id, "task_type": "product_info", "tool": "predefined_cypher", "args": args}


def test_the_product_answered_about_is_remembered() -> None:
    tasks = [_task("t1", question="laptop with 32GB?", product=LAPTOP)]
    assert last_product(tasks, {"t1": {"status": "success"}}) == LAPTOP


def test_a_failed_answer_leaves_no_product_and_orders_are_kept_apart() -> None:
    tasks = [_task("t1", question="laptop with 32GB?", product=LAPTOP),
             _task("t2", params={"order_id": "#W2611340"})]
    results = {"t1": {"status": "failed"}, "t2": {"status": "success"}}
    assert last_product(tasks, results) is None
    assert last_order_id(tasks, results) == "#W2611340"
