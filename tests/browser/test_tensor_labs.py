"""The labs on a tensor program (issue 43): the predict lab asks for a cell of a gradient
(`dW[1,2]`) before the backward step brings it, holds the timeline until it is answered, and
checks a right and a wrong answer against the API's reply; the = lab lists, for a tensor read
by two ops, each op's part, their sum (the API's gradient) and what = would have left."""

from __future__ import annotations

import pytest
from tensor_cells import post

from chainrule.engine.presets import presets

pytestmark = pytest.mark.browser

TENSORS = "[data-testid=tensor-graph][data-ready=true]"
PRESETS = {p["id"]: p for p in presets()}


REUSED_JS = """() => [...document.querySelectorAll('[data-testid=tensor][data-reused=true]')]
    .map(c => c.dataset.tensorId)"""


def open_labs(page, preset: str) -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(TENSORS)
    page.click("#tab-labs")


def wait_step(page, step: int) -> None:
    page.wait_for_function("s => document.body.dataset.stepIndex === s", arg=str(step))


def visible_tabs(page) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('#panel-tabs [role=tab]')]"
        ".filter(t => !t.hidden).map(t => t.id)"
    )


def test_only_the_labs_tab_and_its_tensor_cards_show_on_a_tensor_program(page):
    open_labs(page, "tensor-mlp")
    assert visible_tabs(page) == ["tab-labs"]
    assert page.locator("[data-testid=lab-tensor-predict]").is_visible()
    assert page.locator("[data-testid=lab-tensor-overwrite]").is_visible()
    assert not page.locator("[data-testid=lab-overwrite]").is_visible()  # the scalar = lab
    # A scalar program: every tab again, the scalar cards and not the tensor ones.
    page.select_option("[data-testid=presets]", "add-mul")
    page.wait_for_selector("svg[data-testid=graph][data-ready=true]")
    page.wait_for_function("() => document.body.dataset.view === 'scalar'")
    assert len(visible_tabs(page)) > 1
    assert page.locator("[data-testid=lab-overwrite]").is_visible()
    assert not page.locator("[data-testid=lab-tensor-predict]").is_visible()


@pytest.mark.parametrize("right", [True, False], ids=["right", "wrong"])
def test_predict_a_cell_of_dW_before_the_backward_step_shows_it(
    page, live_server, screenshots_dir, right
):
    reply = post(live_server, "/api/graph", {"source": PRESETS["tensor-mlp"]["source"]})
    w = next(n for n in reply["nodes"] if n["name"] == "W")
    xw = next(n for n in reply["nodes"] if n["label"] == "X @ W")
    frame = next(
        k
        for k, s in enumerate(reply["steps"])
        if s["phase"] == "backward" and s["node"] == xw["id"]
    )
    truth = w["grad"][1][2]
    open_labs(page, "tensor-mlp")
    page.click("[data-testid=lab-tensor-predict]")
    prompt = page.locator("[data-testid=tensor-predict-prompt]")
    prompt.wait_for(state="visible")
    # W is the weight X @ W reads: its last cell is asked first.
    assert prompt.get_attribute("data-cell") == "dW[1,2]"
    assert prompt.get_attribute("data-frame") == str(frame)
    assert page.text_content("label[for=tensor-predict-input]") == "dW[1,2] ="
    # The timeline stops before the backward step of X @ W; W's gradient is not shown.
    page.click("#to-end")
    assert page.evaluate("document.body.dataset.stepIndex") == str(frame - 1)
    w_cell = (
        f"[data-testid=tensor-cell][data-tensor-id={w['id']}][data-grid=grad][data-index='1,2']"
    )
    assert page.get_attribute(w_cell, "data-value") == ""
    assert "Answer dW[1,2] first" in page.text_content("[data-testid=tensor-predict-status]")
    page.screenshot(path=str(screenshots_dir / "tensor-predict-asking-1280x720.png"))
    guess = f"{truth:.6f}" if right else "3"
    page.fill("[data-testid=tensor-predict-input]", guess)
    page.press("[data-testid=tensor-predict-input]", "Enter")
    feedback = page.locator("[data-testid=tensor-predict-feedback]")
    feedback.wait_for(state="visible")
    assert feedback.get_attribute("data-verdict") == ("right" if right else "wrong")
    assert float(feedback.get_attribute("data-truth")) == truth
    text = feedback.text_content()
    assert text.startswith("✓ Right: dW[1,2] = ") if right else text.startswith("✗ You said 3. ")
    # The backward step that brings it is shown, with the reply's number and its sum.
    wait_step(page, frame)
    assert float(page.get_attribute(w_cell, "data-value")) == truth
    fan = page.locator("[data-testid=fan-in]")
    fan.wait_for(state="visible")
    assert fan.get_attribute("data-cell") == "dW[1,2]"
    assert float(fan.get_attribute("data-sum")) == truth
    if right:
        feedback.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots_dir / "tensor-predict-answered-1280x720.png"))
    # Another cell is another question: the timeline goes back before its gradient arrives.
    page.select_option("[data-testid=tensor-predict-cell]", label="db[0]")
    wait_step(page, frame - 2)
    assert prompt.get_attribute("data-cell") == "db[0]"


def test_the_overwrite_lab_on_a_reused_tensor_shows_each_part_the_sum_and_what_is_lost(
    page, live_server, screenshots_dir
):
    reply = post(live_server, "/api/graph", {"source": PRESETS["tensor-softmax-ce"]["source"]})
    logits = next(n for n in reply["nodes"] if n["name"] == "logits")
    parts = [
        (s["node"], g["grad"])
        for s in reply["steps"]
        if s["phase"] == "backward"
        for g in s["grads"]
        if g["input"] == logits["id"]
    ]
    ops = {n["id"]: n["name"] for n in reply["nodes"]}
    assert [ops[op] for op, _ in parts] == ["p", "fused"]  # the hand-written chain's first
    open_labs(page, "tensor-softmax-ce")
    page.click("[data-testid=lab-tensor-overwrite]")
    block = page.locator("[data-testid=tensor-overwrite-tensor]")
    block.wait_for(state="visible")
    assert block.count() == 1  # logits is the one tensor two ops read
    assert block.get_attribute("data-tensor-id") == logits["id"]
    assert block.get_attribute("data-ops") == ",".join(op for op, _ in parts)
    assert "logits is read by 2 ops (p, fused)" in block.text_content()
    # On the graph, the one card whose gradient two ops add is marked.
    page.wait_for_selector("[data-testid=tensor][data-reused=true]")
    assert page.evaluate(REUSED_JS) == [logits["id"]]
    rows = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=tensor-overwrite-row]')]"
        ".map(r => ({...r.dataset}))"
    )
    assert [r["cell"] for r in rows] == [f"dlogits[{i},{j}]" for i in range(3) for j in range(3)]
    for row in rows:
        i, j = (int(x) for x in row["cell"][len("dlogits[") : -1].split(","))
        assert [float(x) for x in row["parts"].split(";")] == [g[i][j] for _, g in parts]
        assert float(row["sum"]) == logits["grad"][i][j]  # += : the API's gradient
        assert float(row["overwritten"]) == parts[-1][1][i][j]  # = : the last part alone
        assert abs(float(row["sum"]) - 2 * float(row["overwritten"])) < 1e-12
    page.locator("[data-testid=tensor-overwrite-result]").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / "tensor-overwrite-1280x720.png"))
    page.click("#to-end")  # the graph with every gradient, the marked card among them
    page.locator(
        f"[data-testid=tensor][data-tensor-id={logits['id']}]"
    ).scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / "tensor-overwrite-graph-1280x720.png"))
    page.click("[data-testid=lab-tensor-overwrite]")  # off: the mark goes
    page.wait_for_function("() => !document.querySelector('[data-testid=tensor][data-reused]')")
    page.click("[data-testid=lab-tensor-overwrite]")
    # A program where no tensor is read twice: = and += agree, said so.
    page.select_option("[data-testid=presets]", "tensor-matmul")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=tensor-overwrite-result]').textContent"
        ".includes('No tensor here is read by two ops')"
    )
