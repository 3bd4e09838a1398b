"""Any node as the target: which node a request's `target` names, and the nodes it depends on.

Reverse mode from a target `t` is the same pass as from the root, seeded at `t`: the grads are
∂t/∂x for every x that `t` depends on (its cone, the nodes `topo_order(t)` reaches) and 0 for
every other node, which the page greys out."""

from __future__ import annotations

import re

from .builder import Graph
from .errors import BadTarget, quoted
from .i18n import msg
from .value import Value

NODE_ID = re.compile(r"n(0|[1-9][0-9]*)")
NAMES_LISTED = 8  # a message lists at most this many of the program's names


def resolve_target(graph: Graph, target: str) -> Value:
    """The node `target` names: a node id (`n4`) or a label as the page shows it (`c`, `c₂`).
    Raises BadTarget for anything else and for a constant (nothing flows into a constant)."""
    node = find_node(graph, target)
    if node is None:
        names = [node.label for node in graph.nodes if node.label and node.kind != "const"]
        listed = ", ".join(names[:NAMES_LISTED]) + (", …" if len(names) > NAMES_LISTED else "")
        raise BadTarget(
            msg(
                "error.target_unknown",
                target=quoted(target),
                names=listed or "—",
            )
        )
    if node.kind == "const":
        raise BadTarget(msg("error.target_constant", target=quoted(target)))
    return node


def find_node(graph: Graph, text: str) -> Value | None:
    """The node a request names: by id (`n4`), else by label (`c`, `c₂`); None for neither."""
    return _by_id(graph, text) or _by_label(graph, text)


def _by_id(graph: Graph, target: str) -> Value | None:
    if NODE_ID.fullmatch(target) and int(target[1:]) < len(graph.nodes):
        return graph.nodes[int(target[1:])]
    return None


def _by_label(graph: Graph, target: str) -> Value | None:
    for node in graph.nodes:
        if node.label == target:
            return node
    return None


def check_variant(mode: str, order: object) -> None:
    """A target other than the root runs the correct pass only: the labs' variants (the `=` bug,
    a visit order) are about the whole pass from the root."""
    if mode != "correct" or order is not None:
        raise BadTarget(msg("error.target_with_variant"))
