"""The webhook queue: the `MessageQueue` port and its SQS adapter.

Each `InboundMessage` is one SQS message whose body is the message's JSON; the worker reads it
back with `InboundMessage.model_validate_json`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from csagent.domain.errors import DependencyUnavailable
from csagent.messaging.models import InboundMessage

logger = logging.getLogger(__name__)

SQS_BATCH_LIMIT = 10


class MessageQueue(Protocol):
    def enqueue(self, messages: Sequence[InboundMessage]) -> None:
        """Put every message on the queue, or raise `DependencyUnavailable` (nothing is half-done
        from the platform's point of view: it retries the whole delivery, the worker dedupes)."""
        ...


class SqsMessageQueue:
    """`MessageQueue` on a standard SQS queue (`send_message_batch`, ten at a time)."""

    def __init__(self, client: Any, queue_url: str) -> None:
        self._sqs = client
        self._url = queue_url

    def enqueue(self, messages: Sequence[InboundMessage]) -> None:
        from botocore.exceptions import BotoCoreError, ClientError  # botocore is loaded with the client

        for start in range(0, len(messages), SQS_BATCH_LIMIT):
            chunk = messages[start:start + SQS_BATCH_LIMIT]
            entries = [{"Id": str(index), "MessageBody": message.model_dump_json(),
                        "MessageAttributes": {"platform": {"DataType": "String",
                                                           "StringValue": message.platform.value}}}
                       for index, message in enumerate(chunk)]
            try:
                response = self._sqs.send_message_batch(QueueUrl=self._url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:  # refused or unreachable: the platform retries
                logger.error("webhook queue unavailable: %s", type(exc).__name__)
                raise DependencyUnavailable("the webhook queue is unavailable") from exc
            if response.get("Failed"):
                codes = sorted({failure.get("Code", "?") for failure in response["Failed"]})
                logger.error("webhook queue refused %d message(s): %s", len(response["Failed"]), codes)
                raise DependencyUnavailable("the webhook queue refused the message")
