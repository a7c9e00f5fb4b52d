"""Uploaded documents widen the scope check (csagent.knowledge.scope), with fakes for the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from csagent.guardrails.scope import ScopeResult
from csagent.knowledge.scope import with_uploaded_knowledge

OUT = ScopeResult(False, None, 0.1)
IN = ScopeResult(True, "orders", 0.8)


class Embedder:
    dimension = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class Graph:
    def __init__(self, best: float | None = None, fail: bool = False) -> None:
        self.best, self.fail, self.calls = best, fail, 0

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, **_: Any) -> list[dict[str, Any]]:
        self.calls += 1
        if self.fail:
            raise TimeoutError("store down")
        # Neo4j's vector score is (1 + cos) / 2
        return [{"best": None if self.best is None else (1 + self.best) / 2}]

    def write(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        raise AssertionError("the scope probe never writes")

    def ping(self) -> bool:
        return True


def test_an_in_scope_message_never_reaches_the_store() -> None:
    graph = Graph(best=0.9)
    assert with_uploaded_knowledge(lambda _: IN, graph, Embedder())("where is my order") is IN
    assert graph.calls == 0


def test_an_out_of_scope_message_close_to_an_uploaded_chunk_is_in_scope() -> None:
    verdict = with_uploaded_knowledge(lambda _: OUT, Graph(best=0.6), Embedder())("do you gift wrap?")
    assert (verdict.in_scope, verdict.area, verdict.score) == (True, "knowledge base", 0.6)


def test_far_from_every_uploaded_chunk_or_none_uploaded_stays_out() -> None:
    assert with_uploaded_knowledge(lambda _: OUT, Graph(best=0.2), Embedder())("capital of France") is OUT
    assert with_uploaded_knowledge(lambda _: OUT, Graph(best=None), Embedder())("capital of France") is OUT


def test_a_failing_store_keeps_the_fixed_verdict() -> None:
    assert with_uploaded_knowledge(lambda _: OUT, Graph(fail=True), Embedder())("do you gift wrap?") is OUT
