"""Each Lambda function's configuration: a model composed of the parts it needs
(`csagent.config`, and the parts other packages own: observability, rate limit, messaging,
tokens), validated once, at the function's cold start, by `init_environment` on its handler
(`csagent.env_init`: the handler names its model, which is imported at the first invocation, so
the function's cold import does not grow).

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

import os
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.config import Deployment, Neo4jConfig
from csagent.env_init import ConfigurationError, init_environment, load_environment

__all__ = ["ConfigurationError", "FunctionEnv", "init_environment", "load_environment"]


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


# Each function's model is composed when it is first asked for (`from csagent.env_vars import
# RouterEnv`): a function imports the packages of its own parts only, not of every function's
# (the cold import is a product metric).
def _predefined_cypher_env() -> type[FunctionEnv]:
    from csagent.observability import ObservabilitySettings

    class PredefinedCypherEnv(FunctionEnv, Deployment, Neo4jConfig, ObservabilitySettings):
        needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J)

    return PredefinedCypherEnv


def _knowledge_search_env() -> type[FunctionEnv]:
    from csagent.observability import ObservabilitySettings

    class KnowledgeSearchEnv(FunctionEnv, Deployment, Neo4jConfig, ObservabilitySettings):
        needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J)

    return KnowledgeSearchEnv


def _text2cypher_env() -> type[FunctionEnv]:
    from csagent.config import ModelConfig
    from csagent.observability import ObservabilitySettings

    class Text2CypherEnv(FunctionEnv, Neo4jConfig, ModelConfig, ObservabilitySettings):
        needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J)

    return Text2CypherEnv


def _customer_actions_env() -> type[FunctionEnv]:
    from csagent.config import ActionConfig
    from csagent.observability import ObservabilitySettings

    class CustomerActionsEnv(FunctionEnv, Neo4jConfig, ActionConfig, ObservabilitySettings):
        needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J, "IDEMPOTENCY_TABLE")

    return CustomerActionsEnv


def _knowledge_ingest_env() -> type[FunctionEnv]:
    from csagent.config import KnowledgeConfig
    from csagent.observability import ObservabilitySettings

    class KnowledgeIngestEnv(FunctionEnv, Deployment, Neo4jConfig, KnowledgeConfig, ObservabilitySettings):
        """The knowledge bucket's uploads, parsed, embedded and swapped into the index."""

        needs_in_aws = (*FunctionEnv.needs_in_aws, *_NEO4J, "KB_BUCKET")

    return KnowledgeIngestEnv


def _router_env() -> type[FunctionEnv]:
    from csagent.config import Settings
    from csagent.guardrails.ratelimit import RateLimitSettings
    from csagent.observability import ObservabilitySettings

    class RouterEnv(FunctionEnv, Settings, RateLimitSettings, ObservabilitySettings):
        """The whole conversation, behind API Gateway."""

        needs_in_aws = (*FunctionEnv.needs_in_aws, *_CONVERSATION)

    return RouterEnv


def _stream_env() -> type[FunctionEnv]:
    from csagent.config import Settings
    from csagent.guardrails.ratelimit import RateLimitSettings
    from csagent.http.tokens import TokenSettings
    from csagent.observability import ObservabilitySettings

    class StreamEnv(FunctionEnv, Settings, RateLimitSettings, TokenSettings, ObservabilitySettings):
        """The whole conversation on a streaming Function URL: it checks tokens itself."""

        needs_in_aws = (*FunctionEnv.needs_in_aws, *_CONVERSATION, "JWT_ISSUER", "JWT_AUDIENCE")

    return StreamEnv


def _worker_env() -> type[FunctionEnv]:
    from csagent.config import Settings
    from csagent.guardrails.ratelimit import RateLimitSettings
    from csagent.messaging.config import MessagingSettings
    from csagent.observability import ObservabilitySettings

    class WorkerEnv(FunctionEnv, Settings, RateLimitSettings, MessagingSettings, ObservabilitySettings):
        """The whole conversation for the messaging platforms' users, and the replies to them."""

        needs_in_aws = (*FunctionEnv.needs_in_aws, *_CONVERSATION, "IDEMPOTENCY_TABLE",
                        "OUTBOUND_SECRETS_ARN")

    return WorkerEnv


def _webhook_env() -> type[FunctionEnv]:
    from csagent.messaging.config import MessagingSettings
    from csagent.observability import ObservabilitySettings

    class WebhookEnv(FunctionEnv, MessagingSettings, ObservabilitySettings):
        """Verify and queue: the webhook queue and the platforms' verification secrets."""

        needs_in_aws = (*FunctionEnv.needs_in_aws, "WEBHOOK_QUEUE_URL", "WEBHOOK_SECRETS_ARN")

    return WebhookEnv


_MODELS: dict[str, Callable[[], type[FunctionEnv]]] = {
    "PredefinedCypherEnv": _predefined_cypher_env, "KnowledgeSearchEnv": _knowledge_search_env,
    "Text2CypherEnv": _text2cypher_env, "CustomerActionsEnv": _customer_actions_env,
    "KnowledgeIngestEnv": _knowledge_ingest_env,
    "RouterEnv": _router_env, "StreamEnv": _stream_env, "WorkerEnv": _worker_env, "WebhookEnv": _webhook_env,
}


def __getattr__(name: str) -> type[FunctionEnv]:
    """A function's model, composed on first access and kept (one class per name)."""
    if name not in _MODELS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    model = globals()[name] = _MODELS[name]()
    return model
