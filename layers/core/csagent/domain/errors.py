"""Domain errors: those the edge turns into HTTP responses (status code and a stable error code),
and the store graph's failures as its adapter classifies them (`StoreError`)."""

from __future__ import annotations

from csagent.domain.models import ErrorType


class DomainError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DomainError):
    status_code = 422
    code = "invalid_input"


class Unauthenticated(DomainError):
    status_code = 401
    code = "unauthenticated"


class Forbidden(DomainError):
    status_code = 403
    code = "forbidden"


class NotFound(DomainError):
    status_code = 404
    code = "not_found"


class Conflict(DomainError):
    status_code = 409
    code = "conflict"


class DependencyUnavailable(DomainError):
    status_code = 503
    code = "dependency_unavailable"


class ImageUnreadable(Exception):
    """An attachment could not be read (bad image, reader failed or timed out)."""


# -- the store graph -----------------------------------------------------------------------------
class StoreError(Exception):
    """A failure of the store graph, classified once, by its adapter (`adapters.neo4j_graph`):
    the tools read `error_type` and `retryable` instead of knowing the driver's exceptions.

    `code` is the server's status code when it sent one (`Neo.ClientError.Statement.SyntaxError`),
    for the few callers that must tell client errors apart (Text2Cypher's validation); `detail`
    is the server's own message. Neither is ever shown to a customer.
    """

    error_type: ErrorType = ErrorType.UNKNOWN
    retryable = False

    def __init__(self, message: str, *, code: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.detail = detail


class StoreTimeout(StoreError):
    """The transaction did not finish within its timeout (the server terminated it), or the
    driver gave up waiting: the same query may well answer on a later attempt."""

    error_type = ErrorType.TIMEOUT
    retryable = True


class StoreUnavailable(StoreError):
    """The database could not be reached or answered with a transient error (leader switch,
    dropped connection, a commit whose answer was lost): worth a retry after a backoff."""

    error_type = ErrorType.TRANSIENT
    retryable = True


class StoreConflict(StoreError):
    """A uniqueness constraint refused a write: a concurrent writer made the same change first
    (the actions' idempotent writes), so a retry finds it made."""

    error_type = ErrorType.TRANSIENT
    retryable = True


class StoreRejected(StoreError):
    """The database refused the query itself (a client error: syntax, a write in a READ
    transaction, a missing parameter or index): the same query fails again."""
