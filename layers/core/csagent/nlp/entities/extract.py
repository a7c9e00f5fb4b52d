"""Every entity in one text at once (usually one clause): what the local understanding reads from
a message before it decides what the message asks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from csagent.nlp.entities.addresses import Address, find_addresses
from csagent.nlp.entities.identifiers import (
    ZIP_RE,
    find_emails,
    find_order_ids,
    find_tracking_numbers,
    unique,
)
from csagent.nlp.entities.products import ProductMention, find_products
from csagent.nlp.entities.references import Reference, find_references


@dataclass(frozen=True, slots=True)
class Entities:
    """Everything `extract_entities` found in one text."""

    order_ids: list[str]
    tracking_numbers: list[str]
    emails: list[str]
    zip_codes: list[str]
    addresses: list[Address]
    products: list[ProductMention]
    references: list[Reference]


def extract_entities(text: str, catalogue: Sequence[Mapping[str, Any]] | None = None) -> Entities:
    """All entities in a text (usually one clause). Zip codes inside a matched address's street
    number are not reported as zip codes; the address's own zip is."""
    addresses = find_addresses(text)
    street_spans = [(a.street_start, a.street_start + len(a.address1)) for a in addresses]
    zips = [m.group(1) for m in ZIP_RE.finditer(text)
            if not any(s <= m.start() < e for s, e in street_spans)]
    return Entities(
        order_ids=find_order_ids(text),
        tracking_numbers=find_tracking_numbers(text),
        emails=find_emails(text),
        zip_codes=unique(zips),
        addresses=addresses,
        products=find_products(text, catalogue) if catalogue else [],
        references=find_references(text, catalogue),
    )
