"""Expand on the page (issue 43): a tensor op's card opens the op's scalar graph (POST
/api/expand with `graph`) in a panel over the tensor view, drawn as the scalar view draws a graph;
its cards' numbers are the tensor cards' cells, and follow a cell's drag; an op past the bound
shows the server's message; Escape closes it; a one-file HTML says it needs the server."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect
from tensor_cells import cell, post

from chainrule.engine.i18n import catalogue
from chainrule.engine.presets import presets
from chainrule.engine.tensor_program import trace_tensors

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_onefile  # noqa: E402
from test_tensor_drag import close, drag_to, open_cell, wait_cell  # noqa: E402
from test_tensor_page import TENSORS, open_program  # noqa: E402

pytestmark = pytest.mark.browser

file_page = test_onefile.file_page  # the fixture: a file:// page that records every request
MLP = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]
PANEL = "[data-testid=expand]"
DRAWN = "[data-testid=expand-graph][data-ready=true]"
CARDS_JS = """() => [...document.querySelectorAll('[data-testid=expand-graph] [data-testid=node]')]
    .map(c => ({id: c.dataset.nodeId, label: c.dataset.label, op: c.dataset.op,
                data: c.dataset.data, grad: c.dataset.grad, cls: c.getAttribute('class')}))"""


def expand_button(tensor: str) -> str:
    return f"[data-testid=tensor-expand][data-tensor-id={tensor}]"


def cards_of(page) -> dict[str, dict]:
    return {c["label"] or c["id"]: c for c in page.evaluate(CARDS_JS)}


def test_expand_draws_x_at_w_as_its_scalar_graph_with_the_cards_numbers(
    page, live_server, screenshots_dir
):
    reply = post(live_server, "/api/graph", {"source": MLP})
    tensors = {node["id"]: node for node in reply["nodes"]}
    xw = next(node for node in reply["nodes"] if node["label"] == "X @ W")
    page.goto("/?preset=tensor-mlp")
    page.wait_for_selector(TENSORS)
    page.click("#to-end")  # the backward pass done: every gradient cell shown
    # Only ops' cards offer Expand: not a leaf's (nor an integer tensor's).
    offered = page.eval_on_selector_all(
        "[data-testid=tensor-expand]", "bs => bs.map(b => b.dataset.tensorId)"
    )
    assert offered == [n["id"] for n in reply["nodes"] if n["kind"] == "op"]
    page.click(expand_button(xw["id"]))
    page.wait_for_selector(DRAWN)
    panel = page.locator(PANEL)
    expect(panel).to_be_visible()
    assert panel.get_attribute("data-tensor-id") == xw["id"]
    title = page.text_content("[data-testid=expand-title]")
    assert title == "X @ W, element by element: 27 scalar nodes (Expand draws at most 2,000)"
    page.screenshot(path=str(screenshots_dir / "tensor-expand-1280x720.png"))
    # A click on a card says its numbers in full (Enter on one too: below).
    first = page.locator("[data-testid=expand-graph] [data-label='X[0,0]']")
    first.click()
    expect(page.locator("[data-testid=expand-readout]")).to_have_text(
        f"X[0,0]: data = 1, grad = {tensors['t0']['grad'][0][0]!r}"
    )
    cards = cards_of(page)
    # 9 outputs of 2 products and their sum each (27 nodes), and the 12 elements they read.
    assert len(cards) == 39
    assert page.get_attribute("[data-testid=expand-graph]", "data-nodes") == "39"
    leaves = sorted(label for label, c in cards.items() if "kind-leaf" in c["cls"].split())
    assert leaves == sorted(
        [f"X[{i},{k}]" for i in range(3) for k in range(2)]
        + [f"W[{k},{j}]" for k in range(2) for j in range(3)]
    )
    # Every element's card shows its tensor card's cell, to the last digit.
    for i in range(3):
        for j in range(3):
            out = cards[f"(X @ W)[{i},{j}]"]
            assert out["op"] == "+"
            for grid in ("data", "grad"):
                shown = page.get_attribute(cell(xw["id"], grid, f"{i},{j}"), "data-value")
                assert out[grid] == shown and float(shown) == xw[grid][i][j], (i, j, grid)
    for name, tensor in (("X", "t0"), ("W", "t1")):
        for label, card in cards.items():
            if label.startswith(f"{name}["):
                index = label[2:-1]
                i, k = map(int, index.split(","))
                for grid in ("data", "grad"):
                    shown = page.get_attribute(cell(tensor, grid, index), "data-value")
                    assert card[grid] == shown and float(shown) == tensors[tensor][grid][i][k]
    # A product's inputs are the right elements: each of the 18 products, asked for its
    # numbers (Enter on its card), names X[i,k]·W[k,j] from its drawn inputs, and its data is
    # their cells' product.
    products = [c for c in page.evaluate(CARDS_JS) if c["op"] == "*"]
    assert len(products) == 18 and all(c["label"] == "" for c in products)
    factors = set()
    for product in products:
        page.locator(f"[data-testid=expand-graph] [data-node-id={product['id']}]").focus()
        page.keyboard.press("Enter")
        readout = page.text_content("[data-testid=expand-readout]")
        match = re.fullmatch(r"X\[(\d),(\d)\]·W\[(\d),(\d)\]: data = .*", readout)
        assert match, readout
        i, k, k2, j = match.groups()
        assert k == k2
        factors.add((i, k, j))
        x = float(page.get_attribute(cell("t0", "data", f"{i},{k}"), "data-value"))
        w = float(page.get_attribute(cell("t1", "data", f"{k},{j}"), "data-value"))
        assert float(product["data"]) == x * w
    assert len(factors) == 18
    # The drawing is the scalar view's: an edge drawn for each input of each node.
    assert page.locator("[data-testid=expand-graph] path.edge").count() == 54
    page.locator("[data-testid=expand-graph] [data-label='(X @ W)[2,1]']").focus()
    page.keyboard.press("Enter")
    readout = page.text_content("[data-testid=expand-readout]")
    assert readout.startswith("(X @ W)[2,1] = X[2,0]·W[0,1] + X[2,1]·W[1,1]: data = ")
    # Escape closes it; the focus goes back to the card's Expand button.
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    focused = page.evaluate("document.activeElement?.dataset?.testid")
    assert focused == "tensor-expand"


def test_the_keyboard_opens_expand_and_the_close_button_closes_it(page):
    open_program(page, MLP)
    button = page.locator(expand_button("t6"))  # h = tanh(...)
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(DRAWN)
    cards = cards_of(page)
    assert sorted(label for label in cards if label.startswith("h[")) == [
        f"h[{i},{j}]" for i in range(3) for j in range(3)
    ]
    assert all(cards[f"h[{i},{j}]"]["op"] == "tanh" for i in range(3) for j in range(3))
    page.click("[data-testid=expand-close]")
    expect(page.locator(PANEL)).to_be_hidden()


def test_an_op_past_the_bound_shows_the_server_s_message_where_the_graph_would_be(
    page, screenshots_dir
):
    open_program(page, "X = randn(40, 40, seed=1)\nY = X @ X\nL = Y.sum()")
    page.click(expand_button("t1"))
    panel = page.locator(PANEL)
    expect(panel).to_have_attribute("data-error-type", "LimitExceeded")
    note = page.text_content("[data-testid=expand-note]")
    assert note == (
        "'Y' is 126,400 scalar nodes; Expand draws at most 2,000: expand a smaller op, or make "
        "the tensors smaller"
    )
    expect(page.locator("[data-testid=expand-graph]")).to_be_hidden()
    assert page.locator("[data-testid=expand-graph] [data-testid=node]").count() == 0
    page.screenshot(path=str(screenshots_dir / "tensor-expand-limit-1280x720.png"))
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()


def test_a_cell_drag_moves_the_expansion_s_numbers_with_the_tensor_cards(page):
    """The drag is the page's (tensor/recompute.js): the expansion's numbers are read from the
    same pass, so its output cards keep equal to the tensor cards' cells, asking nothing."""
    open_cell(page, "/?preset=tensor-mlp", "t1", "1,2")
    page.click(expand_button("t4"))  # X @ W
    page.wait_for_selector(DRAWN)
    asked: list[str] = []
    page.on("request", lambda request: "/api/" in request.url and asked.append(request.url))
    for value in (0.25, -0.75):
        drag_to(page, value)
        wait_cell(page, cell("t1", "data", "1,2"), repr(value))
        expect(page.locator("[data-testid=expand-graph] [data-label='W[1,2]']")).to_have_attribute(
            "data-data", repr(value)
        )
        trace = trace_tensors(MLP, {"W[1,2]": value})
        xw = trace.tensors[4]
        cards = cards_of(page)
        for k, element in enumerate(xw.elements):
            i, j = divmod(k, 3)
            out = cards[f"(X @ W)[{i},{j}]"]
            for grid in ("data", "grad"):
                assert out[grid] == page.get_attribute(cell("t4", grid, f"{i},{j}"), "data-value")
            assert out["data"] == repr(element.data)  # + and × alone: the engine's, to the bit
            assert close(out["grad"], element.grad)
    assert asked == []
    # Another program closes it.
    page.fill("[data-testid=source]", "A = randn(2, 2, seed=1)\nL = (A @ A).sum()")
    page.press("[data-testid=source]", "Control+Enter")
    expect(page.locator(PANEL)).to_be_hidden()


def test_without_the_page_s_numbers_the_expansion_asks_the_server_again(page):
    """A drag the page cannot compute (no scalar graph: here its request fails) asks the server
    for the tensors, and the expansion for its numbers: the same cards, the new numbers."""
    page.route("**/api/tensor-graph", lambda route: route.abort())
    page.goto("/?preset=tensor-mlp")
    page.wait_for_selector(TENSORS)
    page.click("#to-end")
    page.locator(cell("t1", "data", "1,2")).dispatch_event("click")
    page.locator("[data-testid=tensor-cell-editor]").wait_for(state="visible")
    page.wait_for_selector("[data-testid=tensor-graph][data-page-numbers=none]")
    page.click(expand_button("t4"))
    page.wait_for_selector(DRAWN)
    before = {c["id"] for c in page.evaluate(CARDS_JS)}
    asked: list[str] = []
    page.on("request", lambda request: "/api/expand" in request.url and asked.append(request.url))
    drag_to(page, 0.75)
    wait_cell(page, cell("t1", "data", "1,2"), "0.75")
    expect(page.locator("[data-testid=expand-graph] [data-label='W[1,2]']")).to_have_attribute(
        "data-data", "0.75"
    )
    assert asked
    cards = cards_of(page)
    assert {c["id"] for c in cards.values()} == before
    xw = trace_tensors(MLP, {"W[1,2]": 0.75}).tensors[4]
    for k, element in enumerate(xw.elements):
        i, j = divmod(k, 3)
        out = cards[f"(X @ W)[{i},{j}]"]
        for grid in ("data", "grad"):
            shown = page.get_attribute(cell("t4", grid, f"{i},{j}"), "data-value")
            assert out[grid] == shown and float(shown) == getattr(element, grid)


def test_the_three_languages_name_expand(page, screenshots_dir):
    for lang in ("en", "ru", "et"):
        words = catalogue(lang)
        for key in ("expand", "expand_label", "expand_title", "expand_close", "expand_hint",
                    "expand_needs_server", "expand_node", "expand_asking", "expand_dialog"):  # fmt: skip
            assert words[f"ui.tensor.{key}"], (lang, key)
    page.goto("/?preset=tensor-mlp&lang=ru")
    page.wait_for_selector(TENSORS)
    button = page.locator(expand_button("t4"))
    assert button.locator("text").text_content() == "Развернуть"
    assert button.get_attribute("aria-label") == "Развернуть X @ W в скалярный граф"
    page.screenshot(path=str(screenshots_dir / "tensor-expand-buttons-ru-1280x720.png"))


def test_the_one_file_html_says_expand_needs_the_server(
    file_page, live_server, tmp_path, screenshots_dir
):
    response = httpx.post(
        f"{live_server}/api/export", params={"format": "html"}, json={"source": MLP}, timeout=60
    )
    path = tmp_path / "tensor-mlp.html"
    path.write_text(response.text, encoding="utf-8")
    page = file_page
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] [data-testid=tensor-graph][data-ready=true]")
    page.click(expand_button("t4"))
    panel = page.locator(PANEL)
    expect(panel).to_have_attribute("data-error-type", "NoServer")
    assert page.text_content("[data-testid=expand-note]") == catalogue("en")[
        "ui.tensor.expand_needs_server"
    ].format(name="X @ W")
    assert not [url for url in page.requests if "/api/" in url]
    page.screenshot(path=str(screenshots_dir / "tensor-expand-onefile-1280x720.png"))
    assert json.dumps(page.errors) == "[]"
