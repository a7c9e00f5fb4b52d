"""Entities with a rigid shape: order ids (`#W` + 7 digits), 12-digit tracking numbers, e-mail
addresses and US zip codes; their patterns are shared with the clause splitter and the
data-routing rule."""

from __future__ import annotations

import re
from collections.abc import Iterable

# ASCII classes on purpose: Python's \w matches CJK, and "订单#W2611340" must still parse.
ORDER_ID_RE = re.compile(r"(?<![A-Za-z0-9])#?[Ww](\d{7})(?![A-Za-z0-9])")
TRACKING_RE = re.compile(r"(?<![A-Za-z0-9#])(\d{12})(?![0-9])")
EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24})(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
ZIP_RE = re.compile(r"(?<![0-9A-Za-z$.,#-])(\d{5}(?:-\d{4})?)(?!\d|-\d|\.\d|,\d)")


def unique(items: Iterable[str]) -> list[str]:
    """The items in order of first appearance, without duplicates."""
    return list(dict.fromkeys(items))


def normalise_order_id(raw: str) -> str | None:
    """"#W1234567", "W1234567" or "w1234567" → "#W1234567"; anything else → None."""
    m = re.fullmatch(r"\s*#?[Ww](\d{7})\s*", raw)
    return f"#W{m.group(1)}" if m else None


def find_order_ids(text: str) -> list[str]:
    """Order ids in order of appearance, normalised to "#W" + 7 digits, without duplicates."""
    return unique(f"#W{m.group(1)}" for m in ORDER_ID_RE.finditer(text))


def find_tracking_numbers(text: str) -> list[str]:
    """12-digit tracking numbers that are not part of a longer number or an order id."""
    return unique(m.group(1) for m in TRACKING_RE.finditer(text))


def find_emails(text: str) -> list[str]:
    """E-mail addresses, lower-cased."""
    return unique(m.group(1).lower() for m in EMAIL_RE.finditer(text))


def find_zip_codes(text: str) -> list[str]:
    """US zip codes (5 digits or ZIP+4) that are not part of a longer number."""
    return unique(m.group(1) for m in ZIP_RE.finditer(text))
