"""Domain errors the edge turns into HTTP responses (status code and a stable error code)."""

from __future__ import annotations


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
