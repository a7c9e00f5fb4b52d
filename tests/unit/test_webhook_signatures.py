"""Signature checks of the three platforms, as properties: a correctly signed request is
accepted whatever its body and secret, and any change to the body, the timestamp or the
signature is rejected (Hypothesis looks for a counterexample)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from csagent.messaging import slack, telegram, whatsapp
from csagent.messaging.errors import ForgedRequest, StaleRequest, WebhookRejected

NOW = 1_741_774_530
secrets = st.text(min_size=1, max_size=64)
bodies = st.binary(max_size=2048)
skews = st.integers(min_value=-slack.TOLERANCE_S, max_value=slack.TOLERANCE_S)
header_values = st.text(alphabet=st.characters(codec="latin-1"), max_size=80)
# Another timestamp: most often one still inside the window (only the signature can catch it).
timestamps = st.one_of(skews.map(lambda skew: str(NOW + skew)), header_values)


def slack_headers(secret: str, timestamp: str, body: bytes) -> dict[str, str]:
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": slack.sign(secret, timestamp, body)}


# ------------------------------------------------------------------------------------------ Slack
@given(secret=secrets, body=bodies, skew=skews)
def test_slack_accepts_a_correctly_signed_request_within_five_minutes(secret, body, skew):
    # Given a request Slack signed at a time within 5 minutes of now
    headers = slack_headers(secret, str(NOW + skew), body)
    # When it is verified
    # Then it is accepted (no exception)
    slack.verify(headers, body, secret, NOW)


@given(secret=secrets, body=bodies, other=bodies, skew=skews)
def test_slack_rejects_any_change_to_the_body(secret, body, other, skew):
    # Given a signed request whose body was then replaced by different bytes
    assume(other != body)
    headers = slack_headers(secret, str(NOW + skew), body)
    # When it is verified, Then it is refused as forged
    with pytest.raises(ForgedRequest):
        slack.verify(headers, other, secret, NOW)


@given(secret=secrets, body=bodies, skew=skews, new_timestamp=timestamps)
def test_slack_rejects_any_change_to_the_timestamp(secret, body, skew, new_timestamp):
    # Given a signed request whose timestamp header was then changed (to anything at all)
    timestamp = str(NOW + skew)
    assume(new_timestamp != timestamp)
    headers = {**slack_headers(secret, timestamp, body), "X-Slack-Request-Timestamp": new_timestamp}
    # When it is verified, Then it is refused (forged, or stale if moved outside the window)
    with pytest.raises((ForgedRequest, StaleRequest)):
        slack.verify(headers, body, secret, NOW)


@given(secret=secrets, body=bodies, skew=skews, signature=header_values)
def test_slack_rejects_any_other_signature(secret, body, skew, signature):
    # Given a fresh request whose signature is not the one for its body and timestamp
    timestamp = str(NOW + skew)
    assume(signature != slack.sign(secret, timestamp, body))
    headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature}
    # When it is verified, Then it is refused as forged
    with pytest.raises(ForgedRequest):
        slack.verify(headers, body, secret, NOW)


@given(secret=secrets, body=bodies,
       age=st.integers(min_value=slack.TOLERANCE_S + 1, max_value=10**9), future=st.booleans())
def test_slack_rejects_a_correctly_signed_request_older_or_newer_than_five_minutes(secret, body, age, future):
    # Given a request correctly signed, but stamped more than 5 minutes before (or after) now
    timestamp = str(NOW + age if future else NOW - age)
    assume(int(timestamp) >= 0)
    # When it is verified, Then it is refused as stale (a replay)
    with pytest.raises(StaleRequest):
        slack.verify(slack_headers(secret, timestamp, body), body, secret, NOW)


def test_slack_signature_is_hmac_sha256_of_version_timestamp_and_body_as_slack_documents():
    # Given Slack's documented scheme, computed independently
    body = b'{"type":"event_callback"}'
    expected = "v0=" + hmac.new(b"signing-secret", b"v0:1741774530:" + body, hashlib.sha256).hexdigest()
    # When the module signs the same request, Then it produces the same header value
    assert slack.sign("signing-secret", "1741774530", body) == expected


def test_slack_rejects_a_request_without_signature_headers():
    # Given a request with no Slack headers at all
    # When it is verified, Then it is refused as forged
    with pytest.raises(ForgedRequest):
        slack.verify({}, b"{}", "secret", NOW)


# --------------------------------------------------------------------------------------- Telegram
@given(secret=secrets, body=bodies)
def test_telegram_accepts_the_configured_secret_token(secret, body):
    # Given an update carrying the bot's secret token
    # When it is verified, Then it is accepted
    telegram.verify({"X-Telegram-Bot-Api-Secret-Token": secret}, body, secret, NOW)


@given(secret=secrets, body=bodies, token=header_values)
def test_telegram_rejects_any_other_token(secret, body, token):
    # Given an update carrying any token but the configured one
    assume(token != secret)
    # When it is verified, Then it is refused as forged
    with pytest.raises(ForgedRequest):
        telegram.verify({"X-Telegram-Bot-Api-Secret-Token": token}, body, secret, NOW)


# --------------------------------------------------------------------------------------- WhatsApp
@given(secret=secrets, body=bodies)
def test_whatsapp_accepts_a_correctly_signed_body(secret, body):
    # Given a body signed with the app secret
    # When it is verified, Then it is accepted
    whatsapp.verify({"X-Hub-Signature-256": whatsapp.sign(secret, body)}, body, secret, NOW)


@given(secret=secrets, body=bodies, other=bodies)
def test_whatsapp_rejects_any_change_to_the_body(secret, body, other):
    # Given a signed notification whose body was then replaced
    assume(other != body)
    # When it is verified, Then it is refused as forged
    with pytest.raises(ForgedRequest):
        whatsapp.verify({"X-Hub-Signature-256": whatsapp.sign(secret, body)}, other, secret, NOW)


@given(secret=secrets, body=bodies, signature=header_values)
def test_whatsapp_rejects_any_other_signature(secret, body, signature):
    # Given a notification whose signature header is anything but the right one
    assume(signature != whatsapp.sign(secret, body))
    # When it is verified, Then it is refused as forged
    with pytest.raises(ForgedRequest):
        whatsapp.verify({"X-Hub-Signature-256": signature}, body, secret, NOW)


def test_whatsapp_signature_is_hmac_sha256_of_the_raw_body_as_meta_documents():
    # Given Meta's documented scheme, computed independently
    body = b'{"object":"whatsapp_business_account"}'
    expected = "sha256=" + hmac.new(b"app-secret", body, hashlib.sha256).hexdigest()
    # When the module signs the same body, Then it produces the same header value
    assert whatsapp.sign("app-secret", body) == expected


@given(verify_token=secrets, offered=header_values, challenge=st.text(min_size=1, max_size=32))
def test_whatsapp_subscription_echoes_the_challenge_only_for_the_verify_token(verify_token, offered,
                                                                             challenge):
    # Given Meta's GET handshake with some verify token
    query = {"hub.mode": "subscribe", "hub.verify_token": offered, "hub.challenge": challenge}
    # When it is checked
    if offered == verify_token:
        # Then the right token gets the challenge back
        assert whatsapp.verify_subscription(query, verify_token).body == challenge
    else:
        # Then any other token is refused as forged
        with pytest.raises(ForgedRequest):
            whatsapp.verify_subscription(query, verify_token)


# ------------------------------------------------------------------------------------ fail closed
@pytest.mark.parametrize("check", [
    lambda: slack.verify(slack_headers("", str(NOW), b"{}"), b"{}", "", NOW),
    lambda: telegram.verify({"X-Telegram-Bot-Api-Secret-Token": ""}, b"{}", "", NOW),
    lambda: whatsapp.verify({"X-Hub-Signature-256": whatsapp.sign("", b"{}")}, b"{}", "", NOW),
    lambda: whatsapp.verify_subscription({"hub.mode": "subscribe", "hub.verify_token": "",
                                          "hub.challenge": "c"}, ""),
], ids=["slack", "telegram", "whatsapp", "whatsapp-subscribe"])
def test_an_unconfigured_secret_rejects_even_a_request_signed_with_the_empty_secret(check):
    # Given no secret configured, and a request "signed" with the empty string anyone can compute
    # When it is verified, Then it is refused: an unconfigured platform fails closed
    with pytest.raises(WebhookRejected):
        check()
