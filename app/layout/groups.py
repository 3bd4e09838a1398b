"""The layouts of a graph whose statements are groups of several cards, laid out one group at a
time (FIELD-NOTES: dot with a cluster per statement took seconds at 500 nodes and did not finish
at 1,000; a group laid out by itself is small).

1. The inside of every group is laid out alone, each input from outside entering through a port
   in the first column, so that a lane stays free for that edge through the group, level with
   the card it feeds.
2. The graph of groups (one vertex per group, the edges between groups) is laid out twice: with
   each group one card (the collapsed layout) and with each group the size of its inside (the
   expanded layout, each inside then placed in its group's box).
Both engines, dot and the layered fallback (app/layout/layered.py), rank and order a graph without
looking at the sizes of its boxes, so both layouts put every group in the same column and the
same order: collapsing a group moves nothing across. One engine lays out all of a graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chainrule.app.layout.layered import layered_centres, ordered
from chainrule.app.layout.layouter import (
    CARD_SIZE,
    FRAME_LABEL,
    FRAME_PAD,
    NODE_GAP,
    RANK_GAP,
    Box,
    DotCost,
    Layout,
    Layouter,
    Structure,
    _bounded,
    collapsed_structure,
    dot_centres,
    dot_cost,
    dot_graph_attributes,
    dot_size,
    dot_source,
    framed_groups,
    layered_layout,
    parse_dot,
    parse_json0,
)

# The collapsed graph is a summary: its cards sit closer in a column, so more is readable at Fit.
COLLAPSED_NODE_GAP = 12.0
PORT_SIZE = (2.0, 12.0)  # px: an input's way into a group, about one edge's lane
# Heavy edges are kept straight: the lane from a port runs level with the card it feeds, so the
# page draws an input's edge level along it, from the group's left edge (graph/groups.js, `entry`).
PORT_WEIGHT = 100
Inside = tuple[float, float, dict[int, Box]]  # a group's inside: width, height, member → box


@dataclass(frozen=True)
class InsideGraph:
    """One group's inside as a graph of its own: its members, then a port per input from
    outside (per input and consumer), named `i0`, `i1`, …; edges by index into `names`."""

    members: tuple[int, ...]  # the group's nodes (indices into the structure)
    names: tuple[str, ...]
    sizes: tuple[tuple[float, float], ...]
    edges: tuple[tuple[int, int], ...]
    weights: tuple[float, ...]

    @property
    def ports(self) -> range:
        return range(len(self.members), len(self.names))

    def cost(self) -> DotCost:
        return dot_cost(len(self.names), self.edges, pinned=self.ports)

    def shape(self) -> tuple:
        """What dot's drawing of this inside depends on: everything but the names."""
        return (len(self.members), self.sizes, self.edges, self.weights)


def inside_graphs(structure: Structure) -> dict[int, InsideGraph]:
    """The graph of each framed group's inside (see InsideGraph), edges in the trace's order;
    one pass over the edges for all groups."""
    framed = dict(framed_groups(structure))
    local = {member: place for members in framed.values() for place, member in enumerate(members)}
    names = {group: [structure.ids[m] for m in members] for group, members in framed.items()}
    sizes = {
        group: [CARD_SIZE[structure.kinds[m]] for m in members] for group, members in framed.items()
    }
    edges: dict[int, list[tuple[int, int]]] = {group: [] for group in framed}
    weights: dict[int, list[float]] = {group: [] for group in framed}
    ports: dict[tuple[int, int], int] = {}
    group_of = structure.groups
    for source, target in structure.edges:
        group = group_of[target]
        if group not in framed:
            continue
        if group_of[source] == group:
            edges[group].append((local[source], local[target]))
            weights[group].append(1)
        elif (source, target) not in ports:
            port = ports[source, target] = len(names[group])
            names[group].append(f"i{port - len(framed[group])}")
            sizes[group].append(PORT_SIZE)
            edges[group].append((port, local[target]))
            weights[group].append(PORT_WEIGHT)
    return {
        group: InsideGraph(
            tuple(members),
            tuple(names[group]),
            tuple(sizes[group]),
            tuple(edges[group]),
            tuple(weights[group]),
        )
        for group, members in framed.items()
    }


def grouped_layout(structure: Structure, layouter: Layouter) -> Layout:
    """The expanded layout of `structure` (every node's box, each framed group's labelled box)
    with its collapsed layout (one box per group): dot when every graph is affordable and dot
    answers, else the layered fallback."""
    quotient = collapsed_structure(structure)
    assert quotient is not None
    insides = inside_graphs(structure)
    layout = None
    # dot_max_nodes counts the program's nodes, as for a graph without groups: over it, or
    # without a dot, the costs below are not worth predicting (micrograd's demo: 50 ms).
    if layouter.dot_affordable(DotCost(len(structure.ids), 0, 0, 0)):
        shapes = same_shapes(insides)
        # dot lays out the graph of groups twice and every inside once: their costs add up (an
        # inside of a shape seen before costs what the first one did).
        costs = [quotient.cost] * 2
        shape_costs = {group: insides[group].cost() for group in set(shapes.values())}
        costs += [shape_costs[shapes[group]] for group in insides]
        total = sum(costs, DotCost(0, 0, 0, 0))
        cost = DotCost(len(structure.ids), total.edges, total.lanes, total.lane_squares)
        if layouter.dot_affordable(cost):
            layout = dot_grouped(structure, quotient, insides, shapes, layouter)
    return layout or layered_grouped(structure, quotient, insides)


def same_shapes(graphs: dict[int, InsideGraph]) -> dict[int, int]:
    """Each group's first group of the same shape (the same cards, ports, edges and weights in
    the same order; only the names differ): its inside is laid out once for all of them, and
    the cards of each are placed where that one's are (dot places by order, not by name)."""
    first: dict[tuple, int] = {}
    return {group: first.setdefault(graph.shape(), group) for group, graph in graphs.items()}


def dot_grouped(
    structure: Structure,
    quotient: Structure,
    graphs: dict[int, InsideGraph],
    shapes: dict[int, int],
    layouter: Layouter,
) -> Layout | None:
    """Both layouts by dot: one run for every shape of group's inside not drawn before (the
    layouter keeps them by shape), then one for the expanded graph of groups, and beside them
    one for the collapsed graph, unless the layouter drew that graph before, when a Graphviz
    slot is free at once (else it joins the insides' run; with it, the other two wait for a
    slot as long as it may take); None if dot fails or is busy."""
    known_collapsed = layouter.collapsed.get(quotient.key)
    collapsed_source = "" if known_collapsed else dot_source(quotient, COLLAPSED_NODE_GAP)

    def parse_collapsed(drawings: list[dict[str, Any]]) -> Layout:
        return parse_json0(quotient, drawings[-1])

    beside = None
    if collapsed_source:  # it needs no inside
        beside = layouter.start_dot(collapsed_source, parse_collapsed)
    laid_out, shown = known_insides(graphs, shapes, layouter)
    sources = [inside_source(group, graph) for group, graph in shown.items()]
    joined = collapsed_source and beside is None  # the collapsed graph in the insides' run
    if joined:
        sources.append(collapsed_source)

    def parse(drawings: list[dict[str, Any]]) -> dict[int, Inside]:
        if joined:
            drawings = drawings[:-1]
        return {
            group: inside_of(graph, dot_centres(drawing))
            for (group, graph), drawing in zip(shown.items(), drawings, strict=True)
        }

    insides_output = None
    if sources:  # else every inside was known and the collapsed graph runs beside, or is known
        insides_output = layouter.run_dot("\n".join(sources), beside=beside)
        drawn = parse_dot(insides_output, parse)
        if drawn is None:
            return None
        for group, inside in drawn.items():
            layouter.insides.put(graphs[group].shape(), inside)
        laid_out.update(drawn)
    insides = {
        group: same_inside(graph, laid_out[shapes[group]]) for group, graph in graphs.items()
    }
    sizes = expanded_sizes(quotient, insides)
    output = layouter.run_dot(dot_source(quotient, NODE_GAP, sizes), beside=beside)
    boxes = parse_dot(output, lambda drawings: parse_json0(quotient, drawings[0], sizes))
    if boxes is None:
        return None
    expanded = placed(structure, insides, boxes)  # while the collapsed graph may be drawn
    if known_collapsed:
        return with_collapsed(expanded, known_collapsed)
    if joined:  # it was the last drawing of the insides' run
        collapsed = parse_dot(insides_output, parse_collapsed)
    else:  # parsed as soon as dot answered
        collapsed = beside.result()
    if collapsed is None:
        return None
    layouter.collapsed.put(quotient.key, collapsed)
    return with_collapsed(expanded, collapsed)


def known_insides(
    graphs: dict[int, InsideGraph], shapes: dict[int, int], layouter: Layouter
) -> tuple[dict[int, Inside], dict[int, InsideGraph]]:
    """The insides of each shape's first group that dot drew before (in an earlier graph: the
    layouter keeps them by shape), and the first groups of the shapes it has not drawn yet."""
    known: dict[int, Inside] = {}
    unknown: dict[int, InsideGraph] = {}
    for group in dict.fromkeys(shapes.values()):
        inside = layouter.insides.get(graphs[group].shape())
        if inside is None:
            unknown[group] = graphs[group]
        else:
            known[group] = inside
    return known, unknown


def same_inside(graph: InsideGraph, laid_out: Inside) -> Inside:
    """The inside of `graph` laid out as `laid_out`, the inside of a group of the same shape."""
    width, height, boxes = laid_out
    return width, height, dict(zip(graph.members, boxes.values(), strict=True))


def layered_grouped(
    structure: Structure, quotient: Structure, graphs: dict[int, InsideGraph]
) -> Layout:
    """Both layouts by the layered fallback, in the same steps as dot_grouped: each shape of
    inside is laid out once (micrograd's demo: 3,271 neurons' insides, a few dozen shapes), the
    groups of that shape placed as its first is."""
    shapes = same_shapes(graphs)
    laid_out: dict[int, Inside] = {}
    for group in dict.fromkeys(shapes.values()):
        graph = graphs[group]
        centres = layered_centres(
            len(graph.names),
            graph.edges,
            graph.sizes,
            rank_gap=RANK_GAP,
            node_gap=NODE_GAP,
            pinned=graph.ports,
            weights=graph.weights,
        )
        laid_out[group] = inside_of(graph, dict(zip(graph.names, centres, strict=True)))
    insides = {
        group: same_inside(graph, laid_out[shapes[group]]) for group, graph in graphs.items()
    }
    card_sizes = [CARD_SIZE[kind] for kind in quotient.kinds]
    # One order for both (it never looks at the sizes): collapsing moves nothing across.
    order = ordered(len(quotient.ids), quotient.edges) if quotient.ids else None
    collapsed = layered_layout(quotient, card_sizes, COLLAPSED_NODE_GAP, order)
    boxes = layered_layout(quotient, expanded_sizes(quotient, insides), NODE_GAP, order)
    return with_collapsed(placed(structure, insides, boxes), collapsed)


def with_collapsed(expanded: Layout, collapsed: Layout) -> Layout:
    return Layout(
        expanded.engine,
        expanded.width,
        expanded.height,
        expanded.boxes,
        expanded.frames,
        collapsed,
    )


def inside_source(group: int, graph: InsideGraph) -> str:
    """DOT of one group's inside: its cards, its own edges, and its ports in the first column."""
    lines = [
        f"digraph g{group} {{",
        dot_graph_attributes(NODE_GAP, graph.cost()),
        'node [shape=box fixedsize=true label=""]',
    ]
    names = graph.names
    cards = len(graph.members)
    lines.extend(f"{names[m]} [{dot_size(*graph.sizes[m])}]" for m in range(cards))
    for (source, target), weight in zip(graph.edges, graph.weights, strict=True):
        if source >= cards:  # a port: declared with its one edge
            lines.append(f"{names[source]} [{dot_size(*PORT_SIZE)}]")
            lines.append(f"{names[source]} -> {names[target]} [weight={weight:g}]")
        else:
            lines.append(f"{names[source]} -> {names[target]}")
    if cards < len(names):
        lines.append(f"{{rank=source {' '.join(names[cards:])}}}")
    lines.append("}")
    return "\n".join(lines)


def inside_of(graph: InsideGraph, centres: dict[str, tuple[float, float]]) -> Inside:
    """(width, height, member → box) of a group's inside from the centres of its graph's
    vertices (y down), boxes from its top left. The ports' column is left out, their rows
    kept: the lanes they hold run between the cards."""
    boxes = {
        member: (*centres[name], *size)
        for member, name, size in zip(graph.members, graph.names, graph.sizes, strict=False)
    }
    port_rows = [centres[graph.names[port]][1] for port in graph.ports]
    left = min(x - w / 2 for x, _, w, _ in boxes.values())
    right = max(x + w / 2 for x, _, w, _ in boxes.values())
    lane = PORT_SIZE[1] / 2
    top = min([y - h / 2 for _, y, _, h in boxes.values()] + [y - lane for y in port_rows])
    bottom = max([y + h / 2 for _, y, _, h in boxes.values()] + [y + lane for y in port_rows])
    shifted = {member: (x - left, y - top, w, h) for member, (x, y, w, h) in boxes.items()}
    return right - left, bottom - top, shifted


def expanded_sizes(quotient: Structure, insides: dict[int, Inside]) -> list[tuple[float, float]]:
    """Each group's size in the expanded layout: a card, or its inside with padding and the
    band for its name."""
    sizes = [CARD_SIZE[kind] for kind in quotient.kinds]
    for group, (width, height, _) in insides.items():
        sizes[group] = (width + 2 * FRAME_PAD, height + 2 * FRAME_PAD + FRAME_LABEL)
    return sizes


def placed(structure: Structure, insides: dict[int, Inside], groups: Layout) -> Layout:
    """The expanded layout: every framed group's inside placed in its box of `groups`, the
    other groups' single cards where they are."""
    boxes: list[Box | None] = [None] * len(structure.ids)
    frames: list[Box | None] = [None] * len(groups.boxes)
    for group, members in enumerate(structure.group_members()):
        x, y, width, height = groups.boxes[group]
        if group not in insides:
            boxes[members[0]] = (x, y, width, height)
            continue
        frames[group] = groups.boxes[group]
        left = x - width / 2 + FRAME_PAD
        top = y - height / 2 + FRAME_PAD + FRAME_LABEL
        for m, (mx, my, mw, mh) in insides[group][2].items():
            boxes[m] = (left + mx, top + my, mw, mh)
    every = tuple(box for box in boxes if box is not None)
    assert len(every) == len(boxes)
    return _bounded(groups.engine, every, tuple(frames))
