"""The little language in which the table of operations (engine/ops.py) writes every op.

A formula is a tree of variables (`a`, `b`: the op's inputs; `k`: the constant exponent of
`**k`; `out`: the op's own result), numbers and calls of a few primitives, written with
Python's operators so that a row reads like the math: `1 - out * out`. One tree, read three
ways:

- `compile_formula`: a Python function for the engine;
- `python`: Python source for the micrograd scripts, which define `python_helpers`;
- `javascript`: JavaScript source for the page, with `JAVASCRIPT_HELPERS` in scope.

Every primitive follows IEEE 754 in every reading (engine/ieee.py): `log(0)` = −inf,
`0 ** −1` = inf, `(−8) ** (1/3)` = nan, never an exception or a complex number.
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable
from operator import itemgetter
from typing import NamedTuple

from . import ieee

# The variables a formula may read, in the order of a compiled formula's argument tuple.
VARIABLES = ("a", "b", "k", "out")
ATOM = 100  # the precedence of a name, a number or a call
NEGATION = 30  # unary minus
CONDITION = 1  # `x if c else y` and `c ? x : y`: looser than everything


class Spelling(NamedTuple):
    """How a primitive is written in one language: a template over its arguments (`{0}`,
    `{1}`, …) and how tightly the result binds."""

    template: str
    precedence: int


class Primitive(NamedTuple):
    """A primitive of the language: the engine's function, its Python and JavaScript spellings
    and, for one that can fail, the warning a non-finite result is blamed on."""

    run: Callable[..., float]
    python: Spelling
    javascript: Spelling
    warning: Callable[..., str | None] | None = None


def _same(template: str, precedence: int) -> tuple[Spelling, Spelling]:
    return Spelling(template, precedence), Spelling(template, precedence)


def _called(python: str, javascript: str) -> tuple[Spelling, Spelling]:
    return Spelling(python, ATOM), Spelling(javascript, ATOM)


PRIMITIVES: dict[str, Primitive] = {
    "add": Primitive(operator.add, *_same("{0} + {1}", 10)),
    "sub": Primitive(operator.sub, *_same("{0} - {1}", 10)),
    "mul": Primitive(operator.mul, *_same("{0} * {1}", 20)),
    "div": Primitive(
        ieee.divide, Spelling("_div({0}, {1})", ATOM), Spelling("{0} / {1}", 20),
        ieee.divide_warning,
    ),
    "neg": Primitive(operator.neg, *_same("-{0}", NEGATION)),
    "pow": Primitive(ieee.power, *_called("_pow({0}, {1})", "pow({0}, {1})"), ieee.power_warning),
    "exp": Primitive(ieee.exp, *_called("_exp({0})", "Math.exp({0})"), ieee.exp_warning),
    "log": Primitive(ieee.log, *_called("_log({0})", "Math.log({0})"), ieee.log_warning),
    "tanh": Primitive(math.tanh, *_called("math.tanh({0})", "Math.tanh({0})")),
    "sin": Primitive(ieee.sin, *_called("_sin({0})", "Math.sin({0})")),
    "cos": Primitive(ieee.cos, *_called("_cos({0})", "Math.cos({0})")),
    "gt": Primitive(operator.gt, *_same("{0} > {1}", 5)),
    "ge": Primitive(operator.ge, *_same("{0} >= {1}", 5)),
    "le": Primitive(operator.le, *_same("{0} <= {1}", 5)),
    "eq": Primitive(operator.eq, Spelling("{0} == {1}", 5), Spelling("{0} === {1}", 5)),
    "and": Primitive(
        lambda x, y: x and y, Spelling("{0} and {1}", 2), Spelling("{0} && {1}", 2)
    ),
    "where": Primitive(
        lambda condition, then, otherwise: then if condition else otherwise,
        Spelling("{1} if {0} else {2}", CONDITION), Spelling("{0} ? {1} : {2}", CONDITION),
    ),
}  # fmt: skip

# The helpers a micrograd script defines for the primitives it spells `_name(…)`: the engine's
# own functions, by their source, so that the script computes exactly what the engine does.
_SCRIPT_HELPERS = {
    primitive.python.template.partition("(")[0]: primitive.run
    for primitive in PRIMITIVES.values()
    if primitive.python.template.startswith("_")
}
SCRIPT_HELPER_NAMES = tuple(_SCRIPT_HELPERS)

# The page's one helper: Math.pow gives NaN where the base is 1, or −1 with an infinite
# exponent, and IEEE's pow (C's, Python's) gives 1.
JAVASCRIPT_HELPERS = (
    "const pow = (x, y) => (x === 1 || (x === -1 && Math.abs(y) === Infinity) ? 1"
    " : Math.pow(x, y));"
)


# The page's warnings, one function per primitive that can fail, as engine/ieee.py's `*_warning`
# decide (asked only when a result is not finite): C's pow, as CPython's math.pow reads it, fails
# only on finite operands, nan for a domain error and inf for 0 ** negative or an overflow.
JAVASCRIPT_WARNINGS = {
    "div": ("divWarning", '(x, y) => (y === 0 ? "division_by_zero" : null)'),
    "pow": (
        "powWarning",
        "(x, y) => {\n  if (!Number.isFinite(x) || !Number.isFinite(y)) return null;\n"
        "  const r = pow(x, y);\n  if (Number.isFinite(r)) return null;\n"
        '  return x === 0 ? "division_by_zero" : r !== r ? "domain" : "overflow";\n}',
    ),
    "exp": (
        "expWarning",
        '(x) => (Number.isFinite(x) && Math.exp(x) === Infinity ? "overflow" : null)',
    ),
    "log": (
        "logWarning",
        '(x) => (x === 0 ? "division_by_zero" : x < 0 ? "domain" : null)',
    ),
}


# The primitives whose JavaScript spelling calls a function of V8's Math (or `pow`, which calls
# Math.pow): not correctly rounded there, nor in the C library CPython calls, so the page and the
# engine may differ in the last place of their results. Arithmetic and comparisons are IEEE in
# both: the same operations on the same numbers give the same bits.
JAVASCRIPT_INEXACT = frozenset(
    name
    for name, primitive in PRIMITIVES.items()
    if primitive.javascript.template.startswith(("Math.", "pow("))
)


def javascript_exact(formula: Formula) -> bool:
    """Whether the JavaScript of `formula` computes exactly what the engine does (to the bit)."""
    return not any(node.head in JAVASCRIPT_INEXACT for node in formula.walk())


def javascript_warning_helpers() -> list[str]:
    """The lines defining JAVASCRIPT_WARNINGS' functions (after JAVASCRIPT_HELPERS' `pow`)."""
    return [f"const {name} = {body};" for name, body in JAVASCRIPT_WARNINGS.values()]


def python_helpers(used: set[str]) -> list[str]:
    """The lines of Python defining those of the helpers (`_pow`, …) in `used`, in a fixed
    order, each followed by a blank line: the engine's function's own body under the name a
    script calls it by (`def _pow(x, y):`)."""
    lines: list[str] = []
    for name, function in _SCRIPT_HELPERS.items():
        if name in used:
            source = inspect.getsource(function).rstrip("\n").split("\n")
            assert source[0].startswith(f"def {function.__name__}("), "a one-line signature"
            parameters = ", ".join(inspect.signature(function).parameters)
            lines += [f"def {name}({parameters}):", *source[1:], ""]
    return lines


def _operator(head: str) -> tuple[Callable[..., Formula], Callable[..., Formula]]:
    """A Formula operator for the primitive `head`, and its reflected form (`1 - out`)."""

    def forward(self: Formula, other: Term) -> Formula:
        return call(head, self, other)

    def reflected(self: Formula, other: Term) -> Formula:
        return call(head, other, self)

    return forward, reflected


class Formula:
    """A node of a formula: a variable (`head` "var", `value` its name), a number (`head`
    "num", `value` the float) or a call of the primitive `head` on `args`. Immutable; made
    with Python's operators and the functions below."""

    __slots__ = ("head", "args", "value")

    def __init__(self, head: str, args: tuple[Formula, ...] = (), value: object = None) -> None:
        self.head = head
        self.args = args
        self.value = value

    def __repr__(self) -> str:
        return python(self, {name: name for name in VARIABLES})

    # The operators a row is written with: each makes a call of a primitive.
    __add__, __radd__ = _operator("add")
    __sub__, __rsub__ = _operator("sub")
    __mul__, __rmul__ = _operator("mul")
    __truediv__, __rtruediv__ = _operator("div")
    __pow__, __rpow__ = _operator("pow")
    __gt__, _ = _operator("gt")
    __ge__, _ = _operator("ge")
    __le__, _ = _operator("le")
    __and__, _ = _operator("and")

    def __neg__(self) -> Formula:
        return call("neg", self)

    def walk(self) -> list[Formula]:
        """This node and every node below it."""
        found, stack = [], [self]
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(node.args)
        return found


Term = Formula | float


def formula_of(x: Term) -> Formula:
    """`x` as a formula: a number becomes a `num` node."""
    return x if isinstance(x, Formula) else Formula("num", (), float(x))


def call(head: str, *args: Term) -> Formula:
    """The primitive `head` applied to `args`."""
    assert head in PRIMITIVES, head
    return Formula(head, tuple(map(formula_of, args)))


# The variables, and the functions a row writes (the operators come with Formula).
a, b, k, out = (Formula("var", (), name) for name in VARIABLES)


def where(condition: Formula, then: Term, otherwise: Term) -> Formula:
    """`then` where `condition` holds, else `otherwise` (only the branch taken is computed)."""
    return call("where", condition, then, otherwise)


def equal(x: Term, y: Term) -> Formula:
    return call("eq", x, y)


def exp(x: Term) -> Formula:
    return call("exp", x)


def log(x: Term) -> Formula:
    return call("log", x)


def tanh(x: Term) -> Formula:
    return call("tanh", x)


def sin(x: Term) -> Formula:
    return call("sin", x)


def cos(x: Term) -> Formula:
    return call("cos", x)


def substitute(formula: Formula, values: dict[str, Formula]) -> Formula:
    """`formula` with each variable named in `values` replaced by its formula."""
    if formula.head == "var":
        return values.get(formula.value, formula)  # type: ignore[arg-type]
    if formula.head == "num":
        return formula
    return Formula(formula.head, tuple(substitute(arg, values) for arg in formula.args))


def folded(formula: Formula) -> Formula:
    """`formula` with every call on numbers alone computed (`-1 - 1` is `-2`) and every
    `where` on a number decided: what a derived row's chain rule leaves reads as one writes it."""
    if formula.head in ("var", "num"):
        return formula
    args = tuple(folded(arg) for arg in formula.args)
    if formula.head == "where" and args[0].head == "num":
        return args[1] if args[0].value else args[2]
    if all(arg.head == "num" for arg in args):
        return formula_of(float(PRIMITIVES[formula.head].run(*(arg.value for arg in args))))
    return Formula(formula.head, args)


def is_one(formula: Formula) -> bool:
    return formula.head == "num" and formula.value == 1.0


# ---- The engine's reading: a Python function --------------------------------------------

Compiled = Callable[[tuple[float, ...]], float]


def compile_formula(formula: Formula) -> Compiled:
    """A function of the variables' values `(a, b, k, out)` (one tuple) that computes
    `formula` with the primitives' functions; `where` and `and` compute only what they need."""
    head = formula.head
    if head == "var":
        return itemgetter(VARIABLES.index(formula.value))  # type: ignore[arg-type]
    if head == "num":
        constant = formula.value
        return lambda values: constant  # type: ignore[return-value]
    parts = [compile_formula(arg) for arg in formula.args]
    if head == "where":
        condition, then, otherwise = parts
        return lambda values: then(values) if condition(values) else otherwise(values)
    if head == "and":
        left, right = parts
        return lambda values: left(values) and right(values)
    run = PRIMITIVES[head].run
    if len(parts) == 1:
        (only,) = parts
        return lambda values: run(only(values))
    left, right = parts
    return lambda values: run(left(values), right(values))


def compile_tuple(formulas: tuple[Term, ...]) -> Callable[[tuple[float, ...]], tuple]:
    """One function computing every formula of `formulas` into a tuple. When each is a variable
    it picks them in C (`itemgetter`), with no Python call: the locals of `*` are `(b, a)`."""
    parts = tuple(map(formula_of, formulas))
    if len(parts) > 1 and all(part.head == "var" for part in parts):
        return itemgetter(*(VARIABLES.index(part.value) for part in parts))  # type: ignore[arg-type]
    if all(part.head == "num" for part in parts):
        constants = tuple(part.value for part in parts)
        return lambda values: constants
    compiled = [compile_formula(part) for part in parts]
    if len(compiled) == 1:
        (only,) = compiled
        return lambda values: (only(values),)
    first, second = compiled
    return lambda values: (first(values), second(values))


# The four ways to pick two of a binary op's inputs, as plain functions: the hot path calls one
# with the two inputs (`*`'s locals are `(b, a)`), which costs less than picking from a tuple.
_PICKS = {
    ("a", "b"): lambda a, b: (a, b),
    ("b", "a"): lambda a, b: (b, a),
    ("a", "a"): lambda a, b: (a, a),
    ("b", "b"): lambda a, b: (b, b),
}


def pick_of(formulas: tuple[Term, ...]) -> Callable[[float, float], tuple] | None:
    """The function of `(a, b)` giving `formulas` when they are two of the inputs (`*`'s locals
    `(b, a)`); else None."""
    names = tuple(
        part.value if isinstance(part, Formula) and part.head == "var" else None
        for part in formulas
    )
    return _PICKS.get(names)  # type: ignore[arg-type]


def operator_of(formula: Formula) -> Callable[[float, float], float] | None:
    """The primitive's function when `formula` is a primitive applied to `a` and `b` in that
    order (`a + b`, `a * b`), for the hot paths that call it with two numbers; else None."""
    if [arg.value for arg in formula.args if arg.head == "var"] != ["a", "b"]:
        return None
    if len(formula.args) != 2 or formula.head not in PRIMITIVES:
        return None
    return PRIMITIVES[formula.head].run


def warning_of(formula: Formula, values: tuple[float, ...]) -> str | None:
    """The first warning a primitive of `formula` earns at `values`, in the order the formula
    computes (only in the branches `where` takes): what a non-finite result is blamed on.
    Recursive: a formula is a few calls deep."""
    return _evaluate(formula, values)[1]


def _evaluate(formula: Formula, values: tuple[float, ...]) -> tuple[float, str | None]:
    head = formula.head
    if head == "var":
        return values[VARIABLES.index(formula.value)], None  # type: ignore[arg-type]
    if head == "num":
        return formula.value, None  # type: ignore[return-value]
    if head == "where":
        condition, then, otherwise = formula.args
        held, warning = _evaluate(condition, values)
        value, branch_warning = _evaluate(then if held else otherwise, values)
        return value, warning or branch_warning
    arguments = []
    warning = None
    for arg in formula.args:
        value, arg_warning = _evaluate(arg, values)
        arguments.append(value)
        warning = warning or arg_warning
    primitive = PRIMITIVES[head]
    if warning is None and primitive.warning is not None:
        warning = primitive.warning(*arguments)
    return primitive.run(*arguments), warning


# ---- The scripts' and the page's reading: source text -----------------------------------


def python(formula: Formula, names: dict[str, str], operand_of: str | None = None) -> str:
    """`formula` as a Python expression, each variable written as `names` says (`a.data`);
    with `operand_of` (a primitive: "mul"), in parentheses if it needs them as its operand."""
    text, precedence = _spelled(formula, names, "python")
    if operand_of is None or precedence >= PRIMITIVES[operand_of].python.precedence:
        return text
    return f"({text})"


def javascript(formula: Formula, names: dict[str, str]) -> str:
    """`formula` as a JavaScript expression (with JAVASCRIPT_HELPERS in scope)."""
    return _spelled(formula, names, "javascript")[0]


def javascript_warning(formula: Formula, names: dict[str, str]) -> str:
    """A JavaScript expression giving `warning_of(formula, values)`: the first warning (a
    string) a primitive of `formula` earns, in the order the formula computes, or null; only
    in the branches `where` takes. The page asks it only when a result is not finite."""
    head = formula.head
    if head in ("var", "num"):
        return "null"
    if head == "where":
        condition, then, otherwise = formula.args
        branches = javascript_warning(then, names), javascript_warning(otherwise, names)
        taken = "null"
        if branches != ("null", "null"):
            taken = f"({javascript(condition, names)} ? {branches[0]} : {branches[1]})"
        return _first_of([javascript_warning(condition, names), taken])
    parts = [javascript_warning(arg, names) for arg in formula.args]
    if head in JAVASCRIPT_WARNINGS:
        arguments = ", ".join(javascript(arg, names) for arg in formula.args)
        parts.append(f"{JAVASCRIPT_WARNINGS[head][0]}({arguments})")
    return _first_of(parts)


def _first_of(parts: list[str]) -> str:
    """`a ?? b ?? …` of the parts that can be other than null."""
    return " ?? ".join(part for part in parts if part != "null") or "null"


def helpers_used(formula: Formula) -> set[str]:
    """The Python helpers (`_pow`, …) that the Python spelling of `formula` calls."""
    return {
        name
        for node in formula.walk()
        if node.head in PRIMITIVES
        and (name := PRIMITIVES[node.head].python.template.partition("(")[0]) in _SCRIPT_HELPERS
    }


def _number(value: float, language: str) -> tuple[str, int]:
    if math.isnan(value):
        return ("math.nan" if language == "python" else "NaN"), ATOM
    if math.isinf(value):
        text = "math.inf" if language == "python" else "Infinity"
        return (text, ATOM) if value > 0 else (f"-{text}", NEGATION)
    text = repr(value).removesuffix(".0")  # `1 - out * out`, as one writes it
    return text, (NEGATION if text.startswith("-") else ATOM)


def _spelled(formula: Formula, names: dict[str, str], language: str) -> tuple[str, int]:
    """(text, precedence) of `formula`, operands in parentheses where the grammar needs them
    (Python and JavaScript bind these operators alike)."""
    head = formula.head
    if head == "var":
        return names[formula.value], ATOM  # type: ignore[index]
    if head == "num":
        return _number(formula.value, language)  # type: ignore[arg-type]
    spelling: Spelling = getattr(PRIMITIVES[head], language)
    outer = spelling.precedence
    texts = []
    for index, arg in enumerate(formula.args):
        text, inner = _spelled(arg, names, language)
        texts.append(text if inner >= _needed(outer, index) else f"({text})")
    return spelling.template.format(*texts), outer


def _needed(outer: int, index: int) -> int:
    """How tightly operand `index` of an operator of precedence `outer` must bind to go
    without parentheses: a call's arguments never need them; `-(-1)`; left-associative
    operators (`a - (b - c)`); no chained comparisons or conditions."""
    if outer == ATOM:
        return 0
    if outer == NEGATION:
        return NEGATION + 1
    return outer + 1 if index > 0 or outer <= 5 else outer
