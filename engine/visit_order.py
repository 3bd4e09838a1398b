"""A custom backward visit order: resolving its ids, checking it is a reverse topological
order, and the warnings of what it loses."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from .backward import BackwardRecord
from .builder import Graph
from .errors import BadOrder
from .i18n import msg
from .narration import Narrator, fmt
from .value import Value


def resolve_order(graph: Graph, order: list[str]) -> list[Value]:
    """The nodes a custom visit order names, in its order; raises BadOrder on an unknown or
    repeated id."""
    by_id = {f"n{node.id}": node for node in graph.nodes}
    seen: set[str] = set()
    resolved = []
    for node_id in order:
        if not isinstance(node_id, str) or node_id not in by_id:
            raise BadOrder(msg("error.order_unknown_id", id=repr(node_id)))
        if node_id in seen:
            raise BadOrder(msg("error.order_repeated_id", id=node_id))
        seen.add(node_id)
        resolved.append(by_id[node_id])
    return resolved


def check_order(graph: Graph, visit_order: list[Value]) -> dict[str, Any]:
    """`{valid, message}`: whether `visit_order` is a reverse topological order, and if not the
    first reason."""
    say = Narrator(graph.source, graph.nodes, graph.helpers)
    position = {node.id: i for i, node in enumerate(visit_order)}
    consumers: dict[int, list[Value]] = {}
    for node in graph.nodes:
        for child in node.inputs:
            consumers.setdefault(child.id, []).append(node)
    for node in visit_order:
        for consumer in consumers.get(node.id, []):
            if consumer.id not in position:
                return {
                    "valid": False,
                    "message": msg(
                        "order.consumer_never_visited",
                        consumer=say.text(consumer),
                        node=say.text(node),
                    ),
                }
            if position[consumer.id] > position[node.id]:
                return {
                    "valid": False,
                    "message": msg(
                        "order.visited_too_early", node=say.text(node), consumer=say.text(consumer)
                    ),
                }
    for node in graph.nodes:
        if node.inputs and node.id not in position:
            return {"valid": False, "message": msg("order.never_visited", node=say.text(node))}
    return {"valid": True, "message": msg("order.valid")}


def order_warnings(graph: Graph, record: BackwardRecord) -> list[dict[str, Any]]:
    """A custom visit order's warnings: nodes never visited, contributions that arrived late."""
    say = Narrator(graph.source, graph.nodes, graph.helpers)
    listed = set(record.visits)
    warnings = [
        _warning("never_visited", msg("warning.never_visited", node=say.text(node)))
        for node in graph.nodes
        if node.inputs and node.id not in listed
    ]
    for index in sorted(record.late):
        target = graph.nodes[record.to[index]]
        if not target.inputs:
            continue  # a leaf or constant: a late add still counts there
        visit = bisect_right(record.starts, index) - 1
        below = ", ".join(dict.fromkeys(say.text(c) for c in target.inputs if c.kind != "const"))
        late = msg(
            "warning.late",
            node=say.text(graph.nodes[record.visits[visit]]),
            target=say.text(target),
            contribution=fmt(record.contribution[index]),
            below=below,
        )
        warnings.append(_warning("late", late))
    return warnings


def _warning(kind: str, message: str) -> dict[str, Any]:
    """A warning about no line of the source."""
    return {"type": kind, "message": message, "line": None, "column": None}
