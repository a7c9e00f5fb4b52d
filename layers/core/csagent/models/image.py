"""Reading a label photo or a screenshot with the IMAGE role: a multimodal model on the
self-hosted endpoint (`IMAGE_MODEL=openai/<model>@<base_url>`), Tesseract below it.

A shipping label carries the customer's name and street address, so the IMAGE role always
carries customer data (`roles.ALWAYS_CUSTOMER_DATA`): Bedrock is never asked (the settings refuse
`IMAGE_MODEL=bedrock/…` and `IMAGE_READER=bedrock` at start-up, and the gateway withholds the
prompt from any Bedrock rung). The prompt is `prompts/image.v1.md`; the picture travels as an
OpenAI `image_url` data-URL block, which vLLM's and llama.cpp's multimodal servers accept.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from csagent.domain.errors import ImageUnreadable
from csagent.models.errors import ModelUnavailable
from csagent.models.roles import Role

if TYPE_CHECKING:  # pragma: no cover - typing only
    from langchain_core.messages import BaseMessage

    from csagent.models.gateway import ModelGateway
    from csagent.ports import ImageReader

FORMATS = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
PROMPT = "image"


def image_messages(image: bytes, media_type: str) -> list[BaseMessage]:
    """The image prompt with the picture attached to its user message."""
    from langchain_core.messages import HumanMessage

    from csagent.models.prompts import load_prompt

    *system, ask = load_prompt(PROMPT).render(media_type=media_type)
    data_url = f"data:{media_type};base64,{base64.b64encode(image).decode()}"
    content: list[str | dict[str, object]] = [{"type": "text", "text": str(ask.content)},
                                              {"type": "image_url", "image_url": {"url": data_url}}]
    return [*system, HumanMessage(content=content)]


class ModelImageReader:
    """`ImageReader` through the IMAGE role; `fallback` (Tesseract) reads when no model can."""

    def __init__(self, gateway: ModelGateway, fallback: ImageReader | None = None) -> None:
        self._gateway = gateway
        self._fallback = fallback

    def read_text(self, image: bytes, media_type: str) -> str:
        if media_type not in FORMATS:
            raise ImageUnreadable(f"unsupported image type {media_type}")
        if self._gateway.has_model(Role.IMAGE):
            try:
                return self._gateway.complete(Role.IMAGE, image_messages(image, media_type),
                                              customer_data=True).value
            except ModelUnavailable:
                pass  # the local tier reads it
        if self._fallback is None:
            raise ImageUnreadable("no image model answered and no OCR engine is configured")
        return self._fallback.read_text(image, media_type)
