"""From a request to response bytes: trace with the server's limits, lay out, encode once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from chainrule import engine
from chainrule.app import __version__
from chainrule.app.layout import Layout, Layouter, structure_of
from chainrule.app.schemas import GraphRequest
from chainrule.app.settings import AppSettings
from chainrule.app.shared_layouts import share_layouts
from chainrule.engine.i18n import DEFAULT_LANG


def limits_of(settings: AppSettings) -> engine.Limits:
    return engine.Limits(
        max_source_chars=settings.max_source_chars,
        max_nodes=settings.max_nodes,
        max_depth=settings.max_depth,
    )


# Bumped when the order or meaning of the numbers arrays changes without a version change.
STRUCTURE_FORMAT = 1


def program_key(request: GraphRequest, settings: AppSettings) -> tuple:
    """What a trace depends on besides the leaf values: the program, its options and the
    limits it is traced under. Not the language: the structure (nodes, edges, steps, the order
    of the numbers arrays) is the same in every language, only the words differ."""
    order = tuple(request.order) if request.order is not None else None
    return (
        request.source,
        request.expand_derived,
        request.mode,
        order,
        settings.max_source_chars,
        settings.max_nodes,
        settings.max_depth,
    )


def structure_id(request: GraphRequest, settings: AppSettings) -> str:
    """The id of everything the nodes, edges and steps of a reply depend on besides the leaf
    values: the program, its options, the limits and this server's engine. Equal ids mean the
    numbers of `POST /api/values` line up with the arrays of the client's trace."""
    key = (STRUCTURE_FORMAT, __version__, *program_key(request, settings))
    return hashlib.sha256(orjson.dumps(key)).hexdigest()[:24]


def run_options(request: GraphRequest, settings: AppSettings) -> dict[str, Any]:
    """The engine's keyword arguments for `request` under the server's limits."""
    return {
        "expand_derived": request.expand_derived,
        "mode": request.mode,
        "order": request.order,
        "limits": limits_of(settings),
    }


def trace_dict(
    request: GraphRequest, settings: AppSettings, lang: str = DEFAULT_LANG
) -> dict[str, Any]:
    """The engine's JSON-ready trace of `request`, its words in `lang` (raises
    `engine.ProgramError`)."""
    options = run_options(request, settings)
    return engine.trace(request.source, request.values, **options, lang=lang).to_dict()


@dataclass(frozen=True)
class GraphBody:
    """The encoded trace with every node's box, waiting for its `layout` field."""

    trace_json: bytes  # a JSON object, without "layout"
    layout: Layout

    def render(self, layout_cached: bool) -> bytes:
        collapsed = self.layout.collapsed or self.layout
        layout = {
            "engine": self.layout.engine,
            "width": self.layout.width,
            "height": self.layout.height,
            "cached": layout_cached,
            "collapsed": {
                "engine": collapsed.engine,
                "width": collapsed.width,
                "height": collapsed.height,
            },
        }
        return b"".join((self.trace_json[:-1], b',"layout":', orjson.dumps(layout), b"}"))


def box_dict(box: tuple[float, float, float, float]) -> dict[str, float]:
    x, y, width, height = box
    return {"x": x, "y": y, "width": width, "height": height}


def place(trace: dict[str, Any], layout: Layout) -> None:
    """Write `layout` into `trace`: every node's box, and each group's `box` (its labelled box,
    or null for a group of one card) and `card` (its place when collapsed)."""
    for node, (x, y, width, height) in zip(trace["nodes"], layout.boxes, strict=True):
        node["x"], node["y"], node["width"], node["height"] = x, y, width, height
    groups = trace["groups"]
    frames = layout.frames or (None,) * len(groups)
    if layout.collapsed is not None:
        cards = layout.collapsed.boxes
    else:  # every group is one card: collapsed, it stays where it is
        cards = tuple(layout.boxes[int(group["root"][1:])] for group in groups)
    for group, frame, card in zip(groups, frames, cards, strict=True):
        group["box"] = None if frame is None else box_dict(frame)
        group["card"] = box_dict(card)


def build_body(
    request: GraphRequest, settings: AppSettings, layouter: Layouter, lang: str = DEFAULT_LANG
) -> tuple[GraphBody, bool]:
    """Trace and lay out, the words in `lang`; returns the body and whether the layout came
    from the cache."""
    trace = trace_dict(request, settings, lang)
    trace["structure"] = structure_id(request, settings)
    structure = structure_of(trace["nodes"], trace["edges"], trace["groups"])
    layout, cached = layouter.layout(structure)
    place(trace, layout)
    return GraphBody(orjson.dumps(trace), layout), cached


def numbers_body(request: GraphRequest, settings: AppSettings, lang: str = DEFAULT_LANG) -> bytes:
    """The encoded body of `POST /api/values` (the route checked its structure id): the
    numbers of `request`'s trace only, its warnings in `lang` (raises `engine.ProgramError`)."""
    options = run_options(request, settings)
    numbers = engine.numbers(request.source, request.values, **options, lang=lang)
    return orjson.dumps({"structure": structure_id(request, settings), **numbers})


def request_key(request: GraphRequest, settings: AppSettings, lang: str) -> tuple:
    """Everything a response depends on: the request, the limits it was traced under and the
    language of its words."""
    # float.hex tells -0.0 from 0.0 (equal as dict keys, different to the engine: 1/a), and the
    # order of `values` is kept because warnings about unknown names follow it.
    values = (
        tuple((name, float(value).hex()) for name, value in request.values.items())
        if request.values is not None
        else None
    )
    return (lang, values, *program_key(request, settings))


# One Layouter per worker process of the offload pool, made from the settings of its first job.
_worker_layouter: Layouter | None = None


def build_body_in_worker(
    request: GraphRequest, settings: AppSettings, lang: str
) -> tuple[GraphBody, bool]:
    """`build_body` in a process of the offload pool, with that process's layout cache."""
    global _worker_layouter
    if _worker_layouter is None:
        _worker_layouter = share_layouts(Layouter.from_settings(settings), settings)
    return build_body(request, settings, _worker_layouter, lang)


def warm_up() -> None:
    """Run in a fresh worker process: importing this module has loaded the engine and layout."""
