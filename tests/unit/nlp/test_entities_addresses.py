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
