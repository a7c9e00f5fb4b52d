"""Image reading in AWS with a multimodal Bedrock model (Converse API with an image block).

Only the label's text is sent to the model, with the prompt in `prompts/read_label_v1.md`.
Not exercised by CI (it needs a live Bedrock endpoint); the local tier uses Tesseract.
"""

from __future__ import annotations

import base64
from functools import cache
from importlib import resources
from typing import Any

from csagent.domain.errors import ImageUnreadable

FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp", "image/gif": "gif"}


@cache
def _prompt() -> str:
    return resources.files("csagent.adapters").joinpath("prompts", "read_label_v1.md").read_text()


class BedrockImageReader:
    def __init__(self, model_id: str, region: str, timeout_s: float = 10.0) -> None:
        self._model_id = model_id
        self._region = region
        self._timeout = timeout_s
        self._model: Any = None

    def _chat(self) -> Any:
        if self._model is None:
            from botocore.config import Config
            from langchain_aws import ChatBedrockConverse

            self._model = ChatBedrockConverse(
                model=self._model_id, region_name=self._region, temperature=0,
                config=Config(read_timeout=self._timeout, retries={"max_attempts": 1}))
        return self._model

    def read_text(self, image: bytes, media_type: str) -> str:
        if media_type not in FORMATS:
            raise ImageUnreadable(f"unsupported image type {media_type}")
        from langchain_core.messages import HumanMessage

        message = HumanMessage(content=[
            {"type": "text", "text": _prompt()},
            {"type": "image", "source_type": "base64", "mime_type": media_type,
             "data": base64.b64encode(image).decode()},
        ])
        try:
            reply = self._chat().invoke([message])
        except Exception as exc:  # noqa: BLE001 - any model failure means "could not read"
            raise ImageUnreadable(f"the image model failed ({type(exc).__name__})") from exc
        return str(reply.content if isinstance(reply.content, str) else reply.text())
