"""Customer actions: consequential writes (address changes, cancellations, returns) made safely.

Two phases. `propose` validates the request, reads the customer's current facts, checks the
store's policy (the knowledge base's rules, restated as data in `policy.yaml`) and returns what
would change, to be listed back to the customer. `execute` carries out a confirmed proposal
exactly once: it checks the policy again on the current facts, writes the change and its audit
record in one Neo4j transaction, and is idempotent twice over (Powertools on DynamoDB, and a
unique AuditEvent key in Neo4j).

Modules: `policy` (pure rules), `items` (which of an order's items the customer's words name),
`proposals` (phase one and the wording), `queries` (Cypher),
`execute` (phase two: `csagent.actions.execute.execute`; not re-exported here, where the name
is the module's), `idempotency` (the Powertools adapter). The tool entry is
`csagent.tools.customer_actions`.
"""

from csagent.actions.policy import ActionName, PolicyRules, load_rules
from csagent.actions.proposals import ActionProposal, idempotency_key, propose

__all__ = ["ActionName", "ActionProposal", "PolicyRules", "idempotency_key", "load_rules", "propose"]
