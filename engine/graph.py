"""Build the Value graph of a parsed program, iteratively, keeping only what the root uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .errors import AssignedTwice, BadValue, LimitExceeded, UseBeforeAssign
from .parser import Expr, Statement
from .value import DERIVED, Value


@dataclass(frozen=True)
class Limits:
    """Optional limits; None means no limit but memory.

    The server uses Limits(100_000, 20_000, 200).
    """

    max_source_chars: int | None = None
    max_nodes: int | None = None
    max_depth: int | None = None


@dataclass
class Graph:
    """The built graph: `nodes` in id order (node.id == index), the `root`, the named leaves
    by first appearance, and program-level warnings."""

    source: str
    nodes: list[Value]
    root: Value
    leaves: list[tuple[str, Value]]
    warnings: list[dict[str, Any]] = field(default_factory=list)
    expanded: bool = False


def check_values(values: dict[str, Any] | None) -> dict[str, float]:
    """Leaf values as floats; raises BadValue for anything but a finite number."""
    checked: dict[str, float] = {}
    for name, value in (values or {}).items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadValue(f"the value of '{name}' must be a number, got {type(value).__name__}")
        number = float(value)
        if not math.isfinite(number):
            raise BadValue(f"the value of '{name}' must be a finite number, got {number}")
        checked[name] = number
    return checked


def position(source: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of an offset."""
    line = source.count("\n", 0, offset) + 1
    return line, offset - (source.rfind("\n", 0, offset) + 1) + 1


def build(
    source: str,
    statements: list[Statement],
    values: dict[str, float],
    *,
    expand_derived: bool = False,
    max_nodes: int | None = None,
) -> Graph:
    """Check names, prune statements the root does not use, and build the Value graph.

    Raises AssignedTwice, UseBeforeAssign or LimitExceeded (more than `max_nodes` nodes).
    """
    _check_names(source, statements)
    kept = _used_statements(statements)
    builder = _Builder(source, values, expand_derived, max_nodes)
    warnings: list[dict[str, Any]] = []
    for index, statement in enumerate(statements):
        if not kept[index]:
            line, column = position(source, statement.target_start)
            if statement.target:
                message = (
                    f"line {line}: '{statement.target}' is not used by the result "
                    f"(the last statement), so it is left out of the graph"
                )
            else:
                message = (
                    f"line {line}: this expression is not used by the result "
                    f"(the last statement), so it is left out of the graph"
                )
            warnings.append({"type": "unused", "message": message, "line": line, "column": column})
            continue
        builder.statement(statement)
    root = builder.last
    assert root is not None
    warnings.extend(builder.warnings)
    leaf_names = {name for name, _ in builder.leaves}
    for name in values:
        if name not in leaf_names:
            warnings.append(
                {
                    "type": "unknown_value",
                    "message": f"'{name}' is not a leaf of this graph, so its value is ignored",
                    "line": None,
                    "column": None,
                }
            )
    return Graph(source, builder.nodes, root, builder.leaves, warnings, expand_derived)


def _check_names(source: str, statements: list[Statement]) -> None:
    assigned: dict[str, int] = {}
    for index, statement in enumerate(statements):
        name = statement.target
        if name is None:
            continue
        if name in assigned:
            first = statements[assigned[name]].line
            message = (
                f"'{name}' is assigned twice (lines {first} and {statement.line})"
                if first != statement.line
                else f"'{name}' is assigned twice on line {first}: give the second one a new name"
            )
            raise AssignedTwice(
                message,
                source,
                statement.target_start,
                statement.target_end,
            )
        assigned[name] = index
    for index, statement in enumerate(statements):
        for use in statement.expr.names():
            where = assigned.get(use.text)
            if where is None or where < index:
                continue
            if where == index:
                message = f"'{use.text}' is used in its own definition on line {statement.line}"
            else:
                message = (
                    f"'{use.text}' is used on line {statement.line} "
                    f"but assigned on line {statements[where].line}"
                )
            raise UseBeforeAssign(message, source, use.start, use.end)


def _used_statements(statements: list[Statement]) -> list[bool]:
    kept = [False] * len(statements)
    kept[-1] = True
    needed = {use.text for use in statements[-1].expr.names()}
    for index in range(len(statements) - 2, -1, -1):
        statement = statements[index]
        if statement.target is not None and statement.target in needed:
            kept[index] = True
            needed.update(use.text for use in statement.expr.names())
    return kept


class _Builder:
    def __init__(
        self, source: str, values: dict[str, float], expand: bool, max_nodes: int | None
    ) -> None:
        self.source = source
        self.values = values
        self.expand = expand
        self.max_nodes = max_nodes
        self.nodes: list[Value] = []
        self.names: dict[str, Value] = {}
        self.leaves: list[tuple[str, Value]] = []
        self.warnings: list[dict[str, Any]] = []
        self.last: Value | None = None

    def add(self, node: Value, start: int, end: int, kind: str | None = None) -> Value:
        if self.max_nodes is not None and len(self.nodes) >= self.max_nodes:
            raise LimitExceeded(
                f"the graph needs more than {self.max_nodes:,} nodes; "
                f"the limit is {self.max_nodes:,}",
                self.source,
                start,
                end,
            )
        node.id = len(self.nodes)
        node.start = start
        node.end = end
        if kind is not None:
            node.kind = kind
        self.nodes.append(node)
        return node

    def leaf(self, name: str, declared: float, start: int, end: int) -> Value:
        node = self.add(Value(self.values.get(name, declared)), start, end, "leaf")
        node.label = name
        self.names[name] = node
        self.leaves.append((name, node))
        return node

    def statement(self, statement: Statement) -> None:
        expr = statement.expr
        name = statement.target
        if name is not None and expr.kind == "num":
            self.last = self.leaf(name, expr.value, statement.target_start, expr.end)
            return
        if name is not None and expr.kind == "name":
            node = self.expression(expr)
            self.names[name] = node
            line, column = position(self.source, statement.target_start)
            self.warnings.append(
                {
                    "type": "alias",
                    "message": f"line {line}: '{name}' is another name for '{expr.text}'; "
                    f"the graph shows it as '{node.label or expr.text}'",
                    "line": line,
                    "column": column,
                }
            )
            self.last = node
            return
        node = self.expression(expr)
        if name is not None:
            node.label = name
            self.names[name] = node
        self.last = node

    def expression(self, expr: Expr) -> Value:
        """The node of `expr`, building any new nodes in post-order (left to right)."""
        results: list[Value] = []
        stack: list[tuple[Expr, bool]] = [(expr, False)]
        while stack:
            current, ready = stack.pop()
            kind = current.kind
            if kind == "num":
                node = self.add(Value(current.value), current.start, current.end, "const")
                node.label = current.text
                results.append(node)
            elif kind == "name":
                found = self.names.get(current.text)
                if found is None:
                    found = self.leaf(current.text, 1.0, current.start, current.end)
                results.append(found)
            elif not ready:
                stack.append((current, True))
                for child in reversed(_built_children(current)):
                    stack.append((child, False))
            else:
                count = len(_built_children(current))
                inputs = tuple(results[len(results) - count :])
                del results[len(results) - count :]
                results.append(self.operation(current, inputs))
        return results[0]

    def operation(self, expr: Expr, inputs: tuple[Value, ...]) -> Value:
        start, end = expr.start, expr.end
        if expr.kind == "neg":
            op = "neg"
        elif expr.kind == "call":
            op = expr.op or ""
        elif expr.op == "**" and expr.args[1].kind == "num":
            return self.add(Value.make("**k", inputs, expr.args[1].value), start, end)
        else:
            op = expr.op or ""
        if op in DERIVED and self.expand:
            return self.expanded(op, inputs, start, end)
        return self.add(Value.make(op, inputs), start, end)

    def expanded(self, op: str, inputs: tuple[Value, ...], start: int, end: int) -> Value:
        """micrograd's primitives: a - b = a + b*(-1), a / b = a * b**-1, -a = a * -1."""
        if op == "/":
            inverse = self.add(Value.make("**k", (inputs[1],), -1.0), start, end)
            return self.add(Value.make("*", (inputs[0], inverse)), start, end)
        minus_one = self.add(Value(-1.0), start, end, "const")
        minus_one.label = "-1"
        if op == "neg":
            return self.add(Value.make("*", (inputs[0], minus_one)), start, end)
        negated = self.add(Value.make("*", (inputs[1], minus_one)), start, end)
        return self.add(Value.make("+", (inputs[0], negated)), start, end)


def _built_children(expr: Expr) -> tuple[Expr, ...]:
    """Inputs that become nodes: a literal exponent of `**` is part of its node, not an input."""
    if expr.kind == "binary" and expr.op == "**" and expr.args[1].kind == "num":
        return expr.args[:1]
    return expr.args
