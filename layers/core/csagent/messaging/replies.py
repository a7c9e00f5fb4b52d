"""The messaging worker's own wording, loaded by name from `replies_en.json` beside this module."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

_DIR = Path(__file__).resolve().parent


class Replies:
    """Reply templates keyed by name; `text(name, **fields)` fills them with `str.format`."""

    def __init__(self, templates: Mapping[str, str]) -> None:
        self._templates = dict(templates)

    def text(self, name: str, **fields: Any) -> str:
        return self._templates[name].format(**fields)


@lru_cache(maxsize=4)
def load_replies(lang: str = "en") -> Replies:
    document = json.loads((_DIR / f"replies_{lang}.json").read_text(encoding="utf-8"))
    return Replies({key: value for key, value in document.items() if not key.startswith("_")})
