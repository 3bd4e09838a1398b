"""Hypothesis strategies for chainrule programs, and an independent oracle to check them against.

- `hostile_text()`: anything a person might paste, biased towards the language's own characters.
- `valid_programs()`: random well-formed programs (leaf declarations, intermediates reused,
  every operator and function, minimal parentheses so precedence is exercised), each with its
  request `values` and the expected root value and gradients, computed by `Oracle` with mpmath
  at 50 digits (numeric derivatives: no chain rule of ours is involved).

`FUZZ_EXAMPLES` (environment) sets how many examples each test under `fuzz_settings` runs: 50
in `make test`, 100,000 in `make fuzz` (which runs every such test: they carry the `fuzz` mark).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

# 50 a property in `make test` (200 before: 85 s of the suite's CPU went to these tests);
# `make fuzz` runs the same properties long.
FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))

_FUZZ_SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz_settings(test: Any) -> Any:
    """`@fuzz_settings` over `@given`: FUZZ_EXAMPLES examples, and the `fuzz` mark, so that
    `make fuzz` (`-k fuzz`) runs this property long whatever its name."""
    return pytest.mark.fuzz(_FUZZ_SETTINGS(test))


FUNCTIONS = ("relu", "tanh", "exp", "log", "sigmoid")
LEAF_NAMES = ("a", "b", "c", "x1", "w_2", "bias")
LANGUAGE_CHARS = "abcxyz_019.e+-*/^()=;#\n \t,relutanhexpogsigmd"

# ---------------------------------------------------------------------------- random text


def hostile_text() -> st.SearchStrategy[str]:
    """Arbitrary text, the language's alphabet, and token soups that almost parse."""
    tokens = st.sampled_from(
        [*FUNCTIONS, *LEAF_NAMES, "(", ")", "+", "-", "*", "/", "**", "^", "=", ";", "\n", "#",
         "1", "2.5", ".5", "1e-3", "1e309", "9**9**9", "__import__", "'s'", "[0]", ".real",
         "lambda", ":", ",", "ｘ", "\x00", "\u200b", " ",
         # the micrograd dialect
         "Value", "Value(", "label", "label=", "'a'", '"b"', ".", ".relu()", ".tanh()", ".exp",
         ".backward()", "backward", "+=", "-=", "*=", "**=", "vpow(", "print(", ".grad", ".label",
         "from micrograd.engine import Value", "import math", "def tanh(x):", "\n    return x"]
    )  # fmt: skip
    return st.one_of(
        st.text(max_size=200),
        st.text(alphabet=LANGUAGE_CHARS, max_size=200),
        st.lists(tokens, max_size=60).map("".join),
        st.lists(tokens, max_size=60).map(" ".join),
    )


# ---------------------------------------------------------------------------- programs as trees

# An expression tree: ("num", text) | ("name", name) | ("neg", e) | (op, left, right) for
# op in + - * / ** | ("call", function, e).
Expr = tuple

PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "**": 4, "num": 5, "name": 5, "call": 5}


def render(expr: Expr, parens: st.DataObject | None = None) -> str:
    """Source text with only the parentheses precedence needs (plus a few redundant ones)."""

    def wrap(child: Expr, min_precedence: int) -> str:
        text = render(child, parens)
        needs = PRECEDENCE[child[0]] < min_precedence
        extra = parens is not None and parens.draw(st.integers(0, 9)) == 0
        return f"({text})" if needs or extra else text

    kind = expr[0]
    if kind in ("num", "name"):
        return expr[1]
    if kind == "neg":
        return "-" + wrap(expr[1], PRECEDENCE["neg"])
    if kind == "call":
        return f"{expr[1]}({render(expr[2], parens)})"
    left, right = expr[1], expr[2]
    if kind == "**":  # right-associative; `-a ** b` is `-(a ** b)`, so a unary left needs ()
        return f"{wrap(left, 5)} ** {wrap(right, PRECEDENCE['neg'])}"
    p = PRECEDENCE[kind]
    return f"{wrap(left, p)} {kind} {wrap(right, p + 1)}"


def numbers() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(["0", "1", "2", "3", "0.5", ".5", "1e-3", "2.5", "10", "1.5e1"]),
        st.floats(0.01, 5, allow_nan=False).map(lambda v: repr(round(v, 3))),
    )


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children),
        st.tuples(st.just("**"), children, st.sampled_from(["2", "3", "0.5", "-1"])).map(
            lambda t: ("**", t[1], ("num", t[2]))
        ),
        st.tuples(st.just("**"), children, children),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("call"), st.sampled_from(FUNCTIONS), children),
    )


# Names are drawn as slots (an index into the names in scope, resolved by `with_names`), so that
# one strategy object serves every program: building strategies per draw is slow.
EXPRESSIONS = st.recursive(
    st.one_of(st.integers(0, 63).map(lambda i: ("slot", i)), numbers().map(lambda t: ("num", t))),
    _extend,
    max_leaves=12,
)


def with_names(expr: Expr, names: list[str]) -> Expr:
    """Replace every ("slot", i) by ("name", names[i mod len(names)])."""
    kind = expr[0]
    if kind == "slot":
        return ("name", names[expr[1] % len(names)])
    if kind == "num":
        return expr
    if kind == "neg":
        return ("neg", with_names(expr[1], names))
    if kind == "call":
        return ("call", expr[1], with_names(expr[2], names))
    return (kind, with_names(expr[1], names), with_names(expr[2], names))


def is_operation(expr: Expr) -> bool:
    """True unless `name = expr` would declare a leaf (`-2.5`) or alias a name (`t = a`)."""
    return expr[0] not in ("num", "name") and not (expr[0] == "neg" and expr[1][0] == "num")


OPERATIONS = EXPRESSIONS.filter(lambda e: is_operation(e) and e[0] != "slot")


@dataclass
class Program:
    source: str
    values: dict[str, float]
    statements: list[tuple[str | None, Expr]] = field(repr=False)


@st.composite
def valid_programs(draw: st.DrawFn, max_statements: int = 4) -> Program:
    """A program that parses: leaf declarations, intermediates using earlier names, a root."""
    names: list[str] = []
    statements: list[tuple[str | None, Expr]] = []
    for name in draw(st.lists(st.sampled_from(LEAF_NAMES), unique=True, max_size=4)):
        value = draw(st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 3)))
        text = repr(value) if draw(st.booleans()) else f"{value:g}"
        statements.append((name, ("num", text)))
        names.append(name)
    free = draw(st.lists(st.sampled_from(("p", "q", "r")), unique=True, min_size=1, max_size=2))
    names.extend(free)  # used without assignment: leaves valued by `values` or 1.0
    for i in range(draw(st.integers(0, max_statements - 1))):
        statements.append((f"t{i}", with_names(draw(OPERATIONS), names)))
        names.append(f"t{i}")
    root = with_names(draw(OPERATIONS), names)
    statements.append((draw(st.sampled_from([None, "L"])), root))
    parens = draw(st.data())
    separators = draw(st.lists(st.sampled_from(["\n", "; ", "\n# a comment\n"]), min_size=10))
    lines = []
    for (name, expr), separator in zip(statements, separators, strict=False):
        text = render(expr, parens)
        lines.append((f"{name} = {text}" if name else text) + separator)
    overridable = [n for n in names if not n.startswith("t")]
    values = draw(
        st.dictionaries(
            st.sampled_from(overridable),
            st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 3)),
        )
    )
    return Program("".join(lines).rstrip("; \n"), values, statements)


# ---------------------------------------------------------------------------- the oracle

mpmath.mp.dps = 50


class NotComparable(Exception):
    """The program leaves the reals or sits on a kink here: no exact derivative to compare."""


class Oracle:
    """Evaluates a `Program` with mpmath: root value, and each leaf's gradient by numeric
    differentiation at 50 digits. Raises NotComparable near kinks, outside the reals, or when
    values are so large that float64 cannot be expected to agree."""

    KINK_DISTANCE = mpmath.mpf("1e-6")
    LARGE = mpmath.mpf("1e12")

    def __init__(self, program: Program) -> None:
        self.program = program
        self.largest = mpmath.mpf(0)  # the largest |intermediate value| seen by `root`
        self.leaf_values: dict[str, mpmath.mpf] = {}
        assigned = set()
        for name, expr in program.statements:
            if name is not None and expr[0] == "num":
                self.leaf_values[name] = mpmath.mpf(float(expr[1]))
            elif name is not None:
                assigned.add(name)
        for name in self._used_names():
            if name not in assigned and name not in self.leaf_values:
                self.leaf_values[name] = mpmath.mpf(1)
        for name, value in program.values.items():
            if name in self.leaf_values:
                self.leaf_values[name] = mpmath.mpf(value)

    def _used_names(self) -> list[str]:
        used: list[str] = []

        def walk(expr: Expr) -> None:
            if expr[0] == "name":
                used.append(expr[1])
            elif expr[0] in ("neg",):
                walk(expr[1])
            elif expr[0] == "call":
                walk(expr[2])
            elif expr[0] not in ("num",):
                walk(expr[1])
                walk(expr[2])

        for _, expr in self.program.statements:
            walk(expr)
        return used

    def root(self, leaf_values: dict[str, mpmath.mpf] | None = None) -> mpmath.mpf:
        env = dict(self.leaf_values if leaf_values is None else leaf_values)
        result = mpmath.mpf(0)
        for name, expr in self.program.statements:
            if name is not None and expr[0] == "num":
                continue  # a leaf: its value is already in env
            result = self._eval(expr, env)
            if name is not None:
                env[name] = result
        return result

    def finite_difference_error(self, leaf: str) -> float:
        """How far a float64 central difference (eps = 1e-6·max(1, |x|)) may be from the true
        derivative: rounding of the largest intermediate value over 2·eps, plus truncation
        (eps²/6 · |f‴|). A gradient check that fails by less than this proves nothing."""
        x = self.leaf_values[leaf]
        eps = mpmath.mpf("1e-6") * max(1, abs(x))
        self.largest = mpmath.mpf(0)
        for shifted in (x - eps, x, x + eps):
            self.root({**self.leaf_values, leaf: shifted})
        rounding = 10 * mpmath.mpf("1.1e-16") * self.largest / eps

        def f(t: mpmath.mpf) -> mpmath.mpf:
            return self.root({**self.leaf_values, leaf: t})

        truncation = eps**2 / 6 * abs(mpmath.diff(f, x, 3))
        return float(rounding + truncation)

    def gradient(self, leaf: str) -> mpmath.mpf:
        def f(x: mpmath.mpf) -> mpmath.mpf:
            return self.root({**self.leaf_values, leaf: x})

        return mpmath.diff(f, self.leaf_values[leaf])

    def _eval(self, expr: Expr, env: dict[str, mpmath.mpf]) -> mpmath.mpf:
        kind = expr[0]
        if kind == "num":
            value = mpmath.mpf(float(expr[1]))
        elif kind == "name":
            value = env[expr[1]]
        elif kind == "neg":
            value = -self._eval(expr[1], env)
        elif kind == "call":
            value = self._call(expr[1], self._eval(expr[2], env))
        else:
            left, right = self._eval(expr[1], env), self._eval(expr[2], env)
            if kind == "+":
                value = left + right
            elif kind == "-":
                value = left - right
            elif kind == "*":
                value = left * right
            elif kind == "/":
                if abs(right) < self.KINK_DISTANCE:
                    raise NotComparable("division by (nearly) zero")
                value = left / right
            else:
                value = self._power(left, right, constant_exponent=expr[2][0] == "num")
        if abs(value) > self.LARGE:
            raise NotComparable("too large for float64 to agree")
        self.largest = max(self.largest, abs(value))
        return value

    def _power(self, base: mpmath.mpf, exponent: mpmath.mpf, constant_exponent: bool):
        if abs(base) < self.KINK_DISTANCE and (not constant_exponent or exponent < 2):
            raise NotComparable("power at (nearly) zero")
        if base < 0 and not (constant_exponent and exponent == int(exponent)):
            raise NotComparable("negative base, non-integer exponent")
        return base**exponent

    def _call(self, function: str, x: mpmath.mpf) -> mpmath.mpf:
        if function == "relu":
            if abs(x) < self.KINK_DISTANCE:
                raise NotComparable("relu at its kink")
            return x if x > 0 else mpmath.mpf(0)
        if function == "tanh":
            return mpmath.tanh(x)
        if function == "exp":
            if x > 27:  # e^27 > 1e12
                raise NotComparable("exp overflow range")
            return mpmath.exp(x)
        if function == "log":
            if x < self.KINK_DISTANCE:
                raise NotComparable("log outside its domain")
            return mpmath.log(x)
        return 1 / (1 + mpmath.exp(-x))


def comparable_oracle(program: Program) -> Oracle:
    """The program's oracle; hypothesis skips a program it refuses (at a kink, off the reals or
    too large to compare)."""
    oracle = Oracle(program)
    try:
        oracle.root()
    except NotComparable:
        assume(False)
    return oracle


def close(actual: float, expected: mpmath.mpf, rel: float = 1e-6, abs_: float = 1e-9) -> bool:
    """float64 result against the 50-digit oracle, with room for float rounding."""
    if not math.isfinite(actual):
        return False
    return abs(mpmath.mpf(actual) - expected) <= abs_ + rel * abs(expected)


def sympy_of(program) -> tuple[dict[str, sp.Expr], dict[str, sp.Symbol]]:
    """Each assigned name's sympy expression in the program's leaf symbols, and the symbols."""
    symbols: dict[str, sp.Symbol] = {}
    named: dict[str, sp.Expr] = {}

    def build(expr) -> sp.Expr:
        kind = expr[0]
        if kind == "num":
            return sp.Float(float(expr[1]), 30)
        if kind == "name":
            if expr[1] in named:
                return named[expr[1]]
            return symbols.setdefault(expr[1], sp.Symbol(expr[1]))
        if kind == "neg":
            return -build(expr[1])
        if kind == "call":
            inner = build(expr[2])
            calls = {"relu": lambda v: sp.Max(0, v), "tanh": sp.tanh, "exp": sp.exp,
                     "log": sp.log, "sigmoid": lambda v: 1 / (1 + sp.exp(-v))}  # fmt: skip
            return calls[expr[1]](inner)
        left, right = build(expr[1]), build(expr[2])
        ops = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q,
               "/": lambda p, q: p / q, "**": lambda p, q: p**q}  # fmt: skip
        return ops[kind](left, right)

    for name, expr in program.statements:
        if name is not None and expr[0] == "num":
            symbols[name] = sp.Symbol(name)
        elif name is not None:
            named[name] = build(expr)
    return named, symbols


def derivative_at(
    expression: sp.Expr,
    symbol: sp.Symbol,
    at: dict[sp.Symbol, Any],
    functions: dict[str, Any] | None = None,
) -> complex:
    """∂expression/∂symbol at the point `at` (symbol → number), to 30 digits: sympy's exact
    derivative, evaluated by mpmath with its common subexpressions computed once. `subs` and
    `evalf` walk the derivative as a tree, which a deep nest of tanh (the deep-tanh preset) makes
    exponential: 12 minutes there, under a second this way. NaN where the derivative has no
    number (relu at its kink: sympy's Heaviside(0) is undefined). `functions`: mpmath's
    versions of the expression's own sympy functions, by name."""
    return derivatives_at(expression, [symbol], at, functions)[0]


def derivatives_at(
    expression: sp.Expr,
    symbols: list[sp.Symbol],
    at: dict[sp.Symbol, Any],
    functions: dict[str, Any] | None = None,
) -> list[complex]:
    """`derivative_at` by each of `symbols`, compiled and evaluated together: one `lambdify` of
    all the derivatives (its common subexpressions shared), where compiling one a symbol was
    most of the depth tests' time."""
    derivatives = [sp.diff(expression, symbol) for symbol in symbols]
    names = list(at)
    modules = [{"Heaviside": _heaviside, **(functions or {})}, "mpmath"]
    with mpmath.workdps(30):
        point = [mpmath.mpf(float(at[name])) for name in names]
        try:
            evaluate = sp.lambdify(names, derivatives, modules=modules, cse=True)
            return [complex(x) for x in evaluate(*point)]
        except (ZeroDivisionError, ValueError, OverflowError):
            pass  # one of them has no number: each on its own, so the others keep theirs
        numbers = []
        for derivative in derivatives:
            evaluate = sp.lambdify(names, derivative, modules=modules, cse=True)
            try:
                numbers.append(complex(evaluate(*point)))
            except (ZeroDivisionError, ValueError, OverflowError):
                numbers.append(complex(math.nan))
        return numbers


def _heaviside(x: Any, *_: Any) -> Any:
    """sympy's Heaviside(x), undefined at 0."""
    if x == 0:
        return mpmath.nan
    return mpmath.mpf(1) if x > 0 else mpmath.mpf(0)


# ---------------------------------------------------------------------------- sympy of a graph


class Tanh(sp.Function):
    """tanh that sympy does not try to simplify: sympy's own asks questions of every level below
    it, which takes minutes on the deep-tanh preset's tanh(2·tanh(2·…)), ten levels deep. Its
    derivative is the textbook one; evaluated as mpmath's tanh (`GRAPH_FUNCTIONS`)."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return 1 - Tanh(self.args[0]) ** 2


# mpmath's versions of the sympy functions `sympy_of_graph` writes, for `derivative_at`.
GRAPH_FUNCTIONS = {"Tanh": mpmath.tanh}

_GRAPH_CALLS = {"relu": lambda v: sp.Max(0, v), "tanh": Tanh, "exp": sp.exp, "log": sp.log,
                "sigmoid": lambda v: 1 / (1 + sp.exp(-v)), "sin": sp.sin,
                "neg": lambda v: -v}  # fmt: skip
_GRAPH_BINARY = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q,
                 "/": lambda p, q: p / q, "**": lambda p, q: p**q}  # fmt: skip


def sympy_of_graph(root: Any, symbols: dict[str, sp.Symbol]) -> dict[int, sp.Expr]:
    """Each node's sympy expression (node id → expression) in the leaves' `symbols`, read from
    the graph under `root` (each node once, in topological order): the math each op of the table
    stands for, written again here with sympy's own functions. A program's own function (a call
    node) raises KeyError: read those from the expanded graph."""
    built: dict[int, sp.Expr] = {}
    for node in root.backward():  # the topological order
        inputs = [built[child.id] for child in node.inputs]
        if node.kind == "leaf":
            built[node.id] = symbols[node.name]
        elif node.kind == "const":
            built[node.id] = sp.Float(node.data, 30)
        elif node.op == "**k":
            built[node.id] = inputs[0] ** sp.Float(node.exponent, 30)
        elif node.op in _GRAPH_BINARY:
            try:
                built[node.id] = _GRAPH_BINARY[node.op](*inputs)
            except ZeroDivisionError:  # 0/0 of two constants: no number, as IEEE's nan
                built[node.id] = sp.nan
        else:
            built[node.id] = _GRAPH_CALLS[node.op](*inputs)
    return built
