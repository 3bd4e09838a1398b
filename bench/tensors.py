"""Benchmark of tensor programs (issue 43): makemore's MLP at its exercise's sizes (batch 32,
vocabulary 27, embedding 10, block 3, hidden 64: 17,669 elements, about 248,000 scalar nodes).

Run: .venv/bin/python bench/tensors.py    Prints a markdown table.
Measures: POST /api/graph against a real uvicorn server (one worker) on loopback, cold (each
round draws other numbers, `manual_seed(…)` changed, so the response cache cannot answer),
and in-process the engine's share: reading, building and the backward pass (`trace_tensors`),
and writing and encoding the reply (`tensor_reply`, orjson). Target: cold ≤ 1 s.
The page (Playwright + Debian's Chromium, 1280×720): a leaf cell's drag → painted, from the
`input` event of its slider (Playwright's mouse) to the end of the frame that paints it (every
tensor recomputed by static/js/tensor/recompute.js and drawn), DRAG_SAMPLES moves; and the cost of
asking for the program's scalar graph (POST /api/tensor-graph, in-process: `tensor_graph`,
orjson). Target: drag → paint ≤ 16.7 ms p50.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers import start_server, stop_server  # noqa: E402

from chainrule.app.api.graph_body import limits_of  # noqa: E402
from chainrule.app.settings import AppSettings  # noqa: E402
from chainrule.engine.tensor_graph import tensor_graph  # noqa: E402
from chainrule.engine.tensor_program import trace_tensors  # noqa: E402
from chainrule.engine.tensor_reply import tensor_reply  # noqa: E402

ROUNDS = 10
SERVER = limits_of(AppSettings())  # the server's own
DRAG_SAMPLES = 120


# makemore's MLP exercise (part 3): batch, vocabulary, embedding, block, hidden.
BATCH, VOCABULARY, EMBEDDING, BLOCK, HIDDEN = 32, 27, 10, 3, 64


def makemore(seed: int) -> str:
    """makemore's MLP cell (part 3's batch of 32), straight-line; the seed its generator's."""
    return f"""import torch
import torch.nn.functional as F
g = torch.Generator().manual_seed({seed})
C = torch.randn(({VOCABULARY}, {EMBEDDING}), generator=g)
W1 = torch.randn(({BLOCK * EMBEDDING}, {HIDDEN}), generator=g) * 0.2
b1 = torch.randn({HIDDEN}, generator=g) * 0.01
W2 = torch.randn(({HIDDEN}, {VOCABULARY}), generator=g) * 0.1
b2 = torch.randn({VOCABULARY}, generator=g) * 0.1
Xb = torch.randint(0, {VOCABULARY}, ({BATCH}, {BLOCK}), generator=g)
Yb = torch.randint(0, {VOCABULARY}, ({BATCH},), generator=g)
emb = C[Xb]
embcat = emb.view(emb.shape[0], -1)
hpreact = embcat @ W1 + b1
h = torch.tanh(hpreact)
logits = h @ W2 + b2
loss = F.cross_entropy(logits, Yb)
loss.backward()
"""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


# C[2,3]'s slider (the embedding table: the program's one named leaf) dragged by Playwright's
# mouse, as bench/page.py drags a scalar slider (trusted input, which Chromium dispatches at the
# start of a frame): each move from its `input` event (t0, a listener before the page's) to the
# end of the frame that paints it (a task queued at the input runs once that frame is rendered;
# the page recomputes and draws within the event, so that frame shows the new numbers).
DRAG_ARM_JS = """() => {
  const range = document.querySelector('[data-testid=tensor-cell-range]');
  window.dragBench = { times: [] };
  document.addEventListener('input', (event) => {
    if (event.target !== range) return;
    const t0 = performance.now();
    const channel = new MessageChannel();
    channel.port1.onmessage = () => window.dragBench.times.push(performance.now() - t0);
    channel.port2.postMessage(null);
  }, { capture: true });
  range.scrollIntoView({ block: 'center' });
  const box = range.getBoundingClientRect();
  return { left: box.left, y: box.top + box.height / 2, width: box.width };
}"""


@contextmanager
def tensor_page(base_url: str, source: str) -> Iterator[Any]:
    """A 1280×720 page in Debian's Chromium with the tensor program `source` run and drawn
    (bench/expand.py opens its pages so too)."""
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(120_000)
        page.goto(f"{base_url}/")
        page.wait_for_selector("svg[data-ready=true]")
        page.fill("[data-testid=source]", source)
        page.press("[data-testid=source]", "Control+Enter")
        page.wait_for_selector("[data-testid=tensor-graph][data-ready=true]")
        try:
            yield page
        finally:
            browser.close()


def drag_to_paint(base_url: str) -> tuple[list[float], int]:
    """makemore's MLP on the page: a cell of C opened, its scalar graph held, then DRAG_SAMPLES
    moves of its slider timed to paint; and how many requests the moves made."""
    with tensor_page(base_url, makemore(0)) as page:
        page.click("#to-end")
        table = page.locator("[data-testid=tensor][data-name=C]").first
        table_id = table.get_attribute("data-tensor-id")
        page.locator(
            f"[data-testid=tensor-cell][data-tensor-id={table_id}][data-grid=data][data-index='2,3']"
        ).dispatch_event("click")
        page.wait_for_selector("[data-testid=tensor-graph][data-page-numbers=ready]")
        asked: list[str] = []  # the server's API asked during the drag (the favicon aside: the
        # browser's own, when the link's URL changes)
        page.on("request", lambda request: "/api/" in request.url and asked.append(request.url))
        track = page.evaluate(DRAG_ARM_JS)
        # Back and forth along the track, two pixels a move, clear of its ends (where the thumb,
        # at its min or max, would not move).
        start, span = track["left"] + 14, int(track["width"]) - 28
        page.mouse.move(start, track["y"])
        page.mouse.down()  # the thumb jumps there: a move of its own, not counted
        page.wait_for_function("() => window.dragBench.times.length >= 1")
        for i in range(DRAG_SAMPLES):
            offset = 2 * (i + 1) % (2 * span)
            page.mouse.move(start + min(offset, 2 * span - offset), track["y"])
            page.wait_for_function(f"() => window.dragBench.times.length >= {i + 2}")
        page.mouse.up()
        times = page.evaluate("window.dragBench.times.slice(1)")
    return times, len(asked)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    engine_times, reply_times, graph_times, sizes, graph_sizes = [], [], [], [], []
    for round_ in range(ROUNDS):
        started = time.perf_counter()
        trace = trace_tensors(makemore(round_), limits=SERVER)
        built = time.perf_counter()
        body = orjson.dumps(tensor_reply(trace))
        replied = time.perf_counter()
        graph = orjson.dumps(tensor_graph(trace))
        engine_times.append(built - started)
        reply_times.append(replied - built)
        graph_times.append(time.perf_counter() - replied)
        sizes.append(len(body))
        graph_sizes.append(len(graph))
    process, base_url = start_server()
    try:
        cold = []
        with httpx.Client(base_url=base_url, timeout=60) as client:
            client.post("/api/graph", json={"source": "a = 2\nb = a * 3"})  # the worker is up
            for round_ in range(ROUNDS):
                started = time.perf_counter()
                response = client.post("/api/graph", json={"source": makemore(1000 + round_)})
                cold.append(time.perf_counter() - started)
                assert response.status_code == 200, response.text[:300]
        drags, asked = drag_to_paint(base_url)
    finally:
        stop_server(process)
    elements, nodes = trace.elements.element_count, len(trace.elements.nodes)
    size = statistics.median(sizes)
    print(f"makemore's MLP: {elements:,} elements, {nodes:,} scalar nodes, reply {size:,.0f} B")
    print(f"its scalar graph (POST /api/tensor-graph): {statistics.median(graph_sizes):,.0f} B")
    print()
    print("| what | p50 ms | max ms |")
    print("| --- | --- | --- |")
    for name, samples in (
        ("POST /api/graph, cold (HTTP, one worker)", cold),
        ("read + build + backward (trace_tensors)", engine_times),
        ("reply + encode (tensor_reply, orjson)", reply_times),
        ("scalar graph + encode (tensor_graph, orjson)", graph_times),
    ):
        print(f"| {name} | {ms(statistics.median(samples))} | {ms(max(samples))} |")
    print()
    print(f"Page: a cell drag → painted, {len(drags)} moves, {asked} API requests during them")
    p50, p95 = percentile(drags, 0.5), percentile(drags, 0.95)
    print(f"| drag → paint | p50 {p50:.1f} ms | p95 {p95:.1f} ms | max {max(drags):.1f} ms |")


if __name__ == "__main__":
    main()
