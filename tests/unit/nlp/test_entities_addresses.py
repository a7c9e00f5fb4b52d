"""US postal addresses written in a message (`nlp.entities.addresses`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from csagent.nlp.entities.addresses import find_addresses

TAU_USERS = Path(__file__).resolve().parents[4] / "shared" / "data" / "tau-retail" / "users.json"


# -- addresses -------------------------------------------------------------------------------------
def test_address_is_parsed_into_its_fields() -> None:
    # Given an address inside a request
    [address] = find_addresses("ship it to my new address: 12 Main St, Springfield, IL 62704")
    # When parsed / Then street, city, state and zip are separated
    assert address.as_dict() == {"address1": "12 Main St", "address2": None, "city": "Springfield",
                                 "state": "IL", "zip": "62704", "country": "USA"}
    assert address.complete


def test_address_with_unit_and_multiword_city_is_parsed() -> None:
    # Given an address with a suite and a two-word city, without commas before the zip
    [address] = find_addresses("send it to 215 River Road, Suite 991, New York, NY 10083 thanks")
    # When parsed / Then the unit is address2 and the city keeps both words
    assert (address.address1, address.address2, address.city, address.state, address.zip) == (
        "215 River Road", "Suite 991", "New York", "NY", "10083")


def test_address_without_zip_is_returned_incomplete() -> None:
    # Given an address missing its zip / When parsed / Then it is found but marked incomplete
    [address] = find_addresses("deliver to 9 Elm Street, Denver, CO")
    assert address.zip is None and not address.complete


@pytest.mark.parametrize("text", ["I bought 2 red shirts in CA", "order 5 items by Friday",
                                  "12345 is my code"])
def test_sentences_with_numbers_are_not_addresses(text: str) -> None:
    # Given numbers that are not part of a street address / When parsed / Then no address is found
    assert find_addresses(text) == []


@pytest.mark.skipif(not TAU_USERS.exists(), reason="needs ../shared/data/tau-retail")
def test_every_customer_address_in_the_store_data_parses() -> None:
    # Given the 500 customer addresses of the store data, written as a customer would
    addresses = [u["address"] for u in json.loads(TAU_USERS.read_text()).values()]
    # When each is parsed from "street, unit, city, state zip"
    template = "{address1}, {address2}, {city}, {state} {zip}"
    wrong = [a for a in addresses if [x.as_dict() for x in find_addresses(template.format(**a))] != [a]]
    # Then every one comes back exactly
    assert wrong == []


def test_a_state_code_is_a_word_of_its_own_not_the_end_of_another() -> None:
    # "... 585 Hillcrest Drive. Could you send it ...": "nd" of "send" is no North Dakota, so the
    # street line with a sentence after it is no address (the saved one is meant)
    assert find_addresses("My order goes to 585 Hillcrest Drive. Could you send it to my home address?") == []
    assert [a.state for a in find_addresses("200 Pine Street, Suite 1200, Seattle WA 98101")] == ["WA"]


STATE_NAMES = {"CA": "California", "TX": "Texas", "NY": "New York", "PA": "Pennsylvania", "OH": "Ohio",
               "IL": "Illinois", "WA": "Washington", "FL": "Florida", "NC": "North Carolina",
               "DC": "District of Columbia", "MA": "Massachusetts", "AZ": "Arizona", "CO": "Colorado",
               "GA": "Georgia", "MI": "Michigan", "TN": "Tennessee", "IN": "Indiana", "WI": "Wisconsin"}


@pytest.mark.skipif(not TAU_USERS.exists(), reason="needs ../shared/data/tau-retail")
@pytest.mark.parametrize("template", [
    "{address2}, {address1}, {city}, {state} {zip}",      # the unit written first
    "{address1} {address2} {city} {state} {zip}",         # no commas at all
    "{address1}, {address2}, {city}, {state_name} {zip}",  # the state by its name
    "ship it to {address2}, {address1}, {city}, {state_name} {zip}, USA please",
])
def test_the_store_addresses_written_other_ways_parse(template: str) -> None:
    # Given the store data's customer addresses (those in a state the test names), written as
    # customers also write them
    addresses = [u["address"] for u in json.loads(TAU_USERS.read_text()).values()
                 if u["address"]["state"] in STATE_NAMES]
    assert len(addresses) > 100
    # When each is parsed / Then it comes back exactly: the unit as the second line, the state's code
    written = [(a, template.format(**a, state_name=STATE_NAMES[a["state"]])) for a in addresses]
    wrong = [a for a, text in written if [x.as_dict() for x in find_addresses(text)] != [a]]
    assert wrong == []


@pytest.mark.parametrize(("text", "fields"), [
    ("ship to 5 Circle Ct Charlotte NC 28202", ("5 Circle Ct", None, "Charlotte", "NC")),
    ("it should go to 990 Route 66, Flagstaff, AZ 86001", ("990 Route 66", None, "Flagstaff", "AZ")),
    ("to 310 Highway 9, Fl 2, Boulder, Colorado 80301", ("310 Highway 9", "Fl 2", "Boulder", "CO")),
    ("12 Main St, St Louis, MO 63101", ("12 Main St", None, "St Louis", "MO")),
    ("12 Washington Ave, Seattle, Washington 98101", ("12 Washington Ave", None, "Seattle", "WA")),
])
def test_street_city_and_state_are_told_apart(text: str, fields: tuple[str | None, ...]) -> None:
    # A short suffix ("Ct") begins no city; a road may be known by its number; a unit word is a
    # word of its own ("Fl 2", not the "Fl" of "Flagstaff"); a state may be written by its name
    [address] = find_addresses(text)
    assert (address.address1, address.address2, address.city, address.state) == fields
