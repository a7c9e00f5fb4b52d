"""A chat model that answers every prompt with one fixed reply: the Text2Cypher bench gives it
the example bank's own query, so the pipeline's work is timed without any model's time."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ReplayModel(BaseChatModel):
    """Answers `reply` to everything."""

    reply: str

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply))])

    @property
    def _llm_type(self) -> str:
        return "bench-replay"
