"""The tensor programs' own routes: `POST /api/fan-in`, where one element gets its gradient,
`POST /api/expand`, the scalar graph of one tensor op (laid out as a scalar program is, for the
page's Expand), and `POST /api/tensor-graph`, the whole scalar graph, compact, for the page's
own passes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from chainrule.app.api.graph_body import limits_of, worker_layouter
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import GraphRequest, error_responses
from chainrule.app.api.tensor_schemas import (
    ExpandRequest,
    ExpandResponse,
    FanInRequest,
    FanInResponse,
    TensorScalarGraph,
)
from chainrule.app.http.errors import JSONBodyRoute
from chainrule.app.http.responses import JSONBytes, dumps
from chainrule.app.http.server_state import Server
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.layout.layouter import CARD_SIZE, Layouter, structure
from chainrule.app.layout.placing import layout_reply
from chainrule.app.settings import AppSettings
from chainrule.engine.errors import BadLeaf
from chainrule.engine.i18n import msg
from chainrule.engine.narration import fmt
from chainrule.engine.ops import OPS, key_of
from chainrule.engine.tensor_graph import tensor_graph
from chainrule.engine.tensor_program import TensorTrace, trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import expand_reply, fan_in_reply

router = APIRouter(tags=["graph"], route_class=JSONBodyRoute)


def traced(
    request: GraphRequest, settings: AppSettings, scalar: str = "error.tensor.fan_in_scalar"
) -> TensorTrace:
    """The request's tensor program traced (its errors are said in the request's language by
    the error handlers, as every ProgramError); BadLeaf (message `scalar`) for a scalar
    program."""
    if not is_tensor_program(request.source):
        raise BadLeaf(msg(scalar))
    return trace_tensors(request.source, request.values, limits=limits_of(settings))


def fan_in_body(request: FanInRequest, settings: AppSettings) -> bytes:
    return dumps(fan_in_reply(traced(request, settings), request.tensor, request.index))


def expand_body(
    request: ExpandRequest, settings: AppSettings, lang: str, layouter: Layouter | None = None
) -> bytes:
    """The body of `POST /api/expand`; with `graph`, its graph laid out by `layouter` (None:
    this offload process's own) as a scalar program's is: Graphviz, bounded, else the layered
    fallback, cached by structure."""
    reply = expand_reply(traced(request, settings), request.tensor, lang, graph=request.graph)
    if reply["graph"] is not None:
        place_graph(reply["graph"], layouter or worker_layouter(settings))
    return dumps(reply)


# A card's name on the page (graph/geometry.js fitLabel): at the font of a 64 px card, a
# character is 14.5 × 1.05 × 0.6 px, the op's tag (0.62 × its characters + 0.6) × 14.5 px, and
# 8 px of padding on each side. An expanded op's cards are as wide as their names need (an
# element's, `(X @ W + b)[0,1]`, says which cell it is only whole), within these bounds.
NAME_FONT_PX = 14.5
CARD_PADDING_PX = 16.0
WIDEST_CARD_PX = 260.0


def card_size(card: dict[str, Any]) -> tuple[float, float]:
    """The (width, height) of an expanded graph's card: its kind's, widened to its name."""
    width, height = CARD_SIZE[card["kind"]]
    if card["kind"] == "const":
        return width, height
    tag = ""
    if card["op"] is not None:
        exponent = card["exponent"]
        tag = OPS[key_of(card["op"], exponent)].glyph.replace("{k}", fmt(exponent or 0))
    name = (card["label"] or card["text"]) + " "
    needed = NAME_FONT_PX * (len(name) * 1.05 * 0.6 + (len(tag) * 0.62 + 0.6 if tag else 0))
    return max(width, min(WIDEST_CARD_PX, round(needed + CARD_PADDING_PX))), height


def place_graph(graph: dict[str, Any], layouter: Layouter) -> None:
    """Give every card of an expanded graph its box, and the graph its `layout`."""
    cards = graph["nodes"]
    at = {card["id"]: i for i, card in enumerate(cards)}
    shape = structure(
        [card["id"] for card in cards],
        [card["kind"] for card in cards],
        [(at[edge["source"]], at[edge["target"]]) for edge in graph["edges"]],
        sizes=[card_size(card) for card in cards],
    )
    layout, cached = layouter.layout(shape)
    for card, (x, y, width, height) in zip(cards, layout.boxes, strict=True):
        card["x"], card["y"], card["width"], card["height"] = x, y, width, height
    graph["layout"] = layout_reply(layout, cached)


def graph_of_body(request: GraphRequest, settings: AppSettings) -> bytes:
    return dumps(tensor_graph(traced(request, settings, "error.tensor.graph_scalar")))


@router.post(
    "/api/fan-in",
    response_model=FanInResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def fan_in(
    request: FanInRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """Every term of the backward pass that adds to `tensor[index]`'s gradient (`dW[1,2] =
    Σᵢ X[i,1]·dY[i,2]`): the op and output element it flows from, upstream × local, in the
    order the pass adds them; their sum is the element's `grad`."""
    language.choose(request.lang)  # the language the error handlers say an error in
    size = len(request.source)
    return JSONBytes(
        await server.offload.by_size(
            size, settings.offload_min_source_chars, fan_in_body, request, settings
        )
    )


@router.post(
    "/api/expand",
    response_model=ExpandResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def expand(
    request: ExpandRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """The scalar graph one tensor op built ("Expand" on the page): every node with its op,
    data, grad, local derivatives and inputs (nodes of the op, or elements of its input
    tensors), at most 2,000 nodes; with `graph`, laid out to be drawn."""
    lang = language.choose(request.lang)  # the reply's words, and the error handlers'
    size = len(request.source)
    if size >= settings.offload_min_source_chars:  # a helper process, with its own layouter
        body = await server.offload.run(size, expand_body, request, settings, lang)
    else:
        body = await server.offload.in_thread(
            size, expand_body, request, settings, lang, server.layouter
        )
    return JSONBytes(body)


@router.post(
    "/api/tensor-graph",
    response_model=TensorScalarGraph,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def scalar_graph(
    request: GraphRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """A tensor program's scalar graph, compact: every node's op, inputs and starting number,
    each tensor's elements; the page runs its own forward and backward passes over it when a
    cell is dragged (and the one-file HTML, offline)."""
    language.choose(request.lang)  # the language the error handlers say an error in
    size = len(request.source)
    return JSONBytes(
        await server.offload.by_size(
            size, settings.offload_min_source_chars, graph_of_body, request, settings
        )
    )
