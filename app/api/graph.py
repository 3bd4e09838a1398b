"""`POST /api/graph`: the trace of a program, with a box for every node."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from app.graph import build_graph, build_graph_in_worker, request_key
from app.responses import JSONBytes
from app.schemas import ErrorResponse, GraphRequest, GraphResponse
from app.settings import Settings
from app.state import Server

router = APIRouter(tags=["graph"])

ERRORS = {
    400: {"model": ErrorResponse, "description": "The program is not valid (with its position)."},
    413: {"model": ErrorResponse, "description": "The request body is over the limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed."},
}


@router.post("/api/graph", response_model=GraphResponse, responses=ERRORS)
async def graph(request: GraphRequest, settings: Settings, server: Server) -> JSONBytes:
    """Trace `source` forward and backward and lay its graph out (leaves left, root right)."""
    key = request_key(request, settings)
    body = server.responses.get(key)
    layout_cached = body is not None
    if body is None:
        # CPU work off the event loop: a thread for small programs, a process for big ones.
        if len(request.source) >= settings.offload_min_source_chars:
            pool = server.offload_pool()
            job = asyncio.get_running_loop().run_in_executor(
                pool, build_graph_in_worker, request, settings
            )
            body, layout_cached = await job
        else:
            body, layout_cached = await run_in_threadpool(
                build_graph, request, settings, server.layouter
            )
        server.responses.put(key, body)
    return JSONBytes(body.render(layout_cached))
