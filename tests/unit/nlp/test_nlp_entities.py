"""Rule-based entity extraction: ids, tracking numbers, e-mails, zips, addresses, products, references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csagent.nlp.entities import (
    Reference,
    extract_entities,
    find_addresses,
    find_emails,
    find_order_ids,
    find_products,
    find_references,
    find_tracking_numbers,
    find_zip_codes,
    normalise_order_id,
    resolve_product_reference,
)

TAU_USERS = Path(__file__).resolve().parents[4] / "shared" / "data" / "tau-retail" / "users.json"


# -- order ids ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("where is #W2611340?", ["#W2611340"]),
    ("order W2611340 please", ["#W2611340"]),
    ("订单#W2611340改地址", ["#W2611340"]),
    ("#W2611340 and #W1234567, again #W2611340", ["#W2611340", "#W1234567"]),
])
def test_order_ids_are_found_and_normalised(text: str, expected: list[str]) -> None:
    # Given a message naming orders with or without "#" / When parsed / Then ids come back as "#W" + 7 digits
    assert find_order_ids(text) == expected


@pytest.mark.parametrize("text", ["#W123456", "W12345678", "AW2611340", "#W2611340X", "W 2611340"])
def test_order_ids_of_the_wrong_shape_are_rejected(text: str) -> None:
    # Given something that only resembles an order id / When parsed / Then nothing is found
    assert find_order_ids(text) == []


@settings(max_examples=200)
@given(st.from_regex(r"\A[0-9]{7}\Z"), st.booleans(), st.sampled_from(["", "where is ", "订单"]))
def test_any_valid_order_id_roundtrips(digits: str, hash_sign: bool, prefix: str) -> None:
    # Given a generated valid id written with or without "#"
    raw = ("#" if hash_sign else "") + "W" + digits
    # When found in a message and normalised
    # Then it comes back as the canonical id
    assert find_order_ids(prefix + raw + " please") == [f"#W{digits}"]
    assert normalise_order_id(raw) == f"#W{digits}"


@settings(max_examples=200)
@given(st.integers(min_value=1, max_value=20).filter(lambda n: n != 7).flatmap(
    lambda n: st.from_regex(rf"\A[0-9]{{{n}}}\Z")))
def test_order_ids_with_other_digit_counts_never_match(digits: str) -> None:
    # Given "W" followed by a digit run that is not 7 long / When parsed / Then no order id is found
    assert find_order_ids(f"order #W{digits} and W{digits}") == []
    assert normalise_order_id(f"#W{digits}") is None


# -- tracking numbers --------------------------------------------------------------------------
def test_tracking_number_is_twelve_digits_on_its_own() -> None:
    # Given a 12-digit tracking number next to an order id and a longer number
    text = "track 357962501027 for #W2611340, not 3579625010271"
    # When parsed / Then only the standalone 12-digit number is a tracking number
    assert find_tracking_numbers(text) == ["357962501027"]


@settings(max_examples=200)
@given(st.integers(min_value=1, max_value=30).filter(lambda n: n != 12).flatmap(
    lambda n: st.from_regex(rf"\A[0-9]{{{n}}}\Z")))
def test_digit_runs_of_other_lengths_are_not_tracking_numbers(digits: str) -> None:
    # Given a digit run that is not 12 long / When parsed / Then it is not a tracking number
    assert find_tracking_numbers(f"tracking {digits} thanks") == []


# -- e-mails -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("my email is Noah.Brown7922@Example.com.", ["noah.brown7922@example.com"]),
    ("邮箱 a_b+shop@mail.co.uk 谢谢", ["a_b+shop@mail.co.uk"]),
    ("contact me: nobody@localhost or @handle", []),
])
def test_emails_are_found_and_lower_cased(text: str, expected: list[str]) -> None:
    # Given a message with or without a valid e-mail / When parsed / Then valid ones come back lower-cased
    assert find_emails(text) == expected


@settings(max_examples=200)
@given(st.from_regex(r"\A[a-z][a-z0-9._]{0,15}[a-z0-9]\Z"),
       st.from_regex(r"\A[a-z][a-z0-9-]{0,10}[a-z0-9]\Z"),
       st.sampled_from(["com", "org", "io", "co.uk"]))
def test_generated_emails_roundtrip(local: str, domain: str, tld: str) -> None:
    # Given a generated well-formed address inside a sentence
    email = f"{local}@{domain}.{tld}"
    # When parsed / Then exactly that address is found
    assert find_emails(f"please email {email} today") == [email]


# -- zip codes -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("my zip is 62704", ["62704"]),
    ("zip 62704-1234 please", ["62704-1234"]),
    ("phone 5551234567, order W1234567, price $12345.67, 123456", []),
])
def test_zip_codes_are_five_or_nine_digits_on_their_own(text: str, expected: list[str]) -> None:
    # Given a message / When parsed / Then only standalone 5 or 5-4 digit groups are zip codes
    assert find_zip_codes(text) == expected


@settings(max_examples=200)
@given(st.integers(min_value=1, max_value=15).filter(lambda n: n != 5).flatmap(
    lambda n: st.from_regex(rf"\A[0-9]{{{n}}}\Z")))
def test_digit_runs_of_other_lengths_are_not_zip_codes(digits: str) -> None:
    # Given a digit run that is not 5 long / When parsed / Then it is not a zip code
    assert find_zip_codes(f"my zip is {digits} ok") == []


@settings(max_examples=200)
@given(st.from_regex(r"\A[0-9]{5}\Z"), st.one_of(st.none(), st.from_regex(r"\A[0-9]{4}\Z")))
def test_generated_zip_codes_roundtrip(five: str, four: str | None) -> None:
    # Given a generated zip or ZIP+4 / When parsed / Then it comes back unchanged
    z = five if four is None else f"{five}-{four}"
    assert find_zip_codes(f"zip code {z}, thanks") == [z]


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


# -- products ------------------------------------------------------------------------------------
def test_product_is_matched_with_its_option(catalogue: list[dict]) -> None:
    # Given a message about a blue water bottle / When products are matched
    [mention] = find_products("the blue water bottle leaks", catalogue)
    # Then the catalogue product is found with color=blue
    assert (mention.name, mention.product_id) == ("Water Bottle", "8310926033")
    assert mention.options == {"color": "blue"}


def test_options_spread_after_the_product_and_written_as_one_word_are_read(catalogue: list[dict]) -> None:
    # Given options listed well after the product, and "wifi" for the catalogue's "Wi-Fi"
    helmets = {"product_id": "7765186836", "name": "Cycling Helmet",
               "options": {"size": ["S", "M", "L"], "color": ["blue", "red", "white"],
                           "ventilation": ["low", "medium", "high"]}}
    bulbs = {"product_id": "2696197613", "name": "LED Light Bulb",
             "options": {"connectivity": ["Wi-Fi", "Bluetooth", "none"]}}
    [helmet] = find_products("I've been eyeing the cycling helmet, specifically the one with size S, "
                             "color blue, ventilation high", [*catalogue, helmets])
    [bulb] = find_products("the cheapest wifi light bulb", [*catalogue, bulbs])
    # Then every option is read, as the catalogue spells it
    assert helmet.options == {"size": "S", "color": "blue", "ventilation": "high"}
    assert bulb.options == {"connectivity": "Wi-Fi"}


def test_plural_and_typo_product_names_still_match(catalogue: list[dict]) -> None:
    # Given "those headphones" and a misspelling / When matched / Then both are Headphones
    assert [m.name for m in find_products("those headphones", catalogue)] == ["Headphones"]
    assert [m.name for m in find_products("my headphnoes broke", catalogue)] == ["Headphones"]
    # "-lves" plurals too: "the two bookshelves" is the Bookshelf
    assert [m.name for m in find_products("the smaller of the two bookshelves", catalogue)] == ["Bookshelf"]


def test_sizes_need_their_key_and_short_sizes_their_case(catalogue: list[dict]) -> None:
    # Given shoes with "size 9" and a t-shirt with "size M"
    shoes = find_products("return the black running shoes in size 9", catalogue)[0]
    shirt = find_products("is the t-shirt available in size M, red?", catalogue)[0]
    # When matched / Then sizes are read only with their key, alongside colours
    assert shoes.options == {"color": "black", "size": "9"}
    assert shirt.options == {"color": "red", "size": "M"}


def test_a_short_value_of_digits_and_letters_needs_no_key(catalogue: list[dict]) -> None:
    # Given a camera asked for "in 5K", without the word "resolution"
    [mention] = find_products("Is the action camera available in 5K?", catalogue)
    # When matched / Then the resolution is read all the same
    assert (mention.name, mention.options) == ("Action Camera", {"resolution": "5K"})

def test_option_shared_by_two_keys_goes_to_the_named_one(catalogue: list[dict]) -> None:
    # Given "black" that could be the frame or the lens colour, next to the word "lens"
    [mention] = find_products("those sunglasses with black lens", catalogue)
    # When matched / Then the option lands on the lens colour only
    assert mention.options == {"lens color": "black"}


def test_bare_head_noun_shared_by_products_is_flagged_ambiguous(catalogue: list[dict]) -> None:
    # Given "camera" while the catalogue has two cameras / When matched
    mentions = find_products("the camera stopped working", catalogue)
    # Then both are returned, flagged ambiguous, so the caller asks which one
    assert {m.name for m in mentions} == {"Action Camera", "Digital Camera"}
    assert all(m.ambiguous and m.score < 0.85 for m in mentions)


def test_options_attach_to_the_nearest_product(catalogue: list[dict]) -> None:
    # Given two products each with its own colour
    mentions = find_products("a red office chair and a silver smart watch", catalogue)
    # When matched / Then each keeps its own colour
    colours = {m.name: m.options.get("color") for m in mentions}
    assert colours == {"Office Chair": "red", "Smart Watch": "silver"}


def test_text_without_products_matches_nothing(catalogue: list[dict]) -> None:
    # Given a message about an address / When matched / Then no product is invented
    assert find_products("please change my address to 9 Elm St, Denver, CO 80202", catalogue) == []


# -- references ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "kind", "hint"), [
    ("what is the warranty on those headphones", "product", "headphones"),
    ("I want to return that item", "product", None),
    ("is that product still under warranty", "product", None),
    ("cancel that order", "order", None),
    ("这个订单到哪了", "order", None),
])
def test_references_are_detected_with_kind_and_hint(text: str, kind: str, hint: str | None) -> None:
    # Given a message pointing at something without naming it / When references are detected
    [ref] = find_references(text)
    # Then its kind and hint are reported for the caller to resolve
    assert (ref.kind, ref.hint) == (kind, hint)


def test_my_last_order_is_a_latest_order_reference() -> None:
    # Given "my last order" / When detected / Then it is an order reference marked latest
    [ref] = find_references("where is my last order?")
    assert (ref.kind, ref.latest) == ("order", True)


@pytest.mark.parametrize(("text", "kind"), [("ship it to my new address", "order"),
                                           ("is it under warranty", "product")])
def test_pronoun_kind_follows_its_verb(text: str, kind: str) -> None:
    # Given "it" governed by a shipping verb or not / When detected / Then the kind follows the verb
    assert [r.kind for r in find_references(text)] == [kind]


@pytest.mark.parametrize("text", ["it's been a week", "the order #W2611340 is late",
                                  "I moved to my new place"])
def test_idioms_and_explicit_ids_are_not_references(text: str) -> None:
    # Given text where "it", "the order" or "my …" point at nothing to resolve / When detected / Then none
    assert find_references(text) == []


CANDIDATES = [
    {"product_id": "6992792935", "name": "Headphones", "order_id": "#W2611340"},
    {"product_id": "8310926033", "name": "Water Bottle", "order_id": "#W2611340"},
    {"product_id": "6992792935", "name": "Headphones", "order_id": "#W1234567"},
]


def test_reference_with_hint_resolves_to_the_matching_ordered_product() -> None:
    # Given "those headphones" and products from the customer's orders
    ref = Reference(kind="product", hint="headphones")
    # When resolved / Then the headphones from the first order listing them are picked
    assert resolve_product_reference(ref, CANDIDATES) == CANDIDATES[0]


def test_fuzzy_hint_resolves_by_name_similarity() -> None:
    # Given a partial, plural hint / When resolved / Then the closest product name wins
    assert resolve_product_reference(Reference("product", "bottles"), CANDIDATES)["name"] == "Water Bottle"


def test_reference_without_hint_resolves_only_when_one_product_is_possible() -> None:
    # Given "that item" / When resolved against one product, then against two
    single = resolve_product_reference(Reference("product"), CANDIDATES[:1])
    several = resolve_product_reference(Reference("product"), CANDIDATES)
    # Then the single candidate is picked, and two different products stay unresolved
    assert single == CANDIDATES[0] and several is None


def test_hint_that_fits_no_candidate_is_not_forced() -> None:
    # Given "the laptop" while the customer only ordered headphones / When resolved
    # Then nothing is picked (asking beats acting on the wrong item)
    assert resolve_product_reference(Reference("product", "laptop"), CANDIDATES[:1]) is None


# -- everything at once --------------------------------------------------------------------------------
def test_compound_message_yields_all_its_entities(catalogue: list[dict]) -> None:
    # Given the compound example message
    text = ("where is order #W2611340, what is the warranty on those headphones, and ship it to my new "
            "address: 12 Main St, Springfield, IL 62704")
    # When every entity is extracted
    found = extract_entities(text, catalogue)
    # Then the order, the product reference, the address and its zip are all there
    assert found.order_ids == ["#W2611340"]
    assert [p.name for p in found.products] == ["Headphones"]
    assert [(r.kind, r.hint) for r in found.references] == [("product", "headphones"), ("order", None)]
    assert [a.address1 for a in found.addresses] == ["12 Main St"] and found.zip_codes == ["62704"]


def test_street_number_is_not_mistaken_for_a_zip_code() -> None:
    # Given an address whose street number has five digits / When extracted
    found = extract_entities("send it to 12345 Oak Avenue, Austin, TX 78701")
    # Then only the real zip code is reported
    assert found.zip_codes == ["78701"]


def test_a_word_that_names_two_products_equally_names_both_and_neither_for_sure() -> None:
    # Given two products that customers both call "kettle"
    catalogue = [{"product_id": "e1", "name": "Electric Kettle", "options": {}},
                 {"product_id": "t1", "name": "Tea Kettle", "options": {}},
                 {"product_id": "e1", "name": "kettle", "options": {}},
                 {"product_id": "t1", "name": "kettle", "options": {}}]
    # When a message says "my kettle"
    mentions = find_products("cancel my kettle order", catalogue)
    # Then both are mentioned, each flagged ambiguous (so the customer's orders decide, or they are asked)
    assert sorted((m.product_id, m.ambiguous) for m in mentions) == [("e1", True), ("t1", True)]
    # And a full name still names its product alone
    assert [(m.product_id, m.ambiguous) for m in find_products("my tea kettle", catalogue)] == [("t1", False)]


def test_a_state_code_is_a_word_of_its_own_not_the_end_of_another() -> None:
    # "... 585 Hillcrest Drive. Could you send it ...": "nd" of "send" is no North Dakota, so the
    # street line with a sentence after it is no address (the saved one is meant)
    from csagent.nlp.entities import find_addresses

    assert find_addresses("My order goes to 585 Hillcrest Drive. Could you send it to my home address?") == []
    assert [a.state for a in find_addresses("200 Pine Street, Suite 1200, Seattle WA 98101")] == ["WA"]
