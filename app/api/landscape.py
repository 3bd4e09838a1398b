"""`POST /api/landscape`: the root over a grid of two leaves' values (the Train lab's contours)."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule import engine
from chainrule.app.api.graph_body import limits_of
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import LandscapeRequest, LandscapeResponse, error_responses
from chainrule.app.http.errors import JSONBodyRoute
from chainrule.app.http.responses import JSONBytes, dumps
from chainrule.app.http.server_state import Server
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.settings import AppSettings

router = APIRouter(tags=["train"], route_class=JSONBodyRoute)


def landscape_body(request: LandscapeRequest, settings: AppSettings) -> bytes:
    grid = engine.landscape(
        request.source,
        request.values,
        parameters=request.parameters,
        x_range=request.x_range,
        y_range=request.y_range,
        points=request.points,
        limits=limits_of(settings),
        max_node_points=settings.landscape_max_node_points,
    )
    return dumps(grid.to_dict())


@router.post(
    "/api/landscape",
    response_model=LandscapeResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def landscape(
    request: LandscapeRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """The root on a `points` × `points` grid of two leaves' values (`x_range` for the first
    parameter, `y_range` for the second, ends included), every other leaf held at `values`:
    one forward pass of the engine per point, for the Train lab's contour plot."""
    language.choose(request.lang)  # the language of an error's message
    size = len(request.source)
    # A long program in a helper process: up to the work bound, about a second.
    return JSONBytes(
        await server.offload.by_size(
            size, settings.offload_min_source_chars, landscape_body, request, settings
        )
    )
