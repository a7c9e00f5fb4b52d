"""Each function's configuration model (`csagent.env_vars`): validated at the cold start by the
decorator on its handler, failing with a message that names the variable; and consistent with
the environment `template.yaml` gives the function."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_settings import BaseSettings

from csagent.config import get_settings
from csagent.env_vars import (
    ConfigurationError,
    CustomerActionsEnv,
    FunctionEnv,
    KnowledgeIngestEnv,
    KnowledgeSearchEnv,
    PredefinedCypherEnv,
    RouterEnv,
    StreamEnv,
    Text2CypherEnv,
    WebhookEnv,
    WorkerEnv,
    load_environment,
)
from devstack.template import load_template

ROOT = Path(__file__).resolve().parents[2]
MODELS: dict[str, type[FunctionEnv]] = {
    "RouterFunction": RouterEnv, "StreamFunction": StreamEnv, "WorkerFunction": WorkerEnv,
    "WebhookFunction": WebhookEnv, "PredefinedCypherFunction": PredefinedCypherEnv,
    "KnowledgeSearchFunction": KnowledgeSearchEnv, "Text2CypherFunction": Text2CypherEnv,
    "CustomerActionsFunction": CustomerActionsEnv, "KnowledgeIngestFunction": KnowledgeIngestEnv,
}
# Read by the Lambda runtime, the Web Adapter layer, Powertools or a library itself (pydantic's
# switch for its plugin scan), not by our models.
PLATFORM_PREFIXES = ("POWERTOOLS_", "AWS_LWA_", "AWS_LAMBDA_")
PLATFORM_VARIABLES = {"LOG_LEVEL", "PYDANTIC_DISABLE_PLUGINS"}


def template_env() -> dict[str, dict[str, Any]]:
    template = load_template(ROOT / "template.yaml")
    common = template["Globals"]["Function"]["Environment"]["Variables"]
    return {name: {**common, **res["Properties"].get("Environment", {}).get("Variables", {})}
            for name, res in template["Resources"].items() if res["Type"] == "AWS::Serverless::Function"}


def variables_of(model: type[BaseSettings]) -> set[str]:
    names = set()
    for field, info in model.model_fields.items():
        alias = info.validation_alias or info.alias
        names.add((alias if isinstance(alias, str) else field).upper())
    return names


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """A deployed stage's environment with none of the stack's variables set; settings re-read."""
    monkeypatch.setenv("STAGE", "dev")
    monkeypatch.setenv("AUTH_MODE", "jwt")
    for model in MODELS.values():
        for name in model.needs_in_aws:
            monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


def test_every_function_of_the_template_has_a_model() -> None:
    assert set(template_env()) == set(MODELS)


@pytest.mark.parametrize("function", sorted(MODELS))
def test_the_template_gives_each_function_what_its_model_needs_and_nothing_it_does_not_read(
        function: str) -> None:
    # Given the function's environment in template.yaml and its model
    env, model = template_env()[function], MODELS[function]
    # Then every variable the model needs in AWS is set, and every variable set is the model's
    assert set(model.needs_in_aws) <= set(env), set(model.needs_in_aws) - set(env)
    unread = {name for name in env if name not in variables_of(model)
              and name not in PLATFORM_VARIABLES and not name.startswith(PLATFORM_PREFIXES)}
    assert unread == set()


@pytest.mark.parametrize("model", list(MODELS.values()), ids=lambda m: m.__name__)
def test_each_variable_a_function_needs_in_aws_is_named_when_missing(model: type[FunctionEnv],
                                                                     deployed: pytest.MonkeyPatch) -> None:
    # Given a deployed stage where the template's variables are set (placeholders)
    for name in model.needs_in_aws:
        deployed.setenv(name, f"placeholder-{name.lower()}")
    assert load_environment(model) is not None
    for name in model.needs_in_aws:
        # When one of them is missing
        deployed.delenv(name)
        get_settings.cache_clear()
        # Then loading the function's configuration fails, naming it
        with pytest.raises(ConfigurationError, match=rf"^{model.__name__}: .*\b{name}\b.*must be set"):
            load_environment(model)
        deployed.setenv(name, f"placeholder-{name.lower()}")


def test_an_invalid_value_is_named_with_its_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_QUERY_TIMEOUT_S", "soon")
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError,
                           match=r"NEO4J_QUERY_TIMEOUT_S: Input should be a valid number"):
            load_environment(PredefinedCypherEnv)
    finally:
        get_settings.cache_clear()


def _handler(app: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"env_test_{app.parent.name}", app)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


class Context:
    function_name = "fn"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:fn"
    aws_request_id = "env-test"


@pytest.mark.parametrize(("app", "model", "missing"), [
    ("functions/router/app.py", RouterEnv, "CHECKPOINTS_TABLE"),
    ("functions/tools/predefined_cypher/app.py", PredefinedCypherEnv, "NEO4J_URI"),
    ("functions/tools/customer_actions/app.py", CustomerActionsEnv, "IDEMPOTENCY_TABLE"),
    ("functions/webhook/app.py", WebhookEnv, "WEBHOOK_QUEUE_URL"),
    ("functions/worker/app.py", WorkerEnv, "OUTBOUND_SECRETS_ARN"),
])
def test_a_handler_fails_its_cold_start_on_a_missing_variable_before_doing_anything(
        app: str, model: type[FunctionEnv], missing: str, deployed: pytest.MonkeyPatch) -> None:
    # Given the function deployed with every variable it needs but one
    handler = _handler(ROOT / app)
    for name in model.needs_in_aws:
        if name != missing:
            deployed.setenv(name, f"placeholder-{name.lower()}")
    # When its first event arrives
    # Then the invocation fails with the variable's name, before any event is read
    with pytest.raises(ConfigurationError, match=rf"^{model.__name__}: .*\b{missing}\b"):
        handler({"not": "an event of any kind"}, Context())
