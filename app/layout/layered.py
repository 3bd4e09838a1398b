"""The layered fallback layout (Sugiyama's three steps) in plain Python: it cannot corrupt memory,
so it runs in any process, a notebook's kernel included, and its time grows about linearly.

1. Columns: every node as far right as its consumers allow (the longest path *to* the root), so
   a subexpression sits just left of the node that uses it; nodes may be pinned to the first
   column (a group's ports).
2. Order in each column: barycentre sweeps, a lane (dummy) in every column a short edge crosses,
   one for all the edges of one source (they leave it together, as dot's `concentrate`): a
   weight read by a hundred samples holds one lane a column, not a hundred (micrograd's demo:
   4,803 lanes instead of 28,828). An edge longer than MAX_SPAN columns gets no lanes and takes
   no part: each lane is a vertex per column crossed, quadratic on long sums (`x0 + x1 + …`
   reads x0 thousands of columns on).
3. Rows: each column keeps its order and its gaps and goes as close as it can to the mean row of
   its neighbours (least squares under the order: pool adjacent violators, linear), sweeping
   from the leaves to the root and back.

The order never looks at the cards' sizes, only the rows do: a graph laid out once with small
cards and once with big ones keeps every node in the same column and the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import mul, sub

MAX_SPAN = 4  # columns an edge may cross and still get lanes and take part in the ordering
ORDER_SWEEPS = 4  # barycentre sweeps each way
ROW_SWEEPS = 4  # row placement sweeps each way, at most (they stop once the rows settle)
SETTLED = 1e-3  # how far apart two rows' moves in a sweep may be for the rows to have settled
LONE_WEIGHT = 1e-3  # how strongly a node without neighbours in a sweep keeps its row


@dataclass
class LayeredGraph:
    """The graph with lanes: vertex v < n is node v, the rest are lanes of short edges."""

    column: list[int]
    inputs: list[list[tuple[int, float]]]  # (vertex one column left, weight)
    consumers: list[list[tuple[int, float]]]  # (vertex one column right, weight)
    columns: list[list[int]]  # vertices of each column, in their order
    # The weight of each vertex's inputs and of its consumers, summed once (every sweep reads them).
    input_weight: list[float] = field(default_factory=list)
    consumer_weight: list[float] = field(default_factory=list)
    # `inputs` and `consumers` as the sweeps read them (`_split`), made once for every sweep and
    # every placement of the graph (collapsed and expanded).
    split_inputs: list[tuple[list[int], list[float]]] = field(default_factory=list)
    split_consumers: list[tuple[list[int], list[float]]] = field(default_factory=list)


def columns_from_the_root(
    n: int,
    edges: Sequence[tuple[int, int]],
    pinned: Sequence[int] = (),
    pin_within: int | None = None,
) -> list[int]:
    """Column of each node: as far right as its consumers allow (the root, and any node that
    nothing consumes, in the last column), `pinned` nodes in column 0; with `pin_within`, only
    those whose consumers are all within that many columns of it. Iterative (Kahn)."""
    height = longest_paths(n, [(target, source) for source, target in edges])  # to a sink
    top = max(height, default=0)
    column = [top - h for h in height]
    last_consumer = [0] * n
    for source, target in edges:
        last_consumer[source] = max(last_consumer[source], column[target])
    for node in pinned:
        if pin_within is None or last_consumer[node] <= pin_within:
            column[node] = 0
    return column


def longest_paths(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """The longest path to each node from a node without inputs (0 for those), along `edges`
    (source, target). Iterative (Kahn): graph size is never limited by recursion depth."""
    inputs_left = [0] * n
    consumers: list[list[int]] = [[] for _ in range(n)]
    for source, target in edges:
        inputs_left[target] += 1
        consumers[source].append(target)
    depth = [0] * n
    ready = [node for node in range(n) if inputs_left[node] == 0]
    while ready:
        node = ready.pop()
        for target in consumers[node]:
            depth[target] = max(depth[target], depth[node] + 1)
            inputs_left[target] -= 1
            if inputs_left[target] == 0:
                ready.append(target)
    return depth


def with_lanes(
    n: int,
    edges: Sequence[tuple[int, int]],
    column: list[int],
    weights: Sequence[float] | None = None,
) -> LayeredGraph:
    """The layered graph: every edge of span 2..MAX_SPAN becomes a chain through lanes, longer
    ones are left out; the edges of one source share its lane in a column (the lane's link
    weighs what they weigh together). Columns start in node order (the trace's: source order).

    An edge weighs (its weight) × (1 + the longest path from a leaf to its source): a node's
    long chain of inputs (the running total of a sum) outweighs a short side branch, so the
    spine of a program is drawn straight and its branches beside it, not a staircase."""
    graph = LayeredGraph(list(column), [[] for _ in range(n)], [[] for _ in range(n)], [])
    depth = longest_paths(n, edges)  # from the leaves

    def link(source: int, target: int, weight: float) -> None:
        graph.consumers[source].append((target, weight))
        graph.inputs[target].append((source, weight))

    lanes: dict[tuple[int, int], int] = {}  # (source, column) -> the source's lane there
    lane_at: dict[int, int] = {}  # a lane -> its place among its input's consumers
    for number, (source, target) in enumerate(edges):
        weight = (weights[number] if weights is not None else 1.0) * (1 + depth[source]) ** 2
        span = column[target] - column[source]
        if span < 1 or span > MAX_SPAN:
            continue
        previous = source
        for col in range(column[source] + 1, column[target]):
            lane = lanes.get((source, col))
            if lane is None:
                lane = lanes[source, col] = len(graph.column)
                graph.column.append(col)
                graph.inputs.append([])
                graph.consumers.append([])
                lane_at[lane] = len(graph.consumers[previous])
                link(previous, lane, weight)
            else:  # an earlier edge of the source made it: this one runs in it too
                ((_, held),) = graph.inputs[lane]
                graph.inputs[lane][0] = (previous, held + weight)
                graph.consumers[previous][lane_at[lane]] = (lane, held + weight)
            previous = lane
        link(previous, target, weight)
    graph.columns = [[] for _ in range(max(graph.column, default=-1) + 1)]
    for vertex, col in enumerate(graph.column):
        graph.columns[col].append(vertex)
    graph.input_weight = [sum(weight for _, weight in linked) for linked in graph.inputs]
    graph.consumer_weight = [sum(weight for _, weight in linked) for linked in graph.consumers]
    graph.split_inputs, graph.split_consumers = _split(graph.inputs), _split(graph.consumers)
    return graph


def order_columns(graph: LayeredGraph) -> None:
    """Barycentre sweeps, right to left (each column by its consumers) then left to right (by
    inputs); a vertex without neighbours on the side looked at keeps its place. A sweep that
    moves nothing is a fixed point: the sweeps stop there (the same order as ORDER_SWEEPS)."""
    position = [0.0] * len(graph.column)
    for column in graph.columns:
        for place, vertex in enumerate(column):
            position[vertex] = place
    inputs, consumers = graph.split_inputs, graph.split_consumers
    last = len(graph.columns) - 1
    for _ in range(ORDER_SWEEPS):
        before = position[:]
        for col in range(last - 1, -1, -1):
            reorder(graph.columns[col], consumers, graph.consumer_weight, position)
        for col in range(1, last + 1):
            reorder(graph.columns[col], inputs, graph.input_weight, position)
        if position == before:
            break


def reorder(
    column: list[int],
    neighbours: list[tuple[list[int], list[float]]],
    totals: list[float],
    position: list[float],
) -> None:
    """Sort `column` by the weighted mean position of each vertex's `neighbours` (their vertices
    and weights; the weights summed in `totals`), in place."""
    if len(column) == 1:
        return
    at = position.__getitem__
    keys = {}
    for vertex in column:
        ids, weights = neighbours[vertex]
        total = totals[vertex]
        centre = sum(map(mul, map(at, ids), weights)) / total if total else position[vertex]
        keys[vertex] = (centre, position[vertex])
    column.sort(key=keys.__getitem__)
    for place, vertex in enumerate(column):
        position[vertex] = place


def place_rows(graph: LayeredGraph, heights: Sequence[float], node_gap: float) -> list[float]:
    """The row (centre y) of every vertex: columns packed in order, then moved towards their
    neighbours' mean row, sweeping from the leaves to the root and back."""
    row = [0.0] * len(graph.column)
    # Each column's rows packed from 0: the least offsets the order and the gaps allow (the
    # sweeps keep them; only the columns' shifts and their pooled blocks move).
    offsets = []
    for column in graph.columns:
        y = 0.0
        packed = []
        for place, vertex in enumerate(column):
            if place:
                y += gap(heights, column[place - 1], vertex, node_gap)
            row[vertex] = y
            packed.append(y)
        offsets.append(packed)
    inputs, consumers = graph.split_inputs, graph.split_consumers
    last = len(graph.columns) - 1
    for sweep in range(ROW_SWEEPS):
        before = row[:] if sweep else None
        for col in range(1, last + 1):
            settle(graph.columns[col], offsets[col], inputs, graph.input_weight, row)
        for col in range(last - 1, -1, -1):
            settle(graph.columns[col], offsets[col], consumers, graph.consumer_weight, row)
        if before is not None and _translated(before, row):
            break  # the next sweeps would only move the whole drawing, which its bounds undo
    return row


def _translated(before: list[float], after: list[float]) -> bool:
    """Whether `after` is `before` moved as a whole (every row by the same distance, to within
    SETTLED): the rows have settled. Measured on the layouts of the presets and of micrograd's
    demo (31,245 vertices), every sweep after the first moves them so: a shape settles in one."""
    moved = list(map(sub, after, before))
    return max(moved) - min(moved) <= SETTLED


def _split(
    neighbours: list[list[tuple[int, float]]],
) -> list[tuple[list[int], list[float]]]:
    """Each vertex's neighbours as two lists, their vertices and their weights: a weighted mean
    is then one `sum(map(…))` in C, not a generator a neighbour (the demo's sweeps read 1.5
    million of them)."""
    return [([v for v, _ in linked], [w for _, w in linked]) for linked in neighbours]


def gap(heights: Sequence[float], above: int, below: int, node_gap: float) -> float:
    """The least distance between the centres of two vertices one above the other."""
    return (heights[above] + heights[below]) / 2 + node_gap


def settle(
    column: list[int],
    offsets: list[float],
    neighbours: list[tuple[list[int], list[float]]],
    totals: list[float],
    row: list[float],
) -> None:
    """Move `column`'s rows as close as the order and gaps allow to each vertex's neighbours'
    weighted mean row (their vertices and weights in `neighbours`, the weights summed in
    `totals`), in place: least squares under `row[i+1] - row[i] >= gap`, `offsets` the rows
    packed from 0 (each row's least distance from the first)."""
    at = row.__getitem__
    if len(column) == 1:  # nothing to keep apart: straight to the mean (most columns of a chain)
        vertex = column[0]
        ids, weights = neighbours[vertex]
        if ids:
            row[vertex] = sum(map(mul, map(at, ids), weights)) / totals[vertex]
        return
    wanted = []
    weights = []
    for vertex, offset in zip(column, offsets):  # noqa: B905 - as long, by construction
        ids, linked = neighbours[vertex]
        total = totals[vertex]
        if total:
            target = sum(map(mul, map(at, ids), linked)) / total
        else:
            target, total = row[vertex], LONE_WEIGHT
        wanted.append(target - offset)
        weights.append(total)
    for vertex, offset, value in zip(column, offsets, isotonic(wanted, weights)):  # noqa: B905
        row[vertex] = value + offset


def isotonic(values: Sequence[float], weights: Sequence[float]) -> list[float]:
    """The non-decreasing sequence closest to `values` in weighted least squares (pool adjacent
    violators: each block holds the weighted mean of what it pooled)."""
    means: list[float] = []  # the blocks: their means, total weights and counts
    totals: list[float] = []
    counts: list[int] = []
    for value, weight in zip(values, weights, strict=True):
        mean, total, count = value, weight, 1
        while means and means[-1] > mean:
            previous, before = means.pop(), totals.pop()
            pooled = before + total
            mean = (previous * before + mean * total) / pooled
            total = pooled
            count += counts.pop()
        means.append(mean)
        totals.append(total)
        counts.append(count)
    fitted = []
    for mean, count in zip(means, counts):  # noqa: B905 - as long, by construction
        fitted.extend([mean] * count)
    return fitted


def ordered(
    n: int,
    edges: Sequence[tuple[int, int]],
    *,
    pinned: Sequence[int] = (),
    weights: Sequence[float] | None = None,
) -> LayeredGraph:
    """Steps 1 and 2 for `n` nodes of a DAG: columns, lanes and the order in each column. They
    never look at the cards' sizes, so one ordering serves every size of card (a graph of groups
    laid out collapsed and expanded: `placed_centres` of each)."""
    # A pinned node (a group's port) whose edge is too long for lanes stays by its consumer: in
    # the first column it would only stack up, holding no lane.
    columns = columns_from_the_root(n, edges, pinned, pin_within=MAX_SPAN)
    graph = with_lanes(n, edges, columns, weights)
    order_columns(graph)
    return graph


def placed_centres(
    graph: LayeredGraph,
    sizes: Sequence[tuple[float, float]],
    *,
    rank_gap: float,
    node_gap: float,
) -> list[tuple[float, float]]:
    """Step 3 for the nodes of an `ordered` graph, cards of `sizes`: the centre (x, y) of each,
    columns `rank_gap` apart (each as wide as its widest card), cards at least `node_gap` apart
    in a column."""
    n = len(sizes)
    heights = [height for _, height in sizes] + [0.0] * (len(graph.column) - n)
    rows = place_rows(graph, heights, node_gap)
    widths = [0.0] * len(graph.columns)
    for node in range(n):
        widths[graph.column[node]] = max(widths[graph.column[node]], sizes[node][0])
    lefts = []
    left = 0.0
    for width in widths:
        lefts.append(left)
        left += width + rank_gap
    return [
        (lefts[graph.column[node]] + widths[graph.column[node]] / 2, rows[node])
        for node in range(n)
    ]


def layered_centres(
    n: int,
    edges: Sequence[tuple[int, int]],
    sizes: Sequence[tuple[float, float]],
    *,
    rank_gap: float,
    node_gap: float,
    pinned: Sequence[int] = (),
    weights: Sequence[float] | None = None,
) -> list[tuple[float, float]]:
    """The centre (x, y) of each of `n` nodes of a DAG laid out left to right in columns
    `rank_gap` apart (each as wide as its widest card) and cards at least `node_gap` apart in a
    column; `pinned` nodes in the first column when their edges are short enough for lanes;
    `weights` per edge (default 1) pull harder."""
    if n == 0:
        return []
    graph = ordered(n, edges, pinned=pinned, weights=weights)
    return placed_centres(graph, sizes, rank_gap=rank_gap, node_gap=node_gap)
