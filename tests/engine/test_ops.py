"""The table of operations (engine/ops.py): its text columns say what its `forward` computes.

sympy reads each column as mathematics: `formula` must be the op, `locals` the local derivatives
`forward` returns and `micrograd` the op in Python, at sample points of every op. The page and
the exported drawing read these columns, so what they show is what the engine computes."""

from __future__ import annotations

import math
import re

import pytest
import sympy as sp

from chainrule.engine.formulas import Formula, formula_of
from chainrule.engine.ops import MINUS, OPS, apply, key_of, page_table

A, B, OUT = sp.symbols("A B OUT")
K = sp.Rational(5, 2)  # the constant exponent of `**k` at the sample points
SAMPLES = [(0.7, 1.3), (2.5, -0.4), (1.9, 3.0)]  # positive first inputs: every op is defined
FUNCTIONS = {
    "relu": lambda x: sp.Max(0, x),
    "tanh": sp.tanh,
    "exp": sp.exp,
    "log": sp.log,
    "sigmoid": lambda x: 1 / (1 + sp.exp(-x)),
    "sin": sp.sin,
    "cos": sp.cos,
    "vpow": lambda a, b: a**b,
}


def read(template: str, out: sp.Expr) -> sp.Expr:
    """A column's text as a sympy expression of A and B (the inputs)."""
    text = template.format("A", "B", k=f"({K})", out="OUT")
    text = text.replace(MINUS, "-").replace("·", "*").replace("²", "**2").replace("^", "**")
    text = re.sub(r"\bln (\w+)", r"log(\1)", text.replace("×", "*"))
    text = re.sub(r"\be\*\*(\w+)", r"exp(\1)", text)
    text = re.sub(r"(\w+)\.relu\(\)", r"relu(\1)", text)
    if " if " in text:  # relu's `1 if A > 0 else 0`
        then, rest = text.split(" if ")
        condition, otherwise = rest.split(" else ")
        when = (sp.sympify(then), sp.sympify(condition))
        return sp.Piecewise(when, (sp.sympify(otherwise), True))
    expression = sp.sympify(text, locals={"A": A, "B": B, "OUT": OUT, **FUNCTIONS})
    return expression.subs(OUT, out)


@pytest.mark.parametrize("name", list(OPS))
def test_formula_locals_and_micrograd_spelling_are_what_forward_computes(name: str) -> None:
    op = OPS[name]
    for a, b in SAMPLES:
        inputs = (a, b)[: op.arity]
        data, local_grads, _ = apply(name, inputs, float(K))
        points = {A: a, B: b}
        for column in (op.formula, op.micrograd):
            assert math.isclose(float(read(column, data).subs(points)), data, rel_tol=1e-12), column
        assert len(op.locals) == op.arity
        for text, local in zip(op.locals, local_grads, strict=True):
            assert math.isclose(float(read(text, data).subs(points)), local, rel_tol=1e-12), text


def test_the_page_reads_every_op_and_the_columns_it_draws() -> None:
    table = page_table()
    assert set(table) == set(OPS)
    for name, row in table.items():
        assert row["glyph"] and row["formula"] and len(row["locals"]) == OPS[name].arity
    assert key_of("**", 2.0) == "**k" and key_of("**") == "**" and key_of("relu") == "relu"


# ---- The formulas: each local derivative is the derivative of the forward (sympy) ----------

LOCAL = {"a": A, "b": B, "k": sp.Symbol("K"), "out": OUT}


def sympy_of(formula: Formula) -> sp.Expr:
    """A formula read by sympy, independently of the engine's own readings of it."""
    head = formula.head
    if head == "var":
        return LOCAL[formula.value]
    if head == "num":
        return sp.nan if math.isnan(formula.value) else sp.nsimplify(formula.value)
    args = [sympy_of(arg) for arg in formula.args]
    if head == "where":
        return sp.Piecewise((args[1], args[0]), (args[2], True))
    return {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "neg": lambda x: -x,
        "pow": lambda x, y: x**y,
        "gt": sp.Gt,
        "ge": sp.Ge,
        "le": sp.Le,
        "eq": sp.Eq,
        "and": sp.And,
    }.get(head, lambda *args: getattr(sp, head)(*args))(*args)  # a function: sympy's, by name


# The math each derived op stands for, written here (not read from the table).
DERIVED_MATH = {"-": A - B, "/": A / B, "neg": -A}


@pytest.mark.parametrize("name", list(OPS))
def test_each_local_derivative_is_the_derivative_of_the_forward(name: str) -> None:
    """sympy differentiates each row's forward formula (for a derived row, the math it stands
    for) and the row's local derivative formulas agree, at sample points of every op."""
    op = OPS[name]
    forward = DERIVED_MATH.get(name, sympy_of(op.forward)).subs(LOCAL["k"], K)
    for a, b in SAMPLES:
        points = {A: a, B: b}
        for symbol, local in zip((A, B), op.local_grads, strict=False):
            expected = sp.diff(forward, symbol).subs(points)
            got = sympy_of(formula_of(local)).subs(OUT, forward).subs(LOCAL["k"], K).subs(points)
            assert math.isclose(float(got), float(expected), rel_tol=1e-12), (name, symbol)


def test_sin_is_one_row_exact_against_sympy() -> None:
    """The op added to show the table: sin's value and derivative at sample points, exact."""
    for x in (0.0, 0.5, -2.0, math.pi / 3, 1e6):
        data, (local,), warning = apply("sin", [x])
        assert (data, local, warning) == (float(sp.sin(x)), float(sp.cos(x)), None)
    assert OPS["sin"].call and page_table()["sin"]["glyph"] == "sin"


NAN = math.nan
INF = math.inf
# PRODUCT.md §2: IEEE, not Python exceptions; each with its warning. (op, inputs, k,
# data, local grads, warning)
EDGES = [
    ("**", (0.0, 2.0), 0, 0.0, (0.0, 0.0), None),  # a = 0: ∂/∂b is 0, not 0·log 0
    ("**", (0.0, 0.0), 0, 1.0, (0.0, 0.0), None),
    ("**", (0.0, -1.0), 0, INF, (-INF, NAN), "division_by_zero"),
    ("**", (-8.0, 1 / 3), 0, NAN, (NAN, NAN), "domain"),  # never complex
    ("**", (-2.0, 3.0), 0, -8.0, (12.0, NAN), None),
    ("**", (10.0, 400.0), 0, INF, (INF, INF), "overflow"),
    ("**k", (0.0,), -1, INF, (-INF,), "division_by_zero"),
    ("**k", (-0.0,), -1, -INF, (-INF,), "division_by_zero"),
    ("**k", (0.0,), 0, 1.0, (0.0,), None),
    ("log", (0.0,), 0, -INF, (INF,), "division_by_zero"),
    ("log", (-1.0,), 0, NAN, (-1.0,), "domain"),
    ("exp", (1000.0,), 0, INF, (INF,), "overflow"),
    ("sigmoid", (-1000.0,), 0, 0.0, (0.0,), None),
    ("sigmoid", (1000.0,), 0, 1.0, (0.0,), None),
    ("/", (1.0, 0.0), 0, INF, (INF, -INF), "division_by_zero"),
    ("/", (0.0, 0.0), 0, NAN, (INF, NAN), "division_by_zero"),
    ("/", (1.0, 3.0), 0, 1 / 3, (1 / 3, -1 / 9), None),
    ("-", (1e308, -1e308), 0, INF, (1.0, -1.0), "overflow"),
    ("neg", (-0.0,), 0, 0.0, (-1.0,), None),
    ("relu", (-0.0,), 0, 0.0, (0.0,), None),
    ("relu", (NAN,), 0, NAN, (0.0,), None),
    ("sin", (INF,), 0, NAN, (NAN,), None),
]


def same(x: float, y: float) -> bool:
    """Equal as IEEE numbers, nan equal to nan and 0.0 apart from -0.0."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


@pytest.mark.parametrize(("name", "inputs", "exponent", "data", "local_grads", "warning"), EDGES)
def test_edge_values_follow_ieee(name, inputs, exponent, data, local_grads, warning) -> None:
    got_data, got_locals, got_warning = apply(name, inputs, float(exponent))
    assert same(got_data, data), got_data
    assert all(same(x, y) for x, y in zip(got_locals, local_grads, strict=True)), got_locals
    assert got_warning == warning


def test_derived_rows_are_their_expansion_in_one_line() -> None:
    """`-`, `/` and `neg` are built from primitives as micrograd builds them; their formulas
    are worked out from the primitives' (no derivative of their own)."""
    assert {name: repr(op.expansion) for name, op in OPS.items() if op.derived} == {
        "-": "a + b * -1",
        "/": "a * _pow(b, -1)",
        "neg": "a * -1",
    }
    assert repr(OPS["/"].local_grads[1]) == "a * (-1 * _pow(b, -2))"
