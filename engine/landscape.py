"""The loss landscape of two leaves: the root's value on a grid of their values, every other
leaf held where it is (the Train lab's contour plot).

The graph is built once at the given values; at each grid point only the nodes that depend on
the two leaves are computed again, with the op table's own arithmetic (gradcheck.evaluate, as
the gradient check does), so every value is exactly what a forward pass at that point gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .builder import Limits, build, check_values
from .cancel import check as check_cancelled
from .descend import check_parameters
from .errors import BadLandscape, BadTraining, quoted
from .functions import CALL_COST_RECOMPUTED
from .gc_pause import cycle_collector_paused
from .gradcheck import evaluate, recomputation
from .i18n import Count, msg
from .narration import fmt
from .reply import json_numbers
from .topo import topo_order
from .tracing import check_source_size, parsed
from .value import Value

# A side: 3,721 forward passes, more than a contour plot a few hundred px wide can show.
MAX_POINTS = 61


@dataclass
class Landscape:
    """`losses[i][j]`: the root with the first parameter at `xs[j]` and the second at `ys[i]`
    (rows go up the second parameter, as d3-contour reads a grid)."""

    parameters: list[str]
    xs: list[float]
    ys: list[float]
    losses: list[list[float]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (non-finite losses as "NaN", "Infinity", "-Infinity")."""
        return {
            "parameters": self.parameters,
            "xs": self.xs,
            "ys": self.ys,
            "losses": [json_numbers(row) for row in self.losses],
        }


def landscape(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    parameters: list[str],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    points: int,
    limits: Limits | None = None,
    max_node_points: int | None = None,
) -> Landscape:
    """The root on a `points` × `points` grid: the first of `parameters` from `x_range[0]` to
    `x_range[1]`, the second over `y_range`, both ends included, evenly spaced; the program's
    other leaves at `values` (else their own). Raises what `trace` raises for the program and
    BadLandscape for the request: not two distinct leaves, a range that is not a finite
    interval wide enough for `points` distinct values, `points` outside 2 to MAX_POINTS, or
    `points`² times the graph's work above `max_node_points` (the server's bound): its nodes,
    a call of the program's function counting as its body's nodes times CALL_COST_RECOMPUTED
    (`Graph.work`)."""
    limits = limits or Limits()
    _check_points(points)
    if len(parameters) != 2:
        raise BadLandscape(msg("error.landscape.two", count=len(parameters)))
    xs = grid(parameters[0], x_range, points)
    ys = grid(parameters[1], y_range, points)
    check_source_size(source, limits)
    statements, notes = parsed(source, limits.max_depth)
    with cycle_collector_paused():
        graph = build(source, statements, check_values(values), max_nodes=limits.max_nodes,
                      notes=notes)  # fmt: skip
        leaves = dict(graph.leaves)
        try:
            check_parameters(parameters, leaves)
        except BadTraining as err:  # the same words, said as the landscape's error
            raise BadLandscape(err.message) from None
        _check_work(graph.work(CALL_COST_RECOMPUTED), points, max_node_points)
        x_leaf, y_leaf = leaves[parameters[0]], leaves[parameters[1]]
        losses = _losses(graph.root, graph.nodes, x_leaf, y_leaf, xs, ys)
    return Landscape(list(parameters), xs, ys, losses)


def grid(name: str, bounds: Any, points: int) -> list[float]:
    """`points` evenly spaced values from bounds[0] to bounds[1], both included; raises
    BadLandscape unless they are finite, increasing and all distinct."""
    if (
        not isinstance(bounds, list | tuple)
        or len(bounds) != 2
        or not all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds)
        or not all(math.isfinite(b) for b in bounds)
        or not bounds[0] < bounds[1]
    ):
        shown = repr(list(bounds)) if isinstance(bounds, list | tuple) else repr(bounds)
        raise BadLandscape(msg("error.landscape.range", name=quoted(name), value=shown))
    lo, hi = float(bounds[0]), float(bounds[1])
    if not math.isfinite(hi - lo):
        raise BadLandscape(msg("error.landscape.wide", name=quoted(name), lo=fmt(lo), hi=fmt(hi)))
    values = [lo + (hi - lo) * k / (points - 1) for k in range(points - 1)] + [hi]
    if any(later <= earlier for earlier, later in zip(values, values[1:], strict=False)):
        what = {"name": quoted(name), "lo": repr(lo), "hi": repr(hi), "points": points}
        raise BadLandscape(msg("error.landscape.narrow", **what))
    return values


def _check_points(points: Any) -> None:
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= MAX_POINTS:
        raise BadLandscape(msg("error.landscape.points", most=MAX_POINTS, value=repr(points)))


def _check_work(size: int, points: int, max_node_points: int | None) -> None:
    """Refuse a `points` × `points` grid of a graph whose one pass costs `size` (`Graph.work`)
    when it costs more than `max_node_points`, saying how many points a side fit (or that not
    even the smallest grid does)."""
    if max_node_points is None or size * points * points <= max_node_points:
        return
    limit = Count(max_node_points)
    if size * 4 > max_node_points:
        raise BadLandscape(msg("error.landscape.too_big", nodes=Count(size), limit=limit))
    most = math.isqrt(max_node_points // size)
    what = {"points": points, "nodes": Count(size), "limit": limit, "most": most}
    raise BadLandscape(msg("error.landscape.too_much_work", **what))


def _depending_on(order: list[Value], leaves: set[int]) -> list[Value]:
    """The nodes of `order` (topological) whose data depend on a node in `leaves` (ids)."""
    dirty = set(leaves)
    found = []
    for node in order:
        if any(child.id in dirty for child in node.inputs):
            dirty.add(node.id)
            found.append(node)
    return found


def _losses(
    root: Value, nodes: list[Value], x_leaf: Value, y_leaf: Value, xs: list[float], ys: list[float]
) -> list[list[float]]:
    """The root at every (x, y) of the grid, a row per y."""
    affected = recomputation(_depending_on(topo_order(root), {x_leaf.id, y_leaf.id}))
    datas = [node.data for node in nodes]
    rows = []
    for y in ys:
        datas[y_leaf.id] = y
        row = []
        for x in xs:
            check_cancelled()
            datas[x_leaf.id] = x
            row.append(evaluate(root, datas, affected)[0])
        rows.append(row)
    return rows
