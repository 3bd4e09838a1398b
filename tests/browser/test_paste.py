"""Paste what learners paste (issue 22), in the page: a lecture cell pasted into the editor as it
was copied (CRLF line ends, `>>> ` prompts) shows its labels on the cards and Python's gradients;
"Copy as PyTorch" pasted back is the same graph, and runs (on the tests' scalar stand-in for
PyTorch) to the same gradients."""

from __future__ import annotations

import builtins
import contextlib
import io
import math

import pytest
from lecture_cells import CELLS, Value, _import, run
from test_micrograd_roundtrip import EDGES, assert_printed_grads, paste_back, script_js

from chainrule import engine

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
NEURON = next(cell for cell in CELLS if cell.id == "first-half-cells-13-15")


def paste(page, text: str) -> None:
    """Put `text` in the editor as a paste does: the whole text at once, by the input event."""
    page.locator("[data-testid=source]").focus()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)


def to_the_end(page) -> None:
    last = page.get_attribute("[data-testid=scrub]", "max")
    page.locator("[data-testid=scrub]").fill(last)
    page.wait_for_function(f"() => document.body.dataset.stepIndex === '{last}'")


def test_a_lecture_cell_pasted_with_crlf_and_prompts_shows_its_labels(page, screenshots_dir):
    page.goto("/")
    page.wait_for_selector(READY)
    session = "\r\n".join(f">>> {line}" for line in NEURON.source.split("\n")) + "\r\n"
    paste(page, session)
    page.wait_for_selector("[data-testid=node][data-label='x1*w1 + x2*w2']")
    page.wait_for_selector(READY)
    to_the_end(page)
    cards = page.eval_on_selector_all(
        "[data-testid=node]",
        "cards => cards.map((g) => [g.dataset.label, g.dataset.name, g.dataset.data, g.dataset.grad])",
    )
    root, _ = run(NEURON)
    python = {value.label: value for value in root.nodes()}
    assert sorted(label for label, *_ in cards) == sorted(python)
    for label, _, data, grad in cards:
        assert math.isclose(float(data), python[label].data, rel_tol=1e-12), label
        assert math.isclose(float(grad), python[label].grad, rel_tol=1e-12, abs_tol=1e-15), label
    assert ("x1*w1", "x1w1") in {(label, name) for label, name, *_ in cards}
    # The card's text is the label, set as text.
    shown = page.locator(
        "[data-testid=node][data-label='x1*w1 + x2*w2'] .label-name"
    ).text_content()
    assert shown.startswith("x1*w1")
    notes = page.eval_on_selector_all(
        "[data-testid=program-notes] li",
        "items => items.map((li) => [li.dataset.type, li.dataset.line])",
    )
    said = [[w["type"], str(w["line"])] for w in engine.trace(session).warnings]
    assert notes == said and [kind for kind, _ in said] == ["pasted", "skipped"]  # >>>, draw_dot
    assert page.locator("[data-testid=slider-x1] .slider-name").text_content() == "x1"
    page.screenshot(path=str(screenshots_dir / "lecture-neuron.png"))


def test_a_unicode_label_names_the_card_and_the_slider_as_text(page):
    page.goto("/")
    page.wait_for_selector(READY)
    paste(page, "k = Value(0.5, label='<b>κ</b>')\nm = k * 2; m.label = 'двойное & \"κ\"'")
    page.wait_for_selector("[data-testid=node][data-label='<b>κ</b>']")
    assert page.locator("[data-testid=slider-k] .slider-name").text_content() == "<b>κ</b>"
    assert (
        page.locator("[data-testid=slider-k] .slider-range")
        .get_attribute("aria-label")
        .startswith("<b>κ</b>")
    )
    assert page.locator("svg b").count() == 0  # text, never markup
    assert (
        page.locator("[data-testid=node][data-name=m]").get_attribute("data-label")
        == 'двойное & "κ"'
    )


SCRIPT_JS = script_js("io/pytorch.js", "pytorchScript")


def shape(trace: dict) -> list:
    """The graph as data, whatever the display labels: each node's kind, op, the program's name
    (the script names an unnamed result `result`) and inputs, its numbers to 12 digits."""
    return [
        (n["kind"], n["op"], n["exponent"],
         "(result)" if n["id"] == trace["root"] else n["name"] if n["kind"] != "const" else n["label"],
         n["inputs"], f"{n['data']:.12g}", f"{n['grad']:.12g}")
        for n in trace["nodes"]
    ]  # fmt: skip


def run_pytorch(script: str) -> str:
    """What a PyTorch script prints, run as Python does on the tests' scalar stand-in for
    PyTorch (no torch is installed here)."""
    printed = io.StringIO()
    scope = {"__builtins__": {**vars(builtins), "__import__": _import}}
    Value.made = []
    with contextlib.redirect_stdout(printed):
        exec(compile(script, "torch.py", "exec"), scope)
    return printed.getvalue()


BODIES = (
    [{"source": p["source"], "values": p["values"]} for p in engine.PRESETS]
    + EDGES
    + [{"source": cell.source} for cell in CELLS]
)
BODY_IDS = (
    [p["id"] for p in engine.PRESETS]
    + [f"edge {i}" for i in range(len(EDGES))]
    + [cell.id for cell in CELLS]
)


@pytest.mark.parametrize("body", BODIES, ids=BODY_IDS)
def test_the_pytorch_script_pasted_back_is_the_same_graph(app_page, live_server, body):
    script, original, pasted = paste_back(app_page, live_server, body, SCRIPT_JS)
    assert shape(pasted) == shape(original)
    # A leaf whose name the program assigns again is gone by then: its gradient is not printed.
    assert_printed_grads(original, run_pytorch(script), every_leaf=False)


def test_copy_as_pytorch_is_in_the_export_menu_beside_copy_as_micrograd(page):
    page.goto("/")
    page.wait_for_selector(READY)
    paste(page, NEURON.source)
    page.wait_for_selector("[data-testid=node][data-label='x1*w1']")
    page.click("#export-button")
    page.click("[data-testid=copy-pytorch]")
    text = page.locator("[data-testid=pytorch-dialog-text]").input_value()
    assert "x1w1 = x1 * w1  # x1*w1" in text and "o = torch.tanh(n)" in text
    assert "x1 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)" in text
    page.keyboard.press("Escape")
    page.click("[data-testid=copy-micrograd]")
    text = page.locator("[data-testid=micrograd-dialog-text]").input_value()
    assert "x1w1 = x1 * w1\nx1w1.label = 'x1*w1'" in text


TENSOR_PROGRAM = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
W2 = randn(3, 3, seed=1)
h = tanh(X @ W + b)
loss = cross_entropy(h @ W2, tensor([2, 0, 1]))"""


def test_copy_as_pytorch_of_a_tensor_program_is_its_program_with_the_numbers_shown(
    page, screenshots_dir
):
    """Issue 43: the page copies the tensor program as PyTorch, its tensors written out with the
    numbers it shows (a cell changed on the page: that number), float64, the leaves with
    requires_grad; read back by chainrule it is the same program with the same numbers and
    gradients (tests/engine/test_tensor_pytorch.py runs such scripts on a NumPy stand-in)."""
    from chainrule.engine.tensor_program import trace_tensors

    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto("/")
    page.wait_for_selector(READY)
    page.fill("[data-testid=source]", TENSOR_PROGRAM)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_selector("[data-testid=tensor-graph][data-ready=true]")
    # A leaf's cell changed on the page: the script holds that number.
    w = "[data-testid=tensor-cell][data-tensor-id=t1][data-grid=data][data-index='1,2']"
    page.click(w)
    page.fill("[data-testid=tensor-cell-value]", "0.25")
    page.press("[data-testid=tensor-cell-value]", "Enter")
    page.wait_for_function(f"() => document.querySelector(\"{w}\").dataset.value === '0.25'")
    page.click("#export-button")
    page.click("[data-testid=copy-pytorch]")
    dialog = page.locator("[data-testid=pytorch-dialog-text]")
    dialog.wait_for(state="visible")
    text = dialog.input_value()
    page.screenshot(path=str(screenshots_dir / "tensor-copy-pytorch-1280x720.png"))
    assert text.startswith("# chainrule: this tensor program as a PyTorch script")
    assert "from torch import tanh\nfrom torch.nn.functional import cross_entropy\n" in text
    assert (
        "W = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.0, 0.25]], dtype=torch.float64, "
        "requires_grad=True)\n" in text
    )
    assert "h = tanh(X @ W + b)\nloss = cross_entropy(h @ W2, torch.tensor([2, 0, 1]))\n" in text
    assert 'loss.backward()\nprint("loss =", loss.item())\n' in text
    original = trace_tensors(TENSOR_PROGRAM, {"W[1,2]": 0.25})
    pasted = trace_tensors(text)
    for name in ("X", "W", "b", "W2", "h", "loss"):
        mine, theirs = original.tensor(name), pasted.tensor(name)
        assert [v.data for v in theirs.elements] == [v.data for v in mine.elements], name
        assert [v.grad for v in theirs.elements] == [v.grad for v in mine.elements], name
