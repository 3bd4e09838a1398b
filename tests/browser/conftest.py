"""Playwright fixtures for the browser tests: one Chromium per session, a fresh page per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (make test-deps installs it)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def launch_browser(browser) -> Iterator:
    """`launch(*extra_args)`: another Chromium like `browser`, with more launch arguments
    (`--disable-webgl`, …); every one launched is closed after the test."""
    launched = []

    def launch(*extra_args: str):
        launched.append(
            browser.browser_type.launch(
                executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args]
            )
        )
        return launched[-1]

    yield launch
    for other in launched:
        other.close()


@pytest.fixture
def page(browser, live_server) -> Iterator:
    """A new page at 1280×720; fails the test on any uncaught page error or dialog."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=live_server)
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def on_dialog(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.errors = errors
    page.dialogs = dialogs
    yield page
    context.close()
    assert errors == [], f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
