"""`POST /api/graph`: the trace of a program, with a box for every node."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from chainrule.app.http_errors import ApiError, JSONBodyRoute
from chainrule.app.language import RequestLanguage
from chainrule.app.responses import JSONBytes
from chainrule.app.schemas import GraphRequest, GraphResponse, error_responses
from chainrule.app.server_state import Server, ServerState
from chainrule.app.settings import AppSettings, Settings
from chainrule.app.trace_body import GraphBody, build_body, build_body_in_worker, request_key
from chainrule.engine.i18n import msg

router = APIRouter(tags=["graph"], route_class=JSONBodyRoute)
T = TypeVar("T")


async def offloaded(server: ServerState, work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in the offload pool; if its process has died (killed, out of memory), once
    more in a fresh pool, then a 503: never a pool left broken for every later request."""
    for _attempt in range(2):
        pool = server.offload_pool()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, work, *args)
        except BrokenProcessPool:
            server.discard_pool(pool)
    raise ApiError(503, "Unavailable", msg("api.unavailable"))


async def build_body_offloaded(
    request: GraphRequest, settings: AppSettings, server: ServerState, lang: str
) -> GraphBody:
    """`build_body` in the offload pool (with that process's layout cache)."""
    return await offloaded(server, build_body_in_worker, request, settings, lang)


async def graph_body(
    request: GraphRequest, settings: AppSettings, server: ServerState, lang: str
) -> bytes:
    """The body of `POST /api/graph` for `request` in `lang`, from the response cache, else
    traced and laid out: the page's trace, wherever it is sent."""
    key = request_key(request, settings, lang)
    cached = server.responses.get(key)
    if cached is not None:
        return cached
    # CPU work off the event loop: a thread for small programs, a process for big ones.
    if len(request.source) >= settings.offload_min_source_chars:
        body = await build_body_offloaded(request, settings, server, lang)
    else:
        body = await run_in_threadpool(build_body, request, settings, server.layouter, lang)
    server.responses.put(key, body.later)
    return body.now


@router.post(
    "/api/graph",
    response_model=GraphResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def graph(
    request: GraphRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """Trace `source` forward and backward and lay its graph out (leaves left, root right)."""
    return JSONBytes(await graph_body(request, settings, server, language.choose(request.lang)))
