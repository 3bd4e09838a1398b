"""`POST /api/export`: the graph drawn by Graphviz as SVG, PNG, PDF or DOT."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from chainrule import engine
from chainrule.app.errors import ApiError, JSONBodyRoute
from chainrule.app.export import (
    MEDIA_TYPES,
    NO_GRAPHVIZ,
    ExportFailed,
    ExportFormat,
    ExportTimedOut,
    render,
)
from chainrule.app.language import RequestLanguage
from chainrule.app.schemas import ErrorResponse, GraphRequest
from chainrule.app.settings import AppSettings, Settings
from chainrule.app.state import Server
from chainrule.app.trace_body import limits_of
from chainrule.engine.i18n import Count, msg

router = APIRouter(tags=["export"], route_class=JSONBodyRoute)

ERRORS = {
    400: {"model": ErrorResponse, "description": "Bad program, or a graph too large to draw."},
    413: {"model": ErrorResponse, "description": "The request body is over the limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed (`InvalidRequest`)."},
    429: {"model": ErrorResponse, "description": "Too many requests (`RateLimited`)."},
    503: {"model": ErrorResponse, "description": "Graphviz is not installed or failed."},
}
CONTENT = {"content": {media_type: {} for media_type in MEDIA_TYPES.values()}}


def export_bytes(
    request: GraphRequest, fmt: ExportFormat, settings: AppSettings, dot_binary: str | None
) -> bytes:
    """Build, trace and draw; raises ApiError for graphs over `export_max_nodes` (as soon as
    the graph is built: before the backward pass, gradient check and timeline) or when dot
    fails. Without Graphviz only `dot` can be drawn: the others are refused before any work."""
    if fmt != "dot" and not dot_binary:
        raise ApiError(503, "GraphvizUnavailable", NO_GRAPHVIZ)
    graph = engine.build_graph(
        request.source,
        request.values,
        expand_derived=request.expand_derived,
        limits=limits_of(settings),
    )
    size = len(graph.nodes)
    if size > settings.export_max_nodes:
        raise ApiError(
            400,
            "ExportTooLarge",
            msg("api.export_too_large", size=Count(size), limit=Count(settings.export_max_nodes)),
        )
    trace = engine.Trace(graph, request.mode, request.order).graph_dict()  # no timeline
    try:
        return render(trace, fmt, dot_binary=dot_binary or "", timeout_s=settings.export_timeout_s)
    except ExportTimedOut as error:
        raise ApiError(400, "ExportTooLarge", error.args[0]) from error
    except ExportFailed as error:
        raise ApiError(503, "ExportFailed", error.args[0]) from error


@router.post("/api/export", responses={200: CONTENT, **ERRORS}, response_class=Response)
async def export(
    request: GraphRequest,
    settings: Settings,
    server: Server,
    language: RequestLanguage,
    format: Annotated[ExportFormat, Query(description="svg, png, pdf or dot")] = "svg",
) -> Response:
    """Draw the program's graph in micrograd's `draw_dot` style (label | data | grad); the
    drawing has no words to translate, its errors are said in the request's language."""
    language.choose(request.lang)
    drawing = await run_in_threadpool(export_bytes, request, format, settings, server.dot_binary)
    disposition = f'attachment; filename="chainrule-graph.{format}"'
    return Response(
        drawing, media_type=MEDIA_TYPES[format], headers={"Content-Disposition": disposition}
    )
