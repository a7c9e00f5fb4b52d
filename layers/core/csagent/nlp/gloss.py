"""Chinese words read through English: the parts of the local tier that match English words
(option values, the store's knowledge base) read a Chinese message through a word gloss.

Two word lists in `data/zh_gloss.json`, both data, not code, matched as substrings, longest first:

- `words`: option values and the few function words the option grounding reads (the pivot of a
  wish, negation, "unchanged", "if ... then"). `gloss` applies them: "换成白色" -> " to  white ".
- `store_words`: the store's vocabulary (warranty, shipping fee, refund, return window ...).
  `english_query` applies them with the catalogue's Chinese product names
  (`grounding/data/product_synonyms.json`) and `words`, so a Chinese question searches the
  English knowledge base by its content words: "耳机保修多久？" -> "headphones warranty how long".

Text without Chinese is returned as it is.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from csagent.nlp.script import has_ideographs

_Glossary = tuple[re.Pattern[str], dict[str, str]]


def _glossary(words: dict[str, str]) -> _Glossary:
    """The words as one alternation, longest first, with what each reads as."""
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))), words


def _data(package: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files(package).joinpath("data", name).read_text("utf-8"))
    return data


@lru_cache(maxsize=1)
def _option_glossary() -> _Glossary:
    return _glossary(_data("csagent.nlp", "zh_gloss.json")["words"])


@lru_cache(maxsize=1)
def _query_glossary() -> _Glossary:
    lists = _data("csagent.nlp", "zh_gloss.json")
    products = _data("csagent.grounding", "product_synonyms.json")["zh"]
    names = {zh: name for name, words in products.items() for zh in words}
    return _glossary({**lists["words"], **lists["store_words"], **names})


def _substitute(text: str, glossary: _Glossary) -> str:
    pattern, words = glossary
    return pattern.sub(lambda m: f" {words[m.group(0)].strip()} ", text)


def gloss(text: str) -> str:
    """Chinese option and function words replaced by their English words."""
    return _substitute(text, _option_glossary()) if has_ideographs(text) else text


def english_query(text: str) -> str:
    """A Chinese question as the English words it holds (products, store words, option words) and
    the Latin words it quoted; the question as it is when it has no Chinese or no known word."""
    if not has_ideographs(text):
        return text
    glossed = _substitute(text, _query_glossary())
    english = " ".join(re.findall(r"[A-Za-z0-9$.%-]+", glossed))
    return english or text
