"""Composition root of the webhook and worker functions: built lazily, once per process.

Nothing runs at import. The webhook needs only its secrets and an SQS client; the worker
reuses the core composition root (`csagent.runtime`) for the DynamoDB client, the Neo4j store
and the conversation service, which it builds only when a verified customer writes. Tests call
`reset()` after changing the environment.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from csagent.messaging.config import (
    MessagingSettings,
    get_messaging_settings,
    outbound_tokens,
    verification_secrets,
)
from csagent.messaging.ingress import WebhookIngress
from csagent.messaging.worker import MessageWorker


def _boto_kwargs(settings: MessagingSettings) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"region_name": settings.aws_region}
    if settings.aws_endpoint_url:
        kwargs["endpoint_url"] = settings.aws_endpoint_url
    return kwargs


@lru_cache(maxsize=1)
def sqs_client() -> Any:
    import boto3

    return boto3.client("sqs", **_boto_kwargs(get_messaging_settings()))


@lru_cache(maxsize=1)
def webhook_queue_url() -> str:
    """WEBHOOK_QUEUE_URL (set by the template in AWS), else the URL of WEBHOOK_QUEUE_NAME."""
    s = get_messaging_settings()
    return s.webhook_queue_url or str(sqs_client().get_queue_url(QueueName=s.webhook_queue_name)["QueueUrl"])


@lru_cache(maxsize=1)
def webhook_ingress() -> WebhookIngress:
    from csagent.messaging.queue import SqsMessageQueue

    s = get_messaging_settings()
    return WebhookIngress(lambda: verification_secrets(s), SqsMessageQueue(sqs_client(), webhook_queue_url()),
                          max_body_bytes=s.max_webhook_body_bytes)


@lru_cache(maxsize=1)
def message_worker() -> MessageWorker:
    from csagent import runtime as core
    from csagent.messaging.dedupe import DynamoDBDedupe
    from csagent.messaging.identity import CustomerDirectory, DynamoDBLinks, IdentityVerifier
    from csagent.messaging.outbound import OutboundConfig, OutboundSender
    from csagent.messaging.replies import load_replies

    s = get_messaging_settings()
    ddb = core.dynamodb_client()
    replies = load_replies()
    identity = IdentityVerifier(
        DynamoDBLinks(ddb, s.idempotency_table, link_ttl_s=s.link_ttl_s, lockout_s=s.verify_lockout_s),
        CustomerDirectory(core.graph_store()), replies,
        max_attempts=s.verify_max_attempts, lockout_s=s.verify_lockout_s,
    )
    sender = OutboundSender(
        OutboundConfig(slack_api_base=s.slack_api_base, telegram_api_base=s.telegram_api_base,
                       whatsapp_api_base=s.whatsapp_api_base,
                       whatsapp_phone_number_id=s.whatsapp_phone_number_id,
                       timeout_s=s.outbound_timeout_s, max_attempts=s.outbound_max_attempts,
                       backoff_s=s.outbound_backoff_s, max_backoff_s=s.outbound_max_backoff_s),
        lambda: outbound_tokens(s),
    )
    dedupe = DynamoDBDedupe(ddb, s.idempotency_table, ttl_s=s.dedupe_ttl_s, lease_s=s.dedupe_lease_s)
    return MessageWorker(dedupe, identity, core.conversation_service, sender, replies,
                         max_message_chars=s.max_message_chars)


def now() -> float:
    """Wall-clock seconds (the webhook's notion of "now" for timestamp checks)."""
    return time.time()


def reset() -> None:
    """Forget every cached client and setting (tests, after changing the environment)."""
    for factory in (sqs_client, webhook_queue_url, webhook_ingress, message_worker, get_messaging_settings):
        factory.cache_clear()
