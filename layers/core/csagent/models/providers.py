"""Chat models from configuration strings.

    local                              the deterministic local tier: no generative model (None)
    bedrock/<model-id>                 Amazon Bedrock through langchain-aws `ChatBedrockConverse`
    openai/<model>@<base_url>          a self-hosted OpenAI-compatible endpoint (vLLM, llama.cpp
                                       server) through langchain-openai `ChatOpenAI(base_url=...)`

`parse_model_spec` validates a string into a `ModelSpec` (no I/O, no provider import);
`build_chat_model` builds the model and imports the provider package only then (import cost is
a Lambda cold-start metric); the gateway (`csagent.models.gateway.get_gateway`, cached per
process) is its caller.

Retries are off in every client (`max_retries=0`): a failed call is reported at once and the
graph's healer decides whether to retry, degrade to the local tier, or tell the customer.

Data-sensitivity rule (architecture brief): orders, addresses and payments may be sent only to
the self-hosted endpoint or the local tier. `ModelSpec.may_receive_sensitive_data` says whether
a configured model qualifies; callers that send customer data must check it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:  # pragma: no cover - typing only
    from langchain_core.language_models import BaseChatModel

Provider = Literal["local", "bedrock", "openai"]

SPEC_FORMS = "'local', 'bedrock/<model-id>' or 'openai/<model>@<base_url>'"
_BEDROCK_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*")
_OPENAI_MODEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]*")
_MAX_SPEC_CHARS = 2048
#: Hosted OpenAI-compatible APIs: reachable with an `openai/...@<base_url>` spec, but not
#: self-hosted, so they must not receive sensitive data.
PUBLIC_API_HOSTS = frozenset({
    "api.openai.com", "api.groq.com", "api.together.xyz", "api.together.ai", "openrouter.ai",
    "api.mistral.ai", "api.deepseek.com", "api.fireworks.ai", "generativelanguage.googleapis.com",
    "api.anthropic.com", "api.perplexity.ai",
})
#: Provider packages, named in errors when they are missing from the environment.
_PACKAGES = {"bedrock": "langchain-aws", "openai": "langchain-openai"}


@dataclass(frozen=True)
class ModelSpec:
    """A validated model configuration string."""

    provider: Provider
    model: str | None = None
    base_url: str | None = None

    @property
    def is_local(self) -> bool:
        """True for the local tier (no generative model)."""
        return self.provider == "local"

    @property
    def may_receive_sensitive_data(self) -> bool:
        """True when customer data (orders, addresses, payments) may be sent to this model:
        the local tier and a self-hosted endpoint, never Bedrock or a public hosted API."""
        if self.provider == "local":
            return True
        if self.provider == "openai" and self.base_url:
            host = (urlsplit(self.base_url).hostname or "").lower()
            return not any(host == public or host.endswith("." + public) for public in PUBLIC_API_HOSTS)
        return False

    def __str__(self) -> str:
        if self.provider == "local":
            return "local"
        if self.provider == "bedrock":
            return f"bedrock/{self.model}"
        return f"openai/{self.model}@{self.base_url}"


def parse_model_spec(spec: str) -> ModelSpec:
    """Validate a configuration string; raises ValueError saying exactly what is wrong."""
    if not isinstance(spec, str):
        raise ValueError(f"model spec must be a string like {SPEC_FORMS}, got {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise ValueError(f"model spec is empty: expected {SPEC_FORMS}")
    if len(text) > _MAX_SPEC_CHARS:
        raise ValueError(f"model spec is longer than {_MAX_SPEC_CHARS} characters")
    if text.lower() == "local":
        return ModelSpec("local")
    provider, slash, rest = text.partition("/")
    provider = provider.lower()
    if not slash:
        raise ValueError(f"unknown model spec {text!r}: expected {SPEC_FORMS}")
    if provider == "bedrock":
        return _parse_bedrock(text, rest)
    if provider == "openai":
        return _parse_openai(text, rest)
    raise ValueError(f"unknown model provider {provider!r} in {text!r}: expected {SPEC_FORMS}")


def _parse_bedrock(text: str, model_id: str) -> ModelSpec:
    if not model_id:
        raise ValueError(f"{text!r} has no model id: write 'bedrock/<model-id>', "
                         "e.g. 'bedrock/anthropic.claude-3-5-haiku-20241022-v1:0'")
    if not _BEDROCK_ID_RE.fullmatch(model_id):
        raise ValueError(f"bedrock model id {model_id!r} may contain only letters, digits and . _ : / - "
                         "(a model id, an inference profile id or an ARN)")
    return ModelSpec("bedrock", model=model_id)


def _parse_openai(text: str, rest: str) -> ModelSpec:
    model, at, base_url = rest.partition("@")
    if not at:
        raise ValueError(f"{text!r} has no endpoint: write 'openai/<model>@<base_url>', "
                         "e.g. 'openai/Qwen2.5-7B-Instruct@http://vllm.internal:8000/v1'")
    if not model:
        raise ValueError(f"{text!r} has no model name before '@'")
    if not _OPENAI_MODEL_RE.fullmatch(model):
        raise ValueError(f"model name {model!r} may contain only letters, digits and . _ : / + -")
    return ModelSpec("openai", model=model, base_url=_check_base_url(base_url))


def _check_base_url(base_url: str) -> str:
    if not base_url:
        raise ValueError("the endpoint after '@' is empty: give the base URL, e.g. http://vllm:8000/v1")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"endpoint {base_url!r} must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise ValueError("the endpoint URL must not hold credentials: pass the API key separately")
    if not parts.hostname:
        raise ValueError(f"endpoint {base_url!r} has no host name")
    if parts.query or parts.fragment:
        raise ValueError(f"endpoint {base_url!r} must not have a query string or fragment")
    try:
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise ValueError(f"endpoint {base_url!r} has an invalid port") from exc
    return base_url.rstrip("/")


def build_chat_model(spec: ModelSpec | str, *, timeout_s: float, region: str | None = None,
                     api_key: str | None = None, temperature: float = 0.0,
                     max_tokens: int = 1024, bedrock_endpoint_url: str | None = None,
                     guardrail: tuple[str, str] | None = None) -> BaseChatModel | None:
    """The chat model for `spec`, or None for the local tier.

    Imports the provider package here, not at module import. Raises ValueError for an invalid
    spec or timeout, ImportError (naming the package) when the provider package is missing.
    `api_key` is used by the self-hosted endpoint only (vLLM accepts any key when it has none).
    Bedrock only: `bedrock_endpoint_url` replaces the regional endpoint (the contract tests'
    local Converse server, a VPC endpoint); `guardrail` is a (guardrail id, version) pair that
    Bedrock applies to every call.
    """
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
        raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    if parsed.provider == "local":
        return None
    if parsed.provider == "bedrock":
        try:
            from langchain_aws import ChatBedrockConverse
        except ImportError as exc:  # pragma: no cover - langchain-aws is pinned in the lock
            raise ImportError(f"{parsed} needs the package {_PACKAGES['bedrock']}") from exc
        # botocore takes whole seconds; round up so a 0.5 s budget is not turned into "no timeout".
        options: dict[str, Any] = {}
        if bedrock_endpoint_url:
            options["endpoint_url"] = bedrock_endpoint_url
        if guardrail:
            options["guardrail_config"] = {"guardrailIdentifier": guardrail[0],
                                           "guardrailVersion": guardrail[1], "trace": "disabled"}
        return ChatBedrockConverse(model=str(parsed.model), region_name=region, temperature=temperature,
                                   max_tokens=max_tokens, timeout=math.ceil(timeout_s), max_retries=0,
                                   **options)
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise ImportError(f"{parsed} needs the package {_PACKAGES['openai']}") from exc
    from pydantic import SecretStr

    return ChatOpenAI(model=str(parsed.model), base_url=parsed.base_url,
                      api_key=SecretStr(api_key or "not-needed"), timeout=timeout_s, max_retries=0,
                      temperature=temperature, max_completion_tokens=max_tokens)
