"""The output guard: the last look at a reply before the customer sees it.

Two checks:

1. **No other customer's data.** Every order id, e-mail, tracking number, card number, card
   "last four" and customer id in the reply must be one the turn may show: the authenticated
   customer's own (`customer_id` plus what the caller passes) or one the turn's tool results
   contain (`collect_identifiers(results)`; those tools only ever read data bound to the
   customer). Anything else is a leak: it is withheld from the text and reported. A full card
   number is withheld even when it is the customer's own (a reply never needs one).
2. **No internal errors.** A line with a traceback, a Neo4j status code, an exception class name
   or a source path is replaced, once, by the "temporarily unavailable" reply template.

Why identifiers and not free judgement: a model can be talked into anything, a set membership
test cannot. The guard is cheap (regexes over a reply of a few hundred characters).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from csagent.guardrails.pii import EMAIL, mask_cards

WITHHELD = "[withheld]"

ORDER_ID = re.compile(r"(?<![\w])#?W\d{7}(?!\d)", re.IGNORECASE)
TRACKING = re.compile(r"(?<![\w#])\d{12}(?![\w])")
CUSTOMER_ID = re.compile(r"(?<![\w])[a-z]+_[a-z]+_\d{4}(?![\w])")
LAST_FOUR = re.compile(r"(?i)(?:ending(?:\s+in|\s+with)?|last\s+(?:4|four)(?:\s+digits)?(?:\s+(?:is|are))?:?"
                       r"|[*•x]{2,}[\s-]?)\s*(\d{4})(?!\d)")

INTERNAL_ERROR_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r"^\s*File \"[^\"]+\", line \d+", re.MULTILINE),
    re.compile(r"\bNeo\.(?:ClientError|TransientError|DatabaseError)\.[\w.]+"),
    re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b"),
    re.compile(r"\b(?:ServiceUnavailable|SessionExpired|ConditionalCheckFailed\w*|GraphRecursion\w*|"
               r"ResourceNotFound\w*|ThrottlingException|ProvisionedThroughputExceeded\w*)\b"),
    re.compile(r"(?:/var/task|/opt/python|site-packages|\.venv)/\S+\.py"),
    re.compile(r"\bAn error occurred \(\w+\) when calling the \w+ operation"),
    re.compile(r"\b(?:bolt|neo4j)(?:\+s|\+ssc)?://\S+"),
)


@dataclass(frozen=True)
class Leak:
    """An identifier the reply may not show: its kind and a masked form for logs."""

    kind: str
    masked: str


@dataclass(frozen=True)
class OutputCheck:
    """The reply as it may be sent, and what was changed in it."""

    text: str
    leaks: tuple[Leak, ...] = ()
    internal_errors_replaced: int = 0

    @property
    def clean(self) -> bool:
        """True when the reply went out unchanged."""
        return not self.leaks and not self.internal_errors_replaced


def normalise(kind: str, value: str) -> str:
    """The comparable form of an identifier: '#' + upper case for order ids, lower case for e-mails,
    digits only for tracking and card numbers."""
    if kind == "order_id":
        return "#" + value.lstrip("#").upper()
    if kind == "email":
        return value.lower()
    if kind in ("tracking_number", "card_number", "card_last_four"):
        return re.sub(r"\D", "", value)
    return value


def _mask(value: str) -> str:
    return value[:2] + "…" + value[-2:] if len(value) > 6 else "…"


def identifiers_in(text: str) -> set[str]:
    """Every identifier in `text`, normalised (used to build the allowed set)."""
    found = {normalise("order_id", m.group(0)) for m in ORDER_ID.finditer(text)}
    found |= {normalise("email", m.group(0)) for m in EMAIL.finditer(text)}
    found |= {m.group(0) for m in TRACKING.finditer(text)}
    found |= {m.group(0) for m in CUSTOMER_ID.finditer(text)}
    found |= {m.group(1) for m in LAST_FOUR.finditer(text)}
    return found


def collect_identifiers(value: Any) -> set[str]:
    """Identifiers inside tool results (nested dicts and lists), normalised.

    Every string leaf is scanned; leaves under `last_four` (4 digits, invisible to the
    patterns) are taken as they are.
    """
    found: set[str] = set()
    stack: list[tuple[str | None, Any]] = [(None, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((str(k), v) for k, v in item.items())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((key, v) for v in item)
        elif isinstance(item, str | int) and not isinstance(item, bool):
            text = str(item)
            if key == "last_four":
                found.add(re.sub(r"\D", "", text))
            found |= identifiers_in(text)
    return found


def _redact(text: str, allowed: set[str], customer_id: str | None) -> tuple[str, list[Leak]]:
    leaks: list[Leak] = []

    def check(kind: str, pattern: re.Pattern[str], group: int = 0) -> None:
        nonlocal text

        def replace(m: re.Match[str]) -> str:
            value = m.group(group)
            ok = normalise(kind, value) in allowed or (kind == "customer_id" and value == customer_id)
            if ok:
                return m.group(0)
            leaks.append(Leak(kind, _mask(value)))
            return m.group(0).replace(value, WITHHELD)

        text = pattern.sub(replace, text)

    text = mask_cards(text, WITHHELD, lambda digits: leaks.append(Leak("card_number", "…" + digits[-4:])))
    check("email", EMAIL)
    check("order_id", ORDER_ID)
    check("tracking_number", TRACKING)
    check("customer_id", CUSTOMER_ID)
    check("card_last_four", LAST_FOUR, group=1)
    return text, leaks


def _replace_internal_errors(text: str, safe_sentence: str) -> tuple[str, int]:
    """Replace each line that shows an internal error; consecutive ones collapse into one sentence."""
    out: list[str] = []
    replaced = 0
    for line in text.split("\n"):
        if any(p.search(line) for p in INTERNAL_ERROR_PATTERNS):
            replaced += 1
            if not out or out[-1] != safe_sentence:
                out.append(safe_sentence)
            continue
        if out and out[-1] == safe_sentence and line.startswith((" ", "\t")):  # traceback continuation
            continue
        out.append(line)
    return "\n".join(out), replaced


def guard_output(reply: str, *, customer_id: str | None, allowed: Iterable[str] = (),
                 lang: str = "en", safe_sentence: str | None = None) -> OutputCheck:
    """Check a reply: withhold identifiers the turn may not show, replace internal error text.

    `allowed` holds the customer's own identifiers and those of the turn's tool results
    (`collect_identifiers`); they are normalised here, so raw values are fine.
    """
    allowed_set = {normalise(_kind_of(v), v) for v in allowed if v}
    if customer_id:
        allowed_set.add(customer_id)
    sentence = safe_sentence or _safe_sentence(lang)
    text, replaced = _replace_internal_errors(reply, sentence)
    text, leaks = _redact(text, allowed_set, customer_id)
    return OutputCheck(text=text, leaks=tuple(leaks), internal_errors_replaced=replaced)


def _kind_of(value: str) -> str:
    """Guess the kind of a raw allowed value so it is normalised like the matches it must equal."""
    if ORDER_ID.fullmatch(value.strip()):
        return "order_id"
    if "@" in value:
        return "email"
    if re.fullmatch(r"[\d\s-]+", value):
        return "tracking_number"
    return "other"


def _safe_sentence(lang: str) -> str:
    from csagent.nlp.replies import render

    return render("temporarily_unavailable", lang)
