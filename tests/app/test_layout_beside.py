"""The reply is written while dot draws (app/api/graph_body.py `layout_beside`): the caller gets
its future back once the layout thread waits for dot, and only then, so that the layout's own
Python, which starts dot, never takes turns with the passes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from chainrule.app.api.graph_body import layout_beside
from chainrule.app.layout.layouter import Layouter, structure


def test_the_caller_goes_on_once_dot_is_drawing(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    dot = tmp_path / "dot"  # a dot that draws nothing until the test opens the gate
    dot.write_text(f'#!/bin/sh\nread line < "{gate}"\nexit 1\n')
    dot.chmod(0o755)
    layouter = Layouter(dot_timeout_s=30, dot_max_nodes=100, cache_size=0, dot_binary=str(dot))
    graph = structure(["a", "b", "c"], ["leaf", "leaf", "op"], [(0, 2), (1, 2)])
    laying_out = layout_beside(layouter, graph)
    assert layouter.dot_runs == 1 and not laying_out.done()  # back while dot is running
    with open(gate, "w") as opened:
        opened.write("go\n")
    layout, cached = laying_out.result(timeout=30)
    assert (layout.engine, cached) == ("sugiyama", False)  # dot failed: the fallback


def test_a_cached_layout_comes_back_at_once(tmp_path: Path) -> None:
    layouter = Layouter(dot_timeout_s=30, dot_max_nodes=100, cache_size=4, dot_binary="")
    graph = structure(["a", "b"], ["leaf", "op"], [(0, 1)])
    first = layout_beside(layouter, graph).result(timeout=30)
    assert layout_beside(layouter, graph).result(timeout=30) == (first[0], True)


def test_the_layout_starts_dot_before_the_caller_goes_on() -> None:
    """The layout's Python before dot runs alone: the caller is not back from layout_beside
    while it runs (it would be, at once, with a thread merely started)."""
    caller_back = threading.Event()

    class Watched(Layouter):
        caller_was_back: bool | None = None

        def _flat(self, graph):  # noqa: ANN001, ANN202
            # Give the caller every chance to come back first: half a second, or until it has.
            self.caller_was_back = caller_back.wait(timeout=0.5)
            return super()._flat(graph)

    layouter = Watched(dot_timeout_s=30, dot_max_nodes=100, cache_size=0)
    graph = structure(["a", "b", "c"], ["leaf", "leaf", "op"], [(0, 2), (1, 2)])
    laying_out = layout_beside(layouter, graph)
    caller_back.set()
    assert laying_out.result(timeout=30)[0].engine == "dot"
    assert layouter.caller_was_back is False
