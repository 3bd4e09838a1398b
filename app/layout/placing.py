"""Where a reply puts its graph: the structure a layout depends on, the layout's boxes as the
reply's placement and its `layout` member. No web framework: the server's replies use it
(app/api/graph_body.py), and so does the page's sandbox, which lays out in the learner's browser
a graph read from their Values that is too big to send (chainrule/sandbox/local_trace.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chainrule import engine
from chainrule.app.layout.layouter import Layout, Structure, structure
from chainrule.engine.reply import Placement


def layout_structure(graph: engine.Graph) -> Structure:
    """What the layout of `graph` depends on: its cards' kinds, edges and groups."""
    nodes = graph.nodes
    group_of = [0] * len(nodes)
    for number, group in enumerate(graph.groups):
        for member in group.nodes:
            group_of[member] = number
    return structure(
        [f"n{node.id}" for node in nodes],
        [node.kind for node in nodes],
        [(child.id, node.id) for node in nodes for child in node.inputs],
        group_of,
    )


def placement(layout: Layout, trace: engine.Trace) -> Placement:
    """Where the reply puts every card and group of `trace`'s graph."""
    return placement_of(layout, [group.root for group in trace.graph.groups])


def placement_of(layout: Layout, roots: Sequence[int]) -> Placement:
    """Where the reply puts every card and group (of these `roots`' indices): the layout's
    boxes, each group's labelled box (None for a group of one card) and its card when
    collapsed."""
    frames = layout.frames or (None,) * len(roots)
    if layout.collapsed is not None:
        cards = layout.collapsed.boxes
    else:  # every group is one card: collapsed, it stays where it is
        cards = tuple(layout.boxes[root] for root in roots)
    return Placement(layout.boxes, frames, cards)


def layout_reply(layout: Layout, cached: bool) -> dict[str, Any]:
    """The reply's `layout`: the drawing's engine and size, collapsed and not."""
    collapsed = layout.collapsed or layout
    return {
        "engine": layout.engine,
        "width": layout.width,
        "height": layout.height,
        "cached": cached,
        "collapsed": {
            "engine": collapsed.engine,
            "width": collapsed.width,
            "height": collapsed.height,
        },
    }
