"""Mask personal data in log lines: e-mails, phone numbers, card numbers, street addresses.

Use it three ways:

- `mask_pii(text)` on any string;
- `PiiMaskingFilter`, a `logging.Filter` for stdlib handlers (`install_pii_filter()` puts it
  on every handler of a logger; a filter on a handler also sees records from child loggers);
- `pii_json_serializer`, for the Powertools Logger: `Logger(json_serializer=pii_json_serializer)`
  masks every string in the structured record (message, extra keys, exception text).

What is masked, and what is deliberately not:

- e-mails → `[EMAIL]`.
- card numbers → `[CARD]`: 13-19 digit runs (spaces or dashes allowed between digits) that pass
  the Luhn check. A run that fails Luhn is left alone (it is some other number).
- phone numbers → `[PHONE]`: written the way people write phones ("(212) 555-0147",
  "212-555-0147", "+44 20 7946 0958"), or any 10-11 digit run right after a phone word
  ("phone", "call me on", "mobile" ...). A bare 10-digit run on its own is NOT masked: in this
  store that is a product or item id, which logs need.
- street addresses → `[ADDRESS]`: a house number, up to four words and a street suffix from
  `csagent.nlp`'s `entity_terms.json`, with an optional unit ("Suite 259").
- order ids (#W1234567) and tracking numbers (12 digits) are NOT masked: they are not personal
  data on their own, and support cannot trace a turn without them.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

EMAIL_TOKEN, CARD_TOKEN, PHONE_TOKEN, ADDRESS_TOKEN = "[EMAIL]", "[CARD]", "[PHONE]", "[ADDRESS]"

EMAIL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+")
# A candidate digit run: 13+ digits with at most one space or dash between any two of them.
_DIGIT_RUN = re.compile(r"(?<![\w#])\d(?:[ -]?\d){12,}(?![\w])")
_PHONE_PATTERNS = (
    # +CC then 2-5 groups: "+44 20 7946 0958", "+1 (212) 555-0147", "+33 1 23 45 67 89"
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w])"),
    # North American: "(212) 555-0147", "212-555-0147", "212.555.0147", "1-212-555-0147"
    re.compile(r"(?<![\w])(?:1[ .-])?(?:\(\d{3}\)\s?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w])"),
)
# A bare 10-11 digit run right after a phone word: "call me on 2125550147", "mobile: 2125550147"
_PHONE_AFTER_WORD = re.compile(r"(?i)(\b(?:phone|tel|telephone|mobile|cell|call me (?:on|at)|"
                               r"text me (?:on|at)|whatsapp|sms)(?: (?:number|no\.?|is))?\W{1,3})"
                               r"\+?\d{10,11}(?!\d)")
_STANDARD_RECORD_KEYS = (frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__)
                         | {"message", "asctime"})


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _mask_cards_in_run(run: str, token: str, on_card: Callable[[str], None] | None) -> str:
    """Mask the longest Luhn-valid 13-19 digit stretch(es) of whole groups inside one digit run.

    A run may glue a card to a neighbouring number ("4111 1111 1111 1111 2"), so every stretch
    of whole groups is tried, longest first."""
    parts = re.split(r"([ -])", run)
    groups, seps = parts[0::2], parts[1::2]
    n = len(groups)
    spans = sorted(((i, j) for i in range(n) for j in range(i + 1, n + 1)), key=lambda s: s[0] - s[1])
    masked = [False] * n
    for i, j in spans:
        if any(masked[i:j]):
            continue
        digits = "".join(groups[i:j])
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            masked[i:j] = [True] * (j - i)
            if on_card is not None:
                on_card(digits)
            groups[i] = token
            for k in range(i + 1, j):
                groups[k] = ""
    out = groups[0]
    for k in range(1, n):
        joined = masked[k] and masked[k - 1] and groups[k] == ""
        out += ("" if joined else seps[k - 1]) + groups[k]
    return out


def mask_cards(text: str, token: str = CARD_TOKEN, on_card: Callable[[str], None] | None = None) -> str:
    """Replace Luhn-valid 13-19 digit card numbers with `token`; `on_card(digits)` sees each one."""
    return _DIGIT_RUN.sub(lambda m: _mask_cards_in_run(m.group(0), token, on_card), text)


def mask_phones(text: str) -> str:
    """Replace formatted phone numbers (and bare runs after a phone word) with `[PHONE]`."""
    for pattern in _PHONE_PATTERNS:
        text = pattern.sub(PHONE_TOKEN, text)
    return _PHONE_AFTER_WORD.sub(lambda m: m.group(1) + PHONE_TOKEN, text)


@lru_cache(maxsize=1)
def _address_pattern() -> re.Pattern[str]:
    """Street addresses, built from the street suffixes and unit words of `entity_terms.json`."""
    terms = json.loads(resources.files("csagent.nlp").joinpath("data", "entity_terms.json")
                       .read_text(encoding="utf-8"))
    suffixes = "|".join(sorted((re.escape(s) for s in terms["street_suffixes"]), key=len, reverse=True))
    units = "|".join(sorted((re.escape(u) for u in terms["unit_designators"] if u != "#"), key=len,
                            reverse=True))
    return re.compile(
        rf"(?i)(?<![\w#])\d{{1,6}}[A-Za-z]?\s+(?:[A-Za-z][\w'.-]*\s+){{0,4}}?(?:{suffixes})\b\.?"
        rf"(?:,?\s*(?:(?:{units})\b\.?|#)\s*#?\s*[\w-]+)?")


def mask_addresses(text: str) -> str:
    """Replace street addresses ("215 River Road, Suite 991") with `[ADDRESS]`."""
    return _address_pattern().sub(ADDRESS_TOKEN, text)


def mask_pii(text: str) -> str:
    """Mask e-mails, cards, phones and street addresses in `text` (order matters: e-mails and
    cards first, so their digits are never mistaken for phones or house numbers)."""
    if not text:
        return text
    text = EMAIL.sub(EMAIL_TOKEN, text)
    text = mask_cards(text)
    text = mask_phones(text)
    return mask_addresses(text)


def mask_value(value: Any) -> Any:
    """`mask_pii` applied to every string inside dicts, lists and tuples (other values unchanged)."""
    if isinstance(value, str):
        return mask_pii(value)
    if isinstance(value, Mapping):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v) for v in value]
    return value


# -- logging ---------------------------------------------------------------------------------
class PiiMaskingFilter(logging.Filter):
    """Masks the message (formatted with its args), exception text and extra fields of each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, Mapping) and not record.args:  # Powertools-style structured message
            record.msg = mask_value(record.msg)
        else:
            try:
                message = record.getMessage()
            except (TypeError, ValueError):  # bad format args: mask what is there
                message = f"{record.msg} {record.args}"
            record.msg, record.args = mask_pii(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_pii(record.exc_text)
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD_RECORD_KEYS and isinstance(value, str | Mapping | list | tuple):
                setattr(record, key, mask_value(value))
        return True


def install_pii_filter(logger: logging.Logger | None = None) -> PiiMaskingFilter:
    """Add one `PiiMaskingFilter` to every handler of `logger` (the root logger by default)."""
    target = logger or logging.getLogger()
    masking = PiiMaskingFilter()
    for handler in target.handlers:
        if not any(isinstance(f, PiiMaskingFilter) for f in handler.filters):
            handler.addFilter(masking)
    return masking


def pii_json_serializer(log: Mapping[str, Any]) -> str:
    """A Powertools `json_serializer`: the structured record with every string masked, as JSON."""
    return json.dumps(mask_value(log), separators=(",", ":"), default=str, ensure_ascii=False)

