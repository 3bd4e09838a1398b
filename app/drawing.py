"""The graph as a picture for notes and handouts: micrograd's `draw_dot` style, drawn by Graphviz.

Every node is a record `{ name | data 2.0000 | grad 1.0000 }`; an operation gets a small node
(`+`, `*`, …) between its inputs and its record. All text from the program is escaped, so
labels can never change the DOT structure or inject markup into the SVG.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any, Literal

import graphviz

from chainrule.app.layout import run_graphviz
from chainrule.engine.i18n import msg
from chainrule.engine.narration import fmt
from chainrule.engine.ops import OPS, key_of

# What Graphviz draws (render below); an export is one of those or the interactive one-file
# HTML (app/onefile.py), which plays the page's own trace and needs no Graphviz.
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

_RECORD_SPECIAL = re.compile(r'([{}|<>"])')
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ExportFailed(Exception):
    """Graphviz could not draw the graph (missing or failing); its one argument, the message,
    is a Message (engine/i18n.py)."""


class ExportTimedOut(ExportFailed):
    """Graphviz did not finish within the export timeout: the graph is too large to draw."""


def record_field(text: str) -> str:
    """`text` as one literal field of a record label: backslashes (graphviz.escape), the record
    syntax `{ } | < >` and quotes are escaped; control characters become spaces."""
    escaped = graphviz.escape(_CONTROL.sub(" ", text))
    return _RECORD_SPECIAL.sub(r"\\\1", escaped)


def op_text(node: dict[str, Any]) -> str:
    """The op node's text, the table's `dot` column: `+`, `*`, `**2` (micrograd writes the
    constant exponent), `relu`…"""
    exponent = node.get("exponent")
    k = "" if exponent is None else fmt(exponent)
    return OPS[key_of(node["op"], exponent)].dot.format(k=k)


def draw_dot(trace: dict[str, Any]) -> graphviz.Digraph:
    """The DOT graph of a trace (`nodes`/`edges` as in docs/api.md); names are our ids only."""
    dot = graphviz.Digraph(
        "chainrule",
        graph_attr={"rankdir": "LR"},
        node_attr={"fontname": "Helvetica", "fontsize": "11"},
    )
    for node in trace["nodes"]:
        name = node["id"]
        fields = (
            record_field(node["text"]),
            f"data {fmt(node['data'], decimals=4)}",
            f"grad {fmt(node['grad'], decimals=4)}",
        )
        dot.node(name, label=graphviz.nohtml("{ " + " | ".join(fields) + " }"), shape="record")
        if node["op"] is not None:
            dot.node(f"{name}_op", label=graphviz.escape(op_text(node)), shape="ellipse")
            dot.edge(f"{name}_op", name)
    for edge in trace["edges"]:
        dot.edge(edge["source"], f"{edge['target']}_op")
    return dot


def render(
    trace: dict[str, Any], fmt: DrawingFormat, *, dot_binary: str, timeout_s: float
) -> bytes:
    """The drawing as `fmt` bytes; `dot` is the DOT text itself and needs no Graphviz."""
    source = draw_dot(trace).source
    if fmt == "dot":
        return source.encode()
    if not dot_binary:
        raise ExportFailed(NO_GRAPHVIZ)
    try:
        return run_graphviz(dot_binary, [f"-T{fmt}"], source.encode(), timeout_s)
    except subprocess.TimeoutExpired as error:
        raise ExportTimedOut(msg("api.export_timed_out", seconds=f"{timeout_s:g}")) from error
    except (subprocess.SubprocessError, OSError) as error:
        raise ExportFailed(msg("api.export_failed")) from error
