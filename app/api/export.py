"""`POST /api/export`: the graph drawn by Graphviz as SVG, PNG, PDF or DOT."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from app.errors import ApiError
from app.export import MEDIA_TYPES, ExportFailed, ExportFormat, ExportTimedOut, render
from app.graph import trace_dict
from app.schemas import ErrorResponse, GraphRequest
from app.settings import AppSettings, Settings
from app.state import Server

router = APIRouter(tags=["export"])

ERRORS = {
    400: {"model": ErrorResponse, "description": "Bad program, or a graph too large to draw."},
    413: {"model": ErrorResponse, "description": "The request body is over the limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed."},
    503: {"model": ErrorResponse, "description": "Graphviz is not installed on the server."},
}
CONTENT = {"content": {media_type: {} for media_type in MEDIA_TYPES.values()}}


def export_bytes(
    request: GraphRequest, fmt: ExportFormat, settings: AppSettings, dot_binary: str | None
) -> bytes:
    """Trace and draw; raises ApiError for graphs over `export_max_nodes` or when dot fails."""
    trace = trace_dict(request, settings)
    size = len(trace["nodes"])
    if size > settings.export_max_nodes:
        raise ApiError(
            400,
            "ExportTooLarge",
            f"graph too large to export ({size:,} nodes; limit {settings.export_max_nodes:,})",
        )
    try:
        return render(trace, fmt, dot_binary=dot_binary or "", timeout_s=settings.export_timeout_s)
    except ExportTimedOut as error:
        raise ApiError(400, "ExportTooLarge", str(error)) from error
    except ExportFailed as error:
        type_ = "GraphvizUnavailable" if not dot_binary else "ExportFailed"
        raise ApiError(503, type_, str(error)) from error


@router.post("/api/export", responses={200: CONTENT, **ERRORS}, response_class=Response)
async def export(
    request: GraphRequest,
    settings: Settings,
    server: Server,
    format: Annotated[ExportFormat, Query(description="svg, png, pdf or dot")] = "svg",
) -> Response:
    """Draw the program's graph in micrograd's `draw_dot` style (label | data | grad)."""
    drawing = await run_in_threadpool(export_bytes, request, format, settings, server.dot_binary)
    disposition = f'attachment; filename="chainrule-graph.{format}"'
    return Response(
        drawing, media_type=MEDIA_TYPES[format], headers={"Content-Disposition": disposition}
    )
