"""The loss landscape (issue 27, part 6): the root over a grid of two leaves, checked against
sympy's value of the same formula and against a full forward pass of the engine at each point."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given
from program_strategies import fuzz_settings, valid_programs

from chainrule import engine
from chainrule.engine import BadLandscape, landscape

LINE = next(p for p in engine.PRESETS if p["id"] == "line-fit")["source"]
NEURON = next(p for p in engine.PRESETS if p["id"] == "sigmoid-neuron")


def same(a: float, b: float) -> bool:
    """Equal as floats, NaN equal to NaN (a grid point outside the function's domain)."""
    return a == b or (math.isnan(a) and math.isnan(b))


def line_loss_sympy() -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    """The line-fit preset's loss written out by hand: Σ (w·x + b − y)² over its four points."""
    w, b = sp.symbols("w b")
    points = [(1, 3), (2, 5), (3, sp.Rational(15, 2)), (4, 9)]
    return sum((w * x + b - y) ** 2 for x, y in points), w, b


def test_the_grid_spans_both_ranges_evenly_with_their_ends():
    grid = landscape(LINE, {}, parameters=["w", "b"], x_range=(-1, 3), y_range=(0.5, 2.5),
                     points=5)  # fmt: skip
    assert grid.parameters == ["w", "b"]
    assert grid.xs == [-1.0, 0.0, 1.0, 2.0, 3.0]
    assert grid.ys == [0.5, 1.0, 1.5, 2.0, 2.5]
    assert len(grid.losses) == 5 and all(len(row) == 5 for row in grid.losses)


def test_every_grid_value_is_sympys_loss_there():
    loss, w, b = line_loss_sympy()
    grid = landscape(LINE, {}, parameters=["w", "b"], x_range=(-3, 5), y_range=(-4, 4), points=21)
    for i, y in enumerate(grid.ys):
        for j, x in enumerate(grid.xs):
            want = float(loss.subs({w: sp.Float(x, 30), b: sp.Float(y, 30)}))
            assert grid.losses[i][j] == pytest.approx(want, rel=1e-12, abs=1e-12), (x, y)


def test_the_axes_follow_the_order_of_the_parameters():
    """Rows go along the second parameter: swapping the parameters transposes the grid."""
    wb = landscape(LINE, {}, parameters=["w", "b"], x_range=(-1, 3), y_range=(-2, 2), points=7)
    bw = landscape(LINE, {}, parameters=["b", "w"], x_range=(-2, 2), y_range=(-1, 3), points=7)
    assert bw.losses == [list(column) for column in zip(*wb.losses, strict=True)]


def test_the_other_leaves_stay_at_the_request_values():
    """The sigmoid neuron's x is data: moving it moves the whole landscape (tanh-free formula
    checked with sympy: sigmoid(x·w + b) at x = 2)."""
    source = NEURON["source"]
    grid = landscape(source, {"x": 2.0}, parameters=["w", "b"], x_range=(-2, 2),
                     y_range=(-1, 1), points=9)  # fmt: skip
    leaves = dict(engine.trace(source, {"x": 2.0}).graph.leaves)
    x_, w_, b_ = sp.symbols("x w b")
    root = engine.trace(source, {"x": 2.0}).root
    assert set(leaves) == {"x", "w", "b"}
    formula = 1 / (1 + sp.exp(-(x_ * w_ + b_)))
    assert float(formula.subs({x_: 2, w_: leaves["w"].data, b_: leaves["b"].data})) == (
        pytest.approx(root.data, rel=1e-12)
    )
    for i, y in enumerate(grid.ys):
        for j, x in enumerate(grid.xs):
            want = float(formula.subs({x_: 2, w_: sp.Float(x, 30), b_: sp.Float(y, 30)}))
            assert grid.losses[i][j] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("preset_id", ["line-fit", "mlp", "four-examples", "relu", "power"])
def test_each_value_is_exactly_a_forward_pass_of_the_engine(preset_id):
    preset = next(p for p in engine.PRESETS if p["id"] == preset_id)
    leaves = engine.trace(preset["source"], preset["values"]).graph.leaves
    (a, a_leaf), (b, b_leaf) = leaves[-2], leaves[-1]
    x_range = (a_leaf.data - 1.5, a_leaf.data + 2.5)
    y_range = (b_leaf.data - 2, b_leaf.data + 1)
    grid = landscape(preset["source"], preset["values"], parameters=[a, b], x_range=x_range,
                     y_range=y_range, points=6)  # fmt: skip
    for i, y in enumerate(grid.ys):
        for j, x in enumerate(grid.xs):
            want = engine.trace(preset["source"], {**preset["values"], a: x, b: y}).root.data
            assert same(grid.losses[i][j], want), (preset_id, x, y)


@fuzz_settings
@given(valid_programs())
def test_random_programs_landscapes_are_their_forward_passes(program):
    """Recomputing the nodes below two leaves gives what building the graph there gives, on
    every program with two leaves or more (the others have no landscape)."""
    leaves = engine.trace(program.source, program.values).graph.leaves
    if len(leaves) < 2:
        return
    (a, a_leaf), (b, b_leaf) = leaves[0], leaves[1]
    x_range = (a_leaf.data - 1, a_leaf.data + 1)
    y_range = (b_leaf.data - 0.5, b_leaf.data + 2)
    grid = landscape(program.source, program.values, parameters=[a, b], x_range=x_range,
                     y_range=y_range, points=3)  # fmt: skip
    for i, y in enumerate(grid.ys):
        for j, x in enumerate(grid.xs):
            want = engine.trace(program.source, {**program.values, a: x, b: y}).root.data
            assert same(grid.losses[i][j], want), (program.source, x, y)


def test_points_outside_the_domain_are_non_finite_in_json():
    grid = landscape("y = log(w) + b", None, parameters=["w", "b"], x_range=(-1, 1),
                     y_range=(0, 1), points=3)  # fmt: skip
    assert grid.to_dict()["losses"] == [
        ["NaN", "-Infinity", 0.0],
        ["NaN", "-Infinity", 0.5],
        ["NaN", "-Infinity", 1.0],
    ]


BAD = [
    ({"parameters": ["w"]}, "a loss landscape is drawn over exactly two parameters, got 1"),
    ({"parameters": ["w", "b", "x1"]},
     "a loss landscape is drawn over exactly two parameters, got 3"),
    ({"parameters": ["w", "w"]}, "'w' is listed twice in the parameters"),
    ({"parameters": ["w", "loss"]},
     "'loss' is not a leaf of this program, so it cannot be trained; its leaves are: w, b, x1, "
     "y1, x2, y2, x3, y3, x4, y4"),
    ({"x_range": (3.0, -1.0)},
     "the range of 'w' must be two finite numbers, the first below the second, got [3.0, -1.0]"),
    ({"y_range": (2.0, 2.0)},
     "the range of 'b' must be two finite numbers, the first below the second, got [2.0, 2.0]"),
    ({"x_range": (0.0, math.inf)},
     "the range of 'w' must be two finite numbers, the first below the second, got [0.0, inf]"),
    ({"x_range": (1.0,)},
     "the range of 'w' must be two finite numbers, the first below the second, got [1.0]"),
    ({"x_range": (-1e308, 1e308)},
     "the range of 'w' from −1e+308 to 1e+308 is too wide to split into points; narrow it"),
    ({"y_range": (1.0, 1.0000000000000002)},
     "the range of 'b' from 1.0 to 1.0000000000000002 is too narrow to hold 5 different "
     "values; widen it"),
    ({"points": 1}, "points must be a whole number from 2 to 61, got 1"),
    ({"points": 62}, "points must be a whole number from 2 to 61, got 62"),
    ({"points": 2.5}, "points must be a whole number from 2 to 61, got 2.5"),
    ({"points": True}, "points must be a whole number from 2 to 61, got True"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), BAD)
def test_landscapes_that_cannot_be_drawn_say_why(change, message):
    asked = {"parameters": ["w", "b"], "x_range": (-1, 3), "y_range": (-2, 2), "points": 5}
    with pytest.raises(BadLandscape) as caught:
        landscape(LINE, {}, **(asked | change))
    assert caught.value.message == message
    assert caught.value.to_dict()["line"] is None


def test_the_work_bound_names_the_points_that_fit():
    nodes = len(engine.trace(LINE).nodes)  # 29
    with pytest.raises(BadLandscape) as caught:
        landscape(LINE, {}, parameters=["w", "b"], x_range=(0, 1), y_range=(0, 1), points=41,
                  max_node_points=100 * nodes)  # fmt: skip
    assert caught.value.message == (
        f"41 × 41 points of a graph that stands for {nodes} nodes (a call of the program's "
        "function counts as its body's nodes) is too much work for one request (at most "
        f"{100 * nodes:,} node-points); ask for at most 10 points a side"
    )
    fits = landscape(LINE, {}, parameters=["w", "b"], x_range=(0, 1), y_range=(0, 1), points=10,
                     max_node_points=100 * nodes)  # fmt: skip
    assert len(fits.losses) == 10


def test_messages_are_in_the_request_language():
    with pytest.raises(BadLandscape) as caught:
        landscape(LINE, {}, parameters=["w", "b"], x_range=(1, 0), y_range=(0, 1), points=5)
    assert caught.value.message_in("ru") == (
        "диапазон 'w' должен быть парой конечных чисел, первое меньше второго, а получено [1, 0]"
    )
    assert caught.value.message_in("et") == (
        "'w' vahemik peab olema kaks lõplikku arvu, esimene teisest väiksem, aga saadi [1, 0]"
    )


def test_program_errors_are_those_of_trace():
    with pytest.raises(engine.SyntaxError_) as caught:
        landscape("y = w +* b", {}, parameters=["w", "b"], x_range=(0, 1), y_range=(0, 1),
                  points=3)  # fmt: skip
    assert (caught.value.line, caught.value.column) == (1, 8)
