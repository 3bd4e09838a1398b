"""app/layout/layered.py, the layered fallback in plain Python (issue 21, item 1): on random graphs
and
groupings, every edge runs left to right, no card overlaps another, every statement's box holds
its cards and nothing else, collapsing moves nothing across, and the same structure gets the
same layout. It imports no native layout code (python-igraph's layout_sugiyama read out of
bounds and could kill a notebook's kernel)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from program_strategies import fuzz_settings
from test_group_layout import check_groups_drawn_apart

from chainrule.app.layout import layered
from chainrule.app.layout.layouter import CARD_SIZE, MARGIN, Layouter, structure_of
from chainrule.app.layout.placing import placement_of
from chainrule.engine.reply import box_reply


@st.composite
def traced_graphs(draw: st.DrawFn, max_nodes: int = 40) -> dict:
    """A trace's nodes, edges and groups: a random DAG in id order (inputs before consumers,
    repeated inputs allowed, as `a*a`), its nodes cut into runs that are statements."""
    count = draw(st.integers(1, max_nodes))
    kinds = draw(st.lists(st.sampled_from(["leaf", "op", "const"]), min_size=count, max_size=count))
    nodes = [{"id": f"n{i}", "kind": kind, "op": None, "label": ""} for i, kind in enumerate(kinds)]
    edges = []
    for target in range(1, count):
        for source in draw(st.lists(st.integers(0, target - 1), max_size=3)):
            edges.append({"source": f"n{source}", "target": f"n{target}"})
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, count - 1)), max_size=count // 2))))
    bounds = [0, *(cut for cut in cuts if cut < count), count]
    groups = [
        {"id": f"g{g}", "nodes": [f"n{i}" for i in range(start, end)], "root": f"n{end - 1}"}
        for g, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False))
        if start < end
    ]
    return {"nodes": nodes, "edges": edges, "groups": groups}


def fallback_reply(graph: dict) -> dict:
    """The graph as /api/graph would place it with the fallback (no dot at all)."""
    layouter = Layouter(dot_timeout_s=1, dot_max_nodes=1000, cache_size=0, dot_binary="")
    structure = structure_of(graph["nodes"], graph["edges"], graph["groups"])
    layout, _ = layouter.layout(structure)
    reply = {
        "nodes": [dict(node) for node in graph["nodes"]],
        "edges": graph["edges"],
        "groups": [dict(group) for group in graph["groups"]],
    }
    roots = [int(group["root"][1:]) for group in graph["groups"]]
    placed = placement_of(layout, roots)  # as the reply writes it (engine/reply.py)
    for node, box in zip(reply["nodes"], placed.boxes, strict=True):
        node.update(box_reply(box))
    for group, box, card in zip(
        reply["groups"], placed.group_boxes, placed.group_cards, strict=True
    ):
        group["box"] = None if box is None else box_reply(box)
        group["card"] = box_reply(card)
    collapsed = layout.collapsed or layout
    reply["layout"] = {
        "engine": layout.engine,
        "width": layout.width,
        "height": layout.height,
        "collapsed": {"engine": collapsed.engine, "width": collapsed.width},
    }
    return reply


def overlap(a: dict, b: dict) -> bool:
    return (
        abs(a["x"] - b["x"]) * 2 < a["width"] + b["width"] - 0.01
        and abs(a["y"] - b["y"]) * 2 < a["height"] + b["height"] - 0.01
    )


@fuzz_settings
@given(traced_graphs())
def test_fuzz_the_fallback_places_every_card_apart_with_edges_left_to_right(graph) -> None:
    reply = fallback_reply(graph)
    assert reply["layout"]["engine"] == "sugiyama"
    nodes = {node["id"]: node for node in reply["nodes"]}
    for edge in graph["edges"]:
        source, target = nodes[edge["source"]], nodes[edge["target"]]
        assert source["x"] + source["width"] / 2 < target["x"] - target["width"] / 2
    cards = list(nodes.values())
    for i, card in enumerate(cards):
        assert (card["width"], card["height"]) == CARD_SIZE[card["kind"]]
        assert card["x"] - card["width"] / 2 >= MARGIN - 0.01
        assert card["y"] - card["height"] / 2 >= MARGIN - 0.01
        assert card["x"] + card["width"] / 2 <= reply["layout"]["width"]
        assert card["y"] + card["height"] / 2 <= reply["layout"]["height"]
        assert not any(overlap(card, other) for other in cards[i + 1 :])
    check_groups_drawn_apart(reply)


@fuzz_settings
@given(traced_graphs())
def test_fuzz_collapsing_keeps_every_group_in_its_column_and_order(graph) -> None:
    reply = fallback_reply(graph)
    nodes = {node["id"]: node for node in reply["nodes"]}
    expanded = [group["box"] or nodes[group["root"]] for group in reply["groups"]]
    collapsed = [group["card"] for group in reply["groups"]]
    for i in range(len(collapsed)):
        for j in range(len(collapsed)):
            if collapsed[i]["x"] == collapsed[j]["x"]:  # one column: the same order both ways
                above = collapsed[i]["y"] < collapsed[j]["y"]
                assert above == (expanded[i]["y"] < expanded[j]["y"]) or i == j
            elif collapsed[i]["x"] < collapsed[j]["x"]:
                assert expanded[i]["x"] < expanded[j]["x"]


@fuzz_settings
@given(traced_graphs())
def test_fuzz_the_same_structure_gets_the_same_layout(graph) -> None:
    assert fallback_reply(graph) == fallback_reply(graph)


@fuzz_settings
@given(
    st.lists(
        st.tuples(st.floats(-1e6, 1e6, allow_nan=False), st.floats(1e-3, 1e3, allow_nan=False)),
        min_size=1,
        max_size=30,
    )
)
def test_fuzz_isotonic_is_the_closest_non_decreasing_sequence(pairs) -> None:
    """Against the definition: non-decreasing, and no small move of a block of equal values
    lowers the weighted squared error (pool adjacent violators is exact)."""
    from chainrule.app.layout.layered import isotonic

    values, weights = [v for v, _ in pairs], [w for _, w in pairs]
    fitted = isotonic(values, weights)
    assert all(a <= b + 1e-6 * (1 + abs(b)) for a, b in zip(fitted, fitted[1:], strict=False))

    def error(sequence: list[float]) -> float:
        return sum(w * (f - v) ** 2 for f, v, w in zip(sequence, values, weights, strict=True))

    best = error(fitted)
    start = 0
    while start < len(fitted):  # each block of equal values, moved a little either way
        end = start
        while end + 1 < len(fitted) and fitted[end + 1] == fitted[start]:
            end += 1
        for step in (-1e-3, 1e-3):
            moved = fitted[:start] + [x + step for x in fitted[start : end + 1]] + fitted[end + 1 :]
            if all(a <= b for a, b in zip(moved, moved[1:], strict=False)):
                assert error(moved) >= best - 1e-6 * (1 + best)
        start = end + 1


def test_a_long_chain_with_side_branches_stays_level():
    """`p_k = -w_k * -x_k + p_(k-1)` for 300 statements: the running total is the spine and
    is drawn straight, not a staircase that grows a row per statement (every column holds a
    few cards, so the drawing is a few rows high, however long the program)."""
    lines = ["p0 = 0.5"] + [f"p{k} = -w{k} * -x{k} + p{k - 1}" for k in range(1, 301)]
    from chainrule import engine

    trace = engine.trace("\n".join(lines)).to_dict()
    layout, _ = Layouter(dot_timeout_s=1, dot_max_nodes=0, cache_size=0).layout(
        structure_of(trace["nodes"], trace["edges"], trace["groups"])
    )
    spine = [i for i, node in enumerate(trace["nodes"]) if node["label"].startswith("p")]
    rows = [layout.boxes[i][1] for i in spine[len(spine) // 2 :]]
    assert max(rows) - min(rows) < 200  # px: the second half of the spine within ~2 rows
    assert layout.height < 20 * 84  # and the whole drawing within 20 rows of cards


def test_columns_are_as_wide_as_their_widest_card_and_rank_gap_apart():
    from chainrule.app.layout.layered import layered_centres

    centres = layered_centres(
        3, [(0, 2), (1, 2)], [(56.0, 32.0), (150.0, 64.0), (150.0, 64.0)], rank_gap=60, node_gap=20
    )
    (x0, y0), (x1, y1), (x2, y2) = centres
    assert x0 == x1 == 75.0  # one column, as wide as its widest card, centred in it
    assert x2 == 150 + 60 + 75
    assert abs(y1 - y0) >= (32 + 64) / 2 + 20  # apart by half of each card and the gap
    assert min(y0, y1) < y2 < max(y0, y1)  # the consumer between its inputs


def test_no_native_layout_code_is_loaded():
    """Importing chainrule and laying a big graph out with the fallback loads no igraph (or any
    other native layout library): nothing in a notebook's kernel can corrupt memory."""
    script = (
        "import sys, chainrule\n"
        "lines = ['p0 = 0.5'] + [f'p{k} = -w{k} * -x{k} + p{k - 1}' for k in range(1, 200)]\n"
        "from chainrule.notebook.traces import traced\n"
        "from chainrule.app.layout.layouter import Layouter\n"
        "trace = traced('\\n'.join(lines))\n"
        "assert trace['layout']['engine'] in ('dot', 'sugiyama')\n"
        "print(sorted(m for m in sys.modules if 'igraph' in m.lower()))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@st.composite
def random_dags(draw: st.DrawFn, max_nodes: int = 60) -> tuple[int, list[tuple[int, int]]]:
    """A DAG of up to `max_nodes` nodes in id order (each node's inputs before it)."""
    count = draw(st.integers(1, max_nodes))
    edges = [
        (source, target)
        for target in range(1, count)
        for source in draw(st.lists(st.integers(0, target - 1), max_size=3))
    ]
    return count, edges


@fuzz_settings
@given(random_dags(), st.lists(st.tuples(st.integers(20, 300), st.integers(20, 200)), min_size=60))
def test_fuzz_the_sweeps_stop_where_more_would_only_move_the_drawing(dag, sizes) -> None:
    """The order's sweeps stop at a fixed point and the rows' once a sweep moves every row by the
    same distance (issue 42: the demo's 31,245 vertices were swept 4 times each way, 3 of them
    moving the drawing as a whole): the same order, and rows the full sweeps give moved as a
    whole, which the layout's bounds undo."""
    count, edges = dag
    sizes = [(float(w), float(h)) for w, h in sizes[:count]]
    stopped = layered.ordered(count, edges)
    swept = layered.ordered(count, edges)
    assert stopped.columns == swept.columns
    early = layered.placed_centres(stopped, sizes, rank_gap=40.0, node_gap=20.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layered, "_translated", lambda before, after: False)  # every sweep runs
        full = layered.placed_centres(swept, sizes, rank_gap=40.0, node_gap=20.0)
    moves = [y1 - y0 for (_, y0), (_, y1) in zip(early, full, strict=True)]
    assert [x for x, _ in early] == [x for x, _ in full]
    # (one distance to within what counts as settled: a set of moves rounded to 6 places once
    # held -26.163808 and -26.163807)
    assert max(moves) - min(moves) <= layered.SETTLED, (min(moves), max(moves))


def test_the_order_sweeps_stop_at_a_fixed_point_only():
    """A sweep that moves nothing ends the order's sweeps; one that moves something does not
    (the same order as every ORDER_SWEEPS sweep, by construction: the next sweep reads the same)."""
    count, edges = 6, [(0, 3), (1, 3), (2, 4), (0, 4), (3, 5), (4, 5)]
    counted = []
    real = layered.reorder

    def counting(*args):
        counted.append(1)
        return real(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layered, "reorder", counting)
        layered.ordered(count, edges)
    columns = 3
    per_sweep = 2 * (columns - 1)
    assert len(counted) < layered.ORDER_SWEEPS * per_sweep
    assert len(counted) % per_sweep == 0


def test_the_edges_of_one_source_share_its_lane_in_each_column():
    """A weight read by many samples (micrograd's demo: a weight, the first layer of each of
    100 samples) holds one lane a column, weighing what its edges weigh together, not one
    each: the demo's lanes went from 28,828 to 4,803 and its ordering from 0.5 to 0.1 s."""
    # A spine 0 -> 1 -> 2 -> 3 and three sinks that read 3 and, four columns back, 0.
    edges = [(0, 1), (1, 2), (2, 3), (0, 4), (0, 5), (0, 6), (3, 4), (3, 5), (3, 6)]
    graph = layered.ordered(7, edges)
    assert graph.column == [0, 1, 2, 3, 4, 4, 4] + [1, 2, 3]  # 0's lanes: one a column
    weight = 1.0  # (1 + the longest path to 0 from a leaf, none) ** 2, for each of its edges
    assert graph.consumers[0] == [(1, weight), (7, 3 * weight)]
    assert [graph.inputs[lane] for lane in (7, 8, 9)] == [[(0, 3.0)], [(7, 3.0)], [(8, 3.0)]]
    assert [graph.consumers[lane] for lane in (7, 8)] == [[(8, 3.0)], [(9, 3.0)]]
    assert graph.consumers[9] == [(4, weight), (5, weight), (6, weight)]
    assert graph.input_weight[7:] == graph.consumer_weight[7:] == [3 * weight] * 3
