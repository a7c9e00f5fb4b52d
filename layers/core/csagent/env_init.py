"""`@init_environment("RouterEnv")` on a Lambda handler: the function's configuration model
(`csagent.env_vars`) validated before its first invocation runs, the cold start, and kept for
the others. A missing or invalid variable raises `ConfigurationError` naming each one.

This module imports nothing of the configuration: a handler names its model, which is imported
and validated at the first invocation (as aws-lambda-handler-cookbook's
`@init_environment_variables(model=...)` validates at the call), so decorating a handler adds
nothing to the function's cold import.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings

Handler = TypeVar("Handler", bound=Callable[..., Any])


class ConfigurationError(RuntimeError):
    """The function's environment is missing or has invalid variables (raised at cold start)."""


def _variable(model: type[BaseSettings], field: str) -> str:
    info = model.model_fields.get(field)
    alias = (info.validation_alias or info.alias) if info is not None else None
    return (alias if isinstance(alias, str) else field).upper()


def load_environment(model: str | type[BaseSettings]) -> Any:
    """The model (a class, or its name in `csagent.env_vars`) read from the environment once
    per process (`get_settings.cache_clear()` forgets it), or `ConfigurationError` naming each
    variable that is missing or invalid."""
    from pydantic import ValidationError

    from csagent.config import get_settings

    if isinstance(model, str):
        from csagent import env_vars

        model = getattr(env_vars, model)
        assert not isinstance(model, str)
    try:
        return get_settings.of(model)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error.get("loc", ()))
            name = _variable(model, where) if where else ""
            message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
            problems.append(f"{name}: {message}" if name else message)
        raise ConfigurationError(f"{model.__name__}: invalid configuration: {'; '.join(problems)}") from None


def init_environment(model: str | type[BaseSettings]) -> Callable[[Handler], Handler]:
    """Validate `model` before the handler's first invocation runs (the cold start) and keep it
    for the others; a bad environment raises `ConfigurationError` on every invocation."""

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            load_environment(model)
            return handler(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
