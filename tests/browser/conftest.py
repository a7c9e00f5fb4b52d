"""Browser fixtures: the pages and the API served by `devstack.web` (as `make serve` does) in a
uvicorn process over the local stack (tau-retail in Neo4j, moto), driven by Debian's chromium
through Playwright for Python. Playwright's own browser downloads are never used: the browser is
the system's /usr/bin/chromium (`make setup` installs it), launched headless, without the
sandbox (the tests run as root) and without a GPU.

Every test leaves full-page screenshots in reports/browser/ (gitignored): the artefacts a
reviewer opens to see what the customer and the agent saw."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "reports" / "browser"
CHROMIUM = os.environ.get("PLAYWRIGHT_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 60_000  # a turn of a fresh server process loads the models first


@pytest.fixture(scope="module")
def web_base(tau_store: Any, moto_endpoint: str) -> Iterator[str]:
    """The chat, the console and the API on one loopback origin (devstack.web under uvicorn, as the
    bench serves it: `devstack.bench.concurrency.serve`), stopped after the module."""
    from devstack.bench.concurrency import serve

    with serve(0, ROOT / ".local" / "browser-serve.log",
               env={"STAGE": "local", "POWERTOOLS_TRACE_DISABLED": "1"}) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one module. Never longer: Playwright's sync API keeps an asyncio loop running
    on the main thread while it is started, and the tests after these (Mangum's handler, say)
    need to run loops of their own there."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no chromium at {CHROMIUM}: `make setup` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield launched
        launched.close()


class Shots:
    """Numbered screenshots of one test: reports/browser/<test>-<n>-<what>.png."""

    def __init__(self, test: str) -> None:
        self.prefix = re.sub(r"[^a-z0-9]+", "-", test.lower()).strip("-")
        self.count = 0
        SHOTS.mkdir(parents=True, exist_ok=True)
        for old in SHOTS.glob(f"{self.prefix}-*.png"):
            old.unlink()

    def __call__(self, page: Any, what: str) -> Path:
        self.count += 1
        path = SHOTS / f"{self.prefix}-{self.count:02d}-{what}.png"
        page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Shots:
    return Shots(request.node.name)


@pytest.fixture
def context_options() -> dict[str, Any]:
    """More options of the pages' browser contexts (a module overrides this fixture)."""
    return {}


def _page(browser: Any, base: str, width: int, height: int, options: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(base_url=base, viewport={"width": width, "height": height}, **options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Console errors other than the browser's own line for an HTTP error status (a 404 for a new
    # conversation, the 401 a test provokes: the page handles those and the tests check how).
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" and not msg.text.startswith("Failed to load resource") else None)
    page.js_errors = errors  # read by the tests: a page that threw or logged an error fails
    yield page
    context.close()


@pytest.fixture
def customer_page(browser: Any, web_base: str, context_options: dict[str, Any]) -> Iterator[Any]:
    """The customer's page at phone width (390 × 844, an everyday phone)."""
    yield from _page(browser, web_base, 390, 844, context_options)


@pytest.fixture
def agent_page(browser: Any, web_base: str, context_options: dict[str, Any]) -> Iterator[Any]:
    """The agent's console at desktop width, in a browser context of its own (its own storage)."""
    yield from _page(browser, web_base, 1280, 900, context_options)
