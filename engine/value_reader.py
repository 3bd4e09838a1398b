"""A graph of `Value`s, read (never run) and written back as a program: micrograd's `Value` (duck
typed: `data`, `_prev`, `_op`, optionally `label`) or ours, so that `chainrule.trace_value(loss)`
traces, explains and recomputes the same graph with the engine.

micrograd keeps a node's children in a `set`: `a*a` and `a+a` have one child, and `draw_dot`
draws one edge where the product has two operands. The program says what the node computes
(`a * a`, two edges) and `Program.merged` names each such node, for a warning.

A set has no order, so the same code could give another program on every run. The reader puts
the two operands of a `+` or `*` in one order that depends only on the graph: the order the op's
own `_backward` closure names them (`self`, `other`: micrograd's and the lecture's `Value`), else
by label, else by a structural key (op, label, data and the operands' keys, hashed). One piece of
code gives one program, in a notebook and in the page's sandbox.

A node's `label` is kept: as its name where it is one, else set on the node's line
(`v1 = 2.0; v1.label = 'x 1'`, `t1 = w1 * x1; t1.label = 'x1*w1'`), which the dialect reads.
"""

from __future__ import annotations

import hashlib
import keyword
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .lexer import tokenize
from .ops import FUNCTIONS, MICROGRAD_OPS, OPS, SCRIPT_NAMES, key_of

POWER = re.compile(r"\*\*\s*(\S+)")
# An unnamed node used once is written inline where it is used while its text stays short (a
# card, the narration and the tables name a node by its text); a longer one gets a name (t1, …).
MAX_INLINE_CHARS = 16
# Names a program cannot give a leaf: the table's functions and what its scripts define.
RESERVED = frozenset((*FUNCTIONS, *SCRIPT_NAMES, "Value", "print"))


# The `_op` spellings the reader knows, in the table's order: what its messages list.
KNOWN_OPS = " ".join(MICROGRAD_OPS)


class NotAGraph(ValueError):
    """What was given is not a graph of Values, or holds what no program can say; `op` is the
    unknown op's spelling when that is why."""

    def __init__(self, message: str, op: str | None = None) -> None:
        super().__init__(message)
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

    def warnings(self) -> list[dict[str, Any]]:
        """One warning per merged operand, in the shape of the trace's warnings."""
        return [
            {
                "type": "merged_operand",
                "message": (
                    f"micrograd keeps the children of {m['node']} in a set, so draw_dot draws "
                    f"one edge from {m['operand']}; {m['node']} = {m['operand']} {m['op']} "
                    f"{m['operand']} uses it twice, and the correct graph has two edges (both "
                    "carry a gradient)"
                ),
                "line": m["line"],
                "column": 1,
            }
            for m in self.merged
        ]


@dataclass
class _Node:
    data: float
    op: str | None  # our op key ("**k" for a constant power), None for a leaf
    inputs: list[int]  # indices into the node list, in operand order
    exponent: float | None
    label: str
    merged: bool = False
    const: bool = False  # one of our constants (written inline); micrograd has none


def _is_ours(value: Any) -> bool:
    return hasattr(value, "inputs") and hasattr(value, "local_grads")


def _raw_children(value: Any) -> list[Any]:
    if _is_ours(value):
        return list(value.inputs)
    prev = getattr(value, "_prev", None)
    if prev is None:
        raise NotAValue(
            f"{type(value).__name__} is not a Value: a graph node has data, _prev and _op "
            "(micrograd's Value) or is chainrule.engine.Value"
        )
    return list(prev)


def _unordered(value: Any) -> bool:
    """Whether `value`'s children come in no particular order (micrograd's `set`)."""
    return not _is_ours(value) and not isinstance(value._prev, (list, tuple))


def _closure_order(value: Any, children: list[Any]) -> list[Any] | None:
    """The two operands in the order `value._backward` names them (`self`, then `other`), when
    its closure holds exactly `children`: micrograd's `__add__`/`__mul__` and the lecture's."""
    backward = getattr(value, "_backward", None)
    code, cells = getattr(backward, "__code__", None), getattr(backward, "__closure__", None)
    if code is None or not cells:
        return None
    env = dict(zip(code.co_freevars, cells, strict=False))
    try:
        pair = [env["self"].cell_contents, env["other"].cell_contents]
    except (KeyError, ValueError):  # no such variable, or an empty cell
        return None
    if sorted(map(id, pair)) != sorted(map(id, children)):
        return None
    return pair


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
        op = value.op if _is_ours(value) else getattr(value, "_op", "")
        text = f"{op}|{getattr(value, 'label', '')}|{value.data!r}|{','.join(operands)}"
        keys[id(value)] = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    return keys


def _children(value: Any, keys_of: Callable[[], dict[int, str]]) -> list[Any]:
    """`value`'s operands in the program's order (module docstring); `keys_of()`: the graph's
    structural keys (made the first time a set's order is not its closure's)."""
    children = _raw_children(value)
    if len(children) < 2 or not _unordered(value):
        return children
    if (ordered := _closure_order(value, children)) is not None:
        return ordered
    keys = keys_of()

    def canonical(child: Any) -> tuple[bool, str, str]:
        label = str(getattr(child, "label", "") or "")
        return (not label, label, keys.get(id(child), ""))

    return sorted(children, key=canonical)


def _describe(value: Any, inputs: list[int]) -> tuple[str | None, float | None, bool]:
    """(our op, constant exponent, merged) of `value` whose children are `inputs`."""
    if _is_ours(value):
        if value.op is None:
            return None, None, False
        return key_of(value.op, value.exponent), value.exponent, False
    spelled = getattr(value, "_op", "") or ""
    if not inputs:
        if spelled:
            raise NotAGraph(f"a node with op {spelled!r} has no children")
        return None, None, False
    if power := POWER.fullmatch(spelled):
        try:
            exponent = float(power.group(1))
        except ValueError as error:
            raise NotAGraph(f"cannot read the exponent of op {spelled!r}") from error
        if len(inputs) != 1:
            raise NotAGraph(f"op {spelled!r} has {len(inputs)} children; a power has one")
        return "**k", exponent, False
    op = MICROGRAD_OPS.get(spelled)
    if op is None:
        raise NotAGraph(
            f"chainrule does not know micrograd's op {spelled!r} (it knows {KNOWN_OPS}, and "
            "'**' with a number: '**2')",
            op=spelled,
        )
    arity = OPS[op].arity
    if arity == 2 and len(inputs) == 1:
        return op, None, True  # micrograd's set merged the reused operand: a + a, a * a
    if len(inputs) != arity:
        raise NotAGraph(f"op {spelled!r} has {len(inputs)} children")
    return op, None, False


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

    stack: list[tuple[Any, list[Any] | None]] = [(root, None)]
    on_path: set[int] = set()
    while stack:
        value, children = stack.pop()
        key = id(value)
        if children is None:
            if key in index:
                continue
            if key in on_path:
                raise NotAGraph("the graph has a cycle: a Value is among its own inputs")
            if max_nodes is not None and len(index) + len(on_path) >= max_nodes:
                raise TooManyNodes(f"the graph has more than {max_nodes} nodes")
            children = _children(value, keys_of)
            on_path.add(key)
            stack.append((value, children))
            stack.extend((child, None) for child in reversed(children) if id(child) not in index)
            continue
        on_path.discard(key)
        if key in index:
            continue
        inputs = [index[id(child)] for child in children]
        op, exponent, merged = _describe(value, inputs)
        if merged:
            inputs = inputs * 2
        try:
            data = float(value.data)
        except (TypeError, ValueError) as error:
            raise NotAGraph(f"a node's data {value.data!r} is not a number") from error
        label = getattr(value, "label", "") or ""
        const = _is_ours(value) and getattr(value, "kind", "") == "const"
        nodes.append(_Node(data, op, inputs, exponent, str(label), merged, const))
        index[key] = len(nodes) - 1
        keep.append(value)
    return nodes, keep


def _usable(label: str, taken: set[str]) -> bool:
    if not label.isidentifier() or keyword.iskeyword(label) or label in RESERVED:
        return False
    if label in taken or not label.isascii():
        return False
    tokens = tokenize(label)
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


def _names(
    nodes: list[_Node], objects: list[Any], hints: Mapping[int, str] | None
) -> tuple[list[str | None], set[str]]:
    """The name of each node that has one: its label where that is a usable name, else the name
    `hints` gives its Value (a variable holding it), first come first served in graph order, so
    a generated name never takes a label's place."""
    taken: set[str] = set()
    names: list[str | None] = [None] * len(nodes)
    for i, node in enumerate(nodes):
        if (node.op is not None or not node.const) and _usable(node.label, taken):
            names[i] = node.label
            taken.add(node.label)
    for i, node in enumerate(nodes):
        hint = hints.get(id(objects[i])) if hints else None
        if names[i] is None and not node.const and hint and _usable(hint, taken):
            names[i] = hint
            taken.add(hint)
    return names, taken


def program_of(
    root: Any, names: Mapping[int, str] | None = None, max_nodes: int | None = None
) -> Program:
    """The program that builds the graph ending in `root` (a micrograd or chainrule Value).
    `names` ({id(value): name}, e.g. the variables of the code that built it) names the nodes
    whose label is no name; more than `max_nodes` nodes raise TooManyNodes."""
    nodes, objects = _graph(root, max_nodes)
    writer = _Writer(nodes, objects, names)
    for i, node in enumerate(writer.nodes):
        writer.write(i, node)
    return writer.program()


class _Writer:
    """Writes the nodes of a graph (inputs first) as the lines of a program: each leaf and
    named node a line, an unnamed node used once inline where it is used while short."""

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
        self.names, self.taken = _names(nodes, objects, hints)
        self.counters = {"v": 0, "t": 0}
        self.lines: list[str] = []
        self.values: dict[str, float] = {}
        self.text = [""] * count  # how a node is written where it is used
        self.atomic = [True] * count
        self.line_of = [0] * count  # the 1-based line that writes a node (inline: its user's)

    def fresh(self, prefix: str) -> str:
        """A new name `v1`, `t2`, … that no label took."""
        while True:
            self.counters[prefix] += 1
            if (name := f"{prefix}{self.counters[prefix]}") not in self.taken:
                self.taken.add(name)
                return name

    def write(self, i: int, node: _Node) -> None:
        """Node `i`: a constant inline, a leaf's line, an operation inline or its line."""
        if node.op is None and not math.isfinite(node.data):
            raise NotAGraph(f"a leaf's data is {node.data}: a program's numbers are finite")
        if node.op is None and node.const and i != self.last:
            self.text[i], self.atomic[i] = _number(node.data), node.data >= 0
            return
        # A label that is not the node's name (`x1*w1`, or a label beside the name of the variable
        # that holds it) is set on the node's own line.
        label = _label_literal(node.label) if node.label != self.names[i] else None
        if node.op is None:
            name = self.names[i] or self.fresh("v")
            self.lines.append(f"{name} = {_number(node.data)}")
            self.values[name] = node.data
        else:
            expression = _expression(node, self.text, self.atomic)
            short = len(expression) <= MAX_INLINE_CHARS
            alone = self.names[i] is None and self.uses[i] == 1 and label is None
            if alone and i != self.last and short:
                # A call or a method call (`tanh(x)`, `x.relu()`) binds tightest.
                self.text[i] = expression
                self.atomic[i] = OPS[node.op].micrograd.endswith(")")
                return
            last = i == self.last and "out" not in self.taken
            name = self.names[i] or ("out" if last else self.fresh("t"))
            self.lines.append(f"{name} = {expression}")
        if label is not None:
            self.lines[-1] += f"; {name}.label = {label}"
        self.names[i] = self.text[i] = name
        self.line_of[i] = len(self.lines)

    def program(self) -> Program:
        """The program of the written lines, with the nodes micrograd's set merged."""
        names, text, line_of = self.names, self.text, self.line_of
        for i in range(self.last, -1, -1):
            if not line_of[i] and self.consumer[i] >= 0:
                line_of[i] = line_of[self.consumer[i]]
        merged = [
            {
                "node": names[i] or text[i],
                "operand": text[node.inputs[0]],
                "op": node.op,
                "line": line_of[i],
            }
            for i, node in enumerate(self.nodes)
            if node.merged
        ]
        leaves = [names[i] for i, node in enumerate(self.nodes) if node.op is None and names[i]]
        return Program(
            "\n".join(self.lines) + "\n",
            self.values,
            leaves,  # type: ignore[arg-type]
            names[self.last] or "",
            merged,
            objects=self.objects,
            texts=text,
            inputs=[list(node.inputs) for node in self.nodes],
        )


def _expression(node: _Node, text: list[str], atomic: list[bool]) -> str:
    """`node` in the table's micrograd spelling, which the dialect reads (`a * b`, `-a`,
    `a ** 2.0`, `vpow(a, b)`, `a.relu()`, `tanh(a)`): operands in parentheses where needed."""
    template = OPS[node.op].micrograd
    called = template.endswith(")") and "({0}" in template  # tanh({0}), vpow({0}, {1})
    args = [text[j] if called or atomic[j] else f"({text[j]})" for j in node.inputs]
    k = _exponent(node.exponent) if node.op == "**k" else ""
    return template.format(*args, k=k)


def _exponent(k: float | None) -> str:
    if k is None or not math.isfinite(k):
        raise NotAGraph(f"a power's exponent is {k}: a program's numbers are finite")
    written = _number(k)
    return f"({written})" if k < 0 else written
