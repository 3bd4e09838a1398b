"""`chainrule.show(loss)`: the page's player in Jupyter (an anywidget widget whose sliders
recompute in the kernel with the engine, no server), or a static SVG where there is no widget
front end (a plain IPython terminal, a notebook viewer).

The widget's traits are the contract with static/js/embed.js (its anywidget `render`):
`trace` (the `/api/graph` reply), `ops` (the table of operations), `title`, `ui` (the player's
words in the widget's language, English unless `lang` says otherwise); the page sets
`values` ({leaf: number}) when a slider moves, and the kernel answers with a new `trace`, or
with `error` (the API's error object) for values the engine refuses.
"""

from __future__ import annotations

from typing import Any

from chainrule.app.drawing import ExportLimits, render
from chainrule.app.graphviz import Graphviz
from chainrule.app.pages import STATIC_DIR, ui_catalogue
from chainrule.app.settings import get_settings
from chainrule.engine import ProgramError
from chainrule.engine.i18n import DEFAULT_LANG, check_lang
from chainrule.engine.narration import fmt
from chainrule.engine.ops import page_table
from chainrule.notebook.traces import source_of, trace_of, traced, with_program

BUNDLE = STATIC_DIR / "embed" / "chainrule-embed.js"


class StaticGraph:
    """The drawing of a trace where no widget can run: `_repr_svg_` for IPython and viewers,
    and a repr that says how to get the player."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.trace = trace

    def svg(self) -> str:
        settings = get_settings()
        limits = ExportLimits.from_settings(settings, timeout_s=60.0)
        return render(
            self.trace, "svg", graphviz=Graphviz.from_settings(settings), limits=limits
        ).decode()

    def _repr_svg_(self) -> str:
        return self.svg()

    def __repr__(self) -> str:
        nodes = self.trace["nodes"]
        root = next(node for node in nodes if node["id"] == self.trace["root"])
        return (
            f"<chainrule graph: {len(nodes)} nodes, {root['text']} = {fmt(root['data'])}; "
            "in Jupyter, show() plays it; "
            "save_html(...) writes a file that plays it anywhere>"
        )


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _widget_class() -> type:
    import anywidget
    import traitlets

    class Widget(anywidget.AnyWidget):
        """The player: graph, pulse, transport, narration, explanations, tables, sliders."""

        _esm = BUNDLE
        trace = traitlets.Dict().tag(sync=True)
        ops = traitlets.Dict().tag(sync=True)
        title = traitlets.Unicode("").tag(sync=True)
        ui = traitlets.Dict().tag(sync=True)
        values = traitlets.Dict().tag(sync=True)
        error = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

        def __init__(self, source: str, program: Any, trace: dict[str, Any], title: str, lang: str):
            self._source = source
            self._program = program
            self._lang = lang
            super().__init__(trace=trace, ops=page_table(), title=title, ui=ui_catalogue(lang))

        @traitlets.observe("values")
        def _recompute(self, change: dict[str, Any]) -> None:
            try:
                trace = traced(self._source, change["new"] or None, lang=self._lang)
            except ProgramError as error:
                self.error = error.to_dict(self._lang)
                return
            self.error = None
            self.trace = with_program(trace, self._program) if self._program else trace

        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            # The widget, and its drawing for front ends without widgets (nbviewer, GitHub).
            bundle = super()._repr_mimebundle_(**kwargs)
            if bundle is not None:
                data, metadata = bundle
                data["image/svg+xml"] = StaticGraph(self.trace).svg()
                return data, metadata
            return bundle

    return Widget


_WIDGET: type | None = None


def widget(
    value_or_source: Any,
    values: dict[str, float] | None = None,
    title: str = "",
    lang: str = DEFAULT_LANG,
) -> Any:
    """The widget for a program or a graph of Values, its words in `lang` (needs anywidget:
    pip install 'chainrule[notebook]')."""
    global _WIDGET
    if _WIDGET is None:
        _WIDGET = _widget_class()
    source, program = source_of(value_or_source)
    trace = traced(source, values, lang=check_lang(lang))
    if program:
        trace = with_program(trace, program)
    return _WIDGET(source, program, trace, title, lang)


def show(
    value_or_source: Any, values: dict[str, float] | None = None, lang: str = DEFAULT_LANG
) -> Any:
    """The widget in a Jupyter kernel (when anywidget is installed), else a StaticGraph; its
    words (the player's, the narration) in `lang`."""
    if _in_kernel():
        try:
            return widget(value_or_source, values, lang=lang)
        except ImportError:
            pass  # no anywidget: the drawing
    return StaticGraph(trace_of(value_or_source, values, lang))
