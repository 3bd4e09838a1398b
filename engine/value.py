"""The Value node and its operations: micrograd's model with ordered inputs, per-edge local
derivatives, sequential ids and IEEE numbers instead of Python exceptions.

A Value holds its data, grad, an ordered tuple of inputs and the matching tuple of local
derivatives (and plain fields describing it): no closures, so graphs hold no reference cycles
and CPython frees them at once. Every operation is one row of `ops.OPS`; only `+` and `*`, the
hot path of large graphs, are also inlined (`Value.__add__`/`__mul__` and gradcheck's
re-evaluation).
"""

from __future__ import annotations

from .backward import backward
from .ops import apply
from .topo import topo_order


class Value:
    """A scalar node: `data`, `grad`, ordered `inputs` and their `local_grads`.

    `op` is None for leaves and constants, else a key of OPS ("**k" shows as `**` with
    `exponent` set). `id` is the node's position in its graph (sequential, deterministic).
    The remaining slots describe the node for the timeline: kind, span, warning, `name` (the
    program's handle for it: the name it is assigned to, `c₂` for a name's second version) and
    `label` (what a card shows: the label the program sets, `x.label = 'x1*w1'`, else the name;
    a constant's literal).
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
        "name",
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
        self.name = ""
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
        order = topo_order(self)
        for node in order:
            node.grad = 0.0
        backward(self, order[::-1])
        return order
