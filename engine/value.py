"""The Value node and its operations: micrograd's model with ordered inputs, per-edge local
derivatives, sequential ids and IEEE numbers instead of Python exceptions.

A Value holds its data, grad, an ordered tuple of inputs and the matching tuple of local
derivatives (and plain fields describing it): no closures, so graphs hold no reference cycles
and CPython frees them at once. Every operation is a row of `ops.OPS`, read from there; plain
numbers mix in as in micrograd (`2 * a`, `1 - a`, `a / 2`).
"""

from __future__ import annotations

from collections.abc import Callable

from .backward import backward
from .formulas import operator_of, pick_of
from .ops import FUNCTIONS, OPS, apply
from .topo import topo_order


class Value:
    """A scalar node: `data`, `grad`, ordered `inputs` and their `local_grads`.

    `op` is None for leaves and constants, else a key of OPS ("**k" shows as `**` with
    `exponent` set) or, for a call of a function the program defines, its name (`function`
    is then that Function, whose row stands in for the table's: ops.row_of). `id` is the
    node's position in its graph (sequential, deterministic).
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
        "function",
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
        self.function = None  # the program's function a call node applies (engine/functions.py)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    @staticmethod
    def make(op: str, inputs: tuple[Value, ...], exponent: float | None = None) -> Value:
        """A new node applying `op` to `inputs`, with its data and local derivatives."""
        data, local_grads, warning = apply(op, [v.data for v in inputs], exponent or 0.0)
        return Value(data, inputs, local_grads, op, exponent, warning)

    @staticmethod
    def constant(number: float) -> Value:
        """A number used as an operand (`a + 1`): a constant node, as in a program."""
        node = Value(float(number))
        node.kind = "const"
        node.label = repr(float(number)).removesuffix(".0")
        return node

    def __sub__(self, other: Value | float) -> Value:
        return Value.make("-", (self, _value(other)))

    def __rsub__(self, other: float) -> Value:
        return Value.make("-", (_value(other), self))

    def __truediv__(self, other: Value | float) -> Value:
        return Value.make("/", (self, _value(other)))

    def __rtruediv__(self, other: float) -> Value:
        return Value.make("/", (_value(other), self))

    def __pow__(self, other: Value | float) -> Value:
        """`a ** 2` (a number: micrograd's `**k`) or `a ** b` (a Value exponent)."""
        if isinstance(other, Value):
            return Value.make("**", (self, other))
        return Value.make("**k", (self,), float(other))

    def __rpow__(self, other: float) -> Value:
        return Value.make("**", (_value(other), self))

    def __neg__(self) -> Value:
        return Value.make("neg", (self,))

    def backward(self) -> list[Value]:
        """Set `grad` of every node reachable from self (root grad 1, `+=` in reverse
        topological order); returns the topological order. Iterative: any depth works.
        Grads of the reached nodes are reset to 0 first."""
        order = topo_order(self)
        for node in order:
            node.grad = 0.0
        backward(self, order[::-1])
        return order


Operand = Value | float


def _value(operand: Operand) -> Value:
    return operand if isinstance(operand, Value) else Value.constant(operand)


Method = Callable[[Value, Operand], Value]


def _operator(key: str) -> tuple[Method, Method]:
    """Value's method for the row `key` whose forward is one operator on `a` and `b` (`+`,
    `*`), and its reflected method (`2 * a`). The hot path of large graphs: the row's formulas
    are read once, here (the operator as a C function, its locals a constant or picked from
    the inputs), not per node through `apply`."""
    row = OPS[key]
    compute = operator_of(row.forward)  # type: ignore[arg-type]
    assert compute is not None, key
    # Locals that are numbers (`+`: 1, 1) are one tuple for every node, else two of the inputs
    # (`*`: b, a), picked by a plain function of them: no tuple of the inputs to pick from.
    constant = tuple(row.local_grads) if all(type(x) is float for x in row.local_grads) else ()
    pick = None if constant else pick_of(row.local_grads)
    assert constant or pick is not None, key

    def method(self: Value, other: Operand) -> Value:
        try:  # free when it holds (most calls), unlike an isinstance check
            y = other.data  # type: ignore[union-attr]
        except AttributeError:  # a number: `a + 1`
            other = Value.constant(other)  # type: ignore[arg-type]
            y = other.data
        x = self.data
        data = compute(x, y)
        out = Value(data, (self, other), constant or pick(x, y), key)  # type: ignore[misc]
        if data - data != 0:  # inf or nan
            out.warning = apply(key, (x, y))[2]
        return out

    def reflected(self: Value, number: float) -> Value:
        return method(Value.constant(number), self)

    return method, reflected


def _function(key: str) -> Callable[[Value], Value]:
    def method(self: Value) -> Value:
        return Value.make(key, (self,))

    method.__name__ = key
    method.__doc__ = f"`{key}` of this value (a row of ops.OPS)."
    return method


Value.__add__, Value.__radd__ = _operator("+")  # type: ignore[attr-defined]
Value.__mul__, Value.__rmul__ = _operator("*")  # type: ignore[attr-defined]
for _name in FUNCTIONS:  # x.relu(), x.tanh(), …: every function of the table is a method
    setattr(Value, _name, _function(_name))
