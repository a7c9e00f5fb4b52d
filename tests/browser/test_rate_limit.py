"""The customer's page when the server's rate limit refuses a message (429 with Retry-After), in
Debian's chromium against a server of its own whose limit is set low through the app's real
settings (RATE_LIMIT_MAX_MESSAGES, RATE_LIMIT_WINDOW_S: one message per 12-second window)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_pages import say, sign_in, status_of  # the chat's steps, as the other page tests take them

pytestmark = [pytest.mark.integration, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
WINDOW_S = 12
AARAV, AARAV_ORDER = "aarav_anderson_8794", "#W9311069"  # a customer no other test writes as
WARM_UP = "aarav_brown_3744"


@pytest.fixture(scope="module")
def web_base(tau_store: Any, moto_endpoint: str) -> Iterator[str]:
    """The pages and the API as `make serve` runs them, with one message per customer per window;
    one turn first (as another customer), so the models are loaded before the test's clock runs."""
    from devstack.bench.concurrency import serve

    env = {"STAGE": "local", "POWERTOOLS_TRACE_DISABLED": "1",
           "RATE_LIMIT_MAX_MESSAGES": "1", "RATE_LIMIT_WINDOW_S": str(WINDOW_S)}
    with serve(0, ROOT / ".local" / "browser-rate-limit.log", env=env) as base:
        warm = httpx.post(f"{base}/v1/sessions/warm-{int(time.time())}/messages", timeout=120,
                          headers={"Authorization": f"Bearer dev:{WARM_UP}"}, json={"text": "hi"})
        assert warm.status_code in (200, 429), warm.text
        yield base


def test_a_customer_over_the_rate_limit_is_told_how_long_to_wait_keeps_the_text_and_sends_it_after(
        customer_page, shots):
    page = customer_page
    sign_in(page, AARAV)
    refusals: list[Any] = []
    page.on("response", lambda r: refusals.append(r) if ":stream" in r.url and not r.ok else None)

    # Given Aarav's first message of a window is answered (the window just began: both messages
    # below fall in it)
    while time.time() % WINDOW_S > 1.0:
        time.sleep(0.1)
    window = int(time.time() // WINDOW_S)
    first = say(page, f"where is my order {AARAV_ORDER}?")
    assert status_of(first) == "answered"

    # When he sends a second one in the same window
    text = "and what is your return policy?"
    box = page.get_by_label("Your message")
    box.fill(text)
    box.press("Enter")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert int(time.time() // WINDOW_S) == window, "the window ended before the second message (a slow turn)"

    # Then the server refused it with 429 and a wait, and the page tells him that very wait
    [refusal] = refusals
    assert refusal.status == 429
    wait_s = int(refusal.headers["retry-after"])
    assert 1 <= wait_s <= WINDOW_S
    assert alert.inner_text() == (f"You are sending messages faster than we can answer. "
                                  f"Please wait {wait_s} seconds and try again.")
    # And nothing is lost: the text is still in the box and only the first exchange is in the log
    assert box.input_value() == text
    assert page.locator("li.msg").count() == 2
    shots(page, "429-wait")

    # When he waits as long as he was told and sends again (Enter on the kept text)
    page.wait_for_timeout(wait_s * 1000 + 250)
    box.press("Enter")
    reply = page.locator("li.msg.assistant:not([aria-busy])").nth(1)
    reply.locator(".badge").wait_for()

    # Then it is answered and the error is gone
    assert status_of(reply) in ("answered", "partial")
    assert "return" in reply.inner_text().lower()
    assert alert.is_hidden()
    assert box.input_value() == ""
    shots(page, "429-sent-after-the-wait")
    assert page.js_errors == []
