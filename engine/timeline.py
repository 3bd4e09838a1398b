"""The backward pass as a record of contributions, and the timeline of steps with narration."""

from __future__ import annotations

import math
import re
from typing import Any

from .topo import TopoEvent
from .value import Value

# A contribution while it is being recorded: [edge, to, upstream, local, contribution,
# grad_before, grad_after, lost, late, replaced (the contribution it overwrote, or None),
# id of the node whose visit made it].
Contribution = list[Any]
# A backward visit: (node, upstream grad, contributions).
Visit = tuple[Value, float, list[Contribution]]

TEXT_MAX = 32
FUNCTIONS = frozenset({"relu", "tanh", "exp", "log", "sigmoid"})


def fmt(x: float) -> str:
    """A number for narration: integers plainly, else up to 6 significant digits."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def factor(x: float) -> str:
    """A number as an operand in narration: negatives in parentheses, `1 × (-1)`."""
    text = fmt(x)
    return f"({text})" if text.startswith("-") else text


def number(x: float) -> float | str:
    """A JSON-ready number: non-finite values become "Infinity", "-Infinity" or "NaN"."""
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return "NaN"
    return "Infinity" if x > 0 else "-Infinity"


def edge_offsets(nodes: list[Value]) -> list[int]:
    """Id of each node's first input edge; edges are numbered in (target, index) order."""
    offsets = []
    total = 0
    for node in nodes:
        offsets.append(total)
        total += len(node.inputs)
    return offsets


def backward_pass(
    nodes: list[Value],
    root: Value,
    visit_order: list[Value],
    offsets: list[int],
    overwrite: bool = False,
) -> tuple[list[float], list[Visit]]:
    """Seed root.grad = 1, then visit `visit_order` applying `grad[input] += local × upstream`
    (or `=` when `overwrite`). Returns the grads by node id and every visit's contributions,
    with `lost` (overwritten before its target was visited) and `late` (arrived after its
    target was visited) marked. Does not touch the nodes' own `grad`."""
    grads = [0.0] * len(nodes)
    grads[root.id] = 1.0
    visited = [False] * len(nodes)
    last: list[Contribution | None] = [None] * len(nodes)
    visits: list[Visit] = []
    for node in visit_order:
        upstream = grads[node.id]
        contributions: list[Contribution] = []
        edge = offsets[node.id]
        for index, (child, local) in enumerate(zip(node.inputs, node.local_grads, strict=True)):
            to = child.id
            contribution = local * upstream
            before = grads[to]
            after = contribution if overwrite else before + contribution
            grads[to] = after
            record = [
                edge + index,
                to,
                upstream,
                local,
                contribution,
                before,
                after,
                False,
                visited[to],
                None,
                node.id,
            ]
            if overwrite and not visited[to] and last[to] is not None:
                last[to][7] = True
                record[9] = last[to]
            last[to] = record
            contributions.append(record)
        visited[node.id] = True
        visits.append((node, upstream, contributions))
    return grads, visits


# Runs of non-space, cut at TEXT_MAX + 1: enough to know the text must be truncated.
WORDS = re.compile(rf"\S{{1,{TEXT_MAX + 1}}}")


def short_text(source: str, start: int, end: int) -> str:
    """`source[start:end]` with whitespace runs collapsed, at most TEXT_MAX characters.

    Reads only the first words of the span: a long sum's nodes each span most of the source,
    so collapsing whole spans would make a 20,000-term sum quadratic (minutes)."""
    words: list[str] = []
    length = -1
    for match in WORDS.finditer(source, start, end):
        words.append(match.group())
        length += len(words[-1]) + 1
        if length > TEXT_MAX:
            break
    text = " ".join(words)
    return text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1] + "…"


class Narrator:
    """Short names and formulas of nodes, for narration and the `text`/`expansion` fields."""

    def __init__(self, source: str, nodes: list[Value]) -> None:
        self.source = source
        self.nodes = nodes
        self._texts: list[str | None] = [None] * len(nodes)

    def text(self, node: Value) -> str:
        cached = self._texts[node.id]
        if cached is None:
            if node.label:
                cached = node.label
            else:
                cached = short_text(self.source, node.start, node.end)
            self._texts[node.id] = cached
        return cached

    def formula(self, node: Value, parts: list[str] | None = None) -> str:
        """`a + b`, `e·c`, `a^2`, `tanh(n)` from the inputs' texts (or the given parts)."""
        names = parts if parts is not None else [self.text(c) for c in node.inputs]
        op = node.op
        if op == "+":
            return f"{names[0]} + {names[1]}"
        if op == "*":
            return f"{names[0]}·{names[1]}"
        if op == "-":
            return f"{names[0]} - {names[1]}"
        if op == "/":
            return f"{names[0]} / {names[1]}"
        if op == "**k":
            return f"{names[0]}^{fmt(node.exponent or 0.0)}"
        if op == "**":
            return f"{names[0]}^{names[1]}"
        if op == "neg":
            return f"-{names[0]}"
        return f"{op}({names[0]})"

    def formula_of_numbers(self, node: Value) -> str:
        """The formula with the inputs' data in place of their names: `2 + (-3)`, `log(-1)`."""
        operand = fmt if node.op in FUNCTIONS else factor  # a call's parentheses suffice
        return self.formula(node, [operand(c.data) for c in node.inputs])

    def expansion(self, node: Value) -> str | None:
        names = [self.text(c) for c in node.inputs]
        if node.op == "-":
            return f"{names[0]} + {names[1]}·(−1)"
        if node.op == "/":
            return f"{names[0]} · {names[1]}^(−1)"
        if node.op == "neg":
            return f"{names[0]}·(−1)"
        return None

    def title(self, node: Value) -> str:
        """`f = e·c` for a named operation, `a*b` for an unnamed one, `a` for a leaf."""
        if not node.inputs:
            return self.text(node)
        if node.label:
            return f"{node.label} = {self.formula(node)}"
        return self.formula(node)


def topo_steps(events: list[TopoEvent], say: Narrator) -> list[dict[str, Any]]:
    """One step per event of the sort, with what it pushed and emitted.

    Steps carry deltas, not the whole stack: listing the stack after every step would make the
    timeline grow with the square of the graph. `replay_topo` rebuilds the stack and the sorted
    list after each step (the page does the same in `timeline.js`).
    """
    steps: list[dict[str, Any]] = []
    stack: list[list[Any]] = []
    done: list[str] = []
    for action, node, index, child in events:
        depth = len(stack) - (0 if action == "start" else 1)
        name = say.text(node)
        nid = f"n{node.id}"
        if action == "start":
            stack.append([nid, 0])
            pop = None
            narration = f"Start: push ({name}, 0), the root with its input index 0"
        else:
            stack.pop()
            pop = [nid, index]
            if action == "emit":
                done.append(nid)
                if node.inputs:
                    narration = (
                        f"Pop ({name}, {index}): all {len(node.inputs)} inputs of {name} are done: "
                        f"add {name} to the sorted list"
                    )
                else:
                    narration = (
                        f"Pop ({name}, 0): {name} has no inputs: add {name} to the sorted list"
                    )
            else:
                assert child is not None
                stack.append([nid, index + 1])
                other = say.text(child)
                if action == "visit":
                    stack.append([f"n{child.id}", 0])
                    narration = (
                        f"Pop ({name}, {index}): {name}'s input {index} is {other}, "
                        f"not yet visited: "
                        f"push ({name}, {index + 1}) and ({other}, 0)"
                    )
                else:
                    narration = (
                        f"Pop ({name}, {index}): {name}'s input {index} is {other}, already "
                        f"visited: skip it and push ({name}, {index + 1})"
                    )
        steps.append(
            {
                "phase": "topo",
                "node": nid,
                "narration": narration,
                "action": action,
                "pop": pop,
                "input": f"n{child.id}" if child is not None else None,
                "pushed": [list(entry) for entry in stack[depth:]],
                "emitted": nid if action == "emit" else None,
            }
        )
    return steps


def replay_topo(steps: list[dict[str, Any]]) -> list[tuple[list[list[Any]], list[str]]]:
    """The stack (bottom first) and the sorted ids after each `topo` step, rebuilt from deltas."""
    stack: list[list[Any]] = []
    done: list[str] = []
    states = []
    for step in steps:
        if step["phase"] != "topo":
            continue
        if step["pop"] is not None:
            stack.pop()
        stack.extend(list(entry) for entry in step["pushed"])
        if step["emitted"] is not None:
            done.append(step["emitted"])
        states.append(([list(entry) for entry in stack], list(done)))
    return states


def forward_steps(order: list[Value], say: Narrator) -> list[dict[str, Any]]:
    """One step per node in topological order: its inputs, operation and data."""
    steps = []
    for node in order:
        if node.kind == "leaf":
            narration = f"{say.text(node)} is a leaf: {say.text(node)} = {fmt(node.data)}"
        elif node.kind == "const":
            narration = f"{say.text(node)} is a constant: {fmt(node.data)}"
        else:
            numbers = say.formula_of_numbers(node)
            narration = f"{say.title(node)} = {numbers} = {fmt(node.data)}"
        steps.append(
            {
                "phase": "forward",
                "node": f"n{node.id}",
                "narration": narration,
                "op": public_op(node.op),
                "inputs": [f"n{c.id}" for c in node.inputs],
                "data": number(node.data),
            }
        )
    return steps


def seed_step(root: Value, say: Narrator) -> dict[str, Any]:
    name = say.text(root)
    return {
        "phase": "seed",
        "node": f"n{root.id}",
        "narration": f"Seed: grad[{name}] = 1 ({name} changes one-for-one with itself)",
        "grad": 1.0,
    }


def backward_steps(
    visits: list[Visit], say: Narrator, nodes: list[Value], overwrite: bool
) -> list[dict[str, Any]]:
    """One step per visit with its contributions and a sentence holding the numbers."""
    steps = []
    for node, upstream, contributions in visits:
        title = say.title(node)
        parts = []
        rows = []
        for record in contributions:
            edge, to, up, local, contribution, before, after, lost, late, replaced, _ = record
            target = say.text(nodes[to])
            sign = "=" if overwrite else "+="
            part = f"grad[{target}] {sign} {factor(up)} × {factor(local)} = {fmt(contribution)}"
            if replaced is not None:
                source_node = nodes[replaced[10]]
                part += (
                    f" (grad[{target}] was {fmt(replaced[4])} from {say.title(source_node)}; "
                    f"{title} overwrote it with {fmt(contribution)}: "
                    f"the {fmt(replaced[4])} is lost)"
                )
            if late:
                part += (
                    f" (too late: {target} was already visited, so this never reaches its inputs)"
                )
            parts.append(part)
            rows.append(
                {
                    "edge": f"e{edge}",
                    "to": f"n{to}",
                    "upstream": number(up),
                    "local": number(local),
                    "contribution": number(contribution),
                    "grad_before": number(before),
                    "grad_after": number(after),
                    "lost": lost,
                    "late": late,
                }
            )
        if parts:
            narration = f"Visit {title}: " + ", ".join(parts)
        else:
            what = "a leaf" if node.kind == "leaf" else "a constant"
            narration = (
                f"Visit {title}: {what}, nothing to pass on "
                f"(grad[{say.text(node)}] = {fmt(upstream)})"
            )
        steps.append(
            {
                "phase": "backward",
                "node": f"n{node.id}",
                "narration": narration,
                "grad": number(upstream),
                "contributions": rows,
            }
        )
    return steps


def public_op(op: str | None) -> str | None:
    """The op as the API names it (`**` with `exponent` set for a constant power)."""
    return "**" if op == "**k" else op
