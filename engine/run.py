"""The engine's entry points: `trace` (the full teaching timeline), `numbers` (only what
depends on the leaf values) and `forward_backward` (the lean path)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .backward import Visit, backward, edge_offsets
from .builder import Graph, Limits, build, check_values, limit_warnings
from .collector import cycle_collector_paused
from .errors import LimitExceeded
from .gradcheck import gradcheck
from .i18n import DEFAULT_LANG, Count, check_lang, msg
from .narration import Narrator
from .parser import Statement, parse_program
from .reply import graph_reply, numbers_reply, trace_reply
from .timeline import backward_steps, forward_steps, narrate, seed_step, topo_steps
from .topo import TopoEvent, topo_order
from .value import Value
from .visit_order import check_order, order_warnings, resolve_order

MODES = ("correct", "overwrite")


def check_source_size(source: str, limits: Limits) -> None:
    """Raise LimitExceeded for a program longer than the limit (before reading any of it)."""
    if limits.max_source_chars is not None and len(source) > limits.max_source_chars:
        raise LimitExceeded(
            msg(
                "error.source_limit",
                size=Count(len(source)),
                limit=Count(limits.max_source_chars),
            ),
            source,
            limits.max_source_chars,
        )


# Parsing depends on the source alone, and a dragged slider re-traces one program with new values
# many times: recent parses are kept (programs up to PARSE_CACHE_MAX_CHARS characters). The
# statements are read-only to everything after the parser, so sharing them is safe.
PARSE_CACHE_MAX_CHARS = 20_000


Parsed = tuple[Sequence[Statement], Sequence[dict[str, Any]]]


@lru_cache(maxsize=32)
def _parse_recent(source: str, max_depth: int | None) -> Parsed:
    statements, notes = parse_program(source, max_depth)
    return tuple(statements), tuple(notes)


def parsed(source: str, max_depth: int | None) -> Parsed:
    """`parse_program(source, max_depth)` (the statements and the notes of skipped lines), from
    the recent parses when the program is short enough."""
    if len(source) > PARSE_CACHE_MAX_CHARS:
        return parse_program(source, max_depth)
    return _parse_recent(source, max_depth)


def build_graph(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    expand_derived: bool = False,
    limits: Limits | None = None,
) -> Graph:
    """Parse `source` and build its Value graph (forward pass included); raises ProgramError."""
    limits = limits or Limits()
    check_source_size(source, limits)
    checked = check_values(values)
    statements, notes = parsed(source, limits.max_depth)
    return build(
        source,
        statements,
        checked,
        expand_derived=expand_derived,
        max_nodes=limits.max_nodes,
        notes=notes,
    )


@dataclass(frozen=True)
class ForwardBackward:
    """The lean result: the root's data and every named leaf's gradient."""

    data: float
    grads: dict[str, float]


def forward_backward(
    source: str, values: dict[str, Any] | None = None, *, limits: Limits | None = None
) -> ForwardBackward:
    """Parse, build (forward) and run the backward pass with no timeline: the fast path."""
    with cycle_collector_paused():
        graph = build_graph(source, values, limits=limits)
        graph.root.backward()
    return ForwardBackward(graph.root.data, {name: node.grad for name, node in graph.leaves})


class Trace:
    """Everything one run computes; `to_dict()` is the JSON-ready body of `POST /api/graph`
    (without layout). Steps are materialised on demand: building a Trace of a 100,000-node
    graph is cheap, its `to_dict()` is not."""

    def __init__(
        self,
        graph: Graph,
        mode: str,
        order: list[str] | None,
        *,
        record_visits: bool = False,
        lang: str = DEFAULT_LANG,
    ) -> None:
        """Run the passes of `graph`; with `record_visits` the correct pass records its visits
        at once (for a caller that will read them: the numbers), else only when asked. `lang`
        is the language of the replies' words (narration, warnings, messages)."""
        self.graph = graph
        self.lang = check_lang(lang)
        self.source = graph.source
        self.mode = mode
        self.order = order
        nodes = graph.nodes
        root = graph.root
        self.topo_order: list[Value] = topo_order(root)
        self._events: list[TopoEvent] | None = None
        self._offsets: list[int] | None = None
        reverse = self.topo_order[::-1]
        self._reverse = reverse
        self.warnings: list[dict[str, Any]] = list(graph.warnings)
        self.order_check: dict[str, Any] | None = None
        visit_order = reverse
        if order is not None:
            visit_order = resolve_order(graph, order)
            self.order_check = check_order(graph, visit_order)
        variant = mode == "overwrite" or order is not None
        self._visits: list[Visit] | None = [] if record_visits and not variant else None
        self.correct_grads = self._backward(reverse, False, self._visits)
        if variant:
            self._visits = []
            self.grads = self._backward(visit_order, mode == "overwrite", self._visits)
        else:
            self.grads = self.correct_grads
        if order is not None:
            self.warnings += limit_warnings(order_warnings(graph, self.visits))
        self.gradcheck = gradcheck(nodes, self.topo_order, root, graph.leaves, self.correct_grads)
        self._numbers: dict[str, Any] | None = None
        self._steps: list[dict[str, Any]] | None = None

    def _backward(
        self, visit_order: list[Value], overwrite: bool, visits: list[Visit] | None
    ) -> list[float]:
        """Run the backward pass in `visit_order` from zeroed grads, recording its visits if
        `visits` is given; the grads by node id (also left in the nodes' own `grad`)."""
        nodes = self.graph.nodes
        for node in nodes:
            node.grad = 0.0
        offsets = self.offsets if visits is not None else None
        backward(self.graph.root, visit_order, overwrite=overwrite, visits=visits, offsets=offsets)
        return [node.grad for node in nodes]

    @property
    def offsets(self) -> list[int]:
        """Id of each node's first input edge, for recording the backward pass."""
        if self._offsets is None:
            self._offsets = edge_offsets(self.graph.nodes)
        return self._offsets

    @property
    def events(self) -> list[TopoEvent]:
        """The steps of the topological sort, recorded only when asked (for the timeline)."""
        if self._events is None:
            self._events = []
            topo_order(self.graph.root, self._events)
        return self._events

    @property
    def visits(self) -> list[Visit]:
        """Every visit of the backward pass with its contributions. The correct pass records
        them only when asked (for the timeline): its grads come from the unrecorded pass, and
        the recorded one repeats the same additions in the same order."""
        if self._visits is None:
            self._visits = []
            self._backward(self._reverse, False, self._visits)
        return self._visits

    @property
    def root(self) -> Value:
        return self.graph.root

    @property
    def nodes(self) -> list[Value]:
        return self.graph.nodes

    def grad(self, name: str) -> float:
        """The (variant's) gradient of a named leaf or intermediate (by its `name`: `c₂`)."""
        for node in self.graph.nodes:
            if node.name == name:
                return self.grads[node.id]
        raise KeyError(name)

    def numbers(self) -> dict[str, Any]:
        """Everything of the reply that depends on the leaf values (engine/reply.py)."""
        if self._numbers is None:
            self._numbers = numbers_reply(self)
        return self._numbers

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The timeline: topo (every event of the sort), forward, seed, backward; indexed from
        0; each step's narration is its template filled with the numbers."""
        if self._steps is None:
            say = Narrator(self.source, self.graph.nodes, self.graph.helpers)
            numbers = self.numbers()
            overwrite = self.mode == "overwrite"
            lang = self.lang
            steps = topo_steps(self.events, say, lang)
            steps += forward_steps(self.topo_order, say, numbers["data"], lang)
            steps.append(seed_step(self.graph.root, say, lang))
            steps += backward_steps(self.visits, say, self.graph.nodes, overwrite, numbers, lang)
            for index, step in enumerate(steps):
                step["index"] = index
            narrate(steps, numbers)
            self._steps = steps
        return self._steps

    def graph_dict(self) -> dict[str, Any]:
        """`nodes` and `edges` of `to_dict()` alone: a drawing's needs, built without the
        timeline."""
        with cycle_collector_paused():
            return graph_reply(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready trace described in docs/api.md (non-finite numbers as strings)."""
        with cycle_collector_paused():  # tens of thousands of new dicts, none in a cycle
            return trace_reply(self)


def trace(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    expand_derived: bool = False,
    mode: str = "correct",
    order: list[str] | None = None,
    limits: Limits | None = None,
    lang: str = DEFAULT_LANG,
) -> Trace:
    """Parse, build, sort, run forward and backward (and the requested variant) and check the
    gradients; the reply's words are in `lang` (`en`, `ru`, `et`). Raises a ProgramError
    subclass for a bad program, values or order (its message in English: `message_in(lang)`
    says it in another language); never anything else for any `source` string."""
    _check_mode(mode)
    check_lang(lang)
    with cycle_collector_paused():
        graph = build_graph(source, values, expand_derived=expand_derived, limits=limits)
        return Trace(graph, mode, order, lang=lang)


def numbers(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    expand_derived: bool = False,
    mode: str = "correct",
    order: list[str] | None = None,
    limits: Limits | None = None,
    lang: str = DEFAULT_LANG,
) -> dict[str, Any]:
    """The numbers of `trace(...)` for the same arguments (`Trace.numbers`, the body of
    `POST /api/values`): data, grads, local grads, every contribution's numbers, gradcheck and
    warnings (in `lang`), with no sort steps, narration or layout. Raises what `trace`
    raises."""
    _check_mode(mode)
    check_lang(lang)
    with cycle_collector_paused():
        graph = build_graph(source, values, expand_derived=expand_derived, limits=limits)
        return Trace(graph, mode, order, record_visits=True, lang=lang).numbers()


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
