"""Which writing system a text uses, for the parts that read Chinese differently (substring
lexicons instead of words)."""

from __future__ import annotations

import re

#: Chinese ideographs (CJK unified, extension A and compatibility ideographs).
CJK_IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def has_ideographs(text: str) -> bool:
    """True when the text holds at least one Chinese ideograph."""
    return bool(CJK_IDEOGRAPH.search(text))


_IDEOGRAPH_THEN_LATIN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])(?=[A-Za-z0-9#$])")
# A lone capital glued to ideographs is part of a Chinese word ("T恤" is a T-shirt, "U盘" a USB stick):
# it is not a Latin word, so it keeps its ideograph.
_LATIN_THEN_IDEOGRAPH = re.compile(
    r"(?:(?<=[A-Za-z0-9][A-Za-z0-9])|(?<=[a-z0-9]))"
    r"(?=[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


def spaced(text: str) -> str:
    """A space wherever Chinese meets a Latin word or a number ("改成PayPal" -> "改成 PayPal",
    "用visa付" -> "用 visa 付"), so the word boundaries of every English pattern hold in mixed text:
    an ideograph is a word character to `\\b`."""
    if not has_ideographs(text):
        return text
    return _LATIN_THEN_IDEOGRAPH.sub(" ", _IDEOGRAPH_THEN_LATIN.sub(r"\1 ", text))


def has_question_mark(text: str) -> bool:
    """True when the text holds a question mark, the ASCII one or the full-width one Chinese is
    written with ("智能手表可以戴着游泳吗？")."""
    return "?" in text or "？" in text


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


def sentences(text: str) -> list[str]:
    """The text cut after each full stop, exclamation or question mark, the ASCII ones or the
    full-width ones Chinese is written with (a piece may be empty)."""
    return _SENTENCE_END.split(text)
