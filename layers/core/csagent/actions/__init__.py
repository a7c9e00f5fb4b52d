"""Customer actions: the store's seven consequential writes - cancel a pending order, modify its
items, payment method or shipping address, return or exchange delivered items, change the
default address - made safely, each with the effect of the tau-bench retail reference tools.

Two phases. `propose` validates the request, reads the customer's current facts, checks the
store's policy (tau-retail's policy.md, restated as data in `policy.yaml`) and returns what
would change, to be listed back to the customer. `execute` carries out a confirmed proposal
exactly once: it checks the policy again on the current facts, writes the change and its audit
record in one Neo4j transaction, and is idempotent twice over (Powertools on DynamoDB, and a
unique AuditEvent key in Neo4j).

Each action is one module in `kinds` (`kinds/cancel_order.py`, `kinds/return_items.py`, ...): its
typed arguments, its policy checks, its exact effect and the lines the customer reads before and
after it, as one `ActionKind`; `kinds.KINDS` maps every `ActionName` to its kind.

Modules: `policy` (what the actions share: names, the rules, the facts, parsers and common
checks), `kinds` (one module per action), `plan` (the effect as data: `ActionPlan`), `items`
(which of an order's items the customer's words name), `proposals` (phase one: plan and word an
action through its kind; shared wording in `wording.yaml`), `queries` (Cypher), `catalogue` (the
reads that ground a customer's words: a product's variants, the customer's orders and methods),
`execute` (phase two: `csagent.actions.execute.execute`; not re-exported here, where the name
is the module's), `idempotency` (the Powertools adapter). The tool entry is
`csagent.tools.customer_actions`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.actions.policy import ActionName, PolicyRules, load_rules
    from csagent.actions.proposals import ActionProposal, idempotency_key, propose

__all__ = ["ActionName", "ActionProposal", "PolicyRules", "idempotency_key", "load_rules", "propose"]

#: Where each name above is defined. Imported on first use (PEP 562): a turn that only reads
#: (`catalogue`, the customer's orders) never loads the policy, the proposals and the seven kinds.
_HOMES = {"ActionName": "policy", "PolicyRules": "policy", "load_rules": "policy",
          "ActionProposal": "proposals", "idempotency_key": "proposals", "propose": "proposals"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
