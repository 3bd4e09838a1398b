"""Pure ASGI middleware: security headers and Cache-Control on every response, the body limit."""

from __future__ import annotations

import logging

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chainrule.app.api.language import lang_of
from chainrule.app.http.errors import ASKED_METHOD, error_body
from chainrule.app.http.responses import JSONBytes
from chainrule.engine.i18n import Count, msg, render, text

logger = logging.getLogger("chainrule")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)
# The sandbox's worker (static/js/sandbox/worker.js) runs a learner's Python in Pyodide: its
# response, and only its, carries this policy, which is the sandbox's wall (docs/sandbox.md). A
# dedicated worker from a same-origin URL is governed by the policy of its own response (its
# static imports are fetched with it, under the page's), so once it runs: no request to any URL
# (`default-src 'none'`: fetch, XHR, WebSocket, EventSource, fonts, import(), nested workers),
# WebAssembly compiled ('wasm-unsafe-eval', never 'unsafe-eval'), and an opaque origin
# (`sandbox`: no IndexedDB, CacheStorage or other storage of the app's origin). The page keeps
# the policy above and hands the worker the bytes of the files it needs.
SANDBOX_WORKER_SUFFIX = "/js/sandbox/worker.js"
SANDBOX_WORKER_POLICY = (
    "default-src 'none'; script-src 'wasm-unsafe-eval'; sandbox allow-scripts; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
OTHER_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
SECURITY_HEADERS = [(b"content-security-policy", CONTENT_SECURITY_POLICY.encode()), *OTHER_HEADERS]
SANDBOX_WORKER_HEADERS = [
    (b"content-security-policy", SANDBOX_WORKER_POLICY.encode()),
    *OTHER_HEADERS,
]


def route_path(scope: Scope) -> str:
    """The path the app routes on: behind `uvicorn --root-path /chainrule` a request for
    `/chainrule/api/graph` has that whole `scope["path"]` and `root_path` "/chainrule"; this is
    "/api/graph". Every path rule of the middleware matches this, never `scope["path"]`."""
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    rest = path[len(root_path) :]
    if root_path and path.startswith(root_path) and rest[:1] in ("", "/"):
        return rest or "/"
    return path


class SecurityHeaders:
    """Adds the CSP (no inline script or style), nosniff, no-referrer and no framing; the
    sandbox's worker script gets its own CSP (WebAssembly allowed), every other response the
    page's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        path = route_path(scope)
        worker = path.startswith("/static/") and path.endswith(SANDBOX_WORKER_SUFFIX)
        headers = SANDBOX_WORKER_HEADERS if worker else SECURITY_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class CacheControl:
    """A `Cache-Control` on every response that sets none: API answers are never stored
    (`no-store`); the page, the docs and unversioned static files are revalidated on every use
    (`no-cache`), so a deploy shows at once. Versioned static files set their own (a year)."""

    def __init__(self, app: ASGIApp, no_store_prefixes: tuple[str, ...] = ("/api/", "/healthz")):
        self.app = app
        self.no_store_prefixes = no_store_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = route_path(scope).startswith(self.no_store_prefixes)
        policy = b"no-store" if api else b"no-cache"

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if not any(name.lower() == b"cache-control" for name, _ in headers):
                    message["headers"] = [*headers, (b"cache-control", policy)]
            await send(message)

        await self.app(scope, receive, send_with_policy)


class VaryOnLanguage:
    """`Vary: Accept-Language` on the API's JSON replies: their words are in the language that
    header asks for (when no `lang` is given), so a cache must not give one reader's reply to
    another. (Exported drawings are not JSON and have no words to translate.)"""

    def __init__(self, app: ASGIApp, prefix: str = "/api/") -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not route_path(scope).startswith(self.prefix):
            await self.app(scope, receive, send)
            return

        async def send_with_vary(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                json = any(
                    name.lower() == b"content-type" and value.startswith(b"application/json")
                    for name, value in headers
                )
                if json:
                    message["headers"] = [*headers, (b"vary", b"Accept-Language")]
            await send(message)

        await self.app(scope, receive, send_with_vary)


def too_large_message(size: int | None, limit: int) -> str:
    """The 413's message, a Message said in the request's language where it is answered."""
    if size is None:
        return msg("api.body_too_large_unknown", limit=Count(limit))
    return msg("api.body_too_large", size=Count(size), limit=Count(limit))


# A client still sending when the server closes the connection gets a reset, not our 413: read
# and discard bodies up to this many times the limit first (nginx's "lingering close"); bigger
# ones are cut off at once.
DRAIN_MAX_FACTOR = 8


async def discard_body(receive: Receive) -> None:
    """Read the request body to its end, keeping none of it."""
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return


class BodyLimit:
    """413 before parsing: a declared Content-Length over the limit is refused without parsing
    (the body is read and discarded up to DRAIN_MAX_FACTOR × the limit, so the client sees the
    413); a body that turns out longer (chunked, or a lying header) fails as it streams in."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            if int(declared) <= DRAIN_MAX_FACTOR * limit:
                await discard_body(receive)
            message = render(too_large_message(int(declared), limit), lang_of(scope))
            body = error_body("BodyTooLarge", message)
            await JSONBytes(body, status_code=413, headers={"connection": "close"})(
                scope, receive, send
            )
            return
        received = 0

        async def receive_with_limit() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # FastAPI re-raises HTTPException from body reading; our handler shapes it.
                    raise HTTPException(413, too_large_message(None, limit))
            return message

        await self.app(scope, receive_with_limit, send)


class HeadAsGet:
    """`HEAD` on any path answers as `GET` would, without the body (monitors and load balancers
    probe with HEAD; FastAPI's GET routes alone would answer 405)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        as_get = {**scope, "method": "GET", ASKED_METHOD: "HEAD"}
        await self.app(as_get, receive, send_headers_only)


class UnexpectedErrors:
    """A bug becomes a 500 in the error shape, logged here, never a traceback to the client.

    (Starlette's own handler for `Exception` sits outside every middleware, so its responses
    would miss the security headers.)
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracking)
        except Exception:
            logger.exception("unexpected error on %s %s", scope["method"], scope["path"])
            if started:
                raise
            body = error_body("InternalError", text(lang_of(scope), "api.internal_error"))
            await JSONBytes(body, status_code=500)(scope, receive, send)
