"""Benchmark of Expand (issue 43): a tensor op's scalar graph, laid out and drawn.

Run: .venv/bin/python bench/expand.py    Prints a markdown table (and the load average).
Measures, for the issue's `X @ W` (27 nodes, 39 cards) and an op near the bound, `A @ B` of two
10×10 tensors (1,900 nodes reading 200 elements: 2,100 cards):
- in-process, the server's parts of `POST /api/expand` with `graph`: the engine (the program
  traced, the op's nodes and cards written: `trace_tensors`, `expand_reply`), the layout cold
  (a new Layouter each round: Graphviz, or the layered fallback past its bounds) and warm (the
  layout cache's), and the reply encoded;
- the page (Playwright + Debian's Chromium, 1280×720, a real uvicorn server): an op card's Expand
  pressed → its graph drawn in the panel (the request, its layout cached after the first round,
  and graph/draw.js), from the click to the frame after `data-ready`.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers import start_server, stop_server  # noqa: E402

from chainrule.app.api.graph_body import limits_of  # noqa: E402
from chainrule.app.api.tensor_routes import place_graph  # noqa: E402
from chainrule.app.layout.layouter import Layouter  # noqa: E402
from chainrule.app.settings import AppSettings  # noqa: E402
from chainrule.bench.tensors import tensor_page  # noqa: E402
from chainrule.engine.presets import presets  # noqa: E402
from chainrule.engine.tensor_program import trace_tensors  # noqa: E402
from chainrule.engine.tensor_reply import expand_reply  # noqa: E402

ROUNDS = 7
SERVER = limits_of(AppSettings())  # the server's own
ISSUE = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]
NEAR_BOUND = "A = randn(10, 10, seed=1)\nB = randn(10, 10, seed=2)\nL = (A @ B).sum()"
CASES = [("the issue's X @ W", ISSUE, "t4"), ("A @ B, 10×10 each", NEAR_BOUND, "t2")]

CLICK_TO_DRAWN_JS = """async (tensor) => {
  const panel = document.querySelector('[data-testid=expand-graph]');
  if (panel) panel.removeAttribute('data-ready');
  const button = document.querySelector(`[data-testid=tensor-expand][data-tensor-id=${tensor}]`);
  const start = performance.now();
  button.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  await new Promise((resolve) => {
    const check = () => (document.querySelector('[data-testid=expand-graph][data-ready=true]')
      ? requestAnimationFrame(() => resolve()) : requestAnimationFrame(check));
    check();
  });
  return performance.now() - start;
}"""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def server_parts(source: str, tensor: str) -> dict[str, list[float]]:
    settings = AppSettings()
    warm_layouter = Layouter.from_settings(settings)
    parts: dict[str, list[float]] = {
        "engine": [], "layout cold": [], "layout warm": [], "encode": []
    }  # fmt: skip
    for _ in range(ROUNDS):
        start = time.perf_counter()
        reply = expand_reply(trace_tensors(source, limits=SERVER), tensor, graph=True)
        parts["engine"].append(time.perf_counter() - start)
        graph = reply["graph"]
        start = time.perf_counter()
        place_graph(graph, Layouter.from_settings(settings))
        parts["layout cold"].append(time.perf_counter() - start)
        place_graph(graph, warm_layouter)
        start = time.perf_counter()
        place_graph(graph, warm_layouter)
        parts["layout warm"].append(time.perf_counter() - start)
        start = time.perf_counter()
        orjson.dumps(reply)
        parts["encode"].append(time.perf_counter() - start)
    parts["engine used"] = [0.0 if graph["layout"]["engine"] == "dot" else 1.0]
    return parts


def page_times(base_url: str, source: str, tensor: str) -> list[float]:
    with tensor_page(base_url, source) as page:
        times = []
        for _ in range(ROUNDS):
            times.append(page.evaluate(CLICK_TO_DRAWN_JS, tensor) / 1000)
            page.keyboard.press("Escape")
    return times


def main() -> None:
    with open("/proc/loadavg") as file:
        load = " ".join(file.read().split()[:3])
    process, base_url = start_server()
    try:
        rows = []
        for name, source, tensor in CASES:
            parts = server_parts(source, tensor)
            reply = expand_reply(trace_tensors(source, limits=SERVER), tensor, graph=True)
            cards = len(reply["graph"]["nodes"])
            laid = "dot" if parts.pop("engine used") == [0.0] else "layered"
            page = page_times(base_url, source, tensor)
            rows.append((name, len(reply["nodes"]), cards, laid, parts, page))
    finally:
        stop_server(process)
    print(f"Expand (POST /api/expand with graph; the page's panel), {ROUNDS} rounds, load {load}")
    print()
    print("| op | nodes | cards | layout | engine | layout cold | layout warm | encode | "
          "page: Expand → drawn |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, nodes, cards, laid, parts, page in rows:
        cells = [f"p50 {ms(statistics.median(v))} (max {ms(max(v))})" for v in parts.values()]
        drawn = f"p50 {ms(statistics.median(page))} (max {ms(max(page))})"
        print(f"| {name} | {nodes:,} | {cards:,} | {laid} | {' | '.join(cells)} | {drawn} |")
    print()
    print("ms; in-process for the server's parts (a new Layouter a round: cold), the page's from")
    print("the click to the frame after its graph is drawn (the first round's layout cold).")


if __name__ == "__main__":
    main()
