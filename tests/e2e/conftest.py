"""e2e fixtures: the router Lambda handler itself, driven by the JSON events in `events/`
(the same files `sam local invoke -e` takes), against the real local stack."""

from __future__ import annotations

import importlib.util
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROUTER_APP = ROOT / "functions" / "router" / "app.py"


class LambdaContext:
    function_name = "RouterFunction"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:RouterFunction"
    aws_request_id = "e2e-request"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29_000


@pytest.fixture
def router_handler(monkeypatch: pytest.MonkeyPatch, tau_store: Any,
                   moto_endpoint: str) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    """`handler(event)` of functions/router/app.py in JWT mode, as API Gateway would call it."""
    from csagent import runtime

    monkeypatch.setenv("AUTH_MODE", "jwt")
    runtime.reset()
    spec = importlib.util.spec_from_file_location("router_app_e2e", ROUTER_APP)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield lambda event: module.handler(event, LambdaContext())
    runtime.reset()


@pytest.fixture
def session_id() -> str:
    return f"e2e-{uuid.uuid4().hex[:12]}"


os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
