"""The table of operations: one row per op with its forward (value and local derivatives), its
narration shape, API spelling, DOT label, card glyph, formula, local derivatives as text and
micrograd spelling. Everything that knows about ops (Value, the parser's allow-list, narration,
gradcheck, the API schema, the export, the page through static/js/ops.js) reads this table.

Every forward is IEEE: overflow gives ±inf, domain errors nan, with a warning instead of a
Python exception."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

INF = math.inf
NAN = math.nan

Warning_ = str | None
OpResult = tuple[float, tuple[float, ...], Warning_]


def _is_odd_integer(k: float) -> bool:
    return math.isfinite(k) and k == int(k) and int(k) % 2 == 1


def power(a: float, k: float) -> tuple[float, Warning_]:
    """a ** k as IEEE does it: overflow -> ±inf, 0 ** negative -> inf,
    negative ** fraction -> nan."""
    try:
        return math.pow(a, k), None
    except OverflowError:
        return (-INF if a < 0 and _is_odd_integer(k) else INF), "overflow"
    except ValueError:
        if a == 0:
            return (math.copysign(INF, a) if _is_odd_integer(k) else INF), "division_by_zero"
        return NAN, "domain"


def divide(a: float, b: float) -> tuple[float, Warning_]:
    """a / b with b == 0 giving ±inf (or nan for 0/0) and a division_by_zero warning."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return NAN, "division_by_zero"
        return math.copysign(INF, a) * math.copysign(1.0, b), "division_by_zero"
    try:
        return a / b, None
    except OverflowError:  # pragma: no cover - float division does not raise on overflow
        return INF, "overflow"


def _mul(a: float, b: float) -> float:
    return a * b


def _add(x: Sequence[float], k: float) -> OpResult:
    return x[0] + x[1], (1.0, 1.0), None


def _times(x: Sequence[float], k: float) -> OpResult:
    a, b = x
    return a * b, (b, a), None


def _power_const(x: Sequence[float], k: float) -> OpResult:
    a = x[0]
    data, warning = power(a, k)
    return data, (_base_local(a, k),), warning


def _power(x: Sequence[float], k: float) -> OpResult:
    a, b = x
    data, warning = power(a, b)
    if a > 0:
        exponent_local = data * math.log(a)
    elif a == 0 and b >= 0:
        exponent_local = 0.0  # a^b stays 0 (or 1 at b = 0) as b moves: PyTorch's convention
    else:
        exponent_local = NAN
    return data, (_base_local(a, b), exponent_local), warning


def _base_local(a: float, k: float) -> float:
    """∂(a^k)/∂a = k·a^(k−1); 0 when k = 0 (a^0 is constant 1 even at a = 0, where the
    formula would give 0·0^−1 = NaN), as PyTorch does."""
    return 0.0 if k == 0 else k * power(a, k - 1)[0]


def _sub(x: Sequence[float], k: float) -> OpResult:
    return x[0] - x[1], (1.0, -1.0), None


def _div(x: Sequence[float], k: float) -> OpResult:
    a, b = x
    data, warning = divide(a, b)
    inverse = divide(1.0, b)[0]
    return data, (inverse, -a * inverse * inverse), warning


def _neg(x: Sequence[float], k: float) -> OpResult:
    return -x[0], (-1.0,), None


def _relu(x: Sequence[float], k: float) -> OpResult:
    a = x[0]
    return (a if a > 0 or math.isnan(a) else 0.0), (1.0 if a > 0 else 0.0,), None


def _tanh(x: Sequence[float], k: float) -> OpResult:
    t = math.tanh(x[0])
    return t, (1.0 - t * t,), None


def _exp(x: Sequence[float], k: float) -> OpResult:
    try:
        e = math.exp(x[0])
    except OverflowError:
        return INF, (INF,), "overflow"
    return e, (e,), None


def _log(x: Sequence[float], k: float) -> OpResult:
    a = x[0]
    if a > 0:
        return math.log(a), (1.0 / a,), None
    if a == 0:
        return -INF, (math.copysign(INF, a),), "division_by_zero"
    if math.isnan(a):
        return NAN, (NAN,), None
    return NAN, (1.0 / a,), "domain"


def _sigmoid(x: Sequence[float], k: float) -> OpResult:
    a = x[0]
    if a >= 0:
        s = 1.0 / (1.0 + math.exp(-a))
    elif a < 0:
        z = math.exp(a)
        s = z / (1.0 + z)
    else:
        s = NAN
    return s, (s * (1.0 - s),), None


class Op(NamedTuple):
    """One row of the table of operations: everything the engine, the API and the page know of
    an op. Text columns are templates with `{0}`, `{1}` the inputs, `{k}` the constant exponent
    of `**k` and `{out}` the op's own result.

    `forward` maps the input data (and the constant exponent of `**k`) to
    `(data, local_grads, warning)`; `shape` is the formula in narration; `public` is the op as
    the API spells it (`**k` is `**` with `exponent` set); `dot` its label in the exported
    drawing (micrograd's `draw_dot`); `glyph` its tag on a card; `formula` the formula in the
    page's explanations; `locals` each input's local derivative as the page writes it (what
    `forward` computes); `micrograd` the expression in a micrograd script, which uses `helper`
    (a function the script defines: micrograd 0.1.0 has only `+ * ** relu - / neg`); `torch`
    the expression in a PyTorch script (a `torch.<name>({0})` spelling is also read in programs,
    as the lecture's PyTorch cell writes it); `call` ops are written `name(x)` in programs;
    `derived` ops are micrograd-expressible through primitives (`expand_derived`)."""

    arity: int
    forward: Callable[[Sequence[float], float], OpResult]
    shape: str
    public: str
    dot: str
    glyph: str
    formula: str
    locals: tuple[str, ...]
    micrograd: str
    torch: str
    helper: str | None = None
    call: bool = False
    derived: bool = False


MINUS = "\u2212"  # the page's minus sign
OPS: dict[str, Op] = {
    "+": Op(2, _add, "{0} + {1}", "+", "+", "+", "{0} + {1}", ("1", "1"), "{0} + {1}", "{0} + {1}"),
    "*": Op(
        2, _times, "{0}·{1}", "*", "*", "×", "{0}·{1}", ("{1}", "{0}"), "{0} * {1}", "{0} * {1}"
    ),
    "**k": Op(
        1, _power_const, "{0}^{k}", "**", "**{k}", "**{k}", "{0} ** {k}",
        (f"{{k}}·{{0}}^({{k}} {MINUS} 1)",), "{0} ** {k}", "{0} ** {k}",
    ),
    "**": Op(
        2, _power, "{0}^{1}", "**", "**", "**", "{0} ** {1}",
        (f"{{1}}·{{0}}^({{1}} {MINUS} 1)", "{0}^{1}·ln {0}"), "vpow({0}, {1})", "{0} ** {1}",
        helper="vpow",
    ),
    "-": Op(
        2, _sub, "{0} - {1}", "-", "-", MINUS, f"{{0}} {MINUS} {{1}}", ("1", f"{MINUS}1"),
        "{0} - {1}", "{0} - {1}", derived=True,
    ),
    "/": Op(
        2, _div, "{0} / {1}", "/", "/", "÷", "{0} / {1}", ("1/{1}", f"{MINUS}{{0}}/{{1}}²"),
        "{0} / {1}", "{0} / {1}", derived=True,
    ),
    "neg": Op(
        1, _neg, "-{0}", "neg", "neg", "neg", f"{MINUS}{{0}}", (f"{MINUS}1",), "-{0}", "-{0}",
        derived=True,
    ),
    "relu": Op(
        1, _relu, "relu({0})", "relu", "relu", "relu", "relu({0})", ("1 if {0} > 0 else 0",),
        "{0}.relu()", "torch.relu({0})", call=True,
    ),
    "tanh": Op(
        1, _tanh, "tanh({0})", "tanh", "tanh", "tanh", "tanh({0})", (f"1 {MINUS} {{out}}²",),
        "tanh({0})", "torch.tanh({0})", helper="tanh", call=True,
    ),
    "exp": Op(
        1, _exp, "exp({0})", "exp", "exp", "exp", "exp({0})", ("e^{0}",), "exp({0})",
        "torch.exp({0})", helper="exp", call=True,
    ),
    "log": Op(
        1, _log, "log({0})", "log", "log", "log", "log({0})", ("1/{0}",), "log({0})",
        "torch.log({0})", helper="log", call=True,
    ),
    "sigmoid": Op(
        1, _sigmoid, "sigmoid({0})", "sigmoid", "sigmoid", "σ", "sigmoid({0})",
        (f"{{out}}·(1 {MINUS} {{out}})",), "sigmoid({0})", "torch.sigmoid({0})", helper="sigmoid",
        call=True,
    ),
}  # fmt: skip


def key_of(public: str, exponent: object = None) -> str:
    """The table's key for an op as the API writes it (`**` with an exponent is `**k`)."""
    return "**k" if public == "**" and exponent is not None else public


def page_table() -> dict[str, dict[str, object]]:
    """The columns of the table the page reads (embedded in the page as JSON), by op key."""
    return {
        name: {
            "arity": op.arity,
            "public": op.public,
            "glyph": op.glyph,
            "formula": op.formula,
            "locals": list(op.locals),
            "micrograd": op.micrograd,
            "torch": op.torch,
            "helper": op.helper,
            "call": op.call,
        }
        for name, op in OPS.items()
    }


# The functions a program may call, in the table's order (the parser's allow-list).
FUNCTIONS = tuple(name for name, op in OPS.items() if op.call)
# The functions a program may also call as PyTorch spells them (`torch.tanh(x)`), by that
# spelling: the table's `torch` column where it is a call of the one input.
TORCH_FUNCTIONS = {
    op.torch[: -len("({0})")]: name
    for name, op in OPS.items()
    if op.call and op.torch.startswith("torch.") and op.torch.endswith("({0})")
}
DERIVED = frozenset(name for name, op in OPS.items() if op.derived)


def apply(op: str, data: Sequence[float], exponent: float = 0.0) -> OpResult:
    """(data, local_grads, warning) of `op` on input data; warning is domain, overflow,
    division_by_zero or None. Results that turn finite inputs into inf/nan always warn."""
    result, local_grads, warning = OPS[op].forward(data, exponent)
    if warning is None and not math.isfinite(result):
        if all(math.isfinite(d) for d in data):
            warning = "domain" if math.isnan(result) else "overflow"
    return result, local_grads, warning
