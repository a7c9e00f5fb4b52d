"""Text2Cypher's typed errors, and the one place a graph-store failure becomes one of them.

Every reason a generated query cannot be used is a `Text2CypherError` subclass, kept as data
(instances are collected, never raised across the tool boundary); its message and hint go back
to the model verbatim. `validation` (the checks) and `plan` (what the EXPLAIN plan decides)
both report with these.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from csagent.domain.errors import StoreError
from csagent.domain.models import ErrorType


# ---------------------------------------------------------------------------------------------
# Typed errors
# ---------------------------------------------------------------------------------------------
class Text2CypherError(Exception):
    """A reason a generated query cannot be used. Collected as data; `hint` goes to the model.

    Class attributes say how the tool reports it (`error_type`, `retryable`) and whether a
    correction round can fix it (`correctable`: model-made query errors can, outages cannot).
    """

    code: ClassVar[str] = "text2cypher_error"
    error_type: ClassVar[ErrorType] = ErrorType.UNKNOWN
    retryable: ClassVar[bool] = False
    correctable: ClassVar[bool] = True

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def as_hint(self) -> str:
        """One line for the correction prompt."""
        return f"[{self.code}] {self.message}" + (f" Hint: {self.hint}" if self.hint else "")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class SyntaxInvalid(Text2CypherError):
    """Neo4j cannot parse or plan the query (or it is not exactly one plain statement)."""

    code = "syntax_invalid"
    error_type = ErrorType.PARSE_ERROR


class ParameterNotAllowed(SyntaxInvalid):
    """The query uses `$parameters`; generated queries carry their values as literals."""

    code = "parameter_not_allowed"


class Refused(Text2CypherError):
    """A safety refusal: the query would write or leave the catalogue part of the graph."""

    code = "refused"
    error_type = ErrorType.PERMISSION_DENIED


class WriteAttempt(Refused):
    code = "write_attempt"


class OutsideSchema(Refused):
    """Customer-side data, other databases, procedures or unlabelled nodes."""

    code = "outside_schema"


class SchemaViolation(Text2CypherError):
    code = "schema_violation"
    error_type = ErrorType.VALIDATION


class UnknownLabel(SchemaViolation):
    code = "unknown_label"


class UnknownRelationship(SchemaViolation):
    """An unknown relationship type, or one between labels it does not connect."""

    code = "unknown_relationship"


class WrongDirection(SchemaViolation):
    code = "wrong_direction"


class UnknownProperty(SchemaViolation):
    code = "unknown_property"


class UnknownValue(Text2CypherError):
    code = "unknown_value"
    error_type = ErrorType.VALIDATION


class ExecutionFailed(Text2CypherError):
    """The validated query failed while running (a runtime error in the query itself)."""

    code = "execution_failed"
    error_type = ErrorType.VALIDATION


class Timeout(Text2CypherError):
    code = "timeout"
    error_type = ErrorType.TIMEOUT
    retryable = True
    correctable = False


class StoreUnavailable(Text2CypherError):
    code = "store_unavailable"
    error_type = ErrorType.TRANSIENT
    retryable = True
    correctable = False


class ModelError(Text2CypherError):
    """The chat model failed or returned no query."""

    code = "model_error"
    error_type = ErrorType.TRANSIENT
    retryable = True
    correctable = False


class QuestionOutOfScope(Text2CypherError):
    """The model said the question cannot be answered from the catalogue part of the graph."""

    code = "question_out_of_scope"
    error_type = ErrorType.LOW_CONFIDENCE
    correctable = False


def classify_store_error(exc: BaseException, *, during: str) -> Text2CypherError:
    """A typed error for an exception raised by the graph store (`during`: what was running).

    Timeouts and unavailability come classified from the store's adapter (`StoreError`); what
    only Text2Cypher cares about - which client error the server sent for a generated query - is
    read from the server's code and message the adapter keeps on the error."""
    if isinstance(exc, StoreError) and exc.error_type is ErrorType.TIMEOUT:
        return Timeout(f"The {during} did not finish within its time limit.")
    if isinstance(exc, StoreError) and exc.error_type is ErrorType.TRANSIENT:
        return StoreUnavailable(f"The store database was unavailable during the {during}.")
    code = exc.code if isinstance(exc, StoreError) else ""
    text = (exc.detail if isinstance(exc, StoreError) else str(exc)).strip()
    first_line = text.splitlines()[0] if text else type(exc).__name__
    if code.endswith("AccessMode") or "read access mode" in text:
        return WriteAttempt("The database refused the query in a READ transaction: it writes.")
    if code.endswith("ParameterMissing"):
        return ParameterNotAllowed(f"The query uses parameters: {first_line}",
                                   hint="write the values into the query as literals")
    if code.startswith("Neo.ClientError.Statement") and during == "EXPLAIN":
        return SyntaxInvalid(_neo4j_message(text))
    if code.startswith("Neo.ClientError"):
        return ExecutionFailed(f"The query failed while running: {_neo4j_message(text)}")
    return ExecutionFailed(f"The {during} failed unexpectedly ({type(exc).__name__}).")


def _neo4j_message(text: str) -> str:
    """Neo4j's message with the position given as the text it points at ("near 'RETURN p'").

    Neo4j echoes the query line and puts a caret under the error; line/column numbers would be
    off by the EXPLAIN prefix, the snippet is not.
    """
    lines = text.splitlines()
    message_lines = [line for line in lines if line.strip() and not line.lstrip().startswith(("\"", "^"))]
    message = re.sub(r"\s*\(line \d+, column \d+ \(offset: \d+\)\)", "", " ".join(message_lines) or text)
    for echoed, caret in zip(lines, lines[1:], strict=False):
        if echoed.startswith("\"") and caret.strip() == "^":
            near = echoed[caret.index("^"):].rstrip("\"").strip()[:40]
            if near:
                message += f" (near '{near}')"
            break
    return message[:400]
