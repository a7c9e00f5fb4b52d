"""Where a customer's words name a city: by its name, or by another name customers use for it
("my SF address", "the one going to Philly", "寄到夏洛特的那个"; `data/place_names.json`). Used wherever
a city of the customer's own addresses is looked for (`grounding.model`, `grounding.facts`,
`grounding.frame`); the package's data file is read at first use, once."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from csagent.nlp.script import has_ideographs


@cache
def _data() -> dict[str, Any]:
    return dict(json.loads(resources.files("csagent.grounding").joinpath("data", "place_names.json")
                           .read_text("utf-8")))


@cache
def _other_names() -> dict[str, tuple[str, ...]]:
    return {str(city).lower(): tuple(names) for city, names in _data()["cities"].items()}


@cache
def _pattern(name: str) -> re.Pattern[str]:
    words = r"\s+".join(map(re.escape, name.split()))
    as_written = name in _data()["as_written"]
    return re.compile(r"(?<![\w-])" + words + r"(?![\w-])", 0 if as_written else re.IGNORECASE)


def city_named(text: str, city: str) -> int | None:
    """Where in `text` the city is first named (its name, or another name for it), or None."""
    if not city:
        return None
    found: list[int] = []
    for name in (city, *_other_names().get(city.lower(), ())):
        if has_ideographs(name):
            at = text.find(name)
            if at >= 0:
                found.append(at)
            continue
        match = _pattern(name).search(text)
        if match is not None:
            found.append(match.start())
    return min(found) if found else None
