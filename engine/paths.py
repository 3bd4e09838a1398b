"""Every path of the chain rule: the gradient of a leaf is the sum, over every path from the leaf
to the target, of the product of the local derivatives along it.

Paths multiply: a chain of n diamonds has 2ⁿ of them. So they are counted (exactly, up to
COUNT_CAP) and only the `limit` paths with the largest |product| are listed, found by a k-best
walk in topological order that keeps at most `limit` partial paths per node: the cost is
(edges × limit), never (number of paths). Reverse mode itself never lists paths at all: each node
sums its consumers' grads once, which adds up every path's product in one pass (distributivity)."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from .backward import edge_offsets
from .cancel import check as check_cancelled
from .errors import BadLeaf, LimitExceeded, quoted
from .i18n import Count, msg
from .narration import Narrator, factor, fmt
from .reply import number
from .target import find_node

if TYPE_CHECKING:
    from .tracing import Trace
    from .value import Value

COUNT_CAP = 10**60  # counts are exact below it ("at least" from there: a number nobody reads)
MAX_LIMIT = 100
TEXT_FACTORS = 12  # a path's sentence writes at most this many factors, the middle elided
# The most edges the listed paths may hold together, counted as `limit` times the longest path:
# each edge is sent as its id, its node's id and its local derivative (about 40 bytes), so a
# reply stays under about 2 MB. 100 paths through 16,000 × `y = y*y` were 33.6 MB.
MAX_LISTED_EDGES = 50_000


class Partial(NamedTuple):
    """A partial path from the leaf to a node: |product| (the sort key), product, the edge it
    arrived by and the index of the partial path it extends in its input's list."""

    size: float
    product: float
    edge: int
    previous: int


@dataclass(frozen=True)
class Path:
    """One path, from the target back to the leaf: its edges and nodes, the local derivative of
    each edge and their product."""

    edges: tuple[int, ...]
    nodes: tuple[int, ...]
    locals: tuple[float, ...]
    product: float


@dataclass(frozen=True)
class Paths:
    """The paths from `leaf` to the trace's target: how many (`count`, exact unless
    `count_exact` is False, when it is at least COUNT_CAP), the largest ones (all of them when
    `complete`), and the leaf's gradient, which their products sum to when complete."""

    leaf: Value
    count: int
    count_exact: bool
    paths: tuple[Path, ...]
    grad: float

    @property
    def complete(self) -> bool:
        return self.count_exact and len(self.paths) == self.count


def resolve_leaf(trace: Trace, leaf: str) -> Value:
    """The node `leaf` (an id or a name) names; BadLeaf for none or a constant."""
    node = find_node(trace.graph, leaf)
    if node is None:
        raise BadLeaf(msg("error.paths_unknown_leaf", leaf=quoted(leaf)))
    if node.kind == "const":
        raise BadLeaf(msg("error.paths_constant_leaf", leaf=quoted(leaf)))
    return node


def chain_paths(trace: Trace, leaf: Value, limit: int) -> Paths:
    """The paths from `leaf` to the trace's target, the `limit` largest by |product|."""
    offsets = edge_offsets(trace.nodes)
    between = _downstream(trace.cone, leaf)
    _check_length(leaf, between, trace.target, limit)
    counts = {leaf.id: 1}
    best: dict[int, list[Partial]] = {leaf.id: [Partial(1.0, 1.0, -1, -1)]}
    for node in between[1:]:
        check_cancelled()
        total = 0
        candidates: list[Partial] = []
        for index, (child, local) in enumerate(zip(node.inputs, node.local_grads, strict=True)):
            if child.id not in counts:
                continue
            total += counts[child.id]
            edge = offsets[node.id] + index
            for j, partial in enumerate(best[child.id]):
                product = partial.product * local
                candidates.append(Partial(_size(product), product, edge, j))
        counts[node.id] = min(total, COUNT_CAP)
        best[node.id] = heapq.nlargest(limit, candidates, key=lambda p: p.size)
    target = trace.target.id
    count = counts.get(target, 0)
    edges = _edge_ends(trace.nodes)
    listed = tuple(_unwind(best, edges, target, k) for k in range(len(best.get(target, ()))))
    return Paths(leaf, count, count < COUNT_CAP, listed, trace.correct_grads[leaf.id])


def _check_length(leaf: Value, between: list[Value], target: Value, limit: int) -> None:
    """Refuse (LimitExceeded) when `limit` paths as long as the longest from `leaf` to
    `target` would list more than MAX_LISTED_EDGES edges, saying how many paths fit."""
    longest = {leaf.id: 0}
    for node in between[1:]:
        longest[node.id] = 1 + max(longest[c.id] for c in node.inputs if c.id in longest)
    length = longest.get(target.id, 0)
    if length * limit <= MAX_LISTED_EDGES:
        return
    shown, most = quoted(leaf.name or f"n{leaf.id}"), Count(MAX_LISTED_EDGES)
    if length > MAX_LISTED_EDGES:
        raise LimitExceeded(msg("error.path_too_long", leaf=shown, length=Count(length), most=most))
    what = {"leaf": shown, "length": Count(length), "limit": limit, "most": most}
    total, fits = Count(length * limit), MAX_LISTED_EDGES // length
    raise LimitExceeded(msg("error.paths_too_long", **what, total=total, fits=fits))


def _size(product: float) -> float:
    """The sort key of a product: its magnitude, a NaN first (it must be seen)."""
    return math.inf if product != product else abs(product)


def _downstream(cone: tuple[Value, ...], leaf: Value) -> list[Value]:
    """The nodes of `cone` (topological) on some path from `leaf`, in topological order."""
    if leaf not in cone:
        return []
    reached = {leaf.id}
    found = [leaf]
    for node in cone:
        if node.id not in reached and any(child.id in reached for child in node.inputs):
            reached.add(node.id)
            found.append(node)
    return found


def _edge_ends(nodes: list[Value]) -> list[tuple[int, int, float]]:
    """Per edge id: (input id, consumer id, local derivative)."""
    return [
        (child.id, node.id, local)
        for node in nodes
        for child, local in zip(node.inputs, node.local_grads, strict=True)
    ]


def _unwind(
    best: dict[int, list[Partial]], edges: list[tuple[int, int, float]], target: int, k: int
) -> Path:
    """The `k`-th best path to `target`, followed back to the leaf by its partial paths."""
    product = best[target][k].product
    path_edges, path_nodes, path_locals = [], [target], []
    node, index = target, k
    while best[node][index].edge >= 0:
        partial = best[node][index]
        child, _, local = edges[partial.edge]
        path_edges.append(partial.edge)
        path_locals.append(local)
        path_nodes.append(child)
        node, index = child, partial.previous
    return Path(tuple(path_edges), tuple(path_nodes), tuple(path_locals), product)


def path_text(say: Narrator, nodes: list[Value], path: Path) -> str:
    """`∂L/∂c · ∂c/∂a = 1 · 3 = 3`: the path's chain of local derivatives and their product,
    the same in every language; a long chain keeps its first and last factors."""
    pairs = list(zip(path.nodes, path.nodes[1:], strict=False))
    ratios = [f"∂{_named(say, nodes[of])}/∂{_named(say, nodes[wrt])}" for of, wrt in pairs]
    numbers = [factor(local) for local in path.locals]
    if len(ratios) > TEXT_FACTORS:
        half = TEXT_FACTORS // 2
        ratios = [*ratios[:half], "…", *ratios[-half:]]
        numbers = [*numbers[:half], "…", *numbers[-half:]]
    if not ratios:  # the leaf is the target: the empty product
        return f"∂{_named(say, nodes[path.nodes[0]])}/∂{_named(say, nodes[path.nodes[0]])} = 1"
    if len(ratios) == 1:
        return f"{ratios[0]} = {fmt(path.product)}"
    return f"{' · '.join(ratios)} = {' · '.join(numbers)} = {fmt(path.product)}"


def _named(say: Narrator, node: Value) -> str:
    return say.operand(node, bracket_compound=True)


def paths_reply(trace: Trace, found: Paths) -> dict[str, Any]:
    """The body of `POST /api/paths` (docs/api.md): the paths, each from the target back to
    the leaf, with their sum (math.fsum, so only the listed products' own rounding is in it)."""
    say = trace.narrator
    listed = found.paths
    return {
        "leaf": f"n{found.leaf.id}",
        "target": f"n{trace.target.id}",
        "grad": number(found.grad),
        "count": str(found.count),
        "count_exact": found.count_exact,
        "complete": found.complete,
        "sum": number(math.fsum(path.product for path in listed)),
        "paths": [
            {
                "nodes": [f"n{node}" for node in path.nodes],
                "edges": [f"e{edge}" for edge in path.edges],
                "locals": [number(local) for local in path.locals],
                "product": number(path.product),
                "text": path_text(say, trace.nodes, path),
            }
            for path in listed
        ],
    }
