"""`Value` mixes with plain numbers as micrograd's does (`Value(2.0) * 3`, `2 * a`, `1 - a`,
`2 / a`, `a ** 2`), checked against PyPI micrograd 0.1.0 on the same expressions: data and every
gradient."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from micrograd.engine import Value as MicroValue

from chainrule.engine import Value

# Each builds a result from a Value `a` and plain numbers, in either class.
EXPRESSIONS = {
    "Value(2.0) * 3": lambda a, V: V(2.0) * 3,
    "a * 3": lambda a, V: a * 3,
    "2 * a": lambda a, V: 2 * a,
    "a + 1": lambda a, V: a + 1,
    "1 + a": lambda a, V: 1 + a,
    "-a": lambda a, V: -a,
    "a - 1": lambda a, V: a - 1,
    "1 - a": lambda a, V: 1 - a,
    "a / 2": lambda a, V: a / 2,
    "2 / a": lambda a, V: 2 / a,
    "a ** 2": lambda a, V: a**2,
    "a ** -1": lambda a, V: a**-1,
    "(a * 2 + 1) ** 3 - 4 / (a - 0.5)": lambda a, V: (a * 2 + 1) ** 3 - 4 / (a - 0.5),
    "(2 * a).relu() * (1 - a)": lambda a, V: (2 * a).relu() * (1 - a),
}


def close(x: float, y: float) -> bool:
    # The same operations, but a derived op is one node here and several in micrograd: a
    # product of three factors may round in another order.
    return math.isclose(x, y, rel_tol=1e-14, abs_tol=1e-300)


def both(expression, x: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """(data, grad of a) of `expression` at a = x, ours and micrograd's."""
    results = []
    for V in (Value, MicroValue):
        a = V(x)
        out = expression(a, V)
        out.backward()
        results.append((out.data, a.grad))
    return results[0], results[1]


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_numbers_mix_with_values_as_in_micrograd(name: str) -> None:
    ours, theirs = both(EXPRESSIONS[name], 1.5)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1]), (ours, theirs)


@given(
    name=st.sampled_from(sorted(EXPRESSIONS)),
    x=st.floats(-50, 50).filter(lambda v: abs(v) > 1e-3 and abs(v - 0.5) > 1e-3),
)
def test_numbers_mix_with_values_at_any_point(name: str, x: float) -> None:
    ours, theirs = both(EXPRESSIONS[name], x)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1]), (ours, theirs)


def test_a_number_operand_is_a_constant_node() -> None:
    a = Value(2.0)
    out = 3 - a
    constant, same = out.inputs
    assert same is a and (constant.kind, constant.label, constant.data) == ("const", "3", 3.0)
    assert out.op == "-" and out.local_grads == (1.0, -1.0)


def test_a_number_to_the_power_of_a_value() -> None:
    """`2 ** a` (micrograd 0.1.0 has no __rpow__): 2^a, and its derivative 2^a·ln 2."""
    a = Value(3.0)
    out = 2**a
    out.backward()
    assert (out.data, out.op) == (8.0, "**")
    assert math.isclose(a.grad, 8.0 * math.log(2.0), rel_tol=1e-15)


def test_every_function_of_the_table_is_a_method() -> None:
    a = Value(0.5)
    assert a.sin().data == math.sin(0.5) and a.tanh().data == math.tanh(0.5)
    assert [a.relu().op, a.exp().op, a.log().op, a.sigmoid().op] == [
        "relu",
        "exp",
        "log",
        "sigmoid",
    ]
