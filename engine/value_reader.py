"""A graph of `Value`s, read (never run) and written back as a program: micrograd's `Value`, a
learner's own or ours, so that `chainrule.trace_value(loss)` traces, explains and recomputes the
same graph with the engine.

A Value is read by its shape, not its spelling: an object with a numeric `data` whose children
(in whichever attribute of CHILDREN_ATTRIBUTES it keeps them: a set, a tuple or a list, with or
without `__slots__`) are objects of the same kind. Its op is the table's row its spelling names
(micrograd's `_op`, or the table's own keys) when it has one, else the row that computes the
node's data from its children's (`'sub'`, `'div'`, `'**2'`, no op at all): the numbers say which.
A node no row explains is an opaque node: a call of a function the program defines for it
(`unknown_max(p1, p2) = …`), with its children as arguments, holding its stored data, its local
derivatives what the code's own `_backward` gives at these numbers (the body is the tangent
there); said (`Program.unknown`), never a refusal of the whole graph.

A node whose stored `data` no longer follows from its children's (a training step moved the
leaves after the forward pass, or an op's forward is wrong) is found and said
(`Program.inconsistent`, with the leaves under the lowest such nodes: `Program.moved`): the
program is the graph at its leaves' current values, the warning tells the learner which leaves
moved (docs/python.md says why this and not the stored numbers).

micrograd keeps a node's children in a `set`: `a*a` and `a+a` have one child, and `draw_dot`
draws one edge where the product has two operands. The program says what the node computes
(`a * a`, two edges) and `Program.merged` names each such node, for a warning.

A set has no order, so the same code could give another program on every run. The reader puts
the two operands of a `+` or `*` in one order that depends only on the graph: the order the op's
own `_backward` closure names them (`self`, `other`: micrograd's and the lecture's `Value`), else
by label, else by a structural key (op, label, data and the operands' keys, hashed). One piece of
code gives one program, in a notebook and in the page's sandbox.

A node's `label` is kept: as its name where it is one, else set on the node's line
(`v1 = 2.0; v1.label = 'x 1'`, `x1_w1 = x1 * w1; x1_w1.label = 'x1*w1'`), which the dialect
reads. An operation used once is written inside its user's statement (one statement a neuron,
named where its parameters live: the page draws a statement as a group); `_Writer` says how.
"""

from __future__ import annotations

import ast
import functools
import gc
import hashlib
import keyword
import math
import os
import re
import string
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from types import (
    BuiltinFunctionType,
    CellType,
    CodeType,
    FunctionType,
    MethodType,
    ModuleType,
)
from typing import Any

from .gc_pause import cycle_collector_paused
from .i18n import Count, msg
from .lexer import line_tokens
from .ops import FORWARD, FUNCTIONS, MICROGRAD_OPS, OPS, SCRIPT_NAMES, apply, key_of
from .parser import Expr, Statement

POWER = re.compile(r"\*\*\s*(\S+)")
# A number in an op's spelling (`'**2'`, `'pow-1'`, `'^0.5'`): the exponent of a constant power.
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# Python's operators as the table's ops: method → (op, the position of the Value it is called
# on): what the reader takes an op spelled like the method (`'sub'`, `'div'`) to be, and what the
# autograd check calls on numbers to test a learner's class (sandbox/check.py).
OPERATOR_METHODS: dict[str, tuple[str, int]] = {
    "__add__": ("+", 0), "__radd__": ("+", 1), "__sub__": ("-", 0), "__rsub__": ("-", 1),
    "__mul__": ("*", 0), "__rmul__": ("*", 1), "__truediv__": ("/", 0), "__rtruediv__": ("/", 1),
    "__pow__": ("**k", 0), "__neg__": ("neg", 0),
}  # fmt: skip
# Where a Value-like object keeps its children, in the order they are looked for.
CHILDREN_ATTRIBUTES = ("_prev", "_children", "children", "prev", "_parents", "parents", "inputs")
# Where it keeps the name of its op (micrograd's `_op`); none at all is allowed.
OP_ATTRIBUTES = ("_op", "op", "_operation", "operation")
# Two numbers agree when they differ by rounding only (a tanh written with exp, a sum in another
# order): the autograd check's tolerance.
RELATIVE_TOLERANCE = 1e-7
ABSOLUTE_TOLERANCE = 1e-10
# Constant exponents tried when a one-input op's spelling names none (`x**2` spelled 'square').
LIKELY_EXPONENTS = (2.0, -1.0, 0.5, 3.0, -2.0, -0.5, 4.0)
# An unnamed node used once is written inline where it is used, so that one statement is what
# the code computed in one go (a neuron's `w·x + b` and its activation: the page draws a
# statement as one group); a statement longer than this, or nested deeper, is cut at a node
# that gets a line (and a name) of its own.
MAX_STATEMENT_CHARS = 1_500
MAX_INLINE_DEPTH = 32
# The operations inline one in another that `_Writer.read_back` reads back (a recursion each).
READ_BACK_DEPTH = 200
# How tightly each way of writing a node binds (an operand binding less is put in parentheses).
SUM, PRODUCT, NEGATIVE, POWER_PREC, ATOM = 1, 2, 3, 4, 5
# The word an unnamed node's generated name starts with (`sum1`, `tanh2`): its op's.
OP_WORDS = {"+": "sum", "*": "product", "-": "difference", "/": "quotient", "neg": "negative",
            "**k": "power", "**": "power"}  # fmt: skip
# A place's parts: `n`, `.layers`, `[0]`.
PLACE_PARTS = re.compile(r"^[^.\[]+|\.[^.\[]+|\[[^\]]*\]")
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
MAX_LISTED = 8  # the leaves a warning names before "…"
# How far the names of Values are looked for from the namespace (n.layers[0].neurons[1].w[0]
# is 7 steps), and how many objects at most: under each variable (a reply or a data set of
# 200,000 objects leaves the model's parameters named), under one where none of the first
# 20,000 was a Value (a kernel holding micrograd's demo's reply: 200,000 of its dicts looked at
# took 1.2-2.3 s of each `show()`), and in all.
MAX_PLACE_DEPTH = 8
MAX_PLACES = 200_000
MAX_PLACES_BEFORE_A_VALUE = 20_000
MAX_PLACES_IN_ALL = 1_000_000
HOLDS_NO_VALUES = (str, bytes, int, float, complex, type, ModuleType, FunctionType, MethodType,
                   BuiltinFunctionType)  # fmt: skip
# The exact types of HOLDS_NO_VALUES, and None's: the walk's quick test of each item it meets (a
# reply's node is 22 items, most of them numbers, strings and None).
NO_VALUE_TYPES = frozenset({*HOLDS_NO_VALUES, bool, type(None)})
# A node the program must name (used twice, or long) but the code did not is labelled with its
# expression, in the names its operands' cards show, while it stays this short; else it is
# named from where its parameters live (`n.layers[0].neurons[1]`) or by its op (`sum1`).
MAX_LABEL_CHARS = 24
# A card's name that needs no parentheses inside an expression: a name, a place, a number.
ATOMIC_LABEL = re.compile(r"[\w.\[\]']+")
# Names a program cannot give a leaf: the table's functions and what its scripts define.
RESERVED = frozenset((*FUNCTIONS, *SCRIPT_NAMES, "Value", "print"))


# The `_op` spellings the reader knows, in the table's order: what its messages list.
KNOWN_OPS = " ".join(MICROGRAD_OPS)


class NotAGraph(ValueError):
    """What was given is not a graph of Values, or holds what no program can say; `op` is the
    unknown op's spelling when that is why."""

    def __init__(self, message: str, op: str | None = None) -> None:
        super().__init__(message)
        self.message = message  # a catalogue sentence (Message): the sandbox says it in the page's
        self.op = op


class NotAValue(NotAGraph):
    """What was given (or a node's child) is no Value at all."""


class TooManyNodes(NotAGraph):
    """The graph has more nodes than the reader was asked to read."""


@dataclass
class Program:
    """A graph written as a program: `source`, the leaf `values` (exact, for sliders), the
    name each leaf got (in graph order), and the ops micrograd's set merged (`merged`:
    {name or text, operand, op})."""

    source: str
    values: dict[str, float]
    leaves: list[str]
    root: str
    merged: list[dict[str, Any]] = field(default_factory=list)
    # The graph read, in the reader's order (inputs first, the root last): each node's Value
    # and how the program writes it (its name, or its inline text), and its operands (indices).
    objects: list[Any] = field(default_factory=list, repr=False)
    texts: list[str] = field(default_factory=list, repr=False)
    inputs: list[list[int]] = field(default_factory=list, repr=False)
    ops: list[str | None] = field(default_factory=list, repr=False)  # each node's op (table key)
    exponents: list[float | None] = field(default_factory=list, repr=False)
    consts: list[bool] = field(default_factory=list, repr=False)
    # Nodes no row of the table explains, written as leaves: {node, op, data, line, children}.
    unknown: list[dict[str, Any]] = field(default_factory=list)
    # Each opaque node's local derivatives (node index → one per child), as its `_backward` gave.
    opaque: dict[int, list[float]] = field(default_factory=dict)
    # Nodes whose stored data does not follow from their operands': {node, line, stored,
    # follows}; and the leaves under the lowest of them (those that may have moved).
    inconsistent: list[dict[str, Any]] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    # The statements the parser reads in `source` and how deep they nest, as the writer knows
    # them (`program_of(…, statements=True)`; None where it cannot say): engine/tracing.py's
    # `written_parse` hands them to the builder instead of parsing the text again.
    parsed: tuple[tuple[Statement, ...], int] | None = field(default=None, repr=False)

    def written(self) -> Program:
        """The program without the graph it was read from (its Values and how each was written):
        what a widget keeps to trace it again (micrograd's demo: 65,818 Values, and the texts and
        operands of each, which would keep a graph the learner has since let go of alive)."""
        return replace(
            self, objects=[], texts=[], inputs=[], ops=[], exponents=[], consts=[], parsed=None
        )

    def warnings(self) -> list[dict[str, Any]]:
        """One warning per merged operand, per opaque node, and one for stored data that does
        not follow from the leaves, in the shape of the trace's warnings: each message a
        catalogue sentence (engine/i18n.py `Message`), said in the reader's language where the
        reply is written (`said`)."""
        return [*self._merged_warnings(), *self._unknown_warnings(), *self._stale_warnings()]

    def _unknown_warnings(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "unknown_op",
                "message": msg(
                    "warning.reader.unknown_op",
                    node=u["node"],
                    op=repr(u["op"]),
                    ops=KNOWN_OPS,
                    data=repr(u["data"]),
                    children=", ".join(u["children"]),
                    function=u["function"],
                    locals=", ".join(map(repr, u["locals"])),
                ),
                "line": u["line"],
                "column": 1,
            }
            for u in self.unknown
        ]

    def _stale_warnings(self) -> list[dict[str, Any]]:
        if not self.inconsistent:
            return []
        first = self.inconsistent[0]
        moved = ", ".join(self.moved[:MAX_LISTED]) + (" …" if len(self.moved) > MAX_LISTED else "")
        return [
            {
                "type": "stale_graph",
                "message": msg(
                    "warning.reader.stale_graph",
                    count=Count(len(self.inconsistent)),
                    node=first["node"],
                    stored=repr(first["stored"]),
                    follows=repr(first["follows"]),
                    moved=moved,
                ),
                "line": first["line"],
                "column": 1,
            }
        ]

    def _merged_warnings(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "merged_operand",
                "message": msg(
                    "warning.reader.merged_operand",
                    node=m["node"],
                    operand=m["operand"],
                    op=m["op"],
                ),
                "line": m["line"],
                "column": 1,
            }
            for m in self.merged
        ]


@dataclass(slots=True)
class _Node:
    data: float
    op: str | None  # our op key ("**k" for a constant power), None for a leaf
    inputs: list[int]  # indices into the node list, in operand order
    exponent: float | None
    label: str
    merged: bool = False
    const: bool = False  # a constant (written inline): ours, or a number an operator wrapped
    unknown: str | None = None  # the spelling of an op no row explains (an opaque node)
    children: list[int] = field(default_factory=list)  # as the Value keeps them
    # An opaque node's local derivatives, one per child, as its `_backward` gives them.
    measured: list[float] = field(default_factory=list)
    ours: bool = False  # a chainrule Value (`_is_ours`), asked once a node
    container: int | None = (
        None  # id() of the set, list or tuple a Value of others keeps its children in
    )


def _is_ours(value: Any) -> bool:
    return isinstance(getattr(value, "local_grads", None), (tuple, list)) and hasattr(
        value, "inputs"
    )


def _children_attribute(value: Any) -> str | None:
    """The attribute in which `value` keeps its children (a set, tuple or list), or None."""
    for name in CHILDREN_ATTRIBUTES:
        try:
            children = getattr(value, name, None)
        except Exception:  # noqa: BLE001 - an attribute that raises is no children
            continue
        if isinstance(children, (set, frozenset, tuple, list)):
            return name
    return None


def is_value(obj: Any) -> bool:
    """Whether `obj` is a node of a Value graph by its shape (module docstring): micrograd's,
    the lecture's, a learner's or ours."""
    if isinstance(obj, (type, ModuleType, str, bytes, int, float, complex, list, tuple, dict)):
        return False
    try:
        if _is_ours(obj):
            return True
        data = getattr(obj, "data", None)
        return isinstance(data, (int, float)) and _children_attribute(obj) is not None
    except Exception:  # noqa: BLE001 - an object whose attributes raise is no Value
        return False


def children_of(value: Any) -> list[Any]:
    """`value`'s children as it keeps them (in no particular order where it keeps a set)."""
    if _is_ours(value):
        return list(value.inputs)
    name = _children_attribute(value)
    return list(getattr(value, name)) if name else []


def nodes_under(root: Any) -> list[Any]:
    """Every Value under `root` (itself included), without recursion."""
    seen: dict[int, Any] = {}
    stack = [root]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen[id(value)] = value
        stack.extend(child for child in children_of(value) if id(child) not in seen)
    return list(seen.values())


def spelled_op(value: Any) -> str:
    """The op as `value` names it (micrograd's `_op`), or '' when it names none."""
    if _is_ours(value):
        return value.op or ""
    return _spelled_by_others(value)


def _spelled_by_others(value: Any) -> str:
    """`spelled_op` of a Value that is not ours."""
    for name in OP_ATTRIBUTES:
        spelled = getattr(value, name, None)
        if isinstance(spelled, str):
            return spelled
    return ""


def _raw_children(value: Any) -> list[Any]:
    return _read_children(value, _is_ours(value))[0]


def _unordered(value: Any) -> bool:
    """Whether `value`'s children come in no particular order (micrograd's `set`)."""
    if _is_ours(value):
        return False
    return not isinstance(getattr(value, _children_attribute(value) or "", None), (list, tuple))


def near(x: float, y: float) -> bool:
    """Whether two numbers agree but for rounding (NaN agrees with NaN, inf with itself)."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= ABSOLUTE_TOLERANCE + RELATIVE_TOLERANCE * max(abs(x), abs(y))


@functools.lru_cache(maxsize=256)
def _operand_cells(code: CodeType) -> tuple[int, int] | None:
    """Where the closure of a `_backward` of `code` keeps `self` and `other` (micrograd's
    `__add__`/`__mul__` and the lecture's: a few code objects for a whole graph), or None."""
    names = code.co_freevars
    if "self" not in names or "other" not in names:
        return None
    return names.index("self"), names.index("other")


def _closure_order(value: Any, children: list[Any]) -> list[Any] | None:
    """The two operands in the order `value._backward` names them (`self`, then `other`), when
    its closure holds exactly `children`: micrograd's `__add__`/`__mul__` and the lecture's."""
    backward = getattr(value, "_backward", None)
    code, cells = getattr(backward, "__code__", None), getattr(backward, "__closure__", None)
    if not isinstance(code, CodeType) or not cells:
        return None
    slots = _operand_cells(code)
    if slots is None or max(slots) >= len(cells):
        return None
    try:
        first, second = cells[slots[0]].cell_contents, cells[slots[1]].cell_contents
    except ValueError:  # an empty cell
        return None
    if len(children) != 2:
        return None
    one, two = children
    if not ((first is one and second is two) or (first is two and second is one)):
        return None
    return [first, second]


def _structural_keys(root: Any) -> dict[int, str]:
    """A key per node (by id) from what it is, not where it sits in memory: op, label, data and
    its operands' keys (sorted where the operands are a set), hashed; without recursion."""
    keys: dict[int, str] = {}
    seen: set[int] = set()  # expanded; one seen again before its key is made is on a cycle
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        value, expanded = stack.pop()
        if id(value) in keys:
            continue
        children = _raw_children(value)
        if not expanded:
            if id(value) in seen:
                continue  # a cycle: _graph says so
            seen.add(id(value))
            stack.append((value, True))
            stack.extend((child, False) for child in children if id(child) not in keys)
            continue
        operands = [keys.get(id(child), "") for child in children]
        if _unordered(value):
            operands.sort()
        op = spelled_op(value)
        text = f"{op}|{getattr(value, 'label', '')}|{value.data!r}|{','.join(operands)}"
        keys[id(value)] = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    return keys


def _read_children(value: Any, ours: bool) -> tuple[list[Any], Any]:
    """`value`'s children as it keeps them and the container it keeps them in (None for ours)."""
    if ours:
        return list(value.inputs), None
    name = _children_attribute(value)
    if name is None or not hasattr(value, "data"):
        raise NotAValue(
            msg(
                "error.reader.not_a_value",
                type=type(value).__name__,
                attributes=", ".join(CHILDREN_ATTRIBUTES),
            )
        )
    container = getattr(value, name)
    return list(container), container


def _children(
    value: Any, keys_of: Callable[[], dict[int, str]], ours: bool
) -> tuple[list[Any], Any, bool]:
    """`value`'s operands in the program's order (module docstring), the container it keeps
    them in (None for ours) and whether they come in no particular order (micrograd's `set`);
    `keys_of()`: the graph's structural keys (made the first time a set's order is not its
    closure's)."""
    children, container = _read_children(value, ours)
    unordered = container is not None and not isinstance(container, (list, tuple))
    if len(children) < 2 or not unordered:
        return children, container, unordered
    if (ordered := _closure_order(value, children)) is not None:
        return ordered, container, unordered
    keys = keys_of()

    def canonical(child: Any) -> tuple[bool, str, str]:
        label = str(getattr(child, "label", "") or "")
        return (not label, label, keys.get(id(child), ""))

    return sorted(children, key=canonical), container, unordered


def _describe(
    value: Any,
    inputs: list[int],
    data: float,
    nodes: list[_Node],
    ours: bool,
    spelled: str,
    unordered: bool,
) -> tuple[str | None, float | None, list[int], bool]:
    """(our op, constant exponent, operands in order, merged) of `value` whose children are
    `inputs` (kept `unordered` or not), its op as it spells it `spelled`; op None and operands
    [] for a leaf or a node no row of the table explains."""
    if ours:
        if value.op is None:
            return None, None, [], False
        return key_of(value.op, value.exponent), value.exponent, inputs, False
    if not inputs:
        return None, None, [], False
    named = _named_op(spelled, len(inputs))
    if named is not None:
        op, exponent = named
        arity = OPS[op].arity
        if arity == 2 and len(inputs) == 1:
            return op, None, inputs * 2, True  # micrograd's set merged the operand: a + a, a * a
        if arity == len(inputs):
            return op, exponent, inputs, False
    found = _op_from_numbers(spelled, [nodes[j].data for j in inputs], data, unordered)
    if found is None:
        return None, None, [], False
    op, exponent, order = found
    operands = [inputs[k] for k in order]
    return op, exponent, operands, len(operands) > len(inputs)


@functools.lru_cache(maxsize=1024)
def _named_op(spelled: str, count: int) -> tuple[str, float | None] | None:
    """The table's op (and constant exponent) a spelling names: micrograd's `_op` names, the
    table's own keys (`'-'`, `'/'`, `'neg'`), `'**k'` with a number; else None. Read once a
    spelling and count (a graph spells a few)."""
    if power := POWER.fullmatch(spelled):
        try:
            return "**k", float(power.group(1))
        except ValueError:
            return None
    op = MICROGRAD_OPS.get(spelled)
    if op is None and spelled in OPS and spelled != "**k":
        op = spelled
    if op is None:
        return None
    if op == "**" and count == 1:  # micrograd spells a constant power '**2'; '**' alone: none
        return None
    return op, None


def _op_from_numbers(
    spelled: str, inputs: list[float], data: float, unordered: bool
) -> tuple[str, float | None, list[int]] | None:
    """The row of the table (and constant exponent, and the operands' order as indices into
    `inputs`) that computes `data` from `inputs`: the first that does, the rows whose spellings
    resemble `spelled` first; None when none does."""
    hint = spelled.strip().lower()

    def resembles(key: str) -> bool:
        row = OPS[key]
        names = {
            key,
            row.public,
            row.symbol,
            row.dot,
            row.glyph,
            *row.micrograd_ops,
            *(method.strip("_") for method, (op, _) in OPERATOR_METHODS.items() if op == key),
        }
        return bool(hint) and any(
            hint == n.lower() or hint.startswith(n.lower()) or
            (len(hint) >= 3 and n.lower().endswith(hint))
            for n in names if n
        )  # fmt: skip

    keys = sorted(OPS, key=lambda key: not resembles(key))  # stable: the table's order next
    if len(inputs) == 1:  # one input; else a binary op whose set merged its operand (a * a)
        tries = [(key, [0]) for key in keys] + [(key, [0, 0]) for key in keys]
    else:
        orders = [list(range(len(inputs)))]
        if unordered and len(inputs) == 2:
            orders.append([1, 0])
        tries = [(key, order) for key in keys for order in orders]
    for key, order in tries:
        if OPS[key].arity != len(order):
            continue
        operands = [inputs[k] for k in order]
        for exponent in _exponents(key, spelled, operands, data):
            if near(apply(key, operands, exponent or 0.0)[0], data):
                return key, exponent, order
    return None


def _exponents(key: str, spelled: str, operands: list[float], data: float) -> list[float | None]:
    """The constant exponents to try for op `key`: none but for `**k`, where a number in the
    spelling is the one, else the likely ones and the one the numbers give."""
    if key != "**k":
        return [None]
    if number := NUMBER.search(spelled):
        return [float(number.group())]
    tries: list[float | None] = list(LIKELY_EXPONENTS)
    base = operands[0]
    if base > 0 and base != 1 and data > 0:
        tries.append(math.log(data) / math.log(base))
    return tries


def _graph(root: Any, max_nodes: int | None = None) -> tuple[list[_Node], list[Any]]:
    """The nodes under `root` in a topological order (inputs first), without recursion, and
    their Values in the same order."""
    index: dict[int, int] = {}
    nodes: list[_Node] = []
    keep: list[Any] = []  # the objects themselves, so no id() is reused while we read
    keys: list[dict[int, str]] = []  # the structural keys, made once a set needs them

    def keys_of() -> dict[int, str]:
        if not keys:
            keys.append(_structural_keys(root))
        return keys[0]

    # (a Value, its operands once read, its container, unordered, ours): each Value's own
    # attributes are asked once, when it is first met.
    stack: list[tuple[Any, list[Any] | None, Any, bool, bool]] = [(root, None, None, False, False)]
    on_path: set[int] = set()
    while stack:
        value, children, container, unordered, ours = stack.pop()
        key = id(value)
        if children is None:
            if key in index:
                continue
            if key in on_path:
                raise NotAGraph(msg("error.reader.cycle"))
            if max_nodes is not None and len(index) + len(on_path) >= max_nodes:
                raise TooManyNodes(msg("error.reader.too_many_nodes", limit=Count(max_nodes)))
            ours = _is_ours(value)
            children, container, unordered = _children(value, keys_of, ours)
            on_path.add(key)
            stack.append((value, children, container, unordered, ours))
            stack.extend(
                [
                    (child, None, None, False, False)
                    for child in children[::-1]
                    if id(child) not in index
                ]
            )
            continue
        on_path.discard(key)
        if key in index:
            continue
        children_at = [index[id(child)] for child in children]
        try:
            data = float(value.data)
        except (TypeError, ValueError) as error:
            raise NotAGraph(msg("error.reader.data_not_number", data=repr(value.data))) from error
        spelled = (value.op or "") if ours else _spelled_by_others(value)
        op, exponent, inputs, merged = _describe(
            value, children_at, data, nodes, ours, spelled, unordered
        )
        label = getattr(value, "label", "") or ""
        const = ours and getattr(value, "kind", "") == "const"
        unknown = spelled if children_at and op is None else None
        if unknown is not None:
            inputs = children_at  # drawn with its children, its derivatives measured
        node = _Node(data, op, inputs, exponent, str(label), merged, const, unknown, children_at)
        node.ours, node.container = ours, None if container is None else id(container)
        nodes.append(node)
        if unknown is not None:
            node.measured = _measured_locals(value, children)
        index[key] = len(nodes) - 1
        keep.append(value)
    return nodes, keep


def _measured_locals(value: Any, children: list[Any]) -> list[float]:
    """What `value._backward` passes each child for an upstream gradient of 1 (its local
    derivatives at these numbers): the code's own rule for an op chainrule does not know. Every
    grad it touches is put back; 0 where it has none, raises, or gives no finite number."""
    backward = getattr(value, "_backward", None)
    touched = list({id(node): node for node in (value, *children)}.values())
    try:
        saved = [node.grad for node in touched]
    except AttributeError:
        return [0.0] * len(children)
    measured = [0.0] * len(children)
    try:
        for node in touched:
            node.grad = 0.0
        value.grad = 1.0
        if callable(backward):
            backward()
            # A child that is the node itself (none in a DAG) or given twice shares one grad.
            measured = [float(child.grad) if child is not value else 0.0 for child in children]
    except Exception:  # noqa: BLE001 - a rule that fails measures nothing
        measured = [0.0] * len(children)
    finally:
        for node, grad in zip(touched, saved, strict=True):
            node.grad = grad
    return [g if math.isfinite(g) else 0.0 for g in measured]


def _usable(label: str, taken: set[str]) -> bool:
    if not label.isidentifier() or keyword.iskeyword(label) or label in RESERVED:
        return False
    if label in taken or not label.isascii():
        return False
    tokens = line_tokens(label, 0, len(label))  # token by token: a name alone is a `line` token
    return len(tokens) >= 1 and tokens[0].kind == "name" and tokens[0].text == label


def _number(x: float) -> str:
    return repr(float(x))


def _label_literal(label: str) -> str | None:
    """A label as the quoted text a program's `x.label = '…'` line takes, or None for one the
    reader would not read back (a backslash, a line break, both kinds of quote)."""
    if not label or "\\" in label or not label.isprintable():
        return None
    if "'" not in label:
        return f"'{label}'"
    return None if '"' in label else f'"{label}"'


def places_in(namespace: Mapping[str, Any], exclude: Collection[str] = ()) -> dict[int, str]:
    """{id(value): where it lives} for every Value `namespace` (a notebook's or the sandbox's
    variables) reaches: a variable (but those in `exclude`, a loop's), else the shortest path
    through lists, tuples, dicts and objects' attributes (`n.layers[0].neurons[1].w[0]`), the
    first found in the namespace's order: the same code gives the same names. `program_of`
    takes it as `names`."""
    with cycle_collector_paused():  # the walk's parts are many new objects, none in a cycle
        return _places(namespace, exclude)


def _places(namespace: Mapping[str, Any], exclude: Collection[str]) -> dict[int, str]:
    places: dict[int, str] = {}
    seen: set[int] = set()
    # The objects looked at under each variable, and how many it may have looked at: one holding
    # a big reply or data set (a kernel's `trace = chainrule.trace_value(loss)`) uses up its own
    # share, not the model's, and a small one until a Value is found under it.
    looked = {name: 0 for name in namespace}
    share = dict.fromkeys(namespace, MAX_PLACES_BEFORE_A_VALUE)
    # Each level is the parts of the containers of the one above, a container's at a time (its
    # variable, then its parts, made as they are looked at): a variable that has used up its
    # share leaves the rest of a container's unmade.
    level: list[tuple[str, Iterator[tuple[_Place, Any]]]] = [
        (name, iter([(name, value)]))
        for name, value in namespace.items()
        if not name.startswith("_") and name not in exclude
    ]
    for _depth in range(MAX_PLACE_DEPTH):
        deeper: list[tuple[str, Iterator[tuple[_Place, Any]]]] = []
        for variable, parts in level:
            try:
                _look(parts, variable, deeper, places, seen, looked, share)
            except Exception:  # noqa: BLE001 - a container whose parts raise names nothing more
                continue
        level = deeper
    return places


def _look(
    parts: Iterator[tuple[_Place, Any]],
    variable: str,
    deeper: list[tuple[str, Iterator[tuple[_Place, Any]]]],
    places: dict[int, str],
    seen: set[int],
    looked: dict[str, int],
    share: dict[str, int],
) -> None:
    """One container's parts looked at (`places_in`), under `variable`'s share: each Value's
    place kept, each other object's parts queued in `deeper`."""
    for place, obj in parts:
        if looked[variable] >= share[variable] or len(seen) >= MAX_PLACES_IN_ALL:
            return
        # A number or a string holds no Value: it costs none of the objects looked at (a kernel's
        # namespace holds replies and data sets full of them).
        if isinstance(obj, HOLDS_NO_VALUES) or id(obj) in seen:
            continue
        seen.add(id(obj))
        looked[variable] += 1
        if is_value(obj):
            places.setdefault(id(obj), _path(place))
            share[variable] = MAX_PLACES
            continue
        try:
            deeper.append((variable, _parts(place, obj)))
        except Exception:  # noqa: BLE001 - an object whose attributes raise names nothing
            continue


# Where the walk of `places_in` found an object: a variable's name, or (where its container was,
# a key or an index, whether it is an attribute). Its path (`n.layers[0]`) is written only for a
# Value found there: a kernel holding a reply has the walk look at 200,000 dicts, and writing
# each of their items' paths took 2 s of every `show()`.
_Place = str | tuple[Any, Any, bool]


def _path(place: _Place) -> str:
    """The path a place stands for: `n.layers[0].neurons[1].w[0]`."""
    steps: list[str] = []
    while isinstance(place, tuple):
        place, key, attribute = place
        steps.append(f".{key}" if attribute else f"[{key!r}]")
    steps.append(place)
    return "".join(reversed(steps))


def loop_targets(code: str) -> set[str]:
    """The names a `for` of `code`'s top level binds (its loop variables: the `p` of
    `for p in n.parameters()` holds a parameter by chance, it names none); a function's or a
    class's own loops bind their locals. Code that does not parse binds none."""
    try:
        statements = list(ast.parse(code).body)
    except SyntaxError:
        return set()
    names: set[str] = set()
    while statements:
        statement = statements.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            names.update(n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name))
        for block in ("body", "orelse", "finalbody", "handlers"):
            statements.extend(getattr(statement, block, ()))
    return names


def _parts(place: _Place, obj: Any) -> Iterator[tuple[_Place, Any]]:
    """The places inside `obj` (a list's items, a dict's values, an object's attributes), each
    with its place, a list's and a dict's made as they are asked for (the first MAX_PLACES of
    them: a list of ten million numbers is not read through); none for modules, classes,
    functions and other objects that hold no data. An item of a type that holds no Value
    (`NO_VALUE_TYPES`) is left out here, a subclass of one where `places_in` looks at it."""
    if isinstance(obj, (list, tuple)):
        return (((place, i, False), item) for i, item in enumerate(islice(obj, MAX_PLACES))
                if type(item) not in NO_VALUE_TYPES)  # fmt: skip
    if isinstance(obj, dict):
        # A copy of the items: the dict may change before its last part is asked for.
        return (((place, key, False), item) for key, item in list(islice(obj.items(), MAX_PLACES))
                if type(item) not in NO_VALUE_TYPES and isinstance(key, (str, int)))  # fmt: skip
    if isinstance(obj, HOLDS_NO_VALUES):
        return iter(())
    attributes = getattr(obj, "__dict__", None)
    items = list(attributes.items()) if isinstance(attributes, dict) else []
    for slot in getattr(type(obj), "__slots__", ()):
        if isinstance(slot, str) and hasattr(obj, slot):
            items.append((slot, getattr(obj, slot)))
    return iter([((place, name, True), item) for name, item in items if not name.startswith("_")])


@functools.lru_cache(maxsize=1 << 12)
def identifier_of(path: str) -> str:
    """A program's name for a place a Value lives (`n.layers[0].w[1]` → `n_layers0_w1`): asked
    again for each sample's pass through a neuron, read once."""
    name = re.sub(r"\[(\w+)\]", r"\1", path)
    name = re.sub(r"\W+", "_", name).strip("_")
    return name if name and not name[0].isdigit() else f"v_{name}"


def _names(
    nodes: list[_Node], objects: list[Any], hints: Mapping[int, str] | None
) -> tuple[list[str | None], set[str]]:
    """The name of each node that has one: its label where that is a usable name, else the name
    `hints` gives its Value (a variable holding it, or the place it lives: `n.layers[0].w[1]`,
    named `n_layers0_w1` and labelled with the place), first come first served in graph order,
    so a generated name never takes a label's place."""
    taken: set[str] = set()
    names: list[str | None] = [None] * len(nodes)
    for i, node in enumerate(nodes):
        if (node.op is not None or not node.const) and _usable(node.label, taken):
            names[i] = node.label
            taken.add(node.label)
    for i, node in enumerate(nodes):
        hint = hints.get(id(objects[i])) if hints else None
        if names[i] is not None or node.const or not hint:
            continue
        name = hint if hint.isidentifier() else identifier_of(hint)
        if _usable(name, taken):
            names[i] = name
            taken.add(name)
            if name != hint and not node.label:
                node.label = hint
    return names, taken


def program_of(
    root: Any,
    names: Mapping[int, str] | None = None,
    max_nodes: int | None = None,
    constants: Collection[int] | None = None,
    statements: bool = False,
) -> Program:
    """The program that builds the graph ending in `root` (a micrograd or chainrule Value).
    `names` ({id(value): name or place}, e.g. the variables of the code that built it) names
    the nodes whose label is no name; `constants` (ids) are leaves to write as numbers (a
    number an operator wrapped in a Value; by default, `wrapped_numbers`' leaves); more than
    `max_nodes` nodes raise TooManyNodes; with `statements`, the program's `parsed` are the
    statements the parser would read in it (a tracer's, `_Writer.statements`). The cycle
    collector is paused while it reads: a graph's nodes are hundreds of thousands of new
    objects (micrograd's demo: 2.4 -> 1.5 s)."""
    with cycle_collector_paused():
        nodes, objects = _graph(root, max_nodes)
        if constants is None:
            constants = wrapped_numbers(objects, nodes)
        # An operator wraps a number for itself alone: a Value used twice was someone's variable.
        uses = [0] * len(nodes)
        for node in nodes:
            for j in set(node.inputs):
                uses[j] += 1
        for i, (node, value) in enumerate(zip(nodes, objects, strict=True)):
            if node.op is None and not node.unknown and id(value) in constants and uses[i] == 1:
                node.const = True
        writer = _Writer(nodes, objects, names)
        for i in writer.order():
            writer.write(i, writer.nodes[i])
        program = writer.program()
        if statements:
            program.parsed = writer.statements()
        return program


def wrapped_numbers(objects: list[Any], nodes: list[_Node]) -> set[int]:
    """The ids of the leaves among `objects` (a graph's Values, the root last; `nodes` what
    `_graph` read of each) that nothing but the graph holds (its nodes' children and `_backward`
    closures) and no label names: numbers an operator wrapped in a Value (micrograd's
    `Value(other)` inside `__add__`), which the program writes as constants, not sliders. A Value
    a variable, a list, an object's attribute or anything else holds (a weight, an input) is a
    leaf.

    Counted, not searched: a leaf's references (sys.getrefcount) are the graph's (each container
    and closure cell that holds it, counted once) and this function's own (`objects` and the
    count's argument, measured on an object held the same way), or someone else holds it. A
    search of the heap for its holders took 0.25 s of micrograd's demo (667,841 objects)."""
    count = len(objects)
    position = {id(value): i for i, value in enumerate(objects)}
    # The references the graph itself holds to each Value, counted by index: each container a
    # Value of others keeps its children in (once, however many Values share it), and each
    # closure cell of the Values' `_backward`s (once, however many closures share it).
    refs: Counter[int | None] = Counter()
    holders = [node for node in nodes if node.container is not None]
    if len({node.container for node in holders}) < len(holders):
        holders = list({node.container: node for node in reversed(holders)}.values())
    refs.update(chain.from_iterable(node.children for node in holders))
    backwards = [getattr(value, "_backward", None) for value in objects]
    closures = [getattr(backward, "__closure__", None) or () for backward in backwards]
    cells = list(chain.from_iterable(closures))
    if _some_shared(cells):
        cells = list({id(cell): cell for cell in cells}.values())
    refs.update(map(position.get, map(id, _contents(cells))))
    graph_refs = [refs[i] for i in range(count)]
    # The Values some op's `_backward` closure holds as `self`: a method was called on them
    # (`a * a`), so they were never a plain number an operator wrapped (micrograd wraps only
    # `other`). Where a closure keeps `self` is read once a code object (a graph has a few).
    codes = [getattr(backward, "__code__", None) for backward in backwards]
    where = {id(code): _self_cell(code) for code in {id(code): code for code in codes}.values()}
    selves = map(where.__getitem__, map(id, codes))
    held = [closure[k] for closure, k in zip(closures, selves, strict=True) if k < len(closure)]
    operated_on = set(map(position.get, map(id, _contents(held))))
    del backwards, closures, cells, held, codes
    # Of all this frame holds, only `objects` holds a Value (the lists above hold functions and
    # cells).
    extra = _other_references(objects, graph_refs)
    if not _whole_graph_discounted(objects, nodes, extra, position):
        # The counts may hold garbage: a backward()'s own `topo` list is in a cycle (its
        # recursive `build_topo` closure) until the collector runs. Collected, it holds nothing
        # (a whole heap's work: 0.3 s in a kernel holding micrograd's demo).
        gc.collect()
        extra = _other_references(objects, graph_refs)
    last = count - 1
    return {
        id(objects[i])
        for i, node in enumerate(nodes)
        if i != last and i not in operated_on and not node.ours and not node.children
        and not node.label and extra[i] <= 0
    }  # fmt: skip


def _some_shared(cells: list[Any]) -> bool:
    """Whether some of `cells` (closure cells, each listed once a closure) may be held twice:
    by two closures (made in one call), or by something else (a running frame). Counted, not
    searched (a set of 192,000 ids: 30 ms of micrograd's demo): a cell held by one closure has
    the references of a probe held as it is (a closure's tuple, `cells`, the count's argument)."""
    probe = [CellType()]
    held = (probe[0],)  # as a closure holds it  # noqa: F841 - held for its reference
    return max(map(sys.getrefcount, cells), default=0) > max(map(sys.getrefcount, probe))


def _self_cell(code: Any) -> int:
    """Where a closure of `code` keeps `self` (an index into its cells), or a number past them
    when it keeps none."""
    names = code.co_freevars if isinstance(code, CodeType) else ()
    return names.index("self") if "self" in names else sys.maxsize


def _contents(cells: Iterable[Any]) -> list[Any]:
    """What each of `cells` holds (closure cells): None for an empty one (Values are never
    None)."""
    try:
        return [cell.cell_contents for cell in cells]
    except ValueError:  # an empty cell: asked one by one
        return [getattr(cell, "cell_contents", None) for cell in cells]


def _other_references(objects: list[Any], graph_refs: list[int]) -> list[int]:
    """How many references to each of `objects` neither the graph (`graph_refs`) nor the reader
    holds: `objects`' own and sys.getrefcount's argument, measured on a probe held the same way
    (no interpreter's count is assumed)."""
    probe = [object()]
    ours = sys.getrefcount(probe[0])
    return [sys.getrefcount(objects[i]) - refs - ours for i, refs in enumerate(graph_refs)]


def _whole_graph_discounted(
    objects: list[Any], nodes: list[_Node], extra: list[int], position: dict[int, int]
) -> bool:
    """Whether the counts in `extra` can be read without a collection: once containers of the
    whole graph are taken off them (a list or set of all but at most one of its nodes names
    none of them: backward()'s `topo` and `visited`, garbage or kept), some op (but the root)
    has no holder beyond the graph, and no leaf has two (the garbage of a backward() of a part
    of the graph holds each of its nodes twice, in a list and a set). Without an op that only
    the graph can hold (ours keep their operands where this reader does not count), or past
    either test, the collector decides (False)."""
    ops = [i for i, node in enumerate(nodes[:-1]) if node.children and not node.ours]
    if not ops:
        return False
    least = min(ops, key=extra.__getitem__)
    if extra[least] > 0:
        count = len(objects)
        for holder in gc.get_referrers(objects[least]):
            if not isinstance(holder, (list, set, frozenset)) or holder is objects:
                continue
            if len(holder) < count - 1:
                continue
            # Each of the graph's Values it holds, once however often it holds it.
            held = set(map(position.get, map(id, holder)))
            held.discard(None)
            for i in held:
                extra[i] -= 1  # type: ignore[index]
        if extra[least] > 0:
            return False
    return all(extra[i] < 2 for i, node in enumerate(nodes[:-1]) if not node.children)


def _natural_key(text: str) -> list[Any]:
    """`text` ordered as people order places: `neurons[2]` before `neurons[10]`."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", text)]  # fmt: skip


def _inconsistent(nodes: list[_Node]) -> list[int]:
    """The op nodes whose stored data does not follow from their operands' stored data."""
    found = []
    for i, node in enumerate(nodes):
        if node.op is None:
            continue
        inputs = node.inputs
        second = nodes[inputs[1]].data if len(inputs) > 1 else 0.0
        data = FORWARD[node.op]((nodes[inputs[0]].data, second, node.exponent or 0.0, 0.0))
        if data != node.data and not near(data, node.data):
            found.append(i)
    return found


UNSEEN = object()  # a node's shared place not yet looked for (`_Writer.units`)


class _Writer:
    """Writes the nodes of a graph (inputs first) as the lines of a program: each leaf and
    named node a line, an unnamed node used once inline where it is used (a statement is cut at
    MAX_STATEMENT_CHARS or MAX_INLINE_DEPTH, and where it would mix two neurons' parameters)."""

    def __init__(
        self, nodes: list[_Node], objects: list[Any], hints: Mapping[int, str] | None
    ) -> None:
        self.nodes, self.objects = nodes, objects
        count = len(nodes)
        self.last = count - 1
        self.uses = [0] * count
        self.consumer = [-1] * count
        for i, node in enumerate(nodes):
            for j in node.inputs:
                self.uses[j] += 1
                self.consumer[j] = i
        self.reachable = [False] * count
        if count:
            self.reachable[-1] = True
        for i in range(count - 1, -1, -1):
            if self.reachable[i]:
                for j in nodes[i].inputs:
                    self.reachable[j] = True
        self.names, self.taken = _names(nodes, objects, hints)
        self.hints = hints or {}
        self.counters: dict[str, int] = {"v": 0}
        self.lines: list[str] = []
        self.line_nodes: list[int] = []  # the node each statement's line writes (`statements`)
        self.values: dict[str, float] = {}
        self.text = [""] * count  # how a node is written where it is used
        # How its card names it: its label, else its text; an inline node's (None) is made when
        # asked (`shown_of`: warnings and generated labels ask for a few of 65,818).
        self.shown: list[str | None] = [""] * count
        self.shown_prec = [ATOM] * count
        self.prec = [ATOM] * count  # how tightly its text binds (SUM … ATOM)
        self.depth = [0] * count  # the parentheses and calls its text nests
        # The leaves written in a node's statement so far (its own line's, or its inline text's):
        # whether there are any, and the places they live in (`_joined`).
        self.direct = [False] * count
        self.places: list[Places] = [()] * count
        # The object a node's places share (`_shared_place` of `places`), found once (UNSEEN:
        # not yet): every operator a neuron's statement inlines asks it of its operands.
        self.units: list[Any] = [None] * count
        self.place_count: dict[str, int] = {}
        self.functions: dict[int, str] = {}  # id(opaque node) → the function written for it
        self.line_of = [0] * count  # the 1-based line that writes a node (inline: its user's)

    def order(self) -> list[int]:
        """The nodes the program writes, in its order: the leaves named where they live first
        (a model's parameters), in the order of their places (layer by layer, neuron by neuron:
        `n.layers[0].neurons[1].b`, `….w[0]`, …, `n.layers[0].neurons[2].b`), then the rest in
        graph order (inputs first), so the sliders, the tables and the scripts list a model's
        parameters as it holds them, not in the order the loss first reached them."""
        written = [i for i in range(len(self.nodes)) if self.reachable[i]]
        placed = sorted((i for i in written if self.lives_somewhere(i)),
                        key=lambda i: _natural_key(self.nodes[i].label))  # fmt: skip
        first = set(placed)
        return placed + [i for i in written if i not in first]

    def lives_somewhere(self, i: int) -> bool:
        """Whether node `i` is a leaf named after the place it lives (its label that place)."""
        node = self.nodes[i]
        if node.op is not None or node.const or node.unknown or self.names[i] is None:
            return False
        place = self.hints.get(id(self.objects[i]), "")
        return node.label == place and not place.isidentifier()

    def mixes(self, node: _Node, j: int, unit: str) -> bool:
        """Whether `node` adds its operand `j`, a whole use of the object `unit`, to another use
        of it (the next sample's pass through the same neuron) or to an operation of no object
        at all (a sum of statements): micrograd's demo sums each sample's output neuron, whose
        places are all the one neuron's, into its loss; each is a statement, not one sum of all
        of them cut where it grows too long."""
        return any(
            k != j
            and self.nodes[k].op is not None
            and (not self.places[k] or self.unit_of(k) == unit)
            for k in node.inputs
        )

    def unit_of(self, i: int) -> str | None:
        """The object the places of node `i`'s statement so far share, or None."""
        if self.units[i] is UNSEEN:
            self.units[i] = _shared_place(self.places[i])
        return self.units[i]

    def opaque_name(self, node: _Node) -> str | None:
        """An opaque node's name: its op's spelling (`max`) where that is a name, else None."""
        if not node.unknown:
            return None
        name = identifier_of(node.unknown)
        if _usable(name, self.taken):
            self.taken.add(name)
            return name
        return self.fresh(name)

    def fresh(self, prefix: str) -> str:
        """A new name `v1`, `t2`, … that no label took."""
        while True:
            self.counters[prefix] = self.counters.get(prefix, 0) + 1
            if (name := f"{prefix}{self.counters[prefix]}") not in self.taken:
                self.taken.add(name)
                return name

    def write(self, i: int, node: _Node) -> None:
        """Node `i`: a constant inline, a leaf's line, an operation inline or its line."""
        if node.op is None and not math.isfinite(node.data):
            raise NotAGraph(msg("error.reader.leaf_not_finite", data=str(node.data)))
        if node.op is None and node.const and i != self.last:
            self.text[i] = self.shown[i] = _number(node.data)
            # A sign binds looser than `**`: `-2.0 ** 2.0` (and `-0.0 ** 2.0`) is -(2.0 ** 2.0).
            self.prec[i] = self.shown_prec[i] = 0 if self.text[i].startswith("-") else ATOM
            return
        # A label that is not the node's name (`x1*w1`, or a label beside the name of the variable
        # that holds it) is set on the node's own line.
        label = _label_literal(node.label) if node.label != self.names[i] else None
        if node.unknown is not None:
            name = self.names[i] or self.opaque_name(node) or self.fresh("v")
            self.write_opaque(name, node)
        elif node.op is None:
            name = self.names[i] or self.opaque_name(node) or self.fresh("v")
            self.lines.append(f"{name} = {_number(node.data)}")
            self.line_nodes.append(i)
            self.values[name] = node.data
            self.direct[i] = True
            self.places[i] = _places_of(self.hints.get(id(self.objects[i]), ""))
        else:
            places = self.places
            gathered = _joined([places[j] for j in node.inputs])
            promoted, combined = self.promote_units(node, gathered)
            if promoted:
                gathered, combined = _joined([places[j] for j in node.inputs]), UNSEEN
            expression, prec, depth = _expression(node, self.text, self.prec, self.depth)
            alone = self.names[i] is None and self.uses[i] == 1 and label is None
            fits = len(expression) <= MAX_STATEMENT_CHARS and depth <= MAX_INLINE_DEPTH
            if alone and i != self.last and fits:
                self.text[i], self.prec[i], self.depth[i] = expression, prec, depth
                self.shown[i] = None
                self.direct[i] = any(self.direct[j] for j in node.inputs)
                self.places[i], self.units[i] = gathered, combined
                return
            last = i == self.last and "out" not in self.taken
            name = self.names[i] or ("out" if last else None)
            if name is None:
                name, generated = self.generated(node, gathered)
                if label is None and generated is not None:
                    node.label, label = generated, _label_literal(generated)
            self.lines.append(f"{name} = {expression}")
            self.line_nodes.append(i)
        if label is not None:
            self.lines[-1] += f"; {name}.label = {label}"
        self.names[i] = self.text[i] = name
        self.prec[i], self.depth[i] = ATOM, 0
        self.shown[i] = node.label or name
        self.shown_prec[i] = ATOM if ATOMIC_LABEL.fullmatch(self.shown[i]) else 0
        self.line_of[i] = len(self.lines)

    def write_opaque(self, name: str, node: _Node) -> None:
        """An opaque node: a function the program defines for it, `unknown_<op>`, whose body is
        its data plus its measured local derivatives times each argument's distance from its
        value here (the tangent: at these numbers the node's data and local derivatives are the
        code's), and `name` = the call of it on the node's children."""
        function = self.fresh_function(f"unknown_{identifier_of(node.unknown or 'op')}")
        self.functions[id(node)] = function
        params = [f"p{k + 1}" for k in range(len(node.inputs))]
        body = _number(node.data) + "".join(
            f" + {_signed(local)} * ({param} - {_signed(self.nodes[j].data)})"
            for param, local, j in zip(params, node.measured, node.inputs, strict=True)
        )
        self.lines.append(f"{function}({', '.join(params)}) = {body}")
        arguments = ", ".join(self.text[j] for j in node.inputs)
        self.lines.append(f"{name} = {function}({arguments})")

    def fresh_function(self, base: str) -> str:
        """A function's name no node and no other function took."""
        name, count = base, 1
        while not _usable(name, self.taken):
            count += 1
            name = f"{base}{count}"
        self.taken.add(name)
        return name

    def promote_units(self, node: _Node, gathered: Places) -> tuple[bool, Any]:
        """Give a line of its own to each operand of `node` written inline whose parameters live
        in one object (a neuron's whole `w·x + b`, its activation) that `node` would mix with
        another's: a statement is one neuron, as the code computed it (the page's groups).
        `gathered`: the places of its operands' leaves. Whether any operand got a line, and the
        object `gathered` share (`_shared_place`; UNSEEN when not looked for)."""
        direct, nodes, names = self.direct, self.nodes, self.names
        operands = [j for j in node.inputs if direct[j] and nodes[j].op]
        if len(operands) > 1:  # (`a * a`: once)
            operands = list(dict.fromkeys(operands))
        if not operands or all(names[j] for j in operands):
            return False, UNSEEN
        combined = _shared_place(gathered)
        promoted = False
        for j in operands:
            if self.names[j] or (unit := self.unit_of(j)) is None:
                continue
            if unit != combined:
                self.promote(j)
            elif self.mixes(node, j, unit):
                self.promote_use(j)
            else:
                continue
            promoted = True
        return promoted, combined

    def promote(self, j: int) -> None:
        """Give node `j`, written inline so far, a line of its own, named where its parameters
        live (`generated`)."""
        name, label = self.generated(self.nodes[j], self.places[j])
        line = f"{name} = {self.text[j]}"
        if label is not None and (literal := _label_literal(label)) is not None:
            self.nodes[j].label = label
            line += f"; {name}.label = {literal}"
        self.lines.append(line)
        self.line_nodes.append(j)
        self.names[j] = self.text[j] = name
        self.prec[j], self.depth[j], self.direct[j], self.places[j] = ATOM, 0, False, ()
        self.units[j] = None
        self.shown[j] = self.nodes[j].label or name
        self.shown_prec[j] = ATOM if ATOMIC_LABEL.fullmatch(self.shown[j]) else 0
        self.line_of[j] = len(self.lines)

    def promote_use(self, j: int) -> None:
        """Give a line of its own to the use of one object that operand `j` (inline) ends in:
        down from `j` through operations that add only constants to it (the demo's loss term
        `(1 + -y·score).relu()`) to where its places last grew (`score`, the output neuron's
        `w·x + b`), and up again through the functions applied to that alone (an activation).
        What `j` adds to it stays inline where `j` is used, written again with its name."""
        chain = [j]
        while True:
            inputs = self.nodes[chain[-1]].inputs
            carriers = [m for m in inputs if self.places[m]]
            if len(carriers) != 1 or not all(
                m in carriers or (self.nodes[m].op is None and self.nodes[m].const) for m in inputs
            ):
                break
            (m,) = carriers
            if self.names[m] or not self.nodes[m].op or self.places[m] != self.places[chain[-1]]:
                break
            chain.append(m)
        end = len(chain) - 1
        while end > 0 and len(self.nodes[chain[end - 1]].inputs) == 1:
            end -= 1
        self.promote(chain[end])
        for c in reversed(chain[:end]):
            node = self.nodes[c]
            self.text[c], self.prec[c], self.depth[c] = _expression(
                node, self.text, self.prec, self.depth
            )
            self.places[c], self.units[c] = _joined(self.places[m] for m in node.inputs), UNSEEN
            self.direct[c] = any(self.direct[m] for m in node.inputs)
            self.shown[c] = None

    def generated(self, node: _Node, places: Places) -> tuple[str, str | None]:
        """A name (and a label) for an operation the code named nowhere: where the parameters
        of its statement live (a neuron's `n.layers[0].neurons[1]`: the place its leaves share,
        again `…₂` for another example), else its label made a name (`x1*w1` → `x1_w1`), else its
        op's word (`sum1`, `tanh2`), labelled with its expression where that is short."""
        place = _shared_place(places)
        if place is not None:
            count = self.place_count[place] = self.place_count.get(place, 0) + 1
            base = identifier_of(place)
            name = base if count == 1 else f"{base}_{count}"  # as its label counts: `…₂`
            if not _usable(name, self.taken):
                name = self.fresh(f"{base}_")
            self.taken.add(name)
            return name, place if count == 1 else place + str(count).translate(SUBSCRIPTS)
        if node.label:  # the code's own label, no name (`x1*w1`): the name is made of it
            base = identifier_of(node.label)
            if len(base) <= MAX_LABEL_CHARS and _usable(base, self.taken):
                self.taken.add(base)
                return base, None
            return self.fresh(OP_WORDS.get(node.op or "", node.op or "node")), None
        if self.shown_longer(node.inputs, MAX_LABEL_CHARS):  # a long statement: no label
            return self.fresh(OP_WORDS.get(node.op or "", node.op or "node")), None
        for j in node.inputs:
            self.shown_of(j)
        shown = _expression(node, self.shown, self.shown_prec, self.depth)[0]  # type: ignore[arg-type]
        label = shown if len(shown) <= MAX_LABEL_CHARS and _label_literal(shown) else None
        return self.fresh(OP_WORDS.get(node.op or "", node.op or "node")), label

    def shown_longer(self, inputs: list[int], limit: int) -> bool:
        """Whether an expression of `inputs` would name a card in more than `limit` characters,
        told from the words of its operands' operands, down to those made (a name, a label, a
        number) and no further: every template writes each operand once, so they are at least
        as long. An inline statement's words are never made to be thrown away (micrograd's demo
        made 61,000 of them, each longer than a label, for its 2,000 generated names)."""
        shown, nodes = self.shown, self.nodes
        length, pending = 0, list(inputs)
        while pending:
            k = pending.pop()
            if shown[k] is None:
                pending.extend(nodes[k].inputs)
            elif (length := length + len(shown[k])) > limit:  # type: ignore[arg-type]
                return True
        return False

    def shown_of(self, i: int) -> str:
        """How node `i`'s card names it: an inline node's expression in its operands' shown
        words (`n.layers[0].neurons[1].w[0]*x`), made once asked; without recursion. An inline
        node's operands are final once it is written (only its own write promotes them)."""
        shown = self.shown
        pending = [i]
        while pending:
            k = pending[-1]
            if shown[k] is not None:
                pending.pop()
                continue
            waiting = [j for j in self.nodes[k].inputs if shown[j] is None]
            if waiting:
                pending.extend(waiting)
                continue
            pending.pop()
            shown[k], self.shown_prec[k], _ = _expression(
                self.nodes[k],
                shown,  # type: ignore[arg-type]
                self.shown_prec,
                self.depth,
            )
        return shown[i]  # type: ignore[return-value]

    def statements(self) -> tuple[tuple[Statement, ...], int] | None:
        """The statements the parser reads in the written lines (engine/parser.py: the same
        Exprs, offsets, postfix and labels) and how deep their parentheses and calls nest, read
        from what wrote them instead of from the text: micrograd's demo's 2.2 MB are not lexed
        and parsed again (0.25 s). None where the writing is not one this reads back (an opaque
        node's function, an op written otherwise than `_reading` says, a line that does not
        add up): the text is parsed then."""
        if self.functions:
            return None
        statements: list[Statement] = []
        start, deepest = 0, 0
        for number, (line, i) in enumerate(zip(self.lines, self.line_nodes, strict=True), 1):
            name = self.names[i]
            if name is None or not line.startswith(f"{name} = "):
                return None
            at = start + len(name) + 3
            if self.nodes[i].op is None:
                written = _number(self.nodes[i].data)
                expr = Expr("num", at, at + len(written), None, (), written, float(written))
                read: tuple[Expr, list[Expr], int] | None = (expr, [expr], 0)
            else:
                read = self.read_back(i, at)
            if read is None:
                return None
            expr, postfix, depth = read
            statement = Statement(name, start, start + len(name), expr, number, postfix)
            rest = line[expr.end - start :]
            if rest:
                said = f"; {name}.label = "
                if not rest.startswith(said) or len(rest) < len(said) + 2:
                    return None
                label = rest[len(said) + 1 : -1]
                statement.labels = ((name, label, expr.end + 2, start + len(line)),)
            statements.append(statement)
            deepest = max(deepest, depth)
            start += len(line) + 1
        return tuple(statements), deepest

    def read_back(self, root: int, at: int) -> tuple[Expr, list[Expr], int] | None:
        """The Expr of op node `root`'s statement, written at offset `at`, its postfix (the
        nodes in post-order, a literal exponent left out) and how deep its parentheses and
        calls nest. None for an op `_reading` does not read back, a sign the parser folds into
        its number (`-2.0`), or operations inline deeper than READ_BACK_DEPTH (a sum of
        hundreds of one-letter names fits in MAX_STATEMENT_CHARS): the text is parsed then."""
        nodes, text, prec, names = self.nodes, self.text, self.prec, self.names
        postfix: list[Expr] = []
        append = postfix.append
        deepest = 0

        def read(k: int, begin: int, level: int, room: int) -> Expr | None:
            # Op node `k`, its text at `begin`, its operands inside `level` brackets and calls.
            nonlocal deepest
            node = nodes[k]
            reading = _reading(node.op)  # type: ignore[arg-type]
            if reading is None or not room:
                return None
            kind, name, before, between, after = reading
            _, called, own = _spelling(node.op)
            inner = level + called
            if inner > deepest:
                deepest = inner
            args = []
            where = begin + len(before)
            for position, j in enumerate(node.inputs):
                wrap = _wrapped(called, own, position, prec[j])
                start = where + wrap
                operand = nodes[j]
                if operand.const:
                    written = text[j]
                    end = start + len(written)
                    expr = Expr("num", start, end, None, (), written, float(written))
                    append(expr)
                elif names[j] is not None:
                    written = text[j]
                    expr = Expr("name", start, start + len(written), None, (), written)
                    append(expr)
                else:
                    expr = read(j, start, inner + wrap, room - 1)  # type: ignore[assignment]
                    if expr is None:
                        return None
                if wrap:
                    expr.start, expr.end, expr.parens = where, expr.end + 1, True
                    if inner + 1 > deepest:
                        deepest = inner + 1
                args.append(expr)
                where = expr.end + len(between)
            if node.op == "**k":  # its exponent, after `between`: a literal, part of its node
                exponent = _exponent(node.exponent)
                bracketed = exponent.startswith("(")
                written = exponent[1:-1] if bracketed else exponent
                power = Expr("num", where, where + len(exponent), None, (), written, float(written))
                if bracketed:
                    power.parens = True
                    deepest = max(deepest, level + 1)
                expr = Expr("binary", args[0].start, power.end, "**", (args[0], power))
            elif kind == "binary":
                expr = Expr("binary", args[0].start, args[1].end, name, tuple(args))
            elif kind == "neg":
                if args[0].kind == "num" and not args[0].parens:
                    return None  # `-2.0`: the parser reads one number
                expr = Expr("neg", begin, args[0].end, "neg", tuple(args))
            elif before:  # tanh(a)
                expr = Expr("call", begin, args[0].end + len(after), name, tuple(args))
            else:  # a.relu()
                expr = Expr("call", args[0].start, args[0].end + len(after), name, tuple(args))
            if k != root and expr.end != begin + len(text[k]):
                return None  # not the text written: never so, unless this reader is wrong
            append(expr)
            return expr

        expr = read(root, at, 0, READ_BACK_DEPTH)
        return None if expr is None else (expr, postfix, deepest)

    def program(self) -> Program:
        """The program of the written lines, with the nodes micrograd's set merged."""
        names, text, line_of = self.names, self.text, self.line_of
        # The warnings name a node as its card does, in the learner's words: its label (the
        # place a parameter lives, `n.layers[0].neurons[1].w[0]`), else its name or expression.
        shown = _Shown(self)
        for i in range(self.last, -1, -1):
            if not line_of[i] and self.consumer[i] >= 0:
                line_of[i] = line_of[self.consumer[i]]
        merged = [
            {
                "node": shown[i],
                "operand": shown[node.inputs[0]],
                "op": node.op,
                "line": line_of[i],
            }
            for i, node in enumerate(self.nodes)
            if node.merged
        ]
        reachable = self.reachable
        leaves = [  # in the program's order (`order`)
            names[i]
            for i in sorted(range(len(self.nodes)), key=line_of.__getitem__)
            if reachable[i]
            and self.nodes[i].op is None
            and not self.nodes[i].const
            and not self.nodes[i].unknown
            and names[i]
        ]
        unknown = [
            {
                "node": shown[i],
                "op": node.unknown,
                "data": node.data,
                "line": line_of[i],
                "children": [shown[j] for j in node.children],
                "function": self.functions.get(id(node), ""),
                "locals": node.measured,
            }  # fmt: skip
            for i, node in enumerate(self.nodes)
            if reachable[i] and node.unknown is not None
        ]
        inconsistent = [i for i in _inconsistent(self.nodes) if reachable[i]]
        moved = {  # the leaves under the lowest inconsistent nodes (no constant moves)
            j: None
            for i in inconsistent
            for j in self.nodes[i].inputs
            if self.nodes[j].op is None and not self.nodes[j].const and not self.nodes[j].unknown
        }
        return Program(
            "\n".join(self.lines) + "\n",
            self.values,
            leaves,  # type: ignore[arg-type]
            names[self.last] or "",
            merged,
            objects=self.objects,
            texts=text,
            inputs=[list(node.inputs) for node in self.nodes],
            ops=[node.op for node in self.nodes],
            exponents=[node.exponent for node in self.nodes],
            consts=[node.const for node in self.nodes],
            unknown=unknown,
            opaque={
                i: node.measured
                for i, node in enumerate(self.nodes)
                if reachable[i] and node.unknown is not None
            },  # fmt: skip
            inconsistent=[
                {
                    "node": shown[i],
                    "line": line_of[i],
                    "stored": self.nodes[i].data,
                    "follows": apply(
                        self.nodes[i].op or "+",
                        [self.nodes[j].data for j in self.nodes[i].inputs],
                        self.nodes[i].exponent or 0.0,
                    )[0],
                }
                for i in inconsistent
            ],  # fmt: skip
            moved=[shown[j] for j in moved],
        )


class _Shown:
    """A writer's shown names, read by index (`shown[i]`), each made when first read."""

    def __init__(self, writer: _Writer) -> None:
        self.writer = writer

    def __getitem__(self, i: int) -> str:
        return self.writer.shown_of(i)


def _expression(
    node: _Node, text: list[str], prec: list[int], depth: list[int]
) -> tuple[str, int, int]:
    """`node` in the table's micrograd spelling, which the dialect reads (`a * b`, `-a`,
    `a ** 2.0`, `vpow(a, b)`, `a.relu()`, `tanh(a)`), operands in parentheses where their
    precedence needs them (`a * b + c`, `(a + b) * c`, `a - (b - c)`); with how tightly it
    binds and how deep it nests."""
    template, called, own = _spelling(node.op)
    args, deepest = [], 0
    for position, j in enumerate(node.inputs):
        wrap = _wrapped(called, own, position, prec[j])
        args.append(f"({text[j]})" if wrap else text[j])
        deepest = max(deepest, depth[j] + (called or wrap))
    k = _exponent(node.exponent) if node.op == "**k" else ""
    return template.format(*args, k=k), own, deepest


def _wrapped(called: bool, own: int, position: int, operand: int) -> bool:
    """Whether an operand that binds as tightly as `operand` is written in parentheses at
    `position` of an op that binds as tightly as `own` (or is a call)."""
    if called:
        return False
    if own in (SUM, PRODUCT):  # left-associative; a sign in an operand is bracketed
        return operand < own or operand == NEGATIVE or (position == 1 and operand <= own)
    if own == ATOM:  # a.relu(): a name, a number or a call as it is
        return operand < ATOM
    return operand <= own  # -a, a ** k: the operand binds tighter, or is bracketed


@functools.cache
def _reading(op: str) -> tuple[str, str, str, str, str] | None:
    """How the parser reads op `op` as the reader writes it (its micrograd template): the kind
    of its Expr, the op or function the Expr names, and the text before, between and after its
    operands; None for a template read otherwise (`vpow(a, b)`, a copy's `{0}`)."""
    pieces = list(string.Formatter().parse(OPS[op].micrograd))
    fields = [field for _, field, _, _ in pieces if field is not None]
    literals = [literal for literal, _, _, _ in pieces]
    if fields == ["0", "1"] and len(literals) == 2 and literals[0] == "":  # a + b
        return "binary", literals[1].strip(), "", literals[1], ""
    if fields == ["0", "k"] and op == "**k" and len(literals) == 2:  # a ** 2.0
        return "binary", "**", "", literals[1], ""
    if fields != ["0"]:
        return None
    after = literals[1] if len(literals) > 1 else ""
    if literals[0] == "-" and not after:  # -a
        return "neg", "neg", "-", "", ""
    if literals[0].endswith("(") and after == ")" and literals[0][:-1].isidentifier():
        return "call", literals[0][:-1], literals[0], "", ")"  # tanh(a)
    if not literals[0] and after.startswith(".") and after.endswith("()"):
        return "call", after[1:-2], "", "", after  # a.relu()
    return None


@functools.cache
def _spelling(op: str | None) -> tuple[str, bool, int]:
    """Op `op`'s micrograd template, whether it is a call (`tanh({0})`, `vpow({0}, {1})`) and
    how tightly it binds: read once an op, not once a node."""
    template = OPS[op].micrograd
    return template, template.endswith(")") and "({0}" in template, _precedence(op, template)


def _precedence(op: str | None, template: str) -> int:
    if op in ("+", "-"):
        return SUM
    if op in ("*", "/"):
        return PRODUCT
    if op == "neg":
        return NEGATIVE
    if op == "**k":
        return POWER_PREC
    return ATOM if template.endswith(")") else 0


@functools.lru_cache(maxsize=1 << 16)
def _place_pieces(place: str) -> tuple[str, ...] | None:
    """A place's steps (`n`, `.layers`, `[0]`, …), or None for a plain name: read once a place
    (a parameter's place is asked for by every statement it is in)."""
    if place and (place.endswith("]") or "." in place):
        return tuple(PLACE_PARTS.findall(place))
    return None


# The places of a statement's leaves as `_shared_place` reads them: for each variable they begin
# with, in the order first met, (the variable, how many places, the least and the greatest of
# their steps, the fewest steps). Joined statement by statement, never listed leaf by leaf: a
# neuron's `+`s each held all its leaves so far (micrograd's demo: 102,626 lists, 0.4 s).
Places = tuple[tuple[str, int, tuple[str, ...], tuple[str, ...], int], ...]


def _places_of(place: str) -> Places:
    """The `Places` of one leaf that lives at `place` (none for a plain name)."""
    pieces = _place_pieces(place)
    return () if pieces is None else ((pieces[0], 1, pieces, pieces, len(pieces)),)


def _joined(parts: Iterable[Places]) -> Places:
    """The `Places` of the leaves of all of `parts`, in order."""
    parts = [places for places in parts if places]
    if len(parts) < 2:  # most operations: a leaf or a statement's sum so far, and a number
        return parts[0] if parts else ()
    merged: dict[str, list[Any]] = {}
    for places in parts:
        for root, count, least, greatest, fewest in places:
            entry = merged.get(root)
            if entry is None:
                merged[root] = [count, least, greatest, fewest]
                continue
            entry[0] += count
            entry[1], entry[2] = min(entry[1], least), max(entry[2], greatest)
            entry[3] = min(entry[3], fewest)
    return tuple((root, *entry) for root, entry in merged.items())


def _shared_place(places: Places) -> str | None:
    """The object two or more places (`n.layers[0].neurons[1].w[0]`, `….b`) all live in
    (`n.layers[0].neurons[1]`), or None. Places under another variable (a neuron's inputs
    `xs[0][1]`, when the code made them Values) do not count where fewer live there."""
    if not places:
        return None
    if len(places) == 1:
        ((_, count, least, greatest, fewest),) = places
    else:
        _, count, least, greatest, fewest = max(places, key=lambda entry: entry[1])  # the first
    if count < 2:
        return None
    return _common_place(least, greatest, fewest)


@functools.lru_cache(maxsize=1 << 16)
def _common_place(least: tuple[str, ...], greatest: tuple[str, ...], fewest: int) -> str | None:
    """The steps `least` and `greatest` (a place's steps, the least before the greatest) begin
    with, joined, when some are and they are fewer than `fewest`; else None. Asked again for
    each operation of a neuron's statement: read once."""
    shared = os.path.commonprefix([least, greatest])
    if not shared or len(shared) >= fewest:
        return None
    return "".join(shared)


def _signed(x: float) -> str:
    """A number as an operand: in brackets when negative."""
    return f"({_number(x)})" if x < 0 else _number(x)


def _exponent(k: float | None) -> str:
    if k is None or not math.isfinite(k):
        raise NotAGraph(msg("error.reader.exponent_not_finite", k=str(k)))
    written = _number(k)
    return f"({written})" if k < 0 else written
