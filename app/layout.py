"""Where every card goes: Graphviz `dot` for graphs it can handle quickly, a layered
(Sugiyama) layout from igraph for the rest, cached by graph structure so values never move cards.

Two layouts per structure, cached together: the graph with every statement's nodes in a labelled
box (a dot cluster), and the graph with every statement collapsed to one card (one vertex per
group). Coordinates are px with y growing downward; `x, y` is the centre of a card or box.
Leaves are on the left, the root on the right (rankdir LR).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Any, Literal, TypeVar

import igraph
import orjson

from chainrule.app.cache import BoundedCache, CacheStats

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
MAX_SPAN = 4  # columns an edge may cross and still take part in the fallback's ordering
POINTS_PER_INCH = 72.0  # dot's unit; 1 px on the page = 1 pt, so sizes in inches are px / 72
# A statement's box: FRAME_PAD px around its cards and a band of FRAME_LABEL px on top for its name.
FRAME_PAD = 10.0
FRAME_LABEL = 26.0

LayoutEngine = Literal["dot", "sugiyama"]
IGRAPH_LOCK = Lock()

# Linux's prctl(PR_SET_PDEATHSIG): the kernel kills a child when the thread that started it dies.
PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def run_graphviz(dot_binary: str, args: list[str], source: bytes, timeout_s: float) -> bytes:
    """Graphviz's output for DOT `source`, killed after `timeout_s` (subprocess.TimeoutExpired)
    or when the process that asked for it dies: a worker killed by SIGKILL runs no timeout, and
    its `dot` would otherwise run on for as long as the drawing takes (CalledProcessError and
    OSError on failure)."""
    result = subprocess.run(
        [dot_binary, *args],
        input=source,
        capture_output=True,
        timeout=timeout_s,
        check=True,
        # preexec_fn runs between fork and exec; it calls only a function resolved at import.
        preexec_fn=_die_with_parent if _prctl is not None else None,
    )
    return result.stdout


Box = tuple[float, float, float, float]  # (x, y, width, height), x and y the centre


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
    """What the layout depends on: card kinds, labels, edges and groups, never values."""

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]  # (input index, consumer index), in the trace's order
    key: bytes
    # The group of each node (an index into the groups), or () when every node is its own.
    groups: tuple[int, ...] = ()

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
        [(node["kind"], node["op"], node["label"]) for node in nodes],
        [(index[edge["source"]], index[edge["target"]]) for edge in edges],
        group_of if groups else None,
    )


def structure(
    ids: Sequence[str],
    cards: Sequence[tuple[str, str | None, str]],
    edges: Sequence[tuple[int, int]],
    group_of: Sequence[int] | None = None,
) -> Structure:
    """The structure of a graph from its node ids, each card's (kind, op, label), the edges as
    (input index, consumer index) pairs and each node's group (None: each node its own)."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(orjson.dumps(cards))
    digest.update(orjson.dumps(edges))
    digest.update(orjson.dumps(group_of))
    kinds = tuple(kind for kind, _, _ in cards)
    groups = tuple(group_of) if group_of is not None else ()
    return Structure(tuple(ids), kinds, tuple(map(tuple, edges)), digest.digest(), groups)


def collapsed_structure(structure: Structure) -> Structure | None:
    """The graph with each group as one vertex (kind "group" when it holds several cards, else
    its card's kind) and the edges between groups, in order; None when every group holds one
    card (the collapsed graph is the graph itself)."""
    members = structure.group_members()
    if all(len(nodes) == 1 for nodes in members):
        return None
    kinds = tuple(structure.kinds[nodes[0]] if len(nodes) == 1 else "group" for nodes in members)
    group_of = structure.groups
    edges = tuple(
        (group_of[source], group_of[target])
        for source, target in structure.edges
        if group_of[source] != group_of[target]
    )
    ids = tuple(f"g{i}" for i in range(len(members)))
    return Structure(ids, kinds, edges, b"")


def framed_groups(structure: Structure) -> list[tuple[int, list[int]]]:
    """The groups drawn in a labelled box (those of more than one card): (group, members)."""
    return [
        (group, nodes) for group, nodes in enumerate(structure.group_members()) if len(nodes) > 1
    ]


class Layouter:
    """Lays graphs out, remembering layouts by structure; counts how often dot really ran."""

    def __init__(
        self,
        *,
        dot_timeout_s: float,
        dot_max_nodes: int,
        cache_size: int,
        dot_binary: str | None = None,
    ) -> None:
        self.dot_timeout_s = dot_timeout_s
        self.dot_max_nodes = dot_max_nodes
        self.dot_binary = dot_binary if dot_binary is not None else shutil.which("dot")
        # Size a layout by its boxes: ~2M cached boxes at most.
        self.cache: BoundedCache[Layout] = BoundedCache(
            cache_size, max_size=2_000_000, sizeof=lambda layout: layout.size() + 1
        )
        self._dot_runs_lock = Lock()
        self.dot_runs = 0

    def layout(self, structure: Structure) -> tuple[Layout, bool]:
        """The layout of `structure` (with its collapsed layout when it has groups of several
        cards) and whether it came from the cache."""
        cached = self.cache.get(structure.key)
        if cached is not None:
            return cached, True
        if collapsed_structure(structure) is None:
            layout = self._flat(structure)
        else:
            from chainrule.app.group_layout import grouped_layout  # it builds on this module

            layout = grouped_layout(structure, self)
        self.cache.put(structure.key, layout)
        return layout, False

    def stats(self) -> CacheStats:
        return self.cache.stats()

    def dot_allowed(self, vertices: int) -> bool:
        """Whether a graph of `vertices` is small enough to try dot on."""
        return bool(self.dot_binary) and vertices <= self.dot_max_nodes

    def _flat(self, structure: Structure) -> Layout:
        """dot when the graph is small enough and dot answers in time, else the fallback."""
        layout = None
        if self.dot_allowed(len(structure.ids)):
            output = self.run_dot(dot_source(structure))
            layout = parse_dot(output, lambda drawings: parse_json0(structure, drawings[0]))
        return layout or sugiyama_layout(structure)

    def run_dot(self, source: str) -> bytes | None:
        """dot's JSON for DOT `source`, with the hard timeout; None if it is too slow or fails
        (the caller falls back)."""
        with self._dot_runs_lock:
            self.dot_runs += 1
        try:
            return run_graphviz(self.dot_binary, ["-Tjson0"], source.encode(), self.dot_timeout_s)
        except (subprocess.SubprocessError, OSError):
            return None


T = TypeVar("T")


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
    guard: bool = False,
) -> str:
    """DOT text for the layout: fixed-size empty boxes named by our ids (sized by kind, or by
    `sizes`); no user text at all. `guard`: see dot_graph_attributes."""
    lines = [
        "digraph {",
        dot_graph_attributes(node_gap, guard),
        'node [shape=box fixedsize=true label=""]',
    ]
    sizes = sizes or [CARD_SIZE[kind] for kind in structure.kinds]
    for node_id, (width, height) in zip(structure.ids, sizes, strict=True):
        lines.append(f"{node_id} [{dot_size(width, height)}]")
    ids = structure.ids
    lines.extend(f"{ids[source]} -> {ids[target]}" for source, target in structure.edges)
    lines.append("}")
    return "\n".join(lines)


def dot_graph_attributes(node_gap: float, guard: bool = False) -> str:
    """The graph line of our DOT: left to right, our gaps, straight edges. `guard` bounds dot's
    network simplex passes to one per node (FIELD-NOTES: long edges otherwise cost seconds)."""
    limits = " nslimit=1 nslimit1=1" if guard else ""
    return (
        f"graph [rankdir=LR nodesep={node_gap / POINTS_PER_INCH:.4f}"
        f" ranksep={RANK_GAP / POINTS_PER_INCH:.4f} splines=false{limits}]"
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
    """Layered layout: a column per layer, rows ordered by igraph's Sugiyama (barycentre)
    heuristic. Edges spanning more than MAX_SPAN columns are left out of the crossing
    minimisation: each would add a dummy vertex per column it crosses, which is quadratic on
    long sums (x0 + x1 + … puts x0 thousands of columns left of the root)."""
    n = len(structure.ids)
    layers = layer_of_each_node(n, structure.edges)
    short_edges = [(s, t) for s, t in structure.edges if layers[t] - layers[s] <= MAX_SPAN]
    with IGRAPH_LOCK:  # igraph's C core keeps global state and is not thread-safe
        graph = igraph.Graph(n=n, edges=short_edges, directed=True)
        coords = graph.layout_sugiyama(layers=layers, maxiter=20).coords[:n]  # drop dummies
    column_width = max(w for w, _ in CARD_SIZE.values()) + RANK_GAP
    row_height = max(h for _, h in CARD_SIZE.values()) + NODE_GAP
    boxes = tuple(
        (column * column_width, row * row_height, *CARD_SIZE[kind])
        for (row, column), kind in zip(coords, structure.kinds, strict=True)
    )
    return _bounded("sugiyama", boxes, enclosing_frames(structure, boxes))


def enclosing_frames(structure: Structure, boxes: Sequence[Box]) -> tuple[Box | None, ...]:
    """The fallback's statement boxes: around each group's cards, padded as dot pads a cluster
    (the layered layout does not keep a group apart, so a box may overlap other cards)."""
    if not structure.groups:
        return ()
    frames: list[Box | None] = [None] * len(structure.group_members())
    for group, members in framed_groups(structure):
        x0 = min(boxes[m][0] - boxes[m][2] / 2 for m in members) - FRAME_PAD
        x1 = max(boxes[m][0] + boxes[m][2] / 2 for m in members) + FRAME_PAD
        y0 = min(boxes[m][1] - boxes[m][3] / 2 for m in members) - FRAME_PAD - FRAME_LABEL
        y1 = max(boxes[m][1] + boxes[m][3] / 2 for m in members) + FRAME_PAD
        frames[group] = ((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0)
    return tuple(frames)


def layer_of_each_node(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Column of each node: the longest path from the leaves, except that a leaf or constant
    sits just left of its first consumer (as dot would place it), not far away in column 0."""
    layers = longest_path_layers(n, edges)
    first_consumer = [None] * n
    has_inputs = [False] * n
    for source, target in edges:
        has_inputs[target] = True
        if first_consumer[source] is None or layers[target] < first_consumer[source]:
            first_consumer[source] = layers[target]
    for node in range(n):
        if not has_inputs[node] and first_consumer[node] is not None:
            layers[node] = first_consumer[node] - 1
    return layers


def longest_path_layers(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Layer of each node: 0 for leaves, else 1 + the deepest input (Kahn's order, iterative)."""
    consumers: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for source, target in edges:
        consumers[source].append(target)
        waiting[target] += 1
    layers = [0] * n
    ready = [i for i in range(n) if waiting[i] == 0]
    while ready:
        node = ready.pop()
        for consumer in consumers[node]:
            layers[consumer] = max(layers[consumer], layers[node] + 1)
            waiting[consumer] -= 1
            if waiting[consumer] == 0:
                ready.append(consumer)
    return layers


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

    shifted = tuple(map(shift, boxes))
    shifted_frames = tuple(None if frame is None else shift(frame) for frame in frames)
    every = [*shifted, *(frame for frame in shifted_frames if frame is not None)]
    width = max(x + w / 2 for x, _, w, _ in every) + MARGIN
    height = max(y + h / 2 for _, y, _, h in every) + MARGIN
    return Layout(engine, round(width, 2), round(height, 2), shifted, shifted_frames)
