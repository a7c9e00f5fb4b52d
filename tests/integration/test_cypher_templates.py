"""The predefined Cypher catalogue against a real Neo4j seeded with tau-retail: every template
runs and returns its declared shape, values agree with the dataset, and - the scoping test -
customer A's session never reaches customer B's orders, products bought, addresses or payments.

Uses the shared fixtures of `tests/conftest.py`: `neo4j_driver` (env `NEO4J_URI`), `tau_data`
(the tau-retail path) and `tau_store` (`devstack.seed.loader.seed_store`, once per session).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.domain.models import ErrorType, Task, TaskResult, TaskStatus, ToolResult
from csagent.domain.template_rows import ROW_MODELS
from csagent.tools import cypher_catalogue as cc
from csagent.tools.context import ToolContext

pytestmark = pytest.mark.integration

OWNER = "james_li_5688"
OWNER_ORDER = "#W2611340"  # processed, one shipment, tracking 357962501027
CATALOGUE = cc.load_catalogue()
CUSTOMER_TEMPLATES = [t for t in CATALOGUE.templates if t.scope == "customer"]
ID_PARAM_TYPES = {"order_id", "tracking_id", "product_name"}  # the parameters that point at someone's data


# ------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def tau(tau_data: Path) -> dict[str, Any]:
    names = ("users", "orders", "products")
    return {name: json.loads((tau_data / f"{name}.json").read_text()) for name in names}


@pytest.fixture(scope="module")
def graph(neo4j_driver: Any, tau_store: Any) -> Neo4jGraph:
    """The project's Neo4j adapter over the seeded store."""
    return Neo4jGraph(neo4j_driver)


def _ctx(graph: Any, customer_id: str | None, embedder: Any = None) -> ToolContext:
    return ToolContext(graph=graph, customer_id=customer_id, embedder=embedder)


def _run(graph: Any, template_id: str, params: dict[str, Any], customer_id: str | None) -> ToolResult:
    task = Task(task_id=template_id, task_type="lookup", tool=cc.TOOL_NAME)
    return cc.run_template(template_id, params, _ctx(graph, customer_id), task)


def _products_bought(tau: dict[str, Any], user_id: str) -> set[str]:
    return {item["name"] for oid in tau["users"][user_id]["orders"] for item in tau["orders"][oid]["items"]}


@pytest.fixture(scope="module")
def owner_params() -> dict[str, Any]:
    """Parameters pointing at the owner's own data (and public catalogue data)."""
    return {"order_id": OWNER_ORDER, "tracking_id": "357962501027", "product_name": "water bottle",
            "product_id": "8310926033",
            "item_id": "6469567736", "options": "material: glass|color: blue",
            "status": "processed", "also_status": "delivered",
            "not_status": "cancelled", "option_key": "color", "option_value": "blue",
            "held": "material: glass",
            "category": "home and kitchen", "max_price": 50}


@pytest.fixture(scope="module")
def other(tau: dict[str, Any]) -> dict[str, Any]:
    """Customer B: has orders, a credit card, and bought only products the owner never bought."""
    mine = _products_bought(tau, OWNER)
    owner_address = tau["users"][OWNER]["address"]["address1"]
    for user_id in sorted(tau["users"]):
        user = tau["users"][user_id]
        bought = _products_bought(tau, user_id)
        cards = [m for m in user["payment_methods"].values() if m["source"] == "credit_card"]
        if (user_id != OWNER and len(user["orders"]) >= 2 and bought and not bought & mine and cards
                and user["address"]["address1"] != owner_address):
            tracking = {oid: t for oid in user["orders"] for f in tau["orders"][oid]["fulfillments"]
                        for t in f["tracking_id"]}
            return {"user_id": user_id, "orders": list(user["orders"]), "product": sorted(bought)[0],
                    "tracking": tracking,
                    "email": user["email"], "address1": user["address"]["address1"],
                    "last_fours": [c["last_four"] for c in cards]}
    raise AssertionError("tau-retail has no suitable second customer")


# ------------------------------------------------------------------------ every template runs
@pytest.mark.parametrize("template", CATALOGUE.templates, ids=lambda t: t.id)
def test_every_template_runs_for_its_owner_and_returns_its_shape(
        graph: Neo4jGraph, owner_params: dict[str, Any], template: cc.QueryTemplate) -> None:
    # Given the owner's session and parameters pointing at the owner's data
    params = {p.name: owner_params[p.name] for p in template.params}
    # When the template runs on the real database
    result = _run(graph, template.id, params, OWNER)
    # Then it succeeds with exactly the declared columns and shape
    assert result.status is TaskStatus.SUCCESS, result.error
    assert result.data is not None and result.data.template_id == template.id
    columns = list(template.result.columns)
    if template.result.shape == "one":
        assert list(result.data.row) == columns
        assert any(v is not None for v in result.data.row.values())
    else:
        rows = result.data.rows
        assert 1 <= len(rows) <= template.result.max_rows
        assert all(list(row) == columns for row in rows)
    # And every row is read as the template's row model
    assert len(result.data.rows_as(ROW_MODELS[template.id])) == len(result.data.all_rows)


# --------------------------------------------------------------------------- the scoping test
@pytest.mark.parametrize("template", [t for t in CUSTOMER_TEMPLATES
                                      if {p.type for p in t.params} & ID_PARAM_TYPES], ids=lambda t: t.id)
def test_another_customers_ids_reach_nothing(
        graph: Neo4jGraph, owner_params: dict[str, Any], other: dict[str, Any],
        template: cc.QueryTemplate) -> None:
    # Given the owner's session and every order id / product customer B owns
    found_by_b = 0
    for order_id in other["orders"]:
        params = {p.name: owner_params[p.name] for p in template.params}
        params.update({p.name: order_id for p in template.params if p.type == "order_id"})
        if any(p.type == "tracking_id" for p in template.params):
            if order_id not in other["tracking"]:
                continue  # this order of B's never shipped: no tracking number to try
            params.update({p.name: other["tracking"][order_id] for p in template.params
                           if p.type == "tracking_id"})
        params.update({p.name: other["product"] for p in template.params if p.type == "product_name"})
        # When the template runs with B's ids
        result = _run(graph, template.id, params, OWNER)
        # Then nothing comes back: no results, and no trace of B in what is returned
        assert result.status is TaskStatus.FAILED, (order_id, result.data)
        assert result.error is not None and result.error.type is ErrorType.NO_RESULTS
        assert result.data is None
        # (control: the very same ids do find data in B's own session)
        found_by_b += _run(graph, template.id, params, other["user_id"]).status is TaskStatus.SUCCESS
    assert found_by_b > 0


@pytest.mark.parametrize("template", [t for t in CUSTOMER_TEMPLATES
                                      if not {p.type for p in t.params} & ID_PARAM_TYPES], ids=lambda t: t.id)
def test_account_templates_return_only_the_session_customers_data(
        graph: Neo4jGraph, owner_params: dict[str, Any], other: dict[str, Any],
        template: cc.QueryTemplate) -> None:
    # Given the owner's session, and customer B's id smuggled into the parameters
    params = {p.name: owner_params[p.name] for p in template.params}
    params["customer_id"] = other["user_id"]
    # When an account-level template runs (addresses, payments, order lists, counts)
    result = _run(graph, template.id, params, OWNER)
    # Then whatever it returns holds nothing of B's: ids, email, address or card digits
    dumped = json.dumps(result.model_dump(mode="json"))
    for secret in [other["user_id"], other["email"], other["address1"], *other["orders"]]:
        assert secret not in dumped
    for last_four in other["last_fours"]:
        assert f'"last_four": "{last_four}"' not in dumped


@pytest.mark.parametrize("template", CUSTOMER_TEMPLATES, ids=lambda t: t.id)
def test_a_session_for_an_unknown_customer_sees_nothing(
        graph: Neo4jGraph, owner_params: dict[str, Any], template: cc.QueryTemplate) -> None:
    # Given a session whose customer does not exist, asking with the owner's real ids
    params = {p.name: owner_params[p.name] for p in template.params}
    # When any customer-scoped template runs
    result = _run(graph, template.id, params, "nobody_0000")
    # Then it finds nothing at all
    assert result.error is not None and result.error.type is ErrorType.NO_RESULTS


# ------------------------------------------------------------------- values against the dataset
def test_spot_check_order_status_and_tracking(graph: Neo4jGraph, tau: dict[str, Any]) -> None:
    # Given james_li_5688's order #W2611340 in the dataset
    order = tau["orders"][OWNER_ORDER]
    # When its status and tracking are asked
    status = _run(graph, "order_status", {"order_id": "W2611340"}, OWNER)
    tracking = _run(graph, "order_tracking", {"order_id": OWNER_ORDER}, OWNER)
    # Then they match the dataset: processed, tracking 357962501027
    assert status.data is not None and status.data.row["status"] == order["status"] == "processed"
    assert tracking.data is not None
    assert [r["tracking_id"] for r in tracking.data.rows] == ["357962501027"]
    assert tracking.data.rows[0]["carrier"] in {"UPS", "FedEx", "USPS", "DHL"}


def test_spot_check_items_total_and_payment(graph: Neo4jGraph, tau: dict[str, Any]) -> None:
    order = tau["orders"][OWNER_ORDER]
    # When items, total and payments of #W2611340 are asked
    items = _run(graph, "order_items", {"order_id": OWNER_ORDER}, OWNER)
    total = _run(graph, "order_total", {"order_id": OWNER_ORDER}, OWNER)
    payments = _run(graph, "order_payments", {"order_id": OWNER_ORDER}, OWNER)
    # Then they agree with the dataset
    assert items.data is not None and total.data is not None and payments.data is not None
    assert sorted(r["item_id"] for r in items.data.rows) == sorted(i["item_id"] for i in order["items"])
    assert items.data.rows[0]["options"] == order["items"][0]["options"]
    paid = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "payment")
    assert total.data.row["amount_paid"] == pytest.approx(paid)
    assert total.data.row["total"] == pytest.approx(sum(i["price"] for i in order["items"]))
    assert [r["payment_method"] for r in payments.data.rows] == ["gift card"]


def test_spot_check_account_data(graph: Neo4jGraph, tau: dict[str, Any]) -> None:
    user = tau["users"][OWNER]
    # When the owner's address, orders and counts are asked
    address = _run(graph, "default_address", {}, OWNER)
    orders = _run(graph, "customer_orders", {}, OWNER)
    delivered = _run(graph, "customer_orders", {"status": "delivered"}, OWNER)
    counts = _run(graph, "order_count_by_status", {}, OWNER)
    # Then they agree with the dataset
    assert address.data is not None and address.data.row["address1"] == user["address"]["address1"]
    assert orders.data is not None
    assert sorted(r["order_id"] for r in orders.data.rows) == sorted(user["orders"])
    assert delivered.data is not None
    expected_delivered = sorted(o for o in user["orders"] if tau["orders"][o]["status"] == "delivered")
    assert sorted(r["order_id"] for r in delivered.data.rows) == expected_delivered
    assert counts.data is not None
    assert sum(r["orders"] for r in counts.data.rows) == len(user["orders"])


def test_payment_methods_are_masked(graph: Neo4jGraph, tau: dict[str, Any], other: dict[str, Any]) -> None:
    # Given customer B, who has a credit card
    result = _run(graph, "payment_methods", {}, other["user_id"])
    # Then cards show as brand + last four, and no payment method id leaves the database
    assert result.data is not None
    labels = [r["payment_method"] for r in result.data.rows]
    assert any(label.endswith(f"ending {other['last_fours'][0]}") for label in labels)
    assert "credit_card_" not in result.model_dump_json()


def test_spot_check_catalogue_values(graph: Neo4jGraph, tau: dict[str, Any]) -> None:
    product = tau["products"]["8310926033"]  # Water Bottle
    variants = product["variants"]
    # When variants, price, availability and the cheapest variant are asked
    listed = _run(graph, "product_variants", {"product_name": "Water Bottles"}, None)
    price = _run(graph, "variant_price", {"item_id": "6469567736"}, None)
    availability = _run(graph, "variant_availability", {"item_id": "6469567736"}, None)
    cheapest = _run(graph, "cheapest_variant", {"product_name": "water bottle"}, None)
    blue = _run(graph, "variants_by_option", {"product_name": "water bottle", "option_key": "color",
                                              "option_value": "blue"}, None)
    # Then each agrees with products.json
    assert listed.data is not None and listed.data.row_count == len(variants)
    assert price.data is not None and price.data.row["price"] == variants["6469567736"]["price"]
    assert availability.data is not None
    assert availability.data.row["available"] == variants["6469567736"]["available"]
    in_stock = [v for v in variants.values() if v["available"]]
    assert cheapest.data is not None
    assert cheapest.data.row["price"] == min(v["price"] for v in in_stock)
    assert blue.data is not None
    assert {r["item_id"] for r in blue.data.rows} == {
        v["item_id"] for v in variants.values() if v["options"].get("color") == "blue"}


def test_return_and_cancellation_eligibility_follow_the_policy(graph: Neo4jGraph,
                                                               tau: dict[str, Any]) -> None:
    # Given a delivered order of the owner and a pending order of its own customer
    delivered = next(o for o in tau["users"][OWNER]["orders"] if tau["orders"][o]["status"] == "delivered")
    pending = next(o for o in sorted(tau["orders"]) if tau["orders"][o]["status"] == "pending")
    pending_owner = tau["orders"][pending]["user_id"]
    # When eligibility is asked
    can_return = _run(graph, "return_eligibility", {"order_id": delivered}, OWNER)
    cannot_return = _run(graph, "return_eligibility", {"order_id": OWNER_ORDER}, OWNER)
    can_cancel = _run(graph, "cancellation_eligibility", {"order_id": pending}, pending_owner)
    cannot_cancel = _run(graph, "cancellation_eligibility", {"order_id": delivered}, OWNER)
    # Then only delivered orders are returnable and only pending ones cancellable, with the rule
    assert can_return.data is not None and can_return.data.row["eligible"] is True
    assert can_return.data.row["delivered_at"] is not None
    assert cannot_return.data is not None and cannot_return.data.row["eligible"] is False
    assert "delivered" in cannot_return.data.row["rule"]
    assert can_cancel.data is not None and can_cancel.data.row["eligible"] is True
    assert cannot_cancel.data is not None and cannot_cancel.data.row["eligible"] is False


def test_the_overview_says_where_the_order_ships(graph: Neo4jGraph, tau: dict[str, Any]) -> None:
    from csagent.replies import describe_success

    # Given the owner's processed order and the address tau-retail ships it to
    expected = tau["orders"][OWNER_ORDER]["address"]
    # When its overview is read and worded
    result = _run(graph, "order_overview", {"order_id": OWNER_ORDER}, OWNER)
    task = Task(task_id=result.task_id, task_type=result.task_type, tool=cc.TOOL_NAME)
    text = describe_success(task, TaskResult.model_validate(result.model_dump(mode="json")), "en")
    # Then the address is the order's own, and the reply says the order ships there
    assert result.data is not None
    assert result.data.row["address"]["address1"] == expected["address1"]
    assert f"It ships to {expected['address1']}" in text and expected["city"] in text


# -------------------------------------------------------------------- the tool entry, end to end
def test_a_question_is_matched_and_answered_from_the_store(graph: Neo4jGraph) -> None:
    from csagent.nlp.embeddings import get_embedder

    ctx = _ctx(graph, OWNER, get_embedder())
    # When the owner asks in words
    status = cc.run(Task(task_id="q1", task_type="lookup", tool=cc.TOOL_NAME,
                         args={"question": "Where is my order W2611340?"}), ctx)
    price = cc.run(Task(task_id="q2", task_type="lookup", tool=cc.TOOL_NAME,
                        args={"question": "How much does the office chair cost?"}), ctx)
    # Then the right templates ran with parameters read from the text and the store's products
    assert status.data is not None and status.data.template_id == "order_status"
    assert status.data.row["status"] == "processed"
    assert price.data is not None and price.data.template_id == "product_price"
    assert [r["product_name"] for r in price.data.rows] == ["Office Chair"]



@pytest.mark.parametrize(("question", "template_id", "answer"), [
    ("Which pressure settings can I get on the espresso machines?", "product_option_values",
     "The Espresso Machine comes with these pressure options: 9 bar, 15 bar and 19 bar."),
    # two options asked at once: each told, in the order asked (its sizes are the kettle's capacities)
    ("Which sizes and materials does the electric kettle come in?", "product_option_values",
     "The Electric Kettle comes with these capacity options: 1L, 1.5L and 2L. The Electric Kettle comes "
     "with these material options: glass, plastic and stainless steel."),
    ("Does the wall clock come in wood?", "variants_by_option",
     "Yes, the Wall Clock in wood is available: 10 inches / wood / analog at $196.15."),
])
def test_a_question_naming_a_products_option_is_answered_in_customer_words(
        graph: Neo4jGraph, question: str, template_id: str, answer: str) -> None:
    from csagent.nlp.embeddings import get_embedder
    from csagent.replies import describe_success

    # Given a catalogue question worded unlike the examples, naming a product and one of its options
    task = Task(task_id="q1", task_type="product_info", tool=cc.TOOL_NAME, args={"question": question})
    # When the tool answers it and the answer is worded
    result = cc.run(task, _ctx(graph, None, get_embedder()))
    text = describe_success(task, TaskResult.model_validate(result.model_dump(mode="json")), "en")
    # Then the option's template ran, and the reply is a sentence from the store's data
    assert result.data is not None and result.data.template_id == template_id
    assert text == answer


CHARGER = {"product_id": "6942297802", "name": "Portable Charger", "options": {"capacity": "20000mAh"}}


def _ask(graph: Neo4jGraph, args: dict[str, Any]) -> tuple[ToolResult, str]:
    from csagent.nlp.embeddings import get_embedder
    from csagent.replies import describe_success

    task = Task(task_id="q1", task_type="product_info", tool=cc.TOOL_NAME, args=args)
    result = cc.run(task, _ctx(graph, None, get_embedder()))
    return result, describe_success(task, TaskResult.model_validate(result.model_dump(mode="json")), "en")


def test_a_grounded_product_with_options_is_answered_with_the_versions_having_them(graph: Neo4jGraph) -> None:
    # Given a price question the understanding step grounded to the Portable Charger in 20000mAh
    args = {"question": "What is the price of the 20000mAh portable charger, please?", "product": CHARGER}
    # When the tool answers it
    result, text = _ask(graph, args)
    # Then the answer is the three 20000mAh versions in stock, cheapest first, not every charger
    assert result.data is not None and result.data.template_id == "variants_with_options"
    assert [r["price"] for r in result.data.rows] == [98.25, 102.07, 109.27]
    assert text.startswith("Yes, the Portable Charger in capacity 20000mAh is available:")


def test_options_no_version_has_are_an_answer_not_a_failure(graph: Neo4jGraph) -> None:
    # Given a grounded product with two options no version has together (no 5000mAh charger is blue)
    product = {**CHARGER, "options": {"capacity": "5000mAh", "color": "blue"}}
    # When asked about it
    result, text = _ask(graph, {"question": "do you have a blue 5000mAh charger?", "product": product})
    # Then it succeeds with no versions, and says so with the product and options named
    assert result.status is TaskStatus.SUCCESS and result.data is not None and result.data.rows == []
    assert text == "Sorry, the Portable Charger in capacity 5000mAh and blue is not available right now."


def test_a_grounded_product_is_the_evidence_a_weak_match_lacks(graph: Neo4jGraph) -> None:
    # Given words that match no template closely, once alone and once grounded to the E-Reader
    product = {"product_id": "3801771308", "name": "E-Reader", "options": {}}
    alone, _ = _ask(graph, {"question": "ereader w/ sim?? $$"})
    grounded, text = _ask(graph, {"question": "ereader w/ sim?? $$", "product": product})
    # Then alone they are too unlike any question to answer; grounded, the best product question
    # above the floor answers about that product instead of "say it another way"
    assert alone.error is not None and alone.error.type is ErrorType.LOW_CONFIDENCE
    assert grounded.data is not None and grounded.data.params["product_name"] == "ereader"
    assert grounded.data.template_id == "product_price"
    assert text.startswith("The E-Reader costs from $")


def test_a_grounded_product_with_no_question_in_the_words_gets_its_overview(graph: Neo4jGraph) -> None:
    # Given words that rank no template above the floor ("asdf qwerty"), grounded to the E-Reader
    # (as a product picked from a list would be)
    product = {"product_id": "3801771308", "name": "E-Reader", "options": {}}
    result, text = _ask(graph, {"question": "asdf qwerty", "product": product})
    # Then the product's versions, prices and options answer
    assert result.data is not None and result.data.template_id == cc.GROUNDED_FALLBACK
    assert text.startswith("We sell the E-Reader (6 versions")


def test_that_one_is_the_product_the_conversation_is_about(graph: Neo4jGraph) -> None:
    # Given a follow-up naming no product, and the thermostat the conversation was about
    context = {"product_id": "4896585277", "name": "Smart Thermostat", "options": {}}
    # When it is asked with and without that context
    question = "Which colour is that one, please?"
    with_context, text = _ask(graph, {"question": question, "context_product": context})
    without, _ = _ask(graph, {"question": question})
    # Then the context supplies the product, and the rest is read against its options
    assert with_context.data is not None and with_context.data.template_id == "product_option_values"
    assert text.startswith("The Smart Thermostat comes with these color options:")
    assert without.status is TaskStatus.FAILED


def test_words_naming_another_product_win_over_the_context(graph: Neo4jGraph) -> None:
    # Given a question naming the office chair, in a conversation about the thermostat
    context = {"product_id": "4896585277", "name": "Smart Thermostat", "options": {"color": "black"}}
    # When it is answered
    result, _ = _ask(graph, {"question": "How much does the office chair cost?", "context_product": context})
    # Then it is about the chair
    assert result.data is not None and [r["product_name"] for r in result.data.rows] == ["Office Chair"]

# ----------------------------------------------------------------------- failures become data
def test_a_query_over_its_timeout_is_a_retryable_timeout(graph: Neo4jGraph) -> None:
    # Given a catalogue with a deliberately slow query and a 0.3 s timeout
    slow = cc.parse_catalogue({"templates": [{
        "id": "slow", "description": "A deliberately slow query.", "scope": "catalogue",
        "examples": ["slow one", "slow two", "slow three"], "timeout_s": 0.3,
        "cypher": "UNWIND range(1, 500000000) AS x WITH x WHERE x % 7 = 100 RETURN x AS n",
        "result": {"shape": "many", "columns": ["n"], "max_rows": 5}}]})
    # When it runs
    result = cc.run_template("slow", {}, _ctx(graph, None), Task(task_id="s", task_type="t", tool="c"),
                             catalogue=slow)
    # Then the tool reports TIMEOUT, retryable
    assert result.error is not None and result.error.type is ErrorType.TIMEOUT, result.error
    assert result.error.retryable


def test_an_unreachable_database_is_a_retryable_transient_failure() -> None:
    from neo4j import GraphDatabase

    # Given a driver pointing at a port nothing listens on
    driver = GraphDatabase.driver("bolt://127.0.0.1:1", auth=None, connection_timeout=0.5,
                                  max_transaction_retry_time=0.5)
    try:
        # When a template runs
        result = _run(Neo4jGraph(driver), "categories", {}, None)
    finally:
        driver.close()
    # Then the tool reports TRANSIENT, retryable
    assert result.error is not None and result.error.type is ErrorType.TRANSIENT, result.error
    assert result.error.retryable


KETTLE = {"product_id": "1075968781", "name": "Electric Kettle", "options": {}}


@pytest.mark.parametrize(("question", "product", "answer"), [
    # a superlative along an option: the versions in stock at that end, whatever template it resembles
    ("What's the largest electric kettle you sell and how much is it?", KETTLE,
     "The Electric Kettle with the highest capacity in stock is the 2L: 2L / stainless steel / white at "
     "$153.81 and 2L / glass / white at $159.78."),
    # "most cheap" is the cheapest, not the most expensive its words resemble
    ("Which is the most cheap electric kettle you are selling?", KETTLE,
     "The cheapest Electric Kettle in stock is the 1L / glass / silver version at $137.17 "
     "(item 1240311797)."),
    # a bound: the versions beyond it (the 5mm the grounding read is the bound, not a filter)
    ("got any yoga mats thicker than 5mm?",
     {"product_id": "4635925001", "name": "Yoga Mat", "options": {"thickness": "5mm"}},
     "Yoga Mat versions in stock with a thickness above 5mm: 6mm / PVC / green at $105.68."),
])
def test_a_ranking_question_is_answered_from_the_products_versions(
        graph: Neo4jGraph, question: str, product: dict[str, Any], answer: str) -> None:
    # When a question ranking a grounded product's versions is asked
    result, text = _ask(graph, {"question": question, "product": product})
    # Then the versions it ranks answer it, from the store's data
    assert result.data is not None and result.data.template_id == cc.RANKED_VERSIONS
    assert text == answer
