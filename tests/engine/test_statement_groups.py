"""Groups (issue 11): every node in exactly one group; a group is a statement's nodes or a leaf."""

from __future__ import annotations

import pytest
from statement_programs import layered_program

from chainrule import engine

MLP = next(p for p in engine.PRESETS if p["id"] == "mlp")["source"]


def groups_of(source: str, **options) -> tuple[dict, dict[str, dict]]:
    reply = engine.trace(source, **options).to_dict()
    return reply, {group["name"]: group for group in reply["groups"]}


def check_partition(reply: dict) -> None:
    """Every node in exactly one group, the one its `group` names; roots are members."""
    seen: dict[str, str] = {}
    for group in reply["groups"]:
        assert group["root"] in group["nodes"]
        for node_id in group["nodes"]:
            assert node_id not in seen, f"{node_id} in {seen.get(node_id)} and {group['id']}"
            seen[node_id] = group["id"]
    assert seen == {node["id"]: node["group"] for node in reply["nodes"]}
    assert [g["id"] for g in reply["groups"]] == [f"g{i}" for i in range(len(reply["groups"]))]


@pytest.mark.parametrize("preset", engine.PRESETS, ids=lambda p: p["id"])
def test_every_node_is_in_exactly_one_group(preset) -> None:
    reply, _ = groups_of(preset["source"], values=preset["values"])
    check_partition(reply)
    check_partition(engine.trace(preset["source"], expand_derived=True).to_dict())


def test_the_mlp_groups_are_its_statements() -> None:
    reply, groups = groups_of(MLP)
    statements = [line.split(" = ")[0] for line in MLP.splitlines()]
    assert list(groups) == statements
    nodes = {node["id"]: node for node in reply["nodes"]}
    for name, group in groups.items():
        root = nodes[group["root"]]
        assert root["label"] == name  # a group is named as its statement's value
        if root["kind"] == "leaf":
            assert group["kind"] == "leaf" and group["nodes"] == [root["id"]]
        else:
            assert group["kind"] == "statement"
            assert all(nodes[n]["kind"] != "leaf" for n in group["nodes"])
    assert len(groups["h1"]["nodes"]) == 5  # w11*x1, w12*x2, their sum, + b1, tanh
    assert [nodes[n]["text"] for n in groups["loss"]["nodes"]] == ["(out - y)", "loss"]


def test_only_a_groups_root_feeds_other_groups() -> None:
    """Inner nodes have no name, so only the statement's value is read by later statements."""
    for source in (MLP, layered_program()):
        reply, _ = groups_of(source)
        group_of = {node["id"]: node["group"] for node in reply["nodes"]}
        roots = {group["root"] for group in reply["groups"]}
        for edge in reply["edges"]:
            if group_of[edge["source"]] != group_of[edge["target"]]:
                assert edge["source"] in roots


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Leaves used but never assigned are groups of their own, before the statement's group.
        (
            "c = a * b\nL = c + a * 2",
            [("a", "leaf", 1), ("b", "leaf", 1), ("c", "statement", 1), ("L", "statement", 3)],
        ),
        # The last statement without a name is named by its text.
        ("a = 2\nrelu(a * 3 + 1)", [("a", "leaf", 1), ("relu(a * 3 + 1)", "statement", 5)]),
        # Another name for a node builds nothing: no group of its own.
        ("a = 2\nb = a\nc = b * b", [("a", "leaf", 1), ("c", "statement", 1)]),
        # Versions of a name are groups of their own, as they are nodes of their own.
        (
            "x = 2\nx = x * 3\nx += 1",
            [("x", "leaf", 1), ("x₂", "statement", 2), ("x₃", "statement", 2)],
        ),
        # micrograd code: the same groups.
        (
            "a = Value(2.0, label='a')\nc = (a * a).relu()\nc.backward()",
            [("a", "leaf", 1), ("c", "statement", 2)],
        ),
    ],
)
def test_groups_of_programs(source, expected) -> None:
    reply, _ = groups_of(source)
    check_partition(reply)
    assert [(g["name"], g["kind"], len(g["nodes"])) for g in reply["groups"]] == expected


def test_expanded_derived_ops_stay_in_their_statement() -> None:
    reply, groups = groups_of("a = 2\nb = 3\nc = a / b - 1", expand_derived=True)
    check_partition(reply)
    nodes = {node["id"]: node for node in reply["nodes"]}
    inner = [nodes[n] for n in groups["c"]["nodes"]]
    assert {n["kind"] for n in inner} == {"op", "const"}  # a·b^-1, b^-1, -1, ·(-1), +
    assert len(inner) == 6


def test_a_layered_program_has_sixty_groups_and_about_500_nodes() -> None:
    reply, groups = groups_of(layered_program())
    assert len(groups) == 60
    assert 480 <= len(reply["nodes"]) <= 560
    assert sum(g["kind"] == "leaf" for g in groups.values()) == 10
