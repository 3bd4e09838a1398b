"""Tensors whose every element is a scalar Value, and the tensor ops, built from the table's ops.

A Tensor is a shape and its elements, row-major: Values for a float tensor (their own nodes,
made with `Value`'s operators and `Value.make`, so one backward pass gives every gradient and
every number is the scalar engine's), plain ints for an integer tensor (indices, class labels:
no gradient). A tensor op makes its output's elements as new nodes, never an input's own, so
every tensor keeps its own gradient (a view is `copy` nodes); it records its op, inputs,
arguments, the range of node ids it built and, per input, the rule its gradient follows
(`dW = Xᵀ · dY`), which the reply writes with the tensors' names (engine/tensor_program.py).

`Elements` counts and bounds the work: each op says how many nodes it will make before it makes
any (a `(1000, 1000) @ (1000, 1000)` is refused at once), and the tensors' elements are bounded
as the scalar graph's nodes are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import product

from .cancel import check as check_cancelled
from .errors import LimitExceeded, ProgramError
from .i18n import Count, msg
from .ops import OPS
from .value import Value

Shape = tuple[int, ...]
# How many scalar nodes a program may build per element it may hold: the server's 20,000
# elements allow 500,000 nodes (makemore's MLP at batch 32 builds about 240,000).
NODES_PER_ELEMENT = 25


class ShapeError(ProgramError):
    """Shapes an op cannot take (`(3, 2) @ (3, 3)`), or an index or dim out of range."""

    type = "ShapeError"


def shown(shape: Shape) -> str:
    """A shape as Python writes a tuple: `(3, 2)`, `(3,)`, `()`."""
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"


LABEL_MAX = 32  # characters of a label or of a program's text quoted in a message


def short(text: str) -> str:
    """`text` on one line, at most LABEL_MAX characters (a label, a message's quote)."""
    text = " ".join(text.split())
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 1] + "…"


def numel(shape: Shape) -> int:
    return math.prod(shape)


def strides(shape: Shape) -> tuple[int, ...]:
    """Row-major strides: the flat step of each dim."""
    result = [1] * len(shape)
    for dim in range(len(shape) - 2, -1, -1):
        result[dim] = result[dim + 1] * shape[dim + 1]
    return tuple(result)


def broadcast(a: Shape, b: Shape) -> tuple[Shape | None, int]:
    """NumPy's broadcast of two shapes (aligned at the right; a size 1 stretches), and the dim
    (of the result, counted from the left) where they first clash (None for the shape then)."""
    rank = max(len(a), len(b))
    a1, b1 = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    out = []
    for dim, (x, y) in enumerate(zip(a1, b1, strict=True)):
        if x != y and x != 1 and y != 1:
            return None, dim
        out.append(max(x, y) if x != 0 and y != 0 else 0)
    return tuple(out), -1


def broadcast_map(out: Shape, shape: Shape) -> list[int]:
    """For each element of `out` (row-major), the flat index of the element of a tensor of
    `shape` broadcast to it."""
    rank = len(out)
    padded = (1,) * (rank - len(shape)) + shape
    steps = (0,) * (rank - len(shape)) + strides(shape)
    steps = tuple(0 if size == 1 else step for size, step in zip(padded, steps, strict=True))
    return [sum(i * s for i, s in zip(index, steps, strict=True)) for index in indices(out)]


def broadcast_dims(out: Shape, shape: Shape) -> tuple[int, ...]:
    """The dims of `out` a tensor of `shape` was stretched over (its gradient sums over them)."""
    padded = (1,) * (len(out) - len(shape)) + shape
    return tuple(d for d, (o, s) in enumerate(zip(out, padded, strict=True)) if s == 1 and o != 1)


def indices(shape: Shape) -> list[tuple[int, ...]]:
    """Every index of `shape`, row-major."""
    return list(product(*(range(size) for size in shape)))


def nested(flat: Sequence[object], shape: Shape) -> object:
    """`flat` (row-major) as nested lists of `shape`; a 0-d tensor's one element as itself."""
    if not shape:
        return flat[0]
    rows: list[object] = list(flat)
    for size in reversed(shape[1:]):
        rows = [rows[i : i + size] for i in range(0, len(rows), size)]
    return rows


def normal_dim(dim: int, rank: int, source: str, where: tuple[int, int], shape: Shape) -> int:
    """`dim` counted from the left (`-1` is the last), or a ShapeError."""
    if not -rank <= dim < rank:
        raise ShapeError(msg("error.tensor.dim", dim=str(dim), shape=shown(shape)), source, *where)
    return dim % rank


class Tensor:
    """A shape and its elements (row-major): `elements` (Values) for a float tensor, `ints` for
    an integer one. `kind` is `leaf` (a tensor the program makes: `tensor([[…]])`, `randn`,
    `zeros`), `const` (one no gradient reaches: an integer tensor, `one_hot`) or `op`; `op` the
    tensor op that made it (its key in OPS_OF_TENSORS' docs: `@`, `+`, `sum`, `view`, …), its
    `inputs` and `args`; `nodes` the ids of the scalar nodes it built, `[first, end)`; `rules`
    per input position the rule of that input's gradient (a template: `{0}`, `{1}` the inputs,
    `{out}` this tensor)."""

    __slots__ = (
        "shape", "elements", "ints", "id", "name", "label", "kind", "op", "inputs", "args",
        "start", "end", "nodes", "rules",
    )  # fmt: skip

    def __init__(
        self,
        shape: Shape,
        elements: list[Value] | None = None,
        ints: list[int] | None = None,
        kind: str = "op",
        op: str | None = None,
        inputs: tuple[Tensor, ...] = (),
    ) -> None:
        self.shape = shape
        self.elements = elements
        self.ints = ints
        self.id = -1
        self.name = ""
        self.label = ""
        self.kind = kind
        self.op = op
        self.inputs = inputs
        self.args: dict[str, object] = {}
        self.start = self.end = 0
        self.nodes = (0, 0)
        self.rules: dict[int, str] = {}

    @property
    def is_int(self) -> bool:
        return self.ints is not None

    def __repr__(self) -> str:
        return f"Tensor({self.label or self.op}, shape={self.shape})"


class Elements:
    """The element graph a program builds: every scalar node (`nodes`, by id), every tensor, and
    the bounds (`max_elements` over all tensors, `max_nodes` scalar nodes; None: no bound)."""

    def __init__(self, source: str, max_elements: int | None) -> None:
        self.source = source
        self.nodes: list[Value] = []
        self.tensors: list[Tensor] = []
        self.max_elements = max_elements
        self.max_nodes = None if max_elements is None else max_elements * NODES_PER_ELEMENT
        self.element_count = 0
        self.span = (0, 0)
        self.what = ""  # the text at `span`, as a bound's message names the op
        # What the numbers choose besides the ops (engine/tensor_graph.py carries it to the
        # page): a constant that is the largest of some nodes' data (softmax's shift), by its
        # id; a `max`'s copy node and the nodes it chose among (the first largest, by its id);
        # whether an integer tensor was made from numbers (`.indices`), which then shape it.
        self.maxima: dict[int, list[int]] = {}
        self.choices: dict[int, list[int]] = {}
        self.numbers_shape_it = False

    def add(self, node: Value, kind: str | None = None) -> Value:
        node.id = len(self.nodes)
        node.start, node.end = self.span
        if kind is not None:
            node.kind = kind
        self.nodes.append(node)
        return node

    def constant(self, number: float) -> Value:
        return self.add(Value.constant(number), "const")

    def reserve(self, nodes: int, elements: int, what: str) -> None:
        """Refuse, before building anything, an op that would pass a bound: `nodes` new scalar
        nodes, `elements` new tensor elements."""
        check_cancelled()
        what = self.what or what
        if self.max_elements is not None and self.element_count + elements > self.max_elements:
            raise LimitExceeded(
                msg(
                    "error.tensor.element_limit",
                    what=what,
                    count=Count(self.element_count + elements),
                    limit=Count(self.max_elements),
                ),
                self.source,
                *self.span,
            )
        if self.max_nodes is not None and len(self.nodes) + nodes > self.max_nodes:
            raise LimitExceeded(
                msg(
                    "error.tensor.node_limit",
                    what=what,
                    count=Count(len(self.nodes) + nodes),
                    limit=Count(self.max_nodes),
                ),
                self.source,
                *self.span,
            )

    def tensor(self, tensor: Tensor, first: int, span: tuple[int, int]) -> Tensor:
        """Register `tensor`, the nodes from `first` on being those it built."""
        tensor.id = len(self.tensors)
        tensor.start, tensor.end = span
        tensor.nodes = (first, len(self.nodes))
        self.element_count += numel(tensor.shape)
        self.tensors.append(tensor)
        return tensor


Made = Callable[[], Tensor]


class TensorOps:
    """The tensor ops, each building its output's elements in `elements` at `span` (the op's
    text) and `caret` (its operator: a shape error points there). `what` names the op as the
    program writes it, for the bounds' messages."""

    def __init__(self, elements: Elements) -> None:
        self.elements = elements
        self.caret = (0, 0)

    def at(self, span: tuple[int, int], caret: tuple[int, int] | None = None) -> TensorOps:
        elements = self.elements
        elements.span = span
        elements.what = short(elements.source[span[0] : span[1]])
        self.caret = caret or span
        return self

    def shape_error(self, key: str, **params: object) -> ShapeError:
        return ShapeError(msg(key, **params), self.elements.source, *self.caret)

    def _made(
        self,
        shape: Shape,
        build: Callable[[], list[Value]],
        nodes: int,
        what: str,
        op: str,
        inputs: tuple[Tensor, ...],
        **args: object,
    ) -> Tensor:
        """The tensor op `op` on `inputs`: bounded (`nodes` it builds), then built."""
        elements = self.elements
        self.fits(shape, what)
        elements.reserve(nodes, numel(shape), what)
        first = len(elements.nodes)
        tensor = Tensor(shape, build(), kind="op", op=op, inputs=inputs)
        tensor.args = args
        return elements.tensor(tensor, first, elements.span)

    # ---- leaves and constants ---------------------------------------------------------------

    def fits(self, shape: Shape, what: str) -> None:
        """Refuse a tensor of `shape` that would pass a bound, or hold nothing, before its
        numbers are made."""
        if numel(shape) == 0:
            raise self.shape_error("error.tensor.empty", shape=shown(shape))
        self.elements.reserve(numel(shape), numel(shape), what)

    def leaf(
        self, shape: Shape, numbers: Sequence[float], kind: str = "leaf", what: str = "tensor"
    ) -> Tensor:
        """A tensor the program makes (its numbers given): each element a leaf (or const)."""
        elements = self.elements
        self.fits(shape, what)
        elements.reserve(len(numbers), len(numbers), what)
        first = len(elements.nodes)
        values = [elements.add(Value(float(x)), kind) for x in numbers]
        tensor = Tensor(shape, values, kind=kind)
        return elements.tensor(tensor, first, elements.span)

    def integers(
        self, shape: Shape, numbers: Sequence[int], op: str | None = None, what: str = "tensor"
    ) -> Tensor:
        elements = self.elements
        self.fits(shape, what)
        tensor = Tensor(shape, ints=list(numbers), kind="const", op=op)
        return elements.tensor(tensor, len(elements.nodes), elements.span)

    def floats(self, x: Tensor) -> Tensor:
        """A float tensor of an integer one's numbers (constants), for arithmetic."""
        if not x.is_int:
            return x
        made = self.leaf(x.shape, [float(i) for i in x.ints or ()], "const")
        made.op, made.inputs, made.kind = "float", (x,), "const"
        return made

    # ---- elementwise ------------------------------------------------------------------------

    def binary(self, key: str, x: Tensor | float, y: Tensor | float, what: str) -> Tensor:
        """`x <key> y` element by element, NumPy's broadcasting; a number is one constant node
        (or, as an exponent, the table's `**k`)."""
        tensors = tuple(t for t in (x, y) if isinstance(t, Tensor))
        shapes = [t.shape if isinstance(t, Tensor) else () for t in (x, y)]
        shape, clash = broadcast(*shapes)
        if shape is None:
            rank = max(map(len, shapes))
            sizes = [((1,) * (rank - len(s)) + s)[clash] for s in shapes]
            raise self.shape_error(
                "error.tensor.broadcast", left=shown(shapes[0]), op=what, right=shown(shapes[1]),
                a=str(sizes[0]), b=str(sizes[1]), dim=str(clash),
            )  # fmt: skip
        count = numel(shape)
        power = key == "**" and not isinstance(y, Tensor)
        constants = 0 if power else sum(not isinstance(t, Tensor) for t in (x, y))
        elements = self.elements

        def build() -> list[Value]:
            operands = []
            for operand in (x, y):
                if isinstance(operand, Tensor):
                    values = operand.elements or []
                    operands.append([values[i] for i in broadcast_map(shape, operand.shape)])
                elif power:
                    operands.append(None)
                else:
                    operands.append([elements.constant(float(operand))] * count)
            add, left, right = elements.add, operands[0], operands[1]
            if power:
                return [add(Value.make("**k", (a,), float(y))) for a in left]  # type: ignore[union-attr]
            if key == "+":
                return [add(a + b) for a, b in zip(left, right, strict=True)]  # type: ignore[arg-type]
            if key == "*":
                return [add(a * b) for a, b in zip(left, right, strict=True)]  # type: ignore[arg-type]
            return [add(Value.make(key, (a, b))) for a, b in zip(left, right, strict=True)]  # type: ignore[arg-type]

        made = self._made(shape, build, count + constants, what, what, tensors)
        rules = ELEMENTWISE_RULES["**k" if power else key]
        if power:
            made.args = {"exponent": float(y)}  # type: ignore[arg-type]
            rules = (rules[0].replace("k", _number(y)),)  # type: ignore[arg-type]
        stretched = [
            _summed(rule, broadcast_dims(shape, operand.shape))
            if isinstance(operand, Tensor) else ""
            for rule, operand in zip(rules, (x, y), strict=False)
        ]  # fmt: skip
        made.rules = _by_input(stretched, (x, y), tensors)
        return made

    def function(self, key: str, x: Tensor, what: str) -> Tensor:
        """A function of the table (`tanh`, `exp`, …) of every element."""
        values = x.elements or []
        add = self.elements.add
        made = self._made(
            x.shape, lambda: [add(Value.make(key, (v,))) for v in values], len(values), what,
            key, (x,),
        )  # fmt: skip
        # The table's local derivative, in its own placeholders (`{0}` the input, `{out}`).
        made.rules[0] = f"d{{0}} = d{{out}} * ({OPS[key].locals[0]})"
        return made

    def negate(self, x: Tensor) -> Tensor:
        values = x.elements or []
        add = self.elements.add
        made = self._made(
            x.shape, lambda: [add(Value.make("neg", (v,))) for v in values], len(values), "-",
            "neg", (x,),
        )  # fmt: skip
        made.rules[0] = "d{0} = -d{out}"
        return made

    # ---- @ ----------------------------------------------------------------------------------

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        """`x @ y` of tensors of 1 to 3 dims: each element a sum of products, `Σₖ x[i,k]·y[k,j]`,
        built as micrograd builds it (products, then `+` left to right); a third dim (first) is
        a batch of matrices, broadcast as NumPy's `matmul` does (`(B, n, k) @ (k, m)`)."""
        if not 1 <= len(x.shape) <= 3 or not 1 <= len(y.shape) <= 3:
            raise self.shape_error(
                "error.tensor.matmul_rank", left=shown(x.shape), right=shown(y.shape)
            )
        inner_x, inner_y = x.shape[-1], y.shape[0] if len(y.shape) == 1 else y.shape[-2]
        batch_x, batch_y = x.shape[:-2], y.shape[:-2]
        batch, _ = broadcast(batch_x, batch_y)
        if inner_x != inner_y or batch is None:
            raise self.shape_error(
                "error.tensor.inner_sizes" if inner_x != inner_y else "error.tensor.batch_sizes",
                left=shown(x.shape), right=shown(y.shape), a=str(inner_x), b=str(inner_y),
            )  # fmt: skip
        rows = x.shape[-2] if len(x.shape) >= 2 else 1
        columns = y.shape[-1] if len(y.shape) >= 2 else 1
        shape = (*batch, *x.shape[-2:-1], *y.shape[-1:][: len(y.shape) - 1])
        inner = inner_x
        # Each matrix of the batch: where its x and its y begin in their elements.
        starts = list(zip(
            [b * rows * inner for b in broadcast_map(batch, batch_x)],
            [b * inner * columns for b in broadcast_map(batch, batch_y)], strict=True,
        ))  # fmt: skip
        xs, ys, elements = x.elements or [], y.elements or [], self.elements
        add = elements.add

        def build() -> list[Value]:
            out = []
            for x0, y0 in starts:
                for i in range(rows):
                    row = xs[x0 + i * inner : x0 + (i + 1) * inner]
                    for j in range(columns):
                        total = add(row[0] * ys[y0 + j])
                        for k in range(1, inner):
                            total = add(total + add(row[k] * ys[y0 + k * columns + j]))
                        out.append(total)
            return out

        count = len(starts) * rows * columns * max(2 * inner - 1, 1)
        made = self._made(shape, build, count, "@", "@", (x, y))
        rules = _matmul_rules(len(x.shape), len(y.shape))
        for k, own in enumerate((batch_x, batch_y)):  # a batch of one, stretched: summed back
            if own and own != batch:
                rules[k] = rules[k].replace(" = ", " = (", 1) + ").sum(0, keepdim=True)"
        made.rules = _by_input(rules, (x, y), made.inputs)
        return made

    # ---- reductions ---------------------------------------------------------------------------

    def _groups(self, x: Tensor, dim: int | None, keepdim: bool) -> tuple[Shape, list[list[int]]]:
        """The output shape of reducing `x` over `dim` (all dims: None) and, per output element,
        the flat indices of the input elements it reduces."""
        shape = x.shape
        if dim is None:
            return ((1,) * len(shape) if keepdim else ()), [list(range(numel(shape)))]
        step = strides(shape)[dim]
        out = tuple(1 if d == dim else s for d, s in enumerate(shape))
        groups = []
        for index in indices(out):
            base = sum(i * s for i, s in zip(index, strides(shape), strict=True))
            groups.append([base + k * step for k in range(shape[dim])])
        if not keepdim:
            out = out[:dim] + out[dim + 1 :]
        return out, groups

    def reduce(self, op: str, x: Tensor, dim: int | None, keepdim: bool, what: str) -> Tensor:
        """`sum`, `mean` or `max` of `x` over `dim` (every element: None)."""
        shape, groups = self._groups(x, dim, keepdim)
        values, elements = x.elements or [], self.elements
        add = elements.add
        size = len(groups[0]) if groups else 0
        chosen: list[int] = []

        def build() -> list[Value]:
            out = []
            count = elements.constant(float(size)) if op == "mean" else None
            for group in groups:
                if op == "max":
                    best = max(range(len(group)), key=lambda k: values[group[k]].data)
                    chosen.append(best)
                    picked = add(Value.make("copy", (values[group[best]],)))
                    elements.choices[picked.id] = [values[k].id for k in group]
                    out.append(picked)
                    continue
                if len(group) == 1:
                    total = add(Value.make("copy", (values[group[0]],)))
                else:
                    total = add(values[group[0]] + values[group[1]])
                    for k in group[2:]:
                        total = add(total + values[k])
                out.append(add(Value.make("/", (total, count))) if count is not None else total)
            return out

        nodes = len(groups) * (1 if op == "max" else max(size - 1, 1) + (op == "mean")) + 1
        made = self._made(shape, build, nodes, what, op, (x,))
        made.args = {"dim": dim, "keepdim": keepdim}
        spread = "d{out}" if keepdim or dim is None else f"d{{out}}.unsqueeze({dim})"
        if op == "sum":
            made.rules[0] = f"d{{0}} = {spread}.expand_as({{0}})"
        elif op == "mean":
            made.rules[0] = f"d{{0}} = {spread}.expand_as({{0}}) / {size}"
        else:
            made.args["argmax"] = chosen
            made.rules[0] = f"d{{0}} = {spread} at the argmax over dim {dim}, 0 elsewhere"
        return made

    # ---- moving elements: copies ------------------------------------------------------------

    def moved(self, x: Tensor, shape: Shape, order: list[int], op: str, what: str) -> Tensor:
        """A tensor of `shape` whose elements are copies of `x`'s at flat `order`."""
        if x.is_int:
            ints = x.ints or []
            made = self.integers(shape, [ints[i] for i in order], op)
            made.inputs = (x,)
            return made
        values, add = x.elements or [], self.elements.add
        return self._made(
            shape, lambda: [add(Value.make("copy", (values[i],))) for i in order], len(order),
            what, op, (x,),
        )  # fmt: skip

    def transpose(self, x: Tensor, d0: int, d1: int) -> Tensor:
        rank = len(x.shape)
        d0, d1 = (normal_dim(d, rank, self.elements.source, self.caret, x.shape) for d in (d0, d1))
        axes = list(range(rank))
        axes[d0], axes[d1] = axes[d1], axes[d0]
        shape = tuple(x.shape[a] for a in axes)
        step = strides(x.shape)
        order = [
            sum(index[axes.index(d)] * step[d] for d in range(rank)) for index in indices(shape)
        ]
        made = self.moved(x, shape, order, "transpose", "transpose")
        made.args = {"dims": [d0, d1]}
        made.rules[0] = f"d{{0}} = d{{out}}.transpose({d0}, {d1})"
        return made

    def view(self, x: Tensor, sizes: Sequence[int], what: str) -> Tensor:
        total = numel(x.shape)
        unknown = [i for i, s in enumerate(sizes) if s == -1]
        known = math.prod(s for s in sizes if s != -1)
        bad = len(unknown) > 1 or any(s < -1 for s in sizes)
        shape = list(sizes)
        if not bad and unknown:
            bad = known == 0 or total % known != 0
            shape[unknown[0]] = total // known if not bad else 0
        if bad or numel(tuple(shape)) != total:
            target = "(" + ", ".join(map(str, sizes)) + ("," if len(sizes) == 1 else "") + ")"
            raise self.shape_error(
                "error.tensor.view", shape=shown(x.shape), count=str(total), target=target
            )
        made = self.moved(x, tuple(shape), list(range(total)), "view", what)
        made.args = {"shape": shape}
        made.rules[0] = "d{0} = d{out}.view({0}.shape)"
        return made

    def index(self, x: Tensor, picks: Sequence[Tensor | int]) -> Tensor:
        """`x[i]`, `x[X]` (an integer tensor: the embedding `C[X]`), `x[rows, Y]`: NumPy's
        integer indexing of the first dims, the rest kept."""
        if len(picks) > len(x.shape):
            raise self.shape_error(
                "error.tensor.too_many_indices", shape=shown(x.shape), count=str(len(picks))
            )
        shapes = [p.shape if isinstance(p, Tensor) else () for p in picks]
        shape: Shape | None = ()
        for s in shapes:
            shape, _ = broadcast(shape or (), s)
            if shape is None:
                raise self.shape_error(
                    "error.tensor.index_shapes", shapes=", ".join(shown(s) for s in shapes)
                )
        picked = shape or ()
        rest = x.shape[len(picks) :]
        self.fits((*picked, *rest), "[]")
        maps = [broadcast_map(picked, s) for s in shapes]
        step = strides(x.shape)
        inner = numel(rest)
        order: list[int] = []
        for k in range(numel(picked)):
            base = 0
            for dim, (pick, where) in enumerate(zip(picks, maps, strict=True)):
                i = pick.ints[where[k]] if isinstance(pick, Tensor) else pick  # type: ignore[index]
                size = x.shape[dim]
                if not -size <= i < size:
                    raise self.shape_error(
                        "error.tensor.index", index=str(i), dim=str(dim), size=str(size)
                    )
                base += (i % size) * step[dim]
            order.extend(range(base, base + inner))
        inputs = [p for p in picks if isinstance(p, Tensor)]
        made = self.moved(x, (*picked, *rest), order, "index", "[]")
        made.inputs = (x, *inputs)
        made.args = {"index": [p if isinstance(p, int) else f"t{p.id}" for p in picks]}
        written, tensor_inputs = [], iter(range(1, len(inputs) + 1))
        for pick in picks:
            written.append(f"{{{next(tensor_inputs)}}}" if isinstance(pick, Tensor) else str(pick))
        made.rules[0] = f"d{{0}} = zeros_like({{0}}); d{{0}}[{', '.join(written)}] += d{{out}}"
        if inputs:  # an index tensor may pick an element twice
            made.rules[0] += "  # an element picked twice adds both"
        return made

    def sliced(self, x: Tensor, picks: Sequence[int | slice]) -> Tensor:
        """`x[:, 0]`, `x[1:3]`: integers and slices of the first dims (NumPy's basic indexing;
        a slice keeps its dim, an integer drops it), the rest kept."""
        if len(picks) > len(x.shape):
            raise self.shape_error(
                "error.tensor.too_many_indices", shape=shown(x.shape), count=str(len(picks))
            )
        ranges: list[range] = []
        kept: list[int] = []
        for dim, size in enumerate(x.shape):
            pick = picks[dim] if dim < len(picks) else slice(None)
            if isinstance(pick, slice):
                ranges.append(range(*pick.indices(size)))
                kept.append(len(ranges[-1]))
                continue
            if not -size <= pick < size:
                raise self.shape_error(
                    "error.tensor.index", index=str(pick), dim=str(dim), size=str(size)
                )
            ranges.append(range(pick % size, pick % size + 1))
        self.fits(tuple(kept), "[]")
        step = strides(x.shape)
        order = [sum(i * s for i, s in zip(index, step, strict=True)) for index in product(*ranges)]
        made = self.moved(x, tuple(kept), order, "[]", "[]")
        written = ", ".join(_slice_text(p) for p in picks)
        made.args = {"index": [_slice_text(p) for p in picks]}
        made.rules[0] = f"d{{0}} = zeros_like({{0}}); d{{0}}[{written}] += d{{out}}"
        return made

    def cat(self, tensors: Sequence[Tensor], dim: int) -> Tensor:
        """`torch.cat(tensors, dim)`: their elements side by side along `dim`, as `copy` nodes."""
        first = tensors[0]
        dim = normal_dim(dim, len(first.shape), self.elements.source, self.caret, first.shape)
        for other in tensors[1:]:
            same = len(other.shape) == len(first.shape) and all(
                a == b
                for d, (a, b) in enumerate(zip(other.shape, first.shape, strict=True))
                if d != dim
            )
            if not same:
                raise self.shape_error(
                    "error.tensor.cat", left=shown(first.shape), right=shown(other.shape),
                    dim=str(dim),
                )  # fmt: skip
        sizes = [t.shape[dim] for t in tensors]
        shape = (*first.shape[:dim], sum(sizes), *first.shape[dim + 1 :])
        offsets = [sum(sizes[:i]) for i in range(len(sizes))]
        add = self.elements.add

        def build() -> list[Value]:
            out = []
            for index in indices(shape):
                at = index[dim]
                part = max(i for i, offset in enumerate(offsets) if offset <= at)
                source = tensors[part]
                inner = (*index[:dim], at - offsets[part], *index[dim + 1 :])
                flat = sum(i * s for i, s in zip(inner, strides(source.shape), strict=True))
                out.append(add(Value.make("copy", ((source.elements or [])[flat],))))
            return out

        inputs = tuple(tensors)
        made = self._made(shape, build, numel(shape), "cat", "cat", inputs)
        made.args = {"dim": dim}
        rules = [
            f"d{{{i}}} = d{{out}}.narrow({dim}, {offset}, {size})"
            for i, (offset, size) in enumerate(zip(offsets, sizes, strict=True))
        ]
        made.rules = _by_input(rules, inputs, inputs)
        return made

    def stack(self, tensors: Sequence[Tensor], dim: int) -> Tensor:
        """`torch.stack(tensors, dim)`: tensors of one shape as the slices of a new dim `dim`,
        their elements as `copy` nodes."""
        first = tensors[0]
        rank = len(first.shape) + 1
        dim = normal_dim(dim, rank, self.elements.source, self.caret, first.shape)
        for other in tensors[1:]:
            if other.shape != first.shape:
                raise self.shape_error(
                    "error.tensor.stack", left=shown(first.shape), right=shown(other.shape)
                )
        shape = (*first.shape[:dim], len(tensors), *first.shape[dim:])
        step = strides(first.shape)
        add = self.elements.add

        def build() -> list[Value]:
            out = []
            for index in indices(shape):
                inner = (*index[:dim], *index[dim + 1 :])
                flat = sum(i * s for i, s in zip(inner, step, strict=True))
                source = tensors[index[dim]].elements or []
                out.append(add(Value.make("copy", (source[flat],))))
            return out

        inputs = tuple(tensors)
        made = self._made(shape, build, numel(shape), "stack", "stack", inputs)
        made.args = {"dim": dim}
        rules = [f"d{{{i}}} = d{{out}}.select({dim}, {i})" for i in range(len(tensors))]
        made.rules = _by_input(rules, inputs, inputs)
        return made

    # ---- classes --------------------------------------------------------------------------

    def one_hot(self, y: Tensor, classes: int) -> Tensor:
        labels = y.ints or []
        for label in labels:
            if not 0 <= label < classes:
                raise self.shape_error(
                    "error.tensor.class_range", value=str(label), count=str(classes)
                )
        self.fits((*y.shape, classes), "one_hot")
        numbers = [float(label == c) for label in labels for c in range(classes)]
        made = self.leaf((*y.shape, classes), numbers, "const")
        made.op, made.inputs, made.args = "one_hot", (y,), {"num_classes": classes}
        return made

    def _shifted_exp(
        self, values: list[Value], group: list[int]
    ) -> tuple[list[Value], list[Value], Value]:
        """`x − max` (the max a constant: softmax is the same for any shift, PyTorch shifts so
        exp never overflows) of a row, the exps of that and their sum."""
        add, elements = self.elements.add, self.elements
        top = elements.constant(max(values[k].data for k in group))
        elements.maxima[top.id] = [values[k].id for k in group]
        shifted = [add(Value.make("-", (values[k], top))) for k in group]
        exps = [add(Value.make("exp", (s,))) for s in shifted]
        total = exps[0]
        for e in exps[1:]:
            total = add(total + e)
        return shifted, exps, total

    def softmax(self, x: Tensor, dim: int, log: bool, what: str) -> Tensor:
        """softmax (`exp(x − max) / Σ exp(x − max)`) or log_softmax (`(x − max) − log Σ …`)
        over `dim`, from the table's ops."""
        rank = len(x.shape)
        dim = normal_dim(dim, rank, self.elements.source, self.caret, x.shape)
        _, groups = self._groups(x, dim, True)
        values, add = x.elements or [], self.elements.add
        size = x.shape[dim] if rank else 1
        placed: list[Value | None] = [None] * numel(x.shape)

        def build() -> list[Value]:
            for group in groups:
                shifted, exps, total = self._shifted_exp(values, group)
                if log:
                    lse = add(Value.make("log", (total,)))
                    outs = [add(Value.make("-", (s, lse))) for s in shifted]
                else:
                    outs = [add(Value.make("/", (e, total))) for e in exps]
                for k, out in zip(group, outs, strict=True):
                    placed[k] = out
            return placed  # type: ignore[return-value]

        per_group = 4 * size + 1
        made = self._made(x.shape, build, len(groups) * per_group, what, what, (x,))
        made.args = {"dim": dim}
        if log:
            made.rules[0] = (
                f"d{{0}} = d{{out}} - softmax({{0}}, {dim}) * d{{out}}.sum({dim}, keepdim=True)"
            )
        else:
            made.rules[0] = (
                f"d{{0}} = {{out}} * (d{{out}} - (d{{out}} * {{out}}).sum({dim}, keepdim=True))"
            )
        return made

    def cross_entropy(self, logits: Tensor, targets: Tensor, what: str) -> Tensor:
        """The mean over rows of `−log softmax(logits)[row, target]`, composed from the table's
        ops (exp, log, `+`, `−`, `/`); its gradient, `(softmax − one_hot) / N`, is what the one
        backward pass computes through them (docs/tensors.md says why it is not fused)."""
        if len(logits.shape) != 2 or targets.shape != logits.shape[:1]:
            raise self.shape_error(
                "error.tensor.targets", logits=shown(logits.shape), targets=shown(targets.shape),
                n=str(logits.shape[0] if logits.shape else 0),
            )  # fmt: skip
        rows, classes = logits.shape
        labels = targets.ints or []
        for label in labels:
            if not 0 <= label < classes:
                raise self.shape_error(
                    "error.tensor.class_range", value=str(label), count=str(classes)
                )
        _, groups = self._groups(logits, 1, True)
        values, elements = logits.elements or [], self.elements
        add = elements.add

        def build() -> list[Value]:
            losses = []
            for group, label in zip(groups, labels, strict=True):
                shifted, _, total = self._shifted_exp(values, group)
                lse = add(Value.make("log", (total,)))
                losses.append(add(Value.make("-", (lse, shifted[label]))))
            total = losses[0]
            for loss in losses[1:]:
                total = add(total + loss)
            return [add(Value.make("/", (total, elements.constant(float(rows)))))]

        nodes = rows * (3 * classes + 2) + rows + 2
        made = self._made((), build, nodes, what, "cross_entropy", (logits, targets))
        made.rules[0] = (
            f"d{{0}} = (softmax({{0}}, 1) - one_hot({{1}}, {classes})) / {rows} * d{{out}}"
        )
        return made


# Per op key, the rule of each input's gradient (`{0}`, `{1}` the inputs, `{out}` the result).
ELEMENTWISE_RULES = {
    "+": ("d{0} = d{out}", "d{1} = d{out}"),
    "-": ("d{0} = d{out}", "d{1} = -d{out}"),
    "*": ("d{0} = d{out} * {1}", "d{1} = d{out} * {0}"),
    "/": ("d{0} = d{out} / {1}", "d{1} = -d{out} * {0} / {1}**2"),
    "**": ("d{0} = d{out} * {1} * {0}**({1} - 1)", "d{1} = d{out} * {out} * log({0})"),
    "**k": ("d{0} = d{out} * k * {0}**(k - 1)", ""),
}


def _summed(rule: str, dims: tuple[int, ...]) -> str:
    """`rule` for an input stretched over `dims` by broadcasting: its gradient sums over them."""
    if not dims or not rule:
        return rule
    left, right = rule.split(" = ", 1)
    listed = str(dims[0]) if len(dims) == 1 else str(tuple(dims))
    right = right if " " not in right else f"({right})"
    return f"{left} = {right}.sum({listed})  # broadcast over dim {listed}: summed back"


def _matmul_rules(rank_x: int, rank_y: int) -> list[str]:
    """How `x @ y` passes each operand its gradient, as PyTorch would write it; a batch dim
    one operand lacks was a broadcast, summed back."""
    if rank_x == 1 and rank_y == 1:
        return ["d{0} = d{out} * {1}", "d{1} = d{out} * {0}"]
    if rank_x <= 2 and rank_y <= 2:
        rules = ["d{0} = d{out} @ {1}.T", "d{1} = {0}.T @ d{out}"]
        if rank_x == 1:
            rules[1] = "d{1} = outer({0}, d{out})"
        if rank_y == 1:
            rules[0] = "d{0} = outer(d{out}, {1})"
        return rules
    # A batch of matrices: `.mT` transposes each (the last two dims).
    rules = ["d{0} = d{out} @ {1}.mT", "d{1} = {0}.mT @ d{out}"]
    if rank_y == 1:
        rules[0] = "d{0} = d{out}[..., None] * {1}"
        rules[1] = "d{1} = ({0} * d{out}[..., None]).sum((0, 1))"
    elif rank_x == 1:
        rules[0] = "d{0} = (d{out}[:, None, :] * {1}).sum((0, 2))"
        rules[1] = "d{1} = {0}[:, None] * d{out}[:, None, :]"
    if rank_x == 3 and rank_y == 2:
        rules[1] = "d{1} = ({0}.mT @ d{out}).sum(0)  # broadcast over the batch: summed back"
    if rank_x == 2 and rank_y == 3:
        rules[0] = "d{0} = (d{out} @ {1}.mT).sum(0)  # broadcast over the batch: summed back"
    return rules


def _slice_text(pick: int | slice) -> str:
    """An integer or a slice as an index writes it: `0`, `:`, `1:3`, `::2`."""
    if not isinstance(pick, slice):
        return str(pick)
    start = "" if pick.start is None else str(pick.start)
    stop = "" if pick.stop is None else str(pick.stop)
    return f"{start}:{stop}" if pick.step is None else f"{start}:{stop}:{pick.step}"


def _number(x: float) -> str:
    return repr(float(x)).removesuffix(".0")


def _by_input(
    rules: Sequence[str], operands: Sequence[Tensor | float], inputs: Sequence[Tensor]
) -> dict[int, str]:
    """Rules written for the operands (`{0}`, `{1}` as the op is written) as rules of the op's
    inputs (`{i}` the i-th input; a number operand written out); an input that is two operands
    (`X * X`) gets the sum of both."""
    marks = {f"{{{p}}}": f"\x00{p}\x01" for p in range(len(operands))}
    right_sides: dict[int, list[str]] = {}
    for rule, operand in zip(rules, operands, strict=False):
        if not rule or not isinstance(operand, Tensor):
            continue
        for mark, placeholder in marks.items():
            rule = rule.replace(mark, placeholder)
        for p, other in enumerate(operands):
            text = f"{{{inputs.index(other)}}}" if isinstance(other, Tensor) else _number(other)
            rule = rule.replace(f"\x00{p}\x01", text)
        right_sides.setdefault(inputs.index(operand), []).append(rule.split(" = ", 1)[1])
    return {i: f"d{{{i}}} = " + " + ".join(sides) for i, sides in right_sides.items()}
