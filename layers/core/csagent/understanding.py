"""What the router and planner know about a message: its clauses, intents and entities.

`Understanding` is model-agnostic: the local tier fills it from embeddings and rules; a
Bedrock or vLLM model can fill the same shape later.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Clause:
    text: str
    intent: str
    confidence: float
    entities: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Understanding:
    route: str
    intent: str
    confidence: float
    lang: str = "en"
    entities: dict[str, Any] = field(default_factory=dict)
    clauses: tuple[Clause, ...] = ()

    def clauses_as_dicts(self) -> list[dict[str, Any]]:
        return [asdict(c) for c in self.clauses]
