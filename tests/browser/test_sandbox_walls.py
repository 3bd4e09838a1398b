"""The sandbox's walls, as Chromium enforces them (docs/sandbox.md): every escape of
tests/sandbox_escapes.py, pasted and from a share link, runs in the page's worker against a
server that logs every request it receives (uvicorn's access log): no request of the sandbox's
arrives, and nothing is stored in the app's origin. A postMessage flood ends the run with a
message and the tab lives. A share link's code waits for the viewer's Run: before the click the
server is asked for none of the sandbox's files and no worker exists.

One page serves the pasted cases, so Python is loaded once (bench/sandbox.py measures a cold
start); the share link's page is in a context of its own, with an empty cache, so the log shows
every file it asks for."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
import sandbox_escapes as escapes
from servers import start_server, stop_server
from test_sandbox import RUN_TIMEOUT_MS, card, run

pytestmark = pytest.mark.browser

# What the sandbox's run loads (the worker and Python's files): none of it before Run.
SANDBOX_FILES = ("sandbox/worker.js", "pyodide.asm.wasm", "python_stdlib.zip", "chainrule.zip")
# Every attempt settles (a refusal, an error event, a reply) well within this; one that has not
# is named in the test's failure rather than hanging it.
SETTLE_MS = 20_000


@pytest.fixture(scope="module")
def logged_server(tmp_path_factory):
    """A server of its own whose access log the tests read: `(base_url, log_path)`."""
    log_path = tmp_path_factory.mktemp("walls") / "access.log"
    with log_path.open("w") as log:
        process, base_url = start_server(log=log)
        yield base_url, log_path
        stop_server(process)


def received(log_path: Path, since: int = 0) -> list[str]:
    """What the server logged after byte `since` of its log: a line a request (and the server's
    own lines, which name no path)."""
    with log_path.open() as log:
        log.seek(since)
        return [line.strip() for line in log]


@pytest.fixture(scope="module")
def walled(browser, logged_server):
    base_url, _ = logged_server
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base_url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.errors, page.posted = [], []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto("/?collapse_at=never")
    page.wait_for_selector("[data-testid=node]")
    yield page
    context.close()
    assert page.errors == []


def sandbox_workers(page) -> list:
    return [worker for worker in page.workers if worker.url.endswith("/js/sandbox/worker.js")]


def settle(page) -> list[str]:
    """What each attempt of the last run became, once all have settled (in the worker)."""
    (worker,) = sandbox_workers(page)
    return worker.evaluate(
        """(ms) => {
          const words = (r) => r.status === 'fulfilled' ? `let through: ${String(r.value)}` : `refused: ${String(r.reason)}`;
          const all = Promise.allSettled(self.escapes).then((rs) => rs.map(words));
          const late = new Promise((resolve) => setTimeout(() => resolve(['not settled']), ms));
          return Promise.race([all, late]);
        }""",
        SETTLE_MS,
    )


def stored(page) -> dict:
    """The app's origin's IndexedDB databases and caches, as the page sees them."""
    return page.evaluate(
        """async () => ({databases: (await indexedDB.databases()).map((d) => d.name),
                         caches: await caches.keys()})"""
    )


def assert_walled(page, log_path: Path, since: int, outcomes: list[str]) -> None:
    assert outcomes and "not settled" not in outcomes, outcomes
    escaped = [line for line in received(log_path, since) if escapes.MARKER in line]
    assert escaped == [], (escaped, outcomes)
    kept = stored(page)
    assert escapes.IDB_NAME not in kept["databases"] and escapes.CACHE_NAME not in kept["caches"]


@pytest.mark.parametrize("case", list(escapes.CASES))
def test_an_escape_pasted_reaches_neither_the_server_nor_storage(walled, logged_server, case):
    _, log_path = logged_server
    since = log_path.stat().st_size
    facts = run(walled, escapes.payload(case))
    assert facts["status"] == "failed", (
        facts
    )  # the payload leaves no Value to draw, or stops on a wall
    assert_walled(walled, log_path, since, settle(walled))
    assert walled.evaluate("() => document.body.isConnected")  # the tab lives


def test_a_share_link_waits_for_run_and_its_escapes_reach_nothing(
    browser, logged_server, screenshots_dir
):
    base_url, log_path = logged_server
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base_url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.errors, page.posted = [], []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    since = log_path.stat().st_size
    code = escapes.every_case()
    page.goto("/?" + urlencode({"source": code}))
    page.wait_for_selector("#sandbox[data-status=waiting] [data-testid=sandbox-run]")
    assert page.input_value("[data-testid=source]") == code
    says = page.text_content("[data-testid=sandbox-status]")
    assert "runs only when you press Run, and then in your browser, not on the server" in says
    # Nothing ran: no worker, and the server was asked for none of the sandbox's files.
    assert sandbox_workers(page) == []
    asked = received(log_path, since)
    assert any('"GET /?source=' in line for line in asked), asked
    assert not [line for line in asked if any(name in line for name in SANDBOX_FILES)], asked
    page.screenshot(path=str(screenshots_dir / "sandbox-link-waits-for-run.png"))
    page.click("[data-testid=sandbox-run]")
    page.wait_for_selector("#sandbox[data-status=failed]", timeout=RUN_TIMEOUT_MS)
    asked = received(log_path, since)
    assert [line for line in asked if "sandbox/worker.js" in line], asked
    assert_walled(page, log_path, since, settle(page))
    context.close()
    assert page.errors == []


def test_a_live_class_on_code_that_must_run_waits_for_each_students_run(browser, logged_server):
    """A class whose view holds code (a teacher's page sends the program its code ran as; a
    hostile one can send code): a student's page runs nothing, no worker, no file of Python."""
    base_url, log_path = logged_server
    code = escapes.payload("fetch")
    created = httpx.post(f"{base_url}/api/class", json={"view": {"source": code}}, timeout=10)
    assert created.status_code == 200, created.text
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base_url)
    student = context.new_page()
    student.set_default_timeout(30_000)
    student.errors, student.posted = [], []
    student.on("pageerror", lambda error: student.errors.append(str(error)))
    since = log_path.stat().st_size
    student.goto(f"/c/{created.json()['code']}")
    # Following, a student's page shows no editor: the run waits, unseen, and nothing runs.
    student.wait_for_selector("[data-testid=class-status][data-state=following]")
    student.wait_for_selector("#sandbox[data-status=waiting]", state="attached")
    assert student.input_value("[data-testid=source]") == code
    assert sandbox_workers(student) == []
    asked = received(log_path, since)
    assert not [line for line in asked if any(name in line for name in SANDBOX_FILES)], asked
    context.close()
    assert student.errors == []


@pytest.mark.parametrize(
    ("flood", "says"),
    [
        ("line_reports", "more than 100 messages in a second"),
        ("long_reports", "a message it does not read"),
    ],
)
def test_a_postmessage_flood_ends_the_run_with_a_message_and_the_tab_lives(walled, flood, says):
    facts = run(walled, escapes.FLOODS[flood])
    assert facts["status"] == "failed"
    assert says in facts["error"], facts
    # The tab lives: the next run starts a new worker and draws its graph.
    code = "def double(x):\n    return 2 * x\nfrom micrograd.engine import Value\nb = double(Value(3.0))\nb\n"
    facts = run(walled, code)
    assert facts["status"] == "done", facts
    assert card(walled, "b")["data"] == 6.0


# Code that tells the page it has run (the worker's own `{type: "ran"}`, which ends the code's
# limit), then never ends; and code that says it once more than the worker does (written for
# these tests: `js` reached through importlib, as the floods above reach it).
FORGED_RAN = (
    "import importlib\njs = importlib.import_module('js')\n"
    "ffi = importlib.import_module('pyodide.ffi')\n"
    "js.postMessage(ffi.to_js({'type': 'ran'}, dict_converter=js.Object.fromEntries))\n"
)


def test_code_that_says_it_has_run_gets_the_reading_s_limit_and_no_more(browser, logged_server):
    """A forged "ran" only trades the code's limit for the reading's (`?sandbox_read_limit=2`
    here; 60 s by default): the run is still stopped, said as reading; a second "ran" (the
    forged one and the worker's own) is a message the page does not read."""
    base_url, _ = logged_server
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base_url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.posted = []  # run() reads it
    page.goto("/?sandbox_read_limit=2")
    page.wait_for_selector("[data-testid=node]")
    facts = run(page, FORGED_RAN + "while True:\n    pass\n")
    assert facts["status"] == "failed"
    assert "reading the graph it made took longer than 2 s" in facts["error"], facts
    facts = run(page, FORGED_RAN + "from micrograd.engine import Value\nb = Value(3.0) * 2\nb\n")
    assert facts["status"] == "failed"
    assert "a message it does not read" in facts["error"], facts
    context.close()
