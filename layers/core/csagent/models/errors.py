"""Typed errors of the model layer. Every one is a `ModelError` (a RuntimeError).

Callers catch `ModelUnavailable` and answer with their local tier; the other errors say why a
rung failed (they end up in the steps of the `ModelUnavailable` that ends a chain, and decide
whether the endpoint's breaker counts a failure).
"""

from __future__ import annotations


class ModelError(RuntimeError):
    """Something went wrong in the model layer."""


class ModelUnavailable(ModelError):
    """Every rung of the role's chain failed or was skipped: the caller's local tier answers."""

    def __init__(self, message: str, steps: list[str] | None = None) -> None:
        super().__init__(message)
        self.steps = list(steps or [])


class DataRoutingRefused(ModelUnavailable):
    """The prompt carries customer data and no rung of the chain may receive it (Bedrock or a
    public hosted API only): nothing was sent anywhere."""


class ModelBudgetExhausted(ModelUnavailable):
    """The turn has made as many model calls as its budget allows (tasks + 2)."""


class ModelOutputInvalid(ModelError):
    """The answer could not be parsed into the expected shape after repair and one retry with
    the validation error as a hint. The endpoint works: its breaker does not count this."""


class ModelTimeout(ModelError):
    """The endpoint did not answer within the role's timeout."""


class ModelThrottled(ModelError):
    """The endpoint refused the call for load (HTTP 429, Bedrock ThrottlingException)."""


class ModelEndpointError(ModelError):
    """Any other endpoint failure: 5xx, connection refused, access denied, a malformed reply."""
