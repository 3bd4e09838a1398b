"""Every path of the chain rule: the products of the paths from a leaf to the target sum to the
leaf's gradient (every preset, every leaf); counts and the largest paths against brute force."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chainrule import engine
from chainrule.engine.paths import COUNT_CAP, chain_paths, paths_reply, resolve_leaf
from tests.program_strategies import fuzz_settings, valid_programs

DIAMOND = "a = 2\nb = a + 1\nc = a * 3\nd = b * c"


def every_path(trace, leaf) -> list[float]:
    """Brute force: the product of every path from `leaf` to the target, by depth-first walk
    (multiplied from the leaf's end, as the chain is built)."""
    products = []
    stack = [(trace.target, ())]
    while stack:
        node, locals_ = stack.pop()
        if node is leaf:
            products.append(math.prod(reversed(locals_)))
            continue
        for child, local in zip(node.inputs, node.local_grads, strict=True):
            stack.append((child, (*locals_, local)))
    return products


@pytest.mark.parametrize("preset", engine.PRESETS, ids=lambda p: p["id"])
def test_path_products_sum_to_the_gradient_on_every_preset(preset: dict) -> None:
    traced = engine.trace(preset["source"], preset["values"])
    for name, leaf in traced.graph.leaves:
        found = chain_paths(traced, leaf, 100)
        assert found.complete, name
        total = math.fsum(path.product for path in found.paths)
        grad = traced.grads[leaf.id]
        assert abs(total - grad) <= 1e-12 * abs(grad) or total == grad, (name, total, grad)


def test_the_diamond_s_two_paths_in_words() -> None:
    traced = engine.trace(DIAMOND)
    reply = paths_reply(traced, chain_paths(traced, resolve_leaf(traced, "a"), 20))
    assert reply == {
        "leaf": "n0", "target": "n5", "grad": 15.0, "count": "2", "count_exact": True,
        "complete": True, "sum": 15.0,
        "paths": [
            {"nodes": ["n5", "n4", "n0"], "edges": ["e5", "e2"], "locals": [3.0, 3.0],
             "product": 9.0, "text": "∂d/∂c · ∂c/∂a = 3 · 3 = 9"},
            {"nodes": ["n5", "n2", "n0"], "edges": ["e4", "e0"], "locals": [6.0, 1.0],
             "product": 6.0, "text": "∂d/∂b · ∂b/∂a = 6 · 1 = 6"},
        ],
    }  # fmt: skip


def test_paths_to_another_target_and_from_a_node_it_does_not_depend_on() -> None:
    traced = engine.trace(DIAMOND, target="c")
    to_c = chain_paths(traced, resolve_leaf(traced, "a"), 20)
    assert [p.product for p in to_c.paths] == [3.0] and to_c.grad == 3.0
    from_b = chain_paths(traced, resolve_leaf(traced, "b"), 20)
    assert (from_b.count, from_b.paths, from_b.grad, from_b.complete) == (0, (), 0.0, True)


def test_a_chain_of_diamonds_is_counted_not_listed() -> None:
    # x_{k+1} = x_k·x_k + x_k: three edges from x_k into x_{k+1} (two through the product), so 3ⁿ.
    source = "x0 = 0.5\n" + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(60))
    traced = engine.trace(source)
    found = chain_paths(traced, resolve_leaf(traced, "x0"), 5)
    assert found.count == 3**60 and found.count_exact and not found.complete
    assert len(found.paths) == 5
    sizes = [abs(p.product) for p in found.paths]
    assert sizes == sorted(sizes, reverse=True)
    longer = "x0 = 0.5\n" + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(200))
    traced = engine.trace(longer)
    found = chain_paths(traced, resolve_leaf(traced, "x0"), 5)
    assert found.count == COUNT_CAP and not found.count_exact


@fuzz_settings
@given(valid_programs(), st.integers(1, 6), st.data())
def test_counts_and_the_largest_paths_equal_brute_force(program, limit, data) -> None:
    traced = engine.trace(program.source, program.values)
    assume(len(traced.nodes) < 40 and traced.graph.leaves)
    name, leaf = data.draw(st.sampled_from(traced.graph.leaves))
    products = every_path(traced, leaf)
    found = chain_paths(traced, leaf, limit)
    assert found.count == len(products)
    sizes = sorted((math.inf if p != p else abs(p) for p in products), reverse=True)[:limit]
    assert [math.inf if p.product != p.product else abs(p.product) for p in found.paths] == sizes
    for path in found.paths:  # each listed path is a real chain from the target to the leaf
        assert path.nodes[0] == traced.target.id and path.nodes[-1] == leaf.id
        assert math.prod(reversed(path.locals)) == path.product or math.isnan(path.product)


@pytest.mark.parametrize(
    ("leaf", "error"),
    [
        ("zz", "the paths start from 'zz', which names no node: give a node id (n0, n1, …) or a "
               "name from the program"),
        ("n3", "the paths start from 'n3', a constant: its gradient is not shown; pick a leaf or "
               "another node"),
    ],
)  # fmt: skip
def test_a_bad_leaf_is_a_clear_error(leaf: str, error: str) -> None:
    traced = engine.trace(DIAMOND)
    with pytest.raises(engine.BadLeaf) as raised:
        resolve_leaf(traced, leaf)
    assert raised.value.message == error
