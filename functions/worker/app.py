"""Worker Lambda: the webhook queue's consumer (SQS event source, ReportBatchItemFailures).

Thin by design: each SQS record is an `InboundMessage`; the worker processes it exactly once
(dedupe), verifies the sender, runs the turn and sends the reply. A record whose processing
raises is reported in `batchItemFailures`, so only it is delivered again (and, after
maxReceiveCount, moved to the DLQ); the rest of the batch is done.

The cyclic garbage collector is paused from the first statement until the batch's first record
is done (`csagent.coldstart`): the start and that record's lazy work (the clients and, for a
verified customer's message, the graph and the model) run without it. The batch's other records,
up to nine more turns, run with it on, so no more than one record's cycles are frozen with the
start-up heap, as in the router.
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from csagent import observability
from csagent.env_init import init_environment
from csagent.messaging import runtime
from csagent.messaging.models import InboundMessage

logger = observability.get_logger()  # PII-masking serializer; POWERTOOLS_SERVICE_NAME names it
metrics = observability.get_metrics()
# Never raise for a batch that failed entirely: the response lists every record instead, which
# SQS treats the same way (all of them return to the queue) and keeps the logs readable.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def record_handler(record: SQSRecord) -> str:
    try:
        message = InboundMessage.model_validate_json(record.body)
        outcome = runtime.message_worker().process(message)
    finally:
        coldstart.resume_gc()  # the first record is done (or failed): frozen and back on
    logger.info("processed webhook message", extra={"platform": message.platform.value,
                                                    "outcome": outcome.value})
    return outcome.value


@coldstart.resume_gc_after_first_call  # a batch whose first record never ran resumes it here
@init_environment("WorkerEnv")  # a missing or invalid variable fails the cold start, naming it
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics  # the turns' metrics flush per invocation, not once 100 values pile up
def handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor,
                                    context=context)
