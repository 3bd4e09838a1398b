"""Benchmark the 3D view's pulse in headless Chromium; prints a markdown table.

Run: .venv/bin/python bench/view_3d.py        (about half a minute)

- 3D pulse frame rate: the page's frames (requestAnimationFrame count) while the backward pulse
  plays at 16× on a 300-node graph in the 3D view (issue 14's target: ≥ 50 fps), at 1600×900,
  with the 3D view's own counts: frames of the travelling dots drawn (their overlay canvas, while
  a dot moves) and WebGL frames (one a step). Headless Chromium here draws WebGL with SwiftShader
  (the CPU), so a machine with a GPU does better.
- 3D switch: from the click on `2D | 3D` to the 3D view's first frame of the graph (three.js
  loaded, every card painted), on the same graph.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # servers.py

from servers import start_server, stop_server  # noqa: E402

from bench.page import LOAD_JS, open_bench_page, sized_program  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

FPS_TARGET = 50

SWITCH_JS = """async () => {
  const t0 = performance.now();
  document.querySelector('[data-testid=view-3d]').click();
  const box = document.querySelector('[data-testid=graph-3d]');
  await new Promise((resolve) => {
    const drawn = () => box.dataset.frame === document.body.dataset.stepIndex;
    const check = () => (drawn() ? resolve() : requestAnimationFrame(check));
    check();
  });
  return performance.now() - t0;
}"""

FPS_3D_JS = """async ([ms]) => {
  // The 3D view's frame counters (view-3d/view.js), on the page's scope.
  const box = (await import(document.querySelector('script[type=module]').src)).scope.view3d;
  document.querySelector('[data-testid=jump-backward]').click();
  document.querySelector('#speed').value = '16';
  document.querySelector('#speed').dispatchEvent(new Event('change'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  document.querySelector('[data-testid=play]').click();
  const start = Number(document.body.dataset.stepIndex);
  const drawn0 = box.renderCount();
  const dots0 = box.pulseFrameCount();
  let frames = 0, worst = 0, last = performance.now();
  const t0 = last;
  await new Promise((resolve) => {
    const tick = (now) => {
      frames++; worst = Math.max(worst, now - last); last = now;
      if (now - t0 < ms) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  const elapsed = performance.now() - t0;
  document.querySelector('[data-testid=play]').click();
  return {fps: frames * 1000 / elapsed, drawn: (box.renderCount() - drawn0) * 1000 / elapsed,
          dots: (box.pulseFrameCount() - dots0) * 1000 / elapsed, worst,
          steps: Number(document.body.dataset.stepIndex) - start};
}"""


def main() -> None:
    import httpx
    from playwright.sync_api import sync_playwright

    process, base_url = start_server()
    rows: list[tuple[str, str, str, str]] = []
    try:

        def count_nodes(source: str) -> int:
            reply = httpx.post(f"{base_url}/api/graph", json={"source": source}, timeout=60)
            reply.raise_for_status()
            return len(reply.json()["nodes"])

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = open_bench_page(browser, base_url)  # every node drawn: big graphs open collapsed
            source = sized_program(300, count_nodes)
            nodes = count_nodes(source)
            page.evaluate(LOAD_JS, source)
            page.wait_for_function(
                "n => document.querySelectorAll('[data-testid=node]').length === n", arg=nodes
            )
            switch_ms = page.evaluate(SWITCH_JS)
            rows.append((f"2D → 3D switch, {nodes} nodes", f"{switch_ms:.0f} ms", "", ""))
            result = page.evaluate(FPS_3D_JS, [2500])
            rows.append(
                (
                    f"3D backward pulse, {nodes} nodes, 16× play",
                    f"{result['fps']:.1f} fps (pulse frames drawn: {result['dots']:.1f}/s, WebGL "
                    f"frames: {result['drawn']:.1f}/s, one a step; worst frame "
                    f"{result['worst']:.0f} ms, {result['steps']} steps)",
                    f"≥ {FPS_TARGET} fps",
                    "ok" if result["fps"] >= FPS_TARGET else "MISSED",
                )
            )
            browser.close()
    finally:
        stop_server(process)

    print("| measurement | result | target | |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
