"""What a tool may use: the authenticated customer and the ports, nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from csagent.tools.caches import ToolCaches

if TYPE_CHECKING:
    from csagent.ports import Embedder, GraphStore


@dataclass(frozen=True)
class ToolContext:
    """`customer_id` comes from the authenticated session, never from message text. `caches`
    belong to `graph` and `embedder` (the composition root builds them together; see
    `csagent.tools.caches`): a context for another store gets its own."""

    graph: GraphStore
    customer_id: str | None
    embedder: Embedder | None = None
    roles: frozenset[str] = field(default_factory=lambda: frozenset({"customer"}))
    caches: ToolCaches = field(default_factory=ToolCaches)
