"""Each Lambda function's configuration: a model composed of the parts it needs
(`csagent.config`, and the parts other packages own: observability, rate limit, messaging,
tokens), validated once, at the function's cold start, by `init_environment` on its handler.

A missing or invalid variable fails the first invocation with `ConfigurationError`, whose
message names each variable and what is wrong with it. Outside STAGE=local every function also
needs the variables `template.yaml` sets for it from the stack (its tables, queues, secrets and
the Neo4j URI): on a local default it would talk to the wrong resource, so their absence is an
error too (`needs_in_aws`). What the code then reads comes from the same parts
(`get_settings.of(Part)`), so a function never builds configuration it was not given.

The pattern is aws-lambda-handler-cookbook's `service/handlers/models/env_vars.py`
(`@init_environment_variables(model=...)`), with pydantic-settings models.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.config import ActionConfig, Deployment, ModelConfig, Neo4jConfig, Settings, get_settings
from csagent.guardrails.ratelimit import RateLimitSettings
from csagent.http.tokens import TokenSettings
from csagent.messaging.config import MessagingSettings
from csagent.observability import ObservabilitySettings

Handler = TypeVar("Handler", bound=Callable[..., Any])
Env = TypeVar("Env", bound=BaseSettings)


class ConfigurationError(RuntimeError):
    """The function's environment is missing or has invalid variables (raised at cold start)."""


class FunctionEnv(BaseSettings):
    """A function's whole environment. `needs_in_aws`: variables that must be set outside
    STAGE=local (the template sets each from the stack)."""

    # Built when first used: a function pays for its own model only, not for all of them.
    model_config = SettingsConfigDict(defer_build=True)

    needs_in_aws: ClassVar[tuple[str, ...]] = ("POWERTOOLS_SERVICE_NAME",)

    @model_validator(mode="after")
    def _set_in_aws(self) -> Any:
        if getattr(self, "stage", "local") != "local":
            missing = [name for name in self.needs_in_aws if not os.environ.get(name, "").strip()]
            if missing:
                them = "it" if len(missing) == 1 else "them"
                raise ValueError(f"{', '.join(missing)} must be set outside STAGE=local "
                                 f"(template.yaml sets {them} from the stack)")
        return self


_NEO4J = ("NEO4J_URI", "NEO4J_SECRET_ARN")
_CONVERSATION = (*_NEO4J, "CHECKPOINTS_TABLE", "SESSIONS_TABLE", "RATELIMIT_TABLE", "HANDOFFS_TABLE",
                 "HANDOFF_QUEUE_URL", "CHECKPOINT_BUCKET", "STATE_MACHINE_ARN")


class PredefinedCypherEnv(FunctionEnv, Deployment, Neo4jConfig, ObservabilitySettings):
    needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J)


class KnowledgeSearchEnv(FunctionEnv, Deployment, Neo4jConfig, ObservabilitySettings):
    needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J)


class Text2CypherEnv(FunctionEnv, Neo4jConfig, ModelConfig, ObservabilitySettings):
    needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J)


class CustomerActionsEnv(FunctionEnv, Neo4jConfig, ActionConfig, ObservabilitySettings):
    needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J, "IDEMPOTENCY_TABLE")


class RouterEnv(FunctionEnv, Settings, RateLimitSettings, ObservabilitySettings):
    """The whole conversation, behind API Gateway."""

    needs_in_aws = (*FunctionEnv.needs_in_aws, *_CONVERSATION)


class StreamEnv(FunctionEnv, Settings, RateLimitSettings, TokenSettings, ObservabilitySettings):
    """The whole conversation on a streaming Function URL: it checks tokens itself."""

    needs_in_aws = (*FunctionEnv.needs_in_aws, *_CONVERSATION, "JWT_ISSUER", "JWT_AUDIENCE")


class WorkerEnv(FunctionEnv, Settings, RateLimitSettings, MessagingSettings, ObservabilitySettings):
    """The whole conversation for the messaging platforms' users, and the replies to them."""

    needs_in_aws = (*FunctionEnv.needs_in_aws, *_CONVERSATION, "IDEMPOTENCY_TABLE", "OUTBOUND_SECRETS_ARN")


class WebhookEnv(FunctionEnv, MessagingSettings, ObservabilitySettings):
    """Verify and queue: the webhook queue and the platforms' verification secrets."""

    needs_in_aws = (*FunctionEnv.needs_in_aws, "WEBHOOK_QUEUE_URL", "WEBHOOK_SECRETS_ARN")


def _variable(model: type[BaseSettings], field: str) -> str:
    info = model.model_fields.get(field)
    alias = (info.validation_alias or info.alias) if info is not None else None
    return (alias if isinstance(alias, str) else field).upper()


def load_environment(model: type[Env]) -> Env:
    """`model` read from the environment once per process (`get_settings.cache_clear()` forgets
    it), or `ConfigurationError` naming each variable that is missing or invalid."""
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


def init_environment(model: type[BaseSettings]) -> Callable[[Handler], Handler]:
    """Validate `model` before the handler's first invocation runs (the cold start) and keep it
    for the others; a bad environment raises `ConfigurationError` on every invocation."""

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            load_environment(model)
            return handler(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
