"""Cells as learners write them outside the lecture, run by the sandbox's runner under CPython:
each is written here after a public repository (cited above it: the class's shape, its
attribute names, its op spellings, its bug where it has one, kept; the code our own), and each
asserts that constants are constants (no slider), the names are the learner's (variables,
labels, where a parameter lives), the same program comes out of two runs, and what the check
says."""

from __future__ import annotations

import re

import pytest

from chainrule import engine
from chainrule.sandbox.runner import Session

# After saagark/micrograd micrograd-py/engine.py: children in `_children` (a set), integer
# grads, no wrapping of plain numbers.
CHILDREN_SET = """
class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad = data, 0
        self._children, self._op = set(_children), _op
        self._backward = lambda: None
    def __add__(self, other):
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out
    def backward(self):
        order, seen = [], set()
        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v._children:
                    visit(c)
                order.append(v)
        visit(self)
        self.grad = 1
        for v in reversed(order):
            v._backward()
price = Value(4.0); count = Value(-2.0); tip = Value(3.0)
total = price * count + tip * price
total.backward()
"""

# After cccbook/py2gpt 03-backprop/01-micrograd0/micrograd/engine.py: micrograd's `_prev` set,
# plain numbers wrapped inside `__add__`/`__mul__` (constants, not sliders).
WRAPPED = """
class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data; self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children); self._op = _op
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad; other.grad += out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad; other.grad += self.data * out.grad
        out._backward = _backward
        return out
    def backward(self):
        topo, visited = [], set()
        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()
if True:
    unrelated = [Value(9.0) for _ in range(3)]
x = Value(1.5)
y = x * 3 + 1
z = y * x * 2 + 5
z.backward()
"""

# After QingZhou-YangHY/Micrograd engine.py: every `_backward` assigns (`=`), a public instance
# of the bug; a node used twice shows it.
ASSIGNS = """
import math
class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
    def __add__(self, other):
        out = Value(self.data + other.data, (self, other), "+")
        def _backward():
            self.grad = 1.0 * out.grad
            other.grad = 1.0 * out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), "*")
        def _backward():
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad
        out._backward = _backward
        return out
    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")
        def _backward():
            self.grad = (1 - t**2) * out.grad
        out._backward = _backward
        return out
    def backward(self):
        topo, visited = [], set()
        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
a = Value(0.5); b = Value(-1.25)
h = (a * b).tanh()
out = h * a + h
out.backward()
"""

# After EurekaLabsAI/micrograd micrograd.py: `_prev` kept as a tuple, ReLU/tanh/exp/log, its
# MLP whose last layer is linear, and its cross-entropy of three logits.
EUREKA_VALUE = """
import math
import random
class Value:
    def __init__(self, data, _prev=(), _op=''):
        self.data = data; self.grad = 0
        self._backward = lambda: None
        self._prev = _prev; self._op = _op
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad; other.grad += out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad; other.grad += self.data * out.grad
        out._backward = _backward
        return out
    def __pow__(self, k):
        out = Value(self.data ** k, (self,), f'**{k}')
        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out
    def tanh(self):
        out = Value(math.tanh(self.data), (self,), 'tanh')
        def _backward():
            self.grad += (1 - out.data ** 2) * out.grad
        out._backward = _backward
        return out
    def exp(self):
        out = Value(math.exp(self.data), (self,), 'exp')
        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out
    def log(self):
        out = Value(math.log(self.data), (self,), 'log')
        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out
    def backward(self):
        topo, visited = [], set()
        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()
    def __neg__(self): return self * -1.0
    def __radd__(self, other): return self + other
    def __sub__(self, other): return self + (-other)
    def __rsub__(self, other): return other + (-self)
    def __rmul__(self, other): return self * other
    def __truediv__(self, other): return self * other ** -1
    def __rtruediv__(self, other): return other * self ** -1
"""
EUREKA_MLP = """
class Neuron:
    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.uniform(-1, 1) * nin ** -0.5) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin
    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.tanh() if self.nonlin else act
    def parameters(self):
        return self.w + [self.b]
class Layer:
    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]
    def __call__(self, x):
        return [n(x) for n in self.neurons]
    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]
class MLP:
    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1)
                       for i in range(len(nouts))]
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]
def cross_entropy(logits, target):
    ex = [z.exp() for z in logits]
    denom = sum(ex)
    probs = [z / denom for z in ex]
    return -(probs[target]).log()
random.seed(42)
model = MLP(2, [3, 3])
for step in range(3):
    loss = cross_entropy(model([0.5, -1.0]), 2)
    for p in model.parameters():
        p.grad = 0
    loss.backward()
    for p in model.parameters():
        p.data -= 0.1 * p.grad
    print(step, loss.data)
"""

# After tekknolagi/micrograd micrograd/engine.py: `_prev` a tuple, leaves whose `_op` says what
# they are ('weight', 'input'), and a subclass `Max` with its own op 'max' that no row of
# chainrule's table computes: an opaque node, said, not a refusal.
TEKKNOLAGI = (
    EUREKA_VALUE
    + """
class Max(Value):
    def __init__(self, left, right):
        super().__init__(max(left.data, right.data), (left, right), 'max')
        def _backward():
            winner = left if left.data > right.data else right
            winner.grad += self.grad
        self._backward = _backward
w = Value(0.75, (), 'weight'); x = Value(-2.0, (), 'input'); b = Value(0.5, (), 'bias')
score = Max(w * x, b * 4) + w
score.backward()
"""
)

# After karpathy/micrograd micrograd/nn.py and demo.ipynb: micrograd's own MLP trained for a
# few steps with its zero_grad, on inputs written as plain numbers.
MICROGRAD_NN = """
import random
from micrograd.engine import Value
from micrograd import nn
random.seed(7)
net = nn.MLP(2, [3, 1])
xs = [[1.0, -0.5], [-1.5, 2.0]]
ys = [1.0, -1.0]
for k in range(5):
    scores = [net(x) for x in xs]
    loss = sum((s - y) ** 2 for s, y in zip(scores, ys))
    net.zero_grad()
    loss.backward()
    for p in net.parameters():
        p.data -= 0.05 * p.grad
    print(k, loss.data)
"""

# After karpathy/micrograd README.md (its example of every op), with our own numbers.
MICROGRAD_README = """
from micrograd.engine import Value
a = Value(-3.0)
b = Value(1.5)
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
g.backward()
"""

# After cukhoaimon/micrograd micrograd/engine.py: `_prev` a set, a `label` on every Value, no
# wrapping of numbers, the lecture's `L = d * f` in its own numbers.
LABELLED = """
class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data; self._prev = set(_children); self._op = _op
        self.grad = 0; self.label = label
        self._backward = lambda: None
    def __add__(self, other):
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad; other.grad += out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad; other.grad += self.data * out.grad
        out._backward = _backward
        return out
    def backward(self):
        topo, visited = [], set()
        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()
a = Value(1.5, label='a'); b = Value(-2.5, label='b'); c = Value(4.0, label='c')
e = a * b; e.label = 'e'
d = e + c; d.label = 'd'
f = Value(-1.0, label='f')
L = d * f; L.label = 'L'
L.backward()
"""

# After EurekaLabsAI/micrograd micrograd.py's closing visualisation: the trained model's loss at
# one point whose inputs are Values held in a tuple (`x[0]`, `x[1]`), its summed loss started
# from an explicit `Value(0.0)` and scaled by a number.
EUREKA_POINT = (
    EUREKA_VALUE
    + EUREKA_MLP
    + """
def loss_of(model, split):
    total = Value(0.0)
    for x, y in split:
        total = total + cross_entropy(model(x), y)
    return total * (1.0 / len(split))
for p in model.parameters():  # its optimizer's zero_grad() after each step
    p.grad = 0
point = (Value(0.0), Value(0.0))
loss = loss_of(model, [(point, 0)])
loss.backward()
"""
)

# After shivendrra/axgrad axgrad/engine.py: children passed as `children` and kept in `_prev`,
# and `__init__` setting `self.backward` (not `_backward`): the instance's lambda hides the
# class's backward(), so `c.backward()` computes nothing. No gradient to check: the check says
# nothing (no false alarm), and the graph is read.
SHADOWED = """
class Value:
    def __init__(self, data, children=(), _op=''):
        self.data = data
        self.grad = 0
        self.backward = lambda: None
        self._prev = set(children)
        self._op = _op
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data + other.data, (self, other), '+')
    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data * other.data, (self, other), '*')
    def backward(self):
        raise AssertionError("never called: the instance's lambda hides it")
m = Value(2.5); k = Value(-0.5)
c = m * k + 4
c.backward()
c
"""

# (id, code, the check's verdict, the cause's kind and method, leaves expected (a subset))
CELLS = [
    ("saagark _children set", CHILDREN_SET, "agree", None, {"price", "count", "tip"}),
    ("cccbook wrapped numbers", WRAPPED, "agree", None, {"x"}),
    ("QingZhou assigns", ASSIGNS, "disagree", ("overwrite", "__mul__"), {"a", "b"}),
    ("Eureka cross-entropy MLP", EUREKA_VALUE + EUREKA_MLP, "agree", None,
     {"model.layers[0].neurons[0].w[0]", "model.layers[1].neurons[2].b"}),
    ("tekknolagi Max", TEKKNOLAGI, "agree", None, {"w"}),
    ("micrograd nn training", MICROGRAD_NN, "agree", None,
     {"net.layers[0].neurons[0].w[0]", "net.layers[1].neurons[0].b"}),
    ("micrograd README", MICROGRAD_README, "agree", None, {"a", "b"}),
    ("cukhoaimon labels", LABELLED, "agree", None, {"a", "b", "c", "f"}),
    ("Eureka a point's loss", EUREKA_POINT, "agree", None,
     {"point[0]", "point[1]", "model.layers[0].neurons[2].w[1]"}),
    ("axgrad backward shadowed", SHADOWED, None, None, {"m", "k"}),
]  # fmt: skip


def _leaf_names(result: dict) -> set[str]:
    """The leaves as the learner reads them: a node's label where the reader set one."""
    trace = engine.trace(result["program"]["source"])
    return {node.label or node.name for node in trace.nodes if node.kind == "leaf"}


@pytest.mark.parametrize(("code", "verdict", "cause", "leaves"), [c[1:] for c in CELLS],
                         ids=[c[0] for c in CELLS])  # fmt: skip
def test_a_public_cell_reads_with_the_learners_names_and_its_constants(
    code, verdict, cause, leaves
):
    first, second = Session().run(code), Session().run(code)
    assert first["ok"], first.get("error")
    assert first["program"]["source"] == second["program"]["source"]  # the same every run
    names = _leaf_names(first)
    assert leaves <= names, names
    # No slider is a generated name: a leaf is a variable, a label or a place; but for the
    # `total = Value(0.0)` of a function that has returned (no variable, no place holds it, and
    # a method was called on it: no wrapped number), which keeps a generated name.
    generated = {name for name in names if name.startswith("v") and name[1:].isdigit()}
    assert generated == ({"v1"} if "def loss_of" in code else set()), names
    check = first["check"]
    if verdict is None:  # backward() never ran: nothing to check, and nothing is claimed
        assert check is None and first["backward"] is None
        return
    assert check["verdict"] == verdict, check
    if cause:
        assert (check["cause"]["kind"], check["cause"]["method"]) == cause
    trace = engine.trace(first["program"]["source"])
    assert trace.root.data == pytest.approx(first["nodes"][-1]["data"], rel=1e-9)


def test_numbers_wrapped_inside_operators_are_constants_whatever_ran_before():
    result = Session().run(WRAPPED)
    trace = engine.trace(result["program"]["source"])
    assert [n.name for n in trace.nodes if n.kind == "leaf"] == ["x"]
    assert sorted(n.data for n in trace.nodes if n.kind == "const") == [1.0, 2.0, 3.0, 5.0]
    without_if = Session().run(WRAPPED.replace("if True:\n    unrelated", "unrelated = 0\n#"))
    assert without_if["program"]["source"] == result["program"]["source"]


def test_an_op_no_row_explains_is_drawn_opaque_and_said():
    result = Session().run(TEKKNOLAGI)
    (warning,) = result["program"]["warnings"]
    assert warning["type"] == "unknown_op" and "op 'max'" in warning["message"]
    # max(w * x, b * 4) = max(-1.5, 2.0): the node holds its data, named by its op, drawn with
    # its children; its local derivatives are its own _backward's (the winner's 1), so the
    # check agrees (issue 38).
    assert result["program"]["source"] == (
        "w = 0.75\nx = -2.0\nb = 0.5\n"
        "unknown_max(p1, p2) = 2.0 + 0.0 * (p1 - (-1.5)) + 1.0 * (p2 - 2.0)\n"
        "max = unknown_max(w * x, b * 4.0)\nscore = max + w\n"
    )
    assert result["check"]["verdict"] == "agree"


def test_a_training_loops_graph_is_the_last_loss_printed_with_places_as_names():
    result = Session().run(MICROGRAD_NN)
    printed = float(result["output"].strip().split("\n")[-1].split()[1])
    trace = engine.trace(result["program"]["source"])
    assert trace.root.data == pytest.approx(printed, rel=1e-12)
    assert result["program"]["warnings"] == []  # the leaves are put back where backward() saw them
    labels = [n.label for n in trace.nodes if n.kind == "leaf"]
    assert len(labels) == 13 and all(label.startswith("net.layers[") for label in labels)


def test_a_node_the_code_did_not_name_is_named_by_its_op_and_labelled_with_its_expression():
    """`c = a + b; c += c + 1`: the first `c` is used twice, so the program names it, after its
    op (`sum1`, never `t1`: issue 38); its card shows `a + b`. A longer expression keeps the
    op's name on its card. What is used once stays inside its user's statement."""
    result = Session().run(MICROGRAD_README)
    source = result["program"]["source"]
    trace = engine.trace(source)
    labels = {node.name: node.label for node in trace.nodes}
    assert labels["sum1"] == "a + b" and labels["sum3"] == "a * b + b ** 3.0"
    assert labels["sum2"] == "sum2"  # a + b + (a + b + 1.0) in its operands' cards: too long
    assert not re.search(r"\bt\d", source), source
    assert "\nd = sum4 + (sum4 * 3.0 + (b + a * (-1.0)).relu())\n" in source
