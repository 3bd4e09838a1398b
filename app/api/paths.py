"""`POST /api/paths`: every path of the chain rule from one node to the target."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule import engine
from chainrule.app.api.graph_body import limits_of
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.paths_schemas import PathsRequest, PathsResponse
from chainrule.app.api.schemas import error_responses
from chainrule.app.http.errors import JSONBodyRoute
from chainrule.app.http.responses import JSONBytes, dumps
from chainrule.app.http.server_state import Server
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.settings import AppSettings
from chainrule.engine.paths import chain_paths, paths_reply, resolve_leaf

router = APIRouter(tags=["graph"], route_class=JSONBodyRoute)


def paths_body(request: PathsRequest, settings: AppSettings, lang: str) -> bytes:
    options = request.options().trace_kwargs()
    limits = limits_of(settings)
    trace = engine.trace(request.source, request.values, **options, limits=limits, lang=lang)
    found = chain_paths(trace, resolve_leaf(trace, request.leaf), request.limit)
    return dumps(paths_reply(trace, found))


@router.post(
    "/api/paths",
    response_model=PathsResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def paths(
    request: PathsRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """Each path from `leaf` to the target (the root, or `target`) as its chain of local
    derivatives and their product; their sum is grad[leaf]. Paths multiply (2ⁿ through n
    diamonds): they are counted, and the `limit` largest listed, in (edges × limit) time."""
    lang = language.choose(request.lang)
    size = len(request.source)
    return JSONBytes(
        await server.offload.by_size(
            size, settings.offload_min_source_chars, paths_body, request, settings, lang
        )
    )
