"""PII masking for logs: generated e-mails, card numbers, phones and street addresses never survive;
order ids and tracking numbers always do (support needs them to trace a turn)."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csagent.guardrails.pii import (
    PiiMaskingFilter,
    install_pii_filter,
    luhn_valid,
    mask_pii,
    pii_json_serializer,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

order_ids = st.from_regex(r"#W[0-9]{7}", fullmatch=True)
tracking_numbers = st.from_regex(r"[1-9][0-9]{11}", fullmatch=True)
words = st.sampled_from(["customer", "asked", "about", "order", "refund", "status", "and", "then"])


def luhn_complete(body: str) -> str:
    """`body` plus the check digit that makes it Luhn-valid."""
    return next(body + d for d in "0123456789" if luhn_valid(body + d))


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    length = draw(st.integers(13, 19))
    body = draw(st.from_regex(rf"[3-6][0-9]{{{length - 2}}}", fullmatch=True))
    digits = luhn_complete(body)
    separator = draw(st.sampled_from(["", " ", "-"]))
    if not separator:
        return digits
    return separator.join(digits[i:i + 4] for i in range(0, len(digits), 4))


@st.composite
def phone_numbers(draw: st.DrawFn) -> str:
    area, exchange, line = (draw(st.from_regex(p, fullmatch=True))
                            for p in (r"[2-9][0-9]{2}", r"[2-9][0-9]{2}", r"[0-9]{4}"))
    fmt = draw(st.sampled_from([
        "({a}) {e}-{l}", "({a}){e}-{l}", "{a}-{e}-{l}", "{a}.{e}.{l}", "{a} {e} {l}", "+1 {a} {e} {l}",
        "+1-{a}-{e}-{l}", "1-{a}-{e}-{l}", "+1 ({a}) {e}-{l}", "+44 20 {e}{l0} {l}", "call me on {a}{e}{l}",
        "mobile: {a}{e}{l}",
    ]))
    return fmt.format(a=area, e=exchange, l=line, l0=line[0])


@st.composite
def street_addresses(draw: st.DrawFn) -> str:
    number = draw(st.integers(1, 99999))
    names = st.sampled_from(["River", "Sunset", "Oak", "Main", "Lake View", "Elm", "Hill"])
    name = " ".join(draw(st.lists(names, min_size=1, max_size=2)))
    suffix = draw(st.sampled_from(["Road", "Rd", "Street", "St", "Avenue", "Ave", "Drive", "Lane",
                                   "Boulevard", "Court", "Way", "Place", "Terrace"]))
    unit = draw(st.sampled_from(["", ", Suite 991", " Apt 4B", ", Unit 12"]))
    return f"{number} {name} {suffix}{unit}"


def in_a_log_line(draw_value: str, order_id: str, word: str) -> str:
    return f"turn 3 {word}: {draw_value} for {order_id}."


# -- properties ------------------------------------------------------------------------------
@SETTINGS
@given(email=st.emails(), order_id=order_ids, word=words)
def test_a_generated_email_never_survives_masking(email: str, order_id: str, word: str) -> None:
    # Given a log line with an e-mail and an order id
    line = in_a_log_line(email, order_id, word)
    # When it is masked
    masked = mask_pii(line)
    # Then the e-mail is gone and the order id is still there
    assert email not in masked and "[EMAIL]" in masked
    assert order_id in masked


@SETTINGS
@given(card=card_numbers(), order_id=order_ids, word=words)
def test_a_generated_card_number_never_survives_masking(card: str, order_id: str, word: str) -> None:
    # Given a log line with a Luhn-valid card number (plain, spaced or dashed) and an order id
    line = in_a_log_line(card, order_id, word)
    # When it is masked
    masked = mask_pii(line)
    # Then the card is gone and the order id is still there
    assert card not in masked and "[CARD]" in masked
    assert order_id in masked


@SETTINGS
@given(phone=phone_numbers(), order_id=order_ids)
def test_a_generated_phone_number_never_survives_masking(phone: str, order_id: str) -> None:
    # Given a log line with a phone number written the way people write them
    line = f"customer wrote: {phone}, about {order_id}"
    # When it is masked
    masked = mask_pii(line)
    # Then the digits of the number are gone and the order id is still there
    digits = "".join(ch for ch in phone.split(":")[-1] if ch.isdigit())
    remaining_digits = "".join(ch for ch in masked.replace(order_id, "") if ch.isdigit())
    assert digits[-7:] not in remaining_digits
    assert "[PHONE]" in masked and order_id in masked


@SETTINGS
@given(address=street_addresses(), order_id=order_ids)
def test_a_generated_street_address_never_survives_masking(address: str, order_id: str) -> None:
    # Given a log line with a street address
    line = f"change address of {order_id} to {address}, Denver CO 80279"
    # When it is masked
    masked = mask_pii(line)
    # Then the street address is gone and the order id is still there
    assert address not in masked and "[ADDRESS]" in masked
    assert order_id in masked


@SETTINGS
@given(order_id=order_ids, tracking=tracking_numbers, email=st.emails())
def test_order_ids_and_tracking_numbers_are_never_masked(order_id: str, tracking: str, email: str) -> None:
    # Given a log line with an order id, a tracking number and an e-mail next to each other
    line = f"{order_id} tracking {tracking} owner {email}"
    # When it is masked
    masked = mask_pii(line)
    # Then the identifiers support needs are untouched
    assert order_id in masked and tracking in masked


@SETTINGS
@given(body=st.from_regex(r"[3-6][0-9]{14}", fullmatch=True))
def test_a_sixteen_digit_number_failing_luhn_is_left_alone(body: str) -> None:
    # Given a 16-digit number whose check digit is wrong
    valid = luhn_complete(body)
    wrong = body + str((int(valid[-1]) + 1) % 10)
    # When it is masked
    # Then it is not treated as a card
    assert mask_pii(f"ref {wrong}") == f"ref {wrong}"


# -- examples --------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "item 6469567736 of product 8310926033",           # 10-digit ids are not phones here
    "delivered 2024-03-02T10:00:00Z, total 536.65",     # dates and amounts
    "order #W2611340 ships with tracking 357962501027",
])
def test_ids_dates_and_amounts_pass_unchanged(text: str) -> None:
    # Given a log line with no personal data
    # When it is masked
    # Then it is unchanged
    assert mask_pii(text) == text


def test_logging_filter_masks_message_args_extra_fields_and_exceptions() -> None:
    # Given a logger whose handler has the masking filter
    records: list[logging.LogRecord] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("test_pii.capture")
    logger.propagate = False
    handler = Capture()
    logger.addHandler(handler)
    install_pii_filter(logger)
    try:
        # When a message with PII in its args, an extra field and an exception is logged
        try:
            raise ValueError("bad email noah.brown7922@example.com")
        except ValueError:
            logger.exception("lookup for %s failed", "noah.brown7922@example.com",
                             extra={"address": "215 River Road, Suite 991"})
    finally:
        logger.removeHandler(handler)
    # Then none of it reaches the handler unmasked
    record = records[0]
    assert record.getMessage() == "lookup for [EMAIL] failed"
    assert record.address == "[ADDRESS]"  # type: ignore[attr-defined]
    assert "noah.brown" not in (record.exc_text or "") and "[EMAIL]" in (record.exc_text or "")


def test_filter_keeps_structured_messages_structured() -> None:
    # Given a Powertools-style dict message
    message = {"email": "a@b.co", "order": "#W1234567"}
    record = logging.LogRecord("x", logging.INFO, __file__, 1, message, None, None)
    # When the filter runs
    PiiMaskingFilter().filter(record)
    # Then it is still a dict, masked
    assert record.msg == {"email": "[EMAIL]", "order": "#W1234567"}


def test_powertools_serializer_masks_every_nested_string() -> None:
    # Given a structured log record as Powertools builds it
    log = {"level": "INFO", "message": "card 4111 1111 1111 1111",
           "extra": {"emails": ["a@b.co"], "turn": 3}, "exception": "ValueError: call (212) 555-0147"}
    # When it is serialised
    out = json.loads(pii_json_serializer(log))
    # Then every string is masked and other values are kept
    assert out == {"level": "INFO", "message": "card [CARD]", "extra": {"emails": ["[EMAIL]"], "turn": 3},
                   "exception": "ValueError: call [PHONE]"}


def test_powertools_logger_accepts_the_serializer(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a Powertools Logger built with the masking serializer
    from aws_lambda_powertools import Logger

    logger = Logger(service="test-pii", json_serializer=pii_json_serializer)
    # When it logs personal data
    logger.info("customer noah.brown7922@example.com asked about #W2611340")
    # Then the line it writes is masked
    line = capsys.readouterr().out
    assert "noah.brown7922" not in line and "[EMAIL]" in line and "#W2611340" in line
