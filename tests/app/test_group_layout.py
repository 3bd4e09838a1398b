"""Statement groups in /api/graph (issue 11): a labelled box per statement in the expanded
layout, one card per group in the collapsed one, both laid out once per structure."""

from __future__ import annotations

import shutil

import pytest
from statement_programs import layered_program

from chainrule import engine
from chainrule.app.layout.layouter import Layouter, collapsed_structure, structure_of

MLP = next(p for p in engine.PRESETS if p["id"] == "mlp")["source"]


def overlap(a: dict, b: dict) -> bool:
    return (
        abs(a["x"] - b["x"]) * 2 < a["width"] + b["width"] - 0.01
        and abs(a["y"] - b["y"]) * 2 < a["height"] + b["height"] - 0.01
    )


def contains(outer: dict, inner: dict) -> bool:
    return (
        outer["x"] - outer["width"] / 2 <= inner["x"] - inner["width"] / 2 + 0.01
        and inner["x"] + inner["width"] / 2 <= outer["x"] + outer["width"] / 2 + 0.01
        and outer["y"] - outer["height"] / 2 <= inner["y"] - inner["height"] / 2 + 0.01
        and inner["y"] + inner["height"] / 2 <= outer["y"] + outer["height"] / 2 + 0.01
    )


def check_groups_drawn_apart(reply: dict) -> None:
    """Each box holds its group's cards and no other card or box; collapsed cards never overlap."""
    nodes = {node["id"]: node for node in reply["nodes"]}
    framed = [group for group in reply["groups"] if group["box"] is not None]
    for group in reply["groups"]:
        assert (group["box"] is not None) == (len(group["nodes"]) > 1)
    for group in framed:
        members = set(group["nodes"])
        for node_id, node in nodes.items():
            if node_id in members:
                assert contains(group["box"], node), (group["name"], node_id)
            else:
                assert not overlap(group["box"], node), (group["name"], node_id)
        for other in framed:
            if other is not group:
                assert not overlap(group["box"], other["box"]), (group["name"], other["name"])
    cards = [group["card"] for group in reply["groups"]]
    for i, card in enumerate(cards):
        assert all(not overlap(card, other) for other in cards[i + 1 :])
        assert card["x"] + card["width"] / 2 <= reply["layout"]["collapsed"]["width"]


def test_the_mlp_has_a_box_per_statement_and_a_collapsed_layout(client) -> None:
    reply = client.post("/api/graph", json={"source": MLP}).json()
    assert reply["layout"]["engine"] == "dot"
    assert reply["layout"]["collapsed"]["engine"] == "dot"
    groups = {group["name"]: group for group in reply["groups"]}
    assert [name for name, g in groups.items() if g["box"]] == ["h1", "h2", "out", "loss"]
    check_groups_drawn_apart(reply)
    # Collapsed, the 16 statements are 16 cards; it is much smaller than the expanded drawing.
    collapsed = reply["layout"]["collapsed"]
    assert collapsed["width"] * collapsed["height"] < 0.5 * (
        reply["layout"]["width"] * reply["layout"]["height"]
    )
    # A leaf's card is a leaf's size, a statement's card its root's.
    assert groups["x1"]["card"]["width"] == groups["h1"]["card"]["width"] == 150


def test_both_layouts_keep_every_group_in_the_same_column_and_order(client) -> None:
    """Collapsing moves nothing across: the two layouts order the groups alike."""
    for source in (MLP, layered_program()):
        reply = client.post("/api/graph", json={"source": source}).json()
        nodes = {node["id"]: node for node in reply["nodes"]}
        expanded = [group["box"] or nodes[group["root"]] for group in reply["groups"]]
        collapsed = [group["card"] for group in reply["groups"]]
        columns: dict[float, list[int]] = {}
        for i, card in enumerate(collapsed):
            columns.setdefault(card["x"], []).append(i)
        for members in columns.values():
            by_collapsed = sorted(members, key=lambda i: collapsed[i]["y"])
            by_expanded = sorted(members, key=lambda i: expanded[i]["y"])
            assert by_collapsed == by_expanded
        order = sorted(range(len(collapsed)), key=lambda i: collapsed[i]["x"])
        for left, right in zip(order, order[1:], strict=False):
            if collapsed[left]["x"] < collapsed[right]["x"]:  # a column further right
                assert expanded[left]["x"] < expanded[right]["x"]


def test_a_500_node_program_of_60_statements_lays_out_with_dot(make_client) -> None:
    # How long it takes is measured in bench/layout_cost.py ("60 statements of groups"); here
    # dot has time to spare (at load 10 it outlasted the 2 s default, and the fallback answered).
    client = make_client(dot_timeout_s=30.0)
    reply = client.post("/api/graph", json={"source": layered_program()}).json()
    assert len(reply["groups"]) == 60 and len(reply["nodes"]) > 480
    assert reply["layout"]["engine"] == "dot", "dot answered within its timeout"
    check_groups_drawn_apart(reply)


def test_both_layouts_are_cached_by_structure() -> None:
    layouter = Layouter(dot_timeout_s=5.0, dot_max_nodes=1000, cache_size=8)
    reply = engine.trace(MLP).to_dict()
    structure = structure_of(reply["nodes"], reply["edges"], reply["groups"])
    first, cached = layouter.layout(structure)
    assert cached is False and first.collapsed is not None
    runs = layouter.dot_runs
    again, cached = layouter.layout(structure)
    assert cached is True and again is first and layouter.dot_runs == runs
    # New values, same structure: the same boxes (a slider never moves a group).
    other = engine.trace(MLP, {"x1": 3.0}).to_dict()
    assert structure_of(other["nodes"], other["edges"], other["groups"]).key == structure.key


@pytest.mark.parametrize("settings", [{"dot_max_nodes": 0}, {"dot_binary": "/nonexistent/dot"}])
def test_the_fallback_frames_each_group_and_collapses_it(make_client, settings) -> None:
    reply = make_client(**settings).post("/api/graph", json={"source": MLP}).json()
    assert reply["layout"]["engine"] == "sugiyama"
    assert reply["layout"]["collapsed"]["engine"] == "sugiyama"
    nodes = {node["id"]: node for node in reply["nodes"]}
    for group in reply["groups"]:
        assert (group["box"] is not None) == (len(group["nodes"]) > 1)
        if group["box"]:
            assert all(contains(group["box"], nodes[n]) for n in group["nodes"])
    cards = [group["card"] for group in reply["groups"]]
    assert all(not overlap(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :])


def test_a_graph_of_one_card_groups_is_one_layout(client) -> None:
    """The five-node presets: no boxes, and a group's card is its only node's card."""
    reply = client.post("/api/graph", json={"source": "a = 2\nb = 3\nc = a * b\nL = c + a"}).json()
    nodes = {node["id"]: node for node in reply["nodes"]}
    for group in reply["groups"]:
        assert group["box"] is None
        node = nodes[group["root"]]
        assert group["card"] == {k: node[k] for k in ("x", "y", "width", "height")}
    assert reply["layout"]["collapsed"] == {
        k: reply["layout"][k] for k in ("engine", "width", "height")
    }


def test_the_numbers_reply_has_no_groups(client) -> None:
    reply = client.post("/api/graph", json={"source": MLP}).json()
    numbers = client.post(
        "/api/values", json={"source": MLP, "values": {"x1": 2.0}, "structure": reply["structure"]}
    ).json()
    assert "groups" not in numbers and "group" not in numbers


def repeated_statements(count: int) -> str:
    """`count` statements of one shape, then one of another (a 997-node program is 166 alike)."""
    lines = ["p0 = 0.5"] + [f"p{i} = -w{i} * -x{i} + p{i - 1}" for i in range(1, count + 1)]
    return "\n".join([*lines, f"L = tanh(p{count}) * p0"])


def grouped_structure(source: str):  # noqa: ANN201
    reply = engine.trace(source).to_dict()
    return structure_of(reply["nodes"], reply["edges"], reply["groups"])


@pytest.mark.parametrize(("dot_max_nodes", "engine_name"), [(1000, "dot"), (0, "sugiyama")])
def test_statements_of_one_shape_are_placed_as_if_each_were_laid_out_alone(
    monkeypatch, dot_max_nodes, engine_name
) -> None:
    """Both engines lay out each shape of a statement's inside once (group_layout.same_shapes)
    and the others of that shape take its places, in order: the same boxes as one drawing each
    (the fallback is what lays out micrograd's demo, 3,271 neurons of a few dozen shapes)."""
    from chainrule.app.layout import groups as group_layout

    structure = grouped_structure(repeated_statements(12))
    drawn = []
    real = group_layout.layered_centres
    monkeypatch.setattr(
        group_layout, "layered_centres", lambda n, *a, **k: drawn.append(n) or real(n, *a, **k)
    )
    shared, _ = Layouter(dot_timeout_s=30, dot_max_nodes=dot_max_nodes, cache_size=0).layout(
        structure
    )
    insides_drawn = len(drawn)
    monkeypatch.setattr(group_layout, "same_shapes", lambda graphs: {g: g for g in graphs})
    alone, _ = Layouter(dot_timeout_s=30, dot_max_nodes=dot_max_nodes, cache_size=0).layout(
        structure
    )
    assert shared.engine == engine_name and shared.collapsed is not None
    assert shared == alone
    if engine_name == "sugiyama":  # 12 statements of one shape and the root's: two insides
        assert insides_drawn == 2 and len(drawn) - insides_drawn == 13


def test_with_one_graphviz_slot_the_collapsed_graph_waits_its_turn() -> None:
    """The collapsed graph is drawn beside the insides when a slot is free at once; with one
    slot (or the other taken) the insides wait for it, never falling back for want of a slot."""
    from chainrule.app.layout.graphviz import Graphviz

    structure = grouped_structure(repeated_statements(6))
    two = Layouter(dot_timeout_s=30, dot_max_nodes=1000, cache_size=0)
    one_slot = Graphviz(shutil.which("dot") or "", slots=1)
    one = Layouter(dot_timeout_s=30, dot_max_nodes=1000, cache_size=0, graphviz=one_slot)
    laid_out, _ = one.layout(structure)
    assert laid_out == two.layout(structure)[0] and laid_out.engine == "dot"
    assert (one.dot_runs, two.dot_runs, one_slot.running) == (3, 3, 0)


def test_insides_drawn_for_one_graph_are_not_drawn_again_for_the_next() -> None:
    """A layouter keeps dot's drawing of each statement shape's inside: a new graph made of
    shapes it has drawn runs dot twice (the collapsed and the expanded graph of groups, side by
    side), not three times, and gets the boxes a layouter that never saw them draws."""
    first = grouped_structure(repeated_statements(8))
    second = grouped_structure(repeated_statements(11))  # the same two shapes, more of them
    warm = Layouter(dot_timeout_s=30, dot_max_nodes=1000, cache_size=8)
    warm.layout(first)
    runs = warm.dot_runs
    reused, cached = warm.layout(second)
    alone, _ = Layouter(dot_timeout_s=30, dot_max_nodes=1000, cache_size=0).layout(second)
    assert cached is False and warm.dot_runs - runs == 2
    assert reused == alone and reused.engine == "dot"


def test_a_graph_of_statements_drawn_before_is_not_drawn_again() -> None:
    """An edit inside a statement (its operands swapped) changes the expanded graph but not the
    graph of statements: the layouter keeps dot's drawing of that collapsed graph and runs dot
    for the new inside and the expanded graph only, with the boxes of a layouter that never saw
    either. An edit of what a statement reads changes the collapsed graph: it is drawn anew."""
    source = repeated_statements(8)
    swapped = grouped_structure(source.replace("p3 = -w3 * -x3 + p2", "p3 = p2 + -w3 * -x3"))
    rewired = grouped_structure(source.replace("p3 = -w3 * -x3 + p2", "p3 = -w3 * -x3 + p1"))
    first = grouped_structure(source)
    assert collapsed_structure(swapped).key == collapsed_structure(first).key
    assert collapsed_structure(rewired).key != collapsed_structure(first).key
    warm = Layouter(dot_timeout_s=30, dot_max_nodes=1000, cache_size=8)
    warm.layout(first)
    runs = []
    for edited in (swapped, rewired):
        before = warm.dot_runs
        reused, cached = warm.layout(edited)
        alone, _ = Layouter(dot_timeout_s=30, dot_max_nodes=1000, cache_size=0).layout(edited)
        assert cached is False and reused == alone and reused.engine == "dot"
        runs.append(warm.dot_runs - before)
    # swapped: its new inside, then the expanded graph; rewired: both graphs of groups.
    assert runs == [2, 2]
