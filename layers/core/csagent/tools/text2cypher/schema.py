"""The part of the store graph Text2Cypher may query, and the schema text the model is shown.

Only the catalogue and the knowledge base: products, variants, categories, documents and their
chunks (docs/graph-model.md). Customer-side labels and relationships are named here only so
that validation can refuse them with a precise reason; they never appear in a prompt.

Safety rests on one invariant of the store graph, checked by the integration tests: the allowed
relationship types connect allowed labels only. So a node reached through an allowed typed
relationship is inside the allowed part even when the query gives it no label, while a node
pattern with neither a label nor a typed relationship could be anything (a customer) and is refused.

This is security policy, so it is code (reviewed, typed), not a data file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

PropertyType = Literal["STRING", "INTEGER", "FLOAT", "BOOLEAN", "LIST<STRING>"]
#: Where a value hint comes from when a literal is not found: the property's distinct values,
#: the "key: value" pairs of `option_text`, or nowhere (free text, identifiers).
HintSource = Literal["values", "option_pairs", "none"]


@dataclass(frozen=True)
class PropertySpec:
    """One property of an allowed label: its Cypher type and what it holds."""

    name: str
    type: PropertyType
    description: str
    hints: HintSource = "none"

    @property
    def is_text(self) -> bool:
        return self.type in ("STRING", "LIST<STRING>")


@dataclass(frozen=True)
class NodeSpec:
    """An allowed label with its properties."""

    label: str
    description: str
    properties: tuple[PropertySpec, ...]

    def find_property(self, name: str) -> PropertySpec | None:
        return next((p for p in self.properties if p.name == name), None)

    @property
    def property_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.properties)


@dataclass(frozen=True)
class RelationshipSpec:
    """An allowed relationship type between two allowed labels, in its stored direction."""

    type: str
    start: str
    end: str
    description: str

    @property
    def pattern(self) -> str:
        return f"(:{self.start})-[:{self.type}]->(:{self.end})"


@dataclass(frozen=True)
class AllowedSchema:
    """What Text2Cypher may read, and the names it must refuse as outside its scope."""

    nodes: tuple[NodeSpec, ...]
    relationships: tuple[RelationshipSpec, ...]
    forbidden_labels: frozenset[str]
    forbidden_relationships: frozenset[str]
    #: Fulltext indexes a query may call with `db.index.fulltext.queryNodes`, and the label each yields.
    fulltext_indexes: Mapping[str, str] = field(default_factory=dict)

    def node(self, label: str) -> NodeSpec | None:
        return next((n for n in self.nodes if n.label == label), None)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(n.label for n in self.nodes)

    @property
    def relationship_types(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.type for r in self.relationships))

    def relationships_of(self, rel_type: str) -> tuple[RelationshipSpec, ...]:
        return tuple(r for r in self.relationships if r.type == rel_type)

    def is_forbidden_label(self, name: str) -> bool:
        return name.lower() in {f.lower() for f in self.forbidden_labels}

    def is_forbidden_relationship(self, name: str) -> bool:
        return name.upper() in {f.upper() for f in self.forbidden_relationships}

    def prompt_text(self, *, categories: Sequence[str] = (), products: Sequence[str] = ()) -> str:
        """The schema as the model reads it: labels with typed properties, relationships with
        their direction, the callable indexes, and (when given) the store's category and
        product names so that the model spells values as they are stored."""
        lines = ["Node labels and their properties (name: TYPE - meaning):"]
        for node in self.nodes:
            lines.append(f"(:{node.label}) - {node.description}")
            lines.extend(f"    {p.name}: {p.type} - {p.description}" for p in node.properties)
        lines.append("")
        lines.append("Relationships (the arrow shows the stored direction; no relationship has properties):")
        lines.extend(f"{r.pattern} - {r.description}" for r in self.relationships)
        if self.fulltext_indexes:
            lines.append("")
            lines.append("Fulltext indexes (CALL db.index.fulltext.queryNodes('<index>', '<words>') "
                         "YIELD node, score):")
            lines.extend(f"    '{name}' on (:{label})" for name, label in self.fulltext_indexes.items())
        if categories:
            lines.append("")
            lines.append("Category names: " + ", ".join(sorted(categories)))
        if products:
            lines.append("Product names: " + ", ".join(sorted(products)))
        return "\n".join(lines)


_ID10 = "10-digit identifier string"

CATALOGUE_SCHEMA = AllowedSchema(
    nodes=(
        NodeSpec("Product", "a product the store sells; it comes in variants", (
            PropertySpec("product_id", "STRING", _ID10),
            PropertySpec("name", "STRING", "product name in title case, e.g. 'Water Bottle'", "values"),
            PropertySpec("category", "STRING", "the product's category name, e.g. 'Electronics'", "values"),
        )),
        NodeSpec("Variant", "one buyable item (a product in specific options)", (
            PropertySpec("item_id", "STRING", _ID10),
            PropertySpec("price", "FLOAT", "price in US dollars"),
            PropertySpec("available", "BOOLEAN", "true when the item can be ordered now"),
            PropertySpec("option_text", "STRING",
                         "options as text, e.g. 'color: blue, size: M' (lower-case keys)", "option_pairs"),
            PropertySpec("options_json", "STRING", "the same options as a JSON object string"),
        )),
        NodeSpec("Category", "a product category", (
            PropertySpec("name", "STRING", "category name, e.g. 'Home & Kitchen'", "values"),
        )),
        NodeSpec("Document", "a knowledge-base document (policy, FAQ, manual, warranty terms)", (
            PropertySpec("doc_id", "STRING", "document id, e.g. 'returns-refunds'", "values"),
            PropertySpec("title", "STRING", "document title", "values"),
            PropertySpec("kind", "STRING", "one of 'policy', 'faq', 'manual', 'warranty'", "values"),
            PropertySpec("products", "LIST<STRING>", "names of the products the document is about", "values"),
            PropertySpec("categories", "LIST<STRING>", "names of the categories the document is about",
                         "values"),
            PropertySpec("source", "STRING", "source file name"),
            PropertySpec("chunk_count", "INTEGER", "number of chunks"),
        )),
        NodeSpec("Chunk", "a passage of a document", (
            PropertySpec("chunk_id", "STRING", "chunk id, '<doc_id>#<seq>'"),
            PropertySpec("doc_id", "STRING", "id of the document the chunk belongs to", "values"),
            PropertySpec("seq", "INTEGER", "position of the chunk in its document, from 0"),
            PropertySpec("section", "STRING", "heading path, e.g. 'Warranty terms > Electronics'"),
            PropertySpec("text", "STRING", "the passage text"),
        )),
    ),
    relationships=(
        RelationshipSpec("HAS_VARIANT", "Product", "Variant", "a product's buyable variants"),
        RelationshipSpec("IN_CATEGORY", "Product", "Category", "the category of a product"),
        RelationshipSpec("HAS_CHUNK", "Document", "Chunk", "the passages of a document"),
        RelationshipSpec("MENTIONS", "Chunk", "Product", "a passage that is about a product"),
        RelationshipSpec("MENTIONS", "Chunk", "Category", "a passage that is about a category"),
    ),
    forbidden_labels=frozenset({"Customer", "Order", "OrderLine", "Address", "PaymentMethod",
                                "Transaction", "Shipment", "TrackingEvent", "CypherExample"}),
    forbidden_relationships=frozenset({"PLACED", "HAS_DEFAULT_ADDRESS", "HAS_PAYMENT_METHOD", "SHIPS_TO",
                                       "HAS_LINE", "OF_VARIANT", "HAS_TRANSACTION", "USING",
                                       "FULFILLED_BY", "CONTAINS", "HAS_EVENT"}),
    fulltext_indexes={"product_name": "Product", "chunk_text": "Chunk"},
)
