"""Where every card goes: Graphviz `dot` for graphs it can handle quickly, a layered
(Sugiyama) layout from igraph for the rest, cached by graph structure so values never move cards.

Coordinates are px with y growing downward; `x, y` is the centre of a card. Leaves are on the
left, the root on the right (rankdir LR).
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Any, Literal

import igraph
import orjson

from chainrule.app.cache import BoundedCache, CacheStats

# Card sizes in px, as the page draws them; dot gets the same sizes so its positions fit them.
CARD_SIZE: dict[str, tuple[float, float]] = {
    "leaf": (150.0, 64.0),
    "op": (150.0, 64.0),
    "const": (56.0, 32.0),
}
MARGIN = 16.0  # px around the drawing, so every card has x - width/2 >= 0
RANK_GAP = 60.0  # px between columns (dot's ranksep)
NODE_GAP = 20.0  # px between cards in a column (dot's nodesep)
MAX_SPAN = 4  # columns an edge may cross and still take part in the fallback's ordering
POINTS_PER_INCH = 72.0  # dot's unit; 1 px on the page = 1 pt, so sizes in inches are px / 72

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


@dataclass(frozen=True)
class Layout:
    """Card boxes `(x, y, width, height)` in node order, and the size of the whole drawing."""

    engine: LayoutEngine
    width: float
    height: float
    boxes: tuple[tuple[float, float, float, float], ...]


@dataclass(frozen=True)
class Structure:
    """What the layout depends on: card kinds, labels and edges, never values."""

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]  # (input index, consumer index), in the trace's order
    key: bytes


def structure_of(nodes: Sequence[dict[str, Any]], edges: Sequence[dict[str, Any]]) -> Structure:
    """Extract the value-free structure of a traced graph (`nodes`/`edges` as in docs/api.md)."""
    ids = tuple(node["id"] for node in nodes)
    index = {node_id: i for i, node_id in enumerate(ids)}
    kinds = tuple(node["kind"] for node in nodes)
    edge_pairs = tuple((index[edge["source"]], index[edge["target"]]) for edge in edges)
    digest = hashlib.blake2b(digest_size=20)
    digest.update(orjson.dumps([[n["kind"], n["op"], n["label"]] for n in nodes]))
    digest.update(orjson.dumps(edge_pairs))
    return Structure(ids, kinds, edge_pairs, digest.digest())


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
        # Size a layout by its node count: ~2M cached card boxes at most.
        self.cache: BoundedCache[Layout] = BoundedCache(
            cache_size, max_size=2_000_000, sizeof=lambda layout: len(layout.boxes) + 1
        )
        self._dot_runs_lock = Lock()
        self.dot_runs = 0

    def layout(self, structure: Structure) -> tuple[Layout, bool]:
        """The layout of `structure` and whether it came from the cache."""
        cached = self.cache.get(structure.key)
        if cached is not None:
            return cached, True
        layout = None
        if self.dot_binary and len(structure.ids) <= self.dot_max_nodes:
            layout = self._dot(structure)
        if layout is None:
            layout = sugiyama_layout(structure)
        self.cache.put(structure.key, layout)
        return layout, False

    def stats(self) -> CacheStats:
        return self.cache.stats()

    def _dot(self, structure: Structure) -> Layout | None:
        """Run dot with a hard timeout; None if it is too slow or fails (the caller falls back)."""
        with self._dot_runs_lock:
            self.dot_runs += 1
        try:
            output = run_graphviz(
                self.dot_binary, ["-Tjson0"], dot_source(structure).encode(), self.dot_timeout_s
            )
            return parse_json0(structure, orjson.loads(output))
        except (subprocess.SubprocessError, OSError, ValueError, KeyError):
            return None


def dot_source(structure: Structure) -> str:
    """DOT text for the layout: fixed-size empty boxes named by our ids; no user text at all."""
    lines = [
        "digraph {",
        f"graph [rankdir=LR nodesep={NODE_GAP / POINTS_PER_INCH:.4f}"
        f" ranksep={RANK_GAP / POINTS_PER_INCH:.4f} splines=false]",
        'node [shape=box fixedsize=true label=""]',
    ]
    for node_id, kind in zip(structure.ids, structure.kinds, strict=True):
        width, height = CARD_SIZE[kind]
        lines.append(
            f"{node_id} [width={width / POINTS_PER_INCH:.4f} height={height / POINTS_PER_INCH:.4f}]"
        )
    ids = structure.ids
    lines.extend(f"{ids[source]} -> {ids[target]}" for source, target in structure.edges)
    lines.append("}")
    return "\n".join(lines)


def parse_json0(structure: Structure, drawing: dict[str, Any]) -> Layout:
    """Convert dot's output (points, origin bottom-left) to px boxes with y down."""
    left, bottom, right, top = (float(v) for v in drawing["bb"].split(","))
    centres = {}
    for obj in drawing.get("objects", ()):
        x, y = (float(v) for v in obj["pos"].split(","))
        centres[obj["name"]] = (x - left + MARGIN, top - y + MARGIN)
    boxes = tuple(
        (*centres[node_id], *CARD_SIZE[kind])
        for node_id, kind in zip(structure.ids, structure.kinds, strict=True)
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
    return _bounded("sugiyama", boxes)


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


def _bounded(engine: LayoutEngine, boxes: tuple[tuple[float, float, float, float], ...]) -> Layout:
    """Shift boxes so the drawing starts at MARGIN and measure its extent."""
    if not boxes:
        return Layout(engine, 2 * MARGIN, 2 * MARGIN, ())
    min_left = min(x - w / 2 for x, _, w, _ in boxes)
    min_top = min(y - h / 2 for _, y, _, h in boxes)
    dx, dy = MARGIN - min_left, MARGIN - min_top
    shifted = tuple((round(x + dx, 2), round(y + dy, 2), w, h) for x, y, w, h in boxes)
    width = max(x + w / 2 for x, _, w, _ in shifted) + MARGIN
    height = max(y + h / 2 for _, y, _, h in shifted) + MARGIN
    return Layout(engine, round(width, 2), round(height, 2), shifted)
