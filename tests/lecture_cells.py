"""Cells learners paste (issue 22), verbatim, and the oracle that runs them as Python.

Each cell is written here as its public origin has it (cited beside it: repository, file, cell),
or, where marked, written for these tests in a tutorial's idiom. The oracle is the tests' own
code: a small Value class in the lecture's model (ordered children, labels, `_backward`
closures) and a scalar stand-in for the few PyTorch calls the cells make, so that running a cell
under CPython gives the root's value and every leaf's gradient to compare with chainrule's
(which reads the same text as data and never runs it)."""

from __future__ import annotations

import builtins
import math
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

LECTURE = "karpathy/nn-zero-to-hero@73c3fcc lectures/micrograd/micrograd_lecture_{}_roughly.ipynb"
MICROGRAD = "karpathy/micrograd@c911406"


@dataclass(frozen=True)
class Cell:
    """A pasted cell: its text, where it comes from, and the variable that holds its result
    once it has run (the root chainrule should find)."""

    id: str
    origin: str
    source: str
    root: str
    tags: tuple[str, ...] = field(default=())


# micrograd's README example, as its test/test_engine.py test_more_ops has it too.
MICROGRAD_OPS = """\
a = Value(-4.0)
b = Value(2.0)
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f"""
# The micrograd half of micrograd's test/test_engine.py test_sanity_check.
SANITY_CHECK = """\
x = Value(-4.0)
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xmg, ymg = x, y"""

# The lecture's neuron, as its first half's cell 13 and second half's cells 9 and 11 write it.
NEURON = """\
# inputs x1,x2
x1 = Value(2.0, label='x1')
x2 = Value(0.0, label='x2')
# weights w1,w2
w1 = Value(-3.0, label='w1')
w2 = Value(1.0, label='w2')
# bias of the neuron
b = Value(6.8813735870195432, label='b')
# x1*w1 + x2*w2 + b
x1w1 = x1*w1; x1w1.label = 'x1*w1'
x2w2 = x2*w2; x2w2.label = 'x2*w2'
x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'
n = x1w1x2w2 + b; n.label = 'n'
o = n.tanh(); o.label = 'o'"""

CELLS = [
    # nn-zero-to-hero, first half, cell 7: the straight-line lines after its `class Value` (the
    # whole cell is in NEEDS_RUNNING below).
    Cell(
        "first-half-cell-7-graph",
        LECTURE.format("first_half") + " cell 7 (after the class)",
        """\
a = Value(2.0, label='a')
b = Value(-3.0, label='b')
c = Value(10.0, label='c')
e = a*b; e.label = 'e'
d = e + c; d.label = 'd'
f = Value(-2.0, label='f')
L = d * f; L""",
        "L",
    ),
    # first half, cell 13: the neuron, labelled as draw_dot shows it.
    Cell(
        "first-half-cell-13-neuron",
        LECTURE.format("first_half") + " cell 13",
        NEURON,
        "o",
    ),
    # first half, cells 13, 14 and 15 pasted together: `draw_dot(o)` before `o.backward()`.
    Cell(
        "first-half-cells-13-15",
        LECTURE.format("first_half") + " cells 13, 14, 15",
        NEURON + "\ndraw_dot(o)\no.backward()",
        "o",
    ),
    # first half, cells 17 to 22 after cell 13: the manual backward pass, one `_backward()` a line.
    Cell(
        "first-half-manual-backward",
        LECTURE.format("first_half") + " cells 13, 17, 18, 19, 20, 21, 22",
        NEURON
        + """
o.grad = 1.0
o._backward()
n._backward()
b._backward()
x1w1x2w2._backward()
x2w2._backward()
x1w1._backward()""",
        "o",
    ),
    # first half, cell 31: `a + a`, the bug of the set of children.
    Cell(
        "first-half-cell-31",
        LECTURE.format("first_half") + " cell 31",
        """\
a = Value(3.0, label='a')
b = a + a   ; b.label = 'b'
b.backward()
draw_dot(b)""",
        "b",
    ),
    # first half, cell 32: a shared variable.
    Cell(
        "first-half-cell-32",
        LECTURE.format("first_half") + " cell 32",
        """\
a = Value(-2.0, label='a')
b = Value(3.0, label='b')
d = a * b    ; d.label = 'd'
e = a + b    ; e.label = 'e'
f = d * e    ; f.label = 'f'

f.backward()

draw_dot(f)""",
        "f",
    ),
    # second half, cell 9: the neuron with backward().
    Cell(
        "second-half-cell-9",
        LECTURE.format("second_half") + " cell 9",
        NEURON + "\no.backward()",
        "o",
    ),
    # second half, cell 11: tanh written with exp, `o.label` on its own line.
    Cell(
        "second-half-cell-11",
        LECTURE.format("second_half") + " cell 11",
        NEURON.rsplit("\n", 1)[0]
        + """
# ----
e = (2*n).exp()
o = (e - 1) / (e + 1)
# ----
o.label = 'o'
o.backward()
draw_dot(o)""",
        "o",
    ),
    # second half, cells 12 and 13: the same neuron in PyTorch.
    Cell(
        "second-half-cells-12-13-pytorch",
        LECTURE.format("second_half") + " cells 12, 13",
        """\
import torch

x1 = torch.Tensor([2.0]).double()                ; x1.requires_grad = True
x2 = torch.Tensor([0.0]).double()                ; x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double()               ; w1.requires_grad = True
w2 = torch.Tensor([1.0]).double()                ; w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double()  ; b.requires_grad = True
n = x1*w1 + x2*w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())""",
        "o",
        ("torch",),
    ),
    # micrograd's README, "Example usage".
    Cell(
        "micrograd-readme",
        MICROGRAD + " README.md, Example usage",
        "from micrograd.engine import Value\n\n"
        + MICROGRAD_OPS
        + """
print(f'{g.data:.4f}') # prints 24.7041, the outcome of this forward pass
g.backward()
print(f'{a.grad:.4f}') # prints 138.8338, i.e. the numerical value of dg/da
print(f'{b.grad:.4f}') # prints 645.5773, i.e. the numerical value of dg/db""",
        "g",
    ),
    # micrograd's test/test_engine.py, the body of test_sanity_check as copied out of it (indented),
    # with its PyTorch half after backward().
    Cell(
        "micrograd-test-sanity-check",
        MICROGRAD + " test/test_engine.py test_sanity_check",
        textwrap.indent(SANITY_CHECK, "    ")
        + """

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    # forward pass went well
    assert ymg.data == ypt.data.item()
    # backward pass went well
    assert xmg.grad == xpt.grad.item()""",
        "ymg",
        ("torch",),
    ),
    # micrograd's test/test_engine.py, the micrograd half of test_more_ops.
    Cell(
        "micrograd-test-more-ops",
        MICROGRAD + " test/test_engine.py test_more_ops",
        textwrap.indent(MICROGRAD_OPS + "\ng.backward()\namg, bmg, gmg = a, b, g", "    "),
        "gmg",
    ),
    # micrograd's trace_graph.ipynb, cell 3.
    Cell(
        "micrograd-trace-graph-cell-3",
        MICROGRAD + " trace_graph.ipynb cell 3",
        """\
# a very simple example
x = Value(1.0)
y = (x * 2 + 1).relu()
y.backward()
draw_dot(y)""",
        "y",
    ),
    # Written for these tests in a tutorial's idiom (seeds/002: `label = 'x1'` with blanks,
    # `label ='w1'` after a comma, `b.label='b'`), with a unicode label and a display line.
    Cell(
        "tutorial-spacing-and-unicode",
        "written for these tests, in the idiom of seeds/002",
        """\
from micrograd.engine import Value
p = Value(1.5, label = 'p')
q = Value(-0.5,label ='q')
k = Value(0.25, label='κ')
r = p * q; r.label='r'
s = (r + k).exp(); s.label = 'exp(r + κ)'
print(s)
s
t = s * p; t.label = "s·p"
t.backward()
print(p.grad, q.grad)""",
        "t",
    ),
    # Written for these tests: what a learner adds around a cell (resets, a seed, a drawing kept
    # in a variable and shown, values shown alone, PyTorch-style calls on a Value).
    Cell(
        "tutorial-resets-and-drawings",
        "written for these tests",
        """\
import math
u = Value(0.5, label='u')
v = Value(2.0, label='v')
u.grad = 0.0; v.grad = 0.0
w = u * v + u; w.label = 'w'
w.data
y = w.sigmoid(); y.label = 'σ(w)'
z = y.log() - u.relu(); z.label = 'z'
dot = draw_dot(z)
dot
z.grad = 1.0
z.backward()
u.grad""",
        "z",
    ),
    # Written for these tests: scalar PyTorch as its documentation writes it.
    Cell(
        "tutorial-pytorch-tensors",
        "written for these tests, in PyTorch's own spelling",
        """\
import torch
a = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
b = torch.tensor(-1.25, dtype=torch.float64, requires_grad=True)
c = torch.sigmoid(a * b) + torch.relu(a + 1)
d = torch.log(c) * torch.exp(b)
print(d.item())
d.backward()
print(a.grad.item(), b.grad.item())""",
        "d",
        ("torch",),
    ),
]

# Cells that are Python to run: each with the type, line, column and construct chainrule names.
NEEDS_RUNNING = [
    # first half, cell 7, whole: the class comes first.
    ("first-half-cell-7", LECTURE.format("first_half") + " cell 7", "class Value:\n  \n  def __init__(self, data):\n    self.data = data\n", 1, 1, "a class definition ('class')"),
    # first half, cell 10: a step of gradient descent changes the leaves' data.
    ("first-half-cell-10", LECTURE.format("first_half") + " cell 10", "a.data += 0.01 * a.grad\nb.data += 0.01 * b.grad\n", 1, 1, "a change of a.data"),
    # first half, cell 16: the topological sort, written out.
    ("first-half-cell-16", LECTURE.format("first_half") + " cell 16", "topo = []\nvisited = set()\ndef build_topo(v):\n  if v not in visited:\n    visited.add(v)\n", 1, 8, "a list or an index ('[ ]')"),
    # second half, cell 14: Neuron's weights are random.
    ("second-half-cell-14-weights", LECTURE.format("second_half") + " cell 14 (a line of it)", "w = Value(random.uniform(-1,1))", 1, 11, "a random number (random.uniform(...))"),
    # second half, cell 17: the training loop.
    ("second-half-cell-17", LECTURE.format("second_half") + " cell 17", "\nfor k in range(20):\n  \n  # forward pass\n  ypred = [n(x) for x in xs]\n", 2, 1, "a loop ('for')"),
    # micrograd's README, Tracing: a Neuron of micrograd.nn on a list of inputs.
    ("micrograd-readme-neuron", MICROGRAD + " README.md, Tracing", "from micrograd import nn\nn = nn.Neuron(2)\nx = [Value(1.0), Value(-2.0)]\ny = n(x)\ndot = draw_dot(y)", 2, 5, "a call of nn.Neuron(...)"),
    # micrograd's demo.ipynb, cell 5: a model from an import.
    ("micrograd-demo-cells-2-5", MICROGRAD + " demo.ipynb cells 2 and 5 (their first lines)", "from micrograd.nn import Neuron, Layer, MLP\nmodel = MLP(2, [16, 16, 1]) # 2-layer neural network\n", 2, 16, "a list or an index ('[ ]')"),
    ("imported-class-call", "written for these tests", "from micrograd.nn import MLP\nmodel = MLP(2, 3)\n", 2, 9, "MLP(...), which comes from an import"),
    ("helper-after-semicolon", "written for these tests (a helper's definition starts a line)", "a = 1; def tanh(x):\n    return x\n", 1, 8, "a function ('def')"),
    ("builtin-call", "written for these tests", "a = Value(1.0)\nloss = sum(a, a)\n", 2, 8, "Python's sum(...)"),
]  # fmt: skip


# --- Whole cells for the sandbox (issue 24), which runs them as a learner would: each string is
# one notebook cell's source, unchanged:
# - karpathy/nn-zero-to-hero @ 73c3fcc741f0,
#   lectures/micrograd/micrograd_lecture_second_half_roughly.ipynb (MIT);
# - karpathy/micrograd @ c911406e5ace, trace_graph.ipynb (MIT).

# nn-zero-to-hero, micrograd lecture second half, cell 0: the imports (numpy, matplotlib, %matplotlib inline)
IMPORTS = "import math\nimport random\nimport numpy as np\nimport matplotlib.pyplot as plt\n%matplotlib inline"

# nn-zero-to-hero, micrograd lecture second half, cell 7: the lecture's `class Value`
VALUE_CLASS = "class Value:\n  \n  def __init__(self, data, _children=(), _op='', label=''):\n    self.data = data\n    self.grad = 0.0\n    self._backward = lambda: None\n    self._prev = set(_children)\n    self._op = _op\n    self.label = label\n\n  def __repr__(self):\n    return f\"Value(data={self.data})\"\n  \n  def __add__(self, other):\n    other = other if isinstance(other, Value) else Value(other)\n    out = Value(self.data + other.data, (self, other), '+')\n    \n    def _backward():\n      self.grad += 1.0 * out.grad\n      other.grad += 1.0 * out.grad\n    out._backward = _backward\n    \n    return out\n\n  def __mul__(self, other):\n    other = other if isinstance(other, Value) else Value(other)\n    out = Value(self.data * other.data, (self, other), '*')\n    \n    def _backward():\n      self.grad += other.data * out.grad\n      other.grad += self.data * out.grad\n    out._backward = _backward\n      \n    return out\n  \n  def __pow__(self, other):\n    assert isinstance(other, (int, float)), \"only supporting int/float powers for now\"\n    out = Value(self.data**other, (self,), f'**{other}')\n\n    def _backward():\n        self.grad += other * (self.data ** (other - 1)) * out.grad\n    out._backward = _backward\n\n    return out\n  \n  def __rmul__(self, other): # other * self\n    return self * other\n\n  def __truediv__(self, other): # self / other\n    return self * other**-1\n\n  def __neg__(self): # -self\n    return self * -1\n\n  def __sub__(self, other): # self - other\n    return self + (-other)\n\n  def __radd__(self, other): # other + self\n    return self + other\n\n  def tanh(self):\n    x = self.data\n    t = (math.exp(2*x) - 1)/(math.exp(2*x) + 1)\n    out = Value(t, (self, ), 'tanh')\n    \n    def _backward():\n      self.grad += (1 - t**2) * out.grad\n    out._backward = _backward\n    \n    return out\n  \n  def exp(self):\n    x = self.data\n    out = Value(math.exp(x), (self, ), 'exp')\n    \n    def _backward():\n      self.grad += out.data * out.grad # NOTE: in the video I incorrectly used = instead of +=. Fixed here.\n    out._backward = _backward\n    \n    return out\n  \n  \n  def backward(self):\n    \n    topo = []\n    visited = set()\n    def build_topo(v):\n      if v not in visited:\n        visited.add(v)\n        for child in v._prev:\n          build_topo(child)\n        topo.append(v)\n    build_topo(self)\n    \n    self.grad = 1.0\n    for node in reversed(topo):\n      node._backward()\n\n"

# nn-zero-to-hero, micrograd lecture second half, cell 8: `trace` and `draw_dot` with graphviz's Digraph
DRAW_DOT = "from graphviz import Digraph\n\ndef trace(root):\n  # builds a set of all nodes and edges in a graph\n  nodes, edges = set(), set()\n  def build(v):\n    if v not in nodes:\n      nodes.add(v)\n      for child in v._prev:\n        edges.add((child, v))\n        build(child)\n  build(root)\n  return nodes, edges\n\ndef draw_dot(root):\n  dot = Digraph(format='svg', graph_attr={'rankdir': 'LR'}) # LR = left to right\n  \n  nodes, edges = trace(root)\n  for n in nodes:\n    uid = str(id(n))\n    # for any value in the graph, create a rectangular ('record') node for it\n    dot.node(name = uid, label = \"{ %s | data %.4f | grad %.4f }\" % (n.label, n.data, n.grad), shape='record')\n    if n._op:\n      # if this value is a result of some operation, create an op node for it\n      dot.node(name = uid + n._op, label = n._op)\n      # and connect this node to it\n      dot.edge(uid + n._op, uid)\n\n  for n1, n2 in edges:\n    # connect n1 to the op node of n2\n    dot.edge(str(id(n1)), str(id(n2)) + n2._op)\n\n  return dot\n"

# nn-zero-to-hero, micrograd lecture second half, cell 9: the neuron x1*w1 + x2*w2 + b, tanh, o.backward()
NEURON_CELL_9 = "# inputs x1,x2\nx1 = Value(2.0, label='x1')\nx2 = Value(0.0, label='x2')\n# weights w1,w2\nw1 = Value(-3.0, label='w1')\nw2 = Value(1.0, label='w2')\n# bias of the neuron\nb = Value(6.8813735870195432, label='b')\n# x1*w1 + x2*w2 + b\nx1w1 = x1*w1; x1w1.label = 'x1*w1'\nx2w2 = x2*w2; x2w2.label = 'x2*w2'\nx1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'\nn = x1w1x2w2 + b; n.label = 'n'\no = n.tanh(); o.label = 'o'\no.backward()"

# nn-zero-to-hero, micrograd lecture second half, cell 10: `draw_dot(o)`
DRAW_O = "draw_dot(o)"

# nn-zero-to-hero, micrograd lecture second half, cell 14: Neuron, Layer, MLP with random.uniform
MLP_CLASSES = "\nclass Neuron:\n  \n  def __init__(self, nin):\n    self.w = [Value(random.uniform(-1,1)) for _ in range(nin)]\n    self.b = Value(random.uniform(-1,1))\n  \n  def __call__(self, x):\n    # w * x + b\n    act = sum((wi*xi for wi, xi in zip(self.w, x)), self.b)\n    out = act.tanh()\n    return out\n  \n  def parameters(self):\n    return self.w + [self.b]\n\nclass Layer:\n  \n  def __init__(self, nin, nout):\n    self.neurons = [Neuron(nin) for _ in range(nout)]\n  \n  def __call__(self, x):\n    outs = [n(x) for n in self.neurons]\n    return outs[0] if len(outs) == 1 else outs\n  \n  def parameters(self):\n    return [p for neuron in self.neurons for p in neuron.parameters()]\n\nclass MLP:\n  \n  def __init__(self, nin, nouts):\n    sz = [nin] + nouts\n    self.layers = [Layer(sz[i], sz[i+1]) for i in range(len(nouts))]\n  \n  def __call__(self, x):\n    for layer in self.layers:\n      x = layer(x)\n    return x\n  \n  def parameters(self):\n    return [p for layer in self.layers for p in layer.parameters()]\n"

# nn-zero-to-hero, micrograd lecture second half, cell 15: `n = MLP(3, [4, 4, 1])` and `n(x)`
MLP_CALL = "x = [2.0, 3.0, -1.0]\nn = MLP(3, [4, 4, 1])\nn(x)"

# nn-zero-to-hero, micrograd lecture second half, cell 16: the four examples xs, ys
DATASET = "xs = [\n  [2.0, 3.0, -1.0],\n  [3.0, -1.0, 0.5],\n  [0.5, 1.0, 1.0],\n  [1.0, 1.0, -1.0],\n]\nys = [1.0, -1.0, -1.0, 1.0] # desired targets"

# nn-zero-to-hero, micrograd lecture second half, cell 17: 20 steps of gradient descent
TRAINING_LOOP = "\nfor k in range(20):\n  \n  # forward pass\n  ypred = [n(x) for x in xs]\n  loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))\n  \n  # backward pass\n  for p in n.parameters():\n    p.grad = 0.0\n  loss.backward()\n  \n  # update\n  for p in n.parameters():\n    p.data += -0.1 * p.grad\n  \n  print(k, loss.data)\n  "

# micrograd's trace_graph.ipynb cell 0: `from graphviz import Digraph`
TG_IMPORT_GRAPHVIZ = "# brew install graphviz\n# pip install graphviz\nfrom graphviz import Digraph"

# micrograd's trace_graph.ipynb cell 1: `from micrograd.engine import Value`
TG_IMPORT_VALUE = "from micrograd.engine import Value"

# micrograd's trace_graph.ipynb cell 2: `trace` and `draw_dot(root, format, rankdir)`
TG_DRAW_DOT = "def trace(root):\n    nodes, edges = set(), set()\n    def build(v):\n        if v not in nodes:\n            nodes.add(v)\n            for child in v._prev:\n                edges.add((child, v))\n                build(child)\n    build(root)\n    return nodes, edges\n\ndef draw_dot(root, format='svg', rankdir='LR'):\n    \"\"\"\n    format: png | svg | ...\n    rankdir: TB (top to bottom graph) | LR (left to right)\n    \"\"\"\n    assert rankdir in ['LR', 'TB']\n    nodes, edges = trace(root)\n    dot = Digraph(format=format, graph_attr={'rankdir': rankdir}) #, node_attr={'rankdir': 'TB'})\n    \n    for n in nodes:\n        dot.node(name=str(id(n)), label = \"{ data %.4f | grad %.4f }\" % (n.data, n.grad), shape='record')\n        if n._op:\n            dot.node(name=str(id(n)) + n._op, label=n._op)\n            dot.edge(str(id(n)) + n._op, str(id(n)))\n    \n    for n1, n2 in edges:\n        dot.edge(str(id(n1)), str(id(n2)) + n2._op)\n    \n    return dot"

# micrograd's trace_graph.ipynb cell 4: `from micrograd import nn`, random.seed(1337), a 2D neuron
TG_NN_NEURON = "# a simple 2D neuron\nimport random\nfrom micrograd import nn\n\nrandom.seed(1337)\nn = nn.Neuron(2)\nx = [Value(1.0), Value(-2.0)]\ny = n(x)\ny.backward()\n\ndot = draw_dot(y)\ndot"


# --- The oracle: the cells run as Python (this is the tests' code, never the engine's). ---


class Number(float):
    """A float with PyTorch's `.item()`, for a cell that prints `x.grad.item()`."""

    def item(self) -> float:
        return float(self)


class Value:
    """A scalar in the lecture's model, with ordered children (so `a + a` keeps two edges)."""

    made: list[Value] = []

    def __init__(self, data: float, _children: tuple = (), _op: str = "", label: str = ""):
        self.data = Number(data)
        self.grad = Number(0.0)
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op
        self.label = label
        self.const = False
        Value.made.append(self)

    @staticmethod
    def wrap(other: Any) -> Value:
        if isinstance(other, Value):
            return other
        const = Value(other)
        const.const = True
        return const

    def _out(self, data: float, children: tuple, op: str, locals_: tuple) -> Value:
        out = Value(data, children, op)

        def _backward() -> None:
            for child, local in zip(children, locals_, strict=True):
                child.grad = Number(child.grad + local * out.grad)

        out._backward = _backward
        return out

    def __add__(self, other: Any) -> Value:
        other = Value.wrap(other)
        return self._out(self.data + other.data, (self, other), "+", (1.0, 1.0))

    def __mul__(self, other: Any) -> Value:
        other = Value.wrap(other)
        return self._out(self.data * other.data, (self, other), "*", (other.data, self.data))

    def __pow__(self, k: Any) -> Value:
        if isinstance(k, Value):  # a Value exponent (PyTorch's `a ** b`)
            out = self.data**k.data
            # ∂/∂b as PyTorch's pow_backward_exponent: 0 where a = 0 and b >= 0, NaN for a < 0.
            if self.data > 0:
                by_exponent = out * math.log(self.data)
            else:
                by_exponent = 0.0 if self.data == 0 and k.data >= 0 else math.nan
            locals_ = (k.data * self.data ** (k.data - 1), by_exponent)
            return self._out(out, (self, k), "**", locals_)
        return self._out(self.data**k, (self,), f"**{k}", (k * self.data ** (k - 1),))

    def __rpow__(self, base: float) -> Value:
        return Value.wrap(base) ** self

    def __neg__(self) -> Value:
        return self * -1

    def __sub__(self, other: Any) -> Value:
        return self + (-Value.wrap(other))

    def __truediv__(self, other: Any) -> Value:
        return self * Value.wrap(other) ** -1

    def __radd__(self, other: Any) -> Value:
        return self + other

    def __rmul__(self, other: Any) -> Value:
        return self * other

    def __rsub__(self, other: Any) -> Value:
        return Value.wrap(other) + (-self)

    def __rtruediv__(self, other: Any) -> Value:
        return Value.wrap(other) * self**-1

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        return self._out(t, (self,), "tanh", (1 - t * t,))

    def exp(self) -> Value:
        e = math.exp(self.data)
        return self._out(e, (self,), "exp", (e,))

    def log(self) -> Value:
        return self._out(math.log(self.data), (self,), "log", (1 / self.data,))

    def relu(self) -> Value:
        return self._out(max(self.data, 0.0), (self,), "ReLU", (float(self.data > 0),))

    def sigmoid(self) -> Value:
        s = 1 / (1 + math.exp(-self.data))
        return self._out(s, (self,), "sigmoid", (s * (1 - s),))

    def sin(self) -> Value:
        return self._out(math.sin(self.data), (self,), "sin", (math.cos(self.data),))

    def double(self) -> Value:  # PyTorch's: the tensor in double precision
        return self

    def item(self) -> float:
        return float(self.data)

    def nodes(self) -> list[Value]:
        """Every node the root reaches, each once, inputs before the nodes they feed."""
        order: list[Value] = []
        seen: set[int] = set()
        stack: list[tuple[Value, bool]] = [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node._prev))
        return order

    def backward(self) -> None:
        order = self.nodes()
        for node in order:
            node.grad = Number(0.0)
        self.grad = Number(1.0)
        for node in reversed(order):
            node._backward()


def _torch() -> types.SimpleNamespace:
    """The scalar PyTorch the cells use, on the oracle's Value (double precision throughout)."""

    def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Value:
        return Value(data[0] if isinstance(data, list) else data)

    return types.SimpleNamespace(
        Tensor=tensor,
        tensor=tensor,
        float64="float64",
        double="float64",
        tanh=Value.tanh,
        relu=Value.relu,
        exp=Value.exp,
        log=Value.log,
        sigmoid=Value.sigmoid,
        sin=Value.sin,
    )


class _Drawing:
    def render(self, *args: Any, **kwargs: Any) -> None:
        pass


def _import(name: str, *args: Any, **kwargs: Any) -> Any:
    """Imports as the cells mean them: micrograd's Value is the oracle's, torch the stand-in."""
    if name.startswith("micrograd"):
        engine = types.SimpleNamespace(Value=Value)
        return types.SimpleNamespace(engine=engine, Value=Value)
    if name == "torch":
        return _torch()
    return builtins.__import__(name, *args, **kwargs)


def run(cell: Cell) -> tuple[Value, list[Value]]:
    """Run `cell` as CPython does (print silenced, draw_dot a no-op): its root, after a fresh
    backward pass, and its leaves (the Values written as numbers, in the order they were made;
    numbers an operation wraps are constants, as in chainrule)."""
    Value.made = []
    scope: dict[str, Any] = {
        "__builtins__": {**vars(builtins), "__import__": _import, "print": lambda *a, **k: None},
        "Value": Value,
        "torch": _torch(),
        "draw_dot": lambda root: _Drawing(),
    }
    exec(compile(cell.source.replace("\n    ", "\n").strip(), cell.id, "exec"), scope)
    root = scope[cell.root]
    root.backward()
    reached = {id(node) for node in root.nodes()}
    leaves = [v for v in Value.made if not v._prev and not v.const and id(v) in reached]
    return root, leaves


# micrograd's demo.ipynb (karpathy/micrograd@0401485 demo.ipynb), its code cells up to the
# first loss, as a learner copies them: numpy and matplotlib imported, both generators seeded,
# scikit-learn's moons, `y*2 - 1`, the scatter plot, the model and its `loss()`, then the
# training loop's first `total_loss.backward()`. SAMPLES stands for the notebook's 100 (the
# page's sandbox draws graphs of up to 5,000 nodes: 6 moons).
DEMO_CELLS = """\
import random
import numpy as np
import matplotlib.pyplot as plt
%matplotlib inline
from micrograd.engine import Value
from micrograd.nn import Neuron, Layer, MLP
np.random.seed(1337)
random.seed(1337)
# make up a dataset

from sklearn.datasets import make_moons, make_blobs
X, y = make_moons(n_samples=SAMPLES, noise=0.1)

y = y*2 - 1 # make y be -1 or 1
# visualize in 2D
plt.figure(figsize=(5,5))
plt.scatter(X[:,0], X[:,1], c=y, s=20, cmap='jet')
# initialize a model
model = MLP(2, [16, 16, 1]) # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))
# loss function
def loss(batch_size=None):

    # inline DataLoader :)
    if batch_size is None:
        Xb, yb = X, y
    else:
        ri = np.random.permutation(X.shape[0])[:batch_size]
        Xb, yb = X[ri], y[ri]
    inputs = [list(map(Value, xrow)) for xrow in Xb]

    # forward the model to get scores
    scores = list(map(model, inputs))

    # svm "max-margin" loss
    losses = [(1 + -yi*scorei).relu() for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p*p for p in model.parameters()))
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)

total_loss, acc = loss()
print(total_loss, acc)
total_loss.backward()
"""
