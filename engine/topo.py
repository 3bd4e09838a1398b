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
        return _topo_order_fast(root)
    order: list[Value] = []
    visited = {root}
    stack: list[tuple[Value, int]] = [(root, 0)]
    record = events is not None
    if record:
        events.append(("start", root, -1, None))
    push = stack.append
    pop = stack.pop
    while stack:
        node, index = pop()
        inputs = node.inputs
        if index < len(inputs):
            push((node, index + 1))
            child = inputs[index]
            if child not in visited:
                visited.add(child)
                push((child, 0))
                if record:
                    events.append(("visit", node, index, child))
            elif record:
                events.append(("skip", node, index, child))
        else:
            order.append(node)
            if record:
                events.append(("emit", node, index, None))
    return order


def _topo_order_fast(root: Value) -> list[Value]:
    """The same sort, the same order, without recording: the hot path of `Value.backward`."""
    order: list[Value] = []
    visited = {root}
    add = visited.add
    stack: list[tuple[Value, int]] = [(root, 0)]
    push = stack.append
    pop = stack.pop
    emit = order.append
    while stack:
        node, index = pop()
        inputs = node.inputs
        if index < len(inputs):
            push((node, index + 1))
            child = inputs[index]
            if child not in visited:
                add(child)
                push((child, 0))
        else:
            emit(node)
    return order
