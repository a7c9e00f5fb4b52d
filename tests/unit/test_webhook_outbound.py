"""Replies out through each platform's send API (a local server records the calls): the
documented request shapes, a timeout, and bounded retries with backoff on 429 and 5xx only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from webhook_support import LOCAL_SECRETS, RecordingServer, recording_server

from csagent.messaging.config import OutboundTokens
from csagent.messaging.models import Platform
from csagent.messaging.outbound import OutboundConfig, OutboundSender

TOKENS = OutboundTokens(slack_bot_token=LOCAL_SECRETS["SLACK_BOT_TOKEN"],
                        telegram_bot_token=LOCAL_SECRETS["TELEGRAM_BOT_TOKEN"],
                        whatsapp_access_token=LOCAL_SECRETS["WHATSAPP_ACCESS_TOKEN"])


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    yield from recording_server()


@pytest.fixture
def sleeps() -> list[float]:
    return []


def sender(server: RecordingServer, sleeps: list[float], **overrides: Any) -> OutboundSender:
    config = OutboundConfig(**{
        "slack_api_base": f"{server.url}/slack", "telegram_api_base": f"{server.url}/telegram",
        "whatsapp_api_base": f"{server.url}/whatsapp", "whatsapp_phone_number_id": "106540352242922",
        "timeout_s": 2.0, "max_attempts": 4, "backoff_s": 0.5, "max_backoff_s": 8.0, **overrides})
    return OutboundSender(config, lambda: TOKENS, sleep=sleeps.append, jitter=lambda: 1.0)


@pytest.mark.parametrize(("platform", "chat", "path", "authorization", "payload"), [
    (Platform.SLACK, "D0LOCAL01", "/slack/chat.postMessage", "Bearer xoxb-local-bot-token",
     {"channel": "D0LOCAL01", "text": "Order #W1 is delivered."}),
    (Platform.TELEGRAM, "700000001", "/telegram/bot123456:local-telegram-bot-token/sendMessage", None,
     {"chat_id": "700000001", "text": "Order #W1 is delivered."}),
    (Platform.WHATSAPP, "15555550123", "/whatsapp/106540352242922/messages",
     "Bearer local-whatsapp-access-token",
     {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "15555550123", "type": "text",
      "text": {"preview_url": False, "body": "Order #W1 is delivered."}}),
], ids=["slack", "telegram", "whatsapp"])
def test_each_platform_gets_its_documented_send_request(server, sleeps, platform, chat, path, authorization,
                                                        payload):
    # Given a reply for a chat on each platform
    # When it is sent
    delivery = sender(server, sleeps).send(platform, chat, "Order #W1 is delivered.")
    # Then the platform's send API got one JSON POST of the documented shape
    assert delivery.ok and delivery.attempts == 1
    [request] = server.requests
    assert (request.path, request.body) == (path, payload)
    assert request.headers.get("authorization") == authorization
    assert request.headers["content-type"].startswith("application/json")


def test_429_and_5xx_are_retried_with_growing_backoff_until_success(server, sleeps):
    # Given Telegram answering 429, 503 and 500 before accepting
    server.script = [429, 503, 500]
    # When a reply is sent
    delivery = sender(server, sleeps).send(Platform.TELEGRAM, "700000001", "hi")
    # Then it got through on the 4th attempt after waits that doubled each time
    assert delivery.ok and delivery.attempts == 4
    assert len(server.requests) == 4
    assert sleeps == [0.5, 1.0, 2.0]


def test_the_backoff_is_full_jitter_between_zero_and_the_doubling_cap(server, sleeps):
    # Given Telegram answering 503 twice, and a sender whose random draw is a quarter
    server.script = [503, 503]
    config = OutboundConfig(f"{server.url}/slack", f"{server.url}/telegram", f"{server.url}/whatsapp", "1")
    quarter = OutboundSender(config, lambda: TOKENS, sleep=sleeps.append, jitter=lambda: 0.25)
    # When a reply is sent
    assert quarter.send(Platform.TELEGRAM, "700000001", "hi").ok
    # Then each wait is that share of the cap (0.5 s, then 1 s): drawn from 0, not from half the cap
    assert sleeps == [0.125, 0.25]


def test_retries_are_bounded_and_the_failure_is_reported_as_retryable(server, sleeps):
    # Given Slack failing with 502 on every attempt
    server.script = [502] * 10
    # When a reply is sent
    delivery = sender(server, sleeps).send(Platform.SLACK, "D0LOCAL01", "hi")
    # Then it stops after max_attempts and says the queue may retry later
    assert (delivery.ok, delivery.retryable, delivery.attempts) == (False, True, 4)
    assert len(server.requests) == 4


def test_a_retry_after_header_sets_the_wait(server, sleeps):
    # Given WhatsApp rate-limiting once with Retry-After: 3
    server.script = [429]
    server.retry_after = "3"
    # When a reply is sent
    delivery = sender(server, sleeps).send(Platform.WHATSAPP, "15555550123", "hi")
    # Then the sender waited exactly what the platform asked before succeeding
    assert delivery.ok
    assert sleeps == [3.0]


def test_a_retry_after_longer_than_the_cap_leaves_the_retry_to_the_queue(server, sleeps):
    # Given Slack asking for a 60 s pause (more than the 8 s the worker waits)
    server.script = [429]
    server.retry_after = "60"
    # When a reply is sent
    delivery = sender(server, sleeps).send(Platform.SLACK, "D0LOCAL01", "hi")
    # Then it does not sleep 60 s in the worker: one attempt, a retryable failure
    assert (delivery.ok, delivery.retryable, delivery.attempts) == (False, True, 1)
    assert sleeps == []


@pytest.mark.parametrize("answer", [400, 403, (200, {"ok": False, "error": "channel_not_found"})],
                         ids=["400", "403", "slack-ok-false"])
def test_a_client_error_is_final_and_not_retried(server, sleeps, answer):
    # Given the platform refusing the request itself (bad chat, blocked bot, Slack's ok:false)
    server.script = [answer]
    # When a reply is sent
    delivery = sender(server, sleeps).send(Platform.SLACK, "D0LOCAL01", "hi")
    # Then there is one attempt and the failure is final
    assert (delivery.ok, delivery.retryable, delivery.attempts) == (False, False, 1)
    assert len(server.requests) == 1


def test_a_slow_platform_times_out_and_is_retried(server, sleeps):
    # Given Telegram taking longer than the 0.2 s timeout to answer
    server.delay_s = 0.5
    # When a reply is sent with two attempts allowed
    delivery = sender(server, sleeps, timeout_s=0.2, max_attempts=2).send(Platform.TELEGRAM, "1", "hi")
    # Then each attempt timed out and the failure is retryable
    assert (delivery.ok, delivery.retryable, delivery.attempts) == (False, True, 2)
    assert delivery.error == "TimeoutError"


def test_a_reply_longer_than_telegram_allows_is_clipped_to_its_limit(server, sleeps):
    # Given a 5,000-character reply
    # When it is sent to Telegram (4,096 characters per message)
    sender(server, sleeps).send(Platform.TELEGRAM, "1", "x" * 5000)
    # Then Telegram receives 4,096 characters ending in an ellipsis
    text = server.requests[0].body["text"]
    assert len(text) == 4096 and text.endswith("…")


def test_a_platform_without_a_token_is_not_called(server, sleeps):
    # Given no Slack bot token
    unconfigured = OutboundSender(OutboundConfig(f"{server.url}/slack", "", "", ""), OutboundTokens)
    # When a Slack reply is sent
    delivery = unconfigured.send(Platform.SLACK, "D0LOCAL01", "hi")
    # Then nothing is called and the failure is final
    assert (delivery.ok, delivery.retryable, delivery.attempts) == (False, False, 0)
    assert server.requests == []
