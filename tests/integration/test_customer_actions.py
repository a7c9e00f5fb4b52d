"""Customer actions against the real Neo4j seeded with tau-retail and the idempotency table on
the moto server: each action changes exactly what it says, a policy refusal writes nothing,
another customer's order looks like no order at all, and the same confirmation applies once -
replayed, with its DynamoDB record lost, or executed by two threads at once.

Every test goes through the tool entry (`customer_actions.run`) with the store clock set to
2024-07-01 (the data's orders are from the first half of 2024). Tests that may write restore
the store with `reseed_tau`; AuditEvent nodes (not a store label the seed restores) are deleted
around every test. Confirmation ids are unique per run, so records the moto server keeps from an
earlier run never replay into this one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from actions_support import DirectRunner, action_settings, confirmation, execute, propose, proposed

from csagent.actions.idempotency import KEY_PREFIX
from csagent.actions.queries import ensure_audit_schema
from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.domain.models import ErrorType, TaskStatus, ToolResult
from csagent.tools import customer_actions as tool

pytestmark = pytest.mark.integration

# Chosen from the seeded tau-retail store (dates are derived deterministically from ids).
GIFT_CARD_OWNER, GIFT_CARD_ORDER = "juan_garcia_9528", "#W1013897"  # pending, $152.56 by gift_card_6369065
CARD_OWNER, CARD_ORDER = "omar_kim_3528", "#W1080318"  # pending, $53.43 by credit_card_3577130
PROCESSED_OWNER, PROCESSED_ORDER = "james_li_5688", "#W2611340"  # processed (shipped)
RETURNER = "raj_sanchez_2970"
RECENT_ORDER = "#W1067251"  # delivered 2024-06-16, by credit_card_3362387; Earbuds 258.84, Grill 942.71
EARBUDS = "6452271382"
RETURNER_GIFT_CARD = "gift_card_2259499"  # balance 30.00
RETURNER_PENDING = "#W4566809"
OLD_OWNER, OLD_ORDER, OLD_ITEM = "yara_lee_7701", "#W1341845", "6206533187"  # delivered 2024-01-24

NEW_ADDRESS = {"address1": "77 Harbor View", "address2": "Unit 5", "city": "Portland", "state": "OR",
               "zip": "97201", "country": "USA"}


# ------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def graph(neo4j_driver: Any, tau_store: Any) -> Neo4jGraph:
    store = Neo4jGraph(neo4j_driver)
    ensure_audit_schema(store)
    return store


@pytest.fixture(autouse=True)
def no_audit_events(neo4j_driver: Any) -> Iterator[None]:
    """The seed does not own AuditEvent nodes: start and end every test without any."""
    neo4j_driver.execute_query("MATCH (e:AuditEvent) DETACH DELETE e")
    yield
    neo4j_driver.execute_query("MATCH (e:AuditEvent) DETACH DELETE e")


@pytest.fixture(scope="module")
def settings(moto_endpoint: str) -> tool.ActionSettings:
    return action_settings(moto_endpoint)


# ------------------------------------------------------------------------------------- helpers
def one(driver: Any, cypher: str, **params: Any) -> dict[str, Any]:
    records, _, _ = driver.execute_query(cypher, parameters_=params)
    return dict(records[0]) if records else {}


def order_state(driver: Any, order_id: str) -> dict[str, Any]:
    """Status, refund transactions and audit events of an order, as the database holds them."""
    return one(driver, """
        MATCH (o:Order {order_id: $order_id})
        OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction {type: 'refund'})-[:USING]->(m:PaymentMethod)
        WITH o, collect(t{.*, method: m.payment_method_id}) AS refunds
        OPTIONAL MATCH (o)-[:HAS_AUDIT]->(e:AuditEvent)
        RETURN o.status AS status, refunds, count(e) AS audits""", order_id=order_id)


def balance(driver: Any, payment_method_id: str) -> float:
    return float(one(driver, "MATCH (m:PaymentMethod {payment_method_id: $id}) RETURN m.balance AS b",
                     id=payment_method_id)["b"])


def audit_count(driver: Any) -> int:
    return int(one(driver, "MATCH (e:AuditEvent) RETURN count(e) AS n")["n"])


# ----------------------------------------------------------------------------- cancel_order
def test_cancelling_a_pending_gift_card_order_refunds_the_card_at_once_with_an_audit_record(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given the owner's pending order, paid $152.56 by a gift card holding $24.00
    proposal = proposed(propose(graph, settings, GIFT_CARD_OWNER, "cancel_order",
                                {"order_id": GIFT_CARD_ORDER, "reason": "no longer needed"}))
    assert proposal["amount"] == 152.56 and proposal["requires_approval"] is False

    # When the customer confirms
    result = execute(graph, settings, GIFT_CARD_OWNER, proposal)

    # Then the order is cancelled, the total refunded to the card immediately, and audited
    assert result.status is TaskStatus.SUCCESS and result.data is not None
    assert result.data.message == (f"Order {GIFT_CARD_ORDER} is cancelled. $152.56 has been refunded to "
                                      "your gift card (gift_card_6369065); it is available now.")
    state = order_state(neo4j_driver, GIFT_CARD_ORDER)
    assert state["status"] == "cancelled"
    refunds = [(r["amount"], r["method"], r["seq"]) for r in state["refunds"]]
    assert refunds == [(152.56, "gift_card_6369065", 2)]
    assert balance(neo4j_driver, "gift_card_6369065") == 176.56
    audit = one(neo4j_driver, """
        MATCH (:Customer {customer_id: $customer})-[:HAS_AUDIT]->(e:AuditEvent)
              <-[:HAS_AUDIT]-(:Order {order_id: $order})
        RETURN e{.*} AS e""", customer=GIFT_CARD_OWNER, order=GIFT_CARD_ORDER)["e"]
    assert audit["action"] == "cancel_order" and audit["actor_customer_id"] == GIFT_CARD_OWNER
    assert audit["idempotency_key"] == proposal["idempotency_key"]
    before = {"order_id": GIFT_CARD_ORDER, "status": "pending", "balances": {"gift_card_6369065": 24.0}}
    assert json.loads(audit["before_json"]) == before
    assert json.loads(audit["after_json"])["refund"]["balance"] == 176.56
    assert audit["at"].startswith("2024-07-01T")


def test_cancelling_a_pending_card_order_refunds_the_card_in_5_to_7_business_days(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given the owner's pending order paid $53.43 by credit card
    proposal = proposed(propose(graph, settings, CARD_OWNER, "cancel_order",
                                {"order_id": CARD_ORDER, "reason": "ordered by mistake"}))

    # When
    result = execute(graph, settings, CARD_OWNER, proposal)

    # Then
    assert result.data is not None and "within 5 to 7 business days" in result.data.message
    state = order_state(neo4j_driver, CARD_ORDER)
    assert state["status"] == "cancelled" and state["audits"] == 1
    assert [(r["amount"], r["method"]) for r in state["refunds"]] == [(53.43, "credit_card_3577130")]


def test_a_processed_order_cannot_be_cancelled_and_nothing_is_written(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any) -> None:
    # When the owner asks to cancel a shipped order
    result = propose(graph, settings, PROCESSED_OWNER, "cancel_order",
                     {"order_id": PROCESSED_ORDER, "reason": "no longer needed"})

    # Then the refusal says why and what to do instead, and the order is as it was
    assert result.error is not None and result.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert result.error.message.startswith(
        f"Order {PROCESSED_ORDER} has already shipped, so it can no longer be cancelled. You can return it")
    assert order_state(neo4j_driver, PROCESSED_ORDER) == {"status": "processed", "refunds": [], "audits": 0}


def test_an_order_that_shipped_after_the_proposal_is_not_cancelled(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a cancellation proposed while pending, and the order shipped before the yes
    proposal = proposed(propose(graph, settings, CARD_OWNER, "cancel_order",
                                {"order_id": CARD_ORDER, "reason": "no longer needed"}))
    neo4j_driver.execute_query("MATCH (o:Order {order_id: $id}) SET o.status = 'processed'", id=CARD_ORDER)

    # When the customer confirms
    result = execute(graph, settings, CARD_OWNER, proposal)

    # Then the policy is checked again on the current order, and nothing is written
    assert result.error is not None and result.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "has already shipped" in result.error.message
    assert order_state(neo4j_driver, CARD_ORDER) == {"status": "processed", "refunds": [], "audits": 0}


def test_another_customers_order_looks_exactly_like_an_order_that_does_not_exist(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a customer naming someone else's pending order, and an order id nobody has
    args = {"order_id": GIFT_CARD_ORDER, "reason": "no longer needed"}

    # When they propose and even execute a proposal for it
    theirs = propose(graph, settings, CARD_OWNER, "cancel_order", args)
    nobodys = propose(graph, settings, CARD_OWNER, "cancel_order", {**args, "order_id": "#W0000000"})
    forged = {"action": "cancel_order", "args": args, "confirmation_id": confirmation(), "amount": 152.56,
              "refund_payment_method_id": "gift_card_6369065"}
    executed = execute(graph, settings, CARD_OWNER, forged)

    # Then all three fail as "not in your account", with nothing that tells the order exists
    assert theirs.error is not None and executed.error is not None and nobodys.error is not None
    assert theirs.error.type is executed.error.type is ErrorType.NO_RESULTS
    not_found = f"No order {GIFT_CARD_ORDER} was found in your account."
    assert theirs.error.message == executed.error.message == not_found
    assert nobodys.error.message == "No order #W0000000 was found in your account."
    assert order_state(neo4j_driver, GIFT_CARD_ORDER) == {"status": "pending", "refunds": [], "audits": 0}
    assert audit_count(neo4j_driver) == 0


# ----------------------------------------------------------------------------- return_items
def test_delivered_items_are_returned_with_the_refund_to_a_gift_card(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given earbuds delivered on 2024-06-16, refunded to a gift card
    proposal = proposed(propose(graph, settings, RETURNER, "return_items", {
        "order_id": RECENT_ORDER, "item_ids": [EARBUDS], "payment_method_id": RETURNER_GIFT_CARD}))
    assert proposal["amount"] == 258.84 and proposal["refund_payment_method_id"] == RETURNER_GIFT_CARD

    # When
    result = execute(graph, settings, RETURNER, proposal)

    # Then the return is requested for that item; the refund waits for the items (no transaction yet)
    assert result.status is TaskStatus.SUCCESS and result.data is not None
    assert result.data.summary[0].startswith(
        f"Return requested for order {RECENT_ORDER}: Wireless Earbuds")
    row = one(neo4j_driver, """
        MATCH (o:Order {order_id: $id})-[:HAS_LINE]->(l:OrderLine)
        WITH o, l ORDER BY l.line_no
        RETURN o.status AS status, o.return_amount AS amount, o.return_payment_method_id AS method,
               o.return_items AS items, collect([l.item_id, coalesce(l.return_requested, false)]) AS lines""",
              id=RECENT_ORDER)
    assert row == {"status": "return requested", "amount": 258.84, "method": RETURNER_GIFT_CARD,
                   "items": [EARBUDS], "lines": [[EARBUDS, True], ["7848293342", False]]}
    assert order_state(neo4j_driver, RECENT_ORDER)["refunds"] == []
    assert balance(neo4j_driver, RETURNER_GIFT_CARD) == 30.0


def test_items_delivered_months_ago_can_be_returned_because_the_policy_has_no_return_window(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given an item delivered on 2024-01-24, five months before the store date
    proposal = proposed(propose(graph, settings, OLD_OWNER, "return_items",
                                {"order_id": OLD_ORDER, "item_ids": [OLD_ITEM]}))

    # When the owner confirms its return
    result = execute(graph, settings, OLD_OWNER, proposal)

    # Then the return is requested
    assert result.status is TaskStatus.SUCCESS, result.error
    assert order_state(neo4j_driver, OLD_ORDER)["status"] == "return requested"


# ------------------------------------------------------------------------------ addresses
def test_a_pending_orders_shipping_address_changes_and_the_default_address_stays(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given
    proposal = proposed(propose(graph, settings, RETURNER, "change_order_address",
                                {"order_id": RETURNER_PENDING, "address": NEW_ADDRESS}))

    # When
    result = execute(graph, settings, RETURNER, proposal)

    # Then
    assert result.data is not None
    assert result.data.message == (f"Done: order {RETURNER_PENDING} will now ship to 77 Harbor View, "
                                      "Unit 5, Portland, OR 97201, USA.")
    shipping = one(neo4j_driver, "MATCH (:Order {order_id: $id})-[:SHIPS_TO]->(a) RETURN a{.*} AS a",
                   id=RETURNER_PENDING)["a"]
    assert shipping == {**NEW_ADDRESS, "address_id": f"order:{RETURNER_PENDING}"}
    default = one(neo4j_driver,
                  "MATCH (:Customer {customer_id: $id})-[:HAS_DEFAULT_ADDRESS]->(a) RETURN a.city AS c",
                  id=RETURNER)
    assert default == {"c": "San Diego"}


def test_the_default_address_changes_and_placed_orders_keep_theirs(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given
    before = one(neo4j_driver, "MATCH (:Order {order_id: $id})-[:SHIPS_TO]->(a) RETURN a{.*} AS a",
                 id=RETURNER_PENDING)["a"]
    proposal = proposed(propose(graph, settings, RETURNER, "update_default_address",
                                {"address": NEW_ADDRESS}))

    # When
    result = execute(graph, settings, RETURNER, proposal)

    # Then the profile has the new address (and its zip, used to verify identity); orders do not
    assert result.data is not None
    assert result.data.message.startswith("Done: your default address is now 77 Harbor")
    row = one(neo4j_driver, """
        MATCH (c:Customer {customer_id: $id})-[:HAS_DEFAULT_ADDRESS]->(a) RETURN a{.*} AS a, c.zip AS zip""",
              id=RETURNER)
    assert row == {"a": {**NEW_ADDRESS, "address_id": f"customer:{RETURNER}"}, "zip": "97201"}
    after = one(neo4j_driver, "MATCH (:Order {order_id: $id})-[:SHIPS_TO]->(a) RETURN a{.*} AS a",
                id=RETURNER_PENDING)["a"]
    assert after == before


# ----------------------------------------------------------------------------- exactly once
def test_executing_the_same_proposal_twice_applies_it_once(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a confirmed cancellation, carried out
    proposal = proposed(propose(graph, settings, GIFT_CARD_OWNER, "cancel_order",
                                {"order_id": GIFT_CARD_ORDER, "reason": "no longer needed"}))
    first = execute(graph, settings, GIFT_CARD_OWNER, proposal)

    # When the same request is replayed
    second = execute(graph, settings, GIFT_CARD_OWNER, proposal)

    # Then the same answer comes back and the refund happened once
    assert second.status is TaskStatus.SUCCESS and second.data == first.data
    state = order_state(neo4j_driver, GIFT_CARD_ORDER)
    assert (len(state["refunds"]), state["audits"]) == (1, 1)
    assert balance(neo4j_driver, "gift_card_6369065") == 176.56


def test_with_its_dynamodb_record_lost_a_replay_still_applies_once(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, moto_endpoint: str,
        reseed_tau: None) -> None:
    # Given a cancellation carried out, then every idempotency record of this tool deleted
    proposal = proposed(propose(graph, settings, CARD_OWNER, "cancel_order",
                                {"order_id": CARD_ORDER, "reason": "no longer needed"}))
    first = execute(graph, settings, CARD_OWNER, proposal)
    dynamodb = boto3.client("dynamodb", endpoint_url=moto_endpoint, region_name="us-east-1")
    records = dynamodb.scan(TableName=settings.idempotency_table)["Items"]
    for item in [i for i in records if i["id"]["S"].startswith(KEY_PREFIX)]:
        dynamodb.delete_item(TableName=settings.idempotency_table, Key={"id": item["id"]})

    # When the request is replayed
    second = execute(graph, settings, CARD_OWNER, proposal)

    # Then the AuditEvent's unique key stops a second refund
    assert second.data == first.data
    state = order_state(neo4j_driver, CARD_ORDER)
    assert (len(state["refunds"]), state["audits"]) == (1, 1)


def test_a_new_confirmation_of_the_same_change_applies_again(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given the default address changed once
    args = {"address": NEW_ADDRESS}
    first = proposed(propose(graph, settings, RETURNER, "update_default_address", args))
    execute(graph, settings, RETURNER, first)

    # When the customer asks and confirms the same change again in a later turn
    again = execute(graph, settings, RETURNER,
                    proposed(propose(graph, settings, RETURNER, "update_default_address", args)))

    # Then it is a new request: carried out and audited again
    assert again.status is TaskStatus.SUCCESS
    assert audit_count(neo4j_driver) == 2


def _concurrently(count: int, work: Any) -> list[ToolResult]:
    results: list[ToolResult] = []
    lock = threading.Lock()
    start = threading.Barrier(count)

    def run() -> None:
        start.wait()
        outcome = work()
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_two_concurrent_executions_of_one_proposal_apply_once(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a confirmed cancellation
    proposal = proposed(propose(graph, settings, GIFT_CARD_OWNER, "cancel_order",
                                {"order_id": GIFT_CARD_ORDER, "reason": "ordered by mistake"}))

    # When two workers execute it at the same moment
    results = _concurrently(2, lambda: execute(graph, settings, GIFT_CARD_OWNER, proposal))

    # Then one applies it; the other gets the same result or is told to retry - and a retry replays
    assert len(results) == 2
    succeeded = [r for r in results if r.status is TaskStatus.SUCCESS]
    busy = [r for r in results if r.error is not None]
    assert succeeded
    assert all(r.error.type is ErrorType.TRANSIENT and r.error.retryable for r in busy if r.error)
    retried = execute(graph, settings, GIFT_CARD_OWNER, proposal)
    assert retried.data == succeeded[0].data
    state = order_state(neo4j_driver, GIFT_CARD_ORDER)
    assert (len(state["refunds"]), state["audits"]) == (1, 1)
    assert balance(neo4j_driver, "gift_card_6369065") == 176.56


def test_concurrent_executions_without_the_dynamodb_guard_still_apply_once(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a confirmed cancellation and no idempotency record to protect it
    proposal = proposed(propose(graph, settings, GIFT_CARD_OWNER, "cancel_order",
                                {"order_id": GIFT_CARD_ORDER, "reason": "ordered by mistake"}))

    # When four workers execute it at the same moment, each straight against Neo4j
    results = _concurrently(4, lambda: execute(graph, settings, GIFT_CARD_OWNER, proposal,
                                               idempotency=DirectRunner()))

    # Then all four report the one execution: the customer lock and the unique audit key serialise them
    assert [r.status for r in results] == [TaskStatus.SUCCESS] * 4, [r.error for r in results]
    assert len({r.data.audit_id for r in results if r.data}) == 1
    state = order_state(neo4j_driver, GIFT_CARD_ORDER)
    assert (len(state["refunds"]), state["audits"]) == (1, 1)
    assert balance(neo4j_driver, "gift_card_6369065") == 176.56


class CommitsBetweenTheTwoLookups(Neo4jGraph):
    """The real store, with one interleaving forced: the first fact read of an execution finds
    no audit yet, and a concurrent execution of the same request commits before its facts are
    read (what read committed allows inside one query, and what four racing workers once hit)."""

    def __init__(self, store: Neo4jGraph, concurrent: Any) -> None:
        super().__init__(store.driver)
        self._concurrent, self.raced = concurrent, False

    def read(self, cypher: str, params: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
        if self.raced or "AuditEvent" not in cypher:
            return super().read(cypher, params, **kwargs)
        self.raced = True
        self._concurrent()
        return [{**row, "done": None} for row in super().read(cypher, params, **kwargs)]


def test_an_execution_that_lands_between_the_audit_and_the_facts_lookups_is_replayed_not_refused(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a confirmed cancellation, and a worker whose read sees the order cancelled by the same
    # request an instant after it looked for that request's audit
    proposal = proposed(propose(graph, settings, GIFT_CARD_OWNER, "cancel_order",
                                {"order_id": GIFT_CARD_ORDER, "reason": "ordered by mistake"}))
    first: list[ToolResult] = []
    racing = CommitsBetweenTheTwoLookups(graph, lambda: first.append(
        execute(graph, settings, GIFT_CARD_OWNER, proposal, idempotency=DirectRunner())))

    # When that worker executes it
    second = execute(racing, settings, GIFT_CARD_OWNER, proposal, idempotency=DirectRunner())

    # Then it reports the one execution rather than "the order is already cancelled"
    assert racing.raced and first[0].status is TaskStatus.SUCCESS
    assert second.status is TaskStatus.SUCCESS, second.error
    assert second.data == first[0].data
    state = order_state(neo4j_driver, GIFT_CARD_ORDER)
    assert (len(state["refunds"]), state["audits"]) == (1, 1)


# ------------------------------------------------------------- exchanges, item and payment changes
AARAV, AARAV_GIFT_CARD = "aarav_nguyen_7344", "gift_card_2742113"  # gift card balance 22.00; PayPal
AARAV_DELIVERED = "#W7728728"  # Wireless Earbuds 8555936349 $226.49, Hiking Boots 1437889264 $258.09
AARAV_PENDING = "#W2443586"  # Keyboard 9690244451 (no longer available), the same boots, a Garden Hose
BOOTS, LEATHER_BOOTS = "1437889264", "3613716226"  # size 7 synthetic $258.09 -> size 8 synthetic $253.54
WATERPROOF_BOOTS = "3812493782"  # size 7, leather, waterproof, $244.34
EARBUDS_8H, EARBUDS_DEARER, EARBUDS_GONE = "8555936349", "9580569596", "2499294441"  # $226.49, $257.38, n/a
HOSE, BLUE_HOSE = "3369928769", "9829827210"  # $97.35 -> $90.43
OMAR_GIFT_CARD = "gift_card_3749819"  # balance 91.00; CARD_ORDER was paid $53.43 by credit_card_3577130

EXCHANGE = {"order_id": AARAV_DELIVERED, "item_ids": [BOOTS, EARBUDS_8H],
            "new_item_ids": [WATERPROOF_BOOTS, EARBUDS_8H], "payment_method_id": AARAV_GIFT_CARD}
MODIFY = {"order_id": AARAV_PENDING, "item_ids": [HOSE, BOOTS], "new_item_ids": [BLUE_HOSE, LEATHER_BOOTS],
          "payment_method_id": AARAV_GIFT_CARD}
CHANGE_PAYMENT = {"order_id": CARD_ORDER, "payment_method_id": OMAR_GIFT_CARD}


def order_record(driver: Any, order_id: str) -> dict[str, Any]:
    """The order's own properties, its entries, its lines with their variants, and its audits."""
    return one(driver, """
        MATCH (o:Order {order_id: $id})
        CALL (o) { OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction)-[:USING]->(m:PaymentMethod)
                   WITH t, m ORDER BY t.seq
                   RETURN collect([t.seq, t.type, t.amount, m.payment_method_id]) AS entries }
        CALL (o) { MATCH (o)-[:HAS_LINE]->(l:OrderLine)-[:OF_VARIANT]->(v:Variant)
                   WITH l, v ORDER BY l.line_no
                   RETURN collect([l.item_id, l.price, l.options_json, v.item_id]) AS lines }
        CALL (o) { OPTIONAL MATCH (o)-[:HAS_AUDIT]->(e:AuditEvent) RETURN count(e) AS audits }
        RETURN o{.*} AS order, entries, lines, audits""", id=order_id)


def customer_record(driver: Any, customer_id: str) -> dict[str, Any]:
    """Everything of the customer a write could touch: orders, entries, lines, balances, audits."""
    return one(driver, """
        MATCH (c:Customer {customer_id: $id})
        CALL (c) { MATCH (c)-[:HAS_PAYMENT_METHOD]->(m) WITH m ORDER BY m.payment_method_id
                   RETURN collect([m.payment_method_id, m.balance]) AS balances }
        CALL (c) { MATCH (c)-[:PLACED]->(o:Order)-[:HAS_LINE]->(l:OrderLine)-[:OF_VARIANT]->(v)
                   WITH o, l, v ORDER BY o.order_id, l.line_no
                   RETURN collect([o{.*}, l{.*}, v.item_id]) AS lines }
        CALL (c) { MATCH (c)-[:PLACED]->(:Order)-[:HAS_TRANSACTION]->(t)-[:USING]->(m)
                   WITH t, m ORDER BY t.transaction_id
                   RETURN collect([t{.*}, m.payment_method_id]) AS entries }
        CALL (c) { OPTIONAL MATCH (c)-[:HAS_AUDIT]->(e) RETURN count(e) AS audits }
        RETURN balances, lines, entries, audits""", id=customer_id)


def test_an_exchange_records_the_request_with_the_reference_fields_and_moves_no_money(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a delivered order: the boots for the waterproof leather pair, the earbuds for the same
    proposal = proposed(propose(graph, settings, AARAV, "exchange_items", EXCHANGE))
    assert proposal["summary"][0].startswith(
        f"Exchange in order {AARAV_DELIVERED}: Hiking Boots (7, synthetic, waterproof: no) -> "
        "(7, leather, waterproof: yes), $258.09 -> $244.34;")
    assert proposal["summary"][1] == ("Price difference: $13.75 is refunded to your gift card "
                                      f"({AARAV_GIFT_CARD}).")

    # When the customer confirms
    result = execute(graph, settings, AARAV, proposal)

    # Then the order holds the request exactly as the reference records it, and nothing else moved
    assert result.status is TaskStatus.SUCCESS, result.error
    record = order_record(neo4j_driver, AARAV_DELIVERED)
    assert {k: v for k, v in record["order"].items() if k.startswith("exchange_") or k == "status"} == {
        "status": "exchange requested", "exchange_items": sorted([BOOTS, EARBUDS_8H]),
        "exchange_new_items": sorted([WATERPROOF_BOOTS, EARBUDS_8H]),
        "exchange_payment_method_id": AARAV_GIFT_CARD, "exchange_price_difference": -13.75,
        "exchange_requested_at": record["order"]["exchange_requested_at"]}
    assert record["order"]["exchange_requested_at"].startswith("2024-07-01T")
    assert record["entries"] == [[1, "payment", 484.58, "paypal_7859314"]] and record["audits"] == 1
    assert [line[0] for line in record["lines"]] == [EARBUDS_8H, BOOTS]
    assert balance(neo4j_driver, AARAV_GIFT_CARD) == 22.0


def test_a_modification_refunds_the_difference_rewrites_and_relinks_the_lines(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a pending order: the hose for the blue one, the boots for size 8, refunded to a gift card
    proposal = proposed(propose(graph, settings, AARAV, "modify_items", MODIFY))
    assert proposal["amount"] == 11.47 and proposal["price_difference"] == -11.47

    # When the customer confirms
    result = execute(graph, settings, AARAV, proposal)

    # Then one refund entry, the card credited, the lines now the new items, the status the reference's
    assert result.status is TaskStatus.SUCCESS, result.error
    record = order_record(neo4j_driver, AARAV_PENDING)
    assert record["order"]["status"] == "pending (item modified)"
    assert record["order"]["total"] == 580.48
    assert record["entries"] == [[1, "payment", 591.95, "paypal_7859314"],
                                 [2, "refund", 11.47, AARAV_GIFT_CARD]]
    assert [(item, price, variant) for item, price, _, variant in record["lines"]] == [
        ("9690244451", 236.51, "9690244451"), (LEATHER_BOOTS, 253.54, LEATHER_BOOTS),
        (BLUE_HOSE, 90.43, BLUE_HOSE)]
    assert json.loads(record["lines"][2][2]) == {"length": "25ft", "material": "vinyl", "color": "blue"}
    assert balance(neo4j_driver, AARAV_GIFT_CARD) == 33.47


def test_after_a_modification_the_order_can_no_longer_be_modified_cancelled_or_readdressed(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given the order's items modified once
    execute(graph, settings, AARAV, proposed(propose(graph, settings, AARAV, "modify_items", MODIFY)))
    before = customer_record(neo4j_driver, AARAV)

    # When the customer asks for a second item change, a cancellation and a new address
    again = propose(graph, settings, AARAV, "modify_items", {**MODIFY, "item_ids": [BLUE_HOSE],
                                                            "new_item_ids": [HOSE]})
    cancel = propose(graph, settings, AARAV, "cancel_order", {"order_id": AARAV_PENDING,
                                                             "reason": "no longer needed"})
    readdress = propose(graph, settings, AARAV, "change_order_address", {"order_id": AARAV_PENDING,
                                                                        "address": NEW_ADDRESS})

    # Then each is refused with the rule, and nothing changed
    for refusal in (again, cancel, readdress):
        assert refusal.error is not None and refusal.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert again.error is not None and "Items can be modified only once" in again.error.message
    assert customer_record(neo4j_driver, AARAV) == before


def test_a_payment_change_pays_with_the_new_method_and_refunds_the_original(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given a pending order paid $53.43 by card, moved to a gift card holding $91.00
    proposal = proposed(propose(graph, settings, CARD_OWNER, "change_payment", CHANGE_PAYMENT))
    assert proposal["requires_approval"] is False

    # When
    result = execute(graph, settings, CARD_OWNER, proposal)

    # Then a payment by the gift card, a refund to the card, the card debited, the order still pending
    assert result.status is TaskStatus.SUCCESS, result.error
    record = order_record(neo4j_driver, CARD_ORDER)
    card = "credit_card_3577130"
    assert record["entries"] == [[1, "payment", 53.43, card], [2, "payment", 53.43, OMAR_GIFT_CARD],
                                 [3, "refund", 53.43, card]]
    assert record["order"]["status"] == "pending" and balance(neo4j_driver, OMAR_GIFT_CARD) == 37.57


@pytest.mark.parametrize(("customer", "action", "args"), [
    (AARAV, "exchange_items", EXCHANGE),
    (AARAV, "modify_items", MODIFY),
    (CARD_OWNER, "change_payment", CHANGE_PAYMENT),
])
@pytest.mark.parametrize("guard", ["dynamodb", "neo4j only"])
def test_each_new_write_applies_once_when_its_confirmation_is_executed_twice(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None,
        customer: str, action: str, args: dict[str, Any], guard: str) -> None:
    # Given a confirmed change, carried out
    runner = {"idempotency": DirectRunner()} if guard == "neo4j only" else {}
    proposal = proposed(propose(graph, settings, customer, action, args))
    first = execute(graph, settings, customer, proposal, **runner)
    after_first = customer_record(neo4j_driver, customer)

    # When the same confirmation is executed again
    second = execute(graph, settings, customer, proposal, **runner)

    # Then it answers like the first time and nothing is written again
    assert first.status is TaskStatus.SUCCESS and second.data == first.data
    assert customer_record(neo4j_driver, customer) == after_first
    assert after_first["audits"] == 1


RULE = ErrorType.BUSINESS_RULE_VIOLATION


def earbuds_to(new_item_id: str) -> dict[str, Any]:
    return {**EXCHANGE, "item_ids": [EARBUDS_8H], "new_item_ids": [new_item_id]}


BAD_INPUT = [
    pytest.param(AARAV, "exchange_items", {**EXCHANGE, "item_ids": ["9999999999"], "new_item_ids": [BOOTS]},
                 ErrorType.VALIDATION, f"Order {AARAV_DELIVERED} has no item 9999999999.",
                 id="item-not-in-order"),
    pytest.param(AARAV, "exchange_items", earbuds_to(BOOTS), RULE,
                 "can only be changed to another option of the same product",
                 id="variant-of-another-product"),
    pytest.param(AARAV, "exchange_items", earbuds_to(EARBUDS_GONE), RULE, "is not available",
                 id="unavailable-variant"),
    pytest.param(AARAV, "exchange_items", earbuds_to(EARBUDS_DEARER), RULE,
                 "does not cover the price difference of $30.89", id="gift-card-short-of-the-difference"),
    pytest.param(AARAV, "modify_items", {**MODIFY, "order_id": AARAV_DELIVERED, "item_ids": [BOOTS],
                                         "new_item_ids": [LEATHER_BOOTS]},
                 ErrorType.BUSINESS_RULE_VIOLATION, "A delivered order's items can be exchanged instead",
                 id="modify-a-delivered-order"),
    pytest.param(AARAV, "exchange_items", {**EXCHANGE, "order_id": AARAV_PENDING},
                 ErrorType.BUSINESS_RULE_VIOLATION, "A pending order's items can be modified instead",
                 id="exchange-a-pending-order"),
    pytest.param(AARAV, "change_payment", {"order_id": AARAV_PENDING, "payment_method_id": AARAV_GIFT_CARD},
                 ErrorType.BUSINESS_RULE_VIOLATION, "does not cover the order's payment of $591.95",
                 id="gift-card-short-of-the-order"),
    pytest.param(CARD_OWNER, "change_payment", {**CHANGE_PAYMENT, "payment_method_id": "credit_card_3577130"},
                 RULE, "can only be changed to a different one", id="same-method"),
    pytest.param(AARAV, "exchange_items", {**EXCHANGE, "payment_method_id": OMAR_GIFT_CARD},
                 ErrorType.VALIDATION, "is not one of your payment methods", id="someone-elses-method"),
]


@pytest.mark.parametrize(("customer", "action", "args", "error_type", "words"), BAD_INPUT)
def test_bad_input_is_refused_with_the_rule_and_writes_nothing(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, customer: str, action: str,
        args: dict[str, Any], error_type: ErrorType, words: str) -> None:
    # Given the customer's records
    before = customer_record(neo4j_driver, customer)

    # When the change is proposed, and a forged confirmation of it is executed
    refusal = propose(graph, settings, customer, action, args)
    forged = execute(graph, settings, customer, {"action": action, "args": args,
                                                 "confirmation_id": confirmation()})

    # Then both are refused with the rule, and nothing at all was written
    for result in (refusal, forged):
        assert result.error is not None and result.error.type is error_type, result.error
        assert words in result.error.message
    assert customer_record(neo4j_driver, customer) == before


def test_a_variant_sold_out_after_the_proposal_is_not_exchanged_and_nothing_is_written(
        graph: Neo4jGraph, settings: tool.ActionSettings, neo4j_driver: Any, reseed_tau: None) -> None:
    # Given an exchange proposed, then the chosen boots became unavailable before the yes
    proposal = proposed(propose(graph, settings, AARAV, "exchange_items", EXCHANGE))
    neo4j_driver.execute_query("MATCH (v:Variant {item_id: $id}) SET v.available = false",
                               id=WATERPROOF_BOOTS)
    before = customer_record(neo4j_driver, AARAV)

    # When the customer confirms
    result = execute(graph, settings, AARAV, proposal)

    # Then the policy is checked again: refused, with the other options, and nothing is written
    assert result.error is not None and result.error.type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "is not available" in result.error.message and "The available options of Hiking Boots" in (
        result.error.message)
    assert customer_record(neo4j_driver, AARAV) == before
