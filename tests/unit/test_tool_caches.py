"""What the tools keep between calls (`csagent.tools.caches.ToolCaches`): one per graph store and
embedder, built by the composition root, never shared by two stores or two embedders, stale
after its TTL, cleared by a catalogue change made in this process."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from csagent import runtime
from csagent.caching import TTLCache
from csagent.tools import cypher_catalogue as cc
from csagent.tools.caches import HINT_VALUES_TTL_S, VOCABULARY_TTL_S, ToolCaches
from csagent.tools.context import ToolContext
from csagent.tools.text2cypher.examples import CypherExample, ExampleBank
from csagent.tools.text2cypher.validation import QueryValidator, UnknownValue

_NAME_HINTS = "MATCH (n:`Product`) RETURN DISTINCT n.`name` AS value"


class StoreGraph:
    """A store holding `products` (name -> category): answers the vocabulary query, the value
    check's lookups (nothing matches) and its hint query; counts the reads of each."""

    def __init__(self, products: Mapping[str, str], *, down: bool = False) -> None:
        self.products = dict(products)
        self.down = down
        self.vocabulary_reads = 0
        self.hint_reads = 0
        self.written: list[Mapping[str, Any]] = []

    def read(self, cypher: str, params: Mapping[str, Any] | None = None, *,
             timeout_s: float | None = None, max_rows: int | None = None) -> list[dict[str, Any]]:
        if self.down:
            raise ConnectionError("store unreachable")
        if cypher == cc._VOCABULARY_CYPHER:
            self.vocabulary_reads += 1
            return [{"name": n, "category": c, "texts": []} for n, c in self.products.items()]
        if cypher.startswith(_NAME_HINTS):
            self.hint_reads += 1
            return [{"value": n} for n in self.products]
        if "db.index.vector.queryNodes" in cypher:
            return []  # no example bank in this store: ranked in memory
        return []  # a value lookup: the compared value is not stored

    def explain(self, cypher: str, *, timeout_s: float | None = None) -> Mapping[str, Any]:
        return {"query_type": "r", "notifications": []}

    def write(self, cypher: str, params: Mapping[str, Any] | None = None, *,
              timeout_s: float | None = None) -> list[dict[str, Any]]:
        self.written.append(dict(params or {}))
        return [{"product_id": "p1"}]  # the variant's product (a price change)

    def ping(self) -> bool:
        return not self.down


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _vocabulary(ctx: ToolContext) -> cc.StoreVocabulary:
    return cc.store_vocabulary(ctx.graph, ctx.caches.vocabulary)


def _hint(graph: StoreGraph, caches: ToolCaches, name: str = "Kettle") -> str:
    """The hint the value check gives for a product name the store does not hold."""
    validator = QueryValidator(graph, graph, hint_values=caches.hint_values)
    report = validator.validate(f"MATCH (p:Product) WHERE p.name = '{name}' RETURN p.product_id AS id")
    error = next(e for e in report.errors if isinstance(e, UnknownValue))
    return error.hint or ""


# -- the store's vocabulary -------------------------------------------------------------------
def test_two_stores_each_get_their_own_vocabulary() -> None:
    # Given two stores with different products, each in a tool context of its own
    kettles = ToolContext(graph=StoreGraph({"Electric Kettle": "Kitchen"}), customer_id=None)
    bikes = ToolContext(graph=StoreGraph({"Mountain Bike": "Sports"}), customer_id=None)
    # When each reads its vocabulary, one after the other
    first, second = _vocabulary(kettles), _vocabulary(bikes)
    # Then each names its own store's products, never the other's
    assert first.products == ("Electric Kettle",)
    assert second.products == ("Mountain Bike",)
    assert kettles.caches is not bikes.caches


def test_the_vocabulary_is_read_once_per_ttl() -> None:
    # Given a store whose vocabulary was read at t=0
    clock = Clock()
    graph = StoreGraph({"Electric Kettle": "Kitchen"})
    ctx = ToolContext(graph=graph, customer_id=None,
                      caches=ToolCaches(vocabulary=TTLCache(VOCABULARY_TTL_S, clock=clock)))
    _vocabulary(ctx)
    # When a product is added and the vocabulary is asked for within the TTL, then after it
    graph.products["Mountain Bike"] = "Sports"
    clock.now = VOCABULARY_TTL_S - 1
    within = _vocabulary(ctx)
    clock.now = VOCABULARY_TTL_S
    after = _vocabulary(ctx)
    # Then the kept vocabulary is served until the TTL, and the new product is known after it
    assert within.products == ("Electric Kettle",)
    assert after.products == ("Electric Kettle", "Mountain Bike")
    assert graph.vocabulary_reads == 2


def test_an_unreachable_store_gives_an_empty_vocabulary_that_is_not_kept() -> None:
    # Given a store that is down
    graph = StoreGraph({"Electric Kettle": "Kitchen"}, down=True)
    ctx = ToolContext(graph=graph, customer_id=None)
    # When the vocabulary is read, the tools degrade to an empty one
    assert _vocabulary(ctx) == cc.StoreVocabulary()
    # Then once the store is back the next call reads it (the empty one was not kept)
    graph.down = False
    assert _vocabulary(ctx).products == ("Electric Kettle",)


def test_the_default_ttls_are_ten_minutes() -> None:
    caches = ToolCaches()
    assert caches.vocabulary.ttl_s == VOCABULARY_TTL_S == 600.0
    assert caches.hint_values.ttl_s == HINT_VALUES_TTL_S == 600.0
    assert math.isinf(caches.example_vectors.ttl_s)


# -- Text2Cypher's value hints -----------------------------------------------------------------
def test_value_hints_come_from_the_validated_store_only() -> None:
    # Given two stores holding different names close to "Kettle", each with caches of its own
    kettles = StoreGraph({"Electric Kettle": "Kitchen"})
    kettle_caches = ToolCaches()
    bottles = StoreGraph({"Kettle Bottle": "Sports"})
    # When the same name neither stores is checked against each
    first = _hint(kettles, kettle_caches)
    second = _hint(bottles, ToolCaches())
    # Then each hint offers its own store's spelling
    assert "'Electric Kettle'" in first and "Kettle Bottle" not in first
    assert "'Kettle Bottle'" in second and "Electric Kettle" not in second
    # And the first store's values stay cached for it
    _hint(kettles, kettle_caches)
    assert kettles.hint_reads == 1


def test_value_hints_are_read_again_after_their_ttl() -> None:
    # Given hints read at t=0
    clock = Clock()
    graph = StoreGraph({"Electric Kettle": "Kitchen"})
    caches = ToolCaches(hint_values=TTLCache(HINT_VALUES_TTL_S, clock=clock))
    _hint(graph, caches)
    # When a product is added, the hints within the TTL are the kept ones; after it, the new ones
    graph.products["Electric Kettle Pro"] = "Kitchen"
    clock.now = HINT_VALUES_TTL_S - 1
    within = _hint(graph, caches)
    clock.now = HINT_VALUES_TTL_S
    after = _hint(graph, caches)
    assert "Electric Kettle Pro" not in within
    assert "'Electric Kettle Pro'" in after
    assert graph.hint_reads == 2


def test_value_hints_that_cannot_be_read_are_not_kept() -> None:
    # Given a store whose hint query fails once
    graph = StoreGraph({"Electric Kettle": "Kitchen"})
    caches = ToolCaches()
    validator = QueryValidator(graph, graph, hint_values=caches.hint_values)
    spec = validator.schema_checker.schema.node("Product").find_property("name")  # type: ignore[union-attr]
    assert spec is not None
    graph.down = True
    # When the hints are asked for, there are none (best effort)...
    assert validator.value_checker._hint_values("Product", spec) == ()
    # Then the next call reads them
    graph.down = False
    assert validator.value_checker._hint_values("Product", spec) == ("Electric Kettle",)


# -- the few-shot bank's vectors -----------------------------------------------------------------
class KeywordEmbedder:
    """Puts questions about `first` on one axis and everything else on the other."""

    dimension = 2

    def __init__(self, first: str) -> None:
        self.first = first
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts_embedded += len(texts)
        return [[1.0, 0.0] if self.first in t.lower() else [0.0, 1.0] for t in texts]


EXAMPLES = (
    CypherExample(id="prices", question="What do the kettles cost?",
                  cypher="MATCH (p:Product) RETURN p.name"),
    CypherExample(id="colours", question="Which colours do bikes come in?",
                  cypher="MATCH (v:Variant) RETURN v.option_text"),
)


def _best(embedder: KeywordEmbedder, caches: ToolCaches) -> str:
    bank = ExampleBank(StoreGraph({}), embedder, examples=EXAMPLES, vectors=caches.example_vectors)
    return bank.retrieve("kettles and bikes, what about them?", 1)[0].example_id


def test_two_embedders_each_rank_the_examples_with_their_own_vectors() -> None:
    # Given two embedders that place the examples differently, each with its own caches
    # When a question about both is ranked against the same examples through each
    by_kettle = _best(KeywordEmbedder("kettle"), ToolCaches())
    by_bike = _best(KeywordEmbedder("bike"), ToolCaches())
    # Then each ranking is its embedder's
    assert by_kettle == "prices"
    assert by_bike == "colours"


def test_the_example_vectors_are_embedded_once_per_caches() -> None:
    # Given one embedder and the caches the composition root builds beside it
    embedder, caches = KeywordEmbedder("kettle"), ToolCaches()
    # When two banks rank (one per tool call)
    _best(embedder, caches)
    _best(embedder, caches)
    # Then the examples were embedded once (the two questions asked are embedded each time)
    assert embedder.texts_embedded == len(EXAMPLES) + 2


# -- the template matchers -------------------------------------------------------------------
def test_a_template_matcher_is_built_once_per_embedder_and_catalogue() -> None:
    # Given the caches beside one embedder, and the shipped catalogue
    embedder, caches, catalogue = KeywordEmbedder("order"), ToolCaches(), cc.load_catalogue()
    # When two tool calls ask for its matcher
    first = cc.matcher_for(embedder, catalogue, caches.matchers)
    second = cc.matcher_for(embedder, catalogue, caches.matchers)
    # Then it is the same one: the examples are embedded and the model trained once
    assert first is second and len(caches.matchers) == 1
    # And another embedder gets its own matcher, never the first one's
    other = cc.matcher_for(KeywordEmbedder("kettle"), catalogue, caches.matchers)
    assert other is not first and other.embedder is not embedder


def test_the_template_matchers_are_bounded_and_drop_the_oldest() -> None:
    caches, catalogue = ToolCaches(), cc.load_catalogue()
    embedders = [KeywordEmbedder(word) for word in ("a", "b", "c", "d", "e")]
    kept = [cc.matcher_for(e, catalogue, caches.matchers) for e in embedders]
    assert len(caches.matchers) == caches.matchers.max_entries == 4
    assert caches.matchers.get((embedders[0], catalogue)) is None
    assert caches.matchers.get((embedders[-1], catalogue)) is kept[-1]


def test_the_process_shares_one_set_of_template_matchers_that_a_reset_keeps(store: StoreGraph) -> None:
    # Given the tools' caches and the understanding path of one process
    matchers = runtime.template_matchers()
    # Then the tools' contexts carry the same matchers, and a runtime reset keeps them
    assert _lambda_context().caches.matchers is matchers
    runtime.tool_caches.cache_clear()
    assert runtime.tool_caches().matchers is matchers


# -- the composition root --------------------------------------------------------------------
@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[StoreGraph]:
    """The runtime's graph store replaced by a fake (and the knowledge base by a stub)."""
    graph = StoreGraph({"Electric Kettle": "Kitchen"})
    monkeypatch.setattr(runtime, "graph_store", lambda: graph)
    monkeypatch.setattr(runtime, "knowledge_base", lambda: SimpleNamespace(relink=lambda: 0))
    runtime.tool_caches.cache_clear()
    runtime.catalogue_sync.cache_clear()
    yield graph
    runtime.tool_caches.cache_clear()
    runtime.catalogue_sync.cache_clear()


def _lambda_context() -> ToolContext:
    from csagent.tools.lambda_entry import _default_context

    return _default_context(SimpleNamespace(customer_id=None))


def test_the_tool_lambdas_contexts_share_the_process_caches(store: StoreGraph) -> None:
    # Given two invocations of a tool Lambda in one process
    first, second = _lambda_context(), _lambda_context()
    # When both read the vocabulary
    _vocabulary(first)
    _vocabulary(second)
    # Then the store was read once: the contexts carry the composition root's caches
    assert first.caches is second.caches is runtime.tool_caches()
    assert store.vocabulary_reads == 1


def test_a_catalogue_change_in_this_process_drops_the_tools_caches_at_once(store: StoreGraph) -> None:
    # Given the tools' vocabulary and value hints read and kept
    ctx = _lambda_context()
    _vocabulary(ctx)
    _hint(store, ctx.caches)
    # When the catalogue changes through this process's catalogue service
    store.products["Mountain Bike"] = "Sports"
    runtime.catalogue_sync().update_variant("1234567890", price=19.0)
    # Then the next question reads the new catalogue, well within the TTL
    assert _vocabulary(ctx).products == ("Electric Kettle", "Mountain Bike")
    _hint(store, ctx.caches)
    assert (store.vocabulary_reads, store.hint_reads) == (2, 2)
    assert store.written  # the change itself was written


def test_a_catalogue_change_reloads_the_understandings_product_names_and_variants(
        store: StoreGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the understanding's caches of the catalogue, built by the composition root
    from csagent.adapters.customer_view import CatalogueVariants
    from csagent.adapters.product_catalogue import ProductCatalogue

    runtime.catalogue_generation.cache_clear()
    reads: list[str] = []
    monkeypatch.setattr(store, "read", lambda cypher, params=None, **_: reads.append(cypher) or [])
    names = ProductCatalogue(store, generation=runtime.catalogue_generation())
    variants = CatalogueVariants(store, generation=runtime.catalogue_generation())
    names(), variants(), names(), variants()
    assert len(reads) == 2  # each read once, within its TTL
    # When the catalogue changes through this process's catalogue service
    runtime.catalogue_sync().update_variant("1234567890", price=19.0)
    # Then both read the store again on their next use
    names(), variants()
    assert len(reads) == 4
