"""app/layout/layouter.py: dot and the layered fallback in one coordinate system, cached by
structure."""

from __future__ import annotations

import pytest

from chainrule.app.layout.layered import columns_from_the_root
from chainrule.app.layout.layouter import CARD_SIZE, MARGIN, Layouter, structure_of


def chain_graph(n: int, label: str = "") -> tuple[list[dict], list[dict]]:
    """x0 + x1 + … : leaves and sums, as the engine would give them (ids in creation order)."""
    nodes = [{"id": "n0", "kind": "leaf", "op": None, "label": label}]
    edges = []
    for i in range(1, n):
        leaf, total = f"n{2 * i - 1}", f"n{2 * i}"
        nodes.append({"id": leaf, "kind": "leaf", "op": None, "label": ""})
        nodes.append({"id": total, "kind": "op", "op": "+", "label": ""})
        edges.append({"source": f"n{2 * i - 2}", "target": total})
        edges.append({"source": leaf, "target": total})
    return nodes, edges


def layouter(**options) -> Layouter:
    return Layouter(**{"dot_timeout_s": 5.0, "dot_max_nodes": 1000, "cache_size": 8, **options})


def assert_well_placed(nodes, edges, layout) -> None:
    boxes = dict(zip((n["id"] for n in nodes), layout.boxes, strict=True))
    for edge in edges:
        assert boxes[edge["source"]][0] < boxes[edge["target"]][0]
    for node, (x, y, width, height) in zip(nodes, layout.boxes, strict=True):
        assert (width, height) == CARD_SIZE[node["kind"]]
        assert x - width / 2 >= MARGIN - 0.01 and y - height / 2 >= MARGIN - 0.01
        assert x + width / 2 <= layout.width and y + height / 2 <= layout.height


@pytest.mark.parametrize("engine_options", [{}, {"dot_max_nodes": 0}, {"dot_binary": ""}])
def test_both_engines_put_leaves_left_and_cards_inside(engine_options):
    nodes, edges = chain_graph(6)
    nodes.append({"id": "n11", "kind": "const", "op": None, "label": "3"})
    nodes.append({"id": "n12", "kind": "op", "op": "*", "label": "out"})
    edges += [{"source": "n10", "target": "n12"}, {"source": "n11", "target": "n12"}]
    layout, cached = layouter(**engine_options).layout(structure_of(nodes, edges))
    assert layout.engine == ("dot" if not engine_options else "sugiyama")
    assert cached is False
    assert_well_placed(nodes, edges, layout)


def test_the_layout_is_cached_by_structure_not_by_values():
    subject = layouter()
    nodes, edges = chain_graph(4)
    first, _ = subject.layout(structure_of(nodes, edges))
    for node in nodes:
        node["data"] = 123.0  # values are not part of the structure
    again, cached = subject.layout(structure_of(nodes, edges))
    assert cached is True and again is first
    assert subject.dot_runs == 1


def test_renaming_a_variable_or_changing_an_operation_keeps_the_cached_layout():
    """The layout depends on kinds, edges and groups only (issue 21: a renamed variable made
    every request lay the graph out again)."""
    subject = layouter()
    nodes, edges = chain_graph(4)
    first, _ = subject.layout(structure_of(nodes, edges))
    renamed, cached = subject.layout(structure_of(*chain_graph(4, label="a_new_name")))
    assert cached is True and renamed is first
    for node in nodes:
        if node["op"] == "+":
            node["op"] = "*"
    assert subject.layout(structure_of(nodes, edges)) == (first, True)
    assert subject.dot_runs == 1
    nodes[0]["kind"] = "const"  # a smaller card: another layout
    assert subject.layout(structure_of(nodes, edges))[1] is False


def test_the_cache_is_bounded():
    subject = layouter(cache_size=3)
    for n in range(2, 8):
        subject.layout(structure_of(*chain_graph(n)))
    assert subject.stats().entries == 3


def test_a_dot_timeout_falls_back_to_the_layered_layout():
    subject = layouter(dot_timeout_s=0.001)
    nodes, edges = chain_graph(200)
    layout, _ = subject.layout(structure_of(nodes, edges))
    assert layout.engine == "sugiyama"
    assert subject.dot_runs == 1
    assert_well_placed(nodes, edges, layout)


def test_a_failing_dot_falls_back(tmp_path):
    broken = tmp_path / "dot"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    layout, _ = layouter(dot_binary=str(broken)).layout(structure_of(*chain_graph(3)))
    assert layout.engine == "sugiyama"


def test_same_structure_same_coordinates_every_time():
    first, _ = layouter().layout(structure_of(*chain_graph(30)))
    second, _ = layouter().layout(structure_of(*chain_graph(30)))
    assert first == second


def test_columns_put_each_node_as_far_right_as_its_consumers_allow():
    # 0 → 2, 1 → 2, 2 → 3, 0 → 3: node 0 feeds the root too, but sits left of node 2.
    assert columns_from_the_root(4, [(0, 2), (1, 2), (2, 3), (0, 3)]) == [0, 0, 1, 2]
    # A leaf used only late sits just left of its consumer, not in the first column.
    assert columns_from_the_root(4, [(0, 1), (1, 3), (2, 3)]) == [0, 1, 1, 2]


def test_dot_never_sees_user_text():
    from chainrule.app.layout.layouter import dot_source

    nodes, edges = chain_graph(2, label='x" -> evil [label="')
    text = dot_source(structure_of(nodes, edges))
    assert "evil" not in text and 'label=""' in text
