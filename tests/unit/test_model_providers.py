"""Model providers from configuration strings: parsing with precise errors, the sensitive-data
rule, building each provider's chat model (no network: clients are only constructed), the cached
factory, and no provider import at module import."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from csagent.models.providers import ModelSpec, build_chat_model, parse_model_spec


# ------------------------------------------------------------------------------------- parsing
@pytest.mark.parametrize("spec", ["local", "LOCAL", "  local  "])
def test_local_spec_is_the_local_tier(spec: str) -> None:
    # Given the local tier written in any case or with spaces
    # When it is parsed
    parsed = parse_model_spec(spec)
    # Then it is the local tier, allowed to see sensitive data
    assert parsed == ModelSpec("local")
    assert parsed.is_local and parsed.may_receive_sensitive_data


def test_bedrock_spec_keeps_the_full_model_id() -> None:
    # Given a Bedrock inference-profile id with dots and a version suffix
    parsed = parse_model_spec("bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0")
    # Then the id is kept verbatim and Bedrock may not receive sensitive data
    assert (parsed.provider, parsed.model, parsed.base_url) == (
        "bedrock", "us.anthropic.claude-3-5-haiku-20241022-v1:0", None)
    assert not parsed.may_receive_sensitive_data


def test_openai_spec_splits_model_and_self_hosted_endpoint() -> None:
    # Given a self-hosted vLLM endpoint serving a model whose name contains a slash
    parsed = parse_model_spec("openai/Qwen/Qwen2.5-7B-Instruct@http://vllm.internal:8000/v1/")
    # Then model and base URL are separated (trailing slash dropped) and sensitive data is allowed
    assert (parsed.provider, parsed.model, parsed.base_url) == (
        "openai", "Qwen/Qwen2.5-7B-Instruct", "http://vllm.internal:8000/v1")
    assert parsed.may_receive_sensitive_data


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "https://eu.api.openai.com/v1",
                                 "https://openrouter.ai/api/v1"])
def test_a_public_hosted_api_may_not_receive_sensitive_data(url: str) -> None:
    # Given an OpenAI-compatible spec that points at a public hosted API, not a self-hosted one
    parsed = parse_model_spec(f"openai/gpt-4o-mini@{url}")
    # Then it is not allowed to see orders, addresses or payments
    assert not parsed.may_receive_sensitive_data


@pytest.mark.parametrize(("spec", "message"), [
    ("", "model spec is empty"),
    ("   ", "model spec is empty"),
    ("gpt-4", "unknown model spec 'gpt-4'"),
    ("anthropic/claude-3", "unknown model provider 'anthropic'"),
    ("bedrock/", "has no model id"),
    ("bedrock/claude 3", "may contain only letters"),
    ("openai/llama3", "has no endpoint"),
    ("openai/@http://vllm:8000/v1", "has no model name before '@'"),
    ("openai/llama3@", "the endpoint after '@' is empty"),
    ("openai/llama3@ftp://vllm/v1", "must start with http:// or https://"),
    ("openai/llama3@http://user:secret@vllm:8000/v1", "must not hold credentials"),
    ("openai/llama3@http:///v1", "has no host name"),
    ("openai/llama3@http://vllm:8000/v1?key=x", "must not have a query string"),
    ("openai/llama3@http://vllm:99999999/v1", "has an invalid port"),
])
def test_invalid_specs_are_refused_with_a_precise_message(spec: str, message: str) -> None:
    # Given a malformed configuration string
    # When it is parsed
    # Then a ValueError says exactly what is wrong
    with pytest.raises(ValueError, match=message.replace("?", r"\?")):
        parse_model_spec(spec)


def test_a_non_string_spec_is_refused() -> None:
    # Given a spec that is not a string (a mis-typed setting)
    # Then the error names the expected forms
    with pytest.raises(ValueError, match="must be a string"):
        parse_model_spec(42)  # type: ignore[arg-type]


_NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,30}", fullmatch=True)
_HOST = st.from_regex(r"[a-z][a-z0-9-]{0,15}(\.[a-z][a-z0-9-]{0,10}){0,2}", fullmatch=True)


@given(model=_NAME)
def test_bedrock_specs_round_trip(model: str) -> None:
    # Given any well-formed Bedrock model id
    parsed = parse_model_spec(f"bedrock/{model}")
    # Then printing and parsing again gives the same spec
    assert parse_model_spec(str(parsed)) == parsed and parsed.model == model


@given(model=_NAME, host=_HOST, port=st.integers(1, 65535), scheme=st.sampled_from(["http", "https"]))
def test_openai_specs_round_trip(model: str, host: str, port: int, scheme: str) -> None:
    # Given any well-formed self-hosted endpoint spec
    parsed = parse_model_spec(f"openai/{model}@{scheme}://{host}:{port}/v1")
    # Then it parses to the same model and URL, and round-trips through str()
    assert (parsed.model, parsed.base_url) == (model, f"{scheme}://{host}:{port}/v1")
    assert parse_model_spec(str(parsed)) == parsed


# ------------------------------------------------------------------------------------- building
def test_the_local_tier_has_no_chat_model() -> None:
    # Given the local spec
    # When a model is built
    # Then there is none: the local tier is deterministic
    assert build_chat_model("local", timeout_s=5.0) is None


def test_bedrock_builds_a_converse_model_without_retries() -> None:
    # Given a Bedrock spec, a region and a 2.5 s budget
    model = build_chat_model("bedrock/anthropic.claude-3-5-haiku-20241022-v1:0", timeout_s=2.5,
                             region="eu-west-1")
    # Then it is ChatBedrockConverse for that model and region, timeout rounded up, no retries
    from langchain_aws import ChatBedrockConverse

    assert isinstance(model, ChatBedrockConverse)
    assert (model.model_id, model.region_name) == ("anthropic.claude-3-5-haiku-20241022-v1:0", "eu-west-1")
    assert (model.timeout, model.max_retries) == (3, 0)


def test_openai_builds_a_client_for_the_self_hosted_endpoint() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    # Given a vLLM spec without an API key
    model = build_chat_model("openai/smollm2@http://127.0.0.1:8001/v1", timeout_s=4.0)
    # Then ChatOpenAI targets that base URL with a placeholder key, the timeout and no retries
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.openai_api_base) == ("smollm2", "http://127.0.0.1:8001/v1")
    assert model.openai_api_key is not None and model.openai_api_key.get_secret_value() == "not-needed"
    assert (model.request_timeout, model.max_retries) == (4.0, 0)


def test_openai_passes_a_given_api_key() -> None:
    pytest.importorskip("langchain_openai")
    # Given an endpoint that needs a key
    model = build_chat_model("openai/smollm2@http://127.0.0.1:8001/v1", timeout_s=4.0, api_key="sk-local")
    # Then the key is used
    assert model is not None and model.openai_api_key.get_secret_value() == "sk-local"  # type: ignore[attr-defined]


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_non_positive_or_infinite_timeout_is_refused(timeout: float) -> None:
    # Given a timeout that would disable or break the time limit
    # Then no model is built
    with pytest.raises(ValueError, match="timeout_s must be a positive number"):
        build_chat_model("bedrock/some-model", timeout_s=timeout)


def test_importing_the_providers_module_imports_no_provider_package() -> None:
    # Given a fresh interpreter (import cost is a Lambda cold-start metric)
    code = ("import sys, csagent.models.providers as p; p.parse_model_spec('bedrock/x'); "
            "print(sorted(m for m in ('langchain_aws', 'langchain_openai', 'boto3') if m in sys.modules))")
    # When the providers module is imported and a spec parsed
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # Then no provider package has been loaded
    assert out.stdout.strip() == "[]"
