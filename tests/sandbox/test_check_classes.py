"""The autograd check on learners' own classes (sandbox/check.py, run by the runner under
CPython): the lecture's `Value` with one classic bug each is diagnosed by the method and the
line of the learner's source that is wrong; correct classes written differently (other
children attributes, `__slots__`, their own op names or none) are read and agree, with no
false alarm. Each bug's class is the lecture's with one replacement, so the line named is found
by the text the bug put there."""

from __future__ import annotations

import pytest
from lecture_cells import NEURON_CELL_9, VALUE_CLASS

from chainrule.sandbox.runner import Session

# The lecture's neuron with tanh written through exp (second half, cells 11–13): `e` is used
# twice, so a visit order or an `=` shows; `/` goes through `__pow__`, `2*n` through `__rmul__`.
NEURON_EXP = NEURON_CELL_9.replace(
    "o = n.tanh(); o.label = 'o'",
    "e = (2*n).exp(); e.label = 'e'\no = (e - 1) / (e + 1); o.label = 'o'",
)
# A graph using a number on the left of `-`: `__rsub__` (the lecture's class has none).
RSUB = "a = Value(3.0, label='a')\nb = Value(-2.0, label='b')\nL = (2 - a) * b\nL.backward()"
SUB = "a = Value(3.0, label='a')\nb = Value(-2.0, label='b')\nL = (a - 2) * b\nL.backward()"
# sum() of Values starts from the int 0: `0 + Value` is `Value.__radd__`.
SUM = "a = Value(3.0, label='a')\nb = Value(-2.0, label='b')\nL = sum([a * b, a])\nL.backward()"
RELU = """
  def relu(self):
    out = Value(0 if self.data < 0 else self.data, (self,), 'ReLU')
    def _backward():
      self.grad += (out.data > 0) * out.grad
    out._backward = _backward
    return out
"""
WITH_RELU = VALUE_CLASS.replace("\n  def tanh(self):", RELU + "\n  def tanh(self):")
RELU_NEURON = (
    "a = Value(-3.0, label='a')\nb = Value(2.0, label='b')\nL = (a * b).relu() + a\nL.backward()"
)

RECURSIVE = """  def backward(self):
    self.grad = 1.0
    def visit(v):
      v._backward()
      for child in v._prev:
        visit(child)
    visit(self)
"""
NO_SORT = """  def backward(self):
    self.grad = 1.0
    visited = set()
    def visit(v):
      if v in visited:
        return
      visited.add(v)
      v._backward()
      for child in v._prev:
        visit(child)
    visit(self)
"""
LECTURE_BACKWARD = VALUE_CLASS[VALUE_CLASS.index("  def backward(self):") :]


# (id, replaced, replacement, body, kind, method, text on the line named)
BUGS = [
    ("tanh 1 - t", "(1 - t**2) * out.grad", "(1 - t) * out.grad", NEURON_CELL_9, "local",
     "tanh", "(1 - t)"),
    ("exp uses x", "out.data * out.grad # NOTE", "x * out.grad # NOTE", NEURON_EXP, "local",
     "exp", "x * out.grad"),
    ("pow without - 1", "(self.data ** (other - 1))", "(self.data ** other)", NEURON_EXP,
     "local", "__pow__", "self.data ** other"),
    ("mul swapped", "self.grad += other.data * out.grad\n      other.grad += self.data",
     "self.grad += self.data * out.grad\n      other.grad += other.data", NEURON_CELL_9,
     "local", "__mul__", "self.grad += self.data"),
    ("mul without out.grad", "other.grad += self.data * out.grad",
     "other.grad += self.data", NEURON_CELL_9, "local", "__mul__", "other.grad += self.data"),
    ("add assigns", "self.grad += 1.0 * out.grad\n      other.grad += 1.0 * out.grad",
     "self.grad = 1.0 * out.grad\n      other.grad = 1.0 * out.grad", NEURON_EXP, "overwrite",
     "__add__", "self.grad = 1.0"),
    ("exp assigns", "self.grad += out.data * out.grad # NOTE",
     "self.grad = out.data * out.grad # NOTE", NEURON_EXP, None, None, None),
    # (2*n has one consumer, exp: `=` loses nothing here, and nothing is said)
    ("tanh never sets _backward",
     "self.grad += (1 - t**2) * out.grad\n    out._backward = _backward",
     "self.grad += (1 - t**2) * out.grad", NEURON_CELL_9, "no_backward", "tanh", "out ="),
    ("no seed", "    self.grad = 1.0\n    for node in reversed(topo):",
     "    for node in reversed(topo):", NEURON_CELL_9, "seed", "backward", "def backward"),
    ("sort not reversed", "for node in reversed(topo):", "for node in topo:", NEURON_CELL_9,
     "order", "backward", "def backward"),
    ("recursive backward", LECTURE_BACKWARD, RECURSIVE, NEURON_EXP, "order", "backward",
     "def backward"),
    ("no topological sort", LECTURE_BACKWARD, NO_SORT, NEURON_EXP, "order", "backward",
     "def backward"),
    ("rsub returns self - other", "  def __radd__",
     "  def __rsub__(self, other):\n    return self - other\n\n  def __radd__", RSUB, "forward",
     "__rsub__", "return self - other"),
    ("sub the wrong way round", "return self + (-other)", "return other + (-self)", SUB,
     "forward", "__sub__", "return other + (-self)"),
    ("truediv without -1", "return self * other**-1", "return self * other**1", NEURON_EXP,
     "forward", "__truediv__", "other**1"),
    ("neg is + 1", "return self * -1", "return self * 1", NEURON_EXP, "forward", "__neg__",
     "self * 1"),
    ("tanh forward uses exp(x)", "t = (math.exp(2*x) - 1)/(math.exp(2*x) + 1)",
     "t = (math.exp(x) - 1)/(math.exp(x) + 1)", NEURON_CELL_9, "forward", "tanh", "out ="),
    ("exp forward doubles", "out = Value(math.exp(x), (self, ), 'exp')",
     "out = Value(2 * math.exp(x), (self, ), 'exp')", NEURON_EXP, "forward", "exp", "out ="),
    ("add forward subtracts", "Value(self.data + other.data, (self, other), '+')",
     "Value(self.data - other.data, (self, other), '+')", NEURON_CELL_9, "forward", "__add__",
     "out ="),
    ("relu passes every gradient", "self.grad += (out.data > 0) * out.grad",
     "self.grad += out.grad", RELU_NEURON, "local", "relu", "self.grad += out.grad"),
]  # fmt: skip


def run(value_class: str, body: str) -> dict:
    result = Session().run("import math\n" + value_class + body)
    assert result["ok"], result
    return result


def named_line(result: dict, code: str, line: int) -> str:
    return ("import math\n" + code).split("\n")[line - 1]


@pytest.mark.parametrize(
    ("replaced", "replacement", "body", "kind", "method", "text"),
    [bug[1:] for bug in BUGS],
    ids=[bug[0] for bug in BUGS],
)
def test_a_bug_is_named_by_the_method_and_line_of_the_learners_code(
    replaced, replacement, body, kind, method, text
):
    value_class = (WITH_RELU if body is RELU_NEURON else VALUE_CLASS).replace(replaced, replacement)
    assert value_class != (WITH_RELU if body is RELU_NEURON else VALUE_CLASS)
    check = run(value_class, body)["check"]
    if kind is None:
        assert check["verdict"] == "agree" and check["cause"] is None
        return
    cause = check["cause"]
    assert check["verdict"] == "disagree", check
    assert (cause["kind"], cause["method"]) == (kind, method), cause
    assert text in named_line(check, value_class + body, cause["line"]), cause


def test_a_local_derivative_says_what_the_code_used():
    bug = VALUE_CLASS.replace(
        "self.grad += other.data * out.grad", "self.grad += self.data * out.grad"
    )
    cause = run(bug, NEURON_CELL_9)["check"]["cause"]
    # x1*w1: the code passed x1 on to x1 (its own data) where the rule is w1 = -3.
    assert (cause["operand"], cause["did"], cause["theirs"], cause["ours"]) == (
        "self", "input", 2.0, -3.0)  # fmt: skip


def test_a_wrong_pow_under_a_division_names_the_division_too():
    bug = VALUE_CLASS.replace("(self.data ** (other - 1))", "(self.data ** other)")
    cause = run(bug, NEURON_EXP)["check"]["cause"]
    assert cause["used_by"]["method"] == "__truediv__"
    assert "other**-1" in named_line(None, bug + NEURON_EXP, cause["used_by"]["line"])


def test_grads_not_reset_are_named_with_the_backward_line():
    result = run(VALUE_CLASS, NEURON_CELL_9 + "\no.backward()")
    assert result["check"]["cause"]["kind"] == "not_reset"


def test_a_missing_radd_gets_its_one_line_fix():
    bug = VALUE_CLASS.replace(
        "  def __radd__(self, other): # other + self\n    return self + other\n", ""
    )
    assert bug != VALUE_CLASS
    result = Session().run("import math\n" + bug + SUM)
    error = result["error"]
    code = "import math\n" + bug + SUM
    assert error["type"] == "MissingReflected"
    assert code.split("\n")[error["line"] - 1] == "L = sum([a * b, a])"
    assert error["params"] == {"method": "__radd__",
                               "fix": "def __radd__(self, other): return self + other"}  # fmt: skip


# ---- correct classes written differently --------------------------------------------------

# A public repository's style: children in `_children` (a tuple), its own `-` and `/` with
# their own local derivatives and their own `_op` ('-', '/').
CHILDREN_TUPLE = """
import math
class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad = data, 0.0
        self._children, self._op = tuple(_children), _op
        self._backward = lambda: None
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out
    def __sub__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data - other.data, (self, other), '-')
        def _backward():
            self.grad += out.grad
            other.grad -= out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out
    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data / other.data, (self, other), '/')
        def _backward():
            self.grad += out.grad / other.data
            other.grad -= self.data / other.data ** 2 * out.grad
        out._backward = _backward
        return out
    def backward(self):
        topo, seen = [], set()
        def build(v):
            if v not in seen:
                seen.add(v)
                for c in v._children:
                    build(c)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()
a = Value(3.0); b = Value(-2.0); c = Value(0.5)
L = (a - b) / c * a - 1
L.backward()
"""

# `children` in `__slots__`, a `grad_fn` per node instead of `_backward`, op names of its own.
SLOTS_GRAD_FN = """
import math
class Node:
    __slots__ = ("data", "grad", "children", "op", "grad_fn")
    def __init__(self, data, children=(), op=None, grad_fn=None):
        self.data, self.grad, self.children = data, 0.0, list(children)
        self.op, self.grad_fn = op, grad_fn
    def __add__(self, other):
        other = other if isinstance(other, Node) else Node(other)
        return Node(self.data + other.data, (self, other), "add", lambda g: (g, g))
    def __mul__(self, other):
        other = other if isinstance(other, Node) else Node(other)
        return Node(self.data * other.data, (self, other), "mul",
                    lambda g: (g * other.data, g * self.data))
    def __neg__(self):
        return Node(-self.data, (self,), "neg", lambda g: (-g,))
    def __sub__(self, other):
        other = other if isinstance(other, Node) else Node(other)
        return Node(self.data - other.data, (self, other), "sub", lambda g: (g, -g))
    def square(self):
        return Node(self.data ** 2, (self,), "square", lambda g: (2 * self.data * g,))
    def tanh(self):
        t = math.tanh(self.data)
        return Node(t, (self,), "tanh", lambda g: ((1 - t * t) * g,))
    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            v, done = stack.pop()
            if done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((c, False) for c in v.children)
        self.grad = 1.0
        for v in reversed(order):
            if v.grad_fn:
                for c, g in zip(v.children, v.grad_fn(v.grad)):
                    c.grad += g
w = Node(0.7); x = Node(-1.5); y = Node(0.25)
loss = ((w * x).tanh() - y).square() + -w
loss.backward()
"""

# `_parents` as a set and op names no table spells ('sub', 'div', '**2', 'ReLU'), and one
# with no op name at all.
PARENTS_SET = """
class V:
    def __init__(self, data, parents=(), op=''):
        self.data = data; self.grad = 0.0; self._parents = set(parents); self._op = op
        self._backward = lambda: None
    def _wrap(self, o):
        return o if isinstance(o, V) else V(o)
    def __add__(self, o):
        o = self._wrap(o); out = V(self.data + o.data, (self, o))
        def _backward():
            self.grad += out.grad; o.grad += out.grad
        out._backward = _backward; return out
    def __sub__(self, o):
        o = self._wrap(o); out = V(self.data - o.data, (self, o), 'sub')
        def _backward():
            self.grad += out.grad; o.grad += -out.grad
        out._backward = _backward; return out
    def __truediv__(self, o):
        o = self._wrap(o); out = V(self.data / o.data, (self, o), 'div')
        def _backward():
            self.grad += out.grad / o.data; o.grad += -self.data / o.data**2 * out.grad
        out._backward = _backward; return out
    def sq(self):
        out = V(self.data ** 2, (self,), '**2')
        def _backward():
            self.grad += 2 * self.data * out.grad
        out._backward = _backward; return out
    def relu(self):
        out = V(max(0.0, self.data), (self,), 'ReLU')
        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward; return out
    def backward(self):
        topo, seen = [], set()
        def build(v):
            if v not in seen:
                seen.add(v)
                for p in v._parents:
                    build(p)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()
p = V(4.0); q = V(1.5); r = V(-0.25)
out = ((p - q) / (q + r)).sq() + (r - p).relu() + (p - r).relu()
out.backward()
"""

# `prev` as a list and `inputs` as a tuple, with `op` spelled 'add', 'mul', 'pow'.
PREV_LIST = PARENTS_SET.replace(
    "self._parents = set(parents)", "self.prev = list(parents)"
).replace("for p in v._parents", "for p in v.prev")
INPUTS_TUPLE = PARENTS_SET.replace(
    "self._parents = set(parents)", "self.inputs = tuple(parents)"
).replace("for p in v._parents", "for p in v.inputs")

CORRECT = {
    "lecture": "import math\n" + VALUE_CLASS + NEURON_CELL_9,
    "lecture, tanh through exp": "import math\n" + VALUE_CLASS + NEURON_EXP,
    "children in _children, ops '-' and '/'": CHILDREN_TUPLE,
    "children in __slots__, grad_fn": SLOTS_GRAD_FN,
    "_parents set, ops 'sub' 'div' '**2' 'ReLU' and none": PARENTS_SET,
    "prev list": PREV_LIST,
    "inputs tuple": INPUTS_TUPLE,
}


@pytest.mark.parametrize("code", CORRECT.values(), ids=CORRECT.keys())
def test_a_correct_class_written_differently_is_read_and_agrees(code):
    result = Session().run(code)
    assert result["ok"], result.get("error")
    assert result["program"]["warnings"] == []
    check = result["check"]
    assert (check["verdict"], check["cause"], check["wrong"]) == ("agree", None, [])
    # The server's numbers for the program read are the code's own.
    from chainrule import engine

    trace = engine.trace(result["program"]["source"])
    assert trace.root.data == pytest.approx(result["nodes"][-1]["data"], rel=1e-9)


def test_a_wrong_rsub_rings_the_node_it_made():
    """Issue 38: `__rsub__` returning `self - other` builds `2 - a` as `a + (-2)`, a graph that
    agrees with itself; the check names `__rsub__` and rings that node (the page rings a
    cause's `nodes`), not a node of the graph beside it."""
    value_class = VALUE_CLASS.replace(
        "  def __radd__", "  def __rsub__(self, other):\n    return self - other\n\n  def __radd__"
    )
    result = run(value_class, RSUB)
    cause = result["check"]["cause"]
    assert (cause["kind"], cause["method"]) == ("forward", "__rsub__")
    (ringed,) = cause["nodes"]
    node = result["nodes"][ringed]
    # a = 3: the code's 2 - a holds a - 2 = 1; its operands are a and the number it wrapped.
    assert node["data"] == 1.0 and len(node["inputs"]) == 2
    assert {result["nodes"][j]["label"] for j in node["inputs"]} == {"a", ""}


# The lecture's neuron with its bias at 40 (n = 34): tanh saturates at 1.0, and every gradient
# under o is 0, the code's and the chain rule's alike, whatever the code's backward does.
SATURATED = NEURON_CELL_9.replace(
    "b = Value(6.8813735870195432, label='b')", "b = Value(40.0, label='b')"
)
# x used twice (x*w and + x) under a saturated tanh: an `=` in `__add__` loses x*w's contribution.
SATURATED_REUSE = (
    "x = Value(2.0, label='x')\nw = Value(3.0, label='w')\nb = Value(40.0, label='b')\n"
    "n = x*w + x + b; n.label = 'n'\no = n.tanh(); o.label = 'o'\no.backward()"
)
MUL_SWAPPED = ("self.grad += other.data * out.grad\n      other.grad += self.data",
               "self.grad += self.data * out.grad\n      other.grad += other.data")  # fmt: skip
ADD_ASSIGNS = ("self.grad += 1.0 * out.grad\n      other.grad += 1.0 * out.grad",
               "self.grad = 1.0 * out.grad\n      other.grad = 1.0 * out.grad")  # fmt: skip


def test_a_saturated_neuron_agrees_and_says_its_numbers_cannot_tell():
    check = run(VALUE_CLASS, SATURATED)["check"]
    assert (check["verdict"], check["cause"], check["wrong"]) == ("agree", None, [])
    assert check["vanished"] is True
    assert run(VALUE_CLASS, NEURON_CELL_9)["check"]["vanished"] is False


def test_a_bug_the_saturated_numbers_hide_is_named_from_the_code():
    # Every gradient under o is 0 both ways, so all agree; replayed alone, the learner's
    # `__mul__` passes each operand its own data. Without the replay the verdict was "agree".
    value_class = VALUE_CLASS.replace(*MUL_SWAPPED)
    check = run(value_class, SATURATED)["check"]
    assert (check["verdict"], check["wrong"], check["vanished"]) == ("disagree", [], True)
    cause = check["cause"]
    assert (cause["kind"], cause["method"]) == ("local", "__mul__"), cause
    assert "self.grad += self.data" in named_line(check, value_class + SATURATED, cause["line"])


def test_a_saturated_assignment_is_named_where_it_loses_a_contribution_only():
    value_class = VALUE_CLASS.replace(*ADD_ASSIGNS)
    check = run(value_class, SATURATED_REUSE)["check"]
    assert (check["verdict"], check["vanished"]) == ("disagree", True)
    cause = check["cause"]
    assert (cause["kind"], cause["method"]) == ("overwrite", "__add__"), cause
    assert "self.grad = 1.0" in named_line(check, value_class + SATURATED_REUSE, cause["line"])
    # The lecture's neuron uses each node once: `=` loses nothing there, saturated or not.
    check = run(value_class, SATURATED)["check"]
    assert (check["verdict"], check["cause"], check["vanished"]) == ("agree", None, True)
