"""Forward mode: the tangent ∂node/∂wrt of every node, carried from the leaves to the root
alongside the values, for one leaf `wrt`.

The tangent of a node is the sum, over its input edges, of the input's tangent times the edge's
local derivative: the same local derivatives the backward pass multiplies (each node's
`local_grads`, from the op table, engine/ops.py), walked the other way. The seed is
tangent[wrt] = 1; every other leaf and every constant has tangent 0. One pass gives ∂root/∂wrt
for one leaf: a program of n leaves needs n passes where reverse mode needs one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .builder import Graph
from .errors import BadWrt, quoted
from .i18n import msg
from .value import Value

PASSES = ("reverse", "forward")


@dataclass(frozen=True, slots=True)
class TangentRecord:
    """One forward-mode pass: the leaf it differentiates by, each node's tangent (by node id),
    each edge's contribution tangent[input] × local (in edge order) and each node's first
    input edge (engine/backward.py edge_offsets)."""

    wrt: Value
    tangent: tuple[float, ...]
    contribution: tuple[float, ...]
    first_edge: tuple[int, ...]


def resolve_wrt(graph: Graph, wrt: str | None) -> Value:
    """The leaf `wrt` names: a leaf's name in the program (`a`) or its node id (`n0`). Raises
    BadWrt when it is missing or names anything but a leaf."""
    names = ", ".join(name for name, _ in graph.leaves) or "—"
    if not wrt:
        raise BadWrt(msg("error.wrt_missing", names=names))
    for name, node in graph.leaves:
        if wrt in (name, f"n{node.id}"):
            return node
    raise BadWrt(msg("error.wrt_unknown", wrt=quoted(wrt), names=names))


def forward_tangents(
    nodes: Sequence[Value], topo: Sequence[Value], wrt: Value, offsets: Sequence[int]
) -> TangentRecord:
    """The forward-mode pass over `topo` (a topological order of `nodes`) seeded at `wrt`:
    tangent[node] = Σ tangent[input] × local, in input order (float64, IEEE: 0 × inf is nan,
    as in the backward pass)."""
    tangent = [0.0] * len(nodes)
    contribution = [0.0] * sum(len(node.inputs) for node in nodes)
    tangent[wrt.id] = 1.0
    for node in topo:
        if not node.inputs:
            continue
        edge = offsets[node.id]
        total = 0.0
        for child, local in zip(node.inputs, node.local_grads, strict=True):
            added = tangent[child.id] * local
            contribution[edge] = added
            total += added
            edge += 1
        tangent[node.id] = total
    return TangentRecord(wrt, tuple(tangent), tuple(contribution), tuple(offsets))
