"""Iterative depth-first topological sort, exactly the explicit-stack algorithm of the
MicroGPT chapter: a stack of (node, input_index) pairs and a visited set."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .value import Value

# One recorded step of the sort: (action, node, input_index popped or -1, input or None).
TopoEvent = tuple[str, "Value", int, "Value | None"]


def topo_order(root: Value, events: list[TopoEvent] | None = None) -> list[Value]:
    """Nodes reachable from `root`, every node after all of its inputs, root last.

    If `events` is given, appends one entry per step of the sort: ("start", root, -1, None),
    then for each pop ("visit", node, index, input) when the input is new and pushed,
    ("skip", node, index, input) when it was already visited, or ("emit", node, index, None)
    when all inputs are done and the node joins the order.
    """
    if events is None:
        return _topo_order_unrecorded(root)
    record = events.append
    order: list[Value] = []
    visited = {root}
    stack: list[tuple[Value, int]] = [(root, 0)]
    push, pop = stack.append, stack.pop
    record(("start", root, -1, None))
    while stack:
        node, index = pop()
        inputs = node.inputs
        if index < len(inputs):
            push((node, index + 1))
            child = inputs[index]
            if child not in visited:
                visited.add(child)
                push((child, 0))
                record(("visit", node, index, child))
            else:
                record(("skip", node, index, child))
        else:
            order.append(node)
            record(("emit", node, index, None))
    return order


def _topo_order_unrecorded(root: Value) -> list[Value]:
    """The same depth-first sort and the same order, for `Value.backward`'s hot path: a stack
    of (node, iterator over its inputs) allocates one entry per node instead of one per pop."""
    order: list[Value] = []
    visited = {root}
    stack = [(root, iter(root.inputs))]
    push, pop, emit = stack.append, stack.pop, order.append
    while stack:
        node, inputs = stack[-1]
        for child in inputs:
            if child not in visited:
                visited.add(child)
                push((child, iter(child.inputs)))
                break
        else:
            pop()
            emit(node)
    return order
