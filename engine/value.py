"""The Value node and its operations: micrograd's model with ordered inputs, per-edge local
derivatives, sequential ids and IEEE numbers instead of Python exceptions.

A Value holds only its data, grad, an ordered tuple of inputs and the matching tuple of local
derivatives: no closures, so graphs hold no reference cycles and CPython frees them at once.
Every operation is one entry of `OPS`: a function from the input data (and the constant
exponent of `**k`) to `(data, local_grads, warning)`. Building a node and re-evaluating it
(gradcheck) both use this one table, so no formula is written twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

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


# op -> (arity, function). "**k" is `**` with a constant exponent (one input).
OPS: dict[str, tuple[int, Callable[[Sequence[float], float], OpResult]]] = {
    "+": (2, _add),
    "*": (2, _times),
    "**k": (1, _power_const),
    "**": (2, _power),
    "-": (2, _sub),
    "/": (2, _div),
    "neg": (1, _neg),
    "relu": (1, _relu),
    "tanh": (1, _tanh),
    "exp": (1, _exp),
    "log": (1, _log),
    "sigmoid": (1, _sigmoid),
}
DERIVED = frozenset({"-", "/", "neg"})


def apply(op: str, data: Sequence[float], exponent: float = 0.0) -> OpResult:
    """(data, local_grads, warning) of `op` on input data; warning is domain, overflow,
    division_by_zero or None. Results that turn finite inputs into inf/nan always warn."""
    result, local_grads, warning = OPS[op][1](data, exponent)
    if warning is None and not math.isfinite(result):
        if all(math.isfinite(d) for d in data):
            warning = "domain" if math.isnan(result) else "overflow"
    return result, local_grads, warning


class Value:
    """A scalar node: `data`, `grad`, ordered `inputs` and their `local_grads`.

    `op` is None for leaves and constants, else a key of OPS ("**k" shows as `**` with
    `exponent` set). `id` is the node's position in its graph (sequential, deterministic).
    The remaining slots describe the node for the timeline: kind, label, span, warning.
    """

    __slots__ = (
        "data",
        "grad",
        "inputs",
        "local_grads",
        "op",
        "exponent",
        "id",
        "kind",
        "label",
        "start",
        "end",
        "warning",
    )

    def __init__(
        self,
        data: float,
        inputs: tuple[Value, ...] = (),
        local_grads: tuple[float, ...] = (),
        op: str | None = None,
        exponent: float | None = None,
        warning: str | None = None,
    ) -> None:
        self.data = data
        self.grad = 0.0
        self.inputs = inputs
        self.local_grads = local_grads
        self.op = op
        self.exponent = exponent
        self.id = -1
        self.kind = "op" if inputs else "leaf"
        self.label = ""
        self.start = 0
        self.end = 0
        self.warning = warning

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    @staticmethod
    def make(op: str, inputs: tuple[Value, ...], exponent: float | None = None) -> Value:
        """A new node applying `op` to `inputs`, with its data and local derivatives."""
        if op == "+":
            return inputs[0] + inputs[1]
        if op == "*":
            return inputs[0] * inputs[1]
        data, local_grads, warning = apply(op, [v.data for v in inputs], exponent or 0.0)
        return Value(data, inputs, local_grads, op, exponent, warning)

    # + and * are the hot path of large graphs: OPS["+"] and OPS["*"] inlined (same formulas),
    # with the same non-finite check as `apply`.
    def __add__(self, other: Value) -> Value:
        data = self.data + other.data
        out = Value(data, (self, other), (1.0, 1.0), "+")
        if data - data != 0:  # inf or nan
            out.warning = apply("+", (self.data, other.data))[2]
        return out

    def __mul__(self, other: Value) -> Value:
        a, b = self.data, other.data
        data = a * b
        out = Value(data, (self, other), (b, a), "*")
        if data - data != 0:  # inf or nan
            out.warning = apply("*", (a, b))[2]
        return out

    def __pow__(self, other: Value | float) -> Value:
        if isinstance(other, Value):
            return Value.make("**", (self, other))
        return Value.make("**k", (self,), float(other))

    def __sub__(self, other: Value) -> Value:
        return Value.make("-", (self, other))

    def __truediv__(self, other: Value) -> Value:
        return Value.make("/", (self, other))

    def __neg__(self) -> Value:
        return Value.make("neg", (self,))

    def relu(self) -> Value:
        return Value.make("relu", (self,))

    def tanh(self) -> Value:
        return Value.make("tanh", (self,))

    def exp(self) -> Value:
        return Value.make("exp", (self,))

    def log(self) -> Value:
        return Value.make("log", (self,))

    def sigmoid(self) -> Value:
        return Value.make("sigmoid", (self,))

    def backward(self) -> list[Value]:
        """Set `grad` of every node reachable from self (root grad 1, `+=` in reverse
        topological order); returns the topological order. Iterative: any depth works.
        Grads of the reached nodes are reset to 0 first."""
        from .topo import topo_order

        order = topo_order(self)
        for node in order:
            node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            inputs = node.inputs
            if not inputs:
                continue
            upstream = node.grad
            if len(inputs) == 2:  # most nodes: unpacked, no zip object
                (left, right), (left_local, right_local) = inputs, node.local_grads
                left.grad += left_local * upstream
                right.grad += right_local * upstream
            else:
                for child, local_grad in zip(inputs, node.local_grads, strict=True):
                    child.grad += local_grad * upstream
        return order
