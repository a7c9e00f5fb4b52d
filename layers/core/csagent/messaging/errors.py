"""Why the webhook refuses a request: each error carries the HTTP status and a stable code.

The webhook answers these with `{"error": {"code", "message"}}`, the same error shape as the
HTTP API, and enqueues nothing.
"""

from __future__ import annotations


class WebhookRejected(Exception):
    """A request the webhook will not accept."""

    status_code = 400
    code = "bad_request"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ForgedRequest(WebhookRejected):
    """The signature or secret token is missing or does not match: not from the platform."""

    status_code = 401
    code = "forged_request"


class StaleRequest(WebhookRejected):
    """Correctly shaped but timestamped too far from now: a possible replay."""

    status_code = 401
    code = "stale_request"


class MalformedRequest(WebhookRejected):
    """Authentic (or not yet checked) but unreadable: bad base64, JSON or payload shape."""

    status_code = 400
    code = "malformed_request"


class UnknownPlatform(WebhookRejected):
    """No platform lives at this path, or it is not configured (no secret): fail closed."""

    status_code = 404
    code = "unknown_platform"


class MethodNotAllowed(WebhookRejected):
    status_code = 405
    code = "method_not_allowed"


class PayloadTooLarge(WebhookRejected):
    status_code = 413
    code = "payload_too_large"
