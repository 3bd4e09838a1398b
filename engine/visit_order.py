"""A custom backward visit order: resolving its ids, checking it is a reverse topological
order, and the warnings of what it loses."""

from __future__ import annotations

from typing import Any

from .backward import Visit
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


def order_warnings(graph: Graph, visits: list[Visit]) -> list[dict[str, Any]]:
    """A custom visit order's warnings: nodes never visited, contributions that arrived late."""
    warnings: list[dict[str, Any]] = []
    say = Narrator(graph.source, graph.nodes, graph.helpers)
    listed = {node.id for node, _, _ in visits}
    for node in graph.nodes:
        if node.inputs and node.id not in listed:
            warnings.append(
                {
                    "type": "never_visited",
                    "message": msg("warning.never_visited", node=say.text(node)),
                    "line": None,
                    "column": None,
                }
            )
    for node, _, contributions in visits:
        for record in contributions:
            target = graph.nodes[record.to]
            if not record.late or not target.inputs:
                continue  # in time, or a leaf/constant (a late add still counts there)
            below = ", ".join(
                dict.fromkeys(say.text(c) for c in target.inputs if c.kind != "const")
            )
            warnings.append(
                {
                    "type": "late",
                    "message": msg(
                        "warning.late",
                        node=say.text(node),
                        target=say.text(target),
                        contribution=fmt(record.contribution),
                        below=below,
                    ),
                    "line": None,
                    "column": None,
                }
            )
    return warnings
