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

    If `events` is given, appends one entry per step of the sort (`sort_steps`): ("start", root,
    -1, None), then for each pop ("visit", node, index, input) when the input is new and pushed,
    ("skip", node, index, input) when it was already visited, or ("emit", node, index, None)
    when all inputs are done and the node joins the order.
    """
    if events is None:
        return _order(root)
    actions, indices, nodes = sort_steps(root)
    looks = ("visit", "skip")
    events.extend(
        (action, node, index, node.inputs[index] if action in looks else None)
        for action, index, node in zip(actions, indices, nodes, strict=True)
    )
    return [node for action, node in zip(actions, nodes, strict=True) if action == "emit"]


def sort_steps(root: Value) -> tuple[list[str], list[int], list[Value]]:
    """Every step of the sort from `root` as columns: its action (start, visit, skip, emit),
    the input index it pops (-1 at the start) and its node. The timeline's sort steps
    (engine/steps.py) are these: columns, not a tuple a step (300,000 for a 100,000-node
    chain)."""
    actions: list[str] = ["start"]
    indices: list[int] = [-1]
    nodes: list[Value] = [root]
    act, at, node_of = actions.append, indices.append, nodes.append
    visited = {root}
    mark = visited.add
    stack: list[tuple[Value, int]] = [(root, 0)]
    push, pop = stack.append, stack.pop
    while stack:
        node, index = pop()
        inputs = node.inputs
        if index < len(inputs):
            push((node, index + 1))
            child = inputs[index]
            if child not in visited:
                mark(child)
                push((child, 0))
                act("visit")
            else:
                act("skip")
        else:
            act("emit")
        at(index)
        node_of(node)
    return actions, indices, nodes


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
