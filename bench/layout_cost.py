"""What layout and export cost by the shape of the graph (issue 21): for graphs of long edges and
for ordinary ones, the cost dot_cost predicts (nodes, lanes, lanes squared), which path the
server takes, and the CPU and wall time of the layout (dot, bounded, or the layered fallback) and
of each export format. Prints a markdown table.

    .venv/bin/python bench/layout_cost.py        # about a minute on a quiet 2-core machine

CPU seconds count this process and its Graphviz children; on a shared machine wall time can be
several times larger, CPU time much less so.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chainrule import engine
from chainrule.app.export.drawing import ExportLimits, export_graph, render
from chainrule.app.layout.graphviz import Graphviz
from chainrule.app.layout.layouter import Layouter, dot_cost, structure_of
from chainrule.app.settings import AppSettings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from statement_programs import layered_program  # noqa: E402  (the group layout's test program)


def product(factors: int) -> str:
    return "c = 1.01\n" + "*".join(["c"] * factors)


def least_squares(points: int) -> str:
    terms = [f"(w*{i / points:.3f} + b - {(-1) ** i * 0.5:.1f})**2" for i in range(points)]
    return "w = 0.5\nb = 0.1\nL = " + " + ".join(terms)


def running_total(statements: int) -> str:
    lines = ["p0 = 0.5"] + [f"p{k} = -w{k} * -x{k} + p{k - 1}" for k in range(1, statements + 1)]
    return "\n".join(lines)


def mlp(hidden: int, points: int) -> str:
    """A 2-hidden-hidden-1 tanh MLP's squared loss over `points` points."""
    lines, params = [], []
    for layer, (width, fan_in) in enumerate([(hidden, 2), (hidden, hidden), (1, hidden)]):
        for j in range(width):
            for k in range(fan_in):
                lines.append(f"w{layer}_{j}_{k} = {((j + k) % 7 - 3) / 10}")
            lines.append(f"b{layer}_{j} = {(j % 5 - 2) / 10}")
            params.append((layer, j, fan_in))
    losses = []
    for p in range(points):
        inputs = [f"{(p % 3 - 1) / 2}", f"{(p % 5 - 2) / 3:.3f}"]
        for layer, width in enumerate([hidden, hidden, 1]):
            outputs = []
            for j in range(width):
                terms = " + ".join(f"w{layer}_{j}_{k}*{x}" for k, x in enumerate(inputs))
                name = f"h{p}_{layer}_{j}"
                lines.append(f"{name} = {'tanh' if layer < 2 else ''}({terms} + b{layer}_{j})")
                outputs.append(name)
            inputs = outputs
        losses.append(f"({inputs[0]} - {(-1) ** p})**2")
    lines.append("L = " + " + ".join(losses))
    return "\n".join(lines)


FOUR_EXAMPLES = next(p for p in engine.PRESETS if p["id"] == "four-examples")["source"]
GRAPHS = [
    ("preset four-examples", FOUR_EXAMPLES),
    ("`c*c*…*c`, 100 factors", product(100)),
    ("`c*c*…*c`, 200 factors", product(200)),
    ("`c*c*…*c`, 2,000 factors", product(2000)),
    ("least squares, 60 points", least_squares(60)),
    ("least squares, 100 points", least_squares(100)),
    ("running total, 300 statements", running_total(300)),
    ("MLP 2-8-8-1, 4 points", mlp(8, 4)),
    ("60 statements of groups", layered_program()),
]


def timed(work: Callable[[], Any]) -> tuple[Any, float, float]:
    """`work()`'s result, its wall seconds and the CPU seconds of this process and children."""

    def cpu() -> float:
        own, children = (
            resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    started, cpu_before = time.perf_counter(), cpu()
    result = work()
    return result, time.perf_counter() - started, cpu() - cpu_before


def main() -> None:
    settings = AppSettings(max_nodes=100_000)
    limits = ExportLimits.from_settings(settings, timeout_s=60)
    print(
        "| graph | nodes | lanes | lanes² | layout: engine, CPU / wall s | export svg, pdf, png: "
        "CPU / wall s |"
    )
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for name, source in GRAPHS:
        trace = engine.trace(source, limits=engine.Limits(max_nodes=100_000)).to_dict()
        structure = structure_of(trace["nodes"], trace["edges"], trace["groups"])
        cost = dot_cost(len(structure.ids), structure.edges)
        layouter = Layouter.from_settings(settings)
        (layout, _), wall, cpu = timed(lambda: layouter.layout(structure))  # noqa: B023
        exports = []
        if len(trace["nodes"]) <= settings.export_max_nodes:
            graphviz = Graphviz.from_settings(settings)
            for fmt in ("svg", "pdf", "png"):
                _, e_wall, e_cpu = timed(
                    lambda fmt=fmt: render(trace, fmt, graphviz=graphviz, limits=limits)  # noqa: B023
                )
                exports.append(f"{e_cpu:.2f} / {e_wall:.2f}")
        count, edges = export_graph(trace)
        export_lanes = dot_cost(count, edges).lanes
        path = "placed by the fallback" if export_lanes > limits.max_lanes else "dot"
        print(
            f"| {name} | {cost.nodes:,} | {cost.lanes:,} | {cost.lane_squares:,} | "
            f"{layout.engine}, {cpu:.2f} / {wall:.2f} | "
            f"{', '.join(exports) or 'over export_max_nodes'} ({path}) |"
        )


if __name__ == "__main__":
    main()
