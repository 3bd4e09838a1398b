"""Build the Value graph of a parsed program, iteratively, keeping only what the root uses."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, islice
from operator import not_
from typing import Any, NamedTuple

from .cancel import check as check_cancelled
from .errors import (
    AssignedTwice,
    BadValue,
    LimitExceeded,
    LineIndex,
    UseBeforeAssign,
    quoted,
)
from .formulas import Formula
from .functions import Function, call_value, function_of, operand_count
from .i18n import Count, msg
from .ops import DERIVED, OPS, expansion_step
from .parser import Expr, Statement
from .paste import line_note, shown
from .value import Value

# The server's bounds on a graph, said here once: app/settings.py's defaults (`max_nodes`,
# `max_depth`, `max_value_nodes`) and the page's sandbox's (chainrule/sandbox/runner.py, which
# runs where the settings do not). A program the server parses has at most MAX_NODES nodes
# nested MAX_DEPTH deep; a graph read from a Value (a kernel's, the sandbox's) at most
# MAX_VALUE_NODES nodes.
MAX_NODES = 20_000
MAX_DEPTH = 200
MAX_VALUE_NODES = 100_000


@dataclass(frozen=True)
class Limits:
    """Optional limits; None means no limit but memory.

    The server bounds a request's program by its work: Limits(None, MAX_NODES, MAX_DEPTH,
    100_000 tokens), its characters by the request body's bytes (docs/api.md, "Limits").
    """

    max_source_chars: int | None = None
    max_nodes: int | None = None
    max_depth: int | None = None
    max_tokens: int | None = None  # names, numbers, strings, operators (lexer.token_past)


class Group(NamedTuple):
    """Nodes drawn together: the nodes one statement built (`kind` "statement", `root` being the
    statement's value), or a single leaf (`kind` "leaf": a leaf is a group of its own, declared
    (`x1 = 0.5`) or first used inside a statement, since other statements read it too). A
    tuple, not a dataclass: a graph of 10,000 leaves makes 10,000 of them."""

    kind: str
    root: int
    nodes: tuple[int, ...]


@dataclass
class Graph:
    """The built graph: `nodes` in id order (node.id == index), the `root`, the named leaves
    by first appearance, program-level warnings (at most MAX_WARNINGS_OF_A_KIND of a kind, then
    one summary), whether derived operations were expanded, the expansion `helpers`, and the
    `groups` (every node in exactly one, in the order the statements built them)."""

    source: str
    nodes: list[Value]
    root: Value
    leaves: list[tuple[str, Value]]
    warnings: list[dict[str, Any]] = field(default_factory=list)
    expanded: bool = False
    # Ids of the nodes `expand_derived` made inside a derived operation (`b·(-1)` of `a - b`).
    helpers: set[int] = field(default_factory=set)
    groups: list[Group] = field(default_factory=list)
    # The functions the program defines that the graph calls (with those they call), in the
    # order they are defined.
    functions: list[Function] = field(default_factory=list)
    # The nodes the calls of the program's functions stand for beyond their own one node each
    # (a call evaluates its body): `len(nodes) + called_nodes` is what one forward pass does.
    called_nodes: int = 0

    def work(self, call_cost: float = 1.0) -> int:
        """What one pass over the graph costs, in plain nodes: each node once, and each node a
        call of the program's function stands for (its body, calls in it expanded) `call_cost`
        times (a body is evaluated through Value objects: dearer than a plain node where the
        pass recomputes plain nodes with C operators)."""
        return len(self.nodes) + math.ceil(self.called_nodes * call_cost)


def check_values(values: dict[str, Any] | None) -> dict[str, float]:
    """Leaf values as floats; raises BadValue for anything but a finite number."""
    checked: dict[str, float] = {}
    for name, value in (values or {}).items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadValue(
                msg("error.value_not_number", name=quoted(name), type=type(value).__name__)
            )
        number = float(value)
        if not math.isfinite(number):
            raise BadValue(msg("error.value_not_finite", name=quoted(name), value=str(number)))
        checked[name] = number
    return checked


def build(
    source: str,
    statements: Sequence[Statement],
    values: dict[str, float],
    *,
    expand_derived: bool = False,
    max_nodes: int | None = None,
    notes: Sequence[dict[str, Any]] = (),
) -> Graph:
    """Check names, prune statements the root does not use, and build the Value graph.
    `notes` (the parser's skipped lines) lead the warnings.

    A name assigned again (`x = x * w + b`, `c += 1`) names a new node, its next version: the
    graph labels it `x₂`, `x₃`, … and later uses read the latest version.
    Raises AssignedTwice, UseBeforeAssign or LimitExceeded (more than `max_nodes` nodes).
    """
    # Statement.names() of each, inline: one call fewer a statement of a 50,000-line program.
    uses = [[expr for expr in statement.postfix if expr.kind == "name"] for statement in statements]
    _check_names(source, statements, uses)
    kept = _used_statements(statements, uses)
    lines = LineIndex(source)
    builder = _Builder(source, lines, values, expand_derived, max_nodes)
    warnings: list[dict[str, Any] | Deferred] = [dict(note) for note in notes]
    assignments: dict[str, int] = {}  # (a dict: a Counter's first count of a name is a call)
    nodes = builder.nodes
    for index, statement in enumerate(statements):
        target = statement.target
        version = 1
        if target is not None:
            version = assignments[target] = assignments.get(target, 0) + 1
        if not kept[index]:  # no work to cancel: a name forgotten, a warning deferred
            builder.left_out(statement)
            # Made only if sent: 50,000 unused statements send 11 warnings.
            warnings.append(Deferred("unused", partial(_unused, statement, lines)))
            continue
        check_cancelled()
        first = len(nodes)
        builder.statement(statement, version)
        builder.group(first)
        if target is not None and builder.pruned:
            builder.pruned.discard(target)
        if statement.labels:
            builder.labels(statement)
    assert builder.last is not None
    warnings.extend(builder.warnings)
    leaf_names = {name for name, _ in builder.leaves}
    warnings.extend(_unknown_value(name) for name in values if name not in leaf_names)
    return Graph(
        source, builder.nodes, builder.last, builder.leaves, limit_warnings(warnings),
        expand_derived, builder.helpers, builder.groups, called_functions(statements, kept),
        builder.called_nodes,
    )  # fmt: skip


def called_functions(statements: Sequence[Statement], kept: list[bool]) -> list[Function]:
    """The functions the kept statements call and those their bodies call, by line."""
    found: dict[str, Function] = {}
    stack = [
        function
        for statement, keep in zip(statements, kept, strict=True)
        if keep
        for expr in statement.postfix
        if expr.kind == "call" and (function := function_of(expr)) is not None
    ]
    while stack:
        function = stack.pop()
        if function.name not in found:
            found[function.name] = function
            stack.extend(f for expr in function.postfix if (f := function_of(expr)) is not None)
    return sorted(found.values(), key=lambda function: function.start)


def _unused(statement: Statement, lines: LineIndex) -> dict[str, Any]:
    """The warning of a statement the root does not use."""
    line, column = lines.position(statement.target_start)
    if statement.target:
        unused = msg("warning.unused", name=quoted(statement.target))
    else:
        unused = msg("warning.unused_expression")
    message = msg("warning.on_line", line=line, message=unused)
    return {"type": "unused", "message": message, "line": line, "column": column}


def _unknown_value(name: str) -> dict[str, Any]:
    """The warning of a request's value for a name that is no leaf."""
    message = msg("warning.unknown_value", name=quoted(name))
    return {"type": "unknown_value", "message": message, "line": None, "column": None}


MAX_WARNINGS_OF_A_KIND = 10
# The kinds whose summary (`warning.more.<kind>`) says from which line the rest are: the others
# are not about a line of the source.
_MORE_FROM_LINE = ("unused", "alias", "skipped")
_MORE = (*_MORE_FROM_LINE, "unknown_value", "never_visited", "late")


class Deferred(NamedTuple):
    """A warning made only if `limit_warnings` keeps it (or summarises from it): its type, and
    what makes it."""

    type: str
    make: Callable[[], dict[str, Any]]


def limit_warnings(warnings: Sequence[dict[str, Any] | Deferred]) -> list[dict[str, Any]]:
    """At most MAX_WARNINGS_OF_A_KIND warnings of each type, in order; where a type has more,
    one warning of that type in their place says how many more there are (with the position
    of the first of them), so 50,000 unused statements answer 11 warnings, not 50,000 (and
    make 11: a Deferred warning is made only when kept). Only the warnings it keeps are
    looked at one by one: those of the types with more are found by a scan in C."""
    types = [w.type if type(w) is Deferred else w["type"] for w in warnings]
    totals = Counter(types)
    over = {kind for kind, total in totals.items() if total > MAX_WARNINGS_OF_A_KIND + 1}
    positions = range(len(types))
    if over:  # every warning of the other types, and the first 11 of each of these
        kept_at = list(compress(positions, map(not_, map(over.__contains__, types))))
        for kind in over:
            kept_at += islice(
                compress(positions, map(kind.__eq__, types)), MAX_WARNINGS_OF_A_KIND + 1
            )
        kept_at.sort()
    else:
        kept_at = positions
    seen: Counter[str] = Counter()
    kept = []
    for at in kept_at:
        warning, kind = warnings[at], types[at]
        seen[kind] += 1
        if seen[kind] <= MAX_WARNINGS_OF_A_KIND or kind not in over:
            kept.append(warning.make() if type(warning) is Deferred else warning)
            continue
        first = warning.make() if type(warning) is Deferred else warning
        line = first["line"]
        more = Count(totals[kind] - MAX_WARNINGS_OF_A_KIND)
        if kind in _MORE_FROM_LINE and line is not None:
            message = msg(f"warning.more.{kind}", more=more, line=Count(line))
        else:
            message = msg(f"warning.more.{kind if kind in _MORE else 'other'}", more=more)
        kept.append({"type": kind, "message": message, "line": line, "column": first["column"]})
    return kept


def _check_names(source: str, statements: Sequence[Statement], uses: list[list[Expr]]) -> None:
    """Refuse what would be ambiguous: a name's number (its leaf, whose slider bears the name)
    that is not its first assignment, and a name used before its first assignment (it would
    silently be a leaf of value 1)."""
    first: dict[str, int] = {}
    for index, statement in enumerate(statements):
        name = statement.target
        if name is not None and name not in first:
            first[name] = index
        elif name is not None and statement.expr.kind == "num":  # not a new version: a leaf
            message = _assigned_twice(name, statements[first[name]], statement)
            raise AssignedTwice(message, source, statement.target_start, statement.target_end)
    for index, names in enumerate(uses):
        for use in names:
            where = first.get(use.text)
            if where is not None and where >= index:
                message = _used_too_early(source, statements, use, index, where)
                raise UseBeforeAssign(message, source, use.start, use.end)


def _assigned_twice(name: str, earlier: Statement, statement: Statement) -> str:
    """What is wrong with `name = <number>` after `name`'s `earlier` assignment."""
    shown = quoted(name)
    if earlier.expr.kind != "num":
        return msg(
            "error.number_after_computed", name=shown, line=statement.line, computed=earlier.line
        )
    if earlier.line == statement.line:
        return msg("error.assigned_twice_on_line", name=shown, line=earlier.line)
    return msg("error.assigned_twice", name=shown, first=earlier.line, second=statement.line)


def _used_too_early(
    source: str, statements: Sequence[Statement], use: Expr, index: int, where: int
) -> str:
    """What is wrong with `use` in statement `index` of a name first assigned in `where`."""
    statement, name = statements[index], quoted(use.text)
    if where == index and use.start == statement.target_start:  # `d *= 2`, no d yet
        op = _augmented_op(source, use.end)
        return msg("error.nothing_to_change", name=name, line=statement.line, op=op)
    if where == index:
        return msg("error.used_in_own_definition", name=name, line=statement.line)
    later = statements[where]
    if later.line == statement.line:
        _, column = LineIndex(source).position(later.target_start)
        return msg("error.used_before_assigned_on_line", name=name, line=later.line, column=column)
    return msg("error.used_before_assigned", name=name, line=statement.line, assigned=later.line)


def _used_statements(statements: Sequence[Statement], uses: list[list[Expr]]) -> list[bool]:
    """Which statements the root (the last one) depends on. Walking back, a statement is
    needed when its name is: it then answers for that name, and the names it uses (earlier
    versions included) are needed from there on."""
    kept = [False] * len(statements)
    kept[-1] = True
    needed = {use.text for use in uses[-1]}
    for index in range(len(statements) - 2, -1, -1):
        target = statements[index].target
        if target is not None and target in needed:
            kept[index] = True
            needed.discard(target)
            needed.update(use.text for use in uses[index])
    return kept


def _augmented_op(source: str, offset: int) -> str:
    """The `+=` (or `*=`, …) after offset `offset` of `source`."""
    rest = source[offset : offset + 8].lstrip()  # (a no-break space pasted from a page, too)
    return next(op for op in ("**=", "+=", "-=", "*=", "/=") if rest.startswith(op))


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def versioned(name: str, version: int) -> str:
    """The label of a name's `version`-th assignment: `c`, then `c₂`, `c₃`, …"""
    return name if version == 1 else name + str(version).translate(_SUBSCRIPTS)


# A Group from its three fields as one tuple: no call of the NamedTuple's own `__new__` (a
# Python function) for each of a large program's statements.
_group = partial(tuple.__new__, Group)


class _Builder:
    def __init__(
        self,
        source: str,
        lines: LineIndex,
        values: dict[str, float],
        expand: bool,
        max_nodes: int | None,
    ) -> None:
        self.source = source
        self.lines = lines
        self.values = values
        self.expand = expand
        self.max_nodes = max_nodes
        self.nodes: list[Value] = []
        self.names: dict[str, Value] = {}
        self.leaves: list[tuple[str, Value]] = []
        self.warnings: list[dict[str, Any]] = []
        self.last: Value | None = None
        self.helpers: set[int] = set()
        self.groups: list[Group] = []
        # The nodes that calls of the program's functions stand for beyond their own one: they
        # count towards `max_nodes` as their bodies' nodes (each call evaluates its body).
        self.called_nodes = 0
        # Names whose last assignment the root does not use (left out): their labels are moot.
        self.pruned: set[str] = set()

    def add(self, node: Value, start: int, end: int, kind: str | None = None) -> Value:
        nodes = self.nodes
        count = len(nodes)
        if self.max_nodes is not None and count + self.called_nodes >= self.max_nodes:
            raise LimitExceeded(
                msg("error.node_limit", limit=Count(self.max_nodes)),
                self.source,
                start,
                end,
            )
        node.id = count
        node.start = start
        node.end = end
        if kind is not None:
            node.kind = kind
        nodes.append(node)
        return node

    def leaf(self, name: str, declared: float, start: int, end: int) -> Value:
        node = Value(self.values.get(name, declared))  # a leaf: no inputs
        if self.max_nodes is None:  # `add` inline: no limit to check (the server sets one)
            node.id, node.start, node.end = len(self.nodes), start, end
            self.nodes.append(node)
        else:
            self.add(node, start, end)
        node.label = node.name = name
        self.names[name] = node
        self.leaves.append((name, node))
        return node

    def statement(self, statement: Statement, version: int = 1) -> None:
        expr = statement.expr
        name = statement.target
        if name is not None and expr.kind == "num":
            self.last = self.leaf(name, expr.value, statement.target_start, expr.end)
            self.last.label = getattr(expr, "label", name)  # `Value(2.0, label='x1')`
            return
        if name is not None and expr.kind == "name":
            node = self.name(expr)
            self.names[name] = node
            line, column = self.lines.position(statement.target_start)
            alias = msg(
                "warning.alias",
                name=quoted(name),
                other=quoted(expr.text),
                shown=quoted(node.label or expr.text),
            )
            self.warnings.append(
                {
                    "type": "alias",
                    "message": msg("warning.on_line", line=line, message=alias),
                    "line": line,
                    "column": column,
                }
            )
            self.last = node
            return
        node = self.expression(statement.postfix)
        if name is not None:
            node.label = node.name = versioned(name, version)
            self.names[name] = node
        self.last = node

    def left_out(self, statement: Statement) -> None:
        """A statement the root does not use: its name stands for no node any more (its labels
        are moot), unless it only gives a node another name (`b = a`), which labels go through;
        then the labels set after it."""
        name = statement.target
        if name is not None:
            other = self.names.get(statement.expr.text) if statement.expr.kind == "name" else None
            if other is not None:
                self.names[name] = other
            else:
                self.names.pop(name, None)
                self.pruned.add(name)
        self.labels(statement)

    def labels(self, statement: Statement) -> None:
        """Set the display labels the program sets right after `statement` (`e.label = 'e'`) on
        the nodes their names stand for then; a name that stands for none gets a note, unless
        its statement was left out of the graph (unused: its own warning says so)."""
        for name, label, start, end in statement.labels:
            node = self.names.get(name)
            if node is not None:
                node.label = label
            elif name not in self.pruned:
                line, column = self.lines.position(start)
                text = shown(self.source[start:end])
                message = msg("warning.skipped.label_unknown", text=text, name=quoted(name))
                self.warnings.append(line_note("skipped", message, line, column))

    def group(self, first: int) -> None:
        """Group the nodes the statement just built (ids `first` on): each new leaf on its own,
        the rest as the statement's group, whose root is the statement's value."""
        nodes, append = self.nodes, self.groups.append
        inner = []
        for i in range(first, len(nodes)):
            if nodes[i].kind == "leaf":
                append(_group(("leaf", i, (i,))))
            else:
                inner.append(i)
        if inner:  # built in post-order: the last node is the statement's value
            append(_group(("statement", inner[-1], tuple(inner))))

    def name(self, expr: Expr) -> Value:
        """The node a name refers to; a new leaf (value 1 unless given) if it names none."""
        found = self.names.get(expr.text)
        if found is None:
            found = self.leaf(expr.text, 1.0, expr.start, expr.end)
        return found

    def expression(self, postfix: list[Expr]) -> Value:
        """The node of an expression, building its new nodes in post-order (`postfix`)."""
        results: list[Value] = []
        push, pop = results.append, results.pop
        names = self.names
        add = self.add
        nodes, unlimited = self.nodes, self.max_nodes is None
        for expr in postfix:
            kind = expr.kind
            if kind == "name":
                found = names.get(expr.text)
                if found is None:
                    found = self.leaf(expr.text, 1.0, expr.start, expr.end)
                push(found)
            elif kind == "binary":
                op = expr.op
                if op == "+" or op == "*":  # the hot path of large graphs
                    right = pop()
                    node = pop() + right if op == "+" else pop() * right
                    if unlimited:  # `add` inline: no limit to check (the server sets one)
                        node.id, node.start, node.end = len(nodes), expr.start, expr.end
                        nodes.append(node)
                        push(node)
                    else:
                        push(add(node, expr.start, expr.end))
                elif op == "**" and expr.args[1].kind == "num":
                    power = Value.make("**k", (pop(),), expr.args[1].value)
                    push(add(power, expr.start, expr.end))
                else:
                    right = pop()
                    push(self.operation(expr, (pop(), right)))
            elif kind == "num":
                node = add(Value(expr.value), expr.start, expr.end, "const")
                node.label = getattr(expr, "label", expr.text)  # `Value(2.0, label='two')`
                push(node)
            elif kind == "neg" or len(expr.args) == 1:
                push(self.operation(expr, (pop(),)))
            else:  # a call of the program's function of several parameters
                count = len(expr.args)
                inputs = tuple(results[-count:])
                del results[-count:]
                push(self.operation(expr, inputs))
        return results[0]

    def operation(
        self, expr: Expr, inputs: tuple[Value, ...], span: tuple[int, int] | None = None
    ) -> Value:
        """The node of the operation `expr` on `inputs`, spanning `span` (else its own)."""
        start, end = span or (expr.start, expr.end)
        function = function_of(expr)
        if function is not None:
            return self.call(function, inputs, start, end)
        if operand_count(expr) != len(expr.args):  # `x ** 2` in a function's body
            return self.add(Value.make("**k", inputs, expr.args[1].value), start, end)
        op = "neg" if expr.kind == "neg" else expr.op or ""
        if op in DERIVED and self.expand:
            return self.expanded(op, inputs, start, end)
        return self.add(Value.make(op, inputs), start, end)

    def call(self, function: Function, inputs: tuple[Value, ...], start: int, end: int) -> Value:
        """A call of the program's `function`: one node, or with `expand_derived` its body's
        nodes (each a helper spanning the call, as a derived op's expansion)."""
        if not self.expand:
            self.called_nodes += function.nodes - 1
            return self.add(call_value(function, inputs), start, end)

        def helper(node: Value) -> Value:
            self.helpers.add(node.id)
            return node

        def constant(expr: Expr) -> Value:
            node = self.add(Value.constant(expr.value), start, end, "const")
            node.label = expr.text
            return helper(node)

        def made(expr: Expr, operands: tuple[Value, ...]) -> Value:
            return helper(self.operation(expr, operands, (start, end)))

        node = function.build(inputs, made, constant)
        self.helpers.discard(node.id)
        return node

    def expanded(self, op: str, inputs: tuple[Value, ...], start: int, end: int) -> Value:
        """The derived `op` built from micrograd's primitives, as its row's expansion says
        (`a - b` is `a + b * -1`, `a / b` is `a * b ** -1`, `-a` is `a * -1`); the nodes made
        inside it are `helpers`, and every one spans the whole operation."""
        node = self.expansion(OPS[op].expansion, inputs, start, end)  # type: ignore[arg-type]
        self.helpers.discard(node.id)
        return node

    def expansion(self, formula: Formula, inputs: tuple[Value, ...], start: int, end: int) -> Value:
        if formula.head == "var":
            return inputs["ab".index(formula.value)]  # type: ignore[arg-type]
        if formula.head == "num":
            return self.add(Value.constant(formula.value), start, end, "const")  # type: ignore[arg-type]
        key, operands, exponent = expansion_step(formula)
        built = tuple(self.expansion(operand, inputs, start, end) for operand in operands)
        node = self.add(Value.make(key, built, exponent if key == "**k" else None), start, end)
        self.helpers.add(node.id)
        return node
