"""`POST /api/graph`: the trace of a program, with a box for every node."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule.app.api.graph_body import (
    GraphBody,
    build_body,
    build_body_in_worker,
    request_key,
)
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import (
    GraphRequest,
    GraphResponse,
    TensorGraphResponse,
    error_responses,
)
from chainrule.app.http.errors import JSONBodyRoute
from chainrule.app.http.responses import JSONBytes
from chainrule.app.http.server_state import Server, ServerState
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.settings import AppSettings

router = APIRouter(tags=["graph"], route_class=JSONBodyRoute)


async def graph_body(
    request: GraphRequest, settings: AppSettings, server: ServerState, lang: str
) -> bytes:
    """The body of `POST /api/graph` for `request` in `lang`, from the response cache, else
    traced and laid out: the page's trace, wherever it is sent."""
    key = request_key(request, settings, lang)
    cached = server.responses.get(key)
    if cached is not None:
        return cached

    async def work() -> GraphBody:
        # CPU work off the event loop: a thread for short programs, a helper process for long
        # ones (with that process's layout cache).
        size = len(request.source)
        if size >= settings.offload_min_source_chars:
            body = await server.offload.run(size, build_body_in_worker, request, settings, lang)
        else:  # in a thread of this process, a few at once (app/http/offload.py)
            body = await server.offload.in_thread(
                size, build_body, request, settings, server.layouter, lang
            )
        server.responses.put(key, body.later)
        return body

    # The same request while it is worked on (a class's pages asking for the teacher's new
    # program at once) joins that work, and is answered as the cache would answer it.
    body, joined = await server.graph_work.join(key, work)
    return body.later if joined else body.now


@router.post(
    "/api/graph",
    response_model=GraphResponse | TensorGraphResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def graph(
    request: GraphRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """Trace `source` forward and backward and lay its graph out (leaves left, root right)."""
    return JSONBytes(await graph_body(request, settings, server, language.choose(request.lang)))
