"""The webhook Lambda handler with the Function URL events in events/webhook/, against the
webhook queue built from template.yaml in `moto.mock_aws`: authentic messages are queued and
acknowledged at once, handshakes are answered, and forged or stale requests get 401 with nothing
queued."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest
from moto import mock_aws
from webhook_support import (
    LOCAL_SECRETS,
    ROOT,
    LambdaContext,
    fresh_slack,
    load_event,
    slack_event,
    slack_message,
    telegram_event,
    whatsapp_event,
    whatsapp_text,
)

from csagent.messaging import runtime
from csagent.messaging.models import InboundMessage, Platform
from devstack.template import create_resources, local_resources

WEBHOOK_APP = ROOT / "functions" / "webhook" / "app.py"
VERIFICATION_SECRETS = ("SLACK_SIGNING_SECRET", "TELEGRAM_SECRET_TOKEN", "WHATSAPP_APP_SECRET",
                        "WHATSAPP_VERIFY_TOKEN")
Handler = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def sqs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The template's queues in mock_aws (endpoint overrides from the shell would bypass moto)."""
    for var in [v for v in os.environ if v.startswith("AWS_ENDPOINT_URL")]:
        monkeypatch.delenv(var)
    with mock_aws():
        session = boto3.session.Session(region_name="us-east-1")
        resources = local_resources(ROOT / "template.yaml")
        create_resources(session, replace(resources, tables=(), buckets=()))  # the webhook needs queues only
        yield session.client("sqs")


@pytest.fixture
def webhook(sqs: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Handler]:
    """`handler(event)` of functions/webhook/app.py with the local verification secrets."""
    for name in VERIFICATION_SECRETS:
        monkeypatch.setenv(name, LOCAL_SECRETS[name])
    monkeypatch.delenv("WEBHOOK_QUEUE_URL", raising=False)
    runtime.reset()
    spec = importlib.util.spec_from_file_location("webhook_app_unit", WEBHOOK_APP)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield lambda event: module.handler(event, LambdaContext())
    runtime.reset()


def queued(sqs: Any) -> list[InboundMessage]:
    """Everything on the webhook queue (removed as it is read)."""
    url = sqs.get_queue_url(QueueName="csagent-local-webhooks")["QueueUrl"]
    out: list[InboundMessage] = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in batch:
            out.append(InboundMessage.model_validate_json(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return out


def body(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


# ------------------------------------------------------------------------------------------ Slack
def test_a_signed_slack_message_is_queued_and_acknowledged_at_once(webhook, sqs):
    # Given the Slack DM event, signed just now
    event = fresh_slack(load_event("slack_message.json"), time.time())
    # When Slack delivers it
    response = webhook(event)
    # Then it is acknowledged and the message is on the queue for the worker
    assert response["statusCode"] == 200
    assert body(response) == {"ok": True, "queued": 1}
    [message] = queued(sqs)
    assert (message.platform, message.platform_user_id, message.chat_id) == (Platform.SLACK, "U0LOCAL01",
                                                                             "D0LOCAL01")
    assert message.text == "Hi, where is my order?"
    assert message.direct is True


def test_slack_url_verification_echoes_the_challenge_and_queues_nothing(webhook, sqs):
    # Given Slack's url_verification handshake, signed
    event = fresh_slack(load_event("slack_url_verification.json"), time.time())
    # When it arrives
    response = webhook(event)
    # Then the challenge is echoed as plain text and nothing is queued
    assert response["statusCode"] == 200
    assert response["body"] == "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    assert response["headers"]["content-type"] == "text/plain"
    assert queued(sqs) == []


def test_a_slack_retry_is_acknowledged_and_carries_the_same_dedupe_key_as_the_original(webhook, sqs):
    # Given the original delivery and Slack's retry of it (X-Slack-Retry-Num: 1)
    now = time.time()
    original = webhook(fresh_slack(load_event("slack_message.json"), now))
    # When the retry arrives
    retry = webhook(fresh_slack(load_event("slack_retry.json"), now))
    # Then both are acknowledged, and both name the same platform message, so the worker's dedupe
    # answers it once whichever copy it sees first
    assert original["statusCode"] == retry["statusCode"] == 200
    first, second = queued(sqs)
    assert first.dedupe_key == second.dedupe_key == "slack:D0LOCAL01:1741774529.000100"


@pytest.mark.parametrize("extra", [
    {"bot_id": "B0LOCAL01"},
    {"subtype": "bot_message"},
    {"subtype": "message_changed"},
    {"subtype": "message_deleted"},
], ids=["bot", "bot_message", "edit", "deletion"])
def test_slack_bot_messages_and_edits_are_acknowledged_but_not_queued(webhook, sqs, extra):
    # Given an authentic Slack event that is not a person's new message
    event = slack_event(slack_message("edited text", ts="1741774600.000200", **extra), time.time())
    # When it arrives
    response = webhook(event)
    # Then Slack gets its 200 (so it does not retry) and nothing is queued
    assert response["statusCode"] == 200
    assert body(response) == {"ok": True, "queued": 0}
    assert queued(sqs) == []


def test_a_slack_message_in_a_shared_channel_is_queued_as_not_direct(webhook, sqs):
    # Given a message in a public channel
    event = slack_event(slack_message("order #W4435622?", ts="1741774700.000300", channel="C0LOCAL01",
                                      channel_type="channel"), time.time())
    # When it arrives
    webhook(event)
    # Then it is queued marked as not direct (the worker never answers account questions there)
    [message] = queued(sqs)
    assert message.direct is False


def test_a_stale_slack_request_is_refused_with_401_and_nothing_queued(webhook, sqs):
    # Given the committed Slack event, correctly signed but stamped long ago (a replay)
    event = load_event("slack_message.json")
    # When it arrives now
    response = webhook(event)
    # Then it is refused as stale with a JSON error, and nothing is queued
    assert response["statusCode"] == 401
    assert body(response)["error"]["code"] == "stale_request"
    assert queued(sqs) == []


@pytest.mark.parametrize("event_file", ["slack_forged.json", "telegram_forged.json", "whatsapp_forged.json"])
def test_forged_requests_are_refused_with_401_and_nothing_queued(webhook, sqs, event_file):
    # Given a forged request (wrong signature, wrong token, or a tampered body), fresh in time
    event = load_event(event_file)
    if event_file.startswith("slack"):
        event = fresh_slack(event, time.time(), resign=False)
    # When it arrives
    response = webhook(event)
    # Then it is refused with 401 and a JSON error, and nothing is queued
    assert response["statusCode"] == 401
    assert body(response)["error"]["code"] == "forged_request"
    assert queued(sqs) == []


def test_a_slack_request_with_a_valid_signature_but_invalid_json_is_a_400(webhook, sqs):
    # Given an authentic Slack request whose body is not JSON
    event = fresh_slack({**load_event("slack_message.json"), "body": "not json"}, time.time())
    # When it arrives
    response = webhook(event)
    # Then it is a 400 with a JSON error and nothing is queued
    assert response["statusCode"] == 400
    assert body(response)["error"]["code"] == "malformed_request"
    assert queued(sqs) == []


# --------------------------------------------------------------------------------------- Telegram
def test_a_telegram_message_is_queued(webhook, sqs):
    # Given the Telegram update with the bot's secret token
    # When Telegram delivers it
    response = webhook(load_event("telegram_message.json"))
    # Then it is acknowledged and queued with the chat to answer in
    assert response["statusCode"] == 200
    [message] = queued(sqs)
    assert (message.platform, message.platform_user_id, message.chat_id) == (Platform.TELEGRAM, "700000001",
                                                                             "700000001")
    assert message.dedupe_key == "telegram:700000001:17"


@pytest.mark.parametrize(("kwargs", "queued_count"), [
    ({"is_bot": True}, 0),
    ({"chat_type": "group", "chat_id": -100123}, 1),
], ids=["from-a-bot", "group-chat"])
def test_telegram_bots_are_ignored_and_group_chats_are_marked_not_direct(webhook, sqs, kwargs, queued_count):
    # Given an update from a bot, or from a person in a group chat
    event = telegram_event("where is my order?", message_id=18, **kwargs)
    # When it arrives
    response = webhook(event)
    # Then it is acknowledged; a bot's is dropped, a group message is queued as not direct
    assert response["statusCode"] == 200
    messages = queued(sqs)
    assert len(messages) == queued_count
    assert all(m.direct is False for m in messages)


# --------------------------------------------------------------------------------------- WhatsApp
def test_a_base64_encoded_whatsapp_message_is_decoded_verified_and_queued(webhook, sqs):
    # Given the WhatsApp notification as the Function URL delivers it (body base64-encoded)
    event = load_event("whatsapp_message.json")
    assert event["isBase64Encoded"] is True
    # When it arrives
    response = webhook(event)
    # Then the signature is checked over the decoded bytes, and the message is queued
    assert response["statusCode"] == 200
    [message] = queued(sqs)
    assert (message.platform, message.chat_id, message.text) == (Platform.WHATSAPP, "15555550123",
                                                                 "Hi, where is my order?")


def test_a_body_that_is_not_valid_base64_is_a_400(webhook, sqs):
    # Given a Function URL event flagged base64 whose body is not base64
    event = {**load_event("whatsapp_message.json"), "body": "%%% not base64 %%%"}
    # When it arrives
    response = webhook(event)
    # Then it is a 400 with a JSON error and nothing is queued
    assert response["statusCode"] == 400
    assert body(response)["error"]["code"] == "malformed_request"
    assert queued(sqs) == []


def test_whatsapp_subscription_echoes_the_challenge(webhook, sqs):
    # Given Meta's GET handshake with our verify token
    # When it arrives
    response = webhook(load_event("whatsapp_challenge.json"))
    # Then hub.challenge is echoed and nothing is queued
    assert (response["statusCode"], response["body"]) == (200, "1158201444")
    assert queued(sqs) == []


def test_whatsapp_subscription_with_a_wrong_verify_token_is_refused(webhook):
    # Given the handshake with someone else's verify token
    event = load_event("whatsapp_challenge.json")
    event["queryStringParameters"]["hub.verify_token"] = "not-ours"
    # When it arrives
    response = webhook(event)
    # Then it is refused and the challenge is not echoed
    assert response["statusCode"] == 401
    assert "1158201444" not in response["body"]


def test_whatsapp_delivery_statuses_are_acknowledged_but_not_queued(webhook, sqs):
    # Given a signed notification that only reports a delivery status
    notification = whatsapp_text("x", wamid="wamid.status")
    value = notification["entry"][0]["changes"][0]["value"]
    value["statuses"] = [{"id": "wamid.sent", "status": "delivered", "timestamp": "1741774600",
                          "recipient_id": "15555550123"}]
    del value["messages"]
    # When it arrives
    response = webhook(whatsapp_event(notification))
    # Then it is acknowledged and nothing is queued
    assert response["statusCode"] == 200
    assert queued(sqs) == []


# ---------------------------------------------------------------------------------------- routing
@pytest.mark.parametrize(("method", "path", "status", "code"), [
    ("POST", "/discord", 404, "unknown_platform"),
    ("GET", "/slack/events", 405, "method_not_allowed"),
])
def test_unknown_paths_and_methods_get_a_json_error(webhook, sqs, method, path, status, code):
    # Given a request to a path no platform uses, or with the wrong method
    event = load_event("telegram_message.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    # When it arrives
    response = webhook(event)
    # Then it gets the right status and a JSON error, and nothing is queued
    assert response["statusCode"] == status
    assert body(response)["error"]["code"] == code
    assert queued(sqs) == []


def test_a_platform_without_a_configured_secret_is_not_served(webhook, sqs, monkeypatch):
    # Given no Telegram secret token configured
    monkeypatch.delenv("TELEGRAM_SECRET_TOKEN")
    runtime.reset()
    # When a Telegram update arrives (even one carrying an empty token)
    event = load_event("telegram_message.json")
    event["headers"]["x-telegram-bot-api-secret-token"] = ""
    response = webhook(event)
    # Then the platform is treated as absent (fail closed) and nothing is queued
    assert response["statusCode"] == 404
    assert queued(sqs) == []


def test_when_the_queue_is_unavailable_the_platform_gets_a_503_so_it_delivers_again(webhook, monkeypatch):
    # Given a queue URL that does not exist
    monkeypatch.setenv("WEBHOOK_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/missing")
    runtime.reset()
    # When a valid Telegram update arrives
    response = webhook(load_event("telegram_message.json"))
    # Then the answer is a 503 JSON error (not a crash), so Telegram retries later
    assert response["statusCode"] == 503
    assert body(response)["error"]["code"] == "dependency_unavailable"


def test_verification_secrets_come_from_secrets_manager_when_an_arn_is_set(webhook, sqs, monkeypatch):
    # Given the verification secrets in a Secrets Manager secret and none in the environment
    secret = {"slack_signing_secret": LOCAL_SECRETS["SLACK_SIGNING_SECRET"]}
    arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
        Name="csagent/webhook", SecretString=json.dumps(secret))["ARN"]
    for name in VERIFICATION_SECRETS:
        monkeypatch.delenv(name)
    monkeypatch.setenv("WEBHOOK_SECRETS_ARN", arn)
    runtime.reset()
    # When a Slack message signed with that secret arrives
    response = webhook(fresh_slack(load_event("slack_message.json"), time.time()))
    # Then it is verified with the secret from Secrets Manager and queued
    assert response["statusCode"] == 200
    assert len(queued(sqs)) == 1


def test_a_deployed_stage_refuses_platform_secrets_from_the_environment(monkeypatch):
    # Given a dev stage with the Slack signing secret in the Lambda environment
    from pydantic import ValidationError

    from csagent.messaging.config import MessagingSettings

    monkeypatch.setenv("STAGE", "dev")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "leaked-into-env")
    # When the settings are read, Then they refuse: secrets come from Secrets Manager there
    with pytest.raises(ValidationError, match="SLACK_SIGNING_SECRET must come from Secrets Manager"):
        MessagingSettings()


def test_the_handler_acknowledges_well_within_slacks_three_second_deadline(webhook, sqs):
    # Given a warm webhook (first call made) and a fresh Slack message
    webhook(fresh_slack(load_event("slack_message.json"), time.time()))
    event = fresh_slack(load_event("slack_message.json"), time.time())
    # When Slack delivers it
    started = time.perf_counter()
    response = webhook(event)
    elapsed = time.perf_counter() - started
    # Then the 200 comes back in well under Slack's 3 s deadline
    assert response["statusCode"] == 200
    assert elapsed < 1.0
