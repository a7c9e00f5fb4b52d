"""Typed configuration of the webhook and worker functions, and where their secrets come from.

Secrets are split by who needs them, so each function can read only its own:

- verification secrets (the webhook): Slack signing secret, Telegram secret token, WhatsApp app
  secret and verify token;
- outbound tokens (the worker): Slack bot token, Telegram bot token, WhatsApp access token.

In AWS each set is one Secrets Manager secret (a JSON object with the field names below),
read through Powertools Parameters and cached `SECRET_MAX_AGE_S`, so a rotated secret is picked
up within that time without a redeploy. Locally they come from environment variables of the
same names (upper-cased); deployed stages refuse those, so a secret never sits in a Lambda's
environment.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Literal, TypeVar

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


@dataclass(frozen=True)
class VerificationSecrets:
    """What the webhook needs to tell a platform's request from a forgery."""

    slack_signing_secret: str = ""
    telegram_secret_token: str = ""
    whatsapp_app_secret: str = ""
    whatsapp_verify_token: str = ""


@dataclass(frozen=True)
class OutboundTokens:
    """What the worker needs to send replies as the store's bot."""

    slack_bot_token: str = ""
    telegram_bot_token: str = ""
    whatsapp_access_token: str = ""


class MessagingSettings(BaseSettings):
    """Settings of the webhook and worker functions (environment variables, upper-cased)."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    stage: Literal["local", "dev", "prod"] = "local"
    aws_region: str = Field(default="us-east-1", alias="AWS_REGION")
    aws_endpoint_url: str | None = Field(default=None, alias="AWS_ENDPOINT_URL")

    # Queue and table (names as template.yaml gives them for the local stack)
    webhook_queue_url: str | None = None
    webhook_queue_name: str = "csagent-local-webhooks"
    idempotency_table: str = "csagent-local-idempotency"

    # Exactly-once: how long a message id is remembered (longer than any platform redelivers:
    # WhatsApp retries for up to 7 days), and how long one worker may hold a message before
    # another may take it over (shorter than the queue's 180 s visibility timeout, longer than
    # the worker's own timeout).
    dedupe_ttl_s: int = Field(default=8 * 24 * 3600, ge=3600)
    dedupe_lease_s: int = Field(default=120, ge=1)

    # Identity: how long a verified link lasts before the user verifies again, and how many
    # failed attempts lock verification for how long.
    link_ttl_s: int = Field(default=30 * 24 * 3600, ge=60)
    verify_max_attempts: int = Field(default=5, ge=1)
    verify_lockout_s: int = Field(default=900, ge=1)

    # Webhook limits
    max_webhook_body_bytes: int = Field(default=256 * 1024, ge=1024)
    max_message_chars: int = 4000

    # Secrets: Secrets Manager in AWS, environment variables locally
    webhook_secrets_arn: str | None = None
    outbound_secrets_arn: str | None = None
    secret_max_age_s: int = 300
    slack_signing_secret: SecretStr = SecretStr("")
    telegram_secret_token: SecretStr = SecretStr("")
    whatsapp_app_secret: SecretStr = SecretStr("")
    whatsapp_verify_token: SecretStr = SecretStr("")
    slack_bot_token: SecretStr = SecretStr("")
    telegram_bot_token: SecretStr = SecretStr("")
    whatsapp_access_token: SecretStr = SecretStr("")

    # Outbound: the platforms' send APIs (tests point these at a local recording server)
    slack_api_base: str = "https://slack.com/api"
    telegram_api_base: str = "https://api.telegram.org"
    whatsapp_api_base: str = "https://graph.facebook.com/v21.0"
    whatsapp_phone_number_id: str = ""
    outbound_timeout_s: float = Field(default=5.0, gt=0)
    outbound_max_attempts: int = Field(default=4, ge=1)
    outbound_backoff_s: float = Field(default=0.5, ge=0)
    outbound_max_backoff_s: float = Field(default=8.0, ge=0)

    @model_validator(mode="after")
    def _secrets_only_from_secrets_manager_when_deployed(self) -> MessagingSettings:
        if self.stage == "local":
            return self
        in_env = [name for name in (*_names(VerificationSecrets), *_names(OutboundTokens))
                  if getattr(self, name).get_secret_value()]
        if in_env:
            raise ValueError(f"{', '.join(n.upper() for n in in_env)} must come from Secrets Manager "
                             "(WEBHOOK_SECRETS_ARN / OUTBOUND_SECRETS_ARN) outside STAGE=local")
        return self


def _names(kind: type) -> list[str]:
    return [f.name for f in fields(kind)]


_Secrets = TypeVar("_Secrets", VerificationSecrets, OutboundTokens)


def _from_secret_or_env(kind: type[_Secrets], arn: str | None, settings: MessagingSettings) -> _Secrets:
    if arn:
        from aws_lambda_powertools.utilities import parameters

        document = parameters.get_secret(arn, transform="json", max_age=settings.secret_max_age_s)
        return kind(**{name: str(document.get(name) or "") for name in _names(kind)})
    return kind(**{name: getattr(settings, name).get_secret_value() for name in _names(kind)})


def verification_secrets(settings: MessagingSettings) -> VerificationSecrets:
    """The webhook's secrets (Powertools caches the Secrets Manager read for `secret_max_age_s`)."""
    return _from_secret_or_env(VerificationSecrets, settings.webhook_secrets_arn, settings)


def outbound_tokens(settings: MessagingSettings) -> OutboundTokens:
    """The worker's bot tokens (Powertools caches the Secrets Manager read for `secret_max_age_s`)."""
    return _from_secret_or_env(OutboundTokens, settings.outbound_secrets_arn, settings)


@lru_cache(maxsize=1)
def get_messaging_settings() -> MessagingSettings:
    """The process-wide messaging settings (cached; `csagent.messaging.runtime.reset()` clears it)."""
    return MessagingSettings()
