"""A tensor program's reply (docs/api.md, "Tensor programs") as a picture, drawn by Graphviz:
the page's tensor view (static/js/tensor/) at the end of the backward pass. A card a tensor,
left to right in the program's order: its title (`h = tanh`), its shape (`3×3`), its data grid
and, where a gradient reaches it, its gradient's grid; numbers while a grid is at most
NUMBER_CELLS a side (the page's tensor/layout.js), else a colour a cell (blue positive, orange
negative, as strong as |value| is against the grid's largest). An edge an input, labelled with
the op. Every text from the program is escaped for Graphviz's HTML labels."""

from __future__ import annotations

from html import escape
from typing import Any

import graphviz

from chainrule.engine.i18n import DEFAULT_LANG, text
from chainrule.engine.narration import fmt

# A grid of at most this many rows and columns shows its numbers (static/js/tensor/layout.js's
# NUMBER_CELLS; tests/app/test_export_api.py checks they agree).
NUMBER_CELLS = 6
# A colour grid's cells (points) within COLOUR_GRID_MAX a side, as the page's are.
COLOUR_GRID_MAX = 120.0
# The page's colours (static/css/app.css --forward, --backward), blended with white by |value|.
POSITIVE = (0x3B, 0x82, 0xF6)
NEGATIVE = (0xF9, 0x73, 0x16)
SHAPE_COLOUR = "#6b7280"
GRAD_COLOUR = "#b45309"


def _text(value: str) -> str:
    """`value` as text in an HTML label: escaped, controls and bidirectional overrides as spaces."""
    from chainrule.app.export.drawing import UNSAFE_TEXT

    return escape(UNSAFE_TEXT.sub(" ", value), quote=True)


def shape_text(shape: list[int], lang: str = DEFAULT_LANG) -> str:
    """`3×3`, `27` for a vector, `one number` (the page's shapeText, in `lang`)."""
    return "\u00d7".join(map(str, shape)) if shape else text(lang, "ui.tensor.one_number")


def grid_of(shape: list[int]) -> tuple[int, int]:
    """Rows and columns of a grid of `shape` (the page's gridOf): a matrix as it is, a vector
    one row, a number 1×1; more dims: the first dim's rows of everything else flattened."""
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    cols = 1
    for size in shape[1:]:
        cols *= size
    return shape[0], cols


def _flat(values: Any) -> list[Any]:
    if isinstance(values, list):
        return [x for v in values for x in _flat(v)]
    return [values]


def _number(x: Any) -> float:
    return float(x)  # "Infinity", "NaN" (the reply's spellings) read as floats too


def _colour(x: float, scale: float) -> str:
    if x != x or x == 0 or abs(x) == float("inf"):
        return "#ffffff" if x == 0 else "#9ca3af"
    base = POSITIVE if x > 0 else NEGATIVE
    strength = min(1.0, abs(x) / scale)
    mixed = (round(255 + (c - 255) * strength) for c in base)
    return "#" + "".join(f"{c:02x}" for c in mixed)


def grid_table(values: Any, shape: list[int], grad: bool) -> str:
    """One grid as an HTML table: numbers while they fit, else colours."""
    rows, cols = grid_of(shape)
    flat = _flat(values)
    numbers = rows <= NUMBER_CELLS and cols <= NUMBER_CELLS
    cells = []
    if numbers:
        colour = f' COLOR="{GRAD_COLOUR}"' if grad else ""
        for r in range(rows):
            row = "".join(
                f'<TD ALIGN="RIGHT" WIDTH="52"><FONT{colour}>{_text(fmt(flat[r * cols + c]))}'
                "</FONT></TD>"
                for c in range(cols)
            )
            cells.append(f"<TR>{row}</TR>")
        border = 'BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="2" COLOR="#d1d5db"'
        return f"<TABLE {border}>{''.join(cells)}</TABLE>"
    scale = max((abs(v) for v in map(_number, flat) if v - v == 0), default=0.0) or 1.0
    side = max(2, min(14, int(COLOUR_GRID_MAX / max(rows, cols))))
    for r in range(rows):
        row = "".join(
            f'<TD BGCOLOR="{_colour(_number(flat[r * cols + c]), scale)}" WIDTH="{side}" '
            f'HEIGHT="{side}" FIXEDSIZE="TRUE"></TD>'
            for c in range(cols)
        )
        cells.append(f"<TR>{row}</TR>")
    border = 'BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"'
    return f"<TABLE {border}>{''.join(cells)}</TABLE>"


def header_text(node: dict[str, Any]) -> str:
    """A card's title: its label, and the op that made a named tensor (`h = tanh`; the page's
    headerText)."""
    return f"{node['label']} = {node['op']}" if node["name"] and node["op"] else node["label"]


def card_label(node: dict[str, Any], grad_name: str, lang: str = DEFAULT_LANG) -> str:
    """A tensor's card as a Graphviz HTML label."""
    shape = node["shape"]
    parts = [
        f'<TR><TD ALIGN="LEFT"><B>{_text(header_text(node))}</B></TD>'
        f'<TD ALIGN="RIGHT"><FONT COLOR="{SHAPE_COLOUR}">{_text(shape_text(shape, lang))}'
        "</FONT></TD></TR>",
        f'<TR><TD COLSPAN="2">{grid_table(node["data"], shape, grad=False)}</TD></TR>',
    ]
    if node["grad"] is not None and node["kind"] != "const":
        parts.append(
            f'<TR><TD COLSPAN="2" ALIGN="LEFT"><FONT POINT-SIZE="9" COLOR="{GRAD_COLOUR}">'
            f"{_text(grad_name)}</FONT></TD></TR>"
        )
        parts.append(f'<TR><TD COLSPAN="2">{grid_table(node["grad"], shape, grad=True)}</TD></TR>')
    style = ' STYLE="dashed"' if node["kind"] == "const" else ""
    table = (
        f'<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="2" CELLPADDING="3" COLOR="#9ca3af"'
        f' BGCOLOR="#ffffff"{style}>{"".join(parts)}</TABLE>'
    )
    return f"<{table}>"


def grad_name(node: dict[str, Any]) -> str:
    """`dW`, `d(X @ W)` (the page's gradName)."""
    return f"d{node['name']}" if node["name"] else f"d({node['label']})"


def tensor_dot(reply: dict[str, Any], lang: str = DEFAULT_LANG) -> graphviz.Digraph:
    """The DOT graph of a tensor reply: a card a tensor (an HTML label), an edge an input; the
    one word it has (a number's shape) in `lang`."""
    dot = graphviz.Digraph(
        "chainrule",
        graph_attr={"rankdir": "LR", "ranksep": "0.5", "nodesep": "0.3"},
        node_attr={"fontname": "Helvetica", "fontsize": "10", "shape": "plaintext", "margin": "0"},
        edge_attr={"fontname": "Helvetica", "fontsize": "10", "color": "#6b7280"},
    )
    for node in reply["nodes"]:
        dot.node(node["id"], label=card_label(node, grad_name(node), lang))
    for node in reply["nodes"]:
        for source in dict.fromkeys(node["inputs"]):  # `x * x`: one edge
            dot.edge(source, node["id"], label=_text(node["op"] or ""))
    return dot
