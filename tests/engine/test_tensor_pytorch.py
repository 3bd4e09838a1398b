"""Copy as PyTorch of a tensor program (static/js/io/tensor-pytorch.js) under Node, against the
engine's replies. torch is not installed, so the script is checked two ways: read back by
chainrule's tensor reader it is the same program with the same numbers (every tensor's data and
gradient, exactly), and run by Python on an independent stand-in for PyTorch (NumPy, with HIPS
autograd's gradients) it prints the result and each named leaf's gradient to 1e-9."""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import math
import tempfile
import types
from collections import namedtuple
from pathlib import Path

import autograd
import autograd.numpy as anp
import node_driver
import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from node_driver import NODE
from test_tensor_gradients import programs

import chainrule
from chainrule.bench.tensors import makemore
from chainrule.engine.ops import page_table
from chainrule.engine.tensor_program import FUNCTIONS_OF_PROGRAMS, trace_tensors

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

DRIVER = """
import { readFileSync } from "node:fs";
const { useOpTable } = await import("./compute/ops.js");
const { tensorPytorchScript, TORCH_FUNCTIONS } = await import("./io/tensor-pytorch.js");
const { table, replies } = JSON.parse(readFileSync(process.argv[2], "utf8"));
useOpTable(table);
const scripts = replies.map(tensorPytorchScript);
console.log(JSON.stringify({ scripts, functions: TORCH_FUNCTIONS }));
"""

ISSUE = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
W2 = randn(3, 3, seed=1)
h = tanh(X @ W + b)
loss = cross_entropy(h @ W2, tensor([2, 0, 1]))"""
BIGRAM = """import torch
import torch.nn.functional as F
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)
xs = torch.tensor([0, 5, 13, 13, 1])
ys = torch.tensor([5, 13, 13, 1, 0])
xenc = F.one_hot(xs, num_classes=27).float()
logits = xenc @ W  # log-counts
counts = logits.exp()
probs = counts / counts.sum(1, keepdims=True)
loss = -probs[torch.arange(5), ys].log().mean()
loss.backward()"""
# An unnamed result, inline leaves, the reductions, views, indexing and the table's functions.
MIXED = """A = randn(4, 3, seed=7)
B = randn(3, 2, seed=8) * 0.5
c = ones(2)
Y = randint(0, 2, (4,), seed=9)
s = softmax(A @ B + c, 1)
l = log_softmax(A, dim=1).max(1).values
v = A.var(0, keepdim=True) + A.T.reshape(2, -1).sum(0).mean()
z = torch.cat([A[:, 0:1], sigmoid(A[1:3, -2:]).view(-1, 1) ** 2], 0)
w = torch.stack([A, A * 2], 0) @ B
k = stack([A[::2, 0], A[1::2, 1]], 1)
(s[range(4), Y].sum() - l.mean() + v.sum() + relu(z).sum() + exp(-B).mean() / 2 + w.mean()
 + k.sum())"""
# Augmented assignments make new tensors (PyTorch's are in place: a leaf refuses, tanh's backward
# fails), a leaf the result does not need.
AUGMENTED = """W = randn(3, 3, seed=4)
unused = zeros(2)
h = tanh(W @ W)
h += 1  # shifted
h *= W.sum(0, keepdim=True)
h **= 2
h @= W
L = h.mean()"""
PROGRAMS = {
    "issue": ISSUE,
    "bigram": BIGRAM,
    "mixed": MIXED,
    "augmented": AUGMENTED,
    "makemore": makemore(3),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    replies = [chainrule.trace(source) for source in PROGRAMS.values()]
    out = node_driver.run_node(
        tmp_path_factory.mktemp("torch"), {"table": page_table(), "replies": replies}, DRIVER
    )
    return dict(zip(PROGRAMS, out["scripts"], strict=True)), out["functions"]


def test_the_issue_s_program_is_written_out_and_kept_as_written(written):
    script = written[0]["issue"]
    assert "from torch import tanh\nfrom torch.nn.functional import cross_entropy\n" in script
    leaf = ", dtype=torch.float64, requires_grad=True)"
    assert f"W = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]]{leaf}" in script
    seeded = [v.data for v in trace_tensors(ISSUE).tensor("W2").elements]
    assert f"W2 = torch.tensor([[{seeded[0]!r}, {seeded[1]!r}, {seeded[2]!r}], [" in script
    assert "h = tanh(X @ W + b)\nloss = cross_entropy(h @ W2, torch.tensor([2, 0, 1]))" in script
    assert script.endswith(
        'loss.backward()\nprint("loss =", loss.item())\nprint("dX =", X.grad.tolist())\n'
        'print("dW =", W.grad.tolist())\nprint("db =", b.grad.tolist())\n'
        'print("dW2 =", W2.grad.tolist())\n'
    )


def test_makemore_s_cells_keep_their_backward_and_cast(written):
    bigram = written[0]["bigram"]
    # one_hot(...).float() is a float64 literal (a .float() would make it float32 in torch).
    assert "xenc = torch.tensor([[0.0, 0.0, 0.0, 0.0, 0.0, 1.0" not in bigram
    assert "xenc = torch.tensor([[1.0, 0.0" in bigram and ".float()" not in bigram
    assert "probs[torch.tensor([0, 1, 2, 3, 4]), ys]" in bigram
    assert bigram.count(".backward()") == 1  # the program's own
    assert "# log-counts" in bigram  # its comments kept
    mixed = written[0]["mixed"]
    assert "\nout = (s[torch.tensor([0, 1, 2, 3]), Y].sum()" in mixed and "out.backward()" in mixed
    assert "from torch import relu, exp, sigmoid, softmax, log_softmax, stack\n" in mixed


def test_augmented_assignments_make_new_tensors_as_chainrule_reads_them(written):
    script = written[0]["augmented"]
    assert (
        "h = h + (1)  # shifted\nh = h * (W.sum(0, keepdim=True))\nh = h ** (2)\nh = h @ (W)\n"
        in script
    )
    assert "# dunused: L does not depend on unused (its .grad stays None)" in script
    assert 'print("dW =", W.grad.tolist())' in script


def test_every_function_of_the_language_is_written_out_or_has_a_torch_spelling(written):
    """The page's list of the language's functions (TORCH_FUNCTIONS) is the engine's: each is
    PyTorch's, a maker the script writes out as a literal, or Python's own (`range`)."""
    makers = {"tensor", "Tensor", "randn", "zeros", "ones", "randint", "arange"}
    table = {row["public"] for row in page_table().values() if row["call"]}
    spelled = {name for names in written[1].values() for name in names}
    assert set(FUNCTIONS_OF_PROGRAMS) == makers | table | spelled | {"range"}


@pytest.mark.parametrize("name", PROGRAMS)
def test_read_back_it_is_the_same_program_with_the_same_numbers(written, name):
    original, pasted = trace_tensors(PROGRAMS[name]), trace_tensors(written[0][name])
    assert pasted.root.elements[0].data == original.root.elements[0].data
    # Each name's tensors in order (`h += 1` names a new one): the same in both.
    named = [t for t in original.tensors if t.name]
    added = "out" if not original.root.name else None  # the script's name of the result
    again_named = [t for t in pasted.tensors if t.name and t.name != added]
    assert [t.name for t in again_named] == [t.name for t in named]
    for tensor, again in zip(named, again_named, strict=True):
        assert again.shape == tensor.shape, tensor.name
        if tensor.ints is not None:  # an integer tensor: its integers
            assert again.ints == tensor.ints, tensor.name
            continue
        assert [v.data for v in again.elements] == [v.data for v in tensor.elements], tensor.name
        if tensor.kind != "const":  # one_hot's is written out as a float leaf: no grad compared
            assert [v.grad for v in again.elements] == [v.grad for v in tensor.elements]


# The stand-in for PyTorch: a tensor is a NumPy array and the function that computes it from
# the leaves' arrays with autograd.numpy; backward() differentiates that function with HIPS
# autograd. Only what the scripts use.
class Tensor:
    def __init__(self, value, compute, leaves=(), requires_grad=False):
        self.value = np.asarray(value)
        self._compute = compute
        self.leaves = leaves
        self.requires_grad = requires_grad
        self.grad = None

    @staticmethod
    def leaf(value, requires_grad=False):
        tensor = Tensor(value, None, requires_grad=requires_grad)
        tensor._compute = lambda env: env.get(id(tensor), tensor.value)
        tensor.leaves = (tensor,) if requires_grad else ()
        return tensor

    def compute(self, env):
        memo = env.setdefault("memo", {})
        if id(self) not in memo:
            memo[id(self)] = self._compute(env)
        return memo[id(self)]

    @property
    def shape(self):
        return self.value.shape

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def item(self):
        return float(self.value)

    def tolist(self):
        return self.value.tolist()

    def float(self):
        return self

    double = requires_grad_ = float

    def backward(self):
        leaves = list(dict.fromkeys(self.leaves))

        def of_leaves(arrays):
            return self.compute(dict(zip(map(id, leaves), arrays, strict=True)))

        grads = autograd.grad(of_leaves)([leaf.value for leaf in leaves])
        for leaf, grad in zip(leaves, grads, strict=True):
            leaf.grad = Tensor.leaf(grad)

    def __getitem__(self, key):
        key = tuple(k.value if isinstance(k, Tensor) else list(k) if isinstance(k, range) else k
                    for k in (key if isinstance(key, tuple) else (key,)))  # fmt: skip
        return apply(lambda x: x[key], self)

    def view(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        return apply(lambda x: anp.reshape(x, shape), self)

    reshape = view

    @property
    def T(self):  # noqa: N802
        return apply(anp.transpose, self)

    def t(self):
        return self.T

    def transpose(self, a, b):
        return apply(lambda x: anp.swapaxes(x, a, b), self)

    def sum(self, dim=None, keepdim=False, keepdims=None):
        return apply(lambda x: anp.sum(x, axis=dim, keepdims=keepdims or keepdim), self)

    def mean(self, dim=None, keepdim=False, keepdims=None):
        return apply(lambda x: anp.mean(x, axis=dim, keepdims=keepdims or keepdim), self)

    def var(self, dim=None, keepdim=False):
        return apply(lambda x: anp.var(x, axis=dim, ddof=1, keepdims=keepdim), self)

    def std(self, dim=None, keepdim=False):
        return apply(lambda x: anp.std(x, axis=dim, ddof=1, keepdims=keepdim), self)

    def max(self, dim=None, keepdim=False):
        values = apply(lambda x: anp.max(x, axis=dim, keepdims=keepdim), self)
        if dim is None:
            return values
        return MaxResult(values, Tensor.leaf(np.argmax(self.value, axis=dim)))

    def exp(self):
        return apply(anp.exp, self)

    def log(self):
        return apply(anp.log, self)

    def tanh(self):
        return apply(anp.tanh, self)


MaxResult = namedtuple("MaxResult", "values indices")


def apply(fn, *args):
    """fn of tensors and constants, as a tensor."""
    value = fn(*(a.value if isinstance(a, Tensor) else a for a in args))
    leaves = tuple(leaf for a in args if isinstance(a, Tensor) for leaf in a.leaves)
    return Tensor(
        value,
        lambda env: fn(*(a.compute(env) if isinstance(a, Tensor) else a for a in args)),
        leaves,
    )


for dunder, fn in {
    "add": anp.add, "sub": anp.subtract, "mul": anp.multiply, "truediv": anp.true_divide,
    "pow": anp.power, "matmul": anp.matmul,
}.items():  # fmt: skip
    setattr(Tensor, f"__{dunder}__", lambda a, b, fn=fn: apply(fn, a, b))
    setattr(Tensor, f"__r{dunder}__", lambda a, b, fn=fn: apply(fn, b, a))
Tensor.__neg__ = lambda a: apply(anp.negative, a)


def _softmax(x, dim):
    def fn(v):
        e = anp.exp(v - np.max(getattr(v, "_value", v), axis=dim, keepdims=True))
        return e / anp.sum(e, axis=dim, keepdims=True)

    return apply(fn, x)


def _log_softmax(x, dim):
    def fn(v):
        shifted = v - np.max(getattr(v, "_value", v), axis=dim, keepdims=True)
        return shifted - anp.log(anp.sum(anp.exp(shifted), axis=dim, keepdims=True))

    return apply(fn, x)


def _cross_entropy(logits, target):
    rows = np.arange(logits.shape[0])
    return (-_log_softmax(logits, 1)[rows, target.value]).mean()


def stand_in_torch() -> dict[str, types.ModuleType]:
    """The modules `torch`, `torch.nn` and `torch.nn.functional` of the stand-in."""
    torch, nn, functional = (types.ModuleType(name) for name in
                             ("torch", "torch.nn", "torch.nn.functional"))  # fmt: skip
    torch.nn, nn.functional = nn, functional
    torch.float64, torch.float32, torch.long = np.float64, np.float32, np.int64

    def tensor(data, dtype=None, requires_grad=False):
        array = np.array(data, dtype=dtype)
        return Tensor.leaf(array, requires_grad)

    class Generator:
        def manual_seed(self, seed):
            return self

    for name, fn in {
        "tensor": tensor, "Generator": Generator, "manual_seed": lambda seed: None,
        "tanh": Tensor.tanh, "exp": Tensor.exp, "log": Tensor.log,
        "sigmoid": lambda x: apply(lambda v: 1 / (1 + anp.exp(-v)), x),
        "relu": lambda x: apply(lambda v: anp.maximum(v, 0.0), x),
        "sin": lambda x: apply(anp.sin, x), "softmax": _softmax, "log_softmax": _log_softmax,
        "cat": lambda tensors, dim=0: apply(lambda *vs: anp.concatenate(vs, axis=dim), *tensors),
        "stack": lambda tensors, dim=0: apply(lambda *vs: anp.stack(vs, axis=dim), *tensors),
        "sum": Tensor.sum, "mean": Tensor.mean, "max": Tensor.max, "matmul": Tensor.__matmul__,
    }.items():  # fmt: skip
        setattr(torch, name, fn)
    functional.cross_entropy = _cross_entropy
    return {"torch": torch, "torch.nn": nn, "torch.nn.functional": functional}


def run_on_stand_in(script: str) -> dict[str, object]:
    """What the script prints, `name = value` a line, as {name: value}."""
    modules = stand_in_torch()

    def imports(name, globals=None, locals=None, fromlist=(), level=0):
        if name in modules:
            return modules[name] if fromlist else modules[name.split(".")[0]]
        return __import__(name, globals, locals, fromlist, level)

    printed = io.StringIO()
    scope = {"__builtins__": {**vars(builtins), "__import__": imports}}
    with contextlib.redirect_stdout(printed):
        exec(compile(script, "torch.py", "exec"), scope)
    lines = printed.getvalue().splitlines()
    return {line.split(" = ")[0]: printed_number(line.split(" = ", 1)[1]) for line in lines}


def printed_number(text: str) -> object:
    """A number, or nested lists of them, as Python prints them: `nan`, `inf` and `-inf` too
    (`std` of equal numbers has an infinite slope: a NaN gradient)."""
    tree = ast.parse(text, mode="eval")
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert names <= {"nan", "inf"}, text
    return eval(
        compile(tree, "printed", "eval"), {"__builtins__": {}}, {"nan": math.nan, "inf": math.inf}
    )


def close(a, b) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    b = float(b)  # the reply's "NaN", "Infinity"
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))


def check_printed(reply: dict, script: str) -> None:
    """The script run on the stand-in prints the reply's result and each named leaf's
    gradient, to 1e-9."""
    printed = run_on_stand_in(script)
    root = next(n for n in reply["nodes"] if n["id"] == reply["root"])
    result = root["name"] or "out"
    assert close(printed.pop(result), root["data"])
    reached = {g["input"] for step in reply["steps"] for g in step["grads"] or ()}
    leaves = {leaf["name"] for leaf in reply["leaves"] if leaf["id"] in reached}
    assert set(printed) == {f"d{name}" for name in leaves}
    for leaf in reply["leaves"]:
        if leaf["id"] not in reached:  # PyTorch leaves its .grad None: said, not printed
            assert f"# d{leaf['name']}: " in script, leaf
    for node in reply["nodes"]:
        if node["kind"] == "leaf" and node["name"] in leaves:
            assert close(printed[f"d{node['name']}"], node["grad"]), node["name"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_run_on_a_numpy_stand_in_for_pytorch_it_prints_the_engine_s_numbers(written, name):
    check_printed(chainrule.trace(PROGRAMS[name]), written[0][name])


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(programs(), min_size=20, max_size=20))
def test_random_programs_copied_as_pytorch_print_autograd_s_numbers(batch) -> None:
    """test_tensor_gradients.py's random programs (every op of the language), twenty at a time
    through Node: each script, run on the stand-in, prints the engine's numbers; read back, it is
    the same program."""
    sources = [source for source, _, _ in batch]
    replies = [chainrule.trace(source) for source in sources]
    scripts = node_driver.run_node(
        Path(tempfile.mkdtemp(prefix="torch-")), {"table": page_table(), "replies": replies}, DRIVER
    )["scripts"]
    for source, reply, script in zip(sources, replies, scripts, strict=True):
        note(source)
        check_printed(reply, script)
        again = trace_tensors(script)
        assert again.root.elements[0].data == trace_tensors(source).root.elements[0].data
