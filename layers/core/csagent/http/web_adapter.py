"""The AWS Lambda Web Adapter settings the stream function depends on, checked at start-up.

The adapter (a layer) reads these variables itself; the app reads them only to say clearly, in
its first log lines, when a misconfiguration would make streamed turns arrive all at once (a
buffered Function URL) or not at all (no wrapper: Lambda would look for a Python handler), and to
tell the adapter's readiness probe from a customer's request: while the container starts, the
adapter sends `GET <AWS_LWA_READINESS_CHECK_PATH>` (default `/`) until the app answers, so that
probe, not the first customer's request, is the first request the app serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

WRAPPER = "/opt/bootstrap"
STREAMING = "response_stream"


class WebAdapterSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    aws_lambda_exec_wrapper: str | None = None  # the adapter's wrapper script, /opt/bootstrap
    aws_lwa_invoke_mode: str = "buffered"      # must match the Function URL's InvokeMode
    lambda_function_name: str | None = Field(default=None, alias="AWS_LAMBDA_FUNCTION_NAME")
    # the path the adapter probes until the app answers (the adapter's own default; it also reads
    # the older READINESS_CHECK_PATH)
    readiness_check_path: str = Field(default="/", validation_alias=AliasChoices(
        "AWS_LWA_READINESS_CHECK_PATH", "READINESS_CHECK_PATH"))


def is_readiness_probe(scope: Mapping[str, Any], settings: WebAdapterSettings) -> bool:
    """Whether an ASGI request is the adapter's readiness probe: a GET of its check path."""
    return (scope.get("type") == "http" and scope.get("method") == "GET"
            and scope.get("path") == settings.readiness_check_path)


def streaming_problems(settings: WebAdapterSettings) -> list[str]:
    """What stands between the app and streamed responses in Lambda (nothing outside Lambda)."""
    if settings.lambda_function_name is None:
        return []
    problems = []
    if settings.aws_lambda_exec_wrapper != WRAPPER:
        problems.append(f"AWS_LAMBDA_EXEC_WRAPPER is not {WRAPPER}: the Lambda Web Adapter does not run")
    if settings.aws_lwa_invoke_mode.lower() != STREAMING:
        problems.append(f"AWS_LWA_INVOKE_MODE is not {STREAMING}: a turn's events all arrive at its end")
    return problems
