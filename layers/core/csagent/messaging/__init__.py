"""Messaging platforms (Slack, Telegram, WhatsApp) as a second way in to the assistant.

A platform calls the webhook Lambda (Function URL). The webhook verifies the request's
signature, parses it into `InboundMessage`s, puts them on the webhook queue and answers 200 at
once; the worker Lambda takes them off the queue, processes each platform message exactly once
(`dedupe`), makes sure the platform user is a verified customer (`identity`), runs the turn
through `ConversationService` and sends the reply back through the platform's API (`outbound`).

    slack / telegram / whatsapp   verify(headers, raw_body, secret, now) and parse(raw_body)
    ingress                       the webhook use case: route, verify, parse, enqueue, answer
    worker                        the queue use case: dedupe, identity, conversation, reply
    runtime                       composition root of both (lazy, cached, nothing at import)

Importing this package does no I/O and pulls in neither boto3 nor the conversation graph: the
webhook's cold start depends on it.
"""
