"""The one door to generative models: `ModelGateway.structured` / `text` / `complete`.

A call names a role (router, planner, …), a prompt file and its variables. The gateway:

1. renders the prompt (`csagent.models.prompts`) and decides whether it carries customer data
   (`csagent.models.sensitivity`: the role's rule, else the detectors over the variables' values,
   since the prompt file's own text is ours; a caller may say so, never overriding the role's rule);
2. walks the role's chain (`ROUTER_MODEL=primary|secondary`, …) rung by rung, skipping a rung
   that may not receive customer data ("bedrock/x: withheld, customer data") or whose breaker
   ("model:<spec>") is open, and refusing a call over the turn's budget (`usage.TurnUsage`);
3. asks each provider for structured output its own way: Bedrock through tool calling
   (`with_structured_output(schema, include_raw=True)`, the tool's arguments are the answer),
   the OpenAI-compatible endpoint through a JSON-schema `response_format` (`MODEL_JSON_MODE`:
   `json_schema` for vLLM, `json_object` with a `schema` for llama.cpp's server);
4. on unparseable output repairs what it can (code fences, text around the JSON object), then
   retries once on the same rung with the validation error as a hint (`prompts/repair.v1.md`),
   then moves to the next rung;
5. records calls, tokens, estimated cost and the rungs taken on the turn's meter, and raises
   `ModelUnavailable` (or `DataRoutingRefused`, `ModelBudgetExhausted`, both subclasses) when no
   rung answered: the caller's local tier answers instead.

Endpoint failures are typed (`ModelTimeout`, `ModelThrottled`, `ModelEndpointError`) and count on
the endpoint's breaker; an invalid answer does not (the endpoint works, the answer was bad).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from csagent.models.errors import (
    DataRoutingRefused,
    ModelBudgetExhausted,
    ModelEndpointError,
    ModelError,
    ModelOutputInvalid,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
)
from csagent.models.ladder import LADDER_SEPARATOR, record_degradation
from csagent.models.providers import ModelSpec
from csagent.models.roles import ALWAYS_CUSTOMER_DATA, Role
from csagent.models.sensitivity import carries_customer_data, eligible
from csagent.models.usage import current_usage
from csagent.resilience.breaker import breakers, model_breaker_name

if TYPE_CHECKING:  # pragma: no cover - typing only
    from langchain_core.messages import BaseMessage

    from csagent.config import ModelConfig

logger = logging.getLogger(__name__)

T = TypeVar("T")
S = TypeVar("S", bound=BaseModel)
JsonMode = Literal["json_schema", "json_object"]
#: Builds the chat model of one rung for one role (the role decides the timeout).
ModelBuilder = Callable[[ModelSpec, Role], Any]

_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_THROTTLE_CODES = frozenset({"ThrottlingException", "TooManyRequestsException",
                             "ServiceQuotaExceededException"})


@dataclass(frozen=True)
class ModelReply(Generic[T]):
    """A model's answer: the value, which rung gave it, every rung's outcome, and the tokens."""

    value: T
    model: str
    steps: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


# -- output parsing and repair -------------------------------------------------------------------
def message_text(message: Any) -> str:
    """The text of a chat answer (a string, or content blocks as Bedrock Converse returns them)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(block if isinstance(block, str) else str(block.get("text", ""))
                       for block in content if isinstance(block, str | Mapping)
                       and (isinstance(block, str) or block.get("type", "text") == "text"))
    return str(content or "")


def extract_json(text: str) -> Any:
    """The JSON object in a model's text, repaired: a code fence is unwrapped and text before the
    first '{' or after the object's end is ignored. Raises ValueError when there is none."""
    fence = _FENCE_RE.search(text)
    body = fence.group(1) if fence else text
    start = body.find("{")
    if start < 0:
        raise ValueError("the answer holds no JSON object")
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the answer is not valid JSON ({exc.msg} at character {exc.pos})") from exc
    return value


def parse_structured(schema: type[S], candidate: Any) -> S:
    """`candidate` (tool arguments, or text holding JSON) validated into `schema`; raises
    ValueError whose message is the hint for the retry."""
    if isinstance(candidate, schema):
        return candidate
    value = extract_json(candidate) if isinstance(candidate, str) else candidate
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"the JSON does not match the schema ({problems})") from exc


def response_format(schema: type[BaseModel], mode: JsonMode) -> dict[str, Any]:
    """The OpenAI-compatible `response_format` constraining the answer to `schema`."""
    json_schema = schema.model_json_schema()
    if mode == "json_object":  # llama.cpp's server: json_object with the schema beside it
        return {"type": "json_object", "schema": json_schema}
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema,
                                                    "strict": False}}


def classify_failure(exc: BaseException) -> ModelError:
    """An endpoint exception as a typed model error (by name: providers are imported lazily)."""
    if isinstance(exc, ModelError):
        return exc
    name = type(exc).__name__
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    code = ""
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):  # botocore ClientError
        code = str((response.get("Error") or {}).get("Code") or "")
        status = status or (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    message = f"{name}: {str(exc)[:200]}"
    if "Timeout" in name or "timed out" in str(exc).lower():
        return ModelTimeout(message)
    if status == 429 or code in _THROTTLE_CODES or name == "RateLimitError":
        return ModelThrottled(message)
    return ModelEndpointError(message)


def _usage_of(message: Any) -> tuple[int, int]:
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)


def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(message_text(m) for m in messages)


def _decide(role: Role, variables: Mapping[str, Any], customer_data: bool | None) -> bool:
    """Does a prompt file rendered with `variables` carry customer data? The file's own text is
    ours (its examples, like "#W1234567", are not a customer's): only the values are inspected.
    A caller may add that it does (`customer_data=True`), never that it does not: the role's
    rule and the detectors always run."""
    values = "\n".join(str(v) for v in variables.values())
    return bool(customer_data) or carries_customer_data(Role(role), values)


# -- the gateway ----------------------------------------------------------------------------------
@dataclass
class _Attempt:
    """What one rung produced: the value and the tokens of every call it took."""

    value: Any
    input_tokens: int = 0
    output_tokens: int = 0
    retried: bool = False


class ModelGateway:
    """Model calls per role over each role's chain of endpoints (see the module docstring).

    `chains` maps each role to its model rungs (the local tier is implied below them);
    `build(spec, role)` makes a rung's chat model (built once per spec and role, then reused).
    """

    def __init__(self, chains: Mapping[Role, Sequence[ModelSpec]], build: ModelBuilder, *,
                 json_mode: JsonMode = "json_schema") -> None:
        self._chains = {Role(role): [s for s in specs if not s.is_local] for role, specs in chains.items()}
        self._build = build
        self._json_mode = json_mode
        self._models: dict[tuple[str, Role], Any] = {}
        # The structured-output runnable per (spec, role, schema): building one costs more than
        # the rest of the gateway's work per call (langchain converts the schema each time).
        self._structured: dict[tuple[str, Role, type[BaseModel]], Any] = {}
        self._lock = threading.Lock()

    # -- what is configured ---------------------------------------------------------------------
    def chain(self, role: Role) -> list[ModelSpec]:
        """The role's model rungs, primary first (empty: the local tier only)."""
        return list(self._chains.get(Role(role), []))

    def has_model(self, role: Role) -> bool:
        """False when the role's chain is just the local tier, or when the role always carries
        customer data and no rung may receive it (every call would be withheld)."""
        rungs = self.chain(role)
        if Role(role) in ALWAYS_CUSTOMER_DATA:
            rungs = [s for s in rungs if eligible(s, True)]
        return bool(rungs)

    def with_chain(self, role: Role, specs: Sequence[ModelSpec]) -> ModelGateway:
        """A gateway like this one with another chain for `role` (a per-task model override)."""
        chains = {**self._chains, Role(role): list(specs)}
        return ModelGateway(chains, self._build, json_mode=self._json_mode)

    # -- calls ----------------------------------------------------------------------------------
    def structured(self, role: Role, prompt: str, variables: Mapping[str, Any], schema: type[S], *,
                   customer_data: bool | None = None) -> ModelReply[S]:
        """The prompt's answer validated into `schema` (a pydantic model)."""
        from csagent.models.prompts import load_prompt

        messages = load_prompt(prompt).render(**variables)
        return self._walk(Role(role), messages, _decide(role, variables, customer_data),
                          lambda model, spec: self._structured_on(Role(role), model, spec, messages, schema))

    def text(self, role: Role, prompt: str, variables: Mapping[str, Any], *,
             customer_data: bool | None = None) -> ModelReply[str]:
        """The prompt's answer as plain text (never empty)."""
        from csagent.models.prompts import load_prompt

        return self._text(Role(role), load_prompt(prompt).render(**variables),
                          _decide(role, variables, customer_data))

    def complete(self, role: Role, messages: Sequence[BaseMessage], *,
                 customer_data: bool | None = None) -> ModelReply[str]:
        """Plain text for messages the caller assembled from prompt files (Text2Cypher's few-shot
        turns, an image block): same chain, rule, breakers and meter as `text`."""
        listed = list(messages)
        # Messages the caller assembled: the detectors read all of them; the caller can only add
        # that they carry customer data, never that they do not.
        sensitive = bool(customer_data) or carries_customer_data(Role(role), _prompt_text(listed))
        return self._text(Role(role), listed, sensitive)

    def _text(self, role: Role, messages: list[BaseMessage], sensitive: bool) -> ModelReply[str]:
        return self._walk(role, messages, sensitive,
                          lambda model, spec: self._text_on(role, model, spec, messages))

    # -- the chain ------------------------------------------------------------------------------
    def _walk(self, role: Role, messages: list[BaseMessage], sensitive: bool,
              attempt: Callable[[Any, ModelSpec], _Attempt]) -> ModelReply[Any]:
        """Try the role's rungs in order; `sensitive`: the prompt carries customer data."""
        steps: list[str] = []
        withheld = 0
        try:
            for spec in self.chain(role):
                name = str(spec)
                if not eligible(spec, sensitive):
                    withheld += 1
                    steps.append(f"{name}: withheld, customer data")
                    continue
                breaker = breakers().get(model_breaker_name(name))
                if not breaker.allow():
                    steps.append(f"{name}: circuit open")
                    record_degradation(name, "circuit_open")
                    continue
                try:
                    done = attempt(self._model(spec, role), spec)
                except ModelBudgetExhausted:
                    steps.append(f"{name}: over the turn's call budget")
                    raise
                except ModelOutputInvalid as exc:
                    breaker.record_success()  # the endpoint answered; the answer was unusable
                    steps.append(f"{name}: invalid output")
                    record_degradation(name, "invalid_output")
                    logger.info("model %s for %s: invalid output after a retry (%s)", name, role, exc)
                    continue
                except Exception as exc:  # noqa: BLE001 - typed below, the next rung answers
                    error = classify_failure(exc)
                    breaker.record_failure()
                    steps.append(f"{name}: {type(error).__name__}")
                    record_degradation(name, "error")
                    logger.warning("model %s for %s failed: %s", name, role, error)
                    continue
                breaker.record_success()
                steps.append(f"{name}: answered" + (" after a retry" if done.retried else ""))
                return ModelReply(done.value, name, steps, done.input_tokens, done.output_tokens)
        finally:
            usage = current_usage()
            if usage is not None and steps:
                usage.add_steps(role.value, steps)
        if withheld and withheld == len(self.chain(role)):
            raise DataRoutingRefused(f"{role}: the prompt carries customer data and no model of the "
                                     "chain may receive it", steps)
        raise ModelUnavailable(f"{role}: " + ("; ".join(steps) or "no model configured"), steps)

    def _model(self, spec: ModelSpec, role: Role) -> Any:
        key = (str(spec), role)
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._build(spec, role)
                if model is None:
                    raise ModelEndpointError(f"{spec} built no model")
                self._models[key] = model
            return model

    def _invoke(self, role: Role, spec: ModelSpec, runnable: Any, messages: list[BaseMessage]) -> Any:
        """One metered call: refused over the turn's budget; tokens and cost recorded."""
        usage = current_usage()
        if usage is not None and not usage.reserve_call(role.value):
            raise ModelBudgetExhausted(f"{role}: the turn's model-call budget ({usage.cap}) is spent")
        answer = runnable.invoke(messages)
        raw = answer.get("raw") if isinstance(answer, dict) else answer
        if usage is not None:
            usage.record_tokens(str(spec), *_usage_of(raw))
        return answer

    def _text_on(self, role: Role, model: Any, spec: ModelSpec, messages: list[BaseMessage]) -> _Attempt:
        answer = self._invoke(role, spec, model, messages)
        text = message_text(answer).strip()
        if not text:
            raise ModelOutputInvalid("the model answered with no text")
        return _Attempt(text, *_usage_of(answer))

    def _structured_on(self, role: Role, model: Any, spec: ModelSpec, messages: list[BaseMessage],
                       schema: type[S]) -> _Attempt:
        """Ask once; on an unusable answer ask again with the error as a hint; then give up."""
        from langchain_core.messages import AIMessage

        from csagent.models.prompts import load_prompt

        total_in = total_out = 0
        conversation = list(messages)
        for number in range(2):
            raw, candidate = self._ask_structured(role, model, spec, conversation, schema)
            tokens = _usage_of(raw)
            total_in, total_out = total_in + tokens[0], total_out + tokens[1]
            try:
                value = parse_structured(schema, candidate)
            except ValueError as exc:
                if number == 1:
                    raise ModelOutputInvalid(str(exc)) from exc
                shown = candidate if isinstance(candidate, str) else json.dumps(candidate, default=str)
                hint = load_prompt("repair").render(
                    error=str(exc), schema=json.dumps(schema.model_json_schema(), separators=(",", ":")))
                conversation = [*messages, AIMessage(shown[:4000]), *hint]
                continue
            return _Attempt(value, total_in, total_out, retried=number == 1)
        raise ModelOutputInvalid("unreachable")  # pragma: no cover

    def _ask_structured(self, role: Role, model: Any, spec: ModelSpec, messages: list[BaseMessage],
                        schema: type[S]) -> tuple[Any, Any]:
        """(raw answer, what to parse): Bedrock by tool calling, OpenAI-compatible by JSON schema."""
        runnable = self._structured_runnable(model, spec, role, schema)
        if spec.provider == "bedrock":
            out = self._invoke(role, spec, runnable, messages)
            raw, parsed = out.get("raw"), out.get("parsed")
            if isinstance(parsed, schema):
                return raw, parsed
            calls = getattr(raw, "tool_calls", None) or []
            return raw, (calls[0].get("args") if calls else message_text(raw))
        raw = self._invoke(role, spec, runnable, messages)
        return raw, message_text(raw)

    def _structured_runnable(self, model: Any, spec: ModelSpec, role: Role, schema: type[S]) -> Any:
        """Bedrock: the model bound to the schema as a forced tool (the answer and the raw message);
        OpenAI-compatible: the model bound to a JSON-schema response format. Built once, reused."""
        key = (str(spec), role, schema)
        with self._lock:
            runnable = self._structured.get(key)
        if runnable is None:
            runnable = model.with_structured_output(schema, include_raw=True) if spec.provider == "bedrock" \
                else model.bind(response_format=response_format(schema, self._json_mode))
            with self._lock:
                self._structured.setdefault(key, runnable)
        return runnable


class RoleChat:
    """A role's chain behind the `invoke(messages)` interface of a chat model, for code written
    against one (the Text2Cypher pipeline): same rule, breakers and meter as the gateway.
    `customer_data` is decided by the caller, who knows which part of the prompt is the
    customer's (Text2Cypher: the question; the schema and examples are the store's catalogue)."""

    def __init__(self, gateway: ModelGateway, role: Role, *, customer_data: bool | None = None) -> None:
        self.gateway = gateway
        self.role = Role(role)
        self.customer_data = customer_data

    def invoke(self, messages: Sequence[BaseMessage], **_: Any) -> Any:
        from langchain_core.messages import AIMessage

        reply = self.gateway.complete(self.role, messages, customer_data=self.customer_data)
        return AIMessage(reply.value, response_metadata={"model": reply.model, "steps": reply.steps})


# -- from the settings ----------------------------------------------------------------------------
def role_chain(settings: ModelConfig, role: Role) -> str:
    """The role's chain: its own setting, else CHAT_MODEL; SECONDARY_CHAT_MODEL is appended
    unless the setting already is a ladder ("a|b"). The image role has no default model (a chat
    model need not read pictures): unset, label photos are read by Tesseract."""
    own = {Role.ROUTER: settings.router_model, Role.PLANNER: settings.planner_model,
           Role.SUMMARISER: settings.summariser_model, Role.TEXT2CYPHER: settings.text2cypher_model,
           Role.IMAGE: settings.image_model}[Role(role)]
    if role == Role.IMAGE:
        return own or "local"
    chain = own or settings.chat_model
    if settings.secondary_chat_model and LADDER_SEPARATOR not in chain:
        chain = f"{chain}{LADDER_SEPARATOR}{settings.secondary_chat_model}"
    return chain


def role_timeout_s(settings: ModelConfig, role: Role) -> float:
    """The role's model timeout: its own setting, else MODEL_TIMEOUT_S (Text2Cypher has none of
    its own: TEXT2CYPHER_TIMEOUT_S bounds its queries)."""
    own = {Role.ROUTER: settings.router_timeout_s, Role.PLANNER: settings.planner_timeout_s,
           Role.SUMMARISER: settings.summariser_timeout_s,
           Role.IMAGE: settings.image_timeout_s}.get(Role(role))
    return float(own or settings.model_timeout_s)


@lru_cache(maxsize=1)
def get_gateway() -> ModelGateway:
    """The process-wide gateway from the settings (cached; `csagent.runtime.reset()` clears it)."""
    from csagent.config import ModelConfig, get_settings
    from csagent.models.ladder import parse_chain
    from csagent.models.providers import build_chat_model

    s = get_settings.of(ModelConfig)
    api_key = s.model_api_key.get_secret_value() if s.model_api_key else None
    guardrail = (s.bedrock_guardrail_id, s.bedrock_guardrail_version or "DRAFT") \
        if s.bedrock_guardrail_id else None

    def build(spec: ModelSpec, role: Role) -> Any:
        return build_chat_model(spec, timeout_s=role_timeout_s(s, role), region=s.aws_region,
                                api_key=api_key, bedrock_endpoint_url=s.bedrock_endpoint_url,
                                guardrail=guardrail)

    chains = {role: parse_chain(role_chain(s, role)) for role in Role}
    return ModelGateway(chains, build, json_mode=s.model_json_mode)
