"""Fake chat models for the model layer's unit tests (no network): a `BaseChatModel` that answers
from a script or a function, records every call, and reports token usage like a real client.

A reply is an `AIMessage`, a `str` (the answer's text), a `dict` (the arguments of a tool call to
the first bound tool: what Bedrock's tool calling returns), or an exception to raise."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from csagent.models.gateway import ModelGateway
from csagent.models.providers import ModelSpec, parse_model_spec
from csagent.models.roles import Role

USAGE = {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150}
BEDROCK = "bedrock/anthropic.claude-3-haiku-20240307-v1:0"
VLLM = "openai/qwen2.5-7b@http://vllm.internal:8000/v1"


class ScriptedChat(BaseChatModel):
    """Answers `replies` in order (or `responder(messages, kwargs)`); `calls` keeps (messages, kwargs)."""

    replies: list[Any] = Field(default_factory=list)
    responder: Any = None
    calls: list[tuple[list[BaseMessage], dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls.append((list(messages), dict(kwargs)))
        if self.responder is not None:
            reply = self.responder(messages, kwargs)
        elif self.replies:
            reply = self.replies.pop(0)
        else:
            raise AssertionError("the scripted model was called more often than scripted")
        if isinstance(reply, BaseException):
            raise reply
        return ChatResult(generations=[ChatGeneration(message=_message(reply, kwargs))])

    def prompts(self) -> list[str]:
        """The text of every call, one string per call."""
        return ["\n".join(str(m.content) for m in messages) for messages, _ in self.calls]


def _message(reply: Any, kwargs: Mapping[str, Any]) -> AIMessage:
    if isinstance(reply, AIMessage):
        return reply
    if isinstance(reply, dict):
        tools = kwargs.get("tools") or [{"function": {"name": "answer"}}]
        name = tools[0]["function"]["name"]
        return AIMessage(content="", tool_calls=[{"name": name, "args": reply, "id": "call-1"}],
                         usage_metadata=USAGE)  # type: ignore[arg-type]
    return AIMessage(content=str(reply), usage_metadata=USAGE)  # type: ignore[arg-type]


def gateway_of(chains: Mapping[Role, Sequence[str]] | Sequence[str], models: Mapping[str, BaseChatModel],
               **options: Any) -> ModelGateway:
    """A gateway over fake models: `chains` per role (or one chain for every role) of spec strings."""
    if not isinstance(chains, Mapping):
        chains = {role: list(chains) for role in Role}
    parsed = {role: [parse_model_spec(s) for s in specs] for role, specs in chains.items()}

    def build(spec: ModelSpec, role: Role) -> BaseChatModel:
        return models[str(spec)]

    return ModelGateway(parsed, build, **options)


def by_prompt(answers: Mapping[str, Callable[[list[BaseMessage]], Any]]) -> Callable[..., Any]:
    """A responder choosing the answer by a phrase of the system prompt (one fake for every role)."""
    def respond(messages: list[BaseMessage], kwargs: Mapping[str, Any]) -> Any:
        system = str(messages[0].content)
        for phrase, answer in answers.items():
            if phrase in system:
                return answer(messages)
        raise AssertionError(f"no scripted answer for the prompt: {system[:80]!r}")
    return respond
