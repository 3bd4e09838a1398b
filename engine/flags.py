"""Gradients that vanish, explode or die: a flag per node, from a trace's final gradients.

- `exploding`: |grad| > EXPLODING (inf included).
- `dead`: grad exactly 0 because every way to the target passes a closed gate: a ReLU at ≤ 0
  or a tanh/sigmoid whose local derivative rounded to 0, or a node that is itself dead.
- `vanishing`: |grad| < VANISHING × the largest |grad| of the cone (a 0 for another reason
  too, such as a product with a 0), and not dead.
- `saturated`: on a tanh with |t| > SATURATED (a sigmoid s with |2s − 1| > SATURATED, the same
  curve scaled): its local derivative is below 0.002, so what flows through it nearly stops.

Only the nodes the target depends on are flagged, never a constant (the page shows no gradient
for one) nor the target (its gradient is the seed)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .ops import GATES, SATURATION

if TYPE_CHECKING:
    from .tracing import Trace
    from .value import Value

VANISHING = 1e-6
EXPLODING = 1e6
SATURATED = 0.999


def saturated(node: Value) -> bool:
    """Whether `node` is a tanh or sigmoid (a row with `saturation`) on the flat part of its
    curve."""
    where = SATURATION.get(node.op)  # type: ignore[arg-type]
    return where is not None and abs(where((node.inputs[0].data, 0.0, 0.0, node.data))) > SATURATED


def grad_flags(trace: Trace) -> dict[int, list[str]]:
    """The flags of each flagged node (by node id), from the correct pass's gradients."""
    grads, target = trace.correct_grads, trace.target
    shown = [node for node in trace.cone if node.kind != "const" and node is not target]
    sizes = [abs(grads[node.id]) for node in shown]
    largest = max(1.0, max(filter(math.isfinite, sizes), default=1.0))
    smallest = VANISHING * largest
    flags: dict[int, list[str]] = {}
    if shown and smallest <= min(sizes) and max(sizes) <= EXPLODING:
        # Every grad within bounds (min and max pass over a nan, which no bound flags): only
        # a tanh or sigmoid can be flagged (most graphs have none), and only as saturated.
        if SATURATION.keys().isdisjoint({node.op for node in shown}):
            shown = []
    # Most nodes have no flag: a grad within bounds (a nan is not) on no tanh or sigmoid. One
    # comprehension picks the others (micrograd's demo: 65,818 nodes, a loop of each was 0.1 s).
    shown = [
        node
        for node, size in zip(shown, sizes, strict=False)  # shown is all or none of them
        if not smallest <= size <= EXPLODING or node.op in SATURATION
    ]
    dead = _dead(trace) if shown else set()
    for node in shown:
        grad = grads[node.id]
        found = ["saturated"] if saturated(node) else []
        if abs(grad) > EXPLODING:
            found.append("exploding")
        elif node.id in dead:
            found.append("dead")
        elif abs(grad) < smallest:
            found.append("vanishing")
        if found:
            flags[node.id] = found
    if saturated(target):
        flags[target.id] = ["saturated"]
    return flags


def _dead(trace: Trace) -> set[int]:
    """Ids of the nodes whose gradient is exactly 0 because each of their consumers in the cone
    is a closed gate (its local derivative for them is 0) or dead itself. Consumers come
    before their inputs in reverse topological order, so one walk settles every node. Only a
    node whose grad is 0 can be dead: the walk looks at those alone."""
    grads = trace.correct_grads
    if 0.0 not in grads:  # no grad is 0 (most graphs): one C scan, not a set of the cone
        return set()
    zeros = {node.id for node in trace.cone if grads[node.id] == 0}
    if not zeros:
        return set()
    consumers: dict[int, list[tuple[Value, float]]] = {}
    for node in trace.cone:
        for child, local in zip(node.inputs, node.local_grads, strict=True):
            if child.id in zeros:
                consumers.setdefault(child.id, []).append((node, local))
    dead: set[int] = set()
    for node in reversed(trace.cone):
        uses = consumers.get(node.id)
        if not uses:
            continue
        if all((user.op in GATES and local == 0) or user.id in dead for user, local in uses):
            dead.add(node.id)
    return dead
