"""chainrule.show() in the notebook front ends people use, driven in Chromium, on what a learner
of the micrograd lecture shows: the lecture's own `Value` class, `MLP(3, [4, 4, 1])` and its
4-example loss (issue 39). JupyterLab: the player's first view shows the root, readable, inside
the output's visible pane, and the player fits a notebook's output; a notebook reopened without
its widgets' state shows the drawing, not "Error displaying widget: model not found". marimo:
show() is an anywidget that marimo shows, the root in view there too. JupyterLab and marimo are
in the test extra; these tests are skipped where they are not installed."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from jupyter_servers import (
    open_notebook,
    run_first_cell,
    start_jupyterlab,
    start_until_ready,
    stop,
)
from lecture_cells import DATASET, MLP_CLASSES, VALUE_CLASS
from playwright.sync_api import expect
from servers import free_port

pytestmark = pytest.mark.browser

# The lecture's cells (tests/lecture_cells.py): its Value class, its MLP, its dataset, its loss.
LECTURE_CELLS = [
    "import math\nimport random\nrandom.seed(39)\nimport chainrule",
    VALUE_CLASS,
    MLP_CLASSES,
    "n = MLP(3, [4, 4, 1])",
    DATASET,
    "ypred = [n(x) for x in xs]\n"
    "loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))\n"
    "loss.backward()\n"
    "chainrule.show(loss)",
]


# A tensor program shown in a notebook (issue 43): the page's tensor view in the player.
TENSOR_PROGRAM = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
L = tanh(X @ W + b).sum()"""
TENSOR_CELL = f"import chainrule\nchainrule.show({TENSOR_PROGRAM!r})"

# micrograd's demo on 5 moons (4,258 nodes; chainrule/sandbox/moons.py) shown with a first view
# from 2,500 nodes on (`first_view_min_nodes`, 20,000 by default: micrograd's demo's 65,818
# reach it). The player's view is output by its mime bundle (as a front end asks for it), not
# by display(player), which would make its trace at once; the cell then waits for a line typed
# into it, and the trace is made once the cell has run (notebook/widget.py `_after_the_cell`):
# until then the page shows the first view.
FIRST_VIEW_SAMPLES = 5
FIRST_VIEW_CELL = f"""import os
os.environ["CHAINRULE_FIRST_VIEW_MIN_NODES"] = "2500"
import chainrule
from chainrule.sandbox.moons import demo_total_loss
model, total_loss = demo_total_loss({FIRST_VIEW_SAMPLES})
player = chainrule.show(total_loss)
data, metadata = player._repr_mimebundle_()
display(data, metadata=metadata, raw=True)
input("the first view is shown")"""


def executed_notebooks(folder: Path) -> None:
    """LECTURE_CELLS run once by nbclient (a real kernel), saved twice: with the widgets' state
    (`with-state.ipynb`, as nbclient saves it) and without (`reopened.ipynb`, as JupyterLab saves
    a notebook by default: its "Save Jupyter widget state in notebooks" setting is off); and
    `untrusted.ipynb`, with the state, as a notebook from someone else."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(cell) for cell in LECTURE_CELLS]
    NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    nbformat.write(notebook, folder / "with-state.ipynb")
    nbformat.write(notebook, folder / "untrusted.ipynb")  # never `jupyter trust`ed
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, folder / "reopened.ipynb")
    # A tensor program's notebook, not run: the test runs it in JupyterLab, with a live kernel.
    tensors = nbformat.v4.new_notebook()
    tensors.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    tensors.cells = [nbformat.v4.new_code_cell(TENSOR_CELL)]
    nbformat.write(tensors, folder / "tensors.ipynb")
    first_view = nbformat.v4.new_notebook(metadata=tensors.metadata)
    first_view.cells = [nbformat.v4.new_code_cell(FIRST_VIEW_CELL)]
    nbformat.write(first_view, folder / "first-view.ipynb")


@dataclass(frozen=True)
class Lab:
    url: str  # JupyterLab's
    folder: Path  # its root: the executed notebooks


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    root = tmp_path_factory.mktemp("lab")
    executed_notebooks(root)
    trusted = ["with-state.ipynb", "reopened.ipynb", "tensors.ipynb", "first-view.ipynb"]
    process, url = start_jupyterlab(root, trusted)
    try:
        yield Lab(url, root)
    finally:
        stop(process)


def box(locator) -> dict:
    return locator.bounding_box()


def inside(inner: dict, outer: dict) -> bool:
    return (
        outer["x"] - 1 <= inner["x"] and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
        and outer["y"] - 1 <= inner["y"] and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
    )  # fmt: skip


# The card showing the root (the reader names the result `out`; a big graph opens with its
# statements collapsed, the root's shown by its statement's card) inside the graph's pane and
# inside the part of `scroller` on screen, its name readable: {pane, card} when it is, else null.
# The root, by the learner's own name for it (the notebook names by place: never `out`, the
# variable inside Neuron.__call__ that made it).
ROOT_CARD = '[data-testid=node][data-label="loss"], [data-testid=group][data-group="loss"][data-collapsed="true"]'
ROOT_IN_VIEW = """([host, scroller, rootCard]) => {
  const shadow = host.shadowRoot;
  const box = (el) => el?.getBoundingClientRect();
  const [pane, card] = [box(shadow?.querySelector('#graph-wrap')), box(shadow?.querySelector(rootCard))];
  const shown = (scroller && box(document.querySelector(scroller))) || {top: 0, bottom: innerHeight, left: 0, right: innerWidth};
  const inside = pane && card && card.height >= 20 && card.left >= pane.left && card.right <= pane.right
    && card.top >= Math.max(pane.top, shown.top) && card.bottom <= Math.min(pane.bottom, shown.bottom);
  return inside ? {pane: pane.toJSON(), card: card.toJSON()} : null;
}"""


PLAYER_BOX = """(host) => { const player = host.shadowRoot.querySelector('.player');
  return {height: player.getBoundingClientRect().height, resize: getComputedStyle(player).resize}; }"""


def test_the_lecture_mlp_opens_on_its_root_in_jupyterlab(browser, jupyterlab, screenshots_dir):
    page = open_notebook(browser, f"{jupyterlab.url}/lab/tree/with-state.ipynb?reset")
    page.wait_for_selector("[data-testid=node]", state="attached")
    output = page.locator(".jp-OutputArea-output:has([data-chainrule-player])")
    output.scroll_into_view_if_needed()
    # The first view shows the root, readable, in the output's real size and on screen; the
    # player opens past the 967-step sort, where the backward pass starts (at the root).
    host = page.locator("[data-chainrule-player]").element_handle()
    page.wait_for_function(ROOT_IN_VIEW, arg=[host, ".jp-WindowedPanel-outer", ROOT_CARD])
    assert page.locator("[data-testid=phase]").text_content() == "seed"
    assert "967" in page.locator("[data-testid=sort-note]").text_content()
    # The player fits a notebook's output: 700 px at most, resizable from its corner.
    player = host.evaluate(PLAYER_BOX)
    assert 450 <= player["height"] <= 700 and player["resize"] == "vertical", player
    # The drawing saved before the player is hidden while the player works.
    assert not page.locator(".chainrule-static").is_visible()
    output.screenshot(path=str(screenshots_dir / "jupyterlab-lecture-mlp.png"))
    page.close()


# Each overview card as the page shows it: where it is, what it is, its numbers and counts.
CARDS_JS = """cards => cards.map((c) => [c.dataset.card, c.dataset.kind, c.dataset.root, c.dataset.data,
  c.dataset.grad, c.dataset.statements, c.dataset.off, c.dataset.dead, c.dataset.vanishing,
  c.querySelector('.overview-name').textContent, c.querySelector('.overview-numbers').textContent,
  c.querySelector('.overview-counts').textContent])"""


def test_a_big_graph_shows_its_first_view_then_the_same_cards_in_the_player(
    browser, jupyterlab, screenshots_dir
):
    """Issue 42: `show()` of a big graph sends its overview's first view as soon as its passes
    have run, and the trace after the cell: the page draws the first view's cards (the player's
    own, with micrograd's numbers), then the player takes its place with the same cards."""
    import chainrule
    from chainrule.sandbox.moons import demo_total_loss

    _, total_loss = demo_total_loss(FIRST_VIEW_SAMPLES)
    size = len(chainrule.trace_value(total_loss)["nodes"])
    page = open_notebook(browser, f"{jupyterlab.url}/lab/tree/first-view.ipynb?reset")
    run_first_cell(page)
    first = page.locator("[data-testid=first-view]")
    first.wait_for()
    stdin = page.locator(".jp-Stdin-input")
    stdin.wait_for()  # the cell still runs: no trace can have been made
    assert first.get_attribute("aria-busy") == "true"
    assert page.locator("[data-testid=player]").count() == 0
    status = page.locator("[data-testid=first-view-status]").text_content()
    assert f"{size:,} nodes" in status, status
    cards = page.locator("[data-testid=first-view] [data-testid=overview-card]")
    shown = cards.evaluate_all(CARDS_JS)
    kinds = [card[1] for card in shown]
    assert kinds == ["sample"] * FIRST_VIEW_SAMPLES + ["parameters", "combined"]
    combined = shown[-1]
    assert float(combined[3]) == total_loss.data and combined[4] == "1"  # micrograd's; the seed
    assert page.locator("[data-testid=first-view] .overview-edge").count() == FIRST_VIEW_SAMPLES + 1
    assert cards.first.get_attribute("role") is None  # nothing to open until the player comes
    output = page.locator(".jp-OutputArea-output:has([data-chainrule-player])")
    output.scroll_into_view_if_needed()
    output.screenshot(path=str(screenshots_dir / "jupyterlab-first-view.png"))
    stdin.press("Enter")  # the cell ends: the kernel makes the trace and sends it
    player = page.locator("[data-testid=player]")
    player.wait_for()
    expect(first).to_have_count(0)
    in_player = player.locator("[data-testid=overview-card]")
    expect(in_player).to_have_count(len(shown))
    assert in_player.evaluate_all(CARDS_JS) == shown
    assert in_player.first.get_attribute("role") == "button"
    page.close()


def test_a_notebook_reopened_without_its_widgets_shows_the_drawing(
    browser, jupyterlab, screenshots_dir
):
    page = open_notebook(browser, f"{jupyterlab.url}/lab/tree/reopened.ipynb?reset")
    # ipywidgets' renderer gives up on the player (its model is gone) ...
    page.wait_for_selector(".jp-OutputArea-output.jupyter-widgets", state="attached")
    # ... and the drawing stands in for it, the error line hidden.
    page.wait_for_selector(".chainrule-static svg")
    assert page.locator(".chainrule-static").is_visible()
    assert not page.get_by_text("Error displaying widget").is_visible()
    assert page.locator("[data-testid=node]").count() == 0
    # It says how to get the player back.
    assert page.get_by_text("run this cell in a trusted notebook").is_visible()
    drawing = page.locator(".chainrule-static")
    drawing.scroll_into_view_if_needed()
    drawing.screenshot(path=str(screenshots_dir / "jupyterlab-reopened.png"))
    page.close()


def test_an_untrusted_notebook_shows_the_drawing_and_how_to_trust_it(browser, jupyterlab):
    page = open_notebook(browser, f"{jupyterlab.url}/lab/tree/untrusted.ipynb?reset")
    drawing = page.locator(".chainrule-static")
    drawing.wait_for(state="attached")
    drawing.scroll_into_view_if_needed()
    # JupyterLab renders no widget of an untrusted notebook, and strips the output's style. It
    # shows the output a frame or more after attaching it (a loaded machine's run saw it
    # attached, scrolled to and not yet visible): the checks wait for it.
    expect(drawing).to_be_visible()
    expect(page.locator("[data-chainrule-player]")).to_have_count(0)
    expect(page.get_by_text("File ▸ Trust Notebook")).to_be_visible()
    page.close()


def test_nbconvert_html_shows_the_drawing_once(browser, jupyterlab, tmp_path, screenshots_dir):
    """`jupyter nbconvert --to html` of the notebook saved with its widgets' state: the drawing is
    shown (offline, where the export's widget manager, loaded from a CDN, cannot run), once."""
    from nbconvert import HTMLExporter

    saved = jupyterlab.folder / "with-state.ipynb"
    html, _ = HTMLExporter().from_filename(str(saved))
    # One copy of the drawing (the widget's state holds the player's trace, not a drawing).
    assert html.count('class="chainrule-static"') == 1
    exported = tmp_path / "with-state.html"
    exported.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    # Offline: nothing but the file itself.
    page.route("http*://**", lambda route: route.abort())
    page.goto(exported.as_uri())
    drawing = page.locator(".chainrule-static")
    drawing.scroll_into_view_if_needed()
    assert drawing.is_visible() and drawing.locator("svg").first.bounding_box()["height"] > 100
    drawing.screenshot(path=str(screenshots_dir / "nbconvert-drawing.png"))
    page.close()


def marimo_cell(lines: list[str]) -> str:
    """The lecture's cells as one marimo cell (a function whose last expression is shown)."""
    body = "\n".join(lines).splitlines()
    return "\n".join(f"    {line}" if line.strip() else "" for line in body)


def test_show_in_marimo_is_the_player(browser, tmp_path, screenshots_dir):
    pytest.importorskip("marimo")
    notebook = tmp_path / "loss.py"
    notebook.write_text(
        "import marimo\n\napp = marimo.App(width='full')\n\n\n@app.cell\ndef _():\n"
        + marimo_cell(LECTURE_CELLS)
        + "\n    return\n"
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
        page.wait_for_selector("[data-testid=node]")
        host = page.locator("[data-chainrule-player]")
        host.scroll_into_view_if_needed()
        page.wait_for_function(ROOT_IN_VIEW, arg=[host.element_handle(), None, ROOT_CARD])
        player = host.element_handle().evaluate(PLAYER_BOX)
        assert 450 <= player["height"] <= 700, player
        page.screenshot(path=str(screenshots_dir / "marimo-lecture-mlp.png"))
        # The page's player works in marimo: the pulse runs to the end, every grad filled.
        page.click("#to-end")
        page.wait_for_selector("[data-testid=step-forward]:disabled")
        assert page.locator("[data-testid=phase]").text_content().startswith("backward")
        page.close()
    finally:
        stop(process)


def test_a_tensor_program_plays_in_jupyterlab_and_its_kernel_sums_a_gradient(
    browser, jupyterlab, screenshots_dir
):
    """`chainrule.show(tensor program)` run in JupyterLab: the player draws the tensor view; a
    gradient cell's fan-in and a leaf cell's change are computed by the live kernel (the
    widget's messages and its `values`), with no chainrule server anywhere."""
    import numpy as np

    page = open_notebook(browser, f"{jupyterlab.url}/lab/tree/tensors.ipynb?reset")
    run_first_cell(page)  # a run asked while the kernel still connects is dropped: asked again
    page.wait_for_selector("[data-testid=tensor-graph][data-ready=true]")
    host = page.locator("[data-chainrule-player]")
    host.scroll_into_view_if_needed()
    assert page.locator("[data-testid=player]").get_attribute("data-view") == "tensor"
    # The drawing shown before the player (the tensor export's) is hidden while the player works.
    assert page.locator(".chainrule-static svg").count() == 1
    assert not page.locator(".chainrule-static").is_visible()
    page.locator("#to-end").click()
    # dW[1,2] = Σᵢ X[i,1]·dZ[i,2], dZ = 1 − tanh(Z)²: NumPy's, from the kernel's fan-in.
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    w = np.array([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
    dw = x.T @ (1 - np.tanh(x @ w + 0.1) ** 2)
    cell = "[data-testid=tensor-cell][data-tensor-id=t1][data-grid={}][data-index='{}']"
    page.locator(cell.format("grad", "1,2")).click()
    fan = page.locator("[data-testid=fan-in]")
    fan.wait_for(state="visible")
    assert fan.get_attribute("data-terms") == "3"
    assert abs(float(fan.get_attribute("data-sum")) - dw[1, 2]) <= 1e-12 * abs(dw[1, 2])
    sentence = page.locator("[data-testid=fan-in-sentence]").text_content()
    assert sentence.startswith("dW[1,2] = Σᵢ X[i,1]·d(X @ W)[i,2] = "), sentence
    output = page.locator(".jp-OutputArea-output:has([data-chainrule-player])")
    output.screenshot(path=str(screenshots_dir / "jupyterlab-tensor-fan-in.png"))
    # A leaf cell changed: the kernel traces the program again with it.
    page.locator(cell.format("data", "1,2")).click()
    page.locator("[data-testid=tensor-cell-value]").fill("0.25")
    page.locator("[data-testid=tensor-cell-value]").press("Enter")
    w[1, 2] = 0.25
    dw = x.T @ (1 - np.tanh(x @ w + 0.1) ** 2)
    page.wait_for_function(
        """([host, selector, expected]) => {
            const value = Number(host.shadowRoot.querySelector(selector)?.dataset.value);
            return Math.abs(value - expected) <= 1e-12 * Math.abs(expected);
        }""",
        arg=[host.element_handle(), cell.format("grad", "0,0"), dw[0, 0]],
    )
    page.close()
