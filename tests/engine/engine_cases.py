"""Runs to compare engine outputs on: every preset and a set of edge programs (non-finite
numbers, negatives, tiny and huge values, -0.0, derived operations), each in every variant
(correct, overwrite, expanded, custom visit orders with late and missing visits), and a
hypothesis strategy of random programs in random variants."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from program_strategies import valid_programs

from chainrule import engine
from chainrule.engine.topo import topo_order

EDGE_PROGRAMS: list[tuple[str, dict[str, float] | None]] = [
    ("a = 0\nb = log(a)\nc = b * 0", None),
    ("x = 1000\ny = exp(x) - exp(x)", None),
    ("y = 9**9**9", None),
    ("a = 2\nb = a / 0\nc = -a / 0\nd = 0/0 + b*c", None),
    ("a = -2\nb = -3\nc = a*b - a/b + tanh(-a) + relu(b)", None),
    ("a = 1e-300\nb = a*a\nc = a*1.5e-7 + b", None),
    ("a = 123456789\nb = a*a*a + 0.1*a", None),
    ("a = 1e15\nb = a + 1e14 + 0.5", None),
    ("a = 0.1\nb = a + 0.2", None),
    ("a = 0\nb = a * -1\nc = b * b", None),
    ("a = -8\nb = a ** (1/3) + a ** 0.5 + (-a) ** a", None),
    ("a = 0\nb = relu(a) * relu(-a) + sigmoid(a) + log(-1*a)", None),
    ("a = 2\nb = a ** -2 + a ** 0 + 0 ** a", None),
    ("x = 3\ny = x\nz = y * x\nw = 5\nz", None),
    ("a = 1.23456789e-5\nb = a * 1e10\nc = b * -1e-9 + 1e20", None),
    (
        "a = 2\nb = a * a * a + a / (a - 3)\nc = relu(b) * tanh(b) + exp(-a) - log(a ** 2)",
        {"a": -1.5},
    ),
    ("x = 0.3\ny = sigmoid(x) ** x + x ** sigmoid(x)", {"x": 7.25, "q": 1}),
    ("a + b * c - d / e", {"a": 1e308, "b": -1e308, "c": 10, "d": 5e-324, "e": 0.5}),
    ("-(-a) * --b", {"a": -0.0, "b": 3}),
    ("a = 1\nb = 2\nc = a*b\nd = c + a\ne = d * c\nf = e - b\ng = f / d", None),
    (" + ".join(f"a{i}*b{i}" for i in range(12)), None),
]

PROGRAMS = [(p["source"], p["values"] or None) for p in engine.PRESETS] + EDGE_PROGRAMS


def variants(source: str, values: dict[str, float] | None) -> list[dict[str, Any]]:
    """Keyword arguments of every variant: both modes, expanded or not, and custom orders
    (the forward order: everything late; reversed but one node: one never visited)."""
    out: list[dict[str, Any]] = []
    for expand in (False, True):
        graph = engine.build_graph(source, values, expand_derived=expand)
        ids = [f"n{node.id}" for node in topo_order(graph.root)]
        operations = [f"n{node.id}" for node in graph.nodes if node.inputs]
        for mode in ("correct", "overwrite"):
            out.append({"expand_derived": expand, "mode": mode})
            out.append({"expand_derived": expand, "mode": mode, "order": ids})
            out.append({"expand_derived": expand, "mode": mode, "order": ids[::-1]})
            out.append({"expand_derived": expand, "mode": mode, "order": operations[::-1][1:]})
    return out


CASES = [
    (source, values, kwargs) for source, values in PROGRAMS for kwargs in variants(source, values)
]


def case_id(case: tuple) -> str:
    source, _, kwargs = case
    order = kwargs.get("order")
    return (
        f"{source[:24]!r}-{kwargs['mode']}-{'expanded' if kwargs['expand_derived'] else 'plain'}"
        f"-{'no order' if order is None else f'order of {len(order)}'}"
    )


# Any finite float: huge, tiny, subnormal, -0.0.
FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def random_runs(draw: st.DrawFn) -> tuple[str, dict[str, float], dict[str, Any]]:
    """A random program with random leaf values (any finite float, or the program's own
    smaller ones) in a random variant, possibly with a random visit order."""
    program = draw(valid_programs())
    expand = draw(st.booleans())
    values = dict(program.values)
    graph = engine.build_graph(program.source, values, expand_derived=expand)
    names = [name for name, _ in graph.leaves]
    if names and draw(st.booleans()):
        values.update(draw(st.dictionaries(st.sampled_from(names), FLOATS)))
    kwargs: dict[str, Any] = {
        "expand_derived": expand,
        "mode": draw(st.sampled_from(["correct", "overwrite"])),
    }
    if draw(st.booleans()):
        ids = [f"n{node.id}" for node in graph.nodes]
        order = draw(st.permutations(ids))
        kwargs["order"] = order[: draw(st.integers(0, len(order)))]
    return program.source, values, kwargs
