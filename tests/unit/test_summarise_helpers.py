"""The summariser's helpers: the order results are told in (each after what it depends on), what
a turn leaves for the next one (the order and the catalogue product it was about), and which
supplementary misses it leaves unsaid."""

from __future__ import annotations

from typing import Any

from csagent.domain.models import Task, TaskResult
from csagent.domain.task_args import TaskNotes
from csagent.graph.nodes import summarise
from csagent.graph.nodes.summarise import dependency_order

LAPTOP = {"product_id": "4760268021", "name": "Laptop", "options": {"ram": "32GB"}}


def _slots(raw: dict[str, dict[str, Any]]) -> dict[str, TaskResult]:
    """Result slots as the state holds them (`graph.state.task_results`), from their status, error
    and data (a catalogue lookup's)."""
    return {task_id: TaskResult.model_validate({
        "task_id": task_id, "task_type": "product_info", "tool": "predefined_cypher",
        **{k: ({"message": "", **v} if k == "error" else v) for k, v in slot.items()}})
        for task_id, slot in raw.items()}


def last_order_id(tasks: list[Task], raw: dict[str, dict[str, Any]]) -> str | None:
    return summarise.last_order_id(tasks, _slots(raw))


def last_product(tasks: list[Task], raw: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    return summarise.last_product(tasks, _slots(raw))


def quiet_miss(task: Task, raw: dict[str, dict[str, Any]], *, asking: bool = False) -> bool:
    return summarise.quiet_miss(task, _slots(raw), asking=asking)


def unneeded_fallback(task: Task, raw: dict[str, dict[str, Any]]) -> bool:
    return summarise.unneeded_fallback(task, _slots(raw))


def covered_failure(task: Task, raw: dict[str, dict[str, Any]], tasks: list[Task]) -> bool:
    return summarise.covered_failure(task, _slots(raw), tasks)


def _task(task_id: str, notes: TaskNotes | None = None, **args: Any) -> Task:
    return Task(task_id=task_id, task_type="product_info", tool="predefined_cypher", args=args,
                notes=notes or TaskNotes())


def _ids(tasks: list[Task]) -> list[str]:
    return [task.task_id for task in tasks]


def _needs(task_id: str, *depends_on: str) -> Task:
    return _task(task_id).model_copy(update={"depends_on": depends_on})


def test_a_plan_whose_lookups_come_first_is_told_in_its_own_order() -> None:
    # Given a plan as the planner makes it: the order lookup, the warranty that needs its product, a policy
    tasks = [_needs("lookup"), _needs("warranty", "lookup"), _needs("policy")]
    # When ordered for the summary / Then nothing moves
    assert _ids(dependency_order(tasks)) == ["lookup", "warranty", "policy"]


def test_a_task_listed_before_what_it_needs_comes_right_after_it() -> None:
    # Given a task listed before the lookup it depends on
    tasks = [_needs("warranty", "lookup"), _needs("lookup"), _needs("policy")]
    # When ordered / Then the lookup comes first, and of the tasks ready then the one planned first
    assert _ids(dependency_order(tasks)) == ["lookup", "warranty", "policy"]


def test_tasks_in_a_cycle_or_needing_an_unknown_task_are_kept_at_the_end_in_plan_order() -> None:
    # Given two tasks that depend on each other, one that needs a task not in the plan, one that
    # needs a task of the cycle, and two that can be placed
    tasks = [_needs("a", "b"), _needs("first"), _needs("b", "a"), _needs("orphan", "gone"),
             _needs("after_a", "a"), _needs("second", "first")]
    # When ordered (the planner never makes such a plan; a summary still drops no task)
    ordered = _ids(dependency_order(tasks))
    # Then what can be placed comes first, then every other task in the plan's order
    assert ordered == ["first", "second", "a", "b", "orphan", "after_a"]


def test_the_product_answered_about_is_remembered() -> None:
    tasks = [_task("t1", question="laptop with 32GB?", product=LAPTOP)]
    assert last_product(tasks, {"t1": {"status": "success"}}) == LAPTOP


def test_a_failed_answer_leaves_no_product_and_orders_are_kept_apart() -> None:
    tasks = [_task("t1", question="laptop with 32GB?", product=LAPTOP),
             _task("t2", params={"order_id": "#W2611340"})]
    results = {"t1": {"status": "failed"}, "t2": {"status": "success"}}
    assert last_product(tasks, results) is None
    assert last_order_id(tasks, results) == "#W2611340"


def test_an_order_whose_change_the_rules_refused_is_remembered_one_not_found_is_not() -> None:
    # Given a cancellation refused because the order shipped, and a lookup of an unknown order
    cancel = Task(task_id="t1", task_type="cancel_order", tool="customer_actions",
                  args={"action": "cancel_order", "args": {"order_id": "#W5036595"}})
    unknown = _task("t1", params={"order_id": "#W0000000"})
    refused = {"t1": {"status": "failed", "error": {"type": "business_rule_violation", "message": "shipped"}}}
    not_found = {"t1": {"status": "failed", "error": {"type": "no_results", "message": "no such order"}}}
    # Then "that order" in the next turn is the refused change's, never the unknown one
    assert last_order_id([cancel], refused) == "#W5036595"
    assert last_order_id([unknown], not_found) is None


def test_a_list_of_one_order_leaves_that_order_a_longer_list_none() -> None:
    # Given the customer's orders on their way, listed: one, then two
    listing = Task(task_id="t1", task_type="order_list", tool="predefined_cypher",
                   args={"template_id": "order_list", "params": {"status": "processed"}})
    one = {"t1": {"status": "success", "data": {"rows": [{"order_id": "#W7824724", "status": "processed"}]}}}
    rows = [{"order_id": "#W7824724"}, {"order_id": "#W8864622"}]
    two = {"t1": {"status": "success", "data": {"rows": rows}}}
    # Then "that one" in the next turn is the one listed; of two, none is
    assert last_order_id([listing], one) == "#W7824724"
    assert last_order_id([listing], two) is None


def _policy(supplementary: bool) -> Task:
    return Task(task_id="t2", task_type="policy", tool="knowledge_search",
                args={"question": "wrong colour, what now"}, notes=TaskNotes(supplementary=supplementary))


NOTHING_FOUND = {"status": "failed", "error": {"type": "no_results", "message": "nothing"}}


def test_a_supplementary_search_that_finds_nothing_is_unsaid_when_the_facts_answer() -> None:
    results = {"t1": {"status": "success"}, "t2": NOTHING_FOUND}
    assert quiet_miss(_policy(True), results)


def test_misses_are_said_when_asked_for_alone_or_when_the_search_broke() -> None:
    # a search the customer asked for, a supplementary one with nothing else answered, a timeout
    assert not quiet_miss(_policy(False), {"t1": {"status": "success"}, "t2": NOTHING_FOUND})
    assert not quiet_miss(_policy(True), {"t1": {"status": "failed"}, "t2": NOTHING_FOUND})
    timeout = {"status": "failed", "error": {"type": "timeout", "message": "slow"}}
    assert not quiet_miss(_policy(True), {"t1": {"status": "success"}, "t2": timeout})


def test_a_fallback_is_unsaid_when_what_it_stands_in_for_answered() -> None:
    # Given the product's documents searched first and the catalogue's facts as their fallback
    fallback = _task("t2", TaskNotes(fallback_for="t1"), question="is it ok for swimming?", product=LAPTOP)
    # Then the catalogue's facts are left out when the documents answered, and said when they did not
    assert unneeded_fallback(fallback, {"t1": {"status": "success"}, "t2": {"status": "success"}})
    assert not unneeded_fallback(fallback, {"t1": NOTHING_FOUND, "t2": {"status": "success"}})
    # and a task that stands in for nothing is always said
    assert not unneeded_fallback(_task("t3", question="price?"), {"t3": {"status": "success"}})


def test_a_lookup_that_did_not_know_the_question_is_not_reported_when_its_fallback_answered() -> None:
    # Given a catalogue lookup that matched no question, and the store's pages planned as its fallback
    tasks = [_task("t1"), Task(task_id="t2", task_type="policy", tool="knowledge_search",
                               notes=TaskNotes(fallback_for="t1"))]
    failed = {"status": "failed", "error": {"type": "low_confidence"}}
    # Then the failure is moot when the pages answered, and reported when they did not
    assert covered_failure(tasks[0], {"t1": failed, "t2": {"status": "success"}}, tasks)
    assert not covered_failure(tasks[0], {"t1": failed, "t2": {"status": "failed"}}, tasks)
    # And a failure of another kind (a timeout) is never hidden
    timeout = {"status": "failed", "error": {"type": "timeout"}}
    assert not covered_failure(tasks[0], {"t1": timeout, "t2": {"status": "success"}}, tasks)


def test_a_supplementary_miss_is_unsaid_while_the_turn_asks_the_customer_something() -> None:
    # "I need to send back the tablet ... I'd rather have the money": nothing answered yet, but the
    # turn asks which of two orders; the documents' silence about the statement is not news
    assert quiet_miss(_policy(True), {"t2": NOTHING_FOUND}, asking=True)
    assert not quiet_miss(_policy(True), {"t2": NOTHING_FOUND})
    assert not quiet_miss(_policy(False), {"t2": NOTHING_FOUND}, asking=True)


def test_the_one_product_a_turn_named_is_kept_when_no_query_was_about_a_product() -> None:
    # Given "the espresso machine from #W1 makes a lovely cup ... how long is the warranty on it?",
    # answered from the store's documents (no catalogue query carries a product)
    clauses = [{"intent": "smalltalk", "entities": {"products": [
                   {"product_id": "p-esp", "name": "Espresso Machine", "options": {}}]}},
               {"intent": "warranty", "entities": {"products": [
                   {"product_id": "p-esp", "name": "Espresso Machine", "options": {}, "carried": True}]}}]
    # Then that product is the one the next turn's "it" may point at
    assert summarise.one_product_named(clauses) == {"product_id": "p-esp", "name": "Espresso Machine",
                                                    "options": {}}
    # and with two products named, none is
    kettle = {"product_id": "p-k", "name": "Kettle"}
    two = [*clauses, {"intent": "warranty", "entities": {"products": [kettle]}}]
    assert summarise.one_product_named(two) is None


def test_the_one_order_a_turn_named_is_remembered_when_no_task_read_it() -> None:
    from csagent.graph.nodes.summarise import the_one_order_named

    # "W2403075 - if cancelled, gift card refund instant?", answered from the store's pages
    asked = [{"intent": "policy_question", "entities": {"order_id": "#W2403075", "order_status": "pending"}}]
    assert the_one_order_named(asked) == "#W2403075"
    # an id not found on the account (no status), or two orders, name none
    assert the_one_order_named([{"intent": "policy_question", "entities": {"order_id": "#W1"}}]) is None
    two = asked + [{"intent": "policy_question", "entities": {"order_id": "#W2", "order_status": "pending"}}]
    assert the_one_order_named(two) is None
