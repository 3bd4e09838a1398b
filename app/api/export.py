"""`POST /api/export`: the graph drawn by Graphviz as SVG, PNG, PDF or DOT, or the page's own
trace as one interactive, self-contained HTML file."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from chainrule import engine
from chainrule.app.api.graph import graph_body
from chainrule.app.drawing import (
    MEDIA_TYPES,
    NO_GRAPHVIZ,
    DrawingFormat,
    ExportFailed,
    ExportFormat,
    ExportTimedOut,
    render,
)
from chainrule.app.http_errors import ApiError, JSONBodyRoute
from chainrule.app.language import RequestLanguage
from chainrule.app.onefile import build_html
from chainrule.app.schemas import ErrorResponse, GraphRequest
from chainrule.app.server_state import Server, ServerState
from chainrule.app.settings import AppSettings, Settings
from chainrule.app.trace_body import limits_of
from chainrule.engine.i18n import Count, msg
from chainrule.engine.reply import graph_reply, numbers_reply

router = APIRouter(tags=["export"], route_class=JSONBodyRoute)

ERRORS = {
    400: {"model": ErrorResponse, "description": "Bad program, or a graph too large to draw."},
    413: {"model": ErrorResponse, "description": "The request body is over the limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed (`InvalidRequest`)."},
    429: {"model": ErrorResponse, "description": "Too many requests (`RateLimited`)."},
    503: {"model": ErrorResponse, "description": "Graphviz is not installed or failed."},
}
CONTENT = {"content": {media_type: {} for media_type in MEDIA_TYPES.values()}}
TITLE_MAX_CHARS = 200
FILENAMES = {"html": "chainrule.html"}  # an interactive file, not a picture of the graph


def too_large(size: int, settings: AppSettings) -> ApiError:
    return ApiError(
        400,
        "ExportTooLarge",
        msg("api.export_too_large", size=Count(size), limit=Count(settings.export_max_nodes)),
    )


def default_title(source: str, max_chars: int = 60) -> str:
    """A one-line name for a program: its text on one line, cut with "…" past `max_chars`."""
    line = " ".join(source.split())
    return line if len(line) <= max_chars else line[: max_chars - 1].rstrip() + "\u2026"


async def export_html(
    request: GraphRequest,
    title: str | None,
    settings: AppSettings,
    server: ServerState,
    lang: str,
) -> bytes:
    """The one-file player of exactly the trace `POST /api/graph` answers for `request`."""
    trace = orjson.loads(await graph_body(request, settings, server, lang))
    if len(trace["nodes"]) > settings.export_max_nodes:
        raise too_large(len(trace["nodes"]), settings)
    title = title if title and title.strip() else default_title(request.source) or "chainrule"
    html = await run_in_threadpool(build_html, trace, title=title, lang=lang)
    return html.encode()


def export_bytes(
    request: GraphRequest, fmt: DrawingFormat, settings: AppSettings, dot_binary: str | None
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
        raise too_large(size, settings)
    traced = engine.run(graph, request.mode, request.order, target=request.target)
    trace = graph_reply(traced, numbers_reply(traced))  # no timeline
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
    format: Annotated[ExportFormat, Query(description="svg, png, pdf, dot or html")] = "svg",
    title: Annotated[
        str | None,
        Query(
            max_length=TITLE_MAX_CHARS,
            description="html only: the file's title (default: the program on one line)",
        ),
    ] = None,
) -> Response:
    """Draw the program's graph in micrograd's `draw_dot` style (label | data | grad), or
    (`html`) write one self-contained HTML file that plays its trace (narration and notes in
    the request's language): stepping, scrubbing, explanations and tables, read-only sliders,
    no network. The drawing has no words to translate; errors are in the request's language."""
    lang = language.choose(request.lang)
    if format == "html":
        content = await export_html(request, title, settings, server, lang)
    else:
        content = await run_in_threadpool(
            export_bytes, request, format, settings, server.dot_binary
        )
    filename = FILENAMES.get(format, f"chainrule-graph.{format}")
    return Response(
        content,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
