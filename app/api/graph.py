"""`POST /api/graph`: the trace of a program, with a box for every node."""

from __future__ import annotations

import asyncio
from concurrent.futures.process import BrokenProcessPool

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from app.errors import ApiError
from app.graph import GraphBody, build_graph, build_graph_in_worker, request_key
from app.responses import JSONBytes
from app.schemas import ErrorResponse, GraphRequest, GraphResponse
from app.settings import AppSettings, Settings
from app.state import Server, ServerState

router = APIRouter(tags=["graph"])

ERRORS = {
    400: {"model": ErrorResponse, "description": "The program is not valid (with its position)."},
    413: {"model": ErrorResponse, "description": "The request body is over the limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed."},
}


async def build_graph_offloaded(
    request: GraphRequest, settings: AppSettings, server: ServerState
) -> tuple[GraphBody, bool]:
    """`build_graph` in the offload pool; if its process has died (killed, out of memory), once
    more in a fresh pool, then a 503: never a pool left broken for every later request."""
    for _attempt in range(2):
        pool = server.offload_pool()
        try:
            return await asyncio.get_running_loop().run_in_executor(
                pool, build_graph_in_worker, request, settings
            )
        except BrokenProcessPool:
            server.discard_pool(pool)
    raise ApiError(503, "Unavailable", "the process tracing this program stopped; try again")


@router.post("/api/graph", response_model=GraphResponse, responses=ERRORS)
async def graph(request: GraphRequest, settings: Settings, server: Server) -> JSONBytes:
    """Trace `source` forward and backward and lay its graph out (leaves left, root right)."""
    key = request_key(request, settings)
    body = server.responses.get(key)
    layout_cached = body is not None
    if body is None:
        # CPU work off the event loop: a thread for small programs, a process for big ones.
        if len(request.source) >= settings.offload_min_source_chars:
            body, layout_cached = await build_graph_offloaded(request, settings, server)
        else:
            body, layout_cached = await run_in_threadpool(
                build_graph, request, settings, server.layouter
            )
        server.responses.put(key, body)
    return JSONBytes(body.render(layout_cached))
