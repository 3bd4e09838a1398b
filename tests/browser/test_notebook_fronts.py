"""chainrule.show() in the notebook front ends people use, driven in Chromium: JupyterLab (the
graph gets the player's width and most of a screen; a notebook reopened without its widgets'
state shows the drawing, not "Error displaying widget: model not found") and marimo (show() is an
anywidget that marimo shows). JupyterLab and marimo are not in the test extra (each adds well
over 100 MB): these tests run where they are installed and are skipped elsewhere."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.browser

MLP_CELL = """import random
import chainrule
from micrograd.engine import Value
from micrograd.nn import MLP
random.seed(1)
model = MLP(2, [2, 1])
xs, ys = [[2.0, 3.0], [-1.0, -2.0]], [1.0, -1.0]
loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys)), Value(0.0))
loss.backward()
chainrule.show(loss)"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_until_ready(
    command: list[str], ready_line: str, env: dict | None = None, seconds: float = 120, **popen
):
    """Start a server (`command`) and wait until it prints a line holding `ready_line`, which it
    prints once it listens: a thread reads its output line by line (and keeps draining it, so a
    full pipe never stalls the server) and signals that line, or the output's end."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**(env or os.environ), "PYTHONUNBUFFERED": "1"}, **popen,
    )  # fmt: skip
    said: list[str] = []
    signalled = threading.Event()

    def read() -> None:
        for line in process.stdout:
            said.append(line)
            if ready_line in line:
                signalled.set()
        signalled.set()  # the output ended: the server stopped

    threading.Thread(target=read, daemon=True).start()
    if not signalled.wait(seconds) or not any(ready_line in line for line in said):
        process.kill()
        raise AssertionError(f"no {ready_line!r} from {command[2:4]}: {''.join(said)[-2000:]}")
    return process


def executed_notebook(path: Path, keep_widget_state: bool) -> None:
    """MLP_CELL run by nbclient; without the widgets' state (as JupyterLab saves a notebook by
    default: its "Save Jupyter widget state in notebooks" setting is off) unless kept."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(MLP_CELL)]
    NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    if not keep_widget_state:
        notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    root = tmp_path_factory.mktemp("lab")
    executed_notebook(root / "with-state.ipynb", keep_widget_state=True)
    executed_notebook(root / "reopened.ipynb", keep_widget_state=False)
    # Jupyter's own files in the test's folder, not in the user's home.
    env = {**os.environ, **{name: str(root / folder) for name, folder in (
        ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"))}}  # fmt: skip
    jupyter = [sys.executable, "-m", "jupyter"]
    # Outputs of a notebook its user ran are trusted (JupyterLab signs what it saves).
    subprocess.run([*jupyter, "trust", "with-state.ipynb", "reopened.ipynb"], cwd=root, env=env,
                   check=True, capture_output=True)  # fmt: skip
    port = free_port()
    # Jupyter Server logs "Jupyter Server <version> is running at:" after it bound the port.
    process = start_until_ready(
        [*jupyter, "lab", "--no-browser", "--allow-root", f"--port={port}",
         "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}"],
        "is running at", cwd=root, env=env,
    )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def open_notebook(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    page.goto(url)
    return page


def box(locator) -> dict:
    return locator.bounding_box()


def test_the_player_in_jupyterlab_gives_the_graph_the_room(browser, jupyterlab, screenshots_dir):
    page = open_notebook(browser, f"{jupyterlab}/lab/tree/with-state.ipynb?reset")
    page.wait_for_selector("[data-testid=node]")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length >= 2")
    wrap = box(page.locator("#graph-wrap"))
    output = box(page.locator(".jp-OutputArea-output").nth(1))
    # The graph spans the output's width (less the player's border) and most of a screen.
    assert wrap["width"] >= output["width"] - 4 and wrap["width"] >= 800, (wrap, output)
    assert wrap["height"] >= 0.6 * 1000 - 1, wrap
    # Every card of the loss's graph is inside it, none under the legend.
    legend = box(page.locator("#graph-wrap .legend"))
    cards = [box(card) for card in page.locator("[data-testid=node]").all()]
    assert len(cards) == 20
    for card in cards:
        assert wrap["x"] <= card["x"] and card["x"] + card["width"] <= wrap["x"] + wrap["width"]
        assert wrap["y"] <= card["y"] and card["y"] + card["height"] <= wrap["y"] + wrap["height"]
        overlap_x = min(card["x"] + card["width"], legend["x"] + legend["width"]) - max(
            card["x"], legend["x"]
        )
        overlap_y = min(card["y"] + card["height"], legend["y"] + legend["height"]) - max(
            card["y"], legend["y"]
        )
        assert overlap_x <= 0 or overlap_y <= 0, (card, legend)
    assert not page.locator(".chainrule-static").is_visible()
    page.locator(".jp-OutputArea-output").nth(1).screenshot(
        path=str(screenshots_dir / "jupyterlab-player.png")
    )
    page.close()


def test_a_notebook_reopened_without_its_widgets_shows_the_drawing(
    browser, jupyterlab, screenshots_dir
):
    page = open_notebook(browser, f"{jupyterlab}/lab/tree/reopened.ipynb?reset")
    # ipywidgets' renderer gives up on the player (its model is gone) ...
    page.wait_for_selector(".jp-OutputArea-output.jupyter-widgets", state="attached")
    # ... and the drawing stands in for it, the error line hidden.
    page.wait_for_selector(".chainrule-static svg")
    assert page.locator(".chainrule-static").is_visible()
    assert not page.get_by_text("Error displaying widget").is_visible()
    assert page.locator("[data-testid=node]").count() == 0
    page.screenshot(path=str(screenshots_dir / "jupyterlab-reopened.png"))
    page.close()


def test_show_in_marimo_is_the_player(browser, tmp_path, screenshots_dir):
    pytest.importorskip("marimo")
    notebook = tmp_path / "loss.py"
    notebook.write_text(
        "import marimo\n\napp = marimo.App()\n\n\n@app.cell\ndef _():\n"
        "    import chainrule\n    from micrograd.engine import Value\n\n"
        "    a = Value(2.0)\n    b = a * a + 1\n    b.backward()\n    chainrule.show(b)\n"
        "    return\n"
    )
    port = free_port()
    # marimo prints its URL as its app starts, just before uvicorn binds the port (marimo's
    # lifespans.py): the one request after it retries a refused connection (httpx's transport).
    process = start_until_ready(
        [sys.executable, "-m", "marimo", "run", str(notebook), "--headless", f"--port={port}",
         "--no-token"],
        f":{port}",
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        with httpx.Client(transport=httpx.HTTPTransport(retries=5)) as client:
            assert client.get(url, timeout=10).status_code == 200
        page = open_notebook(browser, url)
        page.wait_for_selector('[data-testid=node][data-label="out"]')
        page.click("#to-end")
        page.wait_for_selector('[data-testid=node][data-label="v1"][data-grad="4"]')
        assert page.get_attribute('[data-testid=node][data-label="out"]', "data-data") == "5"
        page.screenshot(path=str(screenshots_dir / "marimo-player.png"), full_page=True)
        page.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
