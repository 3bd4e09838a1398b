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
        return _order(root)
    record = events.append
    order: list[Value] = []
    visited = {root}
    stack: list[tuple[Value, int]] = [(root, 0)]
    push, pop, emit = stack.append, stack.pop, order.append
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
            emit(node)
            record(("emit", node, index, None))
    return order


def _order(root: Value) -> list[Value]:
    """`topo_order(root)` without events: the same depth-first walk (inputs left to right, a
    node emitted once all its inputs are), its stack a stack of iterators over the inputs and
    a leaf emitted where it is met instead of pushed and popped. Every trace, `numbers` and
    `forward_backward` sorts its graph once; this walk takes about half the time of the one
    that records. (tests/engine/test_steps.py checks the two orders are the same.)"""
    order: list[Value] = []
    emit = order.append
    visited = {root}
    mark = visited.add
    nodes = [root]
    inputs_left = [iter(root.inputs)]
    push, pop = nodes.append, nodes.pop
    push_inputs, pop_inputs = inputs_left.append, inputs_left.pop
    while inputs_left:
        for child in inputs_left[-1]:
            if child not in visited:
                mark(child)
                inputs = child.inputs
                if inputs:
                    push(child)
                    push_inputs(iter(inputs))
                    break  # its inputs first, then the rest of this node's
                emit(child)
        else:  # every input done
            pop_inputs()
            emit(pop())
    return order
