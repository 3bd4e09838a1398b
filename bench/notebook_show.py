"""Issue 42's notebook row: `chainrule.show(total_loss)` of micrograd's demo in a real kernel,
from the cell's run to its first view and to the player drawn in JupyterLab.

Run: .venv/bin/python bench/notebook_show.py [runs] [samples]   (also part of `make bench`;
     about two minutes: 3 runs of the demo's 100 moons)

A real JupyterLab (tests/browser/jupyter_servers.py, as tests/browser/test_notebook_fronts.py
starts it) with a real ipykernel, driven in Debian's Chromium. The notebook builds micrograd's
demo with micrograd's own classes as its demo.ipynb does (`MLP(2, [16, 16, 1])` on 100 moons from
chainrule/sandbox/moons.py, max-margin loss + L2: 65,818 nodes; `total_loss.backward()`, no
training), then a cell calls `chainrule.show(total_loss)` and displays it. Each run is a new
notebook with a new kernel. Timed, on the machine's one clock (the kernel's `time.time()`, the
page's `performance.timeOrigin + now()`):
- the cell's run asked (Shift+Enter, read by a listener of the page) → the first view drawn:
  the overview's cards in the output's shadow root (the kernel's first view, notebook/widget.py
  `first_view`, or the player's own) and the frame showing them rendered (a task after the next
  animation frame); → the player drawn (its cards in `[data-testid=player]`: the trace came);
- in the kernel, printed by the cell itself with time.perf_counter: `show()` (read the graph,
  run its passes, the first view sent; its CPU time too, which a busy machine stretches less)
  and `display()` (the outputs: the drawing shown where no widget runs, and the player's view;
  then the rest of a first view's trace, made and sent);
- the front end: `show()` returned → the player's render called (JupyterLab's parsing of the
  widget's state, its model and view, the player's script imported); → the first view drawn,
  and → the trace's message arrived (the largest of the kernel's WebSocket: a listener added
  before JupyterLab's own), then → the player drawn;
- the kernel's peak resident memory (ru_maxrss) after the cell, and before it (Python and the
  demo's graph).
Prints a markdown table: the median of the runs, each run's figures beside it, and the load
average before and after.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]

from jupyter_servers import open_notebook, run_first_cell, start_jupyterlab, stop  # noqa: E402

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

RUNS = 3
SAMPLES = 100

# micrograd's demo.ipynb up to its first loss, its moons without scikit-learn.
DEMO_CELL = """\
import json
import random
import resource
import time

from IPython.display import display
from micrograd.engine import Value
from micrograd.nn import MLP

import chainrule
from chainrule.sandbox.moons import make_moons

random.seed(1337)
X, y = make_moons(n_samples={samples}, noise=0.1)
y = [label * 2 - 1 for label in y]  # the demo's labels: -1 and 1
model = MLP(2, [16, 16, 1])  # 2-layer neural network


def loss():
    inputs = [list(map(Value, xrow)) for xrow in X]
    scores = list(map(model, inputs))
    losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    alpha = 1e-4
    reg_loss = alpha * sum((p * p for p in model.parameters()))
    total_loss = data_loss + reg_loss
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(y, scores)]
    return total_loss, sum(accuracy) / len(accuracy)


total_loss, acc = loss()
total_loss.backward()
print("demo ready:", total_loss.data, acc)
"""

# The timed cell: what a learner writes (`chainrule.show(total_loss)`, shown as the cell's
# value is: display()), its own times printed.
SHOW_CELL = """\
started, before_kb = time.time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, cpu0 = time.perf_counter(), time.process_time()
player = chainrule.show(total_loss)
t1, cpu1 = time.perf_counter(), time.process_time()
display(player)
t2 = time.perf_counter()
print("chainrule-bench", json.dumps({
    "started": started, "show_s": t1 - t0, "show_cpu_s": cpu1 - cpu0, "display_s": t2 - t1,
    "shown": started + (t1 - t0),
    "displayed": started + (t2 - t0), "before_kb": before_kb,
    "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""

# Before JupyterLab's scripts: the time of the cell's Shift+Enter, of every message of the
# kernel's WebSocket (a listener added before JupyterLab's own), of the player's render (the
# host's mark, embed.js's first act).
WATCH_JS = """
(() => {
  const now = () => performance.timeOrigin + performance.now();
  const bench = (window.__bench = { request: null, messages: [], render: null });
  addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && event.shiftKey) bench.request = now();
  }, true);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const data = event.data;
        bench.messages.push({ at: now(), bytes: data.byteLength ?? data.size ?? data.length });
      });
    }
  };
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (name === 'data-chainrule-player' && bench.render === null) bench.render = now();
    return setAttribute.call(this, name, value);
  };
})();
"""

# The first view drawn: the overview's cards (a smaller batch's graph: its statements' cards) in
# the shadow root of the output's player, the kernel's first view's (notebook/widget.py
# `first_view`) or the player's own, then the frame that shows them rendered; then the player
# drawn (its cards in `[data-testid=player]`: the whole trace came). Checked at every frame.
DRAWN_JS = """async () => {
  const CARDS = '[data-testid=overview-card], [data-testid=group], [data-testid=node]';
  const root = () => document.querySelector('[data-chainrule-player]')?.shadowRoot;
  const cards = () => root()?.querySelectorAll(CARDS).length ?? 0;
  const inPlayer = () => root()?.querySelectorAll(`[data-testid=player] :is(${CARDS})`).length ?? 0;
  const rendered = async (ready) => {
    while (!ready()) await new Promise((resolve) => requestAnimationFrame(resolve));
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    return performance.timeOrigin + performance.now();
  };
  const drawn = await rendered(cards);
  const first = Boolean(root().querySelector('[data-testid=first-view]'));
  return { drawn, first, player: await rendered(inPlayer), cards: inPlayer() };
}"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def notebook(path: Path, samples: int) -> None:
    import nbformat

    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    cells = [DEMO_CELL.replace("{samples}", str(samples)), SHOW_CELL]
    book.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    nbformat.write(book, path)


def shut_kernels(url: str) -> None:
    """Every session of JupyterLab ended (its kernel with the demo's graph: ~0.6 GB each)."""
    import httpx

    with httpx.Client(base_url=url, timeout=60) as http:
        for session in http.get("/api/sessions").json():
            http.delete(f"/api/sessions/{session['id']}")


def run_once(browser, url: str, name: str) -> dict:
    """One run of the show cell in a new notebook `name` (a new kernel): its figures (seconds)."""
    page = open_notebook(browser, f"{url}/lab/tree/{name}?reset", WATCH_JS)
    page.set_default_timeout(300_000)
    try:
        run_first_cell(page)  # the demo's: the graph built
        page.locator(".jp-OutputArea-output", has_text="demo ready:").wait_for()
        page.evaluate("() => { window.__bench.messages = []; window.__bench.request = null; }")
        page.keyboard.press("Shift+Enter")  # the show cell, selected after the demo's
        drawn = page.evaluate(DRAWN_JS)
        bench = page.evaluate("() => window.__bench")
        printed = page.locator(".jp-OutputArea-output", has_text="chainrule-bench")
        printed.wait_for()
        kernel = json.loads(printed.text_content().split("chainrule-bench", 1)[1])
    finally:
        page.screenshot(path=str(Path(tempfile.gettempdir()) / f"notebook-show-{name}.png"))
        page.close()
    request = bench["request"] / 1000
    trace = max(bench["messages"], key=lambda message: message["bytes"])
    drawn_at, player_at = drawn["drawn"] / 1000, drawn["player"] / 1000
    return {
        "total": drawn_at - request,
        "player": player_at - request,
        "to_kernel": kernel["started"] - request,
        "show": kernel["show_s"],
        "show_cpu": kernel["show_cpu_s"],
        "display": kernel["display_s"],
        "model": bench["render"] / 1000 - kernel["shown"],
        "first_drawn": drawn_at - kernel["shown"],
        "trace_sent": trace["at"] / 1000 - kernel["shown"],
        "player_drawn": player_at - trace["at"] / 1000,
        "state_mb": trace["bytes"] / 1e6,
        "peak_mb": kernel["peak_kb"] / 1024,
        "before_mb": kernel["before_kb"] / 1024,
        "cards": drawn["cards"],
        "first": drawn["first"],
    }


ROWS = [
    ("total", "`chainrule.show(total_loss)`: the cell's Shift+Enter → its first view drawn", "s"),
    ("player", "… Shift+Enter → the player drawn (its trace came)", "s"),
    ("to_kernel", "… Shift+Enter → the cell starts in the kernel", "s"),
    ("show", "… kernel: `show()` (read the graph, run its passes; the first view sent)", "s"),
    ("show_cpu", "… the same, CPU time of the kernel's process (its other threads included)", "s"),
    ("display", "… kernel: `display()` (the outputs; then the first view's trace made, sent)", "s"),
    ("model", "… `show()` returned → the player's render called (JupyterLab's model)", "s"),
    ("first_drawn", "… `show()` returned → the first view drawn", "s"),
    ("trace_sent", "… `show()` returned → the trace arrived (made at `display()`)", "s"),
    ("player_drawn", "… the trace arrived → the player drawn (inflated, parsed, drawn)", "s"),
    ("state_mb", "the trace's message (the largest on the kernel's WebSocket)", "MB"),
    ("peak_mb", "the kernel's peak resident memory after the cell (ru_maxrss)", "MB"),
]


def main() -> None:
    from playwright.sync_api import sync_playwright

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else SAMPLES
    before = load()
    results = []
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        root = Path(folder)
        names = [f"show-{k}.ipynb" for k in range(1, runs + 1)]
        for name in names:
            notebook(root / name, samples)
        process, url = start_jupyterlab(root, names)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in names:
                results.append(run_once(browser, url, name))
                shut_kernels(url)
        finally:
            browser.close()
            stop(process)
    median = {key: statistics.median(run[key] for run in results) for key in results[0]}
    firsts = sum(run["first"] for run in results)
    print(
        f"\n**`chainrule.show(total_loss)` of micrograd's demo in JupyterLab** "
        f"(bench/notebook_show.py, {samples} moons: {median['cards']:.0f} overview cards, "
        f"the kernel's first view drawn first in {firsts} of {runs} runs; "
        f"{runs} runs, each a new kernel; load {before} → {load()}; "
        f"{median['before_mb']:.0f} MB in the kernel before the cell)\n"
    )
    print("| measurement | median | runs | target |")
    print("| --- | --- | --- | --- |")
    for key, label, unit in ROWS:
        each = ", ".join(f"{run[key]:.2f}" for run in results)
        target = "≤ 3 s" if key == "total" else ""
        print(f"| {label} | {median[key]:.2f} {unit} | {each} | {target} |")


if __name__ == "__main__":
    main()
