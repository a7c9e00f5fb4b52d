"""The AWS Lambda Web Adapter settings the stream function depends on, checked at start-up.

The adapter (a layer) reads these variables itself; the app reads them only to say clearly, in
its first log lines, when a misconfiguration would make streamed turns arrive all at once (a
buffered Function URL) or not at all (no wrapper: Lambda would look for a Python handler).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

WRAPPER = "/opt/bootstrap"
STREAMING = "response_stream"


class WebAdapterSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    aws_lambda_exec_wrapper: str | None = None  # the adapter's wrapper script, /opt/bootstrap
    aws_lwa_invoke_mode: str = "buffered"      # must match the Function URL's InvokeMode
    lambda_function_name: str | None = Field(default=None, alias="AWS_LAMBDA_FUNCTION_NAME")


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
