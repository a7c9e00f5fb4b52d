"""Parsing what platforms send, and what customers write to prove who they are.

Parsers see bodies that passed the signature check but may still have any shape: whatever the
bytes, a parser returns messages, a challenge or an ignore, or raises `MalformedRequest` (the
webhook's 400) - never anything else, which would be a 500 and a platform retry storm."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from csagent.messaging import slack, telegram, whatsapp
from csagent.messaging.errors import MalformedRequest
from csagent.messaging.identity import Credentials, extract_credentials
from csagent.messaging.models import Challenge, Ignored, InboundMessage

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children,
                                                                      max_size=5),
    max_leaves=30,
)


def shaped(**fields: st.SearchStrategy) -> st.SearchStrategy:
    """A JSON object with these keys, each holding its strategy's value."""
    return st.fixed_dictionaries(fields)


def either(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """Nine times in ten a value of the right type (with any content), else any JSON at all."""
    return st.integers(0, 9).flatmap(lambda roll: strategy if roll < 9 else json_values)


numbers = either(st.integers())
texts = either(st.text(max_size=30))
# Epoch seconds, including the ones no datetime can hold.
epochs = either(st.integers() | st.sampled_from([0, -1, 10**11, 10**20, -(10**20)]))
epoch_texts = either(epochs.map(str) | st.floats().map(str) | st.text(max_size=12))
# Documents shaped like each platform's, with arbitrary values where the fields are.
slack_like = shaped(
    type=either(st.sampled_from(["event_callback", "url_verification"])), challenge=texts,
    event=either(shaped(type=either(st.just("message")), user=texts, channel=texts, ts=epoch_texts,
                        text=texts, channel_type=texts)))
telegram_like = shaped(update_id=numbers, message=either(shaped(
    message_id=numbers, date=epochs, chat=either(shaped(id=numbers, type=texts)), text=texts,
    **{"from": either(shaped(id=numbers, is_bot=either(st.booleans())))})))
whatsapp_like = shaped(object=either(st.just("whatsapp_business_account")), entry=st.lists(shaped(
    changes=st.lists(shaped(field=either(st.just("messages")), value=shaped(messages=st.lists(shaped(
        id=texts, timestamp=either(epochs | epoch_texts), type=either(st.just("text")),
        text=either(shaped(body=texts)), **{"from": texts}), max_size=3))), max_size=2)), max_size=2))
bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    slack_like.map(lambda v: json.dumps(v).encode()),
    telegram_like.map(lambda v: json.dumps(v).encode()),
    whatsapp_like.map(lambda v: json.dumps(v).encode()),
)


@pytest.mark.parametrize("platform", [slack, telegram, whatsapp], ids=["slack", "telegram", "whatsapp"])
@given(body=bodies)
def test_a_parser_answers_any_body_with_a_result_or_a_malformed_request(platform, body):
    # Given any body at all (garbage, any JSON, or the platform's shape with arbitrary values)
    # When it is parsed
    try:
        result = platform.parse(body)
    except MalformedRequest:
        return  # Then either it is refused as malformed (a 400) ...
    # ... or the result is one of the three outcomes the webhook knows how to answer
    assert isinstance(result, Challenge | Ignored) or (
        isinstance(result, tuple) and all(isinstance(m, InboundMessage) for m in result))


@pytest.mark.parametrize(("text", "expected"), [
    ("noah.brown7922@example.com", Credentials(email="noah.brown7922@example.com")),
    ("Sure! It's Noah.Brown7922@Example.com, thanks", Credentials(email="Noah.Brown7922@Example.com")),
    ("Noah Brown 80279", Credentials(zip="80279", names=(("noah", "brown"),))),
    ("I'm Noah Brown, zip 80279-1234", Credentials(zip="80279", names=(
        ("i'm", "noah"), ("noah", "brown"), ("brown", "zip")))),
])
def test_credentials_are_read_from_what_customers_write(text, expected):
    # Given a message offering an email, or a name with a zip code
    # When the credentials are extracted
    # Then the email, or the zip and every adjacent word pair (one is the name), come out
    assert extract_credentials(text) == expected


@pytest.mark.parametrize("text", [
    "where is my order #W4435622?",       # no email, no zip
    "Noah 80279",                          # one word is not a first and last name
    "order 1234567 please",                # seven digits are not a zip code
    "hello " * 20 + "80279",               # a long text is not a credentials message
])
def test_messages_without_credentials_yield_none(text):
    # Given a message that offers neither an email nor name + zip
    # When the credentials are extracted, Then there are none (the user is asked for them)
    assert extract_credentials(text) is None
