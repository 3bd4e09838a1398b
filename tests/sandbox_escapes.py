"""Every known road out of the sandbox, one case per route: Python pasted into the page (or sent
in a share link) that tries to make a request to the app's server or to reach the app's storage.
tests/browser/test_sandbox_walls.py runs each in the page's worker against a server whose access
log it reads: no request whose path holds `/escape/` may arrive, no database or cache named
`escape-…` may appear in the app's origin, whatever Python the case runs.

Each case leaves what its attempts became in the worker's `self.escapes` (a list of promises and
words), so the test waits for every attempt to settle (Playwright evaluates in the worker) before
it reads the log: a request refused by the browser never leaves it, one let through is in the
log once its promise settles.

The routes to `js` (and to `pyodide.http`) are the import hook's gaps (builtins.__import__,
importlib, sys.modules: `js` is there once anything imported it, as the prelude does); the rest
take `js` by importlib and try one door each.
"""

from __future__ import annotations

MARKER = "/escape/"
IDB_NAME = "escape-idb"
CACHE_NAME = "escape-cache"

# What every case starts with: the worker's `self.escapes`, the helpers that fill it, and the
# case's own URL on the server (the worker's location is the app's: /static/…/js/sandbox/worker.js).
PRELUDE = f"""\
import importlib
import sys
ffi = importlib.import_module("pyodide.ffi")
js = importlib.import_module("js")
setattr(js.self, "escapes", js.Array.new())

def url(case):
    return js.URL.new("{MARKER}" + case, js.location.href).href

def attempt(make):
    try:
        js.self.escapes.push(make())
    except Exception as error:  # refused at once: the words are the outcome
        js.self.escapes.push(type(error).__name__ + ": " + str(error)[:200])

def settled(target, *events):
    def executor(resolve, reject):
        for event in events:
            target.addEventListener(event, ffi.create_proxy(lambda e, event=event: resolve(event)))
    return js.Promise.new(ffi.create_proxy(executor))
"""

# The fetch a case makes once it holds `js`: through the prototype, so no name taken away from
# the worker's global would stop it.
FETCH_BY_PROTOTYPE = (
    'attempt(lambda: js_.WorkerGlobalScope.prototype.fetch.call(js_.self, url("{case}")))\n'
)

CASES: dict[str, str] = {
    "builtins_import_js": "import builtins\njs_ = builtins.__import__('js')\n" + FETCH_BY_PROTOTYPE,
    "importlib_js": "js_ = importlib.import_module('js')\n" + FETCH_BY_PROTOTYPE,
    "sys_modules_js": "js_ = sys.modules['js']\n" + FETCH_BY_PROTOTYPE,
    "pyodide_http": (
        "import asyncio\n"
        "http = importlib.import_module('pyodide.http')\n"
        "attempt(lambda: http.open_url(url('pyodide_http-open_url')))\n"
        "attempt(lambda: asyncio.ensure_future(http.pyfetch(url('pyodide_http-pyfetch'))))\n"
    ),
    "fetch": "attempt(lambda: js.fetch(url('fetch')))\n",
    "xmlhttprequest": (
        "def xhr():\n"
        "    request = js.XMLHttpRequest.new()\n"
        "    request.open('GET', url('xmlhttprequest'), False)\n"
        "    request.send()\n"
        "    return request.status\n"
        "attempt(xhr)\n"
    ),
    "websocket": (
        "def socket():\n"
        "    address = url('websocket').replace('http', 'ws', 1)\n"
        "    return settled(js.WebSocket.new(address), 'open', 'error', 'close')\n"
        "attempt(socket)\n"
    ),
    "eventsource": (
        "attempt(lambda: settled(js.EventSource.new(url('eventsource')), 'open', 'error'))\n"
    ),
    "importscripts": (
        "attempt(lambda: js.importScripts(url('importscripts')))\n"
        "by_prototype = js.WorkerGlobalScope.prototype.importScripts\n"
        "attempt(lambda: by_prototype.call(js.self, url('importscripts-prototype')))\n"
    ),
    "caches": (
        "attempt(lambda: js.caches.open('{cache}').then("
        "ffi.create_proxy(lambda cache: cache.add(url('caches')))))\n"
    ).replace("{cache}", CACHE_NAME),
    "fontface": (
        "attempt(lambda: js.FontFace.new('escape', 'url(' + url('fontface') + ')').load())\n"
    ),
    "indexeddb": (
        f"attempt(lambda: settled(js.indexedDB.open('{IDB_NAME}'), 'success', 'error'))\n"
    ),
    "sendbeacon": "attempt(lambda: js.navigator.sendBeacon(url('sendbeacon'), 'x'))\n",
    "nested_worker": (
        "def worker(address):\n"
        "    return settled(js.Worker.new(address), 'error', 'message')\n"
        "attempt(lambda: worker(url('nested_worker')))\n"
        "body = js.Array.new()\n"
        "body.push(\"fetch('\" + url('nested_worker-blob') + \"')\")\n"
        "attempt(lambda: worker(js.URL.createObjectURL(js.Blob.new(body))))\n"
    ),
}


def payload(case: str) -> str:
    """The Python of `case`, whole (the prelude and its attempts)."""
    return PRELUDE + CASES[case].replace("{case}", case)


def every_case() -> str:
    """All the cases in one program (a share link's), each case's attempts after the last's."""
    return PRELUDE + "".join(CASES[case].replace("{case}", case) for case in CASES)


# postMessage floods through `js`, as fast as the worker can post: of messages shaped as the
# worker's own line reports (the page reads them: the rate stops them), and of the same reports a
# megabyte long (a message the page does not read: the first stops them).
FLOODS = {
    "line_reports": (
        "import importlib\njs = importlib.import_module('js')\n"
        "ffi = importlib.import_module('pyodide.ffi')\n"
        "report = ffi.to_js({'type': 'line', 'line': 1}, dict_converter=js.Object.fromEntries)\n"
        "for _ in range(10_000_000):\n    js.postMessage(report)\n"
    ),
    "long_reports": (
        "import importlib\njs = importlib.import_module('js')\n"
        "ffi = importlib.import_module('pyodide.ffi')\n"
        "report = ffi.to_js({'type': 'line', 'line': 1, 'padding': 'x' * 1_000_000},"
        " dict_converter=js.Object.fromEntries)\n"
        "for _ in range(1_000_000):\n    js.postMessage(report)\n"
    ),
}
