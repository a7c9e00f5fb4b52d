"""Catalogue changes, and the knowledge base kept in step with them without a rebuild.

    CatalogueSync(writer: CatalogueWriter, knowledge: KnowledgeBase, on_change=[...])
        .upsert_product(product)    a new product, or a renamed / re-categorised / re-priced one
        .update_variant(item_id, price=, available=)
        .discontinue(product_id)    every variant unavailable, the product flagged discontinued

What follows a change, and how:

- **Knowledge links.** Chunks link to the products they name (`MENTIONS`, by whole-name match,
  and the products a document's front matter lists). After a product is added or renamed,
  `KnowledgeBase.relink` recomputes every chunk's links from the catalogue as it is now and
  rewrites only the chunks whose links differ: a manual uploaded before its product existed gets
  linked the moment the product does; a renamed product's old links go. A discontinued product
  keeps its links (its owners still need the manual); a price or availability change touches no
  link.
- **Answers.** Prices, options and availability are never copied into the knowledge base: the
  catalogue templates read them from the graph on every question, so the next answer has the
  new value. The in-process caches of product names and variants (`adapters.product_catalogue`,
  `adapters.customer_view.CatalogueVariants`) and the tools' vocabulary and value hints
  (`tools.caches.ToolCaches`) are dropped through `on_change`, so this process answers with the
  new catalogue at once; other processes (other Lambda instances) reload within their TTLs (60 s
  for variants, 120 s for names, 10 minutes for the tools' vocabulary and value hints).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from csagent.domain.errors import InvalidInput, NotFound
from csagent.domain.ids import CATALOGUE_ID_PATTERN

if TYPE_CHECKING:
    from csagent.knowledge.service import KnowledgeBase
    from csagent.ports import CatalogueWriter


@dataclass(frozen=True)
class VariantIn:
    item_id: str
    price: float
    available: bool = True
    options: Mapping[str, str] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "price": float(self.price), "available": bool(self.available),
                "options_json": json.dumps(dict(self.options), ensure_ascii=False, separators=(",", ":")),
                "option_text": ", ".join(f"{k}: {v}" for k, v in self.options.items())}


@dataclass(frozen=True)
class ProductIn:
    product_id: str
    name: str
    category: str
    variants: Sequence[VariantIn] = ()


def _checked_id(kind: str, value: str) -> str:
    """`value` when it is a catalogue id (`domain.ids.CATALOGUE_ID_PATTERN`), else InvalidInput."""
    if not re.fullmatch(CATALOGUE_ID_PATTERN, value):
        raise InvalidInput(f"{kind} must be 1-64 letters, digits, '_' or '-', starting with a letter or "
                           "digit")
    return value


@dataclass
class CatalogueSync:
    writer: CatalogueWriter
    knowledge: KnowledgeBase
    on_change: Sequence[Callable[[], None]] = ()

    def _changed(self) -> None:
        for callback in self.on_change:
            callback()

    def upsert_product(self, product: ProductIn) -> dict[str, Any]:
        if not product.name.strip() or not product.category.strip():
            raise InvalidInput("a product needs a name and a category")
        _checked_id("product_id", product.product_id)
        ids = [_checked_id("item_id", v.item_id) for v in product.variants]
        if len(set(ids)) != len(ids):
            raise InvalidInput("variant item_ids must be unique")
        if any(v.price <= 0 for v in product.variants):
            raise InvalidInput("a variant's price must be positive")
        created = self.writer.upsert_product(product.product_id, " ".join(product.name.split()),
                                             product.category.strip(), [v.row() for v in product.variants])
        relinked = self.knowledge.relink()
        self._changed()
        return {"product_id": product.product_id, "created": created, "variants": len(ids),
                "relinked_chunks": relinked}

    def update_variant(self, item_id: str, *, price: float | None = None,
                       available: bool | None = None) -> dict[str, Any]:
        _checked_id("item_id", item_id)
        if price is None and available is None:
            raise InvalidInput("send price, available or both")
        if price is not None and price <= 0:
            raise InvalidInput("price must be positive")
        changes = {k: v for k, v in (("price", price), ("available", available)) if v is not None}
        product_id = self.writer.update_variant(item_id, changes)
        if product_id is None:
            raise NotFound(f"no variant '{item_id}'")
        self._changed()
        return {"item_id": item_id, "product_id": product_id, **changes}

    def discontinue(self, product_id: str) -> dict[str, Any]:
        _checked_id("product_id", product_id)
        variants = self.writer.discontinue(product_id)
        if variants is None:
            raise NotFound(f"no product '{product_id}'")
        self._changed()
        return {"product_id": product_id, "discontinued": True, "variants_unavailable": variants}
