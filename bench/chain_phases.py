"""Where the CPU time of bench/engine.py's chain row goes (`trace(chain_source(100_000))
.to_dict()`, the whole `/api/graph` work for a 100,000-node chain): each phase of that call timed
on its own, in the order the call runs them, best of REPEATS runs of the whole sequence. Prints
a markdown table with the load average beside it (a shared machine's CPU times drift with load;
compare runs made at a similar load, or count instructions under valgrind).

    .venv/bin/python bench/chain_phases.py            # about half a minute on a quiet machine
    .venv/bin/python bench/chain_phases.py 20000      # another chain size (nodes)

The phases are the engine's own functions, called as `trace` and `Trace.to_dict` call them, with
the cycle collector paused as they pause it; "of which" rows are parts of the row above them,
timed again on their own after it (the narrator's texts then already found, as in the reply).
Each phase's best comes from its own quietest run, so their sum is below the whole's best; the
best run's phases together is the figure to hold against the whole.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from chainrule import engine
from chainrule.engine.builder import Graph, Limits, build
from chainrule.engine.parser import Statement, parse_program
from chainrule.engine.reply import graph_reply, groups_reply, numbers_reply, trace_reply
from chainrule.engine.steps import steps
from chainrule.engine.tracing import clear_parse_cache, run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import chain_source  # noqa: E402  (the chain row's own program)

REPEATS = 5
NODES = 100_000
# `run` as `trace` calls it: the correct pass unrecorded, recorded when the reply reads it.
unrecorded = partial(run, record=False)


def timed(times: dict[str, list[float]], phase: str, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, its CPU time appended to `times[phase]`."""
    start = time.process_time()
    result = fn(*args)
    times.setdefault(phase, []).append(time.process_time() - start)
    return result


def one_run(source: str, times: dict[str, list[float]]) -> None:
    """The phases of `trace(source).to_dict()` once, each timed (the collector paused)."""
    read = timed(times, "read (lex + parse)", parse_program, source, None)
    graph = timed(times, "build (nodes and forward pass)", built, source, read)
    trace = timed(times, "run (sort, backward, gradient check)", unrecorded, graph)
    timed(times, "recorded backward pass (read by the reply)", getattr, trace, "record")
    timeline = timed(times, "timeline (engine/steps.py)", steps, trace)
    reply = timed(times, "reply dicts (engine/reply.py)", trace_reply, trace, timeline)
    numbers = timed(times, "  of which: numbers_reply", numbers_reply, trace)
    timed(times, "  of which: graph_reply (node and edge dicts)", graph_reply, trace, numbers)
    timed(times, "  of which: groups_reply", groups_reply, trace)
    del read, graph, timeline, numbers
    start = time.process_time()
    del reply, trace  # the last references: the reply's dicts and the whole graph go here
    times.setdefault("freeing the reply and the trace", []).append(time.process_time() - start)


def built(source: str, read: tuple[list[Statement], list[dict[str, Any]]]) -> Graph:
    """`build` as `build_graph` calls it for `source` without limits or values."""
    statements, notes = read
    return build(source, statements, {}, max_nodes=Limits().max_nodes, notes=notes)


def whole(source: str) -> tuple[float, float]:
    """The chain row itself: `trace(source).to_dict()`, best of REPEATS: its CPU seconds and
    the part of them spent in the kernel (page faults of the memory each run maps afresh)."""
    runs = []
    for _ in range(REPEATS):
        clear_parse_cache()
        before = os.times()
        engine.trace(source).to_dict()
        after = os.times()
        system = after.system - before.system
        runs.append((after.user - before.user + system, system))
    return min(runs)


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else NODES
    source = chain_source(nodes)
    load_before = os.getloadavg()[0]
    times: dict[str, list[float]] = {}
    gc.disable()  # as trace and to_dict pause it: none of these objects is in a cycle
    try:
        for _ in range(REPEATS):
            one_run(source, times)
    finally:
        gc.enable()
    total, system = whole(source)
    print(
        f"{nodes:,}-node chain, CPU ms, best of {REPEATS} "
        f"(load {load_before:.2f} → {os.getloadavg()[0]:.2f}):\n"
    )
    print("| phase | best (ms) | µs a node |")
    print("| --- | ---: | ---: |")
    summed = 0.0
    for phase, seconds in times.items():
        best = min(seconds)
        summed += 0 if phase.startswith("  of which") else best
        print(f"| {phase} | {best * 1e3:,.0f} | {best / nodes * 1e6:.2f} |")
    print(f"| sum of the phases' bests | {summed * 1e3:,.0f} | {summed / nodes * 1e6:.2f} |")
    # Each phase's best comes from its own quietest run: their sum is below any one run's.
    whole_phases = [seconds for phase, seconds in times.items() if not phase.startswith("  of")]
    runs = zip(*whole_phases, strict=True)
    one = min(map(sum, runs))
    print(f"| the best run's phases together | {one * 1e3:,.0f} | {one / nodes * 1e6:.2f} |")
    print(f"| whole `trace(source).to_dict()` | {total * 1e3:,.0f} | {total / nodes * 1e6:.2f} |")
    print(f"|   of which: in the kernel | {system * 1e3:,.0f} | {system / nodes * 1e6:.2f} |")


if __name__ == "__main__":
    main()
