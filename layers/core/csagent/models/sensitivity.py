"""The data-routing rule, in one place: a prompt carrying customer data (orders, addresses,
payments, e-mails, tracking numbers, customer ids) goes only to the self-hosted OpenAI-compatible
endpoint or the local tier, never to Bedrock or a public hosted API.

Two questions, two functions:

- `carries_customer_data(role, rendered_prompt)`: does this prompt carry customer data? Yes for
  the roles that always do (`roles.ALWAYS_CUSTOMER_DATA`), otherwise when a detector finds an
  order id, an e-mail, a street address, a zip code after a city, a card or payment-method id,
  a customer id or a tracking number in the rendered text. The detectors err on the side of
  "yes": a false positive only keeps a prompt on the self-hosted endpoint or the local tier.
- `eligible(spec, customer_data)`: may this model receive the prompt? The model side of the
  rule is `ModelSpec.may_receive_sensitive_data` (self-hosted endpoint or local tier).

`csagent.models.gateway.ModelGateway` asks both before every call; the settings refuse at start-up
a role that always carries customer data and is configured with no model allowed to see it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from csagent.models.providers import ModelSpec
from csagent.models.roles import ALWAYS_CUSTOMER_DATA, Role

# ASCII classes on purpose (Python's \w matches CJK: "订单#W2611340" must still be found).
_ZIP_AFTER_CITY = re.compile(r"[A-Za-z][A-Za-z .'’-]{1,40},\s*(?:[A-Za-z]{2}\s+)?\d{5}(?:-\d{4})?(?!\d)")
_PAYMENT_ID = re.compile(r"(?<![A-Za-z0-9])(?:credit_card|debit_card|gift_card|paypal|bank_account|card)"
                         r"_\d{4,}(?![0-9])", re.IGNORECASE)
_CARD_NUMBER = re.compile(r"(?<![0-9])\d{4}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![0-9])")
_CARD_ENDING = re.compile(r"\b(?:ending|ends)\s+(?:in|with)\s+\d{4}\b", re.IGNORECASE)
#: Customer ids as the stores write them: "noah_brown_6181" (tau-retail), "cust_1a2b".
_CUSTOMER_ID = re.compile(r"(?<![A-Za-z0-9_])(?:[a-z]+_[a-z]+_\d{4}|cust(?:omer)?_[A-Za-z0-9]{2,})"
                          r"(?![A-Za-z0-9_])")


@lru_cache(maxsize=1)
def _street_line() -> re.Pattern[str]:
    """A street line ("986 Sunset Drive", "12 Main St."): house number, up to four words, a suffix."""
    from csagent.nlp.entities.words import terms

    suffixes = "|".join(sorted((re.escape(s) for s in terms()["street_suffixes"]), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])\d{{1,6}}[A-Za-z]?(?:\s+[A-Za-z0-9.'’-]+){{1,4}}?\s+(?:{suffixes})"
                      r"\.?(?![A-Za-z])", re.IGNORECASE)


def _detectors() -> Iterable[tuple[str, re.Pattern[str]]]:
    from csagent.nlp.entities.identifiers import EMAIL_RE, ORDER_ID_RE, TRACKING_RE

    yield "order id", ORDER_ID_RE
    yield "email", EMAIL_RE
    yield "tracking number", TRACKING_RE
    yield "street address", _street_line()
    yield "zip code", _ZIP_AFTER_CITY
    yield "payment method", _PAYMENT_ID
    yield "card number", _CARD_NUMBER
    yield "card number", _CARD_ENDING
    yield "customer id", _CUSTOMER_ID


def customer_data_found(text: str) -> list[str]:
    """The kinds of customer data found in `text` ("order id", "email", …), in detector order."""
    return [kind for kind, pattern in _detectors() if pattern.search(text or "")]


def carries_customer_data(role: Role, rendered_prompt: str) -> bool:
    """True when the prompt may only go to the self-hosted endpoint or the local tier."""
    return Role(role) in ALWAYS_CUSTOMER_DATA or bool(customer_data_found(rendered_prompt))


def eligible(spec: ModelSpec, customer_data: bool) -> bool:
    """May `spec` receive a prompt? Always without customer data; with it, only the local tier
    and a self-hosted OpenAI-compatible endpoint (never Bedrock, never a public hosted API)."""
    return not customer_data or spec.may_receive_sensitive_data
