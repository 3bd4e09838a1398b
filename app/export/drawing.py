"""The graph as a picture for notes and handouts: micrograd's `draw_dot` style, drawn by Graphviz.

Every node is a record `{ name | data 2.0000 | grad 1.0000 }` (in forward mode the tangent,
`∂/∂a 3.0000`); an operation gets a small node (`+`, `*`, …) between its inputs and its record.
All text from the program is escaped, so labels can never change the DOT structure or inject
markup into the SVG.

How it is drawn is chosen before Graphviz runs, from the graph's shape (app/layout/layouter.py's
dot_cost):
dot with its work bounded, or, past `max_lanes` (long edges: `k*k*…*k`), the layered fallback
places every node and Graphviz only draws them where they are (`neato -n2`). A PNG is drawn from
positions too, at a resolution that keeps its bitmap within `png_max_pixels`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import graphviz
import orjson

from chainrule.app.export.tensor_drawing import tensor_dot
from chainrule.app.layout.graphviz import (
    Graphviz,
    GraphvizBusy,
    GraphvizError,
    GraphvizOutputTooLarge,
    GraphvizTimedOut,
)
from chainrule.app.layout.layered import layered_centres
from chainrule.app.layout.layouter import POINTS_PER_INCH, dot_cost
from chainrule.app.settings import AppSettings
from chainrule.engine.i18n import DEFAULT_LANG, Count, msg
from chainrule.engine.narration import fmt
from chainrule.engine.ops import MINUS, OPS, key_of

# What Graphviz draws (render below); an export is one of those or the interactive one-file
# HTML (app/export/onefile.py), which plays the page's own trace and needs no Graphviz.
DrawingFormat = Literal["svg", "png", "pdf", "dot"]
ExportFormat = Literal[DrawingFormat, "html"]

MEDIA_TYPES: dict[str, str] = {
    "svg": "image/svg+xml",
    "png": "image/png",
    "pdf": "application/pdf",
    "dot": "text/vnd.graphviz; charset=utf-8",
    "html": "text/html; charset=utf-8",
}

NO_GRAPHVIZ = msg("api.graphviz_missing")
PNG_DPI = 96.0  # Graphviz's own resolution for bitmaps
PAD_PT = 4.0  # Graphviz's margin around a drawing (pad), on each side
# dot's gaps in points (its defaults: ranksep 0.5 in, nodesep 0.25 in), kept by the fallback.
# The longest label a drawing's record holds, in bytes of its escaped UTF-8 text: Graphviz
# refuses a record label past 16 KiB (a 16,350-character name failed; the record's other fields
# take the rest).
MAX_LABEL_BYTES = 16_000
RANK_GAP_PT = 36.0
NODE_GAP_PT = 18.0
RETRY_AFTER_S = 2  # a busy Graphviz: most drawings take well under this

_RECORD_SPECIAL = re.compile(r'([{}|<>"])')
# What a reader's screen or terminal would act on rather than show: C0 and C1 controls (ESC
# starts a sequence that can recolour, move the cursor or clear the screen; U+0085 is a line
# break), the line and paragraph separators, and the bidirectional overrides and isolates that
# make text read in another order than it is written (U+202A-U+202E, U+2066-U+2069). No export
# carries them: a drawing shows a space for each, the one-file HTML escapes them.
UNSAFE_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# dot writes big coordinates in exponent form: bb="0,0,1.1497e+05,16592".
_NUMBER = rb"([-+\d.eE]+)"
_BOUNDING_BOX = re.compile(rb'\bbb="' + rb",".join([_NUMBER] * 4) + rb'"')


class ExportFailed(Exception):
    """Graphviz could not draw the graph (missing, failing, too slow); its one argument, the
    message, is a Message (engine/i18n.py)."""


class ExportBusy(ExportFailed):
    """Every Graphviz slot of this process is taken: try again in `retry_after_s`."""

    retry_after_s = RETRY_AFTER_S


@dataclass(frozen=True)
class ExportLimits:
    """How an export is bounded: Graphviz's wall time for the whole export, the long edges past
    which the fallback places the nodes, and a PNG's most pixels."""

    timeout_s: float
    max_lanes: int = 100_000
    png_max_pixels: int = 8_000_000

    @classmethod
    def from_settings(cls, settings: AppSettings, timeout_s: float | None = None) -> ExportLimits:
        return cls(
            timeout_s=settings.export_timeout_s if timeout_s is None else timeout_s,
            max_lanes=settings.export_max_lanes,
            png_max_pixels=settings.export_png_max_pixels,
        )


def record_field(text: str) -> str:
    """`text` as one literal field of a record label: backslashes (graphviz.escape), the record
    syntax `{ } | < >` and quotes are escaped; controls and bidirectional overrides
    (UNSAFE_TEXT) become spaces."""
    escaped = graphviz.escape(UNSAFE_TEXT.sub(" ", text))
    return _RECORD_SPECIAL.sub(r"\\\1", escaped)


def label_bytes(text: str) -> int:
    """How many bytes `text` takes in a drawing's record (escaped, UTF-8)."""
    return len(record_field(text).encode())


def op_text(node: dict[str, Any]) -> str:
    """The op node's text, the table's `dot` column: `+`, `*`, `**2` (micrograd writes the
    constant exponent), `relu`…"""
    exponent = node.get("exponent")
    # As micrograd's `_op` spells it, with an ASCII minus like the drawing's other numbers.
    k = "" if exponent is None else fmt(exponent).replace(MINUS, "-")
    row = OPS.get(key_of(node["op"], exponent))
    return node["op"] if row is None else row.dot.format(k=k)  # else the program's function


def third_field(trace: dict[str, Any]) -> Callable[[dict[str, Any]], str]:
    """A record's last field: `grad 1.0000` (reverse mode: ∂target/∂node), or in forward mode the
    tangent the pass carried, `∂/∂a 3.0000` (∂node/∂a for the leaf `wrt`)."""
    if trace.get("pass") != "forward":
        return lambda node: f"grad {fmt(node['grad'], decimals=4)}"
    leaf = next(node for node in trace["nodes"] if node["id"] == trace["wrt"])
    wrt = record_field(f"\u2202/\u2202{leaf['text']}")
    return lambda node: f"{wrt} {fmt(node['tangent'], decimals=4)}"


def draw_dot(trace: dict[str, Any], edges: bool = True) -> graphviz.Digraph:
    """The DOT graph of a trace (`nodes`/`edges` as in docs/api.md); names are our ids only.
    Without `edges`: the nodes alone (to measure them)."""
    dot = graphviz.Digraph(
        "chainrule",
        graph_attr={"rankdir": "LR"},
        node_attr={"fontname": "Helvetica", "fontsize": "11"},
    )
    third = third_field(trace)
    for node in trace["nodes"]:
        name = node["id"]
        fields = (
            record_field(node["text"]),
            f"data {fmt(node['data'], decimals=4)}",
            third(node),
        )
        dot.node(name, label=graphviz.nohtml("{ " + " | ".join(fields) + " }"), shape="record")
        if node["op"] is not None:
            dot.node(f"{name}_op", label=graphviz.escape(op_text(node)), shape="ellipse")
            if edges:
                dot.edge(f"{name}_op", name)
    for edge in trace["edges"] if edges else ():
        dot.edge(edge["source"], f"{edge['target']}_op")
    return dot


def export_graph(trace: dict[str, Any]) -> tuple[int, list[tuple[int, int]]]:
    """The graph draw_dot draws, by index: every node, then an op node for each node with an
    operation; the edges op → node and input → op, in draw_dot's order."""
    index = {node["id"]: i for i, node in enumerate(trace["nodes"])}
    count = len(index)
    op_node: dict[int, int] = {}
    edges = []
    for i, node in enumerate(trace["nodes"]):
        if node["op"] is not None:
            op_node[i] = count + len(op_node)
            edges.append((op_node[i], i))
    edges.extend((index[e["source"]], op_node[index[e["target"]]]) for e in trace["edges"])
    return count + len(op_node), edges


def node_names(trace: dict[str, Any]) -> list[str]:
    """The DOT names of export_graph's nodes, in its order."""
    names = [node["id"] for node in trace["nodes"]]
    return names + [f"{node['id']}_op" for node in trace["nodes"] if node["op"] is not None]


def render(
    trace: dict[str, Any],
    fmt: DrawingFormat,
    *,
    graphviz: Graphviz,
    limits: ExportLimits,
    lang: str = DEFAULT_LANG,
) -> bytes:
    """The drawing as `fmt` bytes; `dot` is the DOT text itself and needs no Graphviz. A tensor
    program's reply (`kind: "tensor"`) is drawn as the page's tensor view
    (app/export/tensor_drawing.py; its one word, a number's shape, in `lang`). Raises
    ExportBusy (every Graphviz slot taken), ExportFailed (no Graphviz, or it failed, or did not
    finish within the export's time)."""
    tensors = trace.get("kind") == "tensor"
    dot = tensor_dot(trace, lang) if tensors else draw_dot(trace)
    if fmt == "dot":
        return dot.source.encode()
    if not graphviz.binary:
        raise ExportFailed(NO_GRAPHVIZ)
    deadline = time.monotonic() + limits.timeout_s
    try:
        if tensors:  # a card a tensor: tens of nodes at most, for dot as it is
            if fmt != "png":
                return run(graphviz, [f"-T{fmt}"], dot.source, deadline)
            placed = run(graphviz, ["-Tdot"], dot.source, deadline)
            return draw_png(placed, bounding_box(placed), graphviz, deadline, limits)
        count, edges = export_graph(trace)
        cost = dot_cost(count, edges)
        # Long edges (`k*k*…*k`) cost dot its rows' network simplex, or without it seconds of
        # its other passes (200 factors: 8 s of a PDF): the fallback places those up front.
        if cost.lanes > limits.max_lanes or not cost.rows_affordable:
            return draw_in_place(trace, dot, count, edges, fmt, graphviz, deadline, limits)
        dot.graph_attr.update(cost.limits())
        if fmt != "png":
            return run(graphviz, [f"-T{fmt}"], dot.source, deadline)
        placed = run(graphviz, ["-Tdot"], dot.source, deadline)
        return draw_png(placed, bounding_box(placed), graphviz, deadline, limits)
    except GraphvizBusy as error:
        raise ExportBusy(msg("api.export_busy", seconds=RETRY_AFTER_S)) from error
    except GraphvizTimedOut as error:
        seconds = f"{limits.timeout_s:g}"
        raise ExportFailed(msg("api.export_timed_out", seconds=seconds)) from error
    except GraphvizOutputTooLarge as error:
        size = Count(graphviz.output_bytes)
        raise ExportFailed(msg("api.export_output_too_large", size=size)) from error
    except (GraphvizError, ValueError, KeyError) as error:
        raise ExportFailed(msg("api.export_failed")) from error


def run(graphviz: Graphviz, args: list[str], source: str, deadline: float) -> bytes:
    """Graphviz's output, in the time left before `deadline`."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise GraphvizTimedOut()
    return graphviz.run(args, source.encode(), remaining)


def bounding_box(placed: bytes) -> tuple[float, float]:
    """The size in points of a drawing that dot has placed (`-Tdot` output)."""
    match = _BOUNDING_BOX.search(placed)
    if match is None:
        raise ValueError("dot's output has no bounding box")
    left, bottom, right, top = (float(value) for value in match.groups())
    return right - left, top - bottom


def draw_png(
    placed: bytes,
    size: tuple[float, float],
    graphviz: Graphviz,
    deadline: float,
    limits: ExportLimits,
) -> bytes:
    """A PNG of a drawing whose nodes are placed, scaled down to at most png_max_pixels."""
    width, height = (side + 2 * PAD_PT for side in size)
    pixels = max(1.0, width * height) * (PNG_DPI / POINTS_PER_INCH) ** 2
    # Graphviz rounds the bitmap's sides up and may widen the drawing a little: keep 2% spare.
    dpi = PNG_DPI * min(1.0, math.sqrt(0.98 * limits.png_max_pixels / pixels))
    args = ["-Kneato", "-n2", f"-Gdpi={dpi:.3f}", "-Tpng"]
    return run(graphviz, args, placed.decode(), deadline)


def draw_in_place(
    trace: dict[str, Any],
    dot: graphviz.Digraph,
    count: int,
    edges: list[tuple[int, int]],
    fmt: DrawingFormat,
    graphviz: Graphviz,
    deadline: float,
    limits: ExportLimits,
) -> bytes:
    """The drawing with every node placed by the layered fallback: Graphviz measures the
    nodes (each where it stands, without edges: no layout at all), then draws them where
    they are, edges as straight lines."""
    names = node_names(trace)
    measured = draw_dot(trace, edges=False)
    # Measured where they stand (every node at the origin): dot would order them all in one
    # rank first, 9 s for the 4,000 of a 2,000-factor `k*k*…*k`.
    measured.node_attr["pos"] = "0,0!"
    measuring = ["-Kneato", "-n2", "-Tjson0"]
    drawing = orjson.loads(run(graphviz, measuring, measured.source, deadline))
    size_of = {
        obj["name"]: (float(obj["width"]) * POINTS_PER_INCH, float(obj["height"]) * POINTS_PER_INCH)
        for obj in drawing.get("objects", ())
    }
    sizes = [size_of[name] for name in names]
    centres = layered_centres(count, edges, sizes, rank_gap=RANK_GAP_PT, node_gap=NODE_GAP_PT)
    top = max((y + h / 2 for (_, y), (_, h) in zip(centres, sizes, strict=True)), default=0.0)
    for name, (x, y) in zip(names, centres, strict=True):
        dot.node(name, pos=f"{x:.2f},{top - y:.2f}!")  # Graphviz's y grows upward
    dot.graph_attr["splines"] = "line"
    args = ["-Kneato", "-n2", f"-T{fmt}"]
    if fmt == "png":
        right = max((x + w / 2 for (x, _), (w, _) in zip(centres, sizes, strict=True)), default=0.0)
        return draw_png(dot.source.encode(), (right, top), graphviz, deadline, limits)
    return run(graphviz, args, dot.source, deadline)
