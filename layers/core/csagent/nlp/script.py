"""Which writing system a text uses, for the parts that read Chinese differently (substring
lexicons instead of words)."""

from __future__ import annotations

import re

#: Chinese ideographs (CJK unified, extension A and compatibility ideographs).
CJK_IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def has_ideographs(text: str) -> bool:
    """True when the text holds at least one Chinese ideograph."""
    return bool(CJK_IDEOGRAPH.search(text))
