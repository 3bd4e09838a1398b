"""Functions a program defines (issue 27, part 4): `softplus(x) = log(1 + exp(x))`.

The oracle is sympy: each body is read by sympy independently of the engine (from the same
tree the program's text is rendered from), differentiated symbolically and evaluated at the
call's arguments; the engine's call node must hold sympy's value and sympy's partial derivative
on each input edge. The expanded graph (`expand_derived`) must compute the very same data.
"""

from __future__ import annotations

import math
import operator

import pytest
import sympy as sp
from hypothesis import assume, example, given
from hypothesis import strategies as st
from program_strategies import EXPRESSIONS, fuzz_settings, is_operation, render, with_names

from chainrule.engine import (
    ArgumentCount,
    BadFunction,
    LimitExceeded,
    NeedsRunning,
    ProgramError,
    SyntaxError_,
    trace,
)
from chainrule.engine.builder import Limits
from chainrule.engine.narration import narrations
from chainrule.engine.step_reader import step_objects

X, Y = sp.symbols("x y", real=True)
SYMBOLS = {"x": X, "y": Y}


def sympy_of(tree: tuple) -> sp.Expr:
    """A tree of tests/program_strategies.py as sympy reads the math it stands for."""
    kind = tree[0]
    if kind == "num":
        return sp.Rational(tree[1])
    if kind == "name":
        return SYMBOLS[tree[1]]
    if kind == "neg":
        return -sympy_of(tree[1])
    if kind == "call":
        inner = sympy_of(tree[2])
        return {
            "relu": lambda e: sp.Piecewise((0, e <= 0), (e, True)),
            "tanh": sp.tanh,
            "exp": sp.exp,
            "log": sp.log,
            "sigmoid": lambda e: 1 / (1 + sp.exp(-e)),
        }[tree[1]](inner)
    left, right = sympy_of(tree[1]), sympy_of(tree[2])
    if (
        kind == "**"
        and left.is_Number
        and right.is_Number
        and (abs(right) > 64 or not right.is_Integer)
    ):
        # A number to a large or fractional numeric power at 50 digits, not exactly: sympy's
        # exact `(15 ** 15) ** 15 ** 15` builds an integer of 10^17 digits (a run hung 25
        # minutes), and an exact fractional power of an integer factors it to take its roots
        # out (a fresh clone's run spent 15 minutes in factorint).
        return sp.Float(left, 50) ** right
    return {
        "+": left + right,
        "-": left - right,
        "*": left * right,
        "/": left / right,
        "**": left**right,
    }[kind]


# Where a body's every step stays within this size at the call's arguments, sympy's exact
# arithmetic stays small. A step far beyond it (exp(exp(exp(3))), 15 ** 15 ** 15) gave sympy
# integers or floats of millions of digits: runs hung for 20 minutes in C, past pytest-timeout.
MODERATE = 1e8

CALLS = {
    "relu": lambda v: max(v, 0.0),
    "tanh": math.tanh,
    "exp": math.exp,
    "log": math.log,
    "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
}
OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
}


def moderate(tree: tuple, point: dict[str, float]) -> bool:
    """Whether each step of `tree` at `point` ({name: value}) is a real number of size at most
    MODERATE, in float64 (CPython's math, not the engine's): the cases handed to sympy."""

    def at(node: tuple) -> float:
        kind = node[0]
        if kind == "num":
            value = float(node[1])
        elif kind == "name":
            value = point[node[1]]
        elif kind == "neg":
            value = -at(node[1])
        elif kind == "call":
            value = CALLS[node[1]](at(node[2]))
        else:
            value = OPERATORS[kind](at(node[1]), at(node[2]))
        if not isinstance(value, float) or not abs(value) <= MODERATE:  # complex, inf or nan
            raise ArithmeticError
        return value

    try:
        at(tree)
    except (ArithmeticError, ValueError):  # overflow, a zero division, log of a negative
        return False
    return True


def real_number(expr: sp.Expr, point: dict) -> float | None:
    """`expr` at `point` as a float, or None where it is not a finite real (or too large for
    float64 to be compared with)."""
    try:
        value = complex(sp.N(expr.subs(point), 30))
    except (TypeError, ValueError):  # relu(1/0): sympy cannot compare zoo with 0
        return None
    if value.imag != 0 or not math.isfinite(value.real) or abs(value.real) > 1e8:
        return None
    return value.real


def call_node(reply: dict, name: str) -> dict:
    return next(node for node in reply["nodes"] if node["op"] == name)


def locals_of(reply: dict, node: dict) -> list[float]:
    edges = [edge for edge in reply["edges"] if edge["target"] == node["id"]]
    return [edge["local_grad"] for edge in sorted(edges, key=lambda edge: edge["index"])]


def close(got: float, want: float) -> bool:
    return abs(got - want) <= 1e-9 * max(1.0, abs(want))


# ---- Random bodies: the call's value and local derivatives are sympy's -------------------

BODIES = EXPRESSIONS.filter(lambda tree: is_operation(tree) and tree[0] != "slot")
ARGUMENTS = st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 3))


# relu(relu(1.516 ** 3)) ** 1.516 ** 3: sympy's exact power of a rational to a rational factors
# integers for 15 minutes (a fresh clone's run); the oracle takes it at 50 digits.
SLOW_POWER = (
    "**",
    ("call", "relu", ("call", "relu", ("**", ("num", "1.516"), ("num", "3")))),
    ("**", ("num", "1.516"), ("num", "3")),
)


@fuzz_settings
@given(BODIES, ARGUMENTS, ARGUMENTS)
@example(SLOW_POWER, -1.629, -2.456)
def test_a_call_holds_sympys_value_and_partial_derivatives(tree, a, b):
    body = with_names(tree, ["x", "y"])
    source = f"f(x, y) = {render(body)}\nL = f(a, b)"
    assume(moderate(body, {"x": a, "y": b}))
    try:
        math_of = sympy_of(body)
    except TypeError:  # relu(1/0): sympy cannot compare zoo with 0
        assume(False)
    except ZeroDivisionError:  # a 50-digit power that is 0 (0 ** 99), divided by: no number
        assume(False)
    point = {X: a, Y: b}
    value = real_number(math_of, point)
    partials = [real_number(sp.diff(math_of, symbol), point) for symbol in (X, Y)]
    assume(value is not None and None not in partials)
    try:
        reply = trace(source, {"a": a, "b": b}).to_dict()
    except ProgramError as error:  # only a body that is a number after folding (`-2`)
        assert error.type == "BadFunction"
        return
    # sympy simplifies `0·log(x)` and `x ** (0·y)` where IEEE gives nan (log(-1)·0): compare
    # where every step of the body and its every local derivative is a finite number.
    expanded = trace(source, {"a": a, "b": b}, expand_derived=True)
    numbers = [x for node in expanded.nodes for x in (node.data, *node.local_grads)]
    assume(all(map(math.isfinite, numbers)))
    node = call_node(reply, "f")
    assert close(node["data"], value), (source, node["data"], value)
    for got, want in zip(locals_of(reply, node), partials, strict=True):
        assert close(got, want), (source, got, want)


@fuzz_settings
@given(BODIES, ARGUMENTS, ARGUMENTS)
def test_the_expanded_graph_computes_the_same_data_and_gradients(tree, a, b):
    body = with_names(tree, ["x", "y"])
    source = f"f(x, y) = {render(body)}\nL = f(a, b) * a"
    try:
        collapsed = trace(source, {"a": a, "b": b})
    except ProgramError:
        return
    expanded = trace(source, {"a": a, "b": b}, expand_derived=True)
    assert repr(expanded.root.data) == repr(collapsed.root.data)  # bit for bit (nan too)
    for name in ("a", "b"):
        got, want = collapsed.grad(name), expanded.grad(name)
        if math.isfinite(want) and abs(want) < 1e8:
            assert close(got, want), (source, name, got, want)


# ---- Handwritten: softplus, two parameters, calls inside calls, Python's def --------------


def test_softplus_is_one_derived_node_whose_local_derivative_is_the_sigmoid():
    reply = trace("softplus(x) = log(1 + exp(x))\na = 2\nb = -0.5\ny = softplus(a*b)").to_dict()
    node = call_node(reply, "softplus")
    assert (node["label"], node["derived"], node["expansion"]) == (
        "y",
        True,
        "log(1 + exp(a*b))",
    )
    assert node["data"] == math.log(1 + math.exp(-1.0))
    (local,) = locals_of(reply, node)
    assert close(local, 1 / (1 + math.exp(1.0)))  # softplus' = sigmoid
    assert [function["definition"] for function in reply["functions"]] == [
        "softplus(x) = log(1 + exp(x))"
    ]
    assert reply["functions"][0]["locals"] == ["\u2202softplus/\u2202x({0})"]
    # The timeline says where the local derivative comes from.
    said = narrations(reply)
    visit = next(i for i, step in enumerate(step_objects(reply)) if step["phase"] == "backward")
    assert "\u2202softplus/\u2202x = 0.268941" in said[visit]


def test_two_parameters_and_calls_inside_calls_match_sympy():
    source = (
        "f(x, y) = x*y + sin(x) - y/x\n"
        "g(u) = f(u, u**2) * 2\n"
        "a = 1.5\nb = 0.5\n"
        "L = g(f(a, b)) + f(b, a)"
    )
    traced = trace(source)
    a, b = sp.symbols("a b", real=True)

    def f(x, y):
        return x * y + sp.sin(x) - y / x

    def g(u):
        return f(u, u**2) * 2

    loss = g(f(a, b)) + f(b, a)
    point = {a: 1.5, b: 0.5}
    assert close(traced.root.data, float(loss.subs(point)))
    for name, symbol in (("a", a), ("b", b)):
        assert close(traced.grad(name), float(sp.diff(loss, symbol).subs(point)))
    reply = traced.to_dict()
    # g's body calls f, so the reply lists both, as they are defined.
    assert [function["name"] for function in reply["functions"]] == ["f", "g"]
    assert [node["op"] for node in reply["nodes"] if node["kind"] == "op"] == ["f", "g", "f", "+"]


def test_the_expanded_program_is_the_body_written_out():
    functions = "softplus(x) = log(1 + exp(x))\nmix(p, q) = softplus(p) * q - p / q\n"
    called = functions + "a = 0.75\nb = -2\nab = a*b\nL = mix(ab, b)"
    written = "a = 0.75\nb = -2\nab = a*b\nL = log(1 + exp(ab)) * b - ab / b"
    assert trace(called).root.data == trace(written).root.data
    for name in ("a", "b"):
        assert close(trace(called).grad(name), trace(written).grad(name))
    expanded, by_hand = trace(called, expand_derived=True), trace(written, expand_derived=True)
    assert [(node.op, node.data) for node in expanded.nodes] == [
        (node.op, node.data) for node in by_hand.nodes
    ]
    assert [expanded.grad(name) for name in "ab"] == [by_hand.grad(name) for name in "ab"]


def test_pythons_def_with_one_return_is_the_same_function():
    native = trace("softplus(x) = log(1 + exp(x))\ny = softplus(a)", {"a": 0.3}).to_dict()
    python = trace(
        "def softplus(x):\n    return (1 + x.exp()).log()\ny = softplus(a)", {"a": 0.3}
    ).to_dict()
    assert call_node(python, "softplus")["data"] == call_node(native, "softplus")["data"]
    assert python["functions"][0]["definition"] == "softplus(x) = (1 + x.exp()).log()"
    assert python["functions"][0]["line"] == 1
    one_line = trace("def sq(x): return x * x\nsq(3)").to_dict()
    assert one_line["nodes"][-1]["data"] == 9.0


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    return x * w\nf(a)",  # reads a global: Python runs it
        "def f(x):\n    return f(x)\nf(a)",  # recursion: Python would run it (and fail)
        "def f(x):\n    return x",
    ],
)
def test_a_python_def_that_is_no_function_of_ours_is_code_that_must_run(source):
    with pytest.raises(NeedsRunning) as caught:
        trace(source)
    assert (caught.value.line, caught.value.column) == (1, 1)


# ---- Refused, each with its position and how to fix it ------------------------------------

REFUSED = [
    (
        "f(x) = f(x) + 1\nf(a)",
        BadFunction, 1, 8,
        "'f' calls itself: recursion is not supported, since a function may call only the "
        "functions defined above it; write the steps out, or as separate functions one after "
        "another",
    ),
    (
        "f(x) = g(x) * 2\ng(x) = f(x) + 1\nf(a)",
        BadFunction, 1, 8,
        "'f' calls 'g', defined below it on line 2: a function may call only the functions "
        "defined above it (so none calls itself, directly or through others); move 'g' above 'f'",
    ),
    (
        "f(x) = x*y\nf(a)",
        BadFunction, 1, 10,
        "'y' is not a parameter of f(x): a function's body may use only its parameters; add "
        "'y' to them and pass it in where you call f",
    ),
    (
        "f(x, y) = x*y\nf(a)",
        ArgumentCount, 2, 1,
        "wrong number of arguments: f(x, y), defined on line 1, needs 2, and this call gives 1",
    ),
    (
        "f(x) = x*2\nL = f()",
        ArgumentCount, 2, 5,
        "wrong number of arguments: f(x), defined on line 1, needs 1, and this call gives 0",
    ),
    (
        "relu(x) = x + 1\nrelu(a)",
        BadFunction, 1, 1,
        "'relu' is one of chainrule's own functions: give yours another name, such as my_relu(x)",
    ),
    (
        "vpow(x) = x + 1\nvpow(a)",
        BadFunction, 1, 1,
        "'vpow' is a name Python or the exported micrograd and PyTorch scripts use: give your "
        "function another name, such as my_vpow(x)",
    ),
    (
        "torch.exp(x) = x * 2\ntorch.exp(a)",
        BadFunction, 1, 1,
        "'exp' is one of chainrule's own functions: give yours another name, such as my_exp(x)",
    ),
    (
        "f(x) = x + 1\nf(x) = x + 2\nf(a)",
        BadFunction, 2, 1,
        "'f' is already defined on line 1: give this function another name, or delete one of "
        "the two definitions",
    ),
    (
        "f(x, x) = x*x\nf(a)",
        BadFunction, 1, 6,
        "the parameter 'x' appears twice in f(x, x): give each parameter its own name",
    ),
    (
        "f(tanh) = tanh*2\nf(a)",
        BadFunction, 1, 3,
        "the parameter 'tanh' of f(tanh) is the name of a function: give the parameter another "
        "name",
    ),
    (
        "f() = 2\nf()",
        BadFunction, 1, 1,
        "f() has no parameters: a function needs at least one, as in f(x) = …",
    ),
    (
        "f(x) = x\nf(a)",
        BadFunction, 1, 8,
        "the body of f(x) is just 'x': a function must compute something; write 'x' where you "
        "would call f",
    ),
    (
        "softplus(x) = log(1 + exp(x))",
        BadFunction, 1, 1,
        "the program defines 'softplus' but computes nothing: end it with an expression that "
        "calls it, such as y = softplus(a)",
    ),
    (
        "y = f(a)\nf(x) = x*2\ny",
        BadFunction, 1, 5,
        "'f' is defined on line 2, below this call: move its definition above the line that "
        "uses it",
    ),
    (
        "y = f * 2\nf(x) = x*2\ny",
        BadFunction, 1, 5,
        "'f' is also the name of the function defined on line 2: give the variable or the "
        "function another name",
    ),
    (
        "f(x) = x*2\nf = 3\nf",
        SyntaxError_, 2, 1,
        "'f' is a function name; choose another name to assign",
    ),
    (
        "f(x) = x*2\nL = f + 1",
        SyntaxError_, 2, 5,
        "'f' is a function: call it as f(x)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("source", "kind", "line", "column", "message"), REFUSED)
def test_a_bad_definition_or_call_is_refused_where_it_is(source, kind, line, column, message):
    with pytest.raises(kind) as caught:
        trace(source)
    error = caught.value
    assert (error.message_in("en"), error.line, error.column) == (message, line, column)
    assert error.caret.strip().startswith("^")
    for lang in ("ru", "et"):  # said in every language, with no English left over
        assert error.message_in(lang) != message


def test_functions_that_double_at_every_level_are_refused_before_they_are_evaluated():
    lines = ["f0(x) = x * x"] + [f"f{i}(x) = f{i - 1}(x) + f{i - 1}(x)" for i in range(1, 40)]
    with pytest.raises(LimitExceeded) as caught:
        trace("\n".join(lines) + "\nf39(a)")
    assert caught.value.line == 14  # f13 stands for 2 ** 14 - 1 nodes, over 10,000
    assert caught.value.message_in("en").startswith("'f13' stands for 16,383 nodes when expanded")


def test_a_call_counts_towards_the_node_limit_as_its_body_does():
    source = "f(x) = x*x + x*x + x*x\n" + "\n".join(f"y{i} = f(a)" for i in range(30)) + "\ny29"
    trace(source, limits=Limits(max_nodes=10))  # the root needs one call: 5 + 2 nodes
    many = "f(x) = x*x + x*x + x*x\ns = f(a) + f(b) + f(c)"
    with pytest.raises(LimitExceeded):
        trace(many, limits=Limits(max_nodes=12))
