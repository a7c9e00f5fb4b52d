"""Entities with a rigid shape (`nlp.entities.identifiers`): order ids, tracking numbers, e-mails,
zip codes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csagent.nlp.entities.identifiers import (
    find_emails,
    find_order_ids,
    find_tracking_numbers,
    find_zip_codes,
    normalise_order_id,
)


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
