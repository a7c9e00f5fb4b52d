"""The roles a generative model plays in a turn, and which of them always see customer data.

Each role has its own chain of models in the settings (`ROUTER_MODEL`, `PLANNER_MODEL`, …,
defaulting to `CHAT_MODEL|SECONDARY_CHAT_MODEL`), its own timeout and its own prompt file.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """Who is asking the model, and for what."""

    ROUTER = "router"            # labels the clauses of a message with intents
    PLANNER = "planner"          # maps a compound message's clauses onto the task catalogue
    TEXT2CYPHER = "text2cypher"  # writes a catalogue query no template covers
    SUMMARISER = "summariser"    # words the reply from the task results
    IMAGE = "image"              # transcribes a label photo or a screenshot


#: Roles whose prompts always carry customer data, whatever the message says: the planner sees
#: the customer's order ids, the summariser their orders, addresses and payments, the image
#: reader a shipping label (name and street address). The router and Text2Cypher carry it only
#: when the message does (decided by `csagent.models.sensitivity.carries_customer_data`).
ALWAYS_CUSTOMER_DATA: frozenset[Role] = frozenset({Role.PLANNER, Role.SUMMARISER, Role.IMAGE})
