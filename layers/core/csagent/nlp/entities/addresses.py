"""US postal addresses written in a message ("12 Main St, Springfield, IL 62704"), and the words
that point at the address saved on the account instead ("ship it to my default address")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from csagent.nlp.entities.words import alternation, says_any, terms


@lru_cache(maxsize=1)
def address_pattern() -> re.Pattern[str]:
    """A US postal address: street line, optional unit, city, state, optional zip and country."""
    t = terms()
    suffix = alternation(t["street_suffixes"])
    unit = alternation(u for u in t["unit_designators"] if u != "#")
    states = alternation(t["us_states"])
    countries = alternation(t["countries"])
    return re.compile(
        rf"(?<![A-Za-z0-9])(?P<address1>\d{{1,6}}[A-Za-z]?(?:\s+[A-Za-z0-9.'’-]+){{0,5}}?\s+(?:{suffix})\.?"
        rf"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\.?)?)(?![A-Za-z])"
        rf"(?:\s*,?\s*(?P<address2>(?:(?:{unit})\.?\s*#?\s*|#\s*)[A-Za-z0-9-]+))?"
        rf"\s*,?\s*(?P<city>[A-Za-z][A-Za-z.'’-]*(?:\s+[A-Za-z][A-Za-z.'’-]*){{0,3}}?)"
        rf"\s*,?\s*(?<![A-Za-z])(?P<state>{states})(?![A-Za-z])"
        rf"(?:\s*,?\s*(?P<zip>\d{{5}}(?:-\d{{4}})?)(?!\d))?"
        rf"(?:\s*,?\s*(?P<country>{countries})(?![A-Za-z]))?",
        re.IGNORECASE,
    )


@dataclass(frozen=True, slots=True)
class Address:
    """A structured US postal address (the shape the store graph keeps)."""

    address1: str
    city: str
    state: str
    zip: str | None = None
    address2: str | None = None
    country: str = "USA"
    span: tuple[int, int] = (0, 0)

    def as_dict(self) -> dict[str, str | None]:
        """The address as the customer-actions tool expects it."""
        return {"address1": self.address1, "address2": self.address2, "city": self.city,
                "state": self.state, "zip": self.zip, "country": self.country}

    @property
    def complete(self) -> bool:
        """True when every field a shipment needs is present."""
        return bool(self.address1 and self.city and self.state and self.zip)

    def __str__(self) -> str:
        street = f"{self.address1}, {self.address2}" if self.address2 else self.address1
        tail = f"{self.state} {self.zip}" if self.zip else self.state
        return f"{street}, {self.city}, {tail}"


def _tidy(value: str) -> str:
    return re.sub(r"\s+", " ", value).strip(" ,")


def find_addresses(text: str) -> list[Address]:
    """US postal addresses: "12 Main St, Springfield, IL 62704" → Address(...).

    The state must be a real two-letter code; the zip is optional (an address without one is
    returned with `zip=None`, so the caller can ask for it: see `Address.complete`).
    """
    found: list[Address] = []
    for m in address_pattern().finditer(text):
        address2 = m.group("address2")
        found.append(Address(
            address1=_tidy(m.group("address1")),
            address2=_tidy(address2) if address2 else None,
            city=_tidy(m.group("city")),
            state=m.group("state").upper(),
            zip=m.group("zip"),
            span=(m.start(), m.end()),
        ))
    return found


def names_saved_address(text: str) -> bool:
    """ "ship it to my default address", "the address on file", "改寄到默认地址": the words point at
    the address saved on the account (`reference.saved_address` of `data/entity_terms.json`)."""
    return says_any(text, terms()["reference"]["saved_address"])


def names_a_place_abroad(text: str) -> bool:
    """ "I move to Toronto in Canada next month ... can you change the address?": a place outside
    the United States named (`outside_us` of `data/entity_terms.json`)."""
    return says_any(text, terms()["outside_us"])
