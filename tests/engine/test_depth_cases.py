"""Forward mode's tangents and any target's gradients (issue 27, parts 1 and 2) against sympy on
the programs the engine's own cases are made of (engine_cases.PROGRAMS: every preset, and edge
programs with non-finite numbers, negatives, tiny and huge values, -0.0 and every derived op),
plain and expanded, and on programs with functions of their own.

Every node's tangent by every leaf is sympy's ∂node/∂leaf; every node, taken as the target, has
sympy's ∂target/∂leaf as each leaf's gradient. Compared where sympy has a finite real number
and the engine's own numbers under that node are finite (sympy simplifies `exp(x) - exp(x)` to 0
where IEEE gives inf − inf = nan; both are right in their own arithmetic)."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from engine_cases import EDGE_PROGRAMS

from chainrule import engine
from chainrule.engine.ops import DERIVED
from tests.program_strategies import GRAPH_FUNCTIONS, derivatives_at, sympy_of_graph

# A program's own functions (part 4): several parameters, a call inside a call, sin in a body.
FUNCTION_PROGRAMS = [
    ("softplus(x) = log(1 + exp(x))\na = 2\nb = -0.5\ny = softplus(a*b)\nL = y * a", None),
    ("f(x, y) = x*y + sin(x) - y/x\ng(u) = f(u, u**2) * 2\na = 1.5\nb = 0.5\n"
     "h = g(f(a, b))\nL = h + f(b, a)", None),
]  # fmt: skip

PROGRAMS = [(p["source"], p["values"] or None) for p in engine.PRESETS] + EDGE_PROGRAMS


def has_derived(source: str, values) -> bool:
    """Whether expanding changes the graph: it has a derived op (-, /, unary minus)."""
    return any(node.op in DERIVED for node in engine.trace(source, values).nodes)


CASES = [
    *((s, v, False) for s, v in PROGRAMS),
    *((s, v, True) for s, v in PROGRAMS if has_derived(s, v)),
    *((s, v, False) for s, v in FUNCTION_PROGRAMS),
]


def case_id(case: tuple) -> str:
    source, _, expand = case
    return f"{source[:28]!r}-{'expanded' if expand else 'plain'}"


def finite_below(traced) -> set[int]:
    """The ids of the nodes whose every input, all the way down, and every local derivative on
    the way have finite numbers (the node's own value included)."""
    finite: set[int] = set()
    for node in traced.root.backward():  # inputs before their consumers
        numbers = (node.data, *node.local_grads)
        if all(map(math.isfinite, numbers)) and all(c.id in finite for c in node.inputs):
            finite.add(node.id)
    return finite


def expressions(source: str, values, expand: bool, traced) -> dict[int, sp.Expr]:
    """sympy's expression of each node of `traced` (id → expression), with its leaves' symbols.
    A call of the program's own function has none in the plain graph: its named nodes are read
    from the expanded graph (the same labels), the unnamed ones are left out."""
    symbols = {name: sp.Symbol(name) for name, _ in traced.graph.leaves}
    try:
        return sympy_of_graph(traced.root, symbols)
    except KeyError:  # a call: its body is in the expanded graph
        assert not expand
    expanded = engine.trace(source, values, expand_derived=True)
    by_id = sympy_of_graph(expanded.root, symbols)
    by_label = {node.label: by_id[node.id] for node in expanded.nodes if node.label}
    return {node.id: by_label[node.label] for node in traced.nodes if node.label in by_label}


def leaf_point(traced) -> dict[sp.Symbol, sp.Float]:
    return {sp.Symbol(name): sp.Float(leaf.data, 30) for name, leaf in traced.graph.leaves}


def sympy_numbers(expression: sp.Expr, leaves: list[str], at: dict) -> dict[str, float | None]:
    """∂expression/∂leaf at `at` for each leaf, or None where sympy has no finite real number
    (a kink, a value off the reals, an infinity)."""
    wants = derivatives_at(expression, [sp.Symbol(leaf) for leaf in leaves], at, GRAPH_FUNCTIONS)
    return {
        leaf: want.real
        if math.isfinite(want.real) and abs(want.imag) <= 1e-12 * max(1.0, abs(want.real))
        else None
        for leaf, want in zip(leaves, wants, strict=True)
    }


# sympy's ∂node/∂leaf of a case, by (case, node id): both tests below ask for the same numbers
# (a node's tangent by a leaf is the leaf's gradient with the node as the target), and sympy's
# derivative is most of their time. Kept for the module (its file runs on one worker).
SYMPY_NUMBERS: dict[tuple, dict[str, float | None]] = {}


def sympy_number_of(case: tuple, built: dict, node_id: int, leaf: str, at: dict) -> float | None:
    """∂(`case`'s node `node_id`)/∂leaf (its expression `built[node_id]`), computed with every
    leaf's once a module."""
    source, values, expand = case
    key = (source, repr(values), expand, node_id)
    if key not in SYMPY_NUMBERS:
        leaves = [symbol.name for symbol in at]
        SYMPY_NUMBERS[key] = sympy_numbers(built[node_id], leaves, at)
    return SYMPY_NUMBERS[key][leaf]


def agrees(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_node_s_tangent_by_every_leaf_is_sympy_s(case) -> None:
    source, values, expand = case
    plain = engine.trace(source, values, expand_derived=expand)
    built, at = expressions(source, values, expand, plain), leaf_point(plain)
    compared = 0
    for name, _ in plain.graph.leaves:
        forward = engine.trace(source, values, expand_derived=expand, pass_="forward", wrt=name)
        finite = finite_below(forward)
        for node in forward.nodes:
            if node.kind == "const" or node.id not in built or node.id not in finite:
                continue
            want = sympy_number_of(case, built, node.id, name, at)
            if want is None:
                continue
            got = forward.tangents.tangent[node.id]
            assert agrees(got, want), (name, node.label or node.id, got, want)
            compared += 1
    assert compared or not plain.graph.leaves


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_node_as_the_target_gives_sympy_s_gradients(case) -> None:
    source, values, expand = case
    plain = engine.trace(source, values, expand_derived=expand)
    built, at = expressions(source, values, expand, plain), leaf_point(plain)
    finite = finite_below(plain)
    compared = 0
    for node in plain.nodes:
        if node.kind == "const" or node.id not in built or node.id not in finite:
            continue
        traced = engine.trace(source, values, expand_derived=expand, target=f"n{node.id}")
        assert traced.target.id == node.id
        for name, leaf in traced.graph.leaves:
            want = sympy_number_of(case, built, node.id, name, at)
            if want is None:
                continue
            got = traced.grads[leaf.id]
            assert agrees(got, want), (f"n{node.id}", name, got, want)
            compared += 1
    assert compared or not plain.graph.leaves
