"""Graph control flow with fake ports (no Neo4j, no models): routing, planning, waves,
failure as data, per-turn state. The checkpointer is LangGraph's in-memory saver."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.graph.builder import build_graph
from csagent.graph.context import GraphDeps
from csagent.graph.nodes.route import ROUTE_TO_NODE, route_by_label
from csagent.tools.context import ToolContext
from csagent.understanding import Clause, Understanding

ORDER = "#W1234567"


def understand_as(route: str, intent: str, confidence: float = 0.9, clauses: tuple[Clause, ...] = ()):
    def understand(text: str, state: Any) -> Understanding:
        return Understanding(route=route, intent=intent, confidence=confidence, clauses=clauses)
    return understand


def order_status_tool(task: Task, ctx: ToolContext) -> ToolResult:
    order_id = task.args.params["order_id"]
    return ToolResult.ok(task, {"template_id": "order_overview", "row": {
        "order_id": order_id, "order_status": "processed",
        "shipments": [{"tracking_id": "111122223333", "carrier": "UPS", "status": "in_transit",
                       "estimated_delivery": "2024-03-02"}],
        "items": [{"name": "Headphones", "product_id": "p-1"},
                  {"name": "Water Bottle", "product_id": "p-2"}]}})


def make_deps(understand, tools=None, max_tasks: int = 5) -> GraphDeps:
    return GraphDeps(understand=understand, tools=tools or {"predefined_cypher": order_status_tool},
                     make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid),  # type: ignore[arg-type]
                     max_tasks=max_tasks)


@pytest.fixture
def graph():
    return build_graph().compile(checkpointer=InMemorySaver())


def turn(graph, deps: GraphDeps, text: str, thread: str = "t-1") -> dict[str, Any]:
    return graph.invoke({"session_id": thread, "customer_id": "cust_1", "text": text},
                        {"configurable": {"thread_id": thread}}, context=deps)


def status_clause(order_id: str | None = ORDER) -> Clause:
    return Clause(text="where is my order", intent="order_status", confidence=0.9,
                  entities={"order_id": order_id} if order_id else {})


def test_order_status_clause_runs_one_task_and_answers(graph):
    # Given a message understood as one order-status clause with an order id
    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=(status_clause(),)))
    # When the turn runs
    state = turn(graph, deps, f"where is my order {ORDER}?")
    # Then one task ran and the reply carries the order's status and tracking number
    assert [t["task_type"] for t in state["tasks"]] == ["order_status"]
    assert state["results"]["t1"]["status"] == "success"
    assert state["status"] == "answered"
    assert ORDER in state["reply"]["text"] and "111122223333" in state["reply"]["text"]


def test_missing_order_id_asks_for_exactly_that(graph):
    # Given an order-status clause without an order id
    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=(status_clause(None),)))
    # When the turn runs
    state = turn(graph, deps, "where is my order?")
    # Then no task runs and the assistant asks for the order number
    assert state["tasks"] == []
    assert state["status"] == "needs_clarification"
    assert "order number" in state["reply"]["text"].lower()


def test_a_statement_that_settles_the_request_is_an_answer_not_a_question(graph):
    # Given "can I swap my sneakers for the size 11?", grounded: no size 11 is available, nothing else
    said = f"Order {ORDER}: The Sneakers in 11 is not available right now."
    swap = Clause(text="can i exchange my sneakers for the size 11 one", intent="change_items",
                  confidence=0.9, entities={"order_id": ORDER, "order_status": "delivered",
                                            "asks_for_change": False, "settled": True, "question": said})
    deps = make_deps(understand_as("knowledge_and_actions", "change_items", clauses=(swap,)))
    # When the turn runs
    state = turn(graph, deps, swap.text)
    # Then the reply says so and is an answer: nothing is awaited
    assert state["reply"]["text"] == said
    assert state["status"] == "answered" and state["awaiting"] == []


def test_a_tool_that_raises_becomes_a_failed_result_not_an_exception(graph):
    # Given a tool that raises
    def broken(task: Task, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("neo4j went away")
    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=(status_clause(),)),
                     tools={"predefined_cypher": broken})
    # When the turn runs
    state = turn(graph, deps, "where is my order?")
    # Then the turn still ends with a reply that names what could not be done
    assert state["results"]["t1"]["status"] == "failed"
    assert state["results"]["t1"]["error"]["type"] == ErrorType.UNKNOWN
    assert state["status"] == "partial"
    assert ORDER in state["reply"]["text"]


@pytest.mark.parametrize("label", sorted(ROUTE_TO_NODE))
def test_every_route_label_has_an_edge_to_a_real_node(label):
    # Given every label the router can return
    nodes = set(build_graph().nodes)
    # When it is routed with good confidence
    target = route_by_label({"route": label, "confidence": 0.9})
    # Then it leads to a node of the graph
    assert target in nodes


@pytest.mark.parametrize(("label", "confidence"), [("no_such_route", 0.99), ("knowledge_and_actions", 0.1)])
def test_unknown_or_low_confidence_routes_go_to_clarification(graph, label, confidence):
    # Given the router returns an unknown label or a low confidence
    deps = make_deps(understand_as(label, "order_status", confidence=confidence, clauses=(status_clause(),)))
    # When the turn runs
    state = turn(graph, deps, "hmm")
    # Then the customer is asked to clarify (never an error, never silence)
    assert state["status"] == "needs_clarification"
    assert state["reply"]["text"]


def test_a_second_turn_starts_clean_and_keeps_the_public_history(graph):
    # Given one answered turn on a thread
    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=(status_clause(),)))
    turn(graph, deps, "where is my order?")
    # When a greeting follows on the same thread
    state = turn(graph, make_deps(understand_as("general", "greeting")), "hello")
    # Then per-turn results are gone, the turn counter moved on, and the history holds both turns
    assert state["turn"] == 2
    assert state["results"] == {} and state["tasks"] == []
    assert [m["role"] for m in state["messages"]] == ["customer", "assistant", "customer", "assistant"]


def test_three_independent_200ms_tasks_run_concurrently(graph):
    # Given three independent clauses whose tool takes 200 ms each, each call's span recorded
    spans: list[tuple[float, float]] = []

    def slow(task: Task, ctx: ToolContext) -> ToolResult:
        began = time.perf_counter()
        time.sleep(0.2)
        spans.append((began, time.perf_counter()))
        return order_status_tool(task, ctx)
    clauses = tuple(status_clause(f"#W000000{i}") for i in (1, 2, 3))
    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=clauses),
                     tools={"predefined_cypher": slow})
    # When the turn runs
    state = turn(graph, deps, "three orders")
    # Then all three succeed, and all three were running at once: the last began before the first
    # ended (a sequential run starts each after the one before has ended). Spans, not wall time, so
    # that a loaded machine cannot fail it; the speed itself is `make bench`'s.
    assert [state["results"][t]["status"] for t in ("t1", "t2", "t3")] == ["success"] * 3
    assert len(spans) == 3
    assert max(b for b, _ in spans) < min(e for _, e in spans)


def test_empty_text_is_refused_politely(graph):
    # Given a message of only whitespace and control characters
    deps = make_deps(understand_as("general", "greeting"))
    # When the turn runs
    state = turn(graph, deps, " \u200b\x00 ")
    # Then it is refused with a reply, not an error
    assert state["status"] == "refused"
    assert state["reply"]["text"]


def test_after_ten_turns_older_turns_are_compressed_into_a_summary(graph):
    # Given twelve turns on one thread
    deps = make_deps(understand_as("general", "greeting"))
    for i in range(12):
        state = turn(graph, deps, f"message number {i}")
    # When we look at the public history
    customer_texts = [m["text"] for m in state["messages"] if m["role"] == "customer"]
    # Then the last ten turns are kept verbatim and the two oldest live on in the summary
    assert customer_texts == [f"message number {i}" for i in range(2, 12)]
    assert len(state["messages"]) == 20
    assert "message number 0" in state["summary"] and "message number 1" in state["summary"]
    assert "message number 2" not in state["summary"]


def test_a_refused_turn_does_not_refuse_the_next_one(graph):
    # Given a refused (empty) message
    deps = make_deps(understand_as("general", "greeting"))
    assert turn(graph, deps, "   ")["status"] == "refused"
    # When a normal greeting follows
    state = turn(graph, deps, "hello")
    # Then it is answered
    assert state["status"] == "answered"


def test_a_reference_to_an_orders_product_waits_for_the_order_lookup(graph):
    # Given "check order X and the warranty of those headphones"
    seen: dict[str, Any] = {}

    def knowledge(task: Task, ctx: ToolContext) -> ToolResult:
        seen["product_ids"] = task.args.product_ids
        return ToolResult.ok(task, {"answer": "1 year", "citations": [{"title": "Warranty terms"}]})
    clauses = (status_clause(), Clause(text="what is the warranty on those headphones", intent="warranty",
                                       confidence=0.8, entities={"order_id": ORDER, "reference": {
                                           "kind": "product", "hint": "headphones"}}))
    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=clauses),
                     tools={"predefined_cypher": order_status_tool, "knowledge_search": knowledge})
    # When the turn runs
    state = turn(graph, deps, "check order and warranty")
    # Then the warranty task depended on the lookup and searched with the headphones' product id
    warranty = next(t for t in state["tasks"] if t["task_type"] == "warranty")
    assert warranty["depends_on"] == ["t1"]
    assert seen["product_ids"] == ["p-1"]
    assert state["reply"]["text"].index(ORDER) < state["reply"]["text"].index("1 year")


class FakeReader:
    def __init__(self, text: str | None) -> None:
        self.text = text

    def read_text(self, image: bytes, media_type: str) -> str:
        from csagent.domain.errors import ImageUnreadable

        if self.text is None:
            raise ImageUnreadable("blurry")
        return self.text


PNG = {"type": "image", "media_type": "image/png", "data": "aGVsbG8gd29ybGQ="}


def image_turn(graph, reader: FakeReader, text: str = "where is this package?") -> dict[str, Any]:
    deps = GraphDeps(understand=understand_as("knowledge_and_actions", "order_status",
                                              clauses=(status_clause(None),)),
                     tools={"predefined_cypher": order_status_tool},
                     make_tool_context=lambda cid: ToolContext(graph=None, customer_id=cid),  # type: ignore[arg-type]
                     image_reader=reader)
    return graph.invoke({"session_id": "img", "customer_id": "cust_1", "text": text, "attachments": [PNG]},
                        {"configurable": {"thread_id": "img"}}, context=deps)


def test_an_order_id_read_from_a_label_photo_is_looked_up(graph):
    state = image_turn(graph, FakeReader("SHIP TO Jane\nOrder #W7654321\nThank you"))
    assert state["route"] == "image"
    args = state["tasks"][0]["args"]
    assert (args.get("template_id") or args.get("fallback_template")) == "order_overview"
    assert args["params"] == {"order_id": "#W7654321"}
    assert "#W7654321" in state["reply"]["text"]


def test_a_tracking_number_alone_finds_the_order_by_tracking(graph):
    state = image_turn(graph, FakeReader("UPS 1Z\nTRACKING 357962501027"))
    assert state["tasks"][0]["args"] == {"template_id": "order_by_tracking",
                                         "params": {"tracking_id": "357962501027"}}


def test_an_unreadable_picture_asks_for_the_order_number(graph):
    state = image_turn(graph, FakeReader(None))
    assert state["status"] == "needs_clarification"
    assert "picture" in state["reply"]["text"] and state["tasks"] == []


def test_the_output_guard_keeps_our_own_example_order_number_in_a_clarification(graph):
    # Given the real output guard and a question about an order without its number
    from csagent.guardrails.output import guard_output

    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=(status_clause(None),)))
    deps = GraphDeps(**{**deps.__dict__, "output_guard": guard_output})
    # When the assistant asks which order
    state = turn(graph, deps, "where is my order?")
    # Then the example in its wording is shown, not withheld
    assert "#W1234567" in state["reply"]["text"] and "withheld" not in state["reply"]["text"]



def test_the_output_guard_shows_what_grounding_found_in_the_customers_own_data(graph):
    # Given the real output guard and an exchange whose order grounding found, with a question it
    # wrote from the customer's own payment methods
    from csagent.guardrails.output import guard_output

    question = "Which payment method should pay the difference: Mastercard ending 8254, PayPal?"
    clause = Clause(text="the camera with a bigger zoom", intent="change_items", confidence=0.9,
                    entities={"order_id": "#W8336711", "order_candidates": ["#W8336711", "#W1605168"],
                              "item_ids": ["1"], "new_item_ids": ["2"], "question": question})
    deps = make_deps(understand_as("knowledge_and_actions", "change_items", clauses=(clause,)))
    deps = GraphDeps(**{**deps.__dict__, "output_guard": guard_output})
    # When the assistant asks it
    state = turn(graph, deps, "the one with the smartphone")
    # Then the card's last four are shown: they are the customer's own
    assert state["status"] == "needs_clarification"
    assert "ending 8254" in state["reply"]["text"] and "withheld" not in state["reply"]["text"]


def test_an_order_id_quoted_by_a_knowledge_document_is_withheld(graph):
    # Given the real output guard and a policy document that quotes somebody's real order id
    from csagent.guardrails.output import guard_output

    def knowledge(task: Task, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(task, {"answer": "Tell us the order id (for example #W7654321).",
                                    "citations": [{"title": "Returns and refunds"}]})
    clause = Clause(text="how do returns work", intent="policy_question", confidence=0.9)
    deps = make_deps(understand_as("knowledge_and_actions", "policy_question", clauses=(clause,)),
                     tools={"knowledge_search": knowledge})
    deps = GraphDeps(**{**deps.__dict__, "output_guard": guard_output})
    # When the customer asks about returns
    state = turn(graph, deps, "how do returns work?")
    # Then the policy is answered but the other order's id is not shown: documents are not the
    # customer's data, so their identifiers do not vouch for themselves
    assert state["results"]["t1"]["status"] == "success"
    assert "#W7654321" not in state["reply"]["text"]
    assert "withheld" in state["reply"]["text"]


def test_every_label_the_local_tier_can_return_has_an_edge():
    # Given every route the local understanding can produce, plus the ones the graph sets itself
    from csagent.understanding_local import route_for

    intents = ["greeting", "thanks", "smalltalk", "human_handoff", "out_of_scope", "order_status", "warranty"]
    labels = {route_for([i]) for i in intents} | {route_for(intents)} | {"image", "confirmation", "clarify"}
    nodes = set(build_graph().nodes)
    # Then each one routes to a real node
    assert {route_by_label({"route": label, "confidence": 1.0}) for label in labels} <= nodes
    assert labels <= set(ROUTE_TO_NODE) | {"clarify"}


def test_a_graph_without_models_makes_no_model_call_and_traces_the_local_tier(graph):
    # Given the graph's ports without a model gateway (CHAT_MODEL=local)
    from csagent.models.usage import metered_turn

    deps = make_deps(understand_as("knowledge_and_actions", "order_status", clauses=(status_clause(),)))
    # When a turn runs inside a metered turn
    with metered_turn() as usage:
        state = turn(graph, deps, f"where is my order {ORDER}?")
    # Then it is answered with no model call, by the templated planner and summariser
    assert state["status"] == "answered" and usage.calls == 0
    assert (state["trace"]["planner"], state["trace"]["summariser"]) == ("local", "template")


def test_the_picture_is_not_kept_in_the_state_once_the_turn_is_answered(graph):
    # Given a turn with a label photo that was read
    state = image_turn(graph, FakeReader("Order #W7654321"))
    # When the turn has ended
    saved = graph.get_state({"configurable": {"thread_id": "img"}}).values
    # Then the answer used the picture, and neither the result nor the checkpoint holds its bytes
    assert "#W7654321" in state["reply"]["text"]
    assert not state.get("attachments") and not saved.get("attachments")


def not_found_tool(task: Task, ctx: ToolContext) -> ToolResult:
    order_id = task.args.params["order_id"]
    return ToolResult.failed(task, ErrorType.NO_RESULTS, f"No order {order_id} was found in your account.")


def test_two_requests_that_fail_for_the_same_reason_say_it_once(graph):
    # Given a message asking what is in an order and where it is, about an order not in the account
    clauses = (Clause(text="what's in order #W3913498", intent="order_items", confidence=0.9,
                      entities={"order_id": "#W3913498"}),
               Clause(text="when does it ship", intent="order_status", confidence=0.9,
                      entities={"order_id": "#W3913498"}))
    deps = make_deps(understand_as("knowledge_and_actions", "order_items", clauses=clauses),
                     tools={"predefined_cypher": not_found_tool})
    # When the turn runs
    state = turn(graph, deps, "Can you tell me what's in order #W3913498 and when it ships?")
    # Then both tasks failed, and the reply says so once
    assert [state["results"][t["task_id"]]["status"] for t in state["tasks"]] == ["failed", "failed"]
    assert state["reply"]["text"].count("No order #W3913498 was found") == 1
