"""A graph read from the learner's Values that is too big to send, traced and laid out here, in
their browser (issue 42; docs/sandbox.md). The server takes a program of up to its `max_nodes`
(a request is bounded by its work). A graph read from a Value is no program a server parses (as
in a notebook: chainrule.trace_value), so the worker writes the reply `POST /api/graph` would:
the engine's trace and the layered layout (no Graphviz here: no graph this big gets dot on the
server either), with no `structure` id (no server knows the graph: the page computes its
numbers)."""

from __future__ import annotations

from functools import cache
from typing import Any

from chainrule.app.layout.graphviz import Graphviz
from chainrule.app.layout.layouter import Layouter
from chainrule.app.layout.placing import layout_reply, layout_structure, placement
from chainrule.engine.builder import Limits
from chainrule.engine.gc_pause import cycle_collector_paused
from chainrule.engine.reply import place, trace_reply
from chainrule.engine.steps import steps
from chainrule.engine.tracing import build_for_trace, run


@cache
def _layouter() -> Layouter:
    """The layered layout alone: no dot binary, one layout remembered (a re-run of the same
    code finds it)."""
    return Layouter(dot_timeout_s=0.0, dot_max_nodes=0, cache_size=1, graphviz=Graphviz(""))


def traced_here(source: str, limits: Limits, lang: str) -> dict[str, Any]:
    """The reply of `POST /api/graph` for the reader's program `source` (its numbers in it),
    made in this process under `limits`, its words in `lang` (raises ProgramError)."""
    with cycle_collector_paused():  # tens of thousands of new objects, none in a cycle
        graph = build_for_trace(source, None, False, limits, "correct", lang)
        layout, cached = _layouter().layout(layout_structure(graph))
        trace = run(graph, lang=lang, record=True)
        reply = place(trace_reply(trace, steps(trace)), placement(layout, trace))
        reply["structure"] = None
        reply["layout"] = layout_reply(layout, cached)
        del graph, trace
    return reply
