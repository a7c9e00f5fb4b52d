"""Messaging end to end on the local stack: the webhook Lambda handler with the Function URL
events → the message on the moto SQS queue → the worker Lambda handler with the batch SQS hands
it → the real ConversationService (Neo4j seeded with tau-retail, DynamoDB on moto) → the reply
recorded by a local HTTP server standing in for the platforms' send APIs.

`deliver()` plays the part of Lambda's SQS event source mapping: it receives a batch, invokes the
worker handler, deletes the records the handler did not report as failed, and makes the failed
ones visible again at once (instead of after the 180 s visibility timeout).
"""

from __future__ import annotations

import importlib.util
import random
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from webhook_support import (
    LOCAL_SECRETS,
    ROOT,
    LambdaContext,
    RecordingServer,
    fresh_slack,
    load_event,
    outbound_env,
    recording_server,
    telegram_event,
    whatsapp_event,
    whatsapp_text,
)

from csagent import runtime as core
from csagent.messaging import runtime
from csagent.messaging.models import InboundMessage
from csagent.messaging.replies import load_replies

pytestmark = pytest.mark.integration

REPLIES = load_replies()
QUEUE, DLQ, TABLE = "csagent-local-webhooks", "csagent-local-webhooks-dlq", "csagent-local-idempotency"
CUSTOMER_EMAIL = "james.li4495@example.com"  # james_li_5688
OWN_ORDER, OWN_TRACKING = "#W4435622", "967193221991"  # delivered with FedEx
OTHER_ORDER, OTHER_TRACKING = "#W7678072", "517177699738"  # noah_brown_6181's, delivered with USPS
Handler = Callable[[dict[str, Any]], dict[str, Any]]


def _load(name: str, path: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    yield from recording_server()


@pytest.fixture
def sqs(moto_endpoint: str) -> Any:
    return boto3.client("sqs", endpoint_url=moto_endpoint, region_name="us-east-1")


@pytest.fixture
def urls(sqs: Any) -> dict[str, str]:
    """The template's webhook queue and DLQ on the moto server, emptied for the test."""
    out = {name: sqs.get_queue_url(QueueName=name)["QueueUrl"] for name in (QUEUE, DLQ)}
    for url in out.values():  # drained, not purged: SQS allows one purge a minute
        while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            for message in batch:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return out


@pytest.fixture
def forget_messaging_state(moto_endpoint: str) -> None:
    """Drop the dedupe, link and attempt items of earlier runs (the committed events reuse ids)."""
    ddb = boto3.client("dynamodb", endpoint_url=moto_endpoint, region_name="us-east-1")
    for page in ddb.get_paginator("scan").paginate(TableName=TABLE, ProjectionExpression="id"):
        for item in page["Items"]:
            if item["id"]["S"].startswith(("msg#", "link#", "verify#")):
                ddb.delete_item(TableName=TABLE, Key={"id": item["id"]})


@pytest.fixture
def handlers(tau_store: Any, urls: dict[str, str], server: RecordingServer, forget_messaging_state: None,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Handler, Handler]]:
    """(webhook, worker): the two Lambda handlers, configured for the local stack."""
    for name, value in {**LOCAL_SECRETS, **outbound_env(server.url), "WEBHOOK_QUEUE_URL": urls[QUEUE],
                        "OUTBOUND_MAX_ATTEMPTS": "2"}.items():
        monkeypatch.setenv(name, value)
    core.reset()
    runtime.reset()
    webhook = _load("webhook_app_it", "functions/webhook/app.py")
    worker = _load("worker_app_it", "functions/worker/app.py")
    yield (lambda event: webhook.handler(event, LambdaContext()),
           lambda event: worker.handler(event, LambdaContext()))
    runtime.reset()
    core.reset()


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The SQS event Lambda would build from received messages."""
    return {"Records": [{
        "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
        "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
        "eventSource": "aws:sqs", "eventSourceARN": f"arn:aws:sqs:us-east-1:123456789012:{QUEUE}",
        "awsRegion": "us-east-1"} for m in messages]}


def deliver(sqs: Any, url: str, worker: Handler) -> list[dict[str, Any]]:
    """One event source mapping poll: returns the batch item failures the worker reported."""
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"],
                                   WaitTimeSeconds=0).get("Messages", [])
    if not messages:
        return []
    failures = worker(sqs_event(messages))["batchItemFailures"]
    failed = {f["itemIdentifier"] for f in failures}
    for m in messages:
        if m["MessageId"] in failed:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
        else:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return failures  # type: ignore[no-any-return]


def queue_depth(sqs: Any, url: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(attributes[name]) for name in names)


def telegram_says(webhook: Handler, text: str, user: int) -> None:
    response = webhook(telegram_event(text, message_id=random.randrange(1, 10**9), user_id=user))
    assert response["statusCode"] == 200, response["body"]


def a_new_telegram_user() -> int:
    return random.randrange(10**8, 10**9)


# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("event_file", ["slack_forged.json", "telegram_forged.json", "whatsapp_forged.json"])
def test_a_forged_request_gets_401_and_the_queue_stays_empty(handlers, sqs, urls, event_file):
    webhook, _ = handlers
    # Given a forged request for each platform, fresh in time
    event = load_event(event_file)
    if event_file.startswith("slack"):
        event = fresh_slack(event, time.time(), resign=False)
    # When it reaches the webhook
    response = webhook(event)
    # Then it is refused and nothing reached the queue
    assert response["statusCode"] == 401
    assert queue_depth(sqs, urls[QUEUE]) == 0


def test_an_unverified_user_is_asked_to_verify_and_gets_no_order_data(handlers, sqs, urls, server):
    webhook, worker = handlers
    # Given a Telegram user who was never verified
    user = a_new_telegram_user()
    # When they ask about a real order
    telegram_says(webhook, f"where is my order {OWN_ORDER}?", user)
    deliver(sqs, urls[QUEUE], worker)
    # Then the one reply asks them to verify, and holds nothing about the order
    [reply] = [r.body["text"] for r in server.requests]
    assert reply == REPLIES.text("ask_identity")
    assert OWN_TRACKING not in reply and "delivered" not in reply.lower()


def test_a_verified_user_gets_their_own_order_from_the_store_and_not_another_customers(handlers, sqs, urls,
                                                                                       server):
    webhook, worker = handlers
    user = a_new_telegram_user()
    # Given a Telegram user who sends the email of tau customer james_li_5688
    telegram_says(webhook, f"my email is {CUSTOMER_EMAIL}", user)
    deliver(sqs, urls[QUEUE], worker)
    # When they ask about their own order, then about another customer's
    telegram_says(webhook, f"where is my order {OWN_ORDER}?", user)
    deliver(sqs, urls[QUEUE], worker)
    telegram_says(webhook, f"where is my order {OTHER_ORDER}?", user)
    deliver(sqs, urls[QUEUE], worker)
    # Then they were verified, their order's real status and tracking came from Neo4j, and the
    # other customer's order was not revealed
    verified, own, other = [r.body["text"] for r in server.requests]
    assert verified == REPLIES.text("verified")
    assert OWN_ORDER in own and "delivered" in own.lower() and OWN_TRACKING in own
    assert OTHER_ORDER in other
    assert OTHER_TRACKING not in other and "USPS" not in other and "delivered" not in other.lower()
    assert all(r.path.endswith("/sendMessage") and r.body["chat_id"] == str(user) for r in server.requests)


def test_a_whatsapp_user_verified_by_name_and_zip_gets_their_order_through_the_cloud_api(handlers, sqs, urls,
                                                                                        server):
    webhook, worker = handlers
    phone = str(random.randrange(10**10, 10**11))
    # Given a WhatsApp user who gives the name and zip of tau customer james_li_5688, then asks
    for text in ("Hi, I'm James Li, zip code 10083", f"where is my order {OWN_ORDER}?"):
        event = whatsapp_event(whatsapp_text(text, wamid=f"wamid.{random.randrange(10**12)}", sender=phone))
        assert webhook(event)["statusCode"] == 200
        # When the worker processes each message
        deliver(sqs, urls[QUEUE], worker)
    # Then the name + zip query on Neo4j verified them, and the order's real status came back
    # through the Cloud API's messages endpoint to their number
    verified, own = server.requests
    assert verified.body["text"]["body"] == REPLIES.text("verified")
    assert OWN_TRACKING in own.body["text"]["body"]
    assert own.path == f"/whatsapp/{LOCAL_SECRETS['WHATSAPP_PHONE_NUMBER_ID']}/messages"
    assert own.body["to"] == phone


def test_slack_delivers_a_message_and_its_retry_and_the_customer_gets_one_reply(handlers, sqs, urls, server):
    webhook, worker = handlers
    # Given Slack delivering a DM, then retrying it (X-Slack-Retry-Num: 1)
    now = time.time()
    assert webhook(fresh_slack(load_event("slack_message.json"), now))["statusCode"] == 200
    assert webhook(fresh_slack(load_event("slack_retry.json"), now))["statusCode"] == 200
    # When the worker processes the queue
    failures = deliver(sqs, urls[QUEUE], worker)
    # Then both copies are done, and exactly one reply went to the DM through chat.postMessage
    assert failures == []
    assert queue_depth(sqs, urls[QUEUE]) == 0
    [request] = server.requests
    assert request.path == "/slack/chat.postMessage"
    assert request.headers["authorization"] == f"Bearer {LOCAL_SECRETS['SLACK_BOT_TOKEN']}"
    assert request.body == {"channel": "D0LOCAL01", "text": REPLIES.text("ask_identity")}


def test_the_same_update_delivered_in_two_batches_is_processed_once(handlers, sqs, urls, server):
    webhook, worker = handlers
    # Given a Telegram update the worker already answered
    assert webhook(load_event("telegram_message.json"))["statusCode"] == 200
    deliver(sqs, urls[QUEUE], worker)
    # When Telegram delivers the same update again
    assert webhook(load_event("telegram_message.json"))["statusCode"] == 200
    failures = deliver(sqs, urls[QUEUE], worker)
    # Then the duplicate is acknowledged (removed from the queue) and not answered twice
    assert failures == []
    assert queue_depth(sqs, urls[QUEUE]) == 0
    assert len(server.requests) == 1


def test_a_message_that_keeps_failing_lands_in_the_dlq_after_max_receive_count(handlers, sqs, urls, server):
    webhook, worker = handlers
    # Given Telegram's send API failing with 500 on every attempt
    server.script = [500] * 100
    assert webhook(load_event("telegram_message.json"))["statusCode"] == 200
    # When the event source mapping keeps delivering it (maxReceiveCount is 5 in template.yaml)
    reported = [len(deliver(sqs, urls[QUEUE], worker)) for _ in range(6)]
    # Then each of the 5 deliveries was reported failed, then SQS moved it to the DLQ intact
    assert reported == [1, 1, 1, 1, 1, 0]
    assert queue_depth(sqs, urls[QUEUE]) == 0
    [dead] = sqs.receive_message(QueueUrl=urls[DLQ], MaxNumberOfMessages=10)["Messages"]
    assert InboundMessage.model_validate_json(dead["Body"]).dedupe_key == "telegram:700000001:17"


def test_the_webhook_acknowledges_well_under_three_seconds(handlers, sqs, urls):
    webhook, _ = handlers
    # Given a warm webhook
    webhook(fresh_slack(load_event("slack_message.json"), time.time()))
    # When Slack delivers 20 signed messages (verification + SQS send to moto each)
    timings = []
    for _ in range(20):
        event = fresh_slack(load_event("slack_message.json"), time.time())
        started = time.perf_counter()
        response = webhook(event)
        timings.append((time.perf_counter() - started) * 1000)
        assert response["statusCode"] == 200
    # Then every acknowledgement came back far inside Slack's 3 s deadline
    timings.sort()
    print(f"\nwebhook handler ms: median {statistics.median(timings):.1f}, p95 {timings[18]:.1f}, "
          f"max {timings[-1]:.1f}")
    assert timings[-1] < 1000

