"""The tensor language (docs/tensors.md): what reads, what each op makes, and every refusal with
its exact type, message and position; the bounds; our seeded numbers."""

from __future__ import annotations

import time

import pytest

from chainrule import engine
from chainrule.engine.builder import Limits
from chainrule.engine.seeded import Generator
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import tensor_reply
from chainrule.engine.tensors import NODES_PER_ELEMENT
from chainrule.engine.tracing import trace

SERVER = Limits(100_000, 20_000, 200)


def shapes(source: str) -> dict[str, tuple[int, ...]]:
    found = trace_tensors(source, limits=SERVER)
    return {t.name: t.shape for t in found.tensors if t.name}


# ---- which reader reads a program -----------------------------------------------------------

TENSOR_OR_NOT = [
    ("X = tensor([[1.0, 2.0]])", True),
    ("W = randn(3, 2, seed=1)", True),
    ("y = x @ W", True),
    ("y = (x)@W", True),
    ("L = F.cross_entropy(logits, Y)", True),
    ("a = 2\nb = a * 3", False),
    # the micrograd lecture's PyTorch scalars stay scalars
    ("x1 = torch.tensor([2.0]).double(); x1.requires_grad = True\nn = x1 * 2", False),
    ("x1 = torch.Tensor([2.0]).double()\nn = x1 * 2", False),
    ("@dataclass\nclass A:\n    x: int", False),  # a decorator is no `@` between operands
    ("a = 2  # randn(3, 2) in a comment\nb = a * 3", False),
    ("a = 2  # a @ b in a comment\nb = a * 3", False),
    # a label is text: micrograd's graph of a matrix lesson, read back (chainrule.trace_value)
    ("a = 2.0; a.label = 'W @ x'\nb = a * 3", False),
    ('a = 2.0; a.label = "randn(2, 3)"\nb = a * 3', False),
    ("a = 2.0; a.label = 'a'; b = a @ a", True),  # after the string has closed
    ("ones = 2\nbones = ones * 3", False),  # a name, not a call
    ("y = 2 *\n@ x", False),
    ("h = tanh(zeros (3) + 1).sum()", True),
]


@pytest.mark.parametrize(("source", "tensor"), TENSOR_OR_NOT)
def test_a_tensor_program_is_told_from_a_scalar_one(source: str, tensor: bool) -> None:
    assert is_tensor_program(source) is tensor


def test_scalar_programs_are_read_as_before() -> None:
    reply = trace("a = 2\nb = -3\nc = 10\nf = (a + b) * c").to_dict()
    assert "kind" not in reply and reply["nodes"][-1]["data"] == -10.0


# ---- what each op makes ---------------------------------------------------------------------

SHAPES = [
    ("A = randn(3, 2, seed=1)\nB = randn(2, 4, seed=2)\nY = A @ B\nL = Y.sum()", "Y", (3, 4)),
    ("a = randn(2, seed=1)\nB = randn(2, 4, seed=2)\nY = a @ B\nL = Y.sum()", "Y", (4,)),
    ("A = randn(3, 2, seed=1)\nb = randn(2, seed=2)\nY = A @ b\nL = Y.sum()", "Y", (3,)),
    ("a = randn(2, seed=1)\nY = a @ a\nL = Y * 1", "Y", ()),
    ("A = randn(3, 1, seed=1)\nb = randn(4, seed=2)\nY = A + b\nL = Y.sum()", "Y", (3, 4)),
    ("A = randn(3, 2, seed=1)\nY = A.sum(0)\nL = Y.sum()", "Y", (2,)),
    ("A = randn(3, 2, seed=1)\nY = A.sum(1, keepdim=True)\nL = Y.sum()", "Y", (3, 1)),
    ("A = randn(3, 2, seed=1)\nY = A.mean(dim=-1)\nL = Y.sum()", "Y", (3,)),
    ("A = randn(3, 2, seed=1)\nY = A.max(1, keepdim=True).values\nL = Y.sum()", "Y", (3, 1)),
    ("A = randn(3, 2, seed=1)\nY = A.T\nL = Y.sum()", "Y", (2, 3)),
    ("A = randn(2, 3, 4, seed=1)\nY = A.transpose(0, 2)\nL = Y.sum()", "Y", (4, 3, 2)),
    ("A = randn(2, 3, 4, seed=1)\nY = A.view(A.shape[0], -1)\nL = Y.sum()", "Y", (2, 12)),
    ("A = randn(2, 3, 4, seed=1)\nY = torch.reshape(A, (4, 6))\nL = Y.sum()", "Y", (4, 6)),
    ("C = randn(27, 10, seed=1)\nX = tensor([[1, 2, 3], [0, 0, 26]])\nY = C[X]\nL = Y.sum()",
     "Y", (2, 3, 10)),
    ("A = randn(4, 5, seed=1)\nY = A[torch.arange(4), tensor([0, 1, 4, 2])]\nL = Y.sum()",
     "Y", (4,)),
    ("A = randn(4, 5, seed=1)\nY = A[range(4), tensor([0, 1, 4, 2])]\nL = Y.sum()", "Y", (4,)),
    ("A = randn(4, 5, seed=1)\nY = A[2]\nL = Y.sum()", "Y", (5,)),
    ("A = randn(4, 5, 2, seed=1)\nY = A[:, 0, :]\nL = Y.sum()", "Y", (4, 2)),
    ("A = randn(4, 5, seed=1)\nY = A[1:3, -2:]\nL = Y.sum()", "Y", (2, 2)),
    ("A = randn(5, 7, seed=1)\nY = A[::2, 1:6:3]\nL = Y.sum()", "Y", (3, 2)),
    ("A = randn(5, 7, seed=1)\nY = A[1::2, :]\nL = Y.sum()", "Y", (2, 7)),
    ("A = randn(4, 5, seed=1)\nY = torch.cat([A, A[:, :1]], 1)\nL = Y.sum()", "Y", (4, 6)),
    ("A = randn(4, 5, seed=1)\nY = torch.cat((A, A), dim=0)\nL = Y.sum()", "Y", (8, 5)),
    ("A = randn(4, 5, seed=1)\nY = torch.stack([A, A * 2, A], 1)\nL = Y.sum()", "Y", (4, 3, 5)),
    ("A = randn(4, 5, seed=1)\nY = torch.stack((A, A), dim=-1)\nL = Y.sum()", "Y", (4, 5, 2)),
    ("A = randn(2, 3, 4, seed=1)\nW = randn(4, 5, seed=2)\nY = A @ W\nL = Y.sum()", "Y",
     (2, 3, 5)),
    ("A = randn(3, 4, seed=1)\nW = randn(2, 4, 5, seed=2)\nY = A @ W\nL = Y.sum()", "Y",
     (2, 3, 5)),
    ("Y = F.one_hot(tensor([1, 0, 2]), num_classes=5).float()\nW = randn(5, 2, seed=1)\n"
     "L = (Y @ W).sum()", "Y", (3, 5)),
    ("A = randn(3, 4, seed=1)\nY = F.softmax(A, dim=1)\nL = (Y * Y).sum()", "Y", (3, 4)),
    ("A = randn(3, 4, seed=1)\nY = A.log_softmax(0)\nL = (Y * Y).sum()", "Y", (3, 4)),
    ("A = randn(3, 4, seed=1)\nY = torch.tanh(A) ** 2 - A / 2\nL = Y.mean()", "Y", (3, 4)),
    ("A = randn(3, 4, seed=1)\nL = F.cross_entropy(A, tensor([0, 3, 1]))", "L", ()),
]  # fmt: skip


@pytest.mark.parametrize(("source", "name", "shape"), SHAPES)
def test_each_op_makes_its_shape(source: str, name: str, shape: tuple[int, ...]) -> None:
    assert shapes(source)[name] == shape


def test_the_issue_program_replies_with_its_tensors() -> None:
    source = (
        "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
        "W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])\nb = tensor([0.1, 0.1, 0.1])\n"
        "W2 = randn(3, 3, seed=1)\nh = tanh(X @ W + b)\n"
        "loss = cross_entropy(h @ W2, tensor([2, 0, 1]))"
    )
    reply = tensor_reply(trace_tensors(source))
    nodes = {node["label"]: node for node in reply["nodes"]}
    assert nodes["X"]["shape"] == [3, 2] and nodes["X"]["kind"] == "leaf"
    assert nodes["X"]["data"] == [[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]
    assert len(nodes["X"]["grad"]) == 3 and len(nodes["X"]["grad"][0]) == 2
    assert nodes["loss"]["shape"] == [] and isinstance(nodes["loss"]["data"], float)
    assert (
        nodes["tensor([2, 0, 1])"]["dtype"] == "int" and nodes["tensor([2, 0, 1])"]["grad"] is None
    )
    assert [leaf["name"] for leaf in reply["leaves"]] == ["X", "W", "b", "W2"]
    rules = {r["input"]: r["rule"] for r in nodes["X @ W"]["rules"]}
    assert rules == {
        nodes["X"]["id"]: "dX = d(X @ W) @ W.T",
        nodes["W"]["id"]: "dW = X.T @ d(X @ W)",
    }
    broadcast = {r["input"]: r["rule"] for r in nodes["X @ W + b"]["rules"]}
    assert broadcast[nodes["b"]["id"]] == (
        "db = d(X @ W + b).sum(0)  # broadcast over dim 0: summed back"
    )
    phases = [step["phase"] for step in reply["steps"]]
    assert phases == ["forward"] * 5 + ["seed"] + ["backward"] * 5
    # The backward step of `+` hands b the sum of the upstream gradient over the batch.
    plus = next(s for s in reply["steps"] if s["phase"] == "backward" and s["node"] ==
                nodes["X @ W + b"]["id"])  # fmt: skip
    upstream = nodes["X @ W + b"]["grad"]
    to_b = next(g for g in plus["grads"] if g["input"] == nodes["b"]["id"])
    assert to_b["grad"] == pytest.approx([sum(row[j] for row in upstream) for j in range(3)])
    assert to_b["grad"] == pytest.approx(nodes["b"]["grad"], rel=1e-15)


def test_values_set_a_named_leaf_s_elements() -> None:
    found = trace_tensors("W = randn(2, 3, seed=1)\nL = (W * W).sum()", {"W[1,2]": 0.5})
    W = found.tensor("W")
    assert W.elements[5].data == 0.5 and W.elements[5].grad == 1.0
    unknown = trace_tensors("W = randn(2, 3, seed=1)\nL = W.sum()", {"W[9,9]": 0.5})
    assert [w["type"] for w in unknown.warnings] == ["unknown_value"]


def test_makemore_s_spellings_read_with_notes() -> None:
    found = trace_tensors(
        "import torch\nimport torch.nn.functional as F\n"
        "g = torch.Generator().manual_seed(2147483647)\n"
        "W = torch.randn((27, 27), generator=g, requires_grad=True)\n"
        "xs = torch.tensor([0, 5, 13])\nys = torch.tensor([5, 13, 13])\n"
        "xenc = F.one_hot(xs, num_classes=27).float()\nlogits = xenc @ W\ncounts = logits.exp()\n"
        "probs = counts / counts.sum(1, keepdims=True)\n"
        "loss = -probs[torch.arange(3), ys].log().mean()\nloss.backward()\nprint(loss.item())"
    )
    assert found.root.name == "loss"
    assert [w["type"] for w in found.warnings] == ["skipped"] * 4
    assert "mulberry32" in found.warnings[2]["message"]


def test_a_broadcast_input_and_a_reused_tensor_add_their_gradients() -> None:
    found = trace_tensors("a = randn(3, seed=1)\nL = (a * a + a).sum()")
    a = found.tensor("a")
    for element in a.elements:
        assert element.grad == pytest.approx(2 * element.data + 1, rel=1e-15)


# ---- refusals: exact type, message and position ----------------------------------------------

ERRORS = [
    ("A = randn(3, 2, seed=1)\nB = randn(3, 3, seed=2)\nL = (A @ B).sum()",
     "ShapeError", "`(3, 2) @ (3, 3)`: inner sizes 2 and 3 differ", 3, 8, "       ^"),
    ("A = randn(3, 2, seed=1)\nB = randn(4, seed=2)\nL = (A + B).sum()",
     "ShapeError", "`(3, 2) + (4,)`: the shapes do not broadcast (sizes 2 and 4 at dim 1)",
     3, 8, "       ^"),
    ("A = randn(3, 2, seed=1)\nL = A.view(4, -1).sum()",
     "ShapeError", "cannot view a tensor of shape (3, 2) (6 elements) as (4, -1)", 2, 6,
     "     ^^^^^"),
    ("A = randn(3, 2, seed=1)\nL = A.sum(2)",
     "ShapeError", "dim 2 is out of range for a tensor of shape (3, 2)", 2, 6, "     ^^^^"),
    ("C = randn(27, 2, seed=1)\nL = C[tensor([1, 27])].sum()",
     "ShapeError", "index 27 is out of range for dim 0 of size 27", 2, 6,
     "     " + "^" * 17),
    ("A = randn(2, 3, 4, seed=1)\nL = (A @ A).sum()",
     "ShapeError", "`(2, 3, 4) @ (2, 3, 4)`: inner sizes 4 and 3 differ", 2, 8, "       ^"),
    ("L = cross_entropy(randn(3, 4, seed=1), tensor([0, 1, 4]))",
     "ShapeError", "class 4 is out of range for 4 classes", 1, 5, "    " + "^" * 53),
    ("L = tensor([[1.0, 2.0], [3.0]]).sum()",
     "ShapeError", "the rows of a tensor literal differ in length (2 and 1)", 1, 5,
     "    " + "^" * 27),
    ("A = randn(3, 2, seed=1)\nL = A",
     "ShapeError", "the result A has shape (3, 2): the backward pass starts from one number "
     "(end with a loss, or e.g. `.sum()`)", 2, 5, "    ^"),
    ("A = randn(3, 2, seed=1)\nL = A.frobnicate()", "UnknownFunction",
     "unknown method '.frobnicate()' of a tensor (docs/tensors.md lists them); did you mean: —?",
     2, 6, "     " + "^" * 11),
    ("L = tanhh(tensor([1.0, 2.0])).sum()", "UnknownFunction",
     "unknown function 'tanhh' (docs/tensors.md lists them); did you mean: tanh?", 1, 5,
     "    ^^^^^"),
    ("A = randn(2, 2, seed=1)\nL = (A @ B).sum()",
     "UseBeforeAssign", "'B' is used before it is assigned", 2, 10, "         ^"),
    ("A = randn(2, 2, seed=1)\nL = (A @ ).sum()",
     "SyntaxError", "expected an expression, found ')'", 2, 10, "         ^"),
    ("A = randn(2, 2, seed=1)\nL = A.sum(]",
     "SyntaxError", "this ']' closes nothing (or closes the wrong bracket)", 2, 11, "          ^"),
    ("A = randn(2, 3, seed=1) $ 2", "SyntaxError", "unexpected character '$'", 1, 25,
     " " * 24 + "^"),
    ("A = randn(2, 3, seed=1) × 2", "SyntaxError",
     "unexpected character '×' (U+00D7 MULTIPLICATION SIGN): type '*' instead (a sign copied "
     "from a page or a PDF only looks like the keyboard's)",
     1, 25, " " * 24 + "^"),
    ("A = randn(2, 3, seed=1)\nL = A[tensor([0.5])].sum()", "SyntaxError",
     "tensor([0.5]) cannot index a tensor: index with integers or an integer tensor (`C[X]`)",
     2, 7, "      " + "^" * 13),
    ("A = randn(4, 5, seed=1)\nL = A[::-2].sum()", "SyntaxError",
     "a slice's step must be positive, as in PyTorch: `x[::2]` takes every second element; -2 "
     "cannot be a step (to reverse, pick the elements with an index tensor: "
     "`x[tensor([2, 1, 0])]`)", 2, 9, "        ^^"),
    ("A = randn(4, 5, seed=1)\nL = A[1::0].sum()", "SyntaxError",
     "a slice's step must be positive, as in PyTorch: `x[::2]` takes every second element; 0 "
     "cannot be a step (to reverse, pick the elements with an index tensor: "
     "`x[tensor([2, 1, 0])]`)", 2, 10, "         ^"),
    ("A = randn(4, 5, seed=1)\nL = torch.cat([A, A.T], 1).sum()", "ShapeError",
     "`cat` of (4, 5) and (5, 4) along dim 1: the other sizes differ", 2, 10, "         ^^^^"),
    ("A = randn(4, 5, seed=1)\nL = torch.stack([A, A.T]).sum()", "ShapeError",
     "`stack` of (4, 5) and (5, 4): stacked tensors have one shape", 2, 10, "         ^^^^^^"),
    ("A = randn(2, 3, 4, seed=1)\nW = randn(3, 4, 5, seed=2)\nL = (A @ W).sum()", "ShapeError",
     "`(2, 3, 4) @ (3, 4, 5)`: the batches (every dim but the last two) do not broadcast", 3, 8,
     "       ^"),
    ("A = randn(2, 2, 3, 4, seed=1)\nL = (A @ A).sum()", "ShapeError",
     "`(2, 2, 3, 4) @ (2, 2, 3, 4)`: @ takes tensors of 1 to 3 dims (a batch of matrices at "
     "most)", 2, 8, "       ^"),
    ("A = randn(-1, 2)", "ArgumentCount", "`randn`: a missing or wrong argument 'size'", 1, 5,
     "    " + "^" * 12),
    # A stranger's test: `@` between numbers was "this arithmetic of numbers has no finite
    # result", true of 1/0 but not of a @ a.
    ("a = 5\nb = a @ a", "SyntaxError",
     "a @ a: '@' multiplies matrices, and these are numbers: multiply numbers with '*', or make "
     "them tensors (tensor([…]))", 2, 7, "      ^"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "type_", "message", "line", "column", "caret"), ERRORS)
def test_refusals_say_what_and_where(
    source: str, type_: str, message: str, line: int, column: int, caret: str
) -> None:
    with pytest.raises(engine.ProgramError) as caught:
        trace_tensors(source, limits=SERVER)
    error = caught.value
    assert (error.type, str(error), error.line, error.column, error.caret) == (
        type_, message, line, column, caret,
    )  # fmt: skip
    for lang in ("ru", "et"):
        assert error.message_in(lang) != str(error)


def test_python_that_must_run_is_needs_running_as_in_the_scalar_language() -> None:
    with pytest.raises(engine.NeedsRunning):
        trace_tensors("A = randn(2, 2, seed=1)\nfor i in range(3):\n  A = A * 2")


# ---- bounds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("A = randn(1000, 1000, seed=1)\nB = randn(1000, 1000, seed=2)\nL = (A @ B).sum()",
         "`randn(1000, 1000, seed=1)` would make the tensors hold 1,000,000 elements; "
         "the limit is 20,000"),
        ("A = randn(80, 80, seed=1)\nB = randn(80, 80, seed=2)\nL = (A @ B).sum()",
         "`(A @ B)` would make the graph 1,030,400 scalar nodes; the limit is "
         f"{20_000 * NODES_PER_ELEMENT:,}"),
        ("X = randint(0, 9, (20000, 1), seed=1)\nC = randn(1, 9, seed=1)\nL = C[X].sum()",
         "`randn(1, 9, seed=1)` would make the tensors hold 20,009 elements; the limit is 20,000"),
        ("X = tensor([0, 1])\nC = randn(2, 9000, seed=1)\nL = C[X].sum()",
         "`C[X]` would make the tensors hold 36,002 elements; the limit is 20,000"),
    ],
)  # fmt: skip
def test_the_bounds_count_elements_and_refuse_at_once(source: str, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(engine.LimitExceeded) as caught:
        trace_tensors(source, limits=SERVER)
    assert str(caught.value) == message
    assert time.perf_counter() - started < 2.0


# ---- our seeded numbers ---------------------------------------------------------------------


def test_the_generator_is_mulberry32_and_its_normals_are_sums_of_twelve() -> None:
    """The first draws of seed 1 (as JavaScript's mulberry32 gives them; docs/tensors.md)."""
    generator = Generator(1)
    assert [generator.uniform() for _ in range(3)] == [
        0.6270739405881613, 0.002735721180215478, 0.5274470399599522,
    ]  # fmt: skip
    first, again = Generator(7), Generator(7)
    assert first.normal() == sum(again.uniform() for _ in range(12)) - 6
    found = trace_tensors("W = randn(2, 2, seed=7)\nL = W.sum()")
    assert [v.data for v in found.tensor("W").elements][0] == Generator(7).normal()


def test_a_library_s_call_must_run_as_in_the_scalar_language() -> None:
    """Pasted NumPy code is code that must run (the page's sandbox runs it), not a typo."""
    with pytest.raises(engine.NeedsRunning) as caught:
        trace_tensors("W = np.random.randn(3, 3)\nx = tensor([1.0, 2.0, 3.0])\nL = (W @ x).sum()")
    assert (caught.value.line, caught.value.column) == (1, 5)


def test_the_scalar_entry_points_say_a_tensor_program_is_read_elsewhere() -> None:
    with pytest.raises(engine.TensorProgram) as caught:
        trace("A = randn(2, 2, seed=1)\nL = (A @ A).sum()")
    assert "POST /api/graph" in str(caught.value)
