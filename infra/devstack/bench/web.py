"""The web pages in a real browser (Debian's chromium through Playwright, headless): page weight
and the customer's time to a first message.

- page weight: the bytes of the page itself (HTML, scripts, style sheet) as the browser's Resource
  Timing entries report them (`transferSize`, headers included; uncompressed: uvicorn does not
  gzip), and everything it fetched until the network was idle (with config.json, the session,
  and locally the dev sign-in's customer list), and the time to DOMContentLoaded;
- time to first message: from the customer pressing Enter in the chat to the first progress
  label on screen ("We have your message…"), and to the finished answer with its status badge,
  over the streaming endpoint, on a warmed server (its first turn is not counted).
"""

from __future__ import annotations

import os
import time
from typing import Any

from devstack.bench.stats import summarise

CHROMIUM = os.environ.get("PLAYWRIGHT_CHROMIUM", "/usr/bin/chromium")
PAGES = {"chat": "/", "console": "/console.html"}
WEIGHT_JS = r"""() => {
  const entries = [...performance.getEntriesByType('navigation'),
                   ...performance.getEntriesByType('resource')];
  const nav = performance.getEntriesByType('navigation')[0];
  const asset = (e) => e.entryType === 'navigation' || /\.(js|css|html)$/.test(new URL(e.name).pathname);
  const assets = entries.filter(asset);
  const size = (list) => list.reduce((n, e) => n + (e.transferSize || 0), 0);
  return {bytes: size(assets), all_bytes: size(entries), requests: entries.length,
          dom_content_loaded_ms: nav ? nav.domContentLoadedEventEnd : null};
}"""


def bench_web(base_url: str, customer_id: str, texts: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(figures, samples): each page's weight, then one chat turn per text after a warm-up."""
    from playwright.sync_api import sync_playwright

    figures: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            for name, path in PAGES.items():
                context = browser.new_context(viewport={"width": 390, "height": 844})
                page = context.new_page()
                page.goto(base_url + path, wait_until="networkidle")
                weight = page.evaluate(WEIGHT_JS)
                figures[f"{name}_page_bytes"] = int(weight["bytes"])
                figures[f"{name}_all_fetched_bytes"] = int(weight["all_bytes"])
                figures[f"{name}_page_requests"] = int(weight["requests"])
                loaded = float(weight["dom_content_loaded_ms"] or 0)
                figures[f"{name}_dom_content_loaded_ms"] = round(loaded, 1)
                context.close()
            first, answered = _turns(browser, base_url, customer_id, texts)
        finally:
            browser.close()
    for name, samples in (("first_progress", first), ("answer", answered)):
        stats = summarise(samples)
        figures[f"{name}_p50_ms"], figures[f"{name}_p95_ms"] = stats.get("p50_ms"), stats.get("p95_ms")
    figures["turns_measured"] = len(first)
    return figures, {"first_progress_ms": first, "answer_ms": answered}


def _turns(browser: Any, base_url: str, customer_id: str,
           texts: list[str]) -> tuple[list[float], list[float]]:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.set_default_timeout(120_000)
    page = context.new_page()
    page.goto(base_url + "/")
    page.get_by_label("Customer").fill(customer_id)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {customer_id}").wait_for()
    first: list[float] = []
    answered: list[float] = []
    for n, text in enumerate(texts):
        done = page.locator("li.msg.assistant .badge").count()
        box = page.get_by_label("Your message")
        box.fill(text)
        started = time.perf_counter()
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('#progress').textContent.length > 0", polling=5)
        shown = time.perf_counter()
        page.locator("li.msg.assistant .badge").nth(done).wait_for()
        ended = time.perf_counter()
        if n:  # the first turn warms the server (models, connections): not a customer's usual wait
            first.append(round((shown - started) * 1000, 1))
            answered.append(round((ended - started) * 1000, 1))
    context.close()
    return first, answered
