"""`chainrule.show(loss)`: the page's player in Jupyter (an anywidget widget whose sliders
recompute in the kernel with the engine, no server), or a static SVG where there is no widget
front end (a plain IPython terminal, a notebook viewer).

The widget's traits are the contract with static/js/embed.js (its anywidget `render`):
`trace_zlib` (the `/api/graph` reply, the widget's `trace`, as zlib-compressed JSON: a binary
buffer of the comm's message; empty while a big graph's `first_view`, packed the same way, is
shown: docs/python.md), `ops` (the table of operations), `title`, `ui` (the player's
words in the widget's language, English unless `lang` says otherwise), `drawing` (the id of the
drawing output shown before it, which the player hides while it works); the page sets
`values` ({leaf: number}) when a slider moves, and the kernel answers with a new trace, or
with `error` (the API's error object) for values the engine refuses. A tensor program's player
(`trace` is its `kind: "tensor"` reply) asks for a gradient cell's fan-in with a message
`{fan_in: {id, tensor, index, values}}`, answered `{fan_in: {id, reply}}` (the `POST /api/fan-in`
reply, computed here with the engine) or `{fan_in: {id, error}}`.
"""

from __future__ import annotations

import base64
import sys
import uuid
import zlib
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from html import escape
from typing import Any, Literal, NamedTuple

import orjson

from chainrule.app.api.graph_body import finished
from chainrule.app.build.bundle import BUNDLE_JS
from chainrule.app.export.drawing import ExportLimits, render
from chainrule.app.export.onefile import compact_trace, expanded_trace
from chainrule.app.layout.graphviz import Graphviz
from chainrule.app.settings import get_settings
from chainrule.engine import ProgramError
from chainrule.engine.i18n import DEFAULT_LANG, Count, check_lang, text, ui_catalogue
from chainrule.engine.narration import fmt
from chainrule.engine.ops import page_table
from chainrule.engine.reply import check_reply_size
from chainrule.engine.tracing import written_parse
from chainrule.notebook.traces import (
    fanned_in,
    leaf_values,
    source_of,
    trace_of,
    traced,
    value_limits,
    value_trace_stages,
    with_program,
)

# The player after a kernel restart. ipywidgets' renderer has no fallback: a saved output whose
# widget model is gone (the kernel restarted, the notebook was reopened without its widget state)
# shows "Error displaying widget: model not found" whatever other data it holds. So the player's
# drawing is an output of its own, just before the player's: shown by default (nbconvert's HTML,
# nbviewer, GitHub, an untrusted notebook, a dead model), and hidden by this style (JupyterLab,
# Notebook 7 and nbconvert's lab template apply it to trusted outputs) when the output after it
# holds a live player, whose host static/js/embed.js marks `data-chainrule-player`; where the
# style does not reach (VS Code), the player hides the drawing it follows itself (embed.js, by the
# drawing's `data-chainrule-drawing`, the widget's `drawing` trait). The error line of a dead model
# (the renderer adds the class `jupyter-widgets` to the output element itself; a player that works
# has it on its own elements inside) is hidden. docs/python.md says so.
FALLBACK_STYLE = (
    "<style>.jp-OutputArea-child:has(.chainrule-static):has(+ .jp-OutputArea-child"
    " [data-chainrule-player]) .chainrule-static{display:none}"
    ".jp-OutputArea-child:has(.chainrule-static) + .jp-OutputArea-child:has("
    "> .jp-OutputArea-output.jupyter-widgets){display:none}</style>"
)


# A tensor program's drawing past this many bytes of SVG is saved in the notebook as a PNG:
# makemore's MLP at batch 32 is 4.1 MB of SVG (35,000 grid cells), 0.5 MB of PNG.
MAX_INLINE_SVG = 1_000_000


# zlib's fastest level: micrograd's demo's 55 MB of JSON in 0.2-0.45 s, to 7.6 MB (level 6: three
# times the time for 5.9 MB); the page inflates it with DecompressionStream("deflate"). It pays
# even on one machine: stored (level 0), the 55 MB took 0.77 s more to reach JupyterLab's page and
# 0.96 s more to become a widget's model (0.13 s and 0.20 s at level 1; bench/notebook_show.py),
# and the kernel's peak was 83 MB higher.
TRACE_COMPRESSION = 1


def packed_trace(trace: dict[str, Any]) -> bytes:
    """`trace` as the widget sends it (`trace_zlib`): its JSON (orjson), zlib-compressed, held as
    a one-file HTML holds it (app/export/onefile.py `compact_trace`: the edges but their local
    derivatives and the program's copy of its source left out, which the player writes back:
    micrograd's demo 55 MB of JSON to 44 MB, less to inflate and parse in the page). Sent as
    a binary buffer, it crosses the comm as bytes: a dict trait was searched for buffers object by
    object by ipywidgets and written by the kernel's session with Python's json (micrograd's
    demo: 1.8 s and 1.9 s at load 6), then parsed again by JupyterLab with the message. The JSON
    is the reply's one encoding: its size is checked here (`check_reply_size`; `widget` traces
    without encoding the reply for it, 0.15-0.3 s of micrograd's demo). A tensor program's reply
    is bounded where it is made (its nodes are tensors, not a scalar graph's budget).

    Written a field at a time, each field compressed in a thread while the next is written (zlib
    lets go of the GIL while it works), and the nodes compressed while the rest is made compact:
    micrograd's demo 0.34 -> 0.26 s. (Parts finer than a field, slices of its long lists, gained
    nothing.)"""
    compressor = zlib.compressobj(TRACE_COMPRESSION)
    packed: list[bytes] = []
    size = 0
    with ThreadPoolExecutor(max_workers=1) as pool:
        compressing = pool.submit(lambda: None)
        for part in _json_parts(trace):
            size += len(part)
            compressing.result()  # one part at a time, in order
            compressing = pool.submit(lambda part=part: packed.append(compressor.compress(part)))
        compressing.result()
    if trace.get("kind") != "tensor":
        check_reply_size(size, len(trace["nodes"]), trace["source"])
    return b"".join(packed) + compressor.flush()


def _json_parts(trace: dict[str, Any]) -> Iterator[bytes]:
    """The JSON of `compact_trace(trace)`, orjson's bytes, a top-level field at a time; a scalar
    reply's nodes (its first field, which compact_trace keeps) before the rest is made compact."""
    nodes_first = next(iter(trace), None) == "nodes"
    if nodes_first:
        yield b'{"nodes":' + orjson.dumps(trace["nodes"])
    for n, (key, value) in enumerate(compact_trace(trace).items()):
        if not (nodes_first and key == "nodes"):
            yield (b"," if n else b"{") + orjson.dumps(key) + b":" + orjson.dumps(value)
    yield b"}"


def unpacked_trace(packed: bytes) -> dict[str, Any]:
    """The trace `packed_trace` packed, as the reply it was (app/export/onefile.py
    `expanded_trace`)."""
    return expanded_trace(orjson.loads(zlib.decompress(packed)))


class StaticGraph:
    """The drawing of a trace where no widget can run: `_repr_svg_` for IPython and viewers,
    and a repr that says how to get the player.

    Given the trace's `packed` bytes too (a widget's `trace_zlib`), a graph too big to draw
    (`too_big`) keeps those alone and unpacks its `trace` when asked: a kernel keeps every player
    it showed (ipywidgets holds them until closed), and micrograd's demo's reply was 190 MB of
    Python objects a player, a cell run again ten times 1.9 GB."""

    def __init__(self, trace: dict[str, Any], packed: bytes | None = None) -> None:
        self._trace: dict[str, Any] | None = trace
        self._packed = packed
        self.size = len(trace["nodes"])
        self.kind = trace.get("kind")
        self._summary: str | None = None
        if packed is not None and self.too_big():
            self._summary = _summary(trace)  # said without unpacking it
            self._trace = None

    @property
    def trace(self) -> dict[str, Any]:
        if self._trace is not None:
            return self._trace
        assert self._packed is not None  # kept packed only where there are bytes
        return unpacked_trace(self._packed)

    def drawn(self, fmt: Literal["svg", "png"]) -> bytes:
        settings = get_settings()
        limits = ExportLimits.from_settings(settings, timeout_s=60.0)
        graphviz = Graphviz.from_settings(settings)
        return render(self.trace, fmt, graphviz=graphviz, limits=limits)

    def svg(self) -> str:
        return self.drawn("svg").decode()

    def too_big(self) -> bool:
        """Whether the graph has more nodes than the export draws (`export_max_nodes`): Graphviz
        is not asked (micrograd's demo, 65,818 nodes: 18 s in the kernel, then it failed; 7,500
        nodes drew in 2 s, 15 MB of SVG in the notebook). A tensor program's cards are few."""
        return self.kind != "tensor" and self.size > get_settings().export_max_nodes

    def _repr_svg_(self) -> str | None:
        return None if self.too_big() else self.svg()  # None: IPython shows the repr instead

    def fallback_bundle(self, drawing_id: str = "", lang: str = DEFAULT_LANG) -> dict[str, str]:
        """The drawing as the output shown before the player whose `drawing` trait is `drawing_id`:
        hidden while the player works (FALLBACK_STYLE), shown with a line saying how to play it
        where the player cannot run. One copy of the SVG, inline in the HTML (an
        `image/svg+xml` copy beside it doubled every saved output); a tensor program's drawing
        past MAX_INLINE_SVG (its colour grids: a polygon a cell) as a PNG instead; a graph
        too big to draw (`too_big`) as a sentence saying so."""
        if self.too_big():
            return no_drawing(self.size, drawing_id, lang) | {"text/plain": repr(self)}
        svg = self.svg()
        inline = svg[svg.find("<svg") :]  # without the XML prolog, which HTML does not take
        if self.kind == "tensor" and len(svg) > MAX_INLINE_SVG:
            png = base64.b64encode(self.drawn("png")).decode()
            inline = f'<img alt="{escape(self.summary())}" src="data:image/png;base64,{png}">'
        return {"text/html": _drawing_html(inline, drawing_id, lang), "text/plain": repr(self)}

    def summary(self) -> str:
        """`12 nodes, out = 4`: its size and its result (a tensor program's: `7 tensors,
        loss = 1.08`); thousands grouped (`65,818 nodes`)."""
        if self._summary is None:
            self._summary = _summary(self.trace)
        return self._summary

    def __repr__(self) -> str:
        return (
            f"<chainrule graph: {self.summary()}; in Jupyter, show() plays it; "
            "save_html(...) writes a file that plays it anywhere>"
        )


def no_drawing(size: int, drawing_id: str, lang: str) -> dict[str, str]:
    """The HTML shown before the player of a graph too big to draw: a sentence saying so."""
    size_, limit = Count(size), Count(get_settings().export_max_nodes)
    inline = f"<p>{escape(text(lang, 'notebook.no_drawing', size=size_, limit=limit))}</p>"
    return {"text/html": _drawing_html(inline, drawing_id, lang)}


def _drawing_html(inline: str, drawing_id: str, lang: str) -> str:
    hint = escape(text(lang, "notebook.static_hint"))
    return (
        f'{FALLBACK_STYLE}<div class="chainrule-static" data-chainrule-drawing='
        f'"{escape(drawing_id)}">{inline}<p><small>{hint}</small></p></div>'
    )


def _summary(trace: dict[str, Any]) -> str:
    nodes = trace["nodes"]
    root = next(node for node in nodes if node["id"] == trace["root"])
    if trace.get("kind") == "tensor":
        return f"{len(nodes):,} tensors, {root['label']} = {fmt(root['data'])}"
    return _said(len(nodes), root["text"], root["data"])


def _first_view_summary(first: dict[str, Any]) -> str:
    """`_summary` of the trace a first view is of: its root's text is its group's name."""
    root = first["root"]
    text = next((group["name"] for group in first["groups"] if group["root"] == root), root)
    return _said(first["count"], text, first["data"][int(root[1:])])


def _said(count: int, text: str, data: Any) -> str:
    return f"{count:,} nodes, {text} = {fmt(data)}"


def _in_kernel() -> bool:
    """Whether a widget front end can show the player: a Jupyter kernel, or a marimo notebook
    (which wraps any anywidget it is given in `mo.ui.anywidget`)."""
    if _in_marimo():  # a marimo notebook has imported marimo
        return True
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


# The player's script once per notebook. anywidget keeps a widget's script (`_esm`, the bundle's
# 220 KB) in its model, so a notebook saved with its widgets' state held it once per player. In
# Jupyter (JupyterLab, Notebook 7, VS Code, Colab, nbconvert's widget manager: the ipywidgets
# manager's `get_model`) each player's script is this loader instead: it imports the bundle
# that one `Library` widget of the kernel holds (saved once), at most once per document. marimo,
# whose widgets are no ipywidgets models, gets the whole script in every player.
LOADER = """\
const modules = (globalThis.__chainrulePlayerModules ??= new Map()); // library id -> its module
function playerModule(model) {
  const id = model.get("library");
  if (!modules.has(id)) {
    modules.set(id, model.widget_manager.get_model(id).then((library) =>
      import(URL.createObjectURL(new Blob([library.get("bundle")], { type: "text/javascript" })))));
  }
  return modules.get(id);
}
export default {
  async render(context) {
    return (await playerModule(context.model)).default.render(context);
  },
};
"""


def _in_marimo() -> bool:
    marimo = sys.modules.get("marimo")
    return marimo is not None and getattr(marimo, "running_in_notebook", lambda: False)()


def _widget_classes() -> tuple[type, type]:
    """The player (its whole script: marimo) and the player whose script is LOADER, with the
    library's id (Jupyter)."""
    import anywidget
    import traitlets

    class Library(anywidget.AnyWidget):
        """The player's script, once per kernel; never shown."""

        _esm = "export default {};"
        bundle = traitlets.Unicode().tag(sync=True)

    class Widget(anywidget.AnyWidget):
        """The player: graph, pulse, transport, narration, explanations, tables, sliders."""

        _esm = BUNDLE_JS
        trace_zlib = traitlets.Bytes().tag(sync=True)  # `trace`, packed
        ops = traitlets.Dict().tag(sync=True)
        title = traitlets.Unicode("").tag(sync=True)
        ui = traitlets.Dict().tag(sync=True)
        values = traitlets.Dict().tag(sync=True)
        error = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
        # The id of the drawing shown before the player (`data-chainrule-drawing`): the player
        # hides it while it works, where FALLBACK_STYLE does not reach.
        drawing = traitlets.Unicode("").tag(sync=True)
        # A big graph's first view (`first_view_reply`, packed as `trace_zlib` is) while its
        # trace is made (`trace_zlib` empty until then); emptied when the trace is sent.
        first_view = traitlets.Bytes(b"").tag(sync=True)

        def __init__(
            self,
            source: str,
            program: Any,
            trace: dict[str, Any] | Stages,
            title: str,
            lang: str,
            values: dict[str, float] | None = None,
        ):
            """The player of `trace`; or, given the `Stages` of a trace (`value_trace_stages`
            at its first view), of its first view until the trace is made: after the cell that
            made the player (`_after_the_cell`), or when `trace` is asked for first."""
            self._source = source
            self._program = program.written() if program else None
            self._lang = lang
            # The values `trace` was traced with (`show(source, values)`): the page starts from
            # them (a tensor program's cells are keyed by them alone, `{"W[1,2]": 0.5}`), and
            # their own setting at construction traces nothing again.
            self._traced_values = dict(values or {})
            # A first view's: the stages that make the rest of its trace, its size, and what
            # stopped them (re-raised when the trace is asked for).
            self._rest: Generator[Any, None, dict[str, Any]] | None = None
            self._failed: BaseException | None = None
            if isinstance(trace, Stages):
                self._rest, self._size = trace.rest, trace.first["count"]
                self._first = _first_view_summary(trace.first)
                self._graph: StaticGraph | None = None
                packed, first = b"", _packed_json(trace.first)
            else:
                packed, first = packed_trace(trace), b""
                self._graph = StaticGraph(trace, packed)
            super().__init__(
                trace_zlib=packed, first_view=first, ops=page_table(), title=title,
                ui=ui_catalogue(lang), drawing=uuid.uuid4().hex, values=self._traced_values,
            )  # fmt: skip
            self.on_msg(self._message)
            if self._rest is not None:
                _after_the_cell(self._finish)

        def _finish(self, *, closed_too: bool = False) -> None:
            """Make the trace a first view was shown for, and send it (once); a player closed
            meanwhile is left (its trace is made if asked for: `closed_too`). What stops it is
            said in the player (`error`) and raised, here and wherever the trace is asked for."""
            if self._rest is None or (self.comm is None and not closed_too):
                return
            rest, self._rest = self._rest, None
            try:
                trace = finished(rest)
                packed = packed_trace(trace)
            except BaseException as error:
                self._failed = error
                self.error = (
                    error.to_dict(self._lang)  # a reply past its budget
                    if isinstance(error, ProgramError)
                    else {
                        "type": "TraceFailed",
                        "message": text(self._lang, "notebook.trace_failed", error=repr(error)),
                    }
                )
                raise
            self._graph = StaticGraph(trace, packed)
            with self.hold_sync():  # one message: the trace, and no first view to keep
                self.trace_zlib = packed
                self.first_view = b""

        def _static(self) -> StaticGraph:
            self._finish(closed_too=True)
            if self._graph is None:
                raise RuntimeError("the player's trace could not be made") from self._failed
            return self._graph

        @property
        def trace(self) -> dict[str, Any]:
            """The trace shown (the kernel's; the page is sent it packed, `trace_zlib`): a graph
            too big to draw is kept packed and unpacked when asked (StaticGraph)."""
            return self._static().trace

        @trace.setter
        def trace(self, trace: dict[str, Any]) -> None:
            if self._rest is not None:  # a first view's trace is not made: this one replaces it
                self._rest.close()
                self._rest = None
            packed = packed_trace(trace)
            self._graph = StaticGraph(trace, packed)
            with self.hold_sync():
                self.trace_zlib = packed
                self.first_view = b""

        def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
            # A tensor cell's fan-in (embed.js createKernelFanIn): there is no server to ask.
            ask = content.get("fan_in") if isinstance(content, dict) else None
            if not isinstance(ask, dict):
                return
            self.send({"fan_in": {"id": ask.get("id"), **self.fan_in(ask)}})

        def fan_in(self, ask: dict[str, Any]) -> dict[str, Any]:
            """`{reply}` (POST /api/fan-in's) for `ask` ({tensor, index, values}) of this
            player's tensor program, or `{error}` (the API's error object, in its language)."""
            try:
                values = {str(k): float(v) for k, v in (ask.get("values") or {}).items()}
                index = [int(i) for i in ask["index"]]
                tensor = str(ask["tensor"])
            except (TypeError, ValueError, AttributeError, KeyError):
                message = text(self._lang, "api.invalid.request")
                return {"error": {"type": "InvalidRequest", "message": message}}
            try:
                reply = fanned_in(self._source, values or None, tensor, index)
            except ProgramError as error:
                return {"error": error.to_dict(self._lang)}
            return {"reply": reply}

        @traitlets.observe("values")
        def _recompute(self, change: dict[str, Any]) -> None:
            # The construction's own values (traitlets tells of a trait set at construction with
            # the old value None): `trace` is theirs, and tracing it again doubled show()'s time.
            if change["old"] in (None, {}) and change["new"] == self._traced_values:
                return
            try:
                limits = value_limits() if self._program else None
                trace = traced(self._source, change["new"] or None, lang=self._lang, limits=limits)
            except ProgramError as error:
                self.error = error.to_dict(self._lang)
                return
            self.error = None
            self.trace = with_program(trace, self._program, self._lang) if self._program else trace

        def _ipython_display_(self) -> None:
            # In Jupyter: the drawing (an output of its own, see FALLBACK_STYLE), then the player.
            from IPython.display import display

            display(self._fallback(), raw=True)
            bundle = self._repr_mimebundle_()
            if bundle is not None:
                data, metadata = bundle
                display(data, metadata=metadata, raw=True)
            # A first view is on its way to the page: its trace is made now, not after what
            # the rest of the cell does (a training loop).
            self._finish()

        def _fallback(self) -> dict[str, str]:
            """The drawing shown before the player (StaticGraph.fallback_bundle); a first
            view's graph is too big to draw (`first_view_min_nodes` is over `export_max_nodes`)
            unless the settings say otherwise: then its trace is made for it first."""
            if self._graph is None and self._rest is not None:
                size = self._size
                if size > get_settings().export_max_nodes:
                    return no_drawing(size, self.drawing, self._lang) | {"text/plain": repr(self)}
            return self._static().fallback_bundle(self.drawing, self._lang)

        def __repr__(self) -> str:
            # The text a front end shows while the player loads, or instead of it: an untrusted
            # notebook in JupyterLab, a viewer without widgets.
            summary = self._first if self._graph is None else self._graph.summary()
            return f"<chainrule player: {summary}. {text(self._lang, 'notebook.static_hint')}>"

    class SharedWidget(Widget):
        """The player whose script is the library's (LOADER)."""

        _esm = LOADER
        library = traitlets.Unicode("").tag(sync=True)

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.library = _library(Library).model_id

    return Widget, SharedWidget


_WIDGETS: tuple[type, type] | None = None
_LIBRARY: Any = None


def _library(library_class: type) -> Any:
    """The kernel's one Library (a new one if it was closed: `Widget.close_all()`)."""
    global _LIBRARY
    if _LIBRARY is None or getattr(_LIBRARY, "comm", None) is None:
        _LIBRARY = library_class(bundle=BUNDLE_JS.read_text(encoding="utf-8"))
    return _LIBRARY


def widget(
    value_or_source: Any,
    values: dict[str, float] | None = None,
    title: str = "",
    lang: str = DEFAULT_LANG,
) -> Any:
    """The widget for a program or a graph of Values, its words in `lang` (needs anywidget:
    pip install 'chainrule[notebook]')."""
    global _WIDGETS
    if _WIDGETS is None:
        _WIDGETS = _widget_classes()
    whole, shared = _WIDGETS
    player = whole if _in_marimo() else shared
    source, program = source_of(value_or_source)
    if program and not values and _first_view_pays(len(program.objects)):
        stages = value_trace_stages(program, lang)
        first = next(stages)
        if first is not None:  # a graph with an overview: its first view, the rest after the cell
            return player(source, program, Stages(first, stages), title, lang)
        trace = finished(stages)
    else:
        limits = value_limits() if program else None
        # Its size is checked once, on the bytes the widget sends (packed_trace).
        with written_parse(source, program.parsed if program else None):
            trace = traced(source, values, lang=check_lang(lang), limits=limits, checked=False)
        if program:
            trace = with_program(trace, program, lang)
    return player(source, program, trace, title, lang, leaf_values(values))


class Stages(NamedTuple):
    """A trace being made: its first view (engine/reply.py `first_view_reply`), and the stages
    that make the rest (notebook/traces.py `value_trace_stages`)."""

    first: dict[str, Any]
    rest: Generator[Any, None, dict[str, Any]]


def _packed_json(value: Any) -> bytes:
    """`value` as a widget's bytes hold JSON: orjson's, zlib-compressed as `packed_trace`'s."""
    return zlib.compress(orjson.dumps(value), TRACE_COMPRESSION)


def _first_view_pays(size: int) -> bool:
    """Whether the player of a graph of `size` nodes read from a Value shows its first view
    before its trace: a big graph (`first_view_min_nodes`) shown by a cell of a Jupyter kernel,
    whose end (`_after_the_cell`) is when its trace is made. Anywhere else (marimo, a button's
    callback, a script) the player comes with its trace."""
    least = get_settings().first_view_min_nodes
    return 0 < least <= size and not _in_marimo() and _in_kernel() and _running_cell()


def _running_cell() -> bool:
    """Whether IPython is running a cell in this call: its `run_code` is on the stack."""
    from IPython.core.interactiveshell import InteractiveShell

    run_code = InteractiveShell.run_code.__code__
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is run_code:
            return True
        frame = frame.f_back
    return False


# The players whose trace is still to be made (`_after_the_cell`), oldest first.
_WAITING: list[Callable[[], None]] = []


def _after_the_cell(finish: Callable[[], None]) -> None:
    """Call `finish` once the cell that is running has run (IPython's `post_run_cell`), unless
    the player is displayed first (`_ipython_display_` finishes it then): its outputs, a
    player's first view among them, are on their way to the page by then, and the cell still
    runs until it returns, so the next cell (or nbclient, saving the notebook) finds the trace
    made. A player still waiting when another one is made has its trace made first: each holds
    its graph's passes until then (micrograd's demo: over 100 MB)."""
    from IPython import get_ipython

    while _WAITING:
        with suppress(Exception):  # its player says what stopped it (its `error`)
            _WAITING.pop(0)()
    events = get_ipython().events

    def once(*_: Any) -> None:
        events.unregister("post_run_cell", once)
        if finish in _WAITING:
            _WAITING.remove(finish)
        finish()

    _WAITING.append(finish)
    events.register("post_run_cell", once)


def show(
    value_or_source: Any, values: dict[str, float] | None = None, lang: str = DEFAULT_LANG
) -> Any:
    """The widget in a Jupyter kernel or a marimo notebook (when anywidget is installed), else a
    StaticGraph; its words (the player's, the narration) in `lang`. In marimo the widget is an
    `anywidget.AnyWidget`, which marimo shows as `mo.ui.anywidget(widget)` does."""
    if _in_kernel():
        try:
            return widget(value_or_source, values, lang=lang)
        except ImportError:
            pass  # no anywidget: the drawing
    return StaticGraph(trace_of(value_or_source, values, lang))
