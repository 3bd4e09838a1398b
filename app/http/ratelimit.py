"""A per-client rate limit on the API, as pure ASGI middleware (no dependency, no shared state).

Each worker process keeps its own sliding-window log per client address, so with `--workers N`
a client may get up to N times the limit: the limit is a guard against one runaway script or a
stuck key, not an accounting system. Behind a reverse proxy, run uvicorn with
`--proxy-headers --forwarded-allow-ips=<proxy ip>` so the client address is the real client's.
`/healthz`, the page and static files are never limited.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from chainrule.app.api.language import lang_of
from chainrule.app.http.errors import error_body
from chainrule.app.http.middleware import route_path
from chainrule.app.http.responses import JSONBytes
from chainrule.engine.i18n import text

# Clients remembered at once; beyond this the least recently seen is forgotten, so memory stays
# bounded whatever the number of addresses (a forgotten client simply starts a fresh window).
MAX_TRACKED_CLIENTS = 10_000


class SlidingWindowLimiter:
    """At most `limit` hits per client in any `window_s` seconds."""

    def __init__(
        self,
        limit: int,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_TRACKED_CLIENTS,
    ) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_clients = max_clients
        self._hits: OrderedDict[str, deque[float]] = OrderedDict()

    def hit(self, client: str) -> float:
        """Record one request; return 0 if allowed, else the seconds until the next is allowed."""
        now = self.clock()
        hits = self._hits.get(client)
        if hits is None:
            hits = self._hits[client] = deque()
            if len(self._hits) > self.max_clients:
                self._hits.popitem(last=False)
        else:
            self._hits.move_to_end(client)
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        if len(hits) >= self.limit:
            return hits[0] + self.window_s - now
        hits.append(now)
        return 0.0


class RateLimitMiddleware:
    """Answer 429 in the API's error shape, with `Retry-After`, once a client exceeds the limit."""

    def __init__(
        self,
        app: ASGIApp,
        per_minute: int,
        path_prefix: str = "/api/",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.path_prefix = path_prefix
        self.limiter = SlidingWindowLimiter(per_minute, 60.0, clock) if per_minute > 0 else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.limiter is None
            or scope["type"] != "http"
            or not route_path(scope).startswith(self.path_prefix)
        ):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait_s = self.limiter.hit(client[0] if client else "unknown")
        if wait_s <= 0:
            await self.app(scope, receive, send)
            return
        retry_after = max(1, math.ceil(wait_s))
        message = text(
            lang_of(scope), "api.rate_limited", limit=self.limiter.limit, seconds=retry_after
        )
        response = JSONBytes(
            error_body("RateLimited", message),
            status_code=429,
            headers={"Retry-After": str(retry_after)},
        )
        await response(scope, receive, send)
