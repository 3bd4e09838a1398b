"""The engine's entry points: `trace` (a program's run, the record every reply is made from),
`numbers` (the numbers-only reply) and `forward_backward` (the lean path).

The pipeline: source → parse (engine/parser.py) → build the Value graph with its forward pass
(engine/builder.py) → run the backward passes and the gradient check into a `Trace`, an
immutable record of floats (here) → the timeline, a function of it (engine/steps.py) → the
JSON-ready reply, a pure serializer of both (engine/reply.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from .backward import BackwardRecord, backward, edge_offsets, recorded_backward
from .builder import Graph, Limits, build, check_values, limit_warnings
from .cancel import check as check_cancelled
from .errors import BadWrt, LimitExceeded, TensorProgram
from .forward_mode import PASSES, TangentRecord, forward_tangents, resolve_wrt
from .gc_pause import cycle_collector_paused
from .gradcheck import GradCheck, gradcheck
from .i18n import DEFAULT_LANG, Count, check_lang, msg
from .lexer import token_past
from .narration import Narrator
from .parser import Statement, parse_program
from .reply import numbers_reply, trace_reply
from .steps import steps
from .target import check_variant, resolve_target
from .tensor_reader import tensor_marker
from .topo import topo_order
from .value import Value
from .visit_order import check_order, order_warnings, resolve_order

MODES = ("correct", "overwrite")


def check_source_size(source: str, limits: Limits) -> None:
    """Raise LimitExceeded for a program longer than the limits, in characters or in tokens
    (before reading any of it), its caret where it passes the limit."""
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
    if limits.max_tokens is not None:
        past = token_past(source, limits.max_tokens)
        if past is not None:
            raise LimitExceeded(
                msg("error.token_limit", limit=Count(limits.max_tokens)), source, past
            )


# Parsing depends on the source alone, and a dragged slider re-traces one program with new values
# many times: recent parses are kept, 32 of programs up to PARSE_CACHE_MAX_CHARS characters and
# 4 of longer ones up to PARSE_CACHE_MAX_LARGE_CHARS (a parse holds about 60 bytes a character:
# 6 MiB for 100,000, so the large ones hold at most about 25 MiB). Reading a 24,000-character
# program is half its trace. The statements are read-only to everything after the parser, so
# sharing them is safe.
PARSE_CACHE_MAX_CHARS = 20_000
PARSE_CACHE_MAX_LARGE_CHARS = 100_000


Parsed = tuple[Sequence[Statement], Sequence[dict[str, Any]]]


def _parse_program(source: str, max_depth: int | None) -> Parsed:
    marker = tensor_marker(source)  # (asked once a program: the parses are kept)
    if marker is not None:
        raise TensorProgram(msg("error.tensor.scalar_only"), source, *marker)
    statements, notes = parse_program(source, max_depth)
    return tuple(statements), tuple(notes)


_parse_recent = lru_cache(maxsize=32)(_parse_program)
_parse_recent_large = lru_cache(maxsize=4)(_parse_program)


# The statements of a program the value reader wrote, as it wrote them (`written_parse`): the
# source, how deep its parentheses and calls nest, and the statements.
_written: ContextVar[tuple[str, int, tuple[Statement, ...]] | None] = ContextVar(
    "written", default=None
)


@contextmanager
def written_parse(source: str, parsed: tuple[tuple[Statement, ...], int] | None) -> Iterator[None]:
    """Within it, `parsed` of `source` (a program engine/value_reader.py wrote, `Program.source`
    and `Program.parsed`: its statements and how deep they nest) is those statements, not the
    text parsed again, under a nesting limit they keep (micrograd's demo: 2.2 MB not lexed and
    parsed, 0.25 s). None: the text is parsed."""
    if parsed is None:
        yield
        return
    statements, depth = parsed
    token = _written.set((source, depth, statements))
    try:
        yield
    finally:
        _written.reset(token)


def parsed(source: str, max_depth: int | None) -> Parsed:
    """`parse_program(source, max_depth)` (the statements and the notes of skipped lines), from
    the recent parses when the program is short enough, or as the value reader wrote it
    (`written_parse`); TensorProgram for a tensor program (docs/tensors.md: tensor_program.py
    reads it)."""
    written = _written.get()
    if written is not None and written[0] == source:
        # (No tensor program: the reader writes no maker's call and `@` only in a label.)
        _, depth, statements = written
        if max_depth is None or depth <= max_depth:
            return statements, ()
    if len(source) <= PARSE_CACHE_MAX_CHARS:
        return _parse_recent(source, max_depth)
    if len(source) <= PARSE_CACHE_MAX_LARGE_CHARS:
        return _parse_recent_large(source, max_depth)
    return _parse_program(source, max_depth)


def clear_parse_cache() -> None:
    """Forget the recent parses (a benchmark's cold runs)."""
    _parse_recent.cache_clear()
    _parse_recent_large.cache_clear()


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
        result = ForwardBackward(graph.root.data, {name: n.grad for name, n in graph.leaves})
        # Freed while the collector is paused: the nodes that die then are never scanned, where
        # resuming with the graph alive would scan every one of them once.
        del graph
    return result


@dataclass(frozen=True)
class Trace:
    """Everything one run of a program computed, immutable: the built graph (its structure,
    and each node's data and local derivatives), the topological order, the grads of the pass
    shown (`grads`: the variant's when `mode` or `order` asks for one) and of the correct pass
    (`correct_grads`), the shown pass recorded (`record`: every visit and contribution), the
    gradient check, and the warnings and order check (their messages in English, said in `lang`
    by the replies). The timeline (`steps.steps`) and the replies (`reply.*`) are functions of
    it; `to_dict()` is `POST /api/graph`'s body without layout.

    The correct pass is recorded when `record` is first read (`recorded` None until then): a
    trace read for its grads alone costs one unrecorded pass, as the lean path does. Recording
    reads the graph and changes nothing, so the record is the same whenever it is made."""

    graph: Graph
    mode: str
    order: tuple[str, ...] | None
    lang: str
    topo_order: tuple[Value, ...]
    grads: tuple[float, ...]
    correct_grads: tuple[float, ...]
    recorded: BackwardRecord | None
    gradcheck: GradCheck
    warnings: tuple[dict[str, Any], ...]
    order_check: dict[str, Any] | None
    # The node whose gradients the pass computes (the root unless the request names another)
    # and the nodes it depends on, in topological order (the backward pass visits them only).
    target: Value
    cone: tuple[Value, ...]
    # The forward-mode pass (`pass_="forward"`: the tangents ∂node/∂wrt), or None for reverse.
    tangents: TangentRecord | None = None

    @property
    def pass_(self) -> str:
        return "reverse" if self.tangents is None else "forward"

    @property
    def record(self) -> BackwardRecord:
        """The shown pass, every visit and contribution (engine/backward.py)."""
        if self.recorded is None:
            nodes = self.graph.nodes
            record = recorded_backward(self.target, self.cone[::-1], nodes, topological=True)
            object.__setattr__(self, "recorded", record)  # a cache: the trace stays the same
        return self.recorded  # type: ignore[return-value]

    @cached_property
    def narrator(self) -> Narrator:
        """The names of the nodes, for the timeline and the replies (each node's text is found
        once, however many steps and fields name it)."""
        return Narrator(self.graph.source, self.graph.nodes, self.graph.helpers)

    @property
    def root(self) -> Value:
        return self.graph.root

    @property
    def nodes(self) -> list[Value]:
        return self.graph.nodes

    @property
    def source(self) -> str:
        return self.graph.source

    def grad(self, name: str) -> float:
        """The (variant's) gradient of a named leaf or intermediate (by its `name`: `c₂`)."""
        for node in self.graph.nodes:
            if node.name == name:
                return self.grads[node.id]
        raise KeyError(name)

    def numbers(self) -> dict[str, Any]:
        """The numbers reply (`POST /api/values`' body): engine/reply.py `numbers_reply`."""
        return numbers_reply(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready trace described in docs/api.md (non-finite numbers as strings)."""
        with cycle_collector_paused():  # tens of thousands of new dicts, none in a cycle
            return trace_reply(self, steps(self))


def run(
    graph: Graph,
    *,
    mode: str = "correct",
    order: Sequence[str] | None = None,
    lang: str = DEFAULT_LANG,
    target: str | None = None,
    pass_: str = "reverse",
    wrt: str | None = None,
    record: bool = True,
) -> Trace:
    """Run the passes of a built graph: the correct backward pass, the variant `mode` or
    `order` asks for (recorded instead), and the gradient check. With `target` (a node id or
    name) the pass starts there: grads are ∂target/∂x (engine/target.py). With `pass_`
    "forward", the forward-mode pass by leaf `wrt` as well (engine/forward_mode.py): the
    timeline is then its. With `record` False the correct pass runs unrecorded and is recorded
    when the trace's `record` is first read. Raises BadOrder for an order naming unknown or
    repeated ids, BadTarget for a target that cannot be one, BadWrt for a forward mode without
    its leaf."""
    nodes = graph.nodes
    topo = topo_order(graph.root)
    tangents = _forward_mode(graph, topo, pass_, wrt, (mode, order, target))
    root, cone = graph.root, topo
    if target is not None:
        check_variant(mode, order)
        root = resolve_target(graph, target)
        cone = topo_order(root) if root is not graph.root else topo
    reverse = cone[::-1]
    warnings = list(graph.warnings)
    order_check = None
    visit_order = reverse
    if order is not None:
        visit_order = resolve_order(graph, list(order))
        order_check = check_order(graph, visit_order)
    recorded = None
    if mode == "overwrite" or order is not None:
        correct_grads = _correct_grads(root, nodes, reverse)
        overwrite = mode == "overwrite"
        recorded = recorded_backward(root, visit_order, nodes, overwrite=overwrite)
        grads = recorded.grads
    elif record:
        recorded = recorded_backward(root, reverse, nodes, topological=True)
        grads = correct_grads = recorded.grads
    else:
        grads = correct_grads = _correct_grads(root, nodes, reverse)
    if order is not None:
        warnings += limit_warnings(order_warnings(graph, recorded))
    check_cancelled()
    check = gradcheck(nodes, cone, root, graph.leaves, correct_grads)
    return Trace(
        graph=graph,
        mode=mode,
        order=None if order is None else tuple(order),
        lang=check_lang(lang),
        topo_order=tuple(topo),
        grads=grads,
        correct_grads=correct_grads,
        recorded=recorded,
        gradcheck=check,
        warnings=tuple(warnings),
        order_check=order_check,
        target=root,
        cone=tuple(cone),
        tangents=tangents,
    )


def _forward_mode(
    graph: Graph, topo: list[Value], pass_: str, wrt: str | None, options: tuple
) -> TangentRecord | None:
    """The forward-mode pass over `topo` that `pass_` and `wrt` ask for, or None for reverse
    mode. Raises BadWrt for a `wrt` without forward mode, and for forward mode without its
    leaf or with another of `options` (mode, order, target: those are about reverse mode)."""
    if pass_ not in PASSES:
        raise ValueError(f"pass must be one of {PASSES}, got {pass_!r}")
    if pass_ == "reverse":
        if wrt is not None:
            raise BadWrt(msg("error.wrt_without_forward"))
        return None
    if options != ("correct", None, None):
        raise BadWrt(msg("error.forward_with_variant"))
    leaf = resolve_wrt(graph, wrt)
    return forward_tangents(graph.nodes, topo, leaf, edge_offsets(graph.nodes))


def _correct_grads(root: Value, nodes: list[Value], reverse: list[Value]) -> tuple[float, ...]:
    """The grads of the correct pass (unrecorded) from `root`, by node id; left in the nodes'
    `grad`."""
    for node in nodes:
        node.grad = 0.0
    backward(root, reverse)
    return tuple([node.grad for node in nodes])


def trace(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    expand_derived: bool = False,
    mode: str = "correct",
    order: list[str] | None = None,
    limits: Limits | None = None,
    lang: str = DEFAULT_LANG,
    target: str | None = None,
    pass_: str = "reverse",
    wrt: str | None = None,
    record: bool = False,
) -> Trace:
    """Parse, build, sort, run forward and backward (and the requested variant) and check the
    gradients of the root (or of `target`, a node id or name: engine/target.py); with `pass_`
    "forward", also the tangents ∂node/∂wrt of forward mode (engine/forward_mode.py), whose
    timeline it becomes. The reply's words are in `lang` (`en`, `ru`, `et`). With `record` the
    correct pass is recorded at once (the replies read the record) instead of when first read.
    Raises a ProgramError subclass for a bad program, values or order (its message in English:
    `message_in(lang)` says it in another language); never anything else for any `source`."""
    with cycle_collector_paused():
        graph = build_for_trace(source, values, expand_derived, limits, mode, lang)
        return run(
            graph, mode=mode, order=order, lang=lang, target=target, pass_=pass_, wrt=wrt,
            record=record,
        )  # fmt: skip


def build_for_trace(
    source: str,
    values: dict[str, Any] | None,
    expand_derived: bool,
    limits: Limits | None,
    mode: str,
    lang: str,
) -> Graph:
    """The built graph `trace` runs (its arguments checked first, as `trace` checks them): for
    a caller that starts on the graph (its layout) before the passes run."""
    _check_mode(mode)
    check_lang(lang)
    return build_graph(source, values, expand_derived=expand_derived, limits=limits)


def numbers(source: str, values: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """The numbers of `trace(source, values, **options)` (the same keyword arguments): the
    body of `POST /api/values`, data, grads, local grads, every contribution's numbers,
    gradcheck and warnings (in `lang`), with no sort steps, narration or layout. Raises what
    `trace` raises."""
    with cycle_collector_paused():
        return numbers_reply(trace(source, values, **options, record=True))


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
