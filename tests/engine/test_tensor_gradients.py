"""Every tensor gradient equals an independent reference to 1e-9 relative: HIPS autograd (NumPy),
differentiating the same program written with NumPy, fed our leaves' numbers. Each
intermediate's gradient is autograd's with respect to a zero added to that intermediate.
Over the issue's program, random programs (hypothesis) and makemore's MLP at its exercise's
sizes (batch 32, vocabulary 27, embedding 10, block 3, hidden 64)."""

from __future__ import annotations

from collections.abc import Callable

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from chainrule.bench.tensors import BATCH, BLOCK, makemore
from chainrule.engine.builder import Limits
from chainrule.engine.tensor_program import TensorTrace, trace_tensors
from chainrule.engine.tensor_reply import fan_in, tensor_reply
from chainrule.engine.tensors import Tensor

RTOL = 1e-9
SERVER = Limits(100_000, 20_000, 200)


def array(tensor: Tensor, field: str = "data") -> np.ndarray:
    values = [getattr(v, field) for v in tensor.elements or []]
    return np.array(values, dtype=float).reshape(tensor.shape)


def ops_of(trace: TensorTrace) -> list[Tensor]:
    """The float tensors ops made, in order (the intermediates and the result)."""
    return [t for t in trace.tensors if t.kind == "op" and t.elements is not None]


def largest(arrays: list[np.ndarray]) -> float:
    """The largest finite magnitude in `arrays`, at least 1."""
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays]
    return max([1.0, *(float(np.max(a)) for a in finite if a.size)])


def assert_close(
    ours: np.ndarray, reference: np.ndarray, what: str, scale: float | None = None
) -> None:
    """Equal to 1e-9 relative, and 1e-12 absolute of `scale` (default: the reference's own
    largest magnitude)."""
    scale = largest([reference]) if scale is None else scale
    assert ours.shape == reference.shape, what
    # (NaN where both are: `std` of equal numbers has an infinite slope, 0 · ∞ follows)
    assert np.allclose(ours, reference, rtol=RTOL, atol=1e-12 * scale, equal_nan=True), (
        f"{what}: max difference {np.max(np.abs(ours - reference))}"
    )


def check_against_autograd(
    trace: TensorTrace,
    leaves: list[Tensor],
    forward: Callable[[list, Callable[[int, object], object]], list],
) -> None:
    """`forward(leaves, e)` computes the program with NumPy, passing each intermediate, in the
    order the program makes them, through `e(k, x)` (which adds the k-th zero), and returns
    them all, the result last. Compares the result, every intermediate's data and gradient and
    every leaf's gradient with ours."""
    made = ops_of(trace)
    start = [array(t) for t in leaves]
    zeros = [np.zeros(t.shape) for t in made]

    def run(arguments: list) -> list:
        given, eps = arguments
        return forward(given, lambda k, x: x + eps[k])

    outputs = run([start, zeros])
    assert len(outputs) == len(made)
    for k, (tensor, output) in enumerate(zip(made, outputs, strict=True)):
        assert_close(array(tensor), np.asarray(output, dtype=float), f"data of #{k} {tensor}")
    # autograd's rule for `x ** y` computes `x ** (y - 1)` where it then multiplies by a zero
    # (x = 0): NumPy warns of that division by zero in the reference, whose numbers are checked.
    with np.errstate(divide="ignore", invalid="ignore"):
        d_leaves, d_made = grad(lambda arguments: anp.sum(run(arguments)[-1]))([start, zeros])
    # A gradient is a sum of terms as large as the gradients flowing into it: one that cancels
    # to 0 (a variance's by its mean) comes out of the two sums as a rounding error of those
    # terms (7.3e-12 where the largest gradient is 191,483: a fresh clone's run found it), so
    # its absolute tolerance is the program's largest gradient's, not its own.
    scale = largest([np.asarray(g) for g in [*d_leaves, *d_made]])
    for tensor, reference in zip(leaves, d_leaves, strict=True):
        assert_close(array(tensor, "grad"), np.asarray(reference), f"grad of leaf {tensor}", scale)
    for k, (tensor, reference) in enumerate(zip(made, d_made, strict=True)):
        assert_close(array(tensor, "grad"), np.asarray(reference), f"grad of #{k} {tensor}", scale)


def _matmul_shape(a: tuple, b: tuple) -> tuple | None:
    """NumPy's shape of `a @ b` for tensors of 1 to 3 dims, or None where it has none."""
    if not (1 <= len(a) <= 3 and 1 <= len(b) <= 3):
        return None
    try:
        return np.matmul(np.zeros(a), np.zeros(b)).shape
    except ValueError:
        return None


def cross_entropy(logits, targets):
    shifted = logits - np.max(logits._value if hasattr(logits, "_value") else logits, 1)[:, None]
    log_probs = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
    return -anp.mean(log_probs[np.arange(len(targets)), targets])


ISSUE_PROGRAM = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
W2 = randn(3, 3, seed=1)
h = tanh(X @ W + b)
loss = cross_entropy(h @ W2, tensor([2, 0, 1]))
"""


def test_the_issue_program_matches_autograd() -> None:
    trace = trace_tensors(ISSUE_PROGRAM)
    leaves = [trace.tensor(name) for name in ("X", "W", "b", "W2")]
    targets = np.array([2, 0, 1])

    def forward(leaves: list, e: Callable) -> list:
        X, W, b, W2 = leaves
        xw = e(0, anp.dot(X, W))
        pre = e(1, xw + b)
        h = e(2, anp.tanh(pre))
        logits = e(3, anp.dot(h, W2))
        return [xw, pre, h, logits, e(4, cross_entropy(logits, targets))]

    check_against_autograd(trace, leaves, forward)


def test_softmax_then_cross_entropy_is_p_minus_y() -> None:
    """Composed from primitives, the one backward pass gives the fused rule's numbers."""
    trace = trace_tensors(ISSUE_PROGRAM)
    logits = trace.tensors[trace.root.inputs[0].id]
    x = array(logits)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = np.eye(3)[[2, 0, 1]]
    assert_close(array(logits, "grad"), (p - y) / 3, "d logits")


def test_the_fan_in_of_a_matmul_gradient_is_a_sum_over_the_batch() -> None:
    """dW[1,2] = Σᵢ X[i,1]·dY[i,2]: one contribution per row of X, each X[i,1] × dY[i,2]."""
    trace = trace_tensors(
        "X = randn(4, 2, seed=3)\nW = randn(2, 3, seed=4)\nY = X @ W\nL = tanh(Y).sum()"
    )
    X, W, Y = (trace.tensor(name) for name in ("X", "W", "Y"))
    found = fan_in(trace, W, (1, 2))
    assert [c["tensor"] for c in found] == [f"t{Y.id}"] * 4
    x, dy = array(X), array(Y, "grad")
    rows = [3, 2, 1, 0]  # in the order the backward pass adds them: the last product first
    assert [c["local"] for c in found] == [x[i, 1] for i in rows]
    assert [c["upstream"] for c in found] == [dy[i, 2] for i in rows]
    total = 0.0
    for c in found:
        total += c["contribution"]
    assert total == array(W, "grad")[1, 2]


# ---- random programs ---------------------------------------------------------------------


FUNCTIONS = {
    "tanh": anp.tanh,
    "sigmoid": lambda x: 1 / (1 + anp.exp(-x)),
    "sin": anp.sin,
    "exp": anp.exp,
}


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, list[str], Callable]:
    """A random straight-line tensor program and the same program in NumPy."""
    n, m, p = (draw(st.integers(1, 4)) for _ in range(3))
    lines = [
        f"A = randn({n}, {m}, seed={draw(st.integers(0, 99))})",
        f"B = randn({m}, {p}, seed={draw(st.integers(0, 99))})",
        f"v = randn({p}, seed={draw(st.integers(0, 99))})",
    ]
    shapes = {"A": (n, m), "B": (m, p), "v": (p,)}
    steps: list[tuple[str, Callable]] = []  # (name, numpy function of the env)

    def pick(condition: Callable[[tuple], bool]) -> str | None:
        names = [name for name, shape in shapes.items() if condition(shape)]
        return draw(st.sampled_from(names)) if names else None

    for k in range(draw(st.integers(1, 6))):
        name = f"t{k}"
        kind = draw(
            st.sampled_from(
                ["@", "+", "*", "-", "/", "f", "sum", "mean", "max", "T", "softmax", "log_softmax",
                 "**", "view", "index", "cross_entropy", "var", "std", "slice", "cat", "stack"]
            )
        )  # fmt: skip
        x = pick(lambda s: len(s) >= 1)
        assert x is not None
        sx = shapes[x]
        if kind == "@":  # 1 to 3 dims: a batch of matrices too (after a `stack`)
            y = pick(lambda s, sx=sx: _matmul_shape(sx, s) is not None)
            if y is None:
                continue
            line, f = f"{x} @ {y}", lambda env, x=x, y=y: anp.matmul(env[x], env[y])
            shape = _matmul_shape(sx, shapes[y])
        elif kind in "+*-/":
            y = pick(
                lambda s, sx=sx: (
                    np.broadcast_shapes(s, sx) is not None if _broadcasts(s, sx) else False
                )
            )
            assert y is not None  # x itself
            shape = np.broadcast_shapes(sx, shapes[y])
            if kind == "/":  # a denominator of at least 1: `y * y`, `+ 1`, then `/`
                lines.append(f"{name}s = {y} * {y}")
                steps.append((f"{name}s", lambda env, y=y: env[y] * env[y]))
                lines.append(f"{name}q = {name}s + 1")
                steps.append((f"{name}q", lambda env, q=f"{name}s": env[q] + 1))
                shapes[f"{name}q"] = shapes[y]
                line = f"{x} / {name}q"
                f = lambda env, x=x, q=f"{name}q": env[x] / env[q]  # noqa: E731
            else:
                line = f"{x} {kind} {y}"
                f = {  # noqa: E731
                    "+": lambda env, x=x, y=y: env[x] + env[y],
                    "*": lambda env, x=x, y=y: env[x] * env[y],
                    "-": lambda env, x=x, y=y: env[x] - env[y],
                }[kind]
        elif kind == "f":
            fn = draw(st.sampled_from(sorted(FUNCTIONS)))
            lines.append(f"{name}h = {x} * 0.5")
            steps.append((f"{name}h", lambda env, x=x: env[x] * 0.5))
            line, f = f"{fn}({name}h)", lambda env, h=f"{name}h", fn=fn: FUNCTIONS[fn](env[h])
            shape = sx
        elif kind in ("sum", "mean", "max"):
            dim = draw(st.integers(-len(sx), len(sx) - 1))
            keep = draw(st.booleans())
            reduce = {"sum": anp.sum, "mean": anp.mean, "max": _clear_max}[kind]
            values = ".values" if kind == "max" else ""
            line = f"{x}.{kind}({dim}, keepdim={keep}){values}"
            f = lambda env, x=x, r=reduce, d=dim, kd=keep: r(env[x], axis=d, keepdims=kd)  # noqa: E731
            shape = np.sum(np.zeros(sx), axis=dim, keepdims=keep).shape
        elif kind == "T":
            if len(sx) != 2:
                continue
            line, f, shape = f"{x}.T", lambda env, x=x: env[x].T, sx[::-1]
        elif kind in ("softmax", "log_softmax"):
            dim = draw(st.integers(-len(sx), len(sx) - 1))
            line = f"{kind}({x}, {dim})"
            f = lambda env, x=x, d=dim, k=kind: _softmax(env[x], d, k == "log_softmax")  # noqa: E731
            shape = sx
        elif kind in ("var", "std"):  # batch norm's: mean, x − mean, its square, sum, / (n − 1)
            dim = draw(st.integers(-len(sx), len(sx) - 1))
            if sx[dim] < 2:
                continue
            keep = draw(st.booleans())
            parts = [
                ("m", lambda env, x=x, d=dim: anp.mean(env[x], axis=d, keepdims=True)),
                ("c", lambda env, x=x, m=f"{name}m": env[x] - env[m]),
                ("q", lambda env, c=f"{name}c": env[c] ** 2),
                ("s", lambda env, q=f"{name}q", d=dim, k=keep: anp.sum(env[q], axis=d, keepdims=k)),
            ]  # fmt: skip
            for suffix, part in parts:
                steps.append((f"{name}{suffix}", part))
            last_part, n = f"{name}s", sx[dim]
            if kind == "std":
                steps.append((f"{name}v", lambda env, s=last_part, n=n: env[s] / (n - 1)))
                line = f"{x}.std({dim}, keepdim={keep})"
                f = lambda env, v=f"{name}v": env[v] ** 0.5  # noqa: E731
            else:
                line = f"{x}.var({dim}, keepdim={keep})"
                f = lambda env, s=last_part, n=n: env[s] / (n - 1)  # noqa: E731
            shape = np.sum(np.zeros(sx), axis=dim, keepdims=keep).shape
        elif kind == "index":  # rows picked, some twice: their gradients add up
            picked = draw(st.lists(st.integers(0, sx[0] - 1), min_size=1, max_size=4))
            line = f"{x}[tensor({picked})]"
            f = lambda env, x=x, p=picked: env[x][np.array(p)]  # noqa: E731
            shape = (len(picked), *sx[1:])
        elif kind == "slice":  # `x[1:, 0]`: a slice keeps its dim, an integer drops it
            picks, written = [], []
            for size in sx:
                if draw(st.booleans()):
                    i = draw(st.integers(0, size - 1))
                    picks.append(i)
                    written.append(str(i))
                else:  # a step too, sometimes (`0:5:2`): every second row's gradient
                    a = draw(st.integers(0, size - 1))
                    b = draw(st.integers(a + 1, size))
                    step = draw(st.sampled_from([None, 1, 2, 3]))
                    picks.append(slice(a, b, step))
                    written.append(f"{a}:{b}" + ("" if step is None else f":{step}"))
            line = f"{x}[{', '.join(written)}]"
            f = lambda env, x=x, p=tuple(picks): env[x][p]  # noqa: E731
            shape = np.zeros(sx)[tuple(picks)].shape
        elif kind == "stack":  # a new dim; its gradient is each slice's
            if len(sx) > 2:
                continue
            y = pick(lambda s, sx=sx: s == sx)
            dim = draw(st.integers(-len(sx) - 1, len(sx)))
            line = f"torch.stack([{x}, {y}], {dim})"
            f = lambda env, x=x, y=y, d=dim: anp.stack([env[x], env[y]], axis=d)  # noqa: E731
            shape = np.stack([np.zeros(sx), np.zeros(sx)], axis=dim).shape
        elif kind == "cat":
            y = pick(lambda s, sx=sx: len(s) == len(sx) and s[:-1] == sx[:-1])
            assert y is not None  # x itself
            line = f"torch.cat([{x}, {y}], -1)"
            f = lambda env, x=x, y=y: anp.concatenate([env[x], env[y]], axis=-1)  # noqa: E731
            shape = (*sx[:-1], sx[-1] + shapes[y][-1])
        elif kind == "cross_entropy":
            if len(sx) != 2:
                continue
            targets = draw(st.lists(st.integers(0, sx[1] - 1), min_size=sx[0], max_size=sx[0]))
            line = f"cross_entropy({x}, tensor({targets}))"
            f = lambda env, x=x, y=targets: cross_entropy(env[x], np.array(y))  # noqa: E731
            shape = ()
        elif kind == "**":
            power = draw(st.sampled_from([2, 3]))
            line, f, shape = f"{x} ** {power}", lambda env, x=x, k=power: env[x] ** k, sx
        else:
            line, f, shape = (
                f"{x}.view(-1)",
                lambda env, x=x: anp.reshape(env[x], (-1,)),
                (int(np.prod(sx)),),
            )
        lines.append(f"{name} = {line}")
        shapes[name] = shape
        steps.append((name, f))
    last = steps[-1][0] if steps else "A"
    lines.append(f"L = ({last} * {last}).sum()")

    def forward(leaves: list, e: Callable) -> list:
        env = dict(zip(("A", "B", "v"), leaves, strict=True))
        outputs = []
        for k, (name, f) in enumerate(steps):
            env[name] = e(k, f(env))
            outputs.append(env[name])
        outputs.append(e(len(steps), env[last] * env[last]))
        outputs.append(e(len(steps) + 1, anp.sum(outputs[-1])))
        return outputs

    return "\n".join(lines), [name for name, _ in steps], forward


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _max(x, axis: int, keepdims: bool):
    """PyTorch's max over a dim: the gradient goes to the first largest element alone (NumPy's,
    through autograd, splits it between ties: `A[tensor([0, 0])].max(0)`)."""
    values = x._value if hasattr(x, "_value") else x
    first = np.argmax(values, axis=axis)
    mask = np.moveaxis(np.eye(values.shape[axis])[first], -1, axis % values.ndim)
    return anp.sum(x * mask, axis=axis, keepdims=keepdims)


def _clear_max(x, axis: int, keepdims: bool):
    """`_max` where the two largest lie farther apart than rounding. Nearer, which one is larger
    depends on the order each side sums in (a softmax's row sums: 0.9999999999999999 and 1.0
    here, 1.0 and 1.0 in NumPy), so hypothesis leaves the example out;
    test_max_gives_a_tie_to_the_first_largest holds an exact tie."""
    values = x._value if hasattr(x, "_value") else x
    if values.shape[axis] > 1:
        top_two = np.sort(values, axis=axis).take([-2, -1], axis=axis)
        scale = np.maximum(1.0, np.abs(top_two.take([-1], axis=axis)))
        assume(bool(np.all(np.diff(top_two, axis=axis) > 1e-9 * scale)))
    return _max(x, axis, keepdims)


def _softmax(x, dim: int, log: bool):
    top = np.max(x._value if hasattr(x, "_value") else x, axis=dim, keepdims=True)
    shifted = x - top
    total = anp.sum(anp.exp(shifted), axis=dim, keepdims=True)
    return shifted - anp.log(total) if log else anp.exp(shifted) / total


def test_max_gives_a_tie_to_the_first_largest() -> None:
    """PyTorch's rule at an exact tie (a row picked twice): the first largest takes the gradient."""
    trace = trace_tensors(
        "A = randn(2, 3, seed=0)\nt = A[tensor([0, 0])]\nL = t.max(0).values.sum()\n"
    )
    assert array(trace.tensor("t"), "grad").tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    assert array(trace.tensor("A"), "grad").tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_match_autograd(program: tuple[str, list[str], Callable]) -> None:
    source, _, forward = program
    note(source)
    trace = trace_tensors(source)
    leaves = [trace.tensor(name) for name in ("A", "B", "v")]
    check_against_autograd(trace, leaves, forward)


# ---- makemore's MLP --------------------------------------------------------------------------

MAKEMORE = makemore(2147483647)  # the notebook's seed


@pytest.mark.timeout(120)
def test_makemore_mlp_matches_autograd() -> None:
    trace = trace_tensors(MAKEMORE, limits=SERVER)
    Xb = np.array(trace.tensor("Xb").ints).reshape(BATCH, BLOCK)
    Yb = np.array(trace.tensor("Yb").ints)
    assert trace.tensor("Xb").shape == (BATCH, BLOCK)
    # The leaves: C, and the randn tensors the scaled parameters are made of.
    leaves = [trace.tensor("C")] + [trace.tensor(n).inputs[0] for n in ("W1", "b1", "W2", "b2")]
    assert all(leaf.kind == "leaf" for leaf in leaves)

    def forward(leaves: list, e: Callable) -> list:
        C, w1, bias1, w2, bias2 = leaves
        W1, b1 = e(0, w1 * 0.2), e(1, bias1 * 0.01)
        W2, b2 = e(2, w2 * 0.1), e(3, bias2 * 0.1)
        emb = e(4, C[Xb])
        embcat = e(5, anp.reshape(emb, (BATCH, -1)))
        xw = e(6, anp.dot(embcat, W1))
        hpreact = e(7, xw + b1)
        h = e(8, anp.tanh(hpreact))
        hw = e(9, anp.dot(h, W2))
        logits = e(10, hw + b2)
        loss = e(11, cross_entropy(logits, Yb))
        return [W1, b1, W2, b2, emb, embcat, xw, hpreact, h, hw, logits, loss]

    check_against_autograd(trace, leaves, forward)
    loss = array(trace.root)
    assert 2.5 < float(loss) < 5.0  # about log 27 = 3.3 at this initialisation


def test_a_reused_tensor_s_fan_in_sums_to_its_gradient_to_the_bit() -> None:
    """W read by two matmuls: 64 contributions from two ops, added as the pass adds them."""
    trace = trace_tensors(
        "X = randn(32, 5, seed=5)\nW = randn(5, 3, seed=6)\nY = X @ W\nZ = tanh(X) @ W\n"
        "L = (Y * Z).sum()"
    )
    W, Y, Z = (trace.tensor(name) for name in ("W", "Y", "Z"))
    for index in [(1, 2), (0, 0), (4, 1)]:
        found = fan_in(trace, W, index)
        assert {c["tensor"] for c in found} == {f"t{Y.id}", f"t{Z.id}"} and len(found) == 64
        total = 0.0
        for c in found:
            total += c["contribution"]
        assert total == array(W, "grad")[index]


# ---- "Becoming a backprop ninja": makemore part 4's forward pass, every step a tensor -------

NINJA = """n_embd = 10
n_hidden = 64
vocab_size = 27
block_size = 3
n = 32
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5/3)/((n_embd * block_size)**0.5)
b1 = torch.randn(n_hidden, generator=g) * 0.1
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
b2 = torch.randn(vocab_size, generator=g) * 0.1
bngain = torch.randn((1, n_hidden))*0.1 + 1.0
bnbias = torch.randn((1, n_hidden))*0.1
Xb = torch.randint(0, vocab_size, (n, block_size), generator=g)
Yb = torch.randint(0, vocab_size, (n,), generator=g)
emb = C[Xb]
embcat = emb.view(emb.shape[0], -1)
hprebn = embcat @ W1 + b1
bnmeani = 1/n*hprebn.sum(0, keepdim=True)
bndiff = hprebn - bnmeani
bndiff2 = bndiff**2
bnvar = 1/(n-1)*(bndiff2).sum(0, keepdim=True)
bnvar_inv = (bnvar + 1e-5)**-0.5
bnraw = bndiff * bnvar_inv
hpreact = bngain * bnraw + bnbias
h = torch.tanh(hpreact)
logits = h @ W2 + b2
logit_maxes = logits.max(1, keepdim=True).values
norm_logits = logits - logit_maxes
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdims=True)
counts_sum_inv = counts_sum**-1
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()
"""


@pytest.mark.timeout(120)
def test_the_backprop_ninja_s_every_intermediate_matches_autograd() -> None:
    """dlogprobs, dprobs, dcounts_sum_inv, … dC: the exercise's answers, element by element."""
    trace = trace_tensors(NINJA)  # 34,182 elements: past the server's bound, not the engine's
    Xb = np.array(trace.tensor("Xb").ints).reshape(32, 3)
    Yb = np.array(trace.tensor("Yb").ints)
    scaled = ("b1", "W2", "b2", "bnbias")  # `randn(…) * 0.1`: the leaf is the randn
    leaves = [trace.tensor("C"), trace.tensor("W1").inputs[0].inputs[0]]
    leaves += [trace.tensor(name).inputs[0] for name in scaled]
    leaves.append(trace.tensor("bngain").inputs[0].inputs[0])
    assert all(leaf.kind == "leaf" for leaf in leaves)

    def forward(leaves: list, e: Callable) -> list:
        C, w1, bias1, w2, bias2, bias_bn, gain = leaves
        out = []

        def op(value):
            out.append(e(len(out), value))
            return out[-1]

        W1 = op(op(w1 * (5 / 3)) / ((10 * 3) ** 0.5))  # Python's order: `(randn * 5/3) / …`
        b1, W2, b2 = op(bias1 * 0.1), op(w2 * 0.1), op(bias2 * 0.1)
        bngain = op(op(gain * 0.1) + 1.0)
        bnbias = op(bias_bn * 0.1)
        emb = op(C[Xb])
        embcat = op(anp.reshape(emb, (32, -1)))
        hprebn = op(op(anp.dot(embcat, W1)) + b1)
        bnmeani = op(1 / 32 * op(anp.sum(hprebn, axis=0, keepdims=True)))
        bndiff = op(hprebn - bnmeani)
        bndiff2 = op(bndiff**2)
        bnvar = op(1 / 31 * op(anp.sum(bndiff2, axis=0, keepdims=True)))
        bnvar_inv = op(op(bnvar + 1e-5) ** -0.5)
        bnraw = op(bndiff * bnvar_inv)
        hpreact = op(op(bngain * bnraw) + bnbias)
        h = op(anp.tanh(hpreact))
        logits = op(op(anp.dot(h, W2)) + b2)
        logit_maxes = op(_max(logits, 1, True))
        norm_logits = op(logits - logit_maxes)
        counts = op(anp.exp(norm_logits))
        counts_sum = op(anp.sum(counts, axis=1, keepdims=True))
        counts_sum_inv = op(counts_sum**-1)
        probs = op(counts * counts_sum_inv)
        logprobs = op(anp.log(probs))
        picked = op(logprobs[np.arange(32), Yb])
        op(-op(anp.mean(picked)))
        return out

    check_against_autograd(trace, leaves, forward)
    # The exercise's first answer, by hand: dlogprobs is −1/n at each row's target, 0 elsewhere.
    expected = np.zeros((32, 27))
    expected[np.arange(32), Yb] = -1 / 32
    assert_close(array(trace.tensor("logprobs"), "grad"), expected, "dlogprobs")


@pytest.mark.parametrize(
    ("shape_a", "shape_w", "rule_a", "rule_w"),
    [
        ((2, 3, 4), (4, 5), "dA = dY @ W.mT",
         "dW = (A.mT @ dY).sum(0)  # broadcast over the batch: summed back"),
        ((2, 3, 4), (2, 4, 5), "dA = dY @ W.mT", "dW = A.mT @ dY"),
        ((3, 4), (2, 4, 5), "dA = (dY @ W.mT).sum(0)  # broadcast over the batch: summed back",
         "dW = A.mT @ dY"),
        ((1, 3, 4), (2, 4, 5), "dA = (dY @ W.mT).sum(0, keepdim=True)",
         "dW = A.mT @ dY"),
        ((2, 3, 4), (4,), "dA = dY[..., None] * W",
         "dW = (A * dY[..., None]).sum((0, 1))"),
        ((4,), (2, 4, 5), "dA = (dY[:, None, :] * W).sum((0, 2))",
         "dW = A[:, None] * dY[:, None, :]"),
    ],
)  # fmt: skip
def test_a_batch_of_matrices_matches_autograd(
    shape_a: tuple, shape_w: tuple, rule_a: str, rule_w: str
) -> None:
    """`@` with a third dim (a batch, broadcast as NumPy's matmul): its numbers and gradients
    are autograd's, and each operand's rule says how (a batch one operand lacks is summed)."""
    sizes = lambda shape: ", ".join(map(str, shape))  # noqa: E731
    trace = trace_tensors(
        f"A = randn({sizes(shape_a)}, seed=1)\nW = randn({sizes(shape_w)}, seed=2)\n"
        "Y = A @ W\nL = tanh(Y).sum()"
    )
    a, w = array(trace.tensor("A")), array(trace.tensor("W"))
    assert_close(array(trace.tensor("Y")), np.matmul(a, w), "A @ W")
    d_a, d_w = grad(lambda a, w: anp.sum(anp.tanh(anp.matmul(a, w))), (0, 1))(a, w)
    assert_close(array(trace.tensor("A"), "grad"), d_a, "dA")
    assert_close(array(trace.tensor("W"), "grad"), d_w, "dW")
    reply = tensor_reply(trace)
    rules = next(n["rules"] for n in reply["nodes"] if n["name"] == "Y")
    assert [r["rule"] for r in rules] == [rule_a, rule_w]
