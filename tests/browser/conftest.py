"""Playwright fixtures for the browser tests: one Chromium per session, a fresh page per test (in
one context, whose HTTP cache serves the static files to every page)."""

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


VIEWPORT = {"width": 1280, "height": 720}


@pytest.fixture(scope="session")
def shared_context(browser, live_server) -> Iterator:
    """The browser context of every `page`: its HTTP cache keeps the page's static files (served
    under a versioned URL, immutable), so a page after the first fetches 4 of its ~90 files
    instead of all of them (2 s less a page load on a loaded machine). What a test may leave in
    it (pages, local storage, permissions) is cleared after each test (`forget`)."""
    context = browser.new_context(viewport=VIEWPORT, base_url=live_server)
    context.keeper = keep_renderer(context)
    yield context
    context.close()


def keep_renderer(context):
    """A page of the server's origin left open in `context` for the whole session: with it, each
    test's new page of that origin reuses its renderer process and the modules it has compiled,
    where the last page's close would end the process and the next page start another (a page
    load about 1.2 s of CPU instead of 2.6, measured with Chromium's and the server's CPU
    included). It runs no script of the app: /healthz is JSON."""
    keeper = context.new_page()
    keeper.goto("/healthz")
    return keeper


def forget(context) -> None:
    """Leave `context` as a new one is, but for its cache and its keeper: no other page, no
    permission, no item in local storage (the theme a test chose). The keeper, of the same origin,
    clears the storage once the test's pages are closed (Playwright's storage_state() would open a
    page of its own for each origin, a second a test)."""
    for open_page in context.pages:
        if open_page is not context.keeper:
            open_page.close()
    context.keeper.evaluate("() => localStorage.clear()")
    context.clear_permissions()
    context.clear_cookies()


@pytest.fixture
def page(shared_context, live_server) -> Iterator:
    """A new page at 1280×720; fails the test on any uncaught page error or dialog."""
    page = shared_context.new_page()
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
    forget(shared_context)
    assert errors == [], f"uncaught errors in the page: {errors}"


@pytest.fixture
def page_at(shared_context) -> Iterator:
    """`page_at(width, height)`: a new page of the shared context at that size (a new context
    a size would fetch the page's files and start a renderer again: about 1.2 s a page). Its
    uncaught errors are in `.errors`, and fail the test after it; the context is then forgotten
    (`forget`)."""
    pages = []

    def make(width: int, height: int, timeout: float = 10_000):
        page = shared_context.new_page()
        page.set_viewport_size({"width": width, "height": height})
        page.set_default_timeout(timeout)
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        pages.append(page)
        return page

    yield make
    errors = [error for page in pages for error in page.errors]
    forget(shared_context)
    assert errors == [], f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="session")
def app_page(browser, live_server) -> Iterator:
    """The app's page, loaded once a session (in a context of its own), for tests that only call
    its modules (the script writers) and leave it as it was: no page load a case. Its uncaught
    errors are in `app_page.errors`."""
    context = browser.new_context(viewport=VIEWPORT, base_url=live_server)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto("/")
    page.wait_for_selector("svg[data-testid=graph][data-ready=true]")
    yield page
    context.close()


@pytest.fixture
def modules_page(app_page) -> Iterator:
    """`app_page` for a test that only calls the page's modules (and the API from it): no page
    load of its own. An uncaught error in the page during the test fails it, as `page`'s do."""
    before = len(app_page.errors)
    yield app_page
    assert app_page.errors[before:] == [], f"uncaught errors in the page: {app_page.errors}"


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
