"""Profile the page in headless Chromium: where a slider move or the backward pulse spends its time.

Run: .venv/bin/python bench/profile_page.py slider [nodes]   (slider moves, default 1,000 nodes)
     .venv/bin/python bench/profile_page.py pulse [nodes]    (the backward pulse at 16×)
     .venv/bin/python bench/profile_page.py drag [nodes]     (a 60 Hz drag for 3 s)
     .venv/bin/python bench/profile_page.py slider 1000 "runRounds store.js"  (and the time of
                                                each function that function calls directly)

Prints the JavaScript self time by function and by file (CDP Profiler, sampled every 100 µs) and
the browser's own work by kind (a Chromium trace: style, layout, paint, script, GC). Proportions
hold on a loaded machine; wall times do not (bench/page.py measures those).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # servers.py

from servers import start_server, stop_server  # noqa: E402

from bench.page import (  # noqa: E402
    DRAG_JS,
    FPS_JS,
    LOAD_JS,
    node_counter,
    open_bench_page,
    sized_program,
    slide,
)
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# The trace events whose time is the browser's work, by the name the report gives it.
BROWSER_WORK = {
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "Paint": "paint",
    "PrePaint": "prepaint",
    "Layerize": "layerize",
    "UpdateLayer": "layer",
    "EvaluateScript": "script",
    "FunctionCall": "script",
    "EventDispatch": "script",
    "FireAnimationFrame": "script",
    "TimerFire": "script",
    "MinorGC": "gc",
    "MajorGC": "gc",
    "V8.GC_SCAVENGER": "gc",
    "V8.GC_MARK_COMPACTOR": "gc",
    "ParseHTML": "parse",
    "HitTest": "hit test",
}


def frame_name(frame: dict) -> tuple[str, str]:
    """(function name file:line, file) of a CPU profile's call frame."""
    file = frame["url"].rsplit("/", 1)[-1] or "(native)"
    name = frame["functionName"] or "(anonymous)"
    return f"{name} {file}:{frame['lineNumber'] + 1}", file


def callees(profile: dict, caller: str) -> Counter:
    """Total time (ms) of each function called directly by functions named `caller` (a prefix of
    "name file:line", e.g. "runRounds store.js")."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    out: Counter = Counter()
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        at, below = node_id, None
        while at is not None:
            if frame_name(nodes[at]["callFrame"])[0].startswith(caller) and below is not None:
                out[frame_name(nodes[below]["callFrame"])[0]] += delta / 1000
                break
            at, below = parent.get(at), at
    return out


def self_times(profile: dict) -> tuple[Counter, Counter, Counter]:
    """Self time (ms) of each function (name, file:line) and of each file, and each function's
    total time (itself and what it calls, counted once per sample), from a CPU profile."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    by_function: Counter = Counter()
    by_file: Counter = Counter()
    total: Counter = Counter()
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        function, file = frame_name(nodes[node_id]["callFrame"])
        by_function[function] += delta / 1000
        by_file[file] += delta / 1000
        seen = set()
        at = node_id
        while at is not None:
            seen.add(frame_name(nodes[at]["callFrame"])[0])
            at = parent.get(at)
        for function in seen:
            total[function] += delta / 1000
    return by_function, by_file, total


def browser_work(events: list[dict]) -> tuple[Counter, Counter]:
    """The page's main thread: total duration (ms) of each kind of the browser's work, and the
    self time (ms) of each trace event by name (its duration less its children's)."""
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    work: Counter = Counter()
    spans = []
    for event in events:
        if (event["pid"], event["tid"]) not in main or event.get("ph") != "X":
            continue
        kind = BROWSER_WORK.get(event.get("name", ""))
        if kind:
            work[kind] += event.get("dur", 0) / 1000
        spans.append((event["ts"], -event.get("dur", 0), event["name"]))
    own: Counter = Counter()
    stack: list[list] = []  # [end, name, children's time] of the enclosing events

    def close(upto: float) -> None:
        while stack and stack[-1][0] <= upto:
            _, name, children = stack.pop()
            own[name] -= children / 1000

    for start, minus, name in sorted(spans):
        close(start)
        duration = -minus
        if stack:
            stack[-1][2] += duration
        stack.append([start + duration, name, 0])
        own[name] += duration / 1000
    close(float("inf"))
    return work, own


def print_top(title: str, counts: Counter, total: float, top: int = 30) -> None:
    print(f"\n{title} (total {total:.0f} ms)")
    for name, ms in counts.most_common(top):
        print(f"{ms:9.1f} ms {100 * ms / total:5.1f}%  {name}")


def run(page, cdp, what: str) -> object:
    if what == "slider":
        return slide(page, 20)["times"]
    if what == "drag":
        return page.evaluate(DRAG_JS, [3000])
    return page.evaluate(FPS_JS, [2500])


def main() -> None:
    from playwright.sync_api import sync_playwright

    what = sys.argv[1] if len(sys.argv) > 1 else "slider"
    target = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000
    process, base_url = start_server()
    try:
        count_nodes = node_counter(base_url)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = open_bench_page(browser, base_url)
            source = sized_program(target, count_nodes)
            nodes = count_nodes(source)
            page.evaluate(LOAD_JS, source)
            page.wait_for_function(
                "n => document.querySelectorAll('[data-testid=node]').length === n", arg=nodes
            )
            run(page, None, what)  # warm up: compiled code, the structure's compile
            cdp = page.context.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 100})
            cdp.send("Profiler.start")
            result = run(page, cdp, what)
            profile = cdp.send("Profiler.stop")["profile"]
            by_function, by_file, inclusive = self_times(profile)
            total = sum(by_file.values())
            print(f"{what}, {nodes} nodes: {json.dumps(result)[:300]}")
            print_top("self time by function", by_function, total)
            print_top("self time by file", by_file, total, 20)
            print_top("total time by function", inclusive, total, 60)
            for caller in sys.argv[3:]:
                print_top(f"called by {caller}", callees(profile, caller), total, 40)
            browser_trace(browser, page, what)
            browser.close()
    finally:
        stop_server(process)


def browser_trace(browser, page, what: str) -> None:
    """The same run again under Chromium's trace: the browser's work by kind."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        browser.start_tracing(page=page, path=str(path), categories=["devtools.timeline", "v8"])
        run(page, None, what)
        browser.stop_tracing()
        events = json.loads(path.read_text())["traceEvents"]
    work, own = browser_work(events)
    print_top("the browser's work by kind", work, sum(work.values()) or 1)
    print_top("trace events' own time", own, sum(own.values()) or 1, 25)


if __name__ == "__main__":
    main()
