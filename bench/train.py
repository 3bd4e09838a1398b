"""Benchmark the Train lab's steps in headless Chromium: the page's own descent
(static/js/train/descend.js on the compiled structure) against a round trip to POST /api/descend on
localhost, for a batch of 10 steps (Play's) and of 200 (a share link's replay); prints a markdown
table of medians.

Run: .venv/bin/python bench/train.py        (about a minute)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # servers.py

from servers import start_server, stop_server  # noqa: E402

from chainrule import engine  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

SAMPLES = {10: 15, 200: 3}  # timings per batch size


def line_fit(points: int) -> str:
    """A line fitted to `points` points (constants inline): about 8 nodes a point."""
    terms = [f"(w*{x} + b - {2 * x + 1})**2" for x in range(1, points + 1)]
    return "w = 0\nb = 0\nloss = " + " + ".join(terms)


PROGRAMS = [
    ("mlp preset", next(p["source"] for p in engine.PRESETS if p["id"] == "mlp"), 0.05),
    ("line fit, 125 points", line_fit(125), 1e-6),
    ("line fit, 1,000 points", line_fit(1_000), 1e-9),
]

# Per program and batch size: the page's descend and the server's reply, `samples` times each.
TIME_JS = """async ({ source, lr, steps, samples }) => {
  const here = document.querySelector('script[type=module]').src;
  const url = (name) => new URL(`./${name}`, here).href;
  const { compileStructure } = await import(url('compute/evaluator.js'));
  const { descend } = await import(url('train/descend.js'));
  const { apiUrl, postGraph } = await import(url('core/api.js'));
  const trace = await postGraph({ source });
  const values = Object.fromEntries(trace.leaves.map((leaf) => [leaf.name, leaf.value]));
  const parameters = trace.leaves.map((leaf) => leaf.name).filter((name) => !/^[xy]/i.test(name));
  const body = { values, parameters, lr, steps, momentum: 0, first_step: 0 };
  let started = performance.now();
  const structure = compileStructure(trace);
  const compile = performance.now() - started;
  const page = [];
  const server = [];
  for (let i = 0; i < samples; i += 1) {
    started = performance.now();
    const reply = descend(structure, body);
    page.push(performance.now() - started);
    if (reply.values.length !== steps) throw new Error(`stopped: ${reply.stopped.message}`);
    started = performance.now();
    const response = await fetch(apiUrl('api/descend'), {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ source, ...body }),
    });
    await response.json();
    server.push(performance.now() - started);
  }
  return { nodes: trace.nodes.length, compile, page, server };
}"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    process, base_url = start_server()
    rows = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(base_url + "/")
            page.wait_for_selector("svg[data-testid=graph][data-ready=true]")
            for label, source, lr in PROGRAMS:
                for steps in (10, 200):
                    samples = SAMPLES[steps]
                    args = {"source": source, "lr": lr, "steps": steps, "samples": samples}
                    out = page.evaluate(TIME_JS, args)
                    rows.append(
                        (label, out["nodes"], steps, out["compile"],
                         statistics.median(out["page"]), statistics.median(out["server"]))
                    )  # fmt: skip
            browser.close()
    finally:
        stop_server(process)
    print("| program | nodes | steps | compile (once) | page's descend | POST /api/descend |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, nodes, steps, compile_ms, page_ms, server_ms in rows:
        print(
            f"| {label} | {nodes:,} | {steps} | {compile_ms:.1f} ms | {page_ms:.2f} ms |"
            f" {server_ms:.1f} ms |"
        )


if __name__ == "__main__":
    main()
