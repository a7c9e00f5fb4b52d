"""US postal addresses written in a message ("12 Main St, Springfield, IL 62704"), and the words
that point at the address saved on the account instead ("ship it to my default address")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from csagent.nlp.entities.words import alternation, says_any, terms

# Street suffixes written only as a short form ("Ct", "Blvd"): no city begins with one, so
# "5 Circle Ct Charlotte NC" is the street "5 Circle Ct" in Charlotte, not "5 Circle" in "Ct
# Charlotte". "St" is left out ("St Louis", "St. Paul").
_SHORT_ONLY = frozenset({
    "ave", "av", "rd", "blvd", "dr", "ln", "ct", "pl", "ter", "pkwy", "cir", "hwy", "sq", "trl",
    "plz", "aly", "cres", "tpke", "expy", "fwy", "hts", "pt", "xing",
})

# A road known by its number: "310 Highway 9", "990 Route 66", "12 County Road 5".
_NUMBERED_ROAD = (r"(?:(?:us|state|county|farm\s+to\s+market)\s+)?"
                  r"(?:highway|hwy|route|rte|road|rd)\s+\d{1,4}[A-Za-z]?")


@lru_cache(maxsize=1)
def address_pattern() -> re.Pattern[str]:
    """A US postal address: optional unit written first ("apt 12, 45 Elm Street ..."), street
    line, optional unit, city, state (its code or its name), optional zip and country. Suffix
    words in a row belong to the street ("418 Park Avenue", "5 Lake Shore Drive")."""
    t = terms()
    suffix = alternation(t["street_suffixes"])
    short_only = alternation(s for s in t["street_suffixes"] if s in _SHORT_ONLY)
    unit = alternation(u for u in t["unit_designators"] if u != "#")
    # a unit word ends where a word ends ("Fl 3", never the "Fl" of "Flagstaff")
    unit_value = rf"(?:(?:{unit})(?![A-Za-z])\.?\s*#?\s*|#\s*)[A-Za-z0-9-]+"
    states = alternation([*t["us_states"], *t["us_state_names"]])
    countries = alternation(t["countries"])
    return re.compile(
        rf"(?<![A-Za-z0-9])(?:(?P<unit_first>(?:{unit})(?![A-Za-z])\.?\s*#?\s*[A-Za-z0-9-]+)\s*,?\s*(?=\d))?"
        rf"(?P<address1>\d{{1,6}}[A-Za-z]?(?:"
        rf"(?:\s+[A-Za-z0-9.'’-]+){{0,5}}?\s+(?:{suffix})\.?(?:\s+(?:{suffix})\.?){{0,2}}"
        rf"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\.?)?"
        rf"|\s+{_NUMBERED_ROAD}))(?![A-Za-z])"
        rf"(?:\s*,?\s*(?P<address2>{unit_value}))?"
        rf"\s*,?\s*(?!(?:{short_only})\.?\s)(?P<city>[A-Za-z][A-Za-z.'’-]*(?:\s+[A-Za-z][A-Za-z.'’-]*){{0,3}}?)"
        rf"\s*,?\s*(?<![A-Za-z])(?P<state>{states})(?![A-Za-z])"
        rf"(?:\s*,?\s*(?P<zip>\d{{5}}(?:-\d{{4}})?)(?!\d))?"
        rf"(?:\s*,?\s*(?P<country>{countries})(?![A-Za-z]))?",
        re.IGNORECASE,
    )


def _state_code(written: str) -> str:
    """ "FL" → "FL"; "Florida", "north  carolina" → their codes."""
    name = re.sub(r"\s+", " ", written).strip().lower()
    return str(terms()["us_state_names"].get(name, written.upper()))


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
    street_start: int = 0  # where `address1` begins in the text (after a unit written first)

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


def _capitalised(value: str) -> str:
    """Each word's first letter in capitals ("ocean drive" → "Ocean Drive", "apt 5b" → "Apt 5b")."""
    return " ".join(w[:1].upper() + w[1:] for w in value.split(" "))


def find_addresses(text: str) -> list[Address]:
    """US postal addresses: "12 Main St, Springfield, IL 62704" → Address(...).

    The state must be a real two-letter code or a state's name ("Florida" → "FL"); a unit
    written before the street ("apt 12, 45 Elm Street, ...") is the second line. The zip is
    optional (an address without one is returned with `zip=None`, so the caller can ask for it:
    see `Address.complete`).
    """
    found: list[Address] = []
    for m in address_pattern().finditer(text):
        address2 = m.group("address2") or m.group("unit_first")
        # (written all in lower case, it is kept as an address is printed: "1200 ocean drive, miami"
        # → "1200 Ocean Drive", "Miami")
        cased = (lambda v: v) if any(ch.isupper() for ch in m.group(0)) else _capitalised
        found.append(Address(
            address1=cased(_tidy(m.group("address1"))),
            address2=cased(_tidy(address2)) if address2 else None,
            city=cased(_tidy(m.group("city"))),
            state=_state_code(m.group("state")),
            zip=m.group("zip"),
            span=(m.start(), m.end()),
            street_start=m.start("address1"),
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
