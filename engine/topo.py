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
    record = events.append if events is not None else None
    order: list[Value] = []
    visited = {root}
    stack: list[tuple[Value, int]] = [(root, 0)]
    push, pop, emit = stack.append, stack.pop, order.append
    if record:
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
                if record:
                    record(("visit", node, index, child))
            elif record:
                record(("skip", node, index, child))
        else:
            emit(node)
            if record:
                record(("emit", node, index, None))
    return order
