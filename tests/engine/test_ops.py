"""The table of operations (engine/ops.py): its text columns say what its `forward` computes.

sympy reads each column as mathematics: `formula` must be the op, `locals` the local derivatives
`forward` returns and `micrograd` the op in Python, at sample points of every op. The page and
the exported drawing read these columns, so what they show is what the engine computes."""

from __future__ import annotations

import math
import re

import pytest
import sympy as sp

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
