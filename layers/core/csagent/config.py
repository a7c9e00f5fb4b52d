"""Typed configuration, in small parts that each function composes into the model of what it
needs (`csagent.env_vars`, validated once by a decorator on its handler), and `Settings`, all of
them together, for the functions that run the whole conversation and for local tooling.

Values come from environment variables (the SAM template sets them in AWS; `make` and the
tests set them locally). Logic never reads `os.environ` directly: it reads a part through
`get_settings.of(Part)` (or the whole through `get_settings()`), cached per process.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# defer_build: a part's validator is built when the part is first read, not when this module is
# imported (a cold import pays for none of them; a function builds only the parts it reads).
_CONFIG = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore", defer_build=True)


class Deployment(BaseSettings):
    """Where the function runs: every function's first part."""

    model_config = _CONFIG

    stage: Literal["local", "dev", "prod"] = "local"
    aws_region: str = Field(default="us-east-1", alias="AWS_REGION")
    aws_endpoint_url: str | None = Field(default=None, alias="AWS_ENDPOINT_URL")


class Auth(Deployment):
    """Who may call the HTTP API: the API Gateway JWT authorizer's claims, or dev tokens locally."""

    auth_mode: Literal["jwt", "dev"] = "jwt"

    @model_validator(mode="after")
    def _dev_auth_is_local_only(self) -> Any:
        # Dev auth trusts a header anyone can write; it must never run in a deployed stage.
        if self.auth_mode == "dev" and self.stage != "local":
            raise ValueError("AUTH_MODE=dev is only allowed when STAGE=local")
        return self


class Neo4jConfig(BaseSettings):
    """The store graph."""

    model_config = _CONFIG

    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    # In AWS the credentials come from Secrets Manager ({"username", "password"}), cached 5 min.
    neo4j_secret_arn: str | None = None
    secret_max_age_s: int = 300
    neo4j_database: str = "neo4j"
    neo4j_query_timeout_s: float = 10.0


class ConversationStore(BaseSettings):
    """Checkpoints and sessions (DynamoDB, S3 offload; names as `template.yaml` gives them for
    the local stack name)."""

    model_config = _CONFIG

    checkpoints_table: str = "csagent-local-checkpoints"
    sessions_table: str = "csagent-local-sessions"
    checkpoint_ttl_seconds: int = 7 * 24 * 3600
    checkpoint_bucket: str | None = None
    # gzip the checkpoint payload: a turn's state is repetitive JSON (about half the bytes).
    checkpoint_compression: bool = True


class ModelConfig(Deployment):
    """The models of every role, the image reader and the Text2Cypher limits."""

    # Models: "local" (no generative model), "bedrock/<model-id>", "openai/<model>@<base_url>" (vLLM)
    chat_model: str = "local"
    # The next rung of the ladder when the primary model fails or its breaker is open (then the
    # local tier): e.g. CHAT_MODEL=bedrock/…, SECONDARY_CHAT_MODEL=openai/…@http://vllm:8000/v1
    secondary_chat_model: str | None = None
    # One chain per role ("primary|secondary|local"); unset: CHAT_MODEL, then SECONDARY_CHAT_MODEL.
    # The image reader does not inherit CHAT_MODEL (a chat model need not read pictures): unset,
    # label photos are read by Tesseract. Roles whose prompts always carry customer data (planner,
    # summariser, image) must name a self-hosted endpoint or local when set (checked at start-up).
    router_model: str | None = None
    planner_model: str | None = None
    summariser_model: str | None = None
    text2cypher_model: str | None = None  # defaults to chat_model
    image_model: str | None = None
    model_timeout_s: float = 20.0
    # Per-role timeouts; unset: MODEL_TIMEOUT_S. The router sits on every turn's critical path.
    router_timeout_s: float | None = None
    planner_timeout_s: float | None = None
    summariser_timeout_s: float | None = None
    image_timeout_s: float | None = None
    model_api_key: SecretStr | None = None  # for a self-hosted endpoint that wants one
    # How the OpenAI-compatible endpoint is asked for JSON: "json_schema" (vLLM, OpenAI) or
    # "json_object" with the schema beside it (llama.cpp's server rejects "json_schema").
    model_json_mode: Literal["json_schema", "json_object"] = "json_schema"
    # Bedrock only: another Converse endpoint (the contract tests' local server, a VPC endpoint)
    # and a guardrail applied to every call.
    bedrock_endpoint_url: str | None = None
    bedrock_guardrail_id: str | None = None
    bedrock_guardrail_version: str | None = None
    text2cypher_timeout_s: float = 5.0
    text2cypher_max_rows: int = 50

    # Reading attached images: Tesseract (the local tier), or the IMAGE_MODEL chain (a multimodal
    # self-hosted model) with Tesseract below it. "bedrock" is refused: label photos carry names and
    # street addresses, which never go to Bedrock.
    image_reader: Literal["tesseract", "model", "bedrock"] = "tesseract"

    @field_validator("chat_model", "text2cypher_model", "secondary_chat_model", "router_model",
                     "planner_model", "summariser_model", "image_model")
    @classmethod
    def _model_spec(cls, value: str | None) -> str | None:
        if value is not None:
            from csagent.models.providers import parse_model_spec

            for one in value.split("|"):
                parse_model_spec(one)  # a precise ValueError for a malformed spec, at start-up
        return value

    @field_validator("model_timeout_s", "router_timeout_s", "planner_timeout_s", "summariser_timeout_s",
                     "image_timeout_s")
    @classmethod
    def _positive_timeout(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError(f"a model timeout must be a positive number of seconds, got {value}")
        return value

    @model_validator(mode="after")
    def _customer_data_roles_have_an_eligible_model(self) -> Any:
        # Data-routing rule (csagent.models.sensitivity): a role whose prompts always carry
        # customer data, explicitly set to models that may not see it, could never call them.
        from csagent.models.ladder import parse_chain
        from csagent.models.roles import ALWAYS_CUSTOMER_DATA

        for role in sorted(ALWAYS_CUSTOMER_DATA):
            setting = getattr(self, f"{role.value}_model")
            rungs = parse_chain(setting) if setting else []
            refused = [str(s) for s in rungs if not s.may_receive_sensitive_data]
            if refused and len(refused) == len(rungs):
                raise ValueError(
                    f"{role.value.upper()}_MODEL={setting!r}: the {role.value}'s prompts always carry "
                    f"customer data (orders, addresses, payments), which may not be sent to "
                    f"{', '.join(refused)}; "
                    "use a self-hosted endpoint ('openai/<model>@<base_url>') or 'local'")
        if self.image_reader == "bedrock":
            raise ValueError("IMAGE_READER=bedrock is refused: label photos carry names and street "
                             "addresses, which may not be sent to Bedrock; use IMAGE_READER=tesseract, or "
                             "IMAGE_READER=model with IMAGE_MODEL=openai/<multimodal model>@<self-hosted "
                             "base_url>")
        if self.image_reader == "model" and not self.image_model:
            raise ValueError("IMAGE_READER=model needs IMAGE_MODEL (a self-hosted multimodal model)")
        if self.bedrock_guardrail_version and not self.bedrock_guardrail_id:
            raise ValueError("BEDROCK_GUARDRAIL_VERSION is set without BEDROCK_GUARDRAIL_ID")
        return self


class DispatchConfig(Deployment):
    """How a wave of tool tasks runs."""

    # Dispatch of tool tasks: in this process (one LangGraph Send per task) or one synchronous
    # Step Functions execution per wave. Locally, stepfunctions without an ARN uses the moto bridge.
    dispatch_mode: Literal["inprocess", "stepfunctions"] = "inprocess"
    state_machine_arn: str | None = None
    dispatch_timeout_s: float = 25.0

    @model_validator(mode="after")
    def _deployed_dispatch_needs_a_state_machine(self) -> Any:
        if self.dispatch_mode == "stepfunctions" and not self.state_machine_arn and self.stage != "local":
            raise ValueError("DISPATCH_MODE=stepfunctions needs STATE_MACHINE_ARN outside STAGE=local")
        return self


class HandoffConfig(BaseSettings):
    """Human handoff and approvals (template.yaml sets HANDOFFS_TABLE and HANDOFF_QUEUE_URL)."""

    model_config = _CONFIG

    handoffs_table: str = "csagent-local-handoffs"
    handoff_queue_url: str | None = None  # locally looked up by name on the moto endpoint
    handoff_queue_name: str = "csagent-local-handoffs"
    handoff_max_messages: int = 60
    handoff_repeated_failures: int = 2
    handoff_high_value_amount: float = 200.0
    approval_ttl_s: int = 24 * 3600


class ActionConfig(Deployment):
    """The customer actions' writes: idempotency records, the approval threshold, the store's day."""

    idempotency_table: str = "csagent-local-idempotency"
    refund_approval_threshold: float = 500.0
    # The store's "today" (dates of audit records and requests); unset means the real date. The
    # local stack sets it inside the seeded data's date range (2024).
    store_today: str | None = None

    # How long an action's idempotency record is kept (the same retention as the checkpoints).
    checkpoint_ttl_seconds: int = 7 * 24 * 3600


class KnowledgeConfig(BaseSettings):
    """Knowledge-base admin (csagent.knowledge.service): uploads land in KB_BUCKET under
    KB_UPLOAD_PREFIX<document_id>/<file name> (presigned POST, KB_PRESIGN_TTL_S); the bucket's
    ObjectCreated event runs the ingest function. The API's direct upload takes at most
    KB_MAX_UPLOAD_BYTES (Lambda's 6 MB payload bounds it); a presigned upload at most
    KB_MAX_OBJECT_BYTES."""

    model_config = _CONFIG

    kb_bucket: str = "csagent-local-knowledge-123456789012-us-east-1"
    kb_upload_prefix: str = "kb/uploads/"
    kb_presign_ttl_s: int = 900
    kb_max_upload_bytes: int = 5 * 1024 * 1024
    kb_max_object_bytes: int = 20 * 1024 * 1024


class Limits(BaseSettings):
    """Conversation limits."""

    model_config = _CONFIG

    max_message_chars: int = 4000
    max_tasks_per_turn: int = 5
    embedding_dimension: int = 384


class Settings(Auth, Neo4jConfig, ConversationStore, ModelConfig, DispatchConfig, HandoffConfig, ActionConfig,
               KnowledgeConfig, Limits):
    """Every part: what the router, stream and worker functions (the whole conversation) and the
    local tooling read."""

    model_config = _CONFIG


Part = TypeVar("Part", bound=BaseSettings)


class _SettingsCache:
    """`get_settings()`: the whole `Settings`; `get_settings.of(Part)`: one part, read from the
    environment once per process; `get_settings.cache_clear()` forgets them all (tests)."""

    def __init__(self) -> None:
        self._made: dict[type[BaseSettings], BaseSettings] = {}

    def __call__(self) -> Settings:
        return self.of(Settings)

    def of(self, model: type[Part]) -> Part:
        made = self._made.get(model)
        if made is None:
            made = self._made[model] = model()
        return made  # type: ignore[return-value]

    def cache_clear(self) -> None:
        self._made.clear()


get_settings = _SettingsCache()
