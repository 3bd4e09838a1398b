"""The layouts of a graph whose statements are groups of several cards, laid out one group at a
time (FIELD-NOTES: dot with a cluster per statement took seconds at 500 nodes and did not finish
at 1,000; a group laid out by itself is small).

1. The inside of every group is laid out alone, each input from outside entering through a port
   in the first column, so that dot keeps a lane free for that edge through the group, level
   with the card it feeds.
2. The graph of groups (one vertex per group, the edges between groups) is laid out twice: with
   each group one card (the collapsed layout) and with each group the size of its inside (the
   expanded layout, each inside then placed in its group's box).
dot ranks and orders a graph without looking at the sizes of its boxes, so both layouts put
every group in the same column and the same order: collapsing a group moves nothing across.
"""

from __future__ import annotations

from typing import Any

from chainrule.app.layout import (
    CARD_SIZE,
    FRAME_LABEL,
    FRAME_PAD,
    NODE_GAP,
    Box,
    Layout,
    Layouter,
    Structure,
    _bounded,
    collapsed_structure,
    dot_centres,
    dot_graph_attributes,
    dot_size,
    dot_source,
    framed_groups,
    parse_dot,
    parse_json0,
    sugiyama_layout,
)

# The collapsed graph is a summary: its cards sit closer in a column, so more is readable at Fit.
COLLAPSED_NODE_GAP = 12.0
PORT_SIZE = (2.0, 12.0)  # px: an input's way into a group, about one edge's lane
# dot keeps heavy edges straight: the lane from a port runs level with the card it feeds, so the
# page draws an input's edge level along it, from the group's left edge (groups.js, `entry`).
PORT_WEIGHT = 100
Inside = tuple[float, float, dict[int, Box]]  # a group's inside: width, height, member → box


def grouped_layout(structure: Structure, layouter: Layouter) -> Layout:
    """The expanded layout of `structure` (every node's box, each framed group's labelled box)
    with its collapsed layout (one box per group)."""
    quotient = collapsed_structure(structure)
    assert quotient is not None
    collapsed = None
    expanded = None
    framed = framed_groups(structure)
    if layouter.dot_allowed(len(structure.ids)):
        # One dot run for every group's inside and the collapsed graph, one for the expanded.
        sources = [inside_source(structure, group, members) for group, members in framed]
        sources.append(dot_source(quotient, COLLAPSED_NODE_GAP, guard=True))

        def parse(drawings: list[dict[str, Any]]) -> tuple[Layout, dict[int, Inside]]:
            insides = {
                group: inside_boxes(structure, members, drawing)
                for (group, members), drawing in zip(framed, drawings[:-1], strict=True)
            }
            return parse_json0(quotient, drawings[-1]), insides

        parsed = parse_dot(layouter.run_dot("\n".join(sources)), parse)
        if parsed is not None:
            collapsed, insides = parsed
            expanded = expanded_layout(structure, quotient, insides, layouter)
    elif layouter.dot_allowed(len(quotient.ids)):
        output = layouter.run_dot(dot_source(quotient, COLLAPSED_NODE_GAP, guard=True))
        collapsed = parse_dot(output, lambda drawings: parse_json0(quotient, drawings[0]))
    if expanded is None:  # the layered fallback, with a box around each group's cards
        expanded = sugiyama_layout(structure)
    return Layout(
        expanded.engine,
        expanded.width,
        expanded.height,
        expanded.boxes,
        expanded.frames,
        collapsed or sugiyama_layout(quotient),
    )


def inside_source(structure: Structure, group: int, members: list[int]) -> str:
    """DOT of one group's inside: its cards, its own edges, and a port in the first column for
    each input from outside (per input and consumer)."""
    ids = structure.ids
    inside = set(members)
    lines = [
        f"digraph g{group} {{",
        dot_graph_attributes(NODE_GAP, guard=True),
        'node [shape=box fixedsize=true label=""]',
    ]
    lines.extend(f"{ids[m]} [{dot_size(*CARD_SIZE[structure.kinds[m]])}]" for m in members)
    ports: dict[tuple[int, int], str] = {}
    for source, target in structure.edges:
        if target not in inside:
            continue
        if source in inside:
            lines.append(f"{ids[source]} -> {ids[target]}")
        elif (source, target) not in ports:
            port = ports[source, target] = f"i{len(ports)}"
            lines.append(f"{port} [{dot_size(*PORT_SIZE)}]")
            lines.append(f"{port} -> {ids[target]} [weight={PORT_WEIGHT}]")
    if ports:
        lines.append(f"{{rank=source {' '.join(ports.values())}}}")
    lines.append("}")
    return "\n".join(lines)


def inside_boxes(structure: Structure, members: list[int], drawing: dict[str, Any]) -> Inside:
    """(width, height, member → box) of a group's inside, boxes from its top left. The ports'
    column is left out, their rows kept: the lanes they hold run between the cards."""
    centres = dot_centres(drawing)
    boxes = {}
    for m in members:
        width, height = CARD_SIZE[structure.kinds[m]]
        boxes[m] = (*centres[structure.ids[m]], width, height)
    port_rows = [y for name, (_, y) in centres.items() if name.startswith("i")]
    left = min(x - w / 2 for x, _, w, _ in boxes.values())
    right = max(x + w / 2 for x, _, w, _ in boxes.values())
    lane = PORT_SIZE[1] / 2
    top = min([y - h / 2 for _, y, _, h in boxes.values()] + [y - lane for y in port_rows])
    bottom = max([y + h / 2 for _, y, _, h in boxes.values()] + [y + lane for y in port_rows])
    shifted = {m: (x - left, y - top, w, h) for m, (x, y, w, h) in boxes.items()}
    return right - left, bottom - top, shifted


def expanded_layout(
    structure: Structure,
    quotient: Structure,
    insides: dict[int, Inside],
    layouter: Layouter,
) -> Layout | None:
    """The graph of groups with each framed group as big as its inside (plus padding and the
    band for its name), then every card placed: None if dot fails."""
    sizes = [CARD_SIZE[kind] for kind in quotient.kinds]
    for group, (width, height, _) in insides.items():
        sizes[group] = (width + 2 * FRAME_PAD, height + 2 * FRAME_PAD + FRAME_LABEL)
    output = layouter.run_dot(dot_source(quotient, NODE_GAP, sizes, guard=True))
    groups = parse_dot(output, lambda drawings: parse_json0(quotient, drawings[0], sizes))
    if groups is None:
        return None
    boxes: list[Box | None] = [None] * len(structure.ids)
    frames: list[Box | None] = [None] * len(quotient.ids)
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
    placed = tuple(box for box in boxes if box is not None)
    assert len(placed) == len(boxes)
    return _bounded("dot", placed, tuple(frames))
