"""Where every card goes: Graphviz `dot` for graphs it can lay out quickly, the layered
fallback (app/layout/layered.py, plain Python) for the rest, cached by graph structure so values
never
move cards.

Whether dot is worth trying is predicted from the graph's shape before it runs (dot_cost): not
the node count but the long edges, each of which dot turns into a vertex per column it crosses.

Two layouts per structure, cached together: the graph with every statement's nodes in a labelled
box (a dot cluster), and the graph with every statement collapsed to one card (one vertex per
group). Coordinates are px with y growing downward; `x, y` is the centre of a card or box.
Leaves are on the left, the root on the right (rankdir LR).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cached_property
from threading import Lock, local
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from chainrule.app.http.cache import BoundedCache, CacheStats
from chainrule.app.layout.graphviz import Graphviz, GraphvizError, layout_environment
from chainrule.app.layout.layered import (
    LayeredGraph,
    columns_from_the_root,
    layered_centres,
    placed_centres,
)

try:
    import orjson
except ImportError:  # the page's sandbox (Pyodide) lays out a graph too big to send (no dot)
    orjson = None

if TYPE_CHECKING:
    from chainrule.app.layout.process import LayoutProcess
    from chainrule.app.settings import AppSettings


def _json_bytes(value: Any) -> bytes:
    """`value` as JSON bytes, for a digest: orjson's (a tenth of the time), else json's."""
    if orjson is not None:
        return orjson.dumps(value)
    return json.dumps(value, separators=(",", ":")).encode()


# Card sizes in px, as the page draws them; dot gets the same sizes so its positions fit them.
CARD_SIZE: dict[str, tuple[float, float]] = {
    "leaf": (150.0, 64.0),
    "op": (150.0, 64.0),
    "const": (56.0, 32.0),
    "group": (150.0, 64.0),  # a collapsed statement: the size of its root's card
}
MARGIN = 16.0  # px around the drawing, so every card has x - width/2 >= 0
RANK_GAP = 60.0  # px between columns (dot's ranksep)
NODE_GAP = 20.0  # px between cards in a column (dot's nodesep)
POINTS_PER_INCH = 72.0  # dot's unit; 1 px on the page = 1 pt, so sizes in inches are px / 72
# A statement's box: FRAME_PAD px around its cards and a band of FRAME_LABEL px on top for its name.
FRAME_PAD = 10.0
FRAME_LABEL = 26.0

LayoutEngine = Literal["dot", "sugiyama"]

# dot's work, bounded (measured on a 2-core machine; bench/layout_cost.py prints it again).
# Its ranks and its rows are each a network simplex: at most DOT_BUDGET / (nodes × vertices)
# passes per node, well under a second on every graph we measured.
DOT_BUDGET = 1_000_000
# The rows' network simplex walks the lanes of long edges on every pass, about 2 µs per pass
# and per (span of a long edge)², summed: `c*c*…*c` of 150 factors is 1.8 s, 300 terms of a sum
# 15 s. Past DOT_MAX_LANE_SQUARES (about 0.4 s) dot skips it (nslimit=0) and keeps its first
# placement, which is plainer, and the page's layout takes the layered fallback instead.
DOT_MAX_LANE_SQUARES = 200_000
DOT_LANES_FOR_MINCROSS = 10_000  # beyond, fewer crossing-minimisation passes (mclimit)
INSIDES_PER_LAYOUT = 4  # statement shapes kept per cached layout


@dataclass(frozen=True)
class DotCost:
    """What dot would lay out: `nodes` and `edges`, and `lanes`, the extra vertex dot adds in
    every column an edge crosses beyond its first (a 2,000-factor `k*k*…*k` has two million),
    and `lane_squares`, the sum of each edge's lanes squared."""

    nodes: int
    edges: int
    lanes: int
    lane_squares: int

    def __add__(self, other: DotCost) -> DotCost:
        """The cost of laying out both graphs."""
        return DotCost(
            self.nodes + other.nodes,
            self.edges + other.edges,
            self.lanes + other.lanes,
            self.lane_squares + other.lane_squares,
        )

    @property
    def rows_affordable(self) -> bool:
        """Whether dot's network simplex for the rows stays within its budget."""
        return self.lane_squares <= DOT_MAX_LANE_SQUARES

    def limits(self) -> dict[str, str]:
        """dot's graph attributes bounding its work on this graph: nslimit1 for the ranks,
        nslimit for the rows (each a number of passes per node), mclimit for the crossings."""
        vertices = self.nodes + self.edges
        ranks = min(1.0, DOT_BUDGET / max(1, self.nodes * vertices))
        rows = 0.0
        if self.rows_affordable:
            rows = min(1.0, DOT_BUDGET / max(1, self.nodes * (vertices + 2 * self.lanes)))
        limits = {"nslimit1": f"{ranks:.4g}", "nslimit": f"{rows:.4g}"}
        if self.lanes > DOT_LANES_FOR_MINCROSS:
            limits["mclimit"] = "0.2"
        return limits


def dot_cost(n: int, edges: Sequence[tuple[int, int]], pinned: Sequence[int] = ()) -> DotCost:
    """dot's work on a graph of `n` nodes, predicted from its shape in linear time: columns as
    the layered fallback places them (each node as far right as its consumers allow, which is
    what dot's ranking tends to), `pinned` nodes in the first column (rank=source)."""
    column = columns_from_the_root(n, edges, pinned)
    spans = [column[target] - column[source] - 1 for source, target in edges]
    lanes = [span for span in spans if span > 0]
    return DotCost(n, len(edges), sum(lanes), sum(span * span for span in lanes))


Box = tuple[float, float, float, float]  # (x, y, width, height), x and y the centre
T = TypeVar("T")


@dataclass(frozen=True)
class Layout:
    """Card boxes `(x, y, width, height)` in node order, and the size of the whole drawing.

    `frames`: per group, the labelled box around its cards (None for a group of one card).
    `collapsed`: the layout of the collapsed graph, one box per group (None when no group has
    more than one card: collapsing changes nothing)."""

    engine: LayoutEngine
    width: float
    height: float
    boxes: tuple[Box, ...]
    frames: tuple[Box | None, ...] = ()
    collapsed: Layout | None = None

    def size(self) -> int:
        """Boxes held, for the cache's bound."""
        return len(self.boxes) + len(self.frames) + (self.collapsed.size() if self.collapsed else 0)


@dataclass(frozen=True)
class Structure:
    """What the layout depends on: card kinds, edges and groups, never names or values."""

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]  # (input index, consumer index), in the trace's order
    key: bytes
    # The group of each node (an index into the groups), or () when every node is its own.
    groups: tuple[int, ...] = ()
    # Each card's (width, height) when not its kind's CARD_SIZE (an expanded tensor op's cards,
    # as wide as their names), or () for every card its kind's size.
    sizes: tuple[tuple[float, float], ...] = ()

    def card_sizes(self) -> list[tuple[float, float]]:
        """Each card's (width, height), in node order."""
        return list(self.sizes) or [CARD_SIZE[kind] for kind in self.kinds]

    @cached_property
    def cost(self) -> DotCost:
        """dot's work on this graph (dot_cost), predicted once: the layout asks several times."""
        return dot_cost(len(self.ids), self.edges)

    def group_members(self) -> list[list[int]]:
        """The node indices of each group, in node order."""
        if not self.groups:
            return [[i] for i in range(len(self.ids))]
        members: list[list[int]] = [[] for _ in range(max(self.groups, default=-1) + 1)]
        for node, group in enumerate(self.groups):
            members[group].append(node)
        return members


def structure_of(
    nodes: Sequence[dict[str, Any]],
    edges: Sequence[dict[str, Any]],
    groups: Sequence[dict[str, Any]] = (),
) -> Structure:
    """Extract the value-free structure of a traced graph (`nodes`, `edges` and `groups` as in
    docs/api.md; without `groups` every node is a group of its own)."""
    ids = tuple(node["id"] for node in nodes)
    index = {node_id: i for i, node_id in enumerate(ids)}
    group_of = [0] * len(ids)
    for number, group in enumerate(groups):
        for member in group["nodes"]:
            group_of[index[member]] = number
    return structure(
        ids,
        [node["kind"] for node in nodes],
        [(index[edge["source"]], index[edge["target"]]) for edge in edges],
        group_of if groups else None,
    )


def structure(
    ids: Sequence[str],
    kinds: Sequence[str],
    edges: Sequence[tuple[int, int]],
    group_of: Sequence[int] | None = None,
    sizes: Sequence[tuple[float, float]] | None = None,
) -> Structure:
    """The structure of a graph from its node ids, each card's kind, the edges as (input index,
    consumer index) pairs and each node's group (None: each node its own); `sizes`: each
    card's (width, height) where not its kind's (a graph without groups only)."""
    digest = hashlib.blake2b(digest_size=20)
    # What a card's place depends on: its kind (its size), the edges and the groups; never its
    # name, its operation or a value, so a renamed variable or a `*` made `+` finds the cache.
    digest.update(_json_bytes(kinds))
    digest.update(_json_bytes(edges))
    digest.update(_json_bytes(group_of))
    if sizes is not None:
        digest.update(_json_bytes(sizes))
    groups = tuple(group_of) if group_of is not None else ()
    cards = tuple((float(w), float(h)) for w, h in sizes) if sizes is not None else ()
    return Structure(
        tuple(ids), tuple(kinds), tuple(map(tuple, edges)), digest.digest(), groups, cards
    )


def collapsed_structure(grouped: Structure) -> Structure | None:
    """The graph with each group as one vertex (kind "group" when it holds several cards, else
    its card's kind) and the edges between groups, in order; None when every group holds one
    card (the collapsed graph is the graph itself). Its key is its own: the collapsed graphs of
    two graphs share it when only the insides of their groups differ."""
    members = grouped.group_members()
    if all(len(nodes) == 1 for nodes in members):
        return None
    kinds = tuple(grouped.kinds[nodes[0]] if len(nodes) == 1 else "group" for nodes in members)
    group_of = grouped.groups
    edges = tuple(
        (group_of[source], group_of[target])
        for source, target in grouped.edges
        if group_of[source] != group_of[target]
    )
    return structure([f"g{i}" for i in range(len(members))], kinds, edges)


def framed_groups(structure: Structure) -> list[tuple[int, list[int]]]:
    """The groups drawn in a labelled box (those of more than one card): (group, members)."""
    return [
        (group, nodes) for group, nodes in enumerate(structure.group_members()) if len(nodes) > 1
    ]


class Layouter:
    """Lays graphs out, remembering layouts by structure: dot when its predicted cost is within
    bounds and it answers (a Graphviz slot free, in time), else the layered fallback. Counts how
    often dot really ran."""

    def __init__(
        self,
        *,
        dot_timeout_s: float,
        dot_max_nodes: int,
        cache_size: int,
        dot_binary: str | None = None,
        dot_max_lanes: int = 20_000,
        graphviz: Graphviz | None = None,
    ) -> None:
        self.dot_timeout_s = dot_timeout_s
        self.dot_max_nodes = dot_max_nodes
        self.dot_max_lanes = dot_max_lanes
        if graphviz is None:
            graphviz = Graphviz(dot_binary if dot_binary is not None else shutil.which("dot") or "")
        self.graphviz = graphviz
        # Size a layout by its boxes: ~2M cached boxes at most.
        self.cache: BoundedCache[Layout] = BoundedCache(
            cache_size, max_size=2_000_000, sizeof=lambda layout: layout.size() + 1
        )
        # dot's drawing of a statement's inside, by its shape (app/layout/groups.py): statements
        # of one shape recur across programs, and a graph whose insides are all known is drawn
        # in one dot run instead of two one after the other (~45 ms of a 1,000-node POST).
        self.insides: BoundedCache[Any] = BoundedCache(
            cache_size * INSIDES_PER_LAYOUT,
            max_size=1_000_000,
            sizeof=lambda inside: len(inside[2]),
        )
        # dot's drawing of a collapsed graph, by its structure (kinds and edges in order): an
        # edit inside statements changes the expanded graph, not the graph of statements, and
        # the next POST draws one graph of groups instead of two side by side.
        self.collapsed: BoundedCache[Layout] = BoundedCache(
            cache_size, max_size=1_000_000, sizeof=lambda layout: layout.size() + 1
        )
        self._dot_runs_lock = Lock()
        # per thread: what `layout` calls when it first waits for another process
        self._waiting = local()
        self.dot_runs = 0
        # Big graphs laid out in a helper process (app/layout/process.py), when one is given.
        self.process: LayoutProcess | None = None

    @classmethod
    def from_settings(cls, settings: AppSettings, graphviz: Graphviz | None = None) -> Layouter:
        """A Layouter with the settings' limits, sharing `graphviz` (default: a new one)."""
        return cls(
            dot_timeout_s=settings.dot_timeout_s,
            dot_max_nodes=settings.dot_max_nodes,
            dot_max_lanes=settings.dot_max_lanes,
            cache_size=settings.layout_cache_size,
            graphviz=graphviz or Graphviz.from_settings(settings),
        )

    def layout(
        self, structure: Structure, drawing: Callable[[], None] | None = None
    ) -> tuple[Layout, bool]:
        """The layout of `structure` (with its collapsed layout when it has groups of several
        cards) and whether it came from the cache. `drawing` is called when this thread first
        waits for another process (dot, or the helper that lays out a big graph: the rest is
        theirs), if it does."""
        cached = self.cache.get(structure.key)
        if cached is not None:
            return cached, True
        if self.process is not None and self.process.wanted(len(structure.ids)):
            if drawing is not None:
                drawing()
            layout = self.process.layout(structure)
            if layout is not None:
                self.cache.put(structure.key, layout)
                return layout, False
            drawing = None  # called already: the layout below is this thread's own
        self._waiting.drawing = drawing
        try:
            if collapsed_structure(structure) is None:
                layout = self._flat(structure)
            else:
                from chainrule.app.layout.groups import grouped_layout  # it builds on this module

                layout = grouped_layout(structure, self)
        finally:
            self._waiting.drawing = None
        self.cache.put(structure.key, layout)
        return layout, False

    def expect(self, nodes: int) -> None:
        """A graph of about `nodes` nodes is coming: start what its layout will use."""
        if self.process is not None:
            self.process.expect(nodes)

    def stats(self) -> CacheStats:
        return self.cache.stats()

    def dot_affordable(self, cost: DotCost) -> bool:
        """Whether dot is worth trying on a graph of this cost (and there is a dot)."""
        return (
            bool(self.graphviz.binary)
            and cost.nodes <= self.dot_max_nodes
            and cost.lanes <= self.dot_max_lanes
            and cost.rows_affordable
        )

    def _flat(self, structure: Structure) -> Layout:
        """dot when the graph is affordable and dot answers, else the fallback."""
        layout = None
        if self.dot_affordable(structure.cost):
            sizes = structure.card_sizes()
            output = self.run_dot(dot_source(structure, sizes=sizes))
            layout = parse_dot(output, lambda drawings: parse_json0(structure, drawings[0], sizes))
        return layout or sugiyama_layout(structure)

    def run_dot(self, source: str, *, beside: Future[Any] | None = None) -> bytes | None:
        """dot's JSON for DOT `source`, bounded (app/layout/graphviz.py); None if every Graphviz
        slot
        is taken, or dot is too slow or fails (the caller falls back). With the caller's own
        run `beside` it (start_dot), it waits for a slot as long as that run may take: that
        run's slot frees by then, so the caller never falls back for want of its own slot."""
        self._count_dot_run()
        drawing = getattr(self._waiting, "drawing", None)
        if drawing is not None:  # once: this thread now waits for dot
            self._waiting.drawing = None
            drawing()
        wait_s = None if beside is None or beside.done() else self.dot_timeout_s
        try:
            return self.graphviz.run(
                ["-Tjson0"], source.encode(), self.dot_timeout_s, wait_s, self._dot_env()
            )
        except GraphvizError:
            return None

    def start_dot(
        self, source: str, parse: Callable[[list[dict[str, Any]]], T]
    ) -> Future[T | None] | None:
        """`parse_dot(run_dot(source), parse)` started beside the caller's work when a Graphviz
        slot is free at once, else None (nothing started: the caller runs it with its own).
        dot's answer is parsed in the thread that waited for it as soon as it is there, while
        the caller may still wait for its own run: not after it, on the reply's way."""
        started = self.graphviz.start(
            ["-Tjson0"], source.encode(), self.dot_timeout_s, self._dot_env()
        )
        if started is None:
            return None
        self._count_dot_run()
        parsed: Future[T | None] = Future()

        def parse_answer(done: Future[bytes]) -> None:
            try:
                parsed.set_result(parse_dot(self.dot_answer(done), parse))
            except BaseException as error:  # the caller raises it, never left waiting
                parsed.set_exception(error)

        started.add_done_callback(parse_answer)
        return parsed

    @staticmethod
    def dot_answer(started: Future[bytes]) -> bytes | None:
        """The output of a dot run that is done; None as `run_dot` says it."""
        try:
            return started.result()
        except GraphvizError:
            return None

    def _dot_env(self) -> dict[str, str] | None:
        """The environment of a layout's dot: only the plugins it uses (app/layout/graphviz.py)."""
        return layout_environment(self.graphviz.binary)

    def _count_dot_run(self) -> None:
        with self._dot_runs_lock:
            self.dot_runs += 1


def parse_dot(output: bytes | None, parse: Callable[[list[dict[str, Any]]], T]) -> T | None:
    """`parse(drawings)` of dot's JSON output (a drawing per graph of its input), or None when
    there is none or it is malformed."""
    if output is None:
        return None
    try:
        return parse(split_drawings(output))
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def split_drawings(output: bytes) -> list[dict[str, Any]]:
    """The drawings of a dot run: one JSON object per graph, one after another."""
    try:
        return [orjson.loads(output)]
    except orjson.JSONDecodeError:
        pass
    text = output.decode()
    decoder = json.JSONDecoder()
    drawings = []
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return drawings
        drawing, at = decoder.raw_decode(text, at)
        drawings.append(drawing)


def dot_source(
    structure: Structure,
    node_gap: float = NODE_GAP,
    sizes: Sequence[tuple[float, float]] | None = None,
) -> str:
    """DOT text for the layout: fixed-size empty boxes named by our ids (sized by kind, or by
    `sizes`), dot's work bounded by the graph's cost; no user text at all."""
    lines = [
        "digraph {",
        dot_graph_attributes(node_gap, structure.cost),
        'node [shape=box fixedsize=true label=""]',
    ]
    sizes = sizes or [CARD_SIZE[kind] for kind in structure.kinds]
    for node_id, (width, height) in zip(structure.ids, sizes, strict=True):
        lines.append(f"{node_id} [{dot_size(width, height)}]")
    ids = structure.ids
    lines.extend(f"{ids[source]} -> {ids[target]}" for source, target in structure.edges)
    lines.append("}")
    return "\n".join(lines)


def dot_graph_attributes(node_gap: float, cost: DotCost) -> str:
    """The graph line of our DOT: left to right, our gaps, no edges drawn (`splines=""`: the
    page draws its own; routing them was a tenth of dot's time and the boxes are the same),
    and the bounds on dot's work for a graph of this cost (FIELD-NOTES: long edges otherwise
    cost seconds)."""
    return (
        f"graph [rankdir=LR nodesep={node_gap / POINTS_PER_INCH:.4f}"
        f' ranksep={RANK_GAP / POINTS_PER_INCH:.4f} splines=""'
        + "".join(f" {name}={value}" for name, value in cost.limits().items())
        + "]"
    )


def dot_size(width: float, height: float) -> str:
    """A box's size as DOT writes it (inches)."""
    return f"width={width / POINTS_PER_INCH:.4f} height={height / POINTS_PER_INCH:.4f}"


def dot_centres(drawing: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The centre of every node of dot's drawing in px, y down, from the drawing's top left."""
    left, _, _, top = (float(v) for v in drawing["bb"].split(","))
    centres = {}
    for obj in drawing.get("objects", ()):
        if "pos" in obj:  # a node, not a subgraph
            x, y = (float(v) for v in obj["pos"].split(","))
            centres[obj["name"]] = (x - left, top - y)
    return centres


def parse_json0(
    structure: Structure,
    drawing: dict[str, Any],
    sizes: Sequence[tuple[float, float]] | None = None,
) -> Layout:
    """Convert dot's output (points, origin bottom-left) to px boxes with y down."""
    centres = dot_centres(drawing)
    sizes = sizes or [CARD_SIZE[kind] for kind in structure.kinds]
    boxes = tuple(
        (*centres[node_id], *size) for node_id, size in zip(structure.ids, sizes, strict=True)
    )
    return _bounded("dot", boxes)


def sugiyama_layout(structure: Structure) -> Layout:
    """The layered fallback of a graph whose groups are single cards."""
    return layered_layout(structure, structure.card_sizes(), NODE_GAP)


def layered_layout(
    structure: Structure,
    sizes: Sequence[tuple[float, float]],
    node_gap: float,
    order: LayeredGraph | None = None,
) -> Layout:
    """The layered fallback (app/layout/layered.py) of `structure`, its cards of `sizes`; with
    `order`, the structure's columns and order found before (`layered.ordered`: they do not
    depend on the sizes)."""
    if order is None:
        centres = layered_centres(
            len(structure.ids), structure.edges, sizes, rank_gap=RANK_GAP, node_gap=node_gap
        )
    else:
        centres = placed_centres(order, sizes, rank_gap=RANK_GAP, node_gap=node_gap)
    boxes = tuple((x, y, *size) for (x, y), size in zip(centres, sizes, strict=True))
    return _bounded("sugiyama", boxes)


def _bounded(
    engine: LayoutEngine, boxes: tuple[Box, ...], frames: tuple[Box | None, ...] = ()
) -> Layout:
    """Shift boxes and frames so the drawing starts at MARGIN and measure its extent."""
    if not boxes:
        return Layout(engine, 2 * MARGIN, 2 * MARGIN, (), frames)
    every = [*boxes, *(frame for frame in frames if frame is not None)]
    min_left = min(x - w / 2 for x, _, w, _ in every)
    min_top = min(y - h / 2 for _, y, _, h in every)
    dx, dy = MARGIN - min_left, MARGIN - min_top

    def shift(box: Box) -> Box:
        x, y, w, h = box
        return (round(x + dx, 2), round(y + dy, 2), round(w, 2), round(h, 2))

    # Inline for the boxes (thousands a drawing; a call each was most of this function), the
    # few sizes of cards rounded once each (micrograd's demo: 65,818 boxes, 0.15 -> 0.08 s).
    sizes = {}
    for _, _, w, h in boxes:
        if (w, h) not in sizes:
            sizes[w, h] = (round(w, 2), round(h, 2))
    shifted = tuple((round(x + dx, 2), round(y + dy, 2), *sizes[w, h]) for x, y, w, h in boxes)
    shifted_frames = tuple(None if frame is None else shift(frame) for frame in frames)
    every = [*shifted, *(frame for frame in shifted_frames if frame is not None)]
    width = max(x + w / 2 for x, _, w, _ in every) + MARGIN
    height = max(y + h / 2 for _, y, _, h in every) + MARGIN
    return Layout(engine, round(width, 2), round(height, 2), shifted, shifted_frames)
