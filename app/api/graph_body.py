"""From a request to response bytes: trace with the server's limits, lay the graph out, write
the reply with the layout in it and encode it."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import orjson

from chainrule import engine
from chainrule.app import __version__
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.layout.layouter import Layout, Layouter, Structure
from chainrule.app.layout.placing import layout_reply, layout_structure, placement
from chainrule.app.layout.shared import share_layouts
from chainrule.app.settings import AppSettings
from chainrule.engine.cancel import check as check_cancelled
from chainrule.engine.gc_pause import cycle_collector_paused
from chainrule.engine.i18n import DEFAULT_LANG
from chainrule.engine.reply import ReplyParts, check_reply_size, place, reply_parts, trace_reply
from chainrule.engine.steps import steps
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import tensor_reply
from chainrule.engine.tracing import build_for_trace


def limits_of(settings: AppSettings) -> engine.Limits:
    return engine.Limits(
        max_nodes=settings.max_nodes,
        max_depth=settings.max_depth,
        max_tokens=settings.max_source_tokens,
    )


# Bumped when the order or meaning of the numbers arrays changes without a version change.
STRUCTURE_FORMAT = 2


def program_key(request: GraphRequest, settings: AppSettings) -> tuple:
    """What a trace depends on besides the leaf values: the program, its options (every field
    of `engine.Options`) and the limits it is traced under. Not the language: the structure
    (nodes, edges, steps, the order of the numbers arrays) is the same in every language, only
    the words differ."""
    return (
        request.source,
        *request.options().key(),
        settings.max_source_tokens,
        settings.max_nodes,
        settings.max_depth,
    )


def structure_id(request: GraphRequest, settings: AppSettings) -> str:
    """The id of everything the nodes, edges and steps of a reply depend on besides the leaf
    values: the program, its options, the limits and this server's engine. Equal ids mean the
    numbers of `POST /api/values` line up with the arrays of the client's trace."""
    key = (STRUCTURE_FORMAT, __version__, *program_key(request, settings))
    return hashlib.sha256(orjson.dumps(key)).hexdigest()[:24]


def trace_dict(
    request: GraphRequest, settings: AppSettings, lang: str = DEFAULT_LANG
) -> dict[str, Any]:
    """The engine's JSON-ready trace of `request`, its words in `lang` (raises
    `engine.ProgramError`)."""
    options = request.options().trace_kwargs()
    limits = limits_of(settings)
    return engine.trace(
        request.source, request.values, **options, limits=limits, lang=lang
    ).to_dict()


@dataclass(frozen=True)
class GraphBody:
    """The encoded body of `POST /api/graph`: as this request sends it (`now`), and as the
    response cache sends it later (`later`, its `layout.cached` true): the same bytes unless
    this request computed the layout."""

    now: bytes
    later: bytes


def build_body(
    request: GraphRequest,
    settings: AppSettings,
    layouter: Layouter,
    lang: str = DEFAULT_LANG,
    limits: engine.Limits | None = None,
) -> GraphBody:
    """Trace, lay out and encode, the words in `lang`: the layout goes into the reply as it is
    written (engine/reply.py), and the whole body is encoded once per `layout.cached`. `limits`
    replace the server's (a graph read from a Value in the learner's kernel: notebook/traces.py)."""
    limits = limits_of(settings) if limits is None else limits
    if is_tensor_program(request.source):
        return tensor_body(request, limits, lang)
    with cycle_collector_paused():  # tens of thousands of new dicts, none in a cycle
        reply, encoded, layout, cached = _laid_out_reply(request, settings, layouter, lang, limits)
        later = with_layout(encoded, layout_reply(layout, True))
        now = later if cached else with_layout(encoded, layout_reply(layout, False))
        # Freed while the collector is paused: what dies then is never scanned, where resuming
        # with the reply alive would scan each of its objects once (150,000 at 7,500 nodes).
        del reply
    return GraphBody(now, later)


def build_reply(
    request: GraphRequest,
    settings: AppSettings,
    layouter: Layouter,
    lang: str = DEFAULT_LANG,
    limits: engine.Limits | None = None,
    *,
    checked: bool = True,
) -> dict[str, Any]:
    """What `build_body`'s body for now decodes to, made as
    Python objects and never encoded: for a caller in the reply's own process (the notebook's
    `chainrule.trace_value`), where encoding micrograd's demo took 0.15 s, decoding it again 0.3
    s, and the two copies beside the reply 150 MB. It is encoded once all the same, for
    `check_reply_size`: a widget sends it on, and its bound holds in every path; unless not
    `checked`, for a caller that encodes the reply itself and checks those bytes (the widget:
    notebook/widget.py `packed_trace`), so that it is encoded once, not twice."""
    limits = limits_of(settings) if limits is None else limits
    with cycle_collector_paused():
        if is_tensor_program(request.source):
            return tensor_reply(trace_tensors(request.source, request.values, limits=limits), lang)
        return finished(reply_stages(request, settings, layouter, lang, limits, checked=checked))


ReplyStages = Generator[tuple[engine.Trace, ReplyParts], None, dict[str, Any]]


def reply_stages(
    request: GraphRequest,
    settings: AppSettings,
    layouter: Layouter,
    lang: str,
    limits: engine.Limits,
    *,
    checked: bool = True,
) -> ReplyStages:
    """`build_reply` of a scalar program in two stages: it yields the trace once its passes have
    run, with the parts of its reply made then (`ReplyParts`: what a first view is drawn from,
    engine/reply.py `first_view_reply`), and returns the reply when resumed (`finished`), its
    layout drawn meanwhile. A notebook's player is shown between them (notebook/widget.py)."""
    stages = _laid_out_stages(request, settings, layouter, lang, limits, encoded=checked)
    yield next(stages)
    reply, encoded, layout, cached = finished(stages)
    del encoded
    reply["layout"] = layout_reply(layout, cached)
    return reply


def finished(stages: Generator[Any, None, Any]) -> Any:
    """What `stages` returns, its remaining stages run."""
    while True:
        try:
            next(stages)
        except StopIteration as done:
            return done.value


def _laid_out_reply(
    request: GraphRequest,
    settings: AppSettings,
    layouter: Layouter,
    lang: str,
    limits: engine.Limits,
) -> tuple[dict[str, Any], bytes, Layout, bool]:
    """The reply of a scalar program with its layout placed in it but no `layout` member, its
    bytes (within `check_reply_size`'s budget), the layout, and whether it came from the cache
    (the caller holds the cycle collector paused)."""
    return finished(_laid_out_stages(request, settings, layouter, lang, limits))


def _laid_out_stages(
    request: GraphRequest,
    settings: AppSettings,
    layouter: Layouter,
    lang: str,
    limits: engine.Limits,
    *,
    encoded: bool = True,
) -> Generator[tuple[engine.Trace, ReplyParts], None, tuple[dict[str, Any], bytes, Layout, bool]]:
    """`_laid_out_reply` in two stages (`reply_stages`): the trace and its reply's parts once
    the passes have run, then (resumed) the reply, its bytes (none, unchecked, unless
    `encoded`), the layout and whether it came from the cache. Each stage holds the cycle
    collector paused while it runs."""
    options = request.options()
    with cycle_collector_paused():
        graph = build_for_trace(
            request.source, request.values, options.expand_derived, limits, options.mode, lang
        )
        laying_out = layout_beside(layouter, layout_structure(graph))  # while the passes run
        trace = engine.run(
            graph,
            lang=lang,
            record=True,  # the reply reads the record: one recorded pass, not two passes
            **options.run_kwargs(),
        )
        check_cancelled()
        parts = reply_parts(trace)
    yield trace, parts
    with cycle_collector_paused():
        return _placed_reply(request, settings, trace, parts, laying_out, encoded=encoded)


def _placed_reply(
    request: GraphRequest,
    settings: AppSettings,
    trace: engine.Trace,
    parts: ReplyParts,
    laying_out: Future[tuple[Layout, bool]],
    *,
    encoded: bool,
) -> tuple[dict[str, Any], bytes, Layout, bool]:
    """The second stage: the reply written from the trace and its parts, placed once the
    layout is drawn, and encoded and checked unless not `encoded`."""
    reply = trace_reply(trace, steps(trace), parts=parts)
    check_cancelled()
    layout, cached = laying_out.result()
    reply = place(reply, placement(layout, trace))
    reply["structure"] = structure_id(request, settings)
    if not encoded:
        return reply, b"", layout, cached
    body = orjson.dumps(reply)  # once, its layout added to it as each body needs
    # A backstop: every field is linear in the graph, and this says so if one ever is not.
    check_reply_size(len(body), len(reply["nodes"]), request.source, request.expand_derived)
    return reply, body, layout, cached


def tensor_body(request: GraphRequest, limits: engine.Limits, lang: str) -> GraphBody:
    """The body of `POST /api/graph` for a tensor program (docs/api.md, "Tensor programs"):
    its tensors, no layout (a handful of grids, which the page places)."""
    with cycle_collector_paused():
        trace = trace_tensors(request.source, request.values, limits=limits)
        check_cancelled()
        body = orjson.dumps(tensor_reply(trace, lang))
        del trace
    return GraphBody(body, body)


def with_layout(encoded: bytes, layout: dict[str, Any]) -> bytes:
    """The bytes of `{**reply, "layout": layout}` from `encoded`, the reply's bytes (an object
    without a `layout`): its members, then `layout` last, as orjson writes a dict in order."""
    return b"".join((encoded[:-1], b',"layout":', orjson.dumps(layout), b"}"))


def layout_beside(layouter: Layouter, structure: Structure) -> Future[tuple[Layout, bool]]:
    """`layouter.layout(structure)` in a thread of its own, while the caller writes the reply:
    dot runs in processes of its own, so the reply is written while it draws. Returns once dot
    is drawing (or the layout is done): the layout's own Python, which starts dot, then has
    the interpreter to itself instead of taking turns with the caller's (~10 ms sooner)."""
    future: Future[tuple[Layout, bool]] = Future()
    drawing = threading.Event()

    def lay_out() -> None:
        try:
            future.set_result(layouter.layout(structure, drawing.set))
        except BaseException as error:  # the caller raises it, never left waiting
            future.set_exception(error)
        finally:
            drawing.set()

    threading.Thread(target=lay_out, name="layout", daemon=True).start()
    drawing.wait()
    return future


def numbers_body(request: GraphRequest, settings: AppSettings, lang: str = DEFAULT_LANG) -> bytes:
    """The encoded body of `POST /api/values` (the route checked its structure id): the
    numbers of `request`'s trace only, its warnings in `lang` (raises `engine.ProgramError`)."""
    options = request.options().trace_kwargs()
    limits = limits_of(settings)
    with cycle_collector_paused():  # as build_body: the numbers die before it resumes
        numbers = engine.numbers(
            request.source, request.values, **options, limits=limits, lang=lang
        )
        body = orjson.dumps({"structure": structure_id(request, settings), **numbers})
        del numbers
    return body


def request_key(request: GraphRequest, settings: AppSettings, lang: str) -> tuple:
    """Everything a response depends on: the request, the limits it was traced under and the
    language of its words."""
    # float.hex tells -0.0 from 0.0 (equal as dict keys, different to the engine: 1/a), and the
    # order of `values` is kept because warnings about unknown names follow it.
    values = (
        tuple((name, float(value).hex()) for name, value in request.values.items())
        if request.values is not None
        else None
    )
    return (lang, values, *program_key(request, settings))


# One Layouter per worker process of the offload pool, made from the settings of its first job.
_worker_layouter: Layouter | None = None


def worker_layouter(settings: AppSettings) -> Layouter:
    """The Layouter of this process of the offload pool (made once, from `settings`)."""
    global _worker_layouter
    if _worker_layouter is None:
        _worker_layouter = share_layouts(Layouter.from_settings(settings), settings)
    return _worker_layouter


def build_body_in_worker(request: GraphRequest, settings: AppSettings, lang: str) -> GraphBody:
    """`build_body` in a process of the offload pool, with that process's layout cache."""
    return build_body(request, settings, worker_layouter(settings), lang)


def warm_up() -> None:
    """Run in a fresh worker process: importing this module has loaded the engine and layout."""
