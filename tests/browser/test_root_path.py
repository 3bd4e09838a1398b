"""The page behind a proxy that serves it under a path prefix (uvicorn --root-path): every asset
and every API call goes through the prefix, so nothing leaves it."""

from __future__ import annotations

import pytest
from servers import start_server, stop_server

PREFIX = "/chainrule"


@pytest.fixture(scope="module")
def prefixed_server():
    process, base_url = start_server(env={"UVICORN_ROOT_PATH": PREFIX})
    yield base_url
    stop_server(process)


def test_the_page_works_behind_a_root_path(browser, prefixed_server):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    outside: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def proxy(route) -> None:
        # The proxy strips the prefix; a request outside it reaches nothing of ours.
        path = route.request.url[len(prefixed_server) :]
        if not path.startswith(PREFIX + "/"):
            outside.append(path)
            route.fulfill(status=404, body="outside the prefix")
            return
        route.fulfill(response=route.fetch(url=prefixed_server + path[len(PREFIX) :]))

    page.route(f"{prefixed_server}/**", proxy)
    try:
        page.goto(f"{prefixed_server}{PREFIX}/?preset=add-mul")
        page.wait_for_selector("[data-testid=node]")
        page.click("[data-testid=step-forward]")
        # A value change posts to the API through the prefix as well. The page paints its own
        # numbers at once: wait for the server's reply (through the proxy) to be compared, or
        # the context would close with it still in the proxy (a teardown error).
        box = page.locator("[data-testid=slider-a] input.slider-value")
        with page.expect_response(f"{prefixed_server}{PREFIX}/api/values") as reply:
            box.fill("4")
            box.press("Enter")
        assert reply.value.ok
        page.wait_for_function("() => document.body.dataset.numbersChecked !== '0'")
        page.click("#to-end")
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=node]')]"
            ".some((n) => n.dataset.label === 'f' && n.dataset.data === '10')"
        )
    finally:
        context.close()
    assert outside == []
    assert errors == []
