"""Cypher for customer actions: the facts an action is decided on, and the one guarded write
transaction that applies it with its audit record. Everything goes through the `GraphStore`
port (`read` / `write`); nothing here imports the Neo4j driver.

Facts
    `ORDER_FACTS` / `CUSTOMER_FACTS` project, as one map, every property the policy reads:
    the order (`o{.*}`), its shipping address, its lines with their delivery dates, its
    transactions, every variant of the products its lines hold (what an item can be exchanged
    or modified to), and the customer's payment methods (or the customer and the default
    address). Node projections with `{.*}` never hold nulls (Neo4j stores no null property),
    and the one derived value that can be absent (a line's delivery date) is added only when
    present, so the map compares with `=` reliably (`null = null` is null in Cypher).

The write transaction (one statement, so one transaction, via `GraphStore.write`); one for all
six order actions (`WRITE_ORDER`, driven by the plan's parameters) and one for the default
address
    1. locks the customer node (`SET c.action_lock ... REMOVE`): every action of one customer
       is serialised, so a second writer waits and then reads what the first committed;
    2. re-reads the facts and applies the change only if they equal the facts the policy was
       evaluated on (`$expected`, compare-and-set) - the order may have changed since the
       proposal or since the read a moment ago; the caller re-reads and re-checks then;
    3. MERGEs the `AuditEvent` on its idempotency key, which a uniqueness constraint covers
       (`AUDIT_SCHEMA`), and makes the change only when this transaction created the event.
       This is the second guard against repeating an effect, independent of the DynamoDB
       idempotency record: even if that record is lost or expired, a replay finds the event
       and changes nothing (belt and braces).
    4. (order actions) sets the order's properties (`$order_set`: the status and the dataset's
       fields), appends the payment-history entries (`Transaction`, `-[:USING]->` the customer's
       method), sets gift-card balances, updates order lines (and relinks `OF_VARIANT` when a
       line's item changes) and the shipping address - whichever the plan has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from csagent.actions.policy import ActionName
from csagent.ports import GraphStore

AUDIT_SCHEMA: tuple[str, ...] = (
    "CREATE CONSTRAINT audit_idempotency_key IF NOT EXISTS "
    "FOR (e:AuditEvent) REQUIRE e.idempotency_key IS UNIQUE",
    "CREATE CONSTRAINT audit_id IF NOT EXISTS FOR (e:AuditEvent) REQUIRE e.audit_id IS UNIQUE",
)
"""Schema the guard relies on (idempotent). Belongs in `infra/devstack/schema.cypher`."""

# Needs `c` (Customer) and `o` (Order, may be null); adds `facts`.
ORDER_FACTS = """
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_PAYMENT_METHOD]->(m:PaymentMethod)
  WITH m ORDER BY m.payment_method_id
  RETURN collect(m{.*}) AS payment_methods
}
CALL (o) {
  OPTIONAL MATCH (o)-[:SHIPS_TO]->(a:Address)
  RETURN coalesce(head(collect(a{.*})), {}) AS ship_to
}
CALL (o) {
  OPTIONAL MATCH (o)-[:HAS_LINE]->(l:OrderLine)
  OPTIONAL MATCH (s:Shipment)-[:CONTAINS]->(l)
  WITH l, max(s.delivered_at) AS delivered_at ORDER BY l.line_no
  RETURN collect(CASE WHEN delivered_at IS NULL THEN l{.*}
                      ELSE l{.*, delivered_at: delivered_at} END) AS lines
}
CALL (o) {
  OPTIONAL MATCH (o)-[:HAS_TRANSACTION]->(t:Transaction)-[:USING]->(tm:PaymentMethod)
  WITH t, tm ORDER BY t.seq
  RETURN collect(t{.*, payment_method_id: tm.payment_method_id}) AS transactions
}
CALL (o) {
  OPTIONAL MATCH (o)-[:HAS_LINE]->(vl:OrderLine)
  OPTIONAL MATCH (p:Product {product_id: vl.product_id})-[:HAS_VARIANT]->(v:Variant)
  WITH DISTINCT p, v ORDER BY v.item_id
  RETURN collect(v{.*, product_id: p.product_id, product_name: p.name}) AS variants
}
WITH *, CASE WHEN o IS NULL THEN null ELSE {
  customer_id: c.customer_id, order: o{.*}, ship_to: ship_to, lines: lines,
  transactions: transactions, payment_methods: payment_methods, variants: variants} END AS facts
"""

# Needs `c` (Customer); adds `facts`.
CUSTOMER_FACTS = """
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_DEFAULT_ADDRESS]->(a:Address)
  RETURN coalesce(head(collect(a{.*})), {}) AS default_address
}
WITH *, {customer_id: c.customer_id, customer: c{.*}, default_address: default_address} AS facts
"""

# A previous execution of the same request, visible only to the customer who made it.
_DONE = """
OPTIONAL MATCH (done:AuditEvent {idempotency_key: $idempotency_key})
WHERE done.actor_customer_id = $customer_id
"""

READ_ORDER = _DONE + """
WITH done
OPTIONAL MATCH (c:Customer {customer_id: $customer_id})-[:PLACED]->(o:Order {order_id: $order_id})
""" + ORDER_FACTS + """
RETURN facts, done{.*} AS done
"""

READ_CUSTOMER = _DONE + """
WITH done
OPTIONAL MATCH (c:Customer {customer_id: $customer_id})
""" + CUSTOMER_FACTS + """
RETURN CASE WHEN c IS NULL THEN null ELSE facts END AS facts, done{.*} AS done
"""

# Lock the customer, find an earlier execution (any customer: the key is unique).
_LOCK = """
MATCH (c:Customer {customer_id: $customer_id})
SET c.action_lock = true
REMOVE c.action_lock
WITH c
OPTIONAL MATCH (done:AuditEvent {idempotency_key: $idempotency_key})
WITH c, done
"""

# Create the audit event unless the key exists; continue only in the transaction that created it.
_AUDIT = """
  MERGE (e:AuditEvent {{idempotency_key: $idempotency_key}})
  ON CREATE SET e += $audit
  WITH {carry}, e WHERE e.audit_id = $audit.audit_id
"""

_RESULT = """
OPTIONAL MATCH (audit:AuditEvent {idempotency_key: $idempotency_key})
RETURN fresh, found, audit{.*} AS audit
"""


def _order_write(body: str, carry: str) -> str:
    return (_LOCK + "OPTIONAL MATCH (c)-[:PLACED]->(o:Order {order_id: $order_id})" + ORDER_FACTS + """
WITH c, o, o IS NOT NULL AS found, done IS NULL AND o IS NOT NULL AND facts = $expected AS fresh
CALL (c, o, fresh) {
  WITH c, o WHERE fresh
""" + body.replace("{AUDIT}", _AUDIT.format(carry=carry)) + "}\n" + _RESULT)


WRITE_ORDER = _order_write("""
{AUDIT}
  CREATE (c)-[:HAS_AUDIT]->(e), (o)-[:HAS_AUDIT]->(e)
  SET o += $order_set
  WITH c, o
  CALL (c, o) {
    UNWIND $transactions AS t
    MATCH (c)-[:HAS_PAYMENT_METHOD]->(m:PaymentMethod {payment_method_id: t.payment_method_id})
    CREATE (o)-[:HAS_TRANSACTION]->(:Transaction {transaction_id: t.transaction_id, seq: t.seq,
            type: t.type, amount: t.amount, at: t.at})-[:USING]->(m)
  }
  CALL (c) {
    UNWIND $balances AS b
    MATCH (c)-[:HAS_PAYMENT_METHOD]->(m:PaymentMethod {payment_method_id: b.payment_method_id})
    SET m.balance = b.balance
  }
  CALL (o) {
    UNWIND $line_updates AS u
    MATCH (o)-[:HAS_LINE]->(l:OrderLine {line_id: u.line_id})
    SET l += u.props
    WITH l, u WHERE u.item_id IS NOT NULL
    MATCH (v:Variant {item_id: u.item_id})
    OPTIONAL MATCH (l)-[old:OF_VARIANT]->()
    DELETE old
    WITH DISTINCT l, v
    CREATE (l)-[:OF_VARIANT]->(v)
  }
  CALL (o) {
    WITH o WHERE $address IS NOT NULL
    MERGE (o)-[:SHIPS_TO]->(a:Address {address_id: 'order:' + o.order_id})
    SET a += $address
  }
""", carry="c, o")

WRITE_DEFAULT_ADDRESS = _LOCK + CUSTOMER_FACTS + """
WITH c, true AS found, done IS NULL AND facts = $expected AS fresh
CALL (c, fresh) {
  WITH c WHERE fresh
""" + _AUDIT.format(carry="c") + """
  CREATE (c)-[:HAS_AUDIT]->(e)
  MERGE (c)-[:HAS_DEFAULT_ADDRESS]->(a:Address {address_id: 'customer:' + c.customer_id})
  SET a += $address, c.zip = $address.zip
}
""" + _RESULT

WRITES: Mapping[ActionName, str] = {
    action: WRITE_ORDER if action.on_order else WRITE_DEFAULT_ADDRESS for action in ActionName
}


@dataclass(frozen=True)
class FactsRead:
    """The current facts (None: no such order - or customer - for this customer) and the audit
    record of an earlier execution with the same idempotency key, if any."""

    facts: dict[str, Any] | None
    done: dict[str, Any] | None


@dataclass(frozen=True)
class WriteOutcome:
    """`audit` is the key's audit record after the transaction (created by it, or earlier);
    `fresh` False with no audit means the facts had changed and nothing was written."""

    found: bool
    fresh: bool
    audit: dict[str, Any] | None


def read_facts(graph: GraphStore, action: ActionName, customer_id: str, order_id: str | None,
               idempotency_key: str | None = None, *, timeout_s: float | None = None) -> FactsRead:
    """The facts for `action`, scoped to the customer (READ transaction)."""
    cypher = READ_ORDER if action.on_order else READ_CUSTOMER
    rows = graph.read(cypher, {"customer_id": customer_id, "order_id": order_id,
                               "idempotency_key": idempotency_key}, timeout_s=timeout_s, max_rows=1)
    row = rows[0] if rows else {}
    return FactsRead(facts=row.get("facts"), done=row.get("done"))


def apply_write(graph: GraphStore, action: ActionName, params: Mapping[str, Any], *,
                timeout_s: float | None = None) -> WriteOutcome:
    """Run the guarded write transaction of `action` (see the module docstring).

    `params` holds `customer_id`, `order_id`, `idempotency_key`, `expected` (the facts the
    policy approved), `audit` (the AuditEvent's properties) and the action's values
    (`ActionPlan.write_params`: `order_status`, `order_set`, `transactions`, `balances`,
    `line_updates`, `address`).
    """
    rows = graph.write(WRITES[action], dict(params), timeout_s=timeout_s)
    if not rows:  # the customer node itself is gone
        return WriteOutcome(found=False, fresh=False, audit=None)
    row = rows[0]
    return WriteOutcome(found=bool(row.get("found")), fresh=bool(row.get("fresh")), audit=row.get("audit"))


def ensure_audit_schema(graph: GraphStore) -> None:
    """Create the AuditEvent constraints if missing (for tests and stores seeded before them)."""
    for statement in AUDIT_SCHEMA:
        graph.write(statement)
