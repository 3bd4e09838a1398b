"""Run a tensor program (docs/tensors.md): read it (tensor_reader.py), build its tensors element
by element (tensors.py) and run the one backward pass from its result; engine/tensor_reply.py
writes the reply of `POST /api/graph` for it.

A program is straight-line PyTorch-flavoured code: `tensor([[…]])`, `randn(3, 2, seed=1)`, `@`,
`+ - * / **` with broadcasting, the table's functions, `sum`/`mean`/`max` over a dim, `.T`,
`view`, `C[X]`, `one_hot`, `softmax`, `log_softmax`, `cross_entropy`; makemore's spellings
(`torch.`, `F.`, `torch.Generator().manual_seed(…)`, `generator=g`, `emb.view(emb.shape[0], -1)`,
`loss.backward()`) read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any, NamedTuple

from .backward import backward
from .builder import Limits, check_values, limit_warnings
from .errors import (
    ArgumentCount,
    LineIndex,
    SyntaxError_,
    UnknownFunction,
    UseBeforeAssign,
)
from .gc_pause import cycle_collector_paused
from .i18n import msg
from .lexer import needs_running
from .ops import FUNCTIONS
from .seeded import Generator
from .tensor_reader import MATMUL, Node, Statement, parse
from .tensors import (
    Elements,
    Shape,
    ShapeError,
    Tensor,
    TensorOps,
    normal_dim,
    numel,
    short,
    shown,
)
from .tracing import check_source_size
from .value import Value

# The modules a program may name, as makemore's notebooks import them.
MODULES = {"torch", "F", "nn", "torch.nn", "torch.nn.functional", "nn.functional", "functional"}
# What a tensor op's name is in the reply, by how a program calls it.
_SUM_LIKE = ("sum", "mean", "max")
DEFAULT_SEED = 0  # the stream `randn` draws from without `seed=` or `generator=`


# After an unknown name: `.attr.attr(`, the call of a library's function.
_CALL_AFTER = re.compile(r"(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+[ \t]*\(", re.ASCII)


class Module(NamedTuple):
    path: str


class MaxResult(NamedTuple):
    """`x.max(dim)`: PyTorch's pair of `values` and `indices`."""

    values: Tensor
    indices: Tensor


@dataclass
class TensorTrace:
    """A tensor program run forward and backward: its element graph, its tensors (in the order
    they were made), the root (one element), the named leaves and program-level warnings."""

    source: str
    elements: Elements
    root: Tensor
    leaves: list[Tensor]
    warnings: list[dict[str, Any]] = field(default_factory=list)
    reached: bytearray = field(default_factory=bytearray)

    @property
    def tensors(self) -> list[Tensor]:
        return self.elements.tensors

    def tensor(self, name: str) -> Tensor:
        """The last tensor assigned to `name` (or with that label)."""
        for tensor in reversed(self.tensors):
            if tensor.name == name:
                return tensor
        raise KeyError(name)


def trace_tensors(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    limits: Limits | None = None,
) -> TensorTrace:
    """Read, build and run `source`, a tensor program, forward and backward. `values` set
    elements of named leaf tensors (`{"W[1,2]": 0.5}`). Raises a ProgramError subclass (its
    words in any language: `message_in`; the trace's warnings are said by `tensor_reply`)."""
    limits = limits or Limits()
    check_source_size(source, limits)
    checked = check_values(values)
    with cycle_collector_paused():
        statements = parse(source)
        program = _Program(source, checked, limits.max_nodes)
        root = program.run(statements)
        trace = TensorTrace(source, program.elements, root, program.leaves, program.warnings)
        trace.reached = run_backward(trace.elements.nodes, (root.elements or [])[0])
        warnings = [*program.warnings, *program.unused(trace.reached), *program.unknown_values()]
        trace.warnings = limit_warnings(warnings)  # at most ten of a kind, as a scalar reply's
    return trace


def run_backward(nodes: list[Value], root: Value) -> bytearray:
    """The one backward pass from `root`, in two stages: order (the nodes `root` depends on, in
    the order they were built, which is a topological order: every node after its inputs),
    then `backward` in reverse. Returns which nodes were reached (by id)."""
    reached = bytearray(len(nodes))
    reached[root.id] = 1
    for node in reversed(nodes[: root.id + 1]):
        if reached[node.id]:
            for child in node.inputs:
                reached[child.id] = 1
    order = [node for node in reversed(nodes) if reached[node.id]]
    for node in nodes:
        node.grad = 0.0
    backward(root, order)
    return reached


# ---- The program ---------------------------------------------------------------------------


class _Program:
    def __init__(self, source: str, values: dict[str, float], max_elements: int | None) -> None:
        self.source = source
        self.values = values
        self.elements = Elements(source, max_elements)
        self.ops = TensorOps(self.elements)
        self.names: dict[str, object] = {}
        self.leaves: list[Tensor] = []
        self.warnings: list[dict[str, Any]] = []
        self.default_generator = Generator(DEFAULT_SEED)
        self.lines = LineIndex(source)
        self.backward_of: Tensor | None = None
        self.assigned: list[tuple[Statement, Tensor]] = []
        self.used_values: set[str] = set()
        self.noted_generator = False

    # ---- statements ----

    def run(self, statements: Sequence[Statement]) -> Tensor:
        last: object = None
        last_statement = statements[-1]
        for statement in statements:
            if self._skipped(statement):
                continue
            value = self.evaluate(statement.expr)
            if statement.attribute is not None:
                self._attribute_assignment(statement, value)
                continue
            if statement.target is not None:
                self._assign(statement, value)
            last, last_statement = value, statement
        root = self.backward_of or last
        if not isinstance(root, Tensor):
            where = last_statement.expr
            raise ShapeError(
                msg("error.tensor.result_not_tensor", text=short(self.text(where))),
                self.source, where.start, where.end,
            )  # fmt: skip
        if root.is_int or numel(root.shape) != 1:
            where = last_statement.expr
            what = shown(root.shape) if isinstance(root, Tensor) else type(root).__name__
            name = (root.name if isinstance(root, Tensor) else "") or "result"
            raise ShapeError(
                msg("error.tensor.not_scalar", name=name, shape=what), self.source, where.start,
                where.end,
            )  # fmt: skip
        return root

    def _skipped(self, statement: Statement) -> bool:
        """Lines read as notes: imports, `print(…)`."""
        expr = statement.expr
        callee = expr.args[0] if expr.kind == "call" else None
        printed = callee is not None and callee.kind == "name" and callee.text == "print"
        if expr.kind == "note" or (statement.target is None and printed):
            self._note(expr.start, self.source[expr.start : expr.end])
            return True
        return False

    def _note(self, start: int, text: str) -> None:
        line, column = self.lines.position(start)
        message = msg("warning.tensor.note", text=short(text))
        self.warnings.append(
            {
                "type": "skipped",
                "message": msg("warning.on_line", line=line, message=message),
                "line": line,
                "column": column,
            }
        )

    def _attribute_assignment(self, statement: Statement, value: object) -> None:
        """`W.requires_grad = True` (every float tensor has a gradient here), `p.grad = None`."""
        if statement.attribute not in ("requires_grad", "grad"):
            raise SyntaxError_(
                msg("error.tensor.attribute", name=f"{statement.target}.{statement.attribute}"),
                self.source,
                statement.target_start,
                statement.expr.end,
            )
        del value
        self._note(statement.target_start, self.source[statement.target_start : statement.expr.end])

    def _assign(self, statement: Statement, value: object) -> None:
        name = statement.target or ""
        self.names[name] = value
        if not isinstance(value, Tensor):
            return
        if not value.name:
            value.name = name
            value.label = name
            if value.kind == "leaf":
                self._set_values(value)
                self.leaves.append(value)
        self.assigned.append((statement, value))

    def _set_values(self, leaf: Tensor) -> None:
        """Elements of a named leaf set by the request (`W[1,2]`)."""
        if not self.values:
            return
        rank = len(leaf.shape)
        for flat, element in enumerate(leaf.elements or []):
            index, rest = [], flat
            for size in reversed(leaf.shape):
                index.append(rest % size)
                rest //= size
            key = f"{leaf.name}[{','.join(map(str, reversed(index)))}]" if rank else leaf.name
            if key in self.values:
                element.data = self.values[key]
                self.used_values.add(key)

    def unused(self, reached: bytearray) -> list[dict[str, Any]]:
        """A warning for each assignment of a float tensor the result does not depend on."""
        found = []
        for statement, tensor in self.assigned:
            elements = tensor.elements
            if elements and not any(reached[v.id] for v in elements):
                line, column = self.lines.position(statement.target_start)
                unused = msg("warning.unused", name=f"'{statement.target}'")
                found.append(
                    {
                        "type": "unused",
                        "message": msg("warning.on_line", line=line, message=unused),
                        "line": line,
                        "column": column,
                    }
                )
        return found

    def unknown_values(self) -> list[dict[str, Any]]:
        found = []
        for name in self.values:
            if name not in self.used_values:
                message = msg("warning.unknown_value", name=f"'{name}'")
                found.append(
                    {"type": "unknown_value", "message": message, "line": None, "column": None}
                )
        return found

    # ---- expressions ----

    def evaluate(self, node: Node) -> object:
        kind = node.kind
        if kind == "num" or kind == "str":
            return node.value
        if kind == "name":
            return self.name(node)
        if kind == "list":
            return [self.evaluate(item) for item in node.args]
        if kind == "unary":
            operand = self.evaluate(node.args[0])
            if node.op == "+":
                return operand
            if isinstance(operand, Tensor):
                return self.ops.at((node.start, node.end)).negate(self.floats(operand))
            return -self.number(operand, node.args[0])
        if kind == "binary":
            return self.binary(node)
        if kind == "attr":
            return self.attribute(node)
        if kind == "slice":  # `start:stop:step` in an index
            bounds = [
                None if b.kind == "none" else self.integer(self.evaluate(b), b) for b in node.args
            ]
            if bounds[2] is not None and bounds[2] <= 0:  # PyTorch's rule; NumPy's `::-1` too
                step = node.args[2]
                raise SyntaxError_(
                    msg("error.tensor.slice_step", step=str(bounds[2])),
                    self.source, step.start, step.end,
                )  # fmt: skip
            return slice(*bounds)
        if kind == "index":
            return self.index(node)
        return self.call(node)

    def name(self, node: Node) -> object:
        text = node.text
        if text in self.names:
            return self.names[text]
        if text in MODULES:
            return Module("F" if text == "F" else text)
        if text in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[text]
        call = _CALL_AFTER.match(self.source, node.end)
        if call is not None:  # `np.random.randn(3)`: a library's call, which must run
            called = " ".join(self.source[node.start : call.end() - 1].split())
            kind = "random" if text == "random" else "call"
            raise needs_running(kind, self.source, node.start, call.end() - 1, call=f"'{called}'")
        raise UseBeforeAssign(
            msg("error.tensor.unknown_name", name=text), self.source, node.start, node.end
        )

    def number(self, value: object, node: Node) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.not_a("error.tensor.not_a_number", node)
        return value

    def integer(self, value: object, node: Node) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.not_a("error.tensor.not_an_integer", node)
        return value

    def tensor(self, value: object, node: Node) -> Tensor:
        if isinstance(value, MaxResult):
            return value.values
        if not isinstance(value, Tensor):
            raise self.not_a("error.tensor.not_a_tensor", node)
        return value

    def not_a(self, key: str, node: Node) -> SyntaxError_:
        """The error of an operand `node` that is not what its place needs (a number, an
        integer, a tensor), quoting it."""
        return SyntaxError_(
            msg(key, text=short(self.text(node))), self.source, node.start, node.end
        )

    def floats(self, tensor: Tensor) -> Tensor:
        return self.ops.floats(tensor) if tensor.is_int else tensor

    def text(self, node: Node) -> str:
        return self.source[node.start : node.end]

    def binary(self, node: Node) -> object:
        left_node, right_node = node.args
        left, right = self.evaluate(left_node), self.evaluate(right_node)
        op = node.op
        if isinstance(left, MaxResult):
            left = left.values
        if isinstance(right, MaxResult):
            right = right.values
        if not isinstance(left, Tensor) and not isinstance(right, Tensor):
            a, b = self.number(left, left_node), self.number(right, right_node)
            return _arithmetic(op, a, b, self, node)
        ops = self.ops.at((node.start, node.end), (node.op_start, node.op_end))
        if op == MATMUL:
            return ops.matmul(
                self.floats(self.tensor(left, left_node)),
                self.floats(self.tensor(right, right_node)),
            )
        x = self.floats(left) if isinstance(left, Tensor) else self.number(left, left_node)
        y = self.floats(right) if isinstance(right, Tensor) else self.number(right, right_node)
        return ops.binary(op, x, y, op)

    def attribute(self, node: Node) -> object:
        owner = self.evaluate(node.args[0])
        name = node.text
        if isinstance(owner, Module):
            return Module(f"{owner.path}.{name}")
        if isinstance(owner, MaxResult) and name in ("values", "indices"):
            self.elements.numbers_shape_it |= name == "indices"
            return getattr(owner, name)
        if isinstance(owner, Tensor):
            if name == "shape":
                return owner.shape
            if name == "T":
                return self.ops.at((node.start, node.end), (node.op_start, node.op_end)).transpose(
                    owner, 0, -1 if len(owner.shape) > 1 else 0
                )
            if name in ("data", "grad"):
                raise SyntaxError_(
                    msg("error.tensor.attribute", name=self.text(node)),
                    self.source, node.op_start, node.op_end,
                )  # fmt: skip
        return _Bound(owner, name, node)

    def index(self, node: Node) -> object:
        owner = self.evaluate(node.args[0])
        picks = [self.evaluate(item) for item in node.args[1:]]
        if isinstance(owner, tuple):  # `emb.shape[0]`
            i = self.integer(picks[0], node.args[1]) if len(picks) == 1 else None
            if i is None or not -len(owner) <= i < len(owner):
                raise SyntaxError_(
                    msg("error.tensor.index", index=self.text(node.args[1]), dim="0",
                        size=str(len(owner))),
                    self.source, node.args[1].start, node.args[1].end,
                )  # fmt: skip
            return owner[i]
        if isinstance(owner, MaxResult):
            picked = owner[self.integer(picks[0], node.args[1])]
            self.elements.numbers_shape_it |= picked is owner.indices
            return picked
        tensor = self.tensor(owner, node.args[0])
        caret = (node.args[0].end, node.end)
        if any(isinstance(pick, slice) for pick in picks):  # `x[:, 0]`: ints and slices
            for pick, item in zip(picks, node.args[1:], strict=True):
                if not isinstance(pick, slice):
                    self.integer(pick, item)  # (an index tensor with a slice: not yet)
            return self.ops.at((node.start, node.end), caret).sliced(tensor, picks)  # type: ignore[arg-type]
        checked: list[Tensor | int] = []
        for pick, item in zip(picks, node.args[1:], strict=True):
            if isinstance(pick, list | range):
                pick = self._int_tensor(pick, item)
            if isinstance(pick, Tensor) and not pick.is_int:
                raise SyntaxError_(
                    msg("error.tensor.index_kind", text=short(self.text(item))),
                    self.source, item.start, item.end,
                )  # fmt: skip
            if not isinstance(pick, Tensor):
                pick = self.integer(pick, item)
            checked.append(pick)
        return self.ops.at((node.start, node.end), caret).index(tensor, checked)

    def _int_tensor(self, items: Sequence[object], node: Node) -> Tensor:
        numbers = [self.integer(i, node) for i in items]
        return self.ops.at((node.start, node.end)).integers((len(numbers),), numbers)

    # ---- calls ----

    def call(self, node: Node) -> object:
        head = node.args[0]
        if head.kind == "name" and head.text not in self.names and head.text not in MODULES:
            callee: object = Module(head.text)  # `tensor(…)`, `randn(…)`: a function's name
        else:
            callee = self.evaluate(head)
        args = [self.evaluate(arg) for arg in node.args[1:]]
        keywords = {name: self.evaluate(value) for name, value in node.keywords}
        call = _Call(self, node, args, keywords)
        if isinstance(callee, _Bound):
            return self.method(callee, call)
        if isinstance(callee, Module):
            return self.function(callee.path.rsplit(".", 1)[-1], call, callee.path)
        raise UnknownFunction(
            msg("error.tensor.not_callable", text=short(self.text(node.args[0]))),
            self.source, node.args[0].start, node.args[0].end,
        )  # fmt: skip

    def function(self, name: str, call: _Call, path: str) -> object:
        handler = FUNCTIONS_OF_PROGRAMS.get(name)
        if handler is None:
            close = get_close_matches(name, list(FUNCTIONS_OF_PROGRAMS), n=3)
            node = call.node.args[0]
            raise UnknownFunction(
                msg("error.tensor.unknown_function", name=path, close=", ".join(close) or "—"),
                self.source, node.start, node.end,
            )  # fmt: skip
        return handler(call)

    def method(self, bound: _Bound, call: _Call) -> object:
        owner, name = bound.owner, bound.name
        if isinstance(owner, Generator) and name == "manual_seed":
            return owner.manual_seed(call.integer(0, "seed"))
        if isinstance(owner, Tensor):
            handler = METHODS.get(name)
            if handler is not None:
                return handler(call.with_self(owner))
        node = bound.node
        raise UnknownFunction(
            msg("error.tensor.unknown_method", name=name, close=", ".join(
                get_close_matches(name, list(METHODS), n=3)) or "—"),
            self.source, node.op_start, node.op_end,
        )  # fmt: skip

    # ---- the generator ----

    def generator(self, call: _Call) -> Generator:
        seed = call.keywords.get("seed")
        given = call.keywords.get("generator")
        if seed is not None:
            return Generator(call.integer_value(seed, "seed"))
        if isinstance(given, Generator):
            self._note_generator(call)
            return given
        if given is not None:
            raise call.bad("generator")
        self._note_generator(call)
        return self.default_generator

    def _note_generator(self, call: _Call) -> None:
        if self.noted_generator:
            return
        self.noted_generator = True
        line, column = self.lines.position(call.node.start)
        message = msg("warning.tensor.generator")
        self.warnings.append(
            {
                "type": "skipped",
                "message": msg("warning.on_line", line=line, message=message),
                "line": line,
                "column": column,
            }
        )


class _Bound(NamedTuple):
    owner: object
    name: str
    node: Node


def _arithmetic(op: str, a: float, b: float, program: _Program, node: Node) -> float:
    """Numbers with numbers (`block_size * n_embd`): Python's arithmetic."""
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "**":
            return a**b
    except (ZeroDivisionError, OverflowError):
        pass
    key = "error.tensor.matmul_numbers" if op == "@" else "error.tensor.numbers"
    raise SyntaxError_(
        msg(key, text=short(program.text(node))), program.source,
        node.op_start, node.op_end,
    )  # fmt: skip


class _Call:
    """A call's evaluated arguments, with the node for positions."""

    def __init__(
        self, program: _Program, node: Node, args: list[object], keywords: dict[str, object]
    ) -> None:
        self.program = program
        self.node = node
        self.args = args
        self.keywords = keywords
        self.self_: Tensor | None = None
        self.name = program.text(node.args[0])

    @property
    def what(self) -> str:
        """The call as the program writes it, short: what a bound's message names."""
        return short(self.program.text(self.node))

    def with_self(self, owner: Tensor) -> _Call:
        self.self_ = owner
        return self

    @property
    def ops(self) -> TensorOps:
        callee = self.node.args[0]
        caret = (callee.op_start, callee.op_end) if callee.kind == "attr" else None
        return self.program.ops.at((self.node.start, self.node.end), caret)

    def bad(self, what: str) -> ArgumentCount:
        return ArgumentCount(
            msg("error.tensor.arguments", call=short(self.name), what=what),
            self.program.source, self.node.start, self.node.end,
        )  # fmt: skip

    def get(self, position: int, keyword: str, default: object = ...) -> object:
        if position < len(self.args):
            return self.args[position]
        if keyword in self.keywords:
            return self.keywords[keyword]
        if default is ...:
            raise self.bad(keyword)
        return default

    def tensor(self, position: int, keyword: str) -> Tensor:
        value = self.get(position, keyword)
        if isinstance(value, MaxResult):
            return value.values
        if not isinstance(value, Tensor):
            raise self.bad(keyword)
        return value

    def floats(self, position: int, keyword: str) -> Tensor:
        return self.program.floats(self.tensor(position, keyword))

    def integer(self, position: int, keyword: str, default: object = ...) -> int:
        return self.integer_value(self.get(position, keyword, default), keyword)

    def integer_value(self, value: object, keyword: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.bad(keyword)
        return value

    def optional_dim(self, position: int) -> int | None:
        dim = self.get(position, "dim", None)
        return None if dim is None else self.integer_value(dim, "dim")

    def keepdim(self, position: int) -> bool:
        """`keepdim=True` (NumPy's `keepdims=True` too, as makemore's notebook writes it)."""
        if "keepdims" in self.keywords:
            return bool(self.keywords["keepdims"])
        return bool(self.get(position, "keepdim", False))

    def sizes(self, start: int = 0, lowest: int = 0) -> Shape:
        """Sizes written `f(3, 2)`, `f((3, 2))` or `f(size=(3, 2))`, each at least `lowest`
        (a view's may be -1: the size that fits)."""
        given: object = self.args[start:]
        if len(self.args) == start + 1 and isinstance(self.args[start], list | tuple):
            given = self.args[start]
        elif not self.args[start:] and "size" in self.keywords:
            given = self.keywords["size"]
        sizes = _sizes(given)
        if sizes is None:
            raise self.bad("size")
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= lowest for s in sizes):
            raise self.bad("size")
        return tuple(sizes)


# ---- The functions a program calls ----------------------------------------------------------


def _literal(call: _Call) -> Tensor:
    """`tensor([[1.0, 2.0], [3.0, -1.0]])`: a leaf (float numbers) or an integer tensor."""
    data = call.get(0, "data")
    shape: list[int] = []
    probe = data
    while isinstance(probe, list):
        shape.append(len(probe))
        probe = probe[0] if probe else None
    flat: list[object] = []

    def walk(item: object, depth: int) -> None:
        if depth == len(shape):
            if (
                isinstance(item, list)
                or isinstance(item, bool)
                or not isinstance(item, int | float)
            ):
                raise call.bad("data")
            flat.append(item)
            return
        if not isinstance(item, list) or len(item) != shape[depth]:
            size = len(item) if isinstance(item, list) else 0
            raise call.ops.shape_error("error.tensor.ragged", a=str(shape[depth]), b=str(size))
        for child in item:
            walk(child, depth + 1)

    walk(data, 0)
    ops = call.ops
    if all(isinstance(x, int) for x in flat) and call.keywords.get("dtype") is None:
        return ops.integers(tuple(shape), flat, what=call.what)  # type: ignore[arg-type]
    return ops.leaf(tuple(shape), [float(x) for x in flat], what=call.what)  # type: ignore[arg-type]


def _sizes(given: object) -> tuple[int, ...] | None:
    """Sizes as a program writes them: a tuple or list of ints, or one int; None for any other
    value."""
    if isinstance(given, int) and not isinstance(given, bool):
        return (given,)
    if not isinstance(given, list | tuple):
        return None
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in given):
        return None
    return tuple(given)


def _randn(call: _Call) -> Tensor:
    shape = call.sizes()
    call.ops.fits(shape, call.what)
    generator = call.program.generator(call)
    numbers = [generator.normal() for _ in range(numel(shape))]
    return call.ops.leaf(shape, numbers, what=call.what)


def _filled(number: float) -> Callable[[_Call], Tensor]:
    def make(call: _Call) -> Tensor:
        shape = call.sizes()
        call.ops.fits(shape, call.what)
        return call.ops.leaf(shape, [number] * numel(shape), what=call.what)

    return make


def _randint(call: _Call) -> Tensor:
    low, high = call.integer(0, "low"), call.integer(1, "high")
    shape = _sizes(call.get(2, "size"))
    if shape is None:
        raise call.bad("size")
    if high <= low or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise call.bad("size" if high > low else "high")
    call.ops.fits(shape, call.what)
    generator = call.program.generator(call)
    numbers = [generator.integer(low, high) for _ in range(numel(shape))]
    return call.ops.integers(shape, numbers, what=call.what)


def _arange(call: _Call) -> Tensor:
    bounds = [call.integer(i, "end") for i in range(len(call.args))]
    if not 1 <= len(bounds) <= 2:
        raise call.bad("end")
    numbers = range(*bounds)
    call.ops.fits((len(numbers),), call.what)
    return call.ops.integers((len(numbers),), list(numbers), what=call.what)


def _range(call: _Call) -> list[int]:
    bounds = [call.integer(i, "stop") for i in range(len(call.args))]
    if not 1 <= len(bounds) <= 2:
        raise call.bad("stop")
    numbers = range(*bounds)
    call.ops.fits((len(numbers),), call.what)
    return list(numbers)


def _generator(call: _Call) -> Generator:
    return Generator(DEFAULT_SEED)


def _manual_seed(call: _Call) -> None:
    call.program.default_generator.manual_seed(call.integer(0, "seed"))


def _elementwise(key: str) -> Callable[[_Call], Tensor]:
    def apply(call: _Call) -> Tensor:
        x = call.self_ if call.self_ is not None else call.floats(0, "input")
        return call.ops.function(key, call.program.floats(x), key)

    return apply


def _reduction(op: str) -> Callable[[_Call], object]:
    def reduce(call: _Call) -> object:
        offset = 0 if call.self_ is not None else 1
        x = call.self_ if call.self_ is not None else call.floats(0, "input")
        x = call.program.floats(x)
        dim = call.optional_dim(offset)
        ops = call.ops
        if dim is not None:
            dim = normal_dim(dim, len(x.shape), call.program.source, ops.caret, x.shape)
        made = ops.reduce(op, x, dim, call.keepdim(offset + 1), op)
        if op == "max" and dim is not None:
            argmax = made.args["argmax"]
            indices = call.ops.integers(made.shape, list(argmax))  # type: ignore[arg-type]
            return MaxResult(made, indices)
        return made

    return reduce


def _spread(root: bool) -> Callable[[_Call], Tensor]:
    """`x.var(dim, keepdim=False)` (`std`: its `** 0.5`), as batch norm writes it: made of the
    ops above, each its own tensor (the mean, `x − mean`, its square, their sum, `/ (n − 1)`),
    so the backward pass shows every step. PyTorch's default divides by n − 1
    (`unbiased=False` or `correction=0`: by n)."""

    def spread(call: _Call) -> Tensor:
        offset = 0 if call.self_ is not None else 1
        x = call.self_ if call.self_ is not None else call.floats(0, "input")
        x = call.program.floats(x)
        dim = call.optional_dim(offset)
        ops = call.ops
        if dim is not None:
            dim = normal_dim(dim, len(x.shape), call.program.source, ops.caret, x.shape)
        keepdim = call.keepdim(offset + 1)
        biased = call.keywords.get("unbiased") is False or call.keywords.get("correction") == 0
        count = numel(x.shape) if dim is None else x.shape[dim]
        mean = ops.reduce("mean", x, dim, True, "mean")
        centred = ops.binary("-", x, mean, "-")
        squares = ops.binary("**", centred, 2.0, "**")
        total = ops.reduce("sum", squares, dim, keepdim, "sum")
        variance = ops.binary("/", total, float(count if biased else count - 1), "/")
        return ops.binary("**", variance, 0.5, "**") if root else variance

    return spread


def _transpose(call: _Call) -> Tensor:
    offset = 0 if call.self_ is not None else 1
    x = call.self_ if call.self_ is not None else call.tensor(0, "input")
    return call.ops.transpose(x, call.integer(offset, "dim0"), call.integer(offset + 1, "dim1"))


def _t(call: _Call) -> Tensor:
    x = call.self_ if call.self_ is not None else call.tensor(0, "input")
    return call.ops.transpose(x, 0, -1 if len(x.shape) > 1 else 0)


def _view(call: _Call) -> Tensor:
    if call.self_ is not None:
        return call.ops.view(call.self_, call.sizes(0, -1), "view")
    x = call.tensor(0, "input")
    return call.ops.view(x, call.sizes(1, -1), "reshape")


def _same(call: _Call) -> Tensor:
    """`.float()`, `.double()`, `.requires_grad_()`: the tensor itself (every float tensor has a
    gradient here; an integer tensor becomes a float one)."""
    x = call.self_
    assert x is not None
    return call.program.floats(x) if call.name.endswith(("float", "double")) else x


def _backward(call: _Call) -> None:
    call.program.backward_of = call.self_
    return None


def _nothing(call: _Call) -> None:
    return None


def _one_hot(call: _Call) -> Tensor:
    y = call.tensor(0, "input")
    if not y.is_int:
        raise call.bad("input")
    classes = call.integer(1, "num_classes", max(y.ints or [0]) + 1)
    return call.ops.one_hot(y, classes)


def _softmax(log: bool) -> Callable[[_Call], Tensor]:
    def apply(call: _Call) -> Tensor:
        offset = 0 if call.self_ is not None else 1
        x = call.self_ if call.self_ is not None else call.floats(0, "input")
        dim = call.integer(offset, "dim")
        return call.ops.softmax(
            call.program.floats(x), dim, log, "log_softmax" if log else "softmax"
        )

    return apply


def _cross_entropy(call: _Call) -> Tensor:
    logits, targets = call.floats(0, "input"), call.tensor(1, "target")
    if not targets.is_int:
        raise call.bad("target")
    return call.ops.cross_entropy(logits, targets, "cross_entropy")


def _tensor_list(call: _Call) -> list[Tensor]:
    """The first argument of `cat` and `stack`: a list (or tuple) of float tensors."""
    given = call.get(0, "tensors")
    if not isinstance(given, list | tuple) or not given:
        raise call.bad("tensors")
    tensors = []
    for item in given:
        if not isinstance(item, Tensor | MaxResult):
            raise call.bad("tensors")
        tensors.append(call.program.floats(item.values if isinstance(item, MaxResult) else item))
    return tensors


def _cat(call: _Call) -> Tensor:
    """`torch.cat([a, b], dim)`: the tensors side by side along `dim`."""
    return call.ops.cat(_tensor_list(call), call.integer(1, "dim", 0))


def _stack(call: _Call) -> Tensor:
    """`torch.stack([a, b], dim)`: tensors of one shape along a new dim."""
    return call.ops.stack(_tensor_list(call), call.integer(1, "dim", 0))


def _matmul(call: _Call) -> Tensor:
    offset = 0 if call.self_ is not None else 1
    x = call.self_ if call.self_ is not None else call.floats(0, "input")
    return call.ops.matmul(call.program.floats(x), call.floats(offset, "other"))


def _size(call: _Call) -> object:
    x = call.self_
    assert x is not None
    if not call.args:
        return x.shape
    dim = normal_dim(call.integer(0, "dim"), len(x.shape), call.program.source, call.ops.caret,
                     x.shape)  # fmt: skip
    return x.shape[dim]


FUNCTIONS_OF_PROGRAMS: dict[str, Callable[[_Call], Any]] = {
    "tensor": _literal,
    "Tensor": _literal,
    "randn": _randn,
    "zeros": _filled(0.0),
    "ones": _filled(1.0),
    "randint": _randint,
    "arange": _arange,
    "range": _range,
    "Generator": _generator,
    "manual_seed": _manual_seed,
    "one_hot": _one_hot,
    "softmax": _softmax(False),
    "log_softmax": _softmax(True),
    "cross_entropy": _cross_entropy,
    "matmul": _matmul,
    "cat": _cat,
    "stack": _stack,
    "sum": _reduction("sum"),
    "mean": _reduction("mean"),
    "max": _reduction("max"),
    "var": _spread(False),
    "std": _spread(True),
    "transpose": _transpose,
    "t": _t,
    "reshape": _view,
    **{name: _elementwise(name) for name in FUNCTIONS},
}
METHODS: dict[str, Callable[[_Call], Any]] = {
    "view": _view,
    "reshape": _view,
    "sum": _reduction("sum"),
    "mean": _reduction("mean"),
    "max": _reduction("max"),
    "var": _spread(False),
    "std": _spread(True),
    "transpose": _transpose,
    "t": _t,
    "float": _same,
    "double": _same,
    "requires_grad_": _same,
    "backward": _backward,
    "retain_grad": _nothing,
    "softmax": _softmax(False),
    "log_softmax": _softmax(True),
    "matmul": _matmul,
    "size": _size,
    **{name: _elementwise(name) for name in FUNCTIONS},
}
