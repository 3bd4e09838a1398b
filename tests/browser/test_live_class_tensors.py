"""A live class showing a tensor program (issue 43), in Chromium against the real server: the
teacher shows the issue's program, a student's page draws its tensor view and follows
the teacher's step and the teacher's cell values; as with a scalar program's sliders, a following
student changes nothing, and a free one changes cells on their own page only, until brought back
(live-class/apply.js)."""

from __future__ import annotations

import pytest
from tensor_cells import cell
from test_live_class_page import new_page, step_of, wait_state, wait_step

from chainrule.engine.presets import presets
from chainrule.engine.tensor_program import trace_tensors

pytestmark = pytest.mark.browser

TENSORS = "[data-testid=tensor-graph][data-ready=true]"
PROGRAM = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]


def wait_value(page, selector: str, value: str) -> None:
    page.wait_for_function(
        "([selector, value]) => document.querySelector(selector)?.dataset.value === value",
        arg=[selector, value],
    )


def wait_near(page, selector: str, value: float) -> None:
    """A number the page computed itself (a free student's cell change: tensor/recompute.js),
    the engine's within the page evaluator's tolerance (V8's tanh and exp may round the last
    bit otherwise)."""
    page.wait_for_function(
        "([selector, value]) => { const v = Number(document.querySelector(selector)?.dataset.value);"
        " return Math.abs(v - value) <= 1e-12 * Math.max(1, Math.abs(value)); }",
        arg=[selector, value],
    )


def set_cell(page, tensor: str, index: str, value: str) -> None:
    page.click(cell(tensor, "data", index))
    page.fill("[data-testid=tensor-cell-value]", value)
    page.press("[data-testid=tensor-cell-value]", "Enter")
    wait_value(page, cell(tensor, "data", index), value)


def test_a_student_follows_a_teacher_s_tensor_program(browser, live_server, screenshots_dir):
    teacher = new_page(browser, live_server)
    teacher.goto("/?preset=tensor-mlp")
    teacher.wait_for_selector(TENSORS)
    teacher.click("[data-testid=class-start]")
    code = teacher.locator("[data-testid=class-code]").inner_text()
    student = new_page(browser, live_server)
    student.goto(f"/c/{code}")
    wait_state(student, "following")
    student.wait_for_selector(TENSORS)
    teacher.click("[data-testid=class-join-close]")
    teacher.wait_for_selector("[data-testid=class-students][data-count='1']")
    assert student.evaluate("document.body.dataset.view") == "tensor"
    cards = "[...document.querySelectorAll('[data-testid=tensor]')].map(c => c.dataset.tensorId)"
    assert student.evaluate(cards) == teacher.evaluate(cards)

    # The teacher's steps: forward ops, then the backward pass.
    for _ in range(3):
        teacher.click("[data-testid=step-forward]")
    wait_step(teacher, 3)
    wait_step(student, 3)
    teacher.click("#to-end")
    last = step_of(teacher)
    wait_step(student, last)
    assert student.evaluate("document.body.dataset.phase") == "backward"
    # The student's own keys do not take it off the teacher's step.
    student.click(TENSORS, position={"x": 2, "y": 2})
    student.keyboard.press("Home")
    wait_step(student, last)

    # A cell the teacher changes: the student's tensors are the program's with it.
    set_cell(teacher, "t1", "1,2", "0.25")
    wait_value(student, cell("t1", "data", "1,2"), "0.25")
    expected = trace_tensors(PROGRAM, {"W[1,2]": 0.25})
    loss = repr(expected.root.elements[0].data)
    wait_value(student, cell(f"t{expected.root.id}", "data", ""), loss)
    w_grad = repr(expected.tensor("W").elements[0].grad)
    wait_value(student, cell("t1", "grad", "0,0"), w_grad)
    student.screenshot(path=str(screenshots_dir / "live-class-tensor-student-1280x720.png"))

    # Following, a student's page has no sidebar (no sliders, no cell editor), as for a scalar
    # program. Free, the page is the student's: a cell they change is theirs alone ...
    assert not student.locator("#tensor-cells").is_visible()
    teacher.click("[data-testid=class-free]")
    wait_state(student, "free")
    set_cell(student, "t0", "0,0", "5")
    assert teacher.get_attribute(cell("t0", "data", "0,0"), "data-value") == "1"
    mine = trace_tensors(PROGRAM, {"W[1,2]": 0.25, "X[0,0]": 5.0})
    wait_near(student, cell(f"t{mine.root.id}", "data", ""), mine.root.elements[0].data)
    # ... and brought back, the student is on the teacher's numbers and step again.
    teacher.click("[data-testid=class-gather]")
    wait_state(student, "following")
    wait_value(student, cell("t0", "data", "0,0"), "1")
    wait_value(student, cell("t1", "data", "1,2"), "0.25")
    wait_value(student, cell(f"t{expected.root.id}", "data", ""), loss)
    wait_step(student, last)

    teacher.click("[data-testid=class-end]")
    wait_state(student, "ended")
    assert teacher.errors == [] and student.errors == []
