"""Is this message an answer to "shall I go ahead?": yes, no, or neither.

Deliberately strict: only a short whole-message answer counts (lexicon in
`data/confirmation.json`), so "yes, and where is my other order?" is not taken as consent for
a consequential write; the assistant asks again instead.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Literal

Answer = Literal["yes", "no"]
_TRIM = re.compile(r"^[\s.!,;:。！，？?]+|[\s.!,;:。！，？?]+$")


@cache
def _lexicon() -> dict[str, frozenset[str]]:
    raw = json.loads(resources.files("csagent.nlp").joinpath("data", "confirmation.json").read_text("utf-8"))
    return {key: frozenset(v.lower() for v in raw[key]) for key in ("yes", "no")}


def classify_confirmation(text: str) -> Answer | None:
    """'yes' / 'no' when the whole message is one of the known answers, else None."""
    normalised = " ".join(_TRIM.sub("", text.lower()).split())
    for answer in ("yes", "no"):
        if normalised in _lexicon()[answer]:
            return answer  # type: ignore[return-value]
    return None
