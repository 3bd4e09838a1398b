"""A tensor program on the page (issue 43, the page's first slice): its tensors as cards with
their shapes and grids, the transport stepping its timeline with the rules in the narration, a
gradient cell's fan-in (POST /api/fan-in) lit and summed, a leaf cell changed and recomputed, a
shape error pointed at. Every number is asserted against the API's reply."""

from __future__ import annotations

import math

import pytest
from tensor_cells import cell, post

from chainrule.bench.tensors import makemore
from chainrule.engine.presets import presets

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
TENSORS = "[data-testid=tensor-graph][data-ready=true]"
PROGRAM = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]
CARDS_JS = """() => [...document.querySelectorAll('[data-testid=tensor]')].map(c => ({
    id: c.dataset.tensorId, name: c.dataset.name, label: c.dataset.label, shape: c.dataset.shape,
    reached: c.dataset.reached, computed: c.dataset.computed, cls: c.getAttribute('class')}))"""


def open_program(page, source: str) -> None:
    page.goto("/")
    page.wait_for_selector(READY)
    page.fill("[data-testid=source]", source)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_selector(TENSORS)


def wait_value(page, selector: str, value: str) -> None:
    page.wait_for_function(
        "([selector, value]) => document.querySelector(selector)?.dataset.value === value",
        arg=[selector, value],
    )


def step_to(page, phase: str, node: str) -> None:
    """Step forward until the step shown is `phase` at tensor `node` (its card current)."""
    for _ in range(40):
        current = page.locator("[data-testid=tensor].current").get_attribute("data-tensor-id")
        if page.evaluate("document.body.dataset.phase") == phase and current == node:
            return
        page.click("[data-testid=step-forward]")
    raise AssertionError(f"no {phase} step at {node}")


def test_the_example_opens_with_its_shapes_and_steps_its_rules(page, live_server, screenshots_dir):
    reply = post(live_server, "/api/graph", {"source": PROGRAM})
    page.goto("/?preset=tensor-mlp")  # the preset menu's tensor program
    page.wait_for_selector(TENSORS)
    cards = {c["id"]: c for c in page.evaluate(CARDS_JS)}
    assert {i: c["shape"] for i, c in cards.items()} == {
        n["id"]: ",".join(map(str, n["shape"])) for n in reply["nodes"]
    }
    assert (
        page.locator("[data-testid=tensor][data-tensor-id=t1] .tensor-shape").text_content()
        == "2×3"
    )
    # Step 0 is X @ W's forward step: its numbers are the API's, to the last digit.
    assert page.evaluate("document.body.dataset.phase") == "forward"
    xw = next(n for n in reply["nodes"] if n["label"] == "X @ W")
    assert page.get_attribute(cell(xw["id"], "data", "1,2"), "data-value") == repr(xw["data"][1][2])
    assert "X @ W" in page.text_content("[data-testid=narration]")
    # The card under the pointer lights its expression in the editor.
    page.hover(f"[data-testid=tensor][data-tensor-id={xw['id']}] .tensor-label")
    page.wait_for_selector(".backdrop mark.hover-mark")
    assert page.text_content(".backdrop mark.hover-mark") == "X @ W"
    # Nothing has a gradient before the backward pass.
    assert all(c["reached"] == "false" for c in cards.values())
    page.screenshot(path=str(screenshots_dir / "tensor-forward-1280x720.png"))

    # The backward step of X @ W + b: b was broadcast over the rows, its rule sums them back.
    xwb = next(n for n in reply["nodes"] if n["label"] == "X @ W + b")
    step_to(page, "backward", xwb["id"])
    assert "db = d(X @ W + b).sum(0)  # broadcast over dim 0: summed back" in page.text_content(
        "[data-testid=narration]"
    )
    # The backward step of X @ W: the rule that made dW, and dW's numbers arrive.
    step_to(page, "backward", xw["id"])
    narration = page.text_content("[data-testid=narration]")
    assert "dW = X.T @ d(X @ W)" in narration and "dX = d(X @ W) @ W.T" in narration
    w = next(n for n in reply["nodes"] if n["name"] == "W")
    assert "arriving" in page.get_attribute(
        f"[data-testid=tensor][data-tensor-id={w['id']}]", "class"
    )
    assert page.get_attribute(cell(w["id"], "grad", "1,2"), "data-value") == repr(w["grad"][1][2])
    page.screenshot(path=str(screenshots_dir / "tensor-backward-matmul-1280x720.png"))

    # The Backward switch jumps to the backward pass's first op (as in a scalar program), the
    # step before it is the seed.
    page.click("[data-testid=jump-backward]")
    first = next(i for i, step in enumerate(reply["steps"]) if step["phase"] == "backward")
    assert page.evaluate("document.body.dataset.stepIndex") == str(first)
    assert page.text_content("[data-testid=narration]").startswith("Back through loss: d(h @ W2) =")
    page.click("[data-testid=step-back]")
    assert page.text_content("[data-testid=narration]") == (
        "Seed: dloss = 1, the backward pass starts at loss."
    )
    # Play runs the timeline from the start to its end.
    page.click("#to-start")
    page.select_option("#speed", "16")
    page.click("[data-testid=play]")
    last = str(len(reply["steps"]) - 1)
    page.wait_for_function("last => document.body.dataset.stepIndex === last", arg=last)
    assert page.locator("[data-testid=step-forward]").is_disabled()


def test_a_gradient_cell_lights_its_fan_in_and_sums_to_the_grad(page, live_server, screenshots_dir):
    open_program(page, PROGRAM)
    page.click("#to-end")
    reply = post(live_server, "/api/graph", {"source": PROGRAM})
    w = next(n for n in reply["nodes"] if n["name"] == "W")
    xw = next(n for n in reply["nodes"] if n["label"] == "X @ W")
    page.click(cell(w["id"], "grad", "1,2"))
    fan = page.locator("[data-testid=fan-in]")
    fan.wait_for(state="visible")
    sentence = page.text_content("[data-testid=fan-in-sentence]")
    assert sentence.startswith("dW[1,2] = Σᵢ X[i,1]·d(X @ W)[i,2] = ")
    shown = float(page.get_attribute(cell(w["id"], "grad", "1,2"), "data-value"))
    assert float(fan.get_attribute("data-sum")) == shown == w["grad"][1][2]
    assert fan.get_attribute("data-terms") == "3"
    # Its cells: the three d(X @ W)[i,2] and the three X[i,1].
    lit = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=tensor-cell][class*=lit-]')]
        .map(c => `${c.dataset.tensorId}|${c.dataset.grid}|${c.dataset.index}|${c.getAttribute('class').match(/lit-\\w+/)[0]}`)"""
    )
    x = next(n for n in reply["nodes"] if n["name"] == "X")
    assert sorted(lit) == sorted(
        [f"{w['id']}|grad|1,2|lit-target"]
        + [f"{xw['id']}|grad|{i},2|lit-upstream" for i in range(3)]
        + [f"{x['id']}|data|{i},1|lit-local" for i in range(3)]
    )
    page.screenshot(path=str(screenshots_dir / "tensor-fan-in-matmul-1280x720.png"))

    # b was broadcast over the rows of X @ W: its gradient is their sum.
    b = next(n for n in reply["nodes"] if n["name"] == "b")
    page.click(cell(b["id"], "grad", "1"))
    page.wait_for_function(
        "() => document.querySelector('[data-testid=fan-in]').dataset.cell === 'db[1]'"
    )
    sentence = page.text_content("[data-testid=fan-in-sentence]")
    assert sentence.startswith("db[1] = Σᵢ d(X @ W + b)[i,1] = ")
    assert float(fan.get_attribute("data-sum")) == b["grad"][1]
    assert fan.get_attribute("data-terms") == "3"
    assert math.isclose(
        b["grad"][1],
        sum(
            next(n for n in reply["nodes"] if n["label"] == "X @ W + b")["grad"][i][1]
            for i in range(3)
        ),
    )
    page.screenshot(path=str(screenshots_dir / "tensor-fan-in-broadcast-1280x720.png"))
    # The keyboard reaches a gradient's cell, and Enter opens its sum.
    page.focus(cell(w["id"], "grad", "0,0"))
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=fan-in]').dataset.cell === 'dW[0,0]'"
    )
    assert page.get_attribute(cell(w["id"], "grad", "0,0"), "role") == "button"
    # Inside cross entropy the upstream is no card's gradient: the terms say where they came from.
    logits = next(n for n in reply["nodes"] if n["label"] == "h @ W2")
    page.click(cell(logits["id"], "grad", "0,0"))
    page.wait_for_function(
        "() => document.querySelector('[data-testid=fan-in]').dataset.cell === 'd(h @ W2)[0,0]'"
    )
    sentence = page.text_content("[data-testid=fan-in-sentence]")
    assert sentence.startswith("d(h @ W2)[0,0] = ") and "(via loss)" in sentence
    assert float(fan.get_attribute("data-sum")) == logits["grad"][0][0]
    page.click(cell(reply["root"], "grad", ""))
    page.wait_for_function(
        "() => document.querySelector('[data-testid=fan-in]').dataset.cell === 'dloss'"
    )
    assert page.text_content("[data-testid=fan-in-sentence]").startswith("dloss = 1, the seed")
    page.click(cell(b["id"], "grad", "1"))
    page.wait_for_function(
        "() => document.querySelector('[data-testid=fan-in]').dataset.cell === 'db[1]'"
    )
    # Before the backward pass reaches db its sum is not shown; back at the end it is.
    page.click("#to-start")
    fan.wait_for(state="hidden")
    page.click("#to-end")
    fan.wait_for(state="visible")


def test_makemore_s_mlp_opens_as_colour_grids_and_its_cells_open_their_sums(
    page, live_server, screenshots_dir
):
    """makemore's MLP at batch 32 (17,669 elements): grids past 6×6 are colours, each cell
    still holding its number and opening its fan-in."""
    source = makemore(1)
    reply = post(live_server, "/api/graph", {"source": source})
    page.set_default_timeout(30_000)
    open_program(page, source)
    cards = {c["id"]: c for c in page.evaluate(CARDS_JS)}
    assert {i: c["shape"] for i, c in cards.items()} == {
        n["id"]: ",".join(map(str, n["shape"])) for n in reply["nodes"]
    }
    w1 = next(n for n in reply["nodes"] if n["name"] == "W1")
    assert page.locator(f"[data-tensor-id={w1['id']}] .tensor-shape").text_content() == "30×64"
    # A colour grid: no numbers drawn, every cell its number in data-value.
    assert page.locator(f"[data-testid=tensor][data-tensor-id={w1['id']}] .cell-text").count() == 0
    assert page.get_attribute(cell(w1["id"], "data", "29,63"), "data-value") == repr(
        w1["data"][29][63]
    )
    page.click("#to-end")
    page.wait_for_function("() => document.body.dataset.phase === 'backward'")
    page.screenshot(path=str(screenshots_dir / "tensor-makemore-1280x720.png"))
    target = cell(w1["id"], "grad", "1,2")
    assert page.get_attribute(target, "data-value") == repr(w1["grad"][1][2])
    # A colour cell under the pointer: its name and number in the readout. A colour grid is
    # a canvas under one box that takes the pointer (tensor/draw.js): the pointer at the cell.
    grid = page.locator(f"[data-testid=tensor][data-tensor-id={w1['id']}] .grid-hit").first
    box = grid.bounding_box()
    grid.hover(position={"x": box["width"] * 30.5 / 64, "y": box["height"] * 15.5 / 30})
    readout = page.locator("[data-testid=tensor-readout]")
    readout.wait_for(state="visible")
    assert readout.text_content().startswith("W1[15,30] = ")
    page.locator(target).dispatch_event("click")  # a 2-unit cell: its click, wherever it is
    fan = page.locator("[data-testid=fan-in]")
    fan.wait_for(state="visible")
    assert fan.get_attribute("data-cell") == "dW1[1,2]"
    assert float(fan.get_attribute("data-sum")) == w1["grad"][1][2]


def test_a_leaf_cell_edit_recomputes(page, live_server, screenshots_dir):
    open_program(page, PROGRAM)
    page.click("#to-end")
    w = "t1"
    page.click(cell(w, "data", "1,2"))
    editor = page.locator("[data-testid=tensor-cell-editor]")
    editor.wait_for(state="visible")
    assert editor.get_attribute("data-cell") == "W[1,2]"
    page.fill("[data-testid=tensor-cell-value]", "0.25")
    page.press("[data-testid=tensor-cell-value]", "Enter")
    wait_value(page, cell(w, "data", "1,2"), "0.25")
    expected = post(live_server, "/api/graph", {"source": PROGRAM, "values": {"W[1,2]": 0.25}})
    loss = next(n for n in expected["nodes"] if n["id"] == expected["root"])
    assert page.get_attribute(cell(loss["id"], "data", ""), "data-value") == repr(loss["data"])
    grad = next(n for n in expected["nodes"] if n["id"] == w)["grad"]
    wait_value(page, cell(w, "grad", "0,0"), repr(grad[0][0]))
    # The step stays at the end of the timeline.
    assert page.evaluate("document.body.dataset.phase") == "backward"
    page.screenshot(path=str(screenshots_dir / "tensor-cell-edit-1280x720.png"))

    # The link reopens the program with its element's value, at the same step.
    page.wait_for_function("() => location.search.includes('values=')")
    link = page.evaluate("location.pathname + location.search")
    assert "W%5B1%2C2%5D%3A0.25" in link
    step = page.evaluate("document.body.dataset.stepIndex")
    page.goto(link)
    page.wait_for_selector(TENSORS)
    wait_value(page, cell(w, "data", "1,2"), "0.25")
    assert page.evaluate("document.body.dataset.stepIndex") == step


def test_a_shape_error_points_at_the_operator(page, screenshots_dir):
    open_program(page, PROGRAM)
    page.fill(
        "[data-testid=source]",
        "A = randn(3, 2, seed=1)\nB = randn(3, 3, seed=2)\nL = (A @ B).sum()",
    )
    page.press("[data-testid=source]", "Control+Enter")
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    text = error.text_content()
    assert "`(3, 2) @ (3, 3)`: inner sizes 2 and 3 differ" in text
    assert "line 3, column 8" in text
    # The caret under the `@`, as a scalar program's error has it.
    snippet = page.text_content("[data-testid=error] .error-snippet")
    assert snippet.splitlines() == ["L = (A @ B).sum()", "       ^"]
    page.screenshot(path=str(screenshots_dir / "tensor-shape-error-1280x720.png"))


def test_a_scalar_program_after_a_tensor_one_is_drawn_as_before(page):
    open_program(page, PROGRAM)
    page.fill("[data-testid=source]", "a = 2\nb = -3\nc = a * b")
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length === 3")
    assert page.evaluate("document.body.dataset.view") == "scalar"
    assert page.locator("#tensor-pane").is_hidden()


VALUES_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=tensor-cell]')]
    .map(c => [`${c.dataset.tensorId}|${c.dataset.grid}|${c.dataset.index}`, c.dataset.value]))"""


def test_stepping_back_restores_each_frame_and_final_gradients_show_at_once(page, live_server):
    reply = post(live_server, "/api/graph", {"source": PROGRAM})
    page.goto("/?preset=tensor-mlp")
    page.wait_for_selector(TENSORS)
    frames = []
    for _ in range(len(reply["steps"])):
        frames.append(page.evaluate(VALUES_JS))
        if page.locator("[data-testid=step-forward]").is_disabled():
            break
        page.click("[data-testid=step-forward]")
    for expected in reversed(frames[:-1]):
        page.click("[data-testid=step-back]")
        assert page.evaluate(VALUES_JS) == expected
    # At the first step no gradient shows; with "final gradients" every one does, the API's.
    assert all(v == "" for k, v in frames[0].items() if "|grad|" in k)
    page.check("#toggle-final-grads")
    w = next(n for n in reply["nodes"] if n["name"] == "W")
    wait_value(page, cell(w["id"], "grad", "1,2"), repr(w["grad"][1][2]))


def test_a_reused_tensor_adds_what_each_op_passes_it(page, live_server, screenshots_dir):
    source = (
        "X = tensor([[1.0, 2.0], [3.0, 4.0]])\n"
        "W = tensor([[0.5, -1.0], [2.0, 0.25]])\n"
        "L = ((X @ W) * W).sum()"
    )
    reply = post(live_server, "/api/graph", {"source": source})
    open_program(page, source)
    w = next(n for n in reply["nodes"] if n["name"] == "W")
    times = next(n for n in reply["nodes"] if n["op"] == "*")
    matmul = next(n for n in reply["nodes"] if n["op"] == "@")
    passed = {
        step["node"]: next(g["grad"] for g in step["grads"] if g["input"] == w["id"])
        for step in reply["steps"]
        if step["phase"] == "backward" and any(g["input"] == w["id"] for g in step["grads"] or [])
    }
    # After `*` passes its part, W's gradient is that part; after `@`, the sum of both.
    step_to(page, "backward", times["id"])
    assert page.get_attribute(cell(w["id"], "grad", "0,1"), "data-value") == repr(
        passed[times["id"]][0][1]
    )
    step_to(page, "backward", matmul["id"])
    assert page.get_attribute(cell(w["id"], "grad", "0,1"), "data-value") == repr(w["grad"][0][1])
    assert w["grad"][0][1] == passed[times["id"]][0][1] + passed[matmul["id"]][0][1]
    # Its fan-in: the terms of both ops, summing to the gradient shown.
    page.click(cell(w["id"], "grad", "0,1"))
    fan = page.locator("[data-testid=fan-in]")
    fan.wait_for(state="visible")
    assert fan.get_attribute("data-terms") == "3"
    assert float(fan.get_attribute("data-sum")) == w["grad"][0][1]
    sentence = page.text_content("[data-testid=fan-in-sentence]")
    assert sentence.startswith("dW[0,1] = d((X @ W) * W)[0,1]·(−0.5) + X[1,0]·d(X @ W)[1,1]")
    assert sentence.endswith("= −0.75")
    readout = page.locator("[data-testid=tensor-readout]")
    assert readout.text_content() == "dW[0,1] = −0.75"  # the cell under the pointer
    page.screenshot(path=str(screenshots_dir / "tensor-fan-in-reused-1280x720.png"))


def test_a_tensor_program_picked_in_the_3d_view_is_drawn_alone(page, screenshots_dir):
    """The 3D view and the groups' tools read a scalar trace: picked while the 3D view is on,
    the tensor preset shows its cards with neither the last scalar graph's 3D drawing nor its
    tools over them; the next scalar preset brings the 3D view back."""
    page.goto("/?preset=diamond&3d=1")
    page.wait_for_selector("[data-testid=graph-3d][data-nodes]")
    page.select_option("[data-testid=presets]", "tensor-mlp")
    page.wait_for_selector(TENSORS)
    assert page.locator("[data-testid=graph-3d]").is_hidden()
    assert page.locator(".group-tools").is_hidden()
    page.screenshot(path=str(screenshots_dir / "tensor-after-3d-1280x720.png"))
    page.select_option("[data-testid=presets]", "diamond")
    page.wait_for_selector("[data-testid=graph-3d][data-nodes='6']")
    assert page.locator("[data-testid=graph-3d]").is_visible()
