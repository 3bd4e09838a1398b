"""Work ends when its client goes (issue 36): a request to the API whose client disconnects is
cancelled, waiting or running, and a server told to stop (SIGTERM, SIGINT) cancels what it runs
and answers it 503 at once, rather than letting uvicorn wait for it without end.

Uvicorn never tells an app that its client went away unless the app reads the request again:
`CancelOnDisconnect` runs the route in a task of its own and, once the body is read, waits for
the `http.disconnect` message beside it; when it comes before the response, the route's task is
cancelled. The cancellation goes down to the work (app/http/offload.py): out of its lane's queue,
the
trace thread stopped at the engine's next check, the helper process killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chainrule.app.api.language import lang_of
from chainrule.app.http.errors import error_body
from chainrule.app.http.middleware import route_path
from chainrule.app.http.responses import JSONBytes
from chainrule.engine.i18n import text

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RETRY_AFTER_S = 5


class InFlight:
    """The API requests this process is working on, so that a stopping server can cancel
    them: `stop()` cancels every one (each answers 503 `Unavailable`) and any that comes later."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self.stopping = False

    def stop(self) -> None:
        self.stopping = True
        for task in list(self.tasks):
            task.cancel()

    def on_stop_signals(self) -> Callable[[], None]:
        """Call `stop` (in the event loop) on SIGTERM or SIGINT, as well as whatever handled
        them already (uvicorn's own handler, which starts its graceful shutdown). Returns what
        puts the previous handlers back. Only from the main thread (where signals are handled);
        elsewhere (a test's client) it does nothing."""
        loop = asyncio.get_running_loop()
        previous: dict[int, Any] = {}

        def handle(sig: int, frame: FrameType | None) -> None:
            loop.call_soon_threadsafe(self.stop)
            before = previous.get(sig)
            if callable(before):
                before(sig, frame)

        try:
            for sig in STOP_SIGNALS:
                previous[sig] = signal.signal(sig, handle)
        except ValueError:  # not the main thread
            pass

        def restore() -> None:
            for sig, handler in previous.items():
                with contextlib.suppress(ValueError, TypeError):
                    signal.signal(sig, handler)

        return restore


class CancelOnDisconnect:
    """Cancels an API request (`POST /api/…`) whose client disconnects before its response,
    and every one when the server stops (`InFlight.stop`: those answer 503 `Unavailable`
    with Retry-After, the client still being there)."""

    def __init__(self, app: ASGIApp, in_flight: InFlight, prefix: str = "/api/") -> None:
        self.app = app
        self.in_flight = in_flight
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or not route_path(scope).startswith(self.prefix)
        ):
            await self.app(scope, receive, send)
            return
        body_read = asyncio.Event()
        started = answered = False

        async def receive_tracked() -> Message:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_read.set()
            return message

        async def send_tracked(message: Message) -> None:
            nonlocal started, answered
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                answered = True
            await send(message)

        route = asyncio.ensure_future(self.app(scope, receive_tracked, send_tracked))
        self.in_flight.tasks.add(route)  # type: ignore[arg-type]
        if self.in_flight.stopping:
            route.cancel()

        async def watch() -> None:
            """Once the body is read, the next message is the disconnect (uvicorn sends it when
            the client goes, or once the response is complete)."""
            await body_read.wait()
            message = await receive()
            if message["type"] == "http.disconnect" and not answered:
                route.cancel()

        watcher = asyncio.ensure_future(watch())
        try:
            await route
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                raise  # this request's own task was cancelled (uvicorn stopping): pass it on
            if self.in_flight.stopping and not started:  # the client is still there
                message = text(lang_of(scope), "api.stopping", seconds=RETRY_AFTER_S)
                body = error_body("Unavailable", message)
                retry = {"Retry-After": str(RETRY_AFTER_S)}
                await JSONBytes(body, status_code=503, headers=retry)(scope, receive, send)
            # else: the client went away; nobody to answer
        finally:
            self.in_flight.tasks.discard(route)  # type: ignore[arg-type]
            watcher.cancel()
