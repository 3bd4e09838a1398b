"""`POST /api/values`: only the numbers of new leaf values for a graph the client already has."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule.app.api.graph_body import numbers_body, structure_id
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import ValuesRequest, ValuesResponse, error_responses
from chainrule.app.http.errors import ApiError, JSONBodyRoute
from chainrule.app.http.responses import JSONBytes
from chainrule.app.http.server_state import Server
from chainrule.app.http.settings_dependency import Settings
from chainrule.engine.i18n import msg

router = APIRouter(tags=["graph"], route_class=JSONBodyRoute)

STALE = msg("api.stale_structure")


@router.post(
    "/api/values",
    response_model=ValuesResponse,
    responses=error_responses(400, 409, 413, 422, 429, 503),
)
async def values(
    request: ValuesRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """The numbers of the trace of `source` with `values`, as flat arrays in the order of the
    `/api/graph` reply whose `structure` is sent (docs/api.md): data, grads, local grads, every
    contribution, gradcheck, warnings. No layout, no steps, no narration: a slider's cost. The
    structure id is the same in every language; the warnings are in this request's."""
    lang = language.choose(request.lang)
    if request.structure != structure_id(request, settings):
        raise ApiError(409, "StaleStructure", STALE)
    size = len(request.source)
    min_chars = settings.offload_min_source_chars
    body = await server.offload.by_size(size, min_chars, numbers_body, request, settings, lang)
    return JSONBytes(body)
