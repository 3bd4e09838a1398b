"""Code cells of public micrograd lessons, verbatim (the sandbox's tests paste them as a
learner would). Each string is one notebook cell's source, unchanged:

- karpathy/nn-zero-to-hero @ 73c3fcc741f0,
  lectures/micrograd/micrograd_lecture_second_half_roughly.ipynb (MIT);
- karpathy/micrograd @ c911406e5ace, trace_graph.ipynb (MIT).
"""

from __future__ import annotations

# nn-zero-to-hero, micrograd lecture second half, cell 0: the imports (numpy, matplotlib, %matplotlib inline)
IMPORTS = "import math\nimport random\nimport numpy as np\nimport matplotlib.pyplot as plt\n%matplotlib inline"

# nn-zero-to-hero, micrograd lecture second half, cell 7: the lecture's `class Value`
VALUE_CLASS = "class Value:\n  \n  def __init__(self, data, _children=(), _op='', label=''):\n    self.data = data\n    self.grad = 0.0\n    self._backward = lambda: None\n    self._prev = set(_children)\n    self._op = _op\n    self.label = label\n\n  def __repr__(self):\n    return f\"Value(data={self.data})\"\n  \n  def __add__(self, other):\n    other = other if isinstance(other, Value) else Value(other)\n    out = Value(self.data + other.data, (self, other), '+')\n    \n    def _backward():\n      self.grad += 1.0 * out.grad\n      other.grad += 1.0 * out.grad\n    out._backward = _backward\n    \n    return out\n\n  def __mul__(self, other):\n    other = other if isinstance(other, Value) else Value(other)\n    out = Value(self.data * other.data, (self, other), '*')\n    \n    def _backward():\n      self.grad += other.data * out.grad\n      other.grad += self.data * out.grad\n    out._backward = _backward\n      \n    return out\n  \n  def __pow__(self, other):\n    assert isinstance(other, (int, float)), \"only supporting int/float powers for now\"\n    out = Value(self.data**other, (self,), f'**{other}')\n\n    def _backward():\n        self.grad += other * (self.data ** (other - 1)) * out.grad\n    out._backward = _backward\n\n    return out\n  \n  def __rmul__(self, other): # other * self\n    return self * other\n\n  def __truediv__(self, other): # self / other\n    return self * other**-1\n\n  def __neg__(self): # -self\n    return self * -1\n\n  def __sub__(self, other): # self - other\n    return self + (-other)\n\n  def __radd__(self, other): # other + self\n    return self + other\n\n  def tanh(self):\n    x = self.data\n    t = (math.exp(2*x) - 1)/(math.exp(2*x) + 1)\n    out = Value(t, (self, ), 'tanh')\n    \n    def _backward():\n      self.grad += (1 - t**2) * out.grad\n    out._backward = _backward\n    \n    return out\n  \n  def exp(self):\n    x = self.data\n    out = Value(math.exp(x), (self, ), 'exp')\n    \n    def _backward():\n      self.grad += out.data * out.grad # NOTE: in the video I incorrectly used = instead of +=. Fixed here.\n    out._backward = _backward\n    \n    return out\n  \n  \n  def backward(self):\n    \n    topo = []\n    visited = set()\n    def build_topo(v):\n      if v not in visited:\n        visited.add(v)\n        for child in v._prev:\n          build_topo(child)\n        topo.append(v)\n    build_topo(self)\n    \n    self.grad = 1.0\n    for node in reversed(topo):\n      node._backward()\n\n"

# nn-zero-to-hero, micrograd lecture second half, cell 8: `trace` and `draw_dot` with graphviz's Digraph
DRAW_DOT = "from graphviz import Digraph\n\ndef trace(root):\n  # builds a set of all nodes and edges in a graph\n  nodes, edges = set(), set()\n  def build(v):\n    if v not in nodes:\n      nodes.add(v)\n      for child in v._prev:\n        edges.add((child, v))\n        build(child)\n  build(root)\n  return nodes, edges\n\ndef draw_dot(root):\n  dot = Digraph(format='svg', graph_attr={'rankdir': 'LR'}) # LR = left to right\n  \n  nodes, edges = trace(root)\n  for n in nodes:\n    uid = str(id(n))\n    # for any value in the graph, create a rectangular ('record') node for it\n    dot.node(name = uid, label = \"{ %s | data %.4f | grad %.4f }\" % (n.label, n.data, n.grad), shape='record')\n    if n._op:\n      # if this value is a result of some operation, create an op node for it\n      dot.node(name = uid + n._op, label = n._op)\n      # and connect this node to it\n      dot.edge(uid + n._op, uid)\n\n  for n1, n2 in edges:\n    # connect n1 to the op node of n2\n    dot.edge(str(id(n1)), str(id(n2)) + n2._op)\n\n  return dot\n"

# nn-zero-to-hero, micrograd lecture second half, cell 9: the neuron x1*w1 + x2*w2 + b, tanh, o.backward()
NEURON = "# inputs x1,x2\nx1 = Value(2.0, label='x1')\nx2 = Value(0.0, label='x2')\n# weights w1,w2\nw1 = Value(-3.0, label='w1')\nw2 = Value(1.0, label='w2')\n# bias of the neuron\nb = Value(6.8813735870195432, label='b')\n# x1*w1 + x2*w2 + b\nx1w1 = x1*w1; x1w1.label = 'x1*w1'\nx2w2 = x2*w2; x2w2.label = 'x2*w2'\nx1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'\nn = x1w1x2w2 + b; n.label = 'n'\no = n.tanh(); o.label = 'o'\no.backward()"

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
