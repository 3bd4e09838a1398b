"""The autograd check's diagnosis, made where the learner's code is (the sandbox's Python): what
the learner's own `Value` class did wrong, named by the method and the line of their source.

The page compares every `.grad` with the server's trace (static/js/sandbox/autograd-check.js);
this module says why they differ, from facts only the running code has:

- each op node's forward: its stored data against the table's op of its operands' stored data
  (a wrong `exp` formula is found at `exp`, not at the nodes after it);
- each op node's own local derivatives, measured by calling its `_backward` alone (every grad 0,
  the node's own 1) and read off its operands' grads, against the table's; called again with
  the operands' grads already set, whether it accumulates (`+=`) or assigns (`=`);
- the operators the class defines, called on numbers (`2 - x` must be -1 at x = 3: a `__rsub__`
  that returns `self - other` builds a graph that agrees with itself and is still wrong);
- with every local derivative right, the gradients' pattern: a visit order that is not the
  reverse of a topological sort (a sort not reversed, a recursive backward without one) is
  recognised by replaying the candidate orders on the learner's graph;
- where every gradient under the result has vanished (a saturated tanh at the top: the code's
  and the chain rule's are all within `near`'s absolute tolerance of 0), the numbers agree
  whatever the code does: each op's `_backward` is replayed all the same, and a wrong local
  derivative, or an `=` where a node here takes two contributions, is named (`vanished`).

Every cause names the learner's method (`exp`, `__rsub__`) and a line of their source, found
from the code objects Python keeps (a `_backward` closure knows the method it was made in).
Everything measured is put back: the grads are the learner's again when this returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrule.engine.ops import OPS, apply
from chainrule.engine.value_reader import (
    ABSOLUTE_TOLERANCE,
    OPERATOR_METHODS,
    children_of,
    near,
    spelled_op,
)
from chainrule.sandbox.watch import CODE_FILE, as_float

PROBE_VALUE = 3.0  # the Value's data in a probe of an operator
PROBE_NUMBER = 2.0  # the plain number on the other side (2 - 3 ≠ 3 - 2, 2 / 3 ≠ 3 / 2)
SENTINEL_GRAD = 0.5  # an operand's grad before a `_backward` is replayed: kept (+=) or lost (=)
# The node's own grad when its `_backward` is replayed: not 1, so that a `_backward` that
# forgets `* out.grad` is seen.
UPSTREAM_GRAD = 1.5
# The visit orders a backward() may use, replayed on the learner's graph when every op is right.
ORDERS = ("not_reversed", "recursive", "no_sort")
PATTERN_DEPTH = 3  # how deep the shape an operator made is followed (`self + (-other)`: 2)
# sum() starts from the int 0: `0 + Value` calls Value.__radd__ (Python's own words below).
RADD_FIX = "def __radd__(self, other): return self + other"
REFLECTED_FIXES = {
    "+": RADD_FIX,
    "-": "def __rsub__(self, other): return (-self) + other",
    "*": "def __rmul__(self, other): return self * other",
    "/": "def __rtruediv__(self, other): return self ** -1 * other",
}


def reflected_fix(message: str) -> dict[str, str] | None:
    """For Python's `unsupported operand type(s) for -: 'int' and 'Value'`: the one-line method
    the learner's class lacks ({"method", "fix"}), else None."""
    prefix = "unsupported operand type(s) for "
    if prefix not in message or "and '" not in message:
        return None
    symbol = message.split(prefix, 1)[1].split(":", 1)[0].strip()
    left = message.split(": '", 1)[1].split("'", 1)[0] if ": '" in message else ""
    if symbol not in REFLECTED_FIXES or left not in ("int", "float"):
        return None
    fix = REFLECTED_FIXES[symbol]
    return {"method": fix.split("(", 1)[0].removeprefix("def "), "fix": fix}


class _Source:
    """The learner's code, for naming a method and a line."""

    def __init__(self, code: str) -> None:
        self.lines = code.split("\n")

    def text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def lines_of(self, code: Any) -> list[int]:
        """The lines of `code` (a code object of the learner's), in order."""
        if getattr(code, "co_filename", None) != CODE_FILE:
            return []
        return sorted({line for _, _, line in code.co_lines() if line})

    def line_with(self, code: Any, *needles: str) -> int | None:
        """The first line of `code` holding every needle, else its first line after the def."""
        lines = self.lines_of(code)
        for line in lines:
            if all(needle in self.text(line) for needle in needles):
                return line
        return lines[0] if lines else None


def _backward_code(node: Any) -> Any:
    return getattr(getattr(node, "_backward", None), "__code__", None)


def _method_of(node: Any) -> tuple[str | None, Any]:
    """The method that made `node` (`exp`, `__mul__`) and its code object, from the
    `_backward` closure it was given (`Value.exp.<locals>._backward`)."""
    code = _backward_code(node)
    qualname = getattr(code, "co_qualname", "") or ""
    parts = qualname.split(".")
    if len(parts) >= 3 and parts[-2] == "<locals>":
        method = parts[-3]
        function = getattr(type(node), method, None)
        return method, getattr(function, "__code__", None)
    return None, None


def _method_for(node: Any, op: str) -> tuple[str | None, Any]:
    """The learner's method that makes nodes of `op`: the one its `_backward` was made in,
    else the class's method named as the node spells its op (`tanh`) or as Python spells the
    operator (`__add__`)."""
    method, code = _method_of(node)
    if method is not None and method != "__init__":
        return method, code
    cls = type(node)
    names = [spelled_op(node), op, OPS[op].public, *OPS[op].micrograd_ops]
    names += [m for m, (key, position) in OPERATOR_METHODS.items() if key == op and not position]
    for name in names:
        code = getattr(getattr(cls, name, None), "__code__", None)
        if name.isidentifier() and code is not None:
            return name, code
    return None, None


def _closure_names(node: Any, children: list[Any]) -> list[str | None]:
    """The name each child has in `node._backward`'s closure (`self`, `other`), or None."""
    backward = getattr(node, "_backward", None)
    code, cells = getattr(backward, "__code__", None), getattr(backward, "__closure__", None)
    names: list[str | None] = [None] * len(children)
    if code is None or not cells:
        return names
    for name, cell in zip(code.co_freevars, cells, strict=False):
        try:
            held = cell.cell_contents
        except ValueError:
            continue
        for k, child in enumerate(children):
            if held is child and names[k] is None:
                names[k] = name
    return names


def _pattern(made: Any, probed: Any, depth: int) -> Any:
    """The shape of what an operator made: ("op", [parts]) down to "any" (the Value it was
    called on) and "num" (a number it wrapped); None deeper than `depth`."""
    if made is probed:
        return "any"
    children = children_of(made)
    if not children:
        return "num"
    if depth == 0:
        return None
    parts = [_pattern(child, probed, depth - 1) for child in children]
    return None if None in parts else (spelled_op(made), parts)


class Check:
    """The diagnosis of one run (`facts()`): `program` is the reader's Program of the graph,
    `stale` the indices of nodes that held a gradient when backward() began."""

    def __init__(
        self, program: Any, code: str, stale: list[int], backward_line: int | None = None
    ) -> None:
        self.program, self.source, self.stale = program, _Source(code), stale
        self.backward_line = backward_line  # the line that called backward()
        self.objects = program.objects
        self.count = len(self.objects)
        self.root = self.count - 1
        self.theirs = [as_float(getattr(node, "grad", math.nan)) for node in self.objects]

    # ---- the chain rule on the learner's graph ----------------------------------------------

    def _locals(self, data: list[float]) -> list[list[float]]:
        program = self.program
        # An opaque node's local derivatives are its own `_backward`'s (the program's too).
        return [
            list(apply(op, [data[j] for j in inputs], exponent or 0.0)[1])
            if op else list(program.opaque.get(i, []))
            for i, (op, inputs, exponent) in enumerate(zip(
                program.ops, program.inputs, program.exponents, strict=True
            ))
        ]  # fmt: skip

    def _grads(self, local: list[list[float]], order: list[int], seed: float = 1.0) -> list[float]:
        grads = [0.0] * self.count
        grads[self.root] = seed
        for i in order:
            for j, d in zip(self.program.inputs[i], local[i], strict=False):
                grads[j] += d * grads[i]
        return grads

    def _checked(self) -> list[int]:
        """The nodes the page compares (a constant's gradient is not shown)."""
        reachable = [False] * self.count
        reachable[self.root] = True
        for i in range(self.root, -1, -1):
            if reachable[i]:
                for j in self.program.inputs[i]:
                    reachable[j] = True
        return [i for i in range(self.count) if reachable[i] and not self.program.consts[i]]

    # ---- the facts -------------------------------------------------------------------------

    def facts(self) -> dict[str, Any]:
        """{verdict, checked, wrong: [node index], cause: {...} | None, vanished} (module
        docstring)."""
        data = [as_float(node.data) for node in self.objects]
        local = self._locals(data)
        ours = self._grads(local, list(range(self.root, -1, -1)))
        checked = self._checked()
        wrong = [i for i in checked if not near(self.theirs[i], ours[i])]
        vanished = not wrong and self._vanished(checked, ours)
        cause = self._probe() or self._forward(data)
        if cause is None and wrong:
            cause = self._why(local, ours, wrong)
        elif cause is None and vanished:
            cause = self._replayed(local, lossless_overwrite=False)
        return {
            "verdict": "disagree" if wrong or cause else "agree",
            "checked": len(checked),
            "wrong": wrong,
            "cause": cause,
            "vanished": vanished,
        }

    def _vanished(self, checked: list[int], ours: list[float]) -> bool:
        """Whether every gradient under the result, the code's and the chain rule's, is within
        `near`'s absolute tolerance of 0: they agree whatever the code's backward does."""
        under = [i for i in checked if i != self.root]
        return bool(under) and all(
            abs(ours[i]) <= ABSOLUTE_TOLERANCE and abs(self.theirs[i]) <= ABSOLUTE_TOLERANCE
            for i in under
        )

    def _forward(self, data: list[float]) -> dict[str, Any] | None:
        """The first op node whose stored data does not follow from its operands'."""
        program = self.program
        for i, op in enumerate(program.ops):
            if op is None:
                continue
            operands = [data[j] for j in program.inputs[i]]
            follows = apply(op, operands, program.exponents[i] or 0.0)[0]
            if not near(data[i], follows):
                method, code = _method_for(self.objects[i], op)
                return self._cause("forward", i, op, method, code, theirs=data[i], ours=follows)
        return None

    def _probe(self) -> dict[str, Any] | None:
        """The first operator the learner's class defines that computes a wrong number."""
        cls = type(self.objects[self.root])
        for method, (op, position) in OPERATOR_METHODS.items():
            function = cls.__dict__.get(method)
            if op == "**k":
                continue  # its exponent is the learner's choice: its nodes are checked instead
            if getattr(getattr(function, "__code__", None), "co_filename", None) != CODE_FILE:
                continue  # not the learner's (micrograd's own is right)
            operands = [PROBE_VALUE, PROBE_NUMBER][: OPS[op].arity]
            if position == 1:
                operands.reverse()
            try:
                value = cls(PROBE_VALUE)
                made = function(value, *operands[1:] if position == 0 else operands[:1])
                got = as_float(made.data)
            except Exception:  # noqa: BLE001 - a probe the class does not take proves nothing
                continue
            expected = apply(op, operands)[0]
            if not near(got, expected):
                code = function.__code__
                line = self._line_making_out(code)
                probe = OPS[op].micrograd.format(*(f"{x:g}" for x in operands))
                return {"kind": "forward", "method": method, "line": line, "op": op,
                        "node": None, "nodes": self._made_like(made, value),
                        "theirs": got, "ours": expected, "probe": probe}  # fmt: skip
        return None

    def _made_like(self, made: Any, probed: Any) -> list[int]:
        """The graph's nodes of the shape the probed operator made (`made`, from the Value
        `probed` and a number): the same ops down to a Value of the graph and the number
        wrapped as a constant (`2 - a` through a `__rsub__` that returns `self - other` is
        `a + (-2)`). The code's own `a - 2` has that shape too; the learner's graph keeps no
        trace of which method made a node, so both are ringed."""
        pattern = _pattern(made, probed, PATTERN_DEPTH)
        if pattern is None or "num" not in repr(pattern):
            return []
        index = {id(node): i for i, node in enumerate(self.objects)}
        consts = self.program.consts

        def matches(i: int, shape: Any) -> bool:
            if shape == "any":
                return True
            if shape == "num":
                return bool(consts[i])
            op, parts = shape
            node = self.objects[i]
            children = [index.get(id(child)) for child in children_of(node)]
            if spelled_op(node) != op or len(children) != len(parts) or None in children:
                return False
            orders = [children, children[::-1]] if len(children) == 2 else [children]
            return any(
                all(matches(j, part) for j, part in zip(order, parts, strict=True))
                for order in orders
            )

        return [i for i in range(self.count) if self.program.ops[i] and matches(i, pattern)]

    def _why(self, local: list[list[float]], ours: list[float], wrong: list[int]) -> dict:
        theirs = self.theirs
        if not near(theirs[self.root], 1.0):
            return {"kind": "seed", "node": self.root, "theirs": theirs[self.root],
                    "method": "backward", "line": self._backward_line()}  # fmt: skip
        stale = [i for i in self.stale if i in wrong]
        if stale:
            return {"kind": "not_reset", "nodes": stale, "count": len(stale),
                    "line": self.backward_line}  # fmt: skip
        return self._replayed(local) or self._order(local, wrong)

    def _replayed(
        self, local: list[list[float]], *, lossless_overwrite: bool = True
    ) -> dict[str, Any] | None:
        """The first op node whose `_backward`, replayed alone, breaks the rule (`_replay`), or
        None. Not `lossless_overwrite`: an `=` is named only where it loses something here (an
        operand of the node takes another contribution too), as the numbers would show it."""
        program = self.program
        uses = [0] * self.count
        for inputs in program.inputs:
            for j in inputs:
                uses[j] += 1
        for i, op in enumerate(program.ops):
            if op is None or not program.inputs[i]:
                continue
            cause = self._replay(i, op, local[i])
            if cause is None:
                continue
            if cause["kind"] == "overwrite" and not lossless_overwrite:
                if all(uses[j] < 2 for j in program.inputs[i]):
                    continue  # each operand's one contribution: nothing for `=` to lose
            return cause
        return None

    def _replay(self, i: int, op: str, rule: list[float]) -> dict[str, Any] | None:
        """Node `i`'s `_backward` called alone: its local derivatives and whether it
        accumulates, against the rule's (None when they agree)."""
        node = self.objects[i]
        children = list(dict.fromkeys(self.program.inputs[i]))  # a merged operand once
        values = [self.objects[j] for j in children]
        method, code = _method_for(node, op)
        backward = getattr(node, "_backward", None)
        if not callable(backward):
            return None
        try:
            saved = [(v, v.grad) for v in (node, *values)]
        except Exception:  # noqa: BLE001 - a Value without a grad: nothing to replay
            return None
        try:
            for v in values:
                v.grad = 0.0
            node.grad = UPSTREAM_GRAD
            backward()
            measured = [as_float(v.grad) / UPSTREAM_GRAD for v in values]
            for v in values:
                v.grad = SENTINEL_GRAD
            node.grad = UPSTREAM_GRAD
            backward()
            again = [(as_float(v.grad) - SENTINEL_GRAD) / UPSTREAM_GRAD for v in values]
        except Exception:  # noqa: BLE001 - their _backward raising is their bug, said as unknown
            return None
        finally:
            for v, grad in saved:
                v.grad = grad
        expected = [0.0] * len(children)
        for j, d in zip(self.program.inputs[i], rule, strict=False):
            expected[children.index(j)] += d
        if all(m == 0.0 for m in measured) and any(e != 0.0 for e in expected):
            default = _backward_code(self._a_leaf())
            if default is not None and _backward_code(node) is default:
                return self._cause("no_backward", i, op, method, code)
        for m, a in zip(measured, again, strict=True):
            if not near(a, m):  # the operand's grad before it was not kept: `=`, not `+=`
                return self._cause("overwrite", i, op, method, _backward_code(node) or code,
                                   operand=None)  # fmt: skip
        for k, (m, e) in enumerate(zip(measured, expected, strict=True)):
            if not near(m, e):
                names = _closure_names(node, values)
                return self._cause("local", i, op, method, _backward_code(node) or code,
                                   theirs=m, ours=e, operand=names[k],
                                   did=self._did(i, children[k], m))  # fmt: skip
        return None

    def _did(self, i: int, j: int, used: float) -> str | None:
        """What the learner's local derivative is, when the numbers say so: the operand's
        data ("input"), the result's ("output"), 1 ("one")."""
        candidates = {"input": as_float(self.objects[j].data),
                      "output": as_float(self.objects[i].data), "one": 1.0}  # fmt: skip
        for name, value in candidates.items():
            if near(used, value):
                return name
        return None

    def _a_leaf(self) -> Any:
        for node, inputs in zip(self.objects, self.program.inputs, strict=True):
            if not inputs:
                return node
        return None

    def _order(self, local: list[list[float]], wrong: list[int]) -> dict[str, Any] | None:
        """A visit order that gives exactly the learner's gradients, replayed on their graph."""
        replays: dict[str, Callable[[], list[float]]] = {
            "not_reversed": lambda: self._grads(local, list(range(self.count))),
            "recursive": lambda: self._recursive(local, once=False),
            "no_sort": lambda: self._recursive(local, once=True),
        }
        checked = self._checked()
        for kind in ORDERS:
            try:
                grads = replays[kind]()
            except RecursionError:
                continue
            if all(near(self.theirs[i], grads[i]) for i in checked):
                return {"kind": "order", "order": kind, "method": "backward",
                        "line": self._backward_line(), "nodes": wrong}  # fmt: skip
        return {"kind": "unknown", "nodes": wrong}

    def _kept_order(self, i: int) -> list[int]:
        """Node `i`'s operands in the order its Value keeps them (a set's own order)."""
        index = {id(node): k for k, node in enumerate(self.objects)}
        kept = [index.get(id(child)) for child in children_of(self.objects[i])]
        return [k for k in kept if k is not None] or list(dict.fromkeys(self.program.inputs[i]))

    def _recursive(self, local: list[list[float]], once: bool) -> list[float]:
        """A backward that calls a node's `_backward`, then its children's, depth first, in
        the order the Value keeps them: every path again (`once` False), or each node at its
        first visit (a visited set without a sort)."""
        grads = [0.0] * self.count
        grads[self.root] = 1.0
        inputs = self.program.inputs
        seen: set[int] = set()
        stack = [self.root]
        visits = 0
        while stack:
            i = stack.pop()
            if once and i in seen:
                continue
            seen.add(i)
            visits += 1
            if visits > 50 * self.count:
                raise RecursionError("too many paths to replay")
            for j, d in zip(inputs[i], local[i], strict=False):
                grads[j] += d * grads[i]
            stack.extend(reversed(self._kept_order(i)))
        return grads

    def _backward_line(self) -> int | None:
        cls = type(self.objects[self.root])
        code = getattr(getattr(cls, "backward", None), "__code__", None)
        return code.co_firstlineno if getattr(code, "co_filename", None) == CODE_FILE else None

    def _cause(self, kind: str, i: int, op: str, method: str | None, code: Any,
               **more: Any) -> dict[str, Any]:  # fmt: skip
        """A cause at node `i` made by `method` (whose code object is `code`): the line of
        their source it names (the line updating the operand, or making `out`)."""
        line = None
        if code is not None:
            operand = more.get("operand")
            if kind in ("local", "overwrite"):
                needle = f"{operand}.grad" if operand else ".grad"
                line = self.source.line_with(code, needle)
            else:
                line = self._line_making_out(code)
            if line is None and getattr(code, "co_filename", None) == CODE_FILE:
                line = code.co_firstlineno
        cause = {"kind": kind, "node": i, "op": op, "method": method, "line": line, **more}
        if op == "**k" and self.program.exponents[i] == -1.0:
            cause["used_by"] = self._user_of("__truediv__", "**")
        return cause

    def _line_making_out(self, code: Any) -> int | None:
        """The line of a method that makes its result (`out = Value(…)`, else its `return`)."""
        for needles in (("out", "="), ("return",)):
            line = self.source.line_with(code, *needles)
            if line is not None and all(n in self.source.text(line) for n in needles):
                return line
        return self.source.line_with(code)

    def _user_of(self, method: str, needle: str) -> dict[str, Any] | None:
        """The learner's `method` when its code uses `needle` (their `/` built on `**`)."""
        function = type(self.objects[self.root]).__dict__.get(method)
        code = getattr(function, "__code__", None)
        line = self.source.line_with(code, needle) if code is not None else None
        if line is None or needle not in self.source.text(line):
            return None
        return {"method": method, "line": line}
