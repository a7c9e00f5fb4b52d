"""DynamoDB writes and checkpoint bytes per turn over one long session (20 turns by default:
the history is compressed after 10, so the second half shows whether the checkpoint keeps
growing).

Counted with botocore's `provide-client-params` event on the two DynamoDB clients the service
uses (its own and the checkpointer's): every write call, the ones that are the turn's own state
(checkpoint items and the session lease) apart from the per-customer rate-limit counter, and the
bytes of the checkpoint items by DynamoDB's item-size rule.
"""

from __future__ import annotations

import statistics
import uuid
from collections.abc import Sequence
from typing import Any

from devstack.bench.stats import ratio

WRITE_CALLS = frozenset({"PutItem", "UpdateItem", "BatchWriteItem", "DeleteItem", "TransactWriteItems"})
SESSION_TEXTS = ("where is my order #W4435622?", "what items are in it?", "what is your return policy?",
                 "thanks!", "show my orders")
SESSION_CUSTOMER = "james_li_5688"


def item_bytes(value: Any) -> int:
    """DynamoDB's item size rule: attribute names plus value sizes (binary counted raw)."""
    if isinstance(value, dict):
        if len(value) == 1:
            (kind, inner), = value.items()
            if kind in {"S", "N"}:
                return len(str(inner).encode())
            if kind == "B":
                return len(inner) if isinstance(inner, bytes | bytearray) else len(str(inner))
            if kind in {"M", "L"}:
                return item_bytes(inner)
        return sum(len(k.encode()) + item_bytes(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(item_bytes(v) for v in value)
    return len(str(value).encode())


class WriteCounter:
    """Counts DynamoDB write calls and checkpoint bytes as botocore hands them to the wire."""

    def __init__(self) -> None:
        self.writes = 0
        self.turn_writes = 0
        self.checkpoint_bytes = 0

    def __call__(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name not in WRITE_CALLS:
            return
        self.writes += 1
        table = str(params.get("TableName", ""))
        if not table.endswith("-ratelimits"):
            self.turn_writes += 1
        if table.endswith("-checkpoints"):
            self.checkpoint_bytes += item_bytes(params.get("Item") or {})
        elif model.name == "BatchWriteItem":
            self.checkpoint_bytes += sum(item_bytes(r.get("PutRequest", {}).get("Item") or {})
                                         for rs in params["RequestItems"].values() for r in rs)

    def snapshot(self) -> tuple[int, int, int]:
        return self.writes, self.turn_writes, self.checkpoint_bytes


def session_figures(by_turn: Sequence[dict[str, int]]) -> dict[str, Any]:
    """The section's figures from the per-turn counts."""
    sizes = [t["checkpoint_bytes"] for t in by_turn]
    half = len(sizes) // 2
    return {
        "turn_state_writes_per_turn_max": max(t["turn_state_writes"] for t in by_turn),
        "writes_per_turn_with_rate_limit_max": max(t["writes"] for t in by_turn),
        "checkpoint_bytes_per_turn_median": statistics.median(sizes),
        "checkpoint_bytes_per_turn_max": max(sizes),
        "checkpoint_bytes_second_half_over_first": ratio(statistics.median(sizes[half:]),
                                                         statistics.median(sizes[:half])) if half else None,
        "checkpoint_bytes_total": sum(sizes),
        "turns": len(by_turn),
        "by_turn": list(by_turn),
    }


def bench_dynamodb(turns: int = 20) -> dict[str, Any]:
    """One session of `turns` turns; writes and checkpoint bytes of each turn."""
    from csagent import runtime
    from csagent.domain.models import Principal
    from csagent.service.schemas import MessageIn

    service = runtime.conversation_service()
    counter = WriteCounter()
    clients = (runtime.dynamodb_client(), runtime.checkpointer().client)
    for client in clients:
        client.meta.events.register("provide-client-params.dynamodb.*", counter)
    try:
        principal = Principal(subject="bench", customer_id=SESSION_CUSTOMER)
        session = f"bench-ddb-{uuid.uuid4().hex[:8]}"
        by_turn = []
        for i in range(turns):
            before = counter.snapshot()
            service.handle_message(principal, session, MessageIn(text=SESSION_TEXTS[i % len(SESSION_TEXTS)]))
            after = counter.snapshot()
            by_turn.append({"turn": i + 1, "writes": after[0] - before[0],
                            "turn_state_writes": after[1] - before[1],
                            "checkpoint_bytes": after[2] - before[2]})
    finally:
        for client in clients:
            client.meta.events.unregister("provide-client-params.dynamodb.*", counter)
    return session_figures(by_turn)
