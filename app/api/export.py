"""`POST /api/export`: the graph drawn by Graphviz as SVG, PNG, PDF or DOT, or the page's own
trace as one interactive, self-contained HTML file."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from chainrule import engine
from chainrule.app.api.graph import graph_body
from chainrule.app.api.graph_body import limits_of
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import ErrorResponse, GraphRequest
from chainrule.app.export.drawing import (
    MAX_LABEL_BYTES,
    MEDIA_TYPES,
    NO_GRAPHVIZ,
    DrawingFormat,
    ExportBusy,
    ExportFailed,
    ExportFormat,
    ExportLimits,
    label_bytes,
    render,
)
from chainrule.app.export.onefile import build_html
from chainrule.app.http.errors import ApiError, JSONBodyRoute
from chainrule.app.http.server_state import Server, ServerState
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.layout.graphviz import Graphviz
from chainrule.app.settings import AppSettings
from chainrule.engine.i18n import DEFAULT_LANG, Count, msg
from chainrule.engine.reply import graph_reply, numbers_reply, pass_reply
from chainrule.engine.tensor_graph import tensor_graph
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import tensor_reply

router = APIRouter(tags=["export"], route_class=JSONBodyRoute)

ERRORS = {
    400: {"model": ErrorResponse, "description": "Bad program, or a graph over the node limit."},
    413: {"model": ErrorResponse, "description": "The request body is over the limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed (`InvalidRequest`)."},
    429: {"model": ErrorResponse, "description": "Too many requests (`RateLimited`)."},
    503: {
        "model": ErrorResponse,
        "description": "Graphviz is not installed (`GraphvizUnavailable`), failed or did not "
        "finish in time (`ExportFailed`), or is drawing as many graphs as it may at once "
        "(`Busy`, with `Retry-After`).",
    },
}
CONTENT = {"content": {media_type: {} for media_type in MEDIA_TYPES.values()}}
TITLE_MAX_CHARS = 200
# The file's name says what it is: a preset's or a lesson's slug (their ids are slugs), else
# `program`; then its format. The slug's characters are safe in a Content-Disposition header.
NAME_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
NAME_MAX_CHARS = 60
DEFAULT_NAME = "program"


def file_name(name: str | None, fmt: str) -> str:
    """The download's file name: `name` (a slug, `program` when none) and the format."""
    return f"{name or DEFAULT_NAME}.{fmt}"


def too_large(size: int, settings: AppSettings) -> ApiError:
    return ApiError(
        400,
        "ExportTooLarge",
        msg("api.export_too_large", size=Count(size), limit=Count(settings.export_max_nodes)),
    )


def check_labels(trace: dict[str, Any]) -> None:
    """400 `ExportTooLarge` for a label longer than a drawing's record holds: the program's
    own text, never Graphviz's failure (it used to answer 503 `ExportFailed`, "retry later")."""
    node = max(trace["nodes"], key=lambda node: label_bytes(node["text"]), default=None)
    if node is not None and label_bytes(node["text"]) > MAX_LABEL_BYTES:
        size, limit = Count(label_bytes(node["text"])), Count(MAX_LABEL_BYTES)
        message = msg("api.export_label_too_long", node=node["id"], size=size, limit=limit)
        raise ApiError(400, "ExportTooLarge", message)


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
    # A tensor program's file carries its scalar graph: its cells' drags recompute offline.
    graph = (
        await run_in_threadpool(scalar_graph_of, request, settings)
        if trace.get("kind") == "tensor"
        else None
    )
    html = await run_in_threadpool(build_html, trace, title=title, lang=lang, graph=graph)
    return html.encode()


def scalar_graph_of(request: GraphRequest, settings: AppSettings) -> dict[str, Any]:
    """The scalar graph of the request's tensor program at the request's `values`: the
    numbers the file opens on, which its drags change one cell at a time."""
    return tensor_graph(trace_tensors(request.source, request.values, limits=limits_of(settings)))


def export_trace(request: GraphRequest, settings: AppSettings) -> dict[str, Any]:
    """Build and trace (no timeline); raises ApiError for graphs over `export_max_nodes` as
    soon as the graph is built: before the backward pass, gradient check and timeline."""
    graph = engine.build_graph(
        request.source,
        request.values,
        expand_derived=request.options().expand_derived,
        limits=limits_of(settings),
    )
    size = len(graph.nodes)
    if size > settings.export_max_nodes:
        raise too_large(size, settings)
    traced = engine.run(graph, **request.options().run_kwargs())
    return {**graph_reply(traced, numbers_reply(traced)), **pass_reply(traced)}  # no timeline


def export_tensor_trace(
    request: GraphRequest, settings: AppSettings, lang: str = DEFAULT_LANG
) -> dict[str, Any]:
    """A tensor program's `POST /api/graph` reply (docs/tensors.md), drawn as its tensor view;
    ApiError for one holding more than `export_max_nodes` elements (a card's grids draw every
    element)."""
    trace = trace_tensors(request.source, request.values, limits=limits_of(settings))
    size = trace.elements.element_count
    if size > settings.export_max_nodes:
        limit = Count(settings.export_max_nodes)
        message = msg("api.export_tensors_too_large", size=Count(size), limit=limit)
        raise ApiError(400, "ExportTooLarge", message)
    return tensor_reply(trace, lang)


def drawing(
    trace: dict[str, Any],
    fmt: DrawingFormat,
    settings: AppSettings,
    graphviz: Graphviz,
    lang: str = DEFAULT_LANG,
) -> bytes:
    """Draw; raises ApiError when every Graphviz slot is taken (503 Busy) or when Graphviz
    fails or is too slow (503: never the user's fault, whatever the graph)."""
    limits = ExportLimits.from_settings(settings)
    try:
        return render(trace, fmt, graphviz=graphviz, limits=limits, lang=lang)
    except ExportBusy as error:
        retry = {"Retry-After": str(error.retry_after_s)}
        raise ApiError(503, "Busy", error.args[0], headers=retry) from error
    except ExportFailed as error:
        raise ApiError(503, "ExportFailed", error.args[0]) from error


async def export_bytes(
    request: GraphRequest,
    fmt: DrawingFormat,
    settings: AppSettings,
    server: ServerState,
    lang: str = DEFAULT_LANG,
) -> bytes:
    """The drawing of `request`: traced in one of the worker's trace threads (the shortest
    program first), drawn in another thread while Graphviz runs (it holds no GIL, and a slow
    one must not hold a trace thread). Without Graphviz only `dot` can be drawn: the others
    are refused before any work."""
    if fmt != "dot" and not server.dot_binary:
        raise ApiError(503, "GraphvizUnavailable", NO_GRAPHVIZ)
    size = len(request.source)
    if is_tensor_program(request.source):
        trace = await server.offload.in_thread(size, export_tensor_trace, request, settings, lang)
    else:
        trace = await server.offload.in_thread(size, export_trace, request, settings)
        check_labels(trace)
    return await run_in_threadpool(drawing, trace, fmt, settings, server.graphviz, lang)


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
    name: Annotated[
        str | None,
        Query(
            max_length=NAME_MAX_CHARS,
            pattern=NAME_PATTERN,
            description="the file's name before its format, a slug such as a preset's or a "
            "lesson's id (lowercase letters, digits and single hyphens; default `program`)",
        ),
    ] = None,
) -> Response:
    """Draw the program's graph in micrograd's `draw_dot` style (label | data | grad), a
    tensor program's as its tensor view (a card a tensor: its shape, data and gradient grids), or
    (`html`) write one self-contained HTML file that plays its trace (narration and notes in
    the request's language): stepping, scrubbing, explanations and tables, live sliders
    (the page computes the numbers), no network. The drawing has no words to translate; errors
    are in the request's language."""
    lang = language.choose(request.lang)
    if format == "html":
        content = await export_html(request, title, settings, server, lang)
    else:
        content = await export_bytes(request, format, settings, server, lang)
    filename = file_name(name, format)
    return Response(
        content,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
