"""A live class showing a tensor program (issue 43), in Chromium against the real server: the
teacher shows the issue's program, a student's page draws its tensor view and follows
the teacher's step and the teacher's cell values; as with a scalar program's sliders, a following
student changes nothing, and a free one changes cells on their own page only, until brought back
(live-class/apply.js). The teacher asks the class for a cell of a gradient tensor (`dW[1,2]`)
before the pulse brings it, and the board names the mistakes (app/live_class/questions.py)."""

from __future__ import annotations

import pytest
from tensor_cells import cell
from test_live_class_page import new_page, step_of, wait_state, wait_step

from chainrule.engine.presets import presets
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reply import tensor_reply

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


# A teacher's socket of its own (the page's token): a question the page's menu never offers.
ASK_RAW = """async ([code, ask]) => {
    const { token } = JSON.parse(sessionStorage.getItem('chainrule.class.teacher'));
    const url = new URL(`/api/class/${code}/live`, location.href);
    url.protocol = 'ws:';
    const socket = new WebSocket(url);
    await new Promise((done) => socket.addEventListener('open', done));
    socket.send(JSON.stringify({type: 'hello', role: 'teacher', token}));
    const error = await new Promise((done) => socket.addEventListener('message', (event) => {
        const message = JSON.parse(event.data);
        if (message.type === 'welcome') socket.send(JSON.stringify(ask));
        if (message.type === 'error') done(message.error);
    }));
    socket.close();
    return error;
}"""


def test_the_class_predicts_a_cell_of_a_gradient_tensor(browser, live_server, screenshots_dir):
    trace = trace_tensors(PROGRAM)
    truth = trace.tensor("W").elements[1 * 3 + 2].grad  # dW[1,2]
    steps = tensor_reply(trace)["steps"]
    # The step where `@` passes W its gradient: the class waits on the one before it.
    brings = next(i for i, s in enumerate(steps) if "t1" in [g["input"] for g in s["grads"] or []])

    teacher = new_page(browser, live_server)
    teacher.goto("/?preset=tensor-mlp")
    teacher.wait_for_selector(TENSORS)
    teacher.click("[data-testid=class-start]")
    code = teacher.locator("[data-testid=class-code]").inner_text()
    students = [new_page(browser, live_server), new_page(browser, live_server, 390, 844)]
    for student, path in zip(students, [f"/c/{code}", f"/c/{code}?lang=ru"], strict=True):
        student.goto(path)
        wait_state(student, "following")
        student.wait_for_selector(TENSORS)
    teacher.click("[data-testid=class-join-close]")
    teacher.wait_for_selector("[data-testid=class-students][data-count='2']")

    # Composing the question: a click on W's gradient cell [1,2] (empty: the pulse has not
    # brought it) chooses it in the Ask menu, among the cells of each tensor's group.
    what = "[data-testid=class-ask-what]"
    teacher.click(cell("t1", "grad", "1,2"))
    assert teacher.input_value(what) == "grad:t1:1,2"
    teacher.wait_for_selector(cell("t1", "grad", "1,2") + "[data-class-ask]")  # ringed
    group = teacher.locator(f"{what} option[value='grad:t1:1,2']").evaluate(
        "o => o.parentElement.label"
    )
    assert group == "dW \u00b7 2\u00d73"
    assert teacher.locator(f"{what} option:checked").inner_text() == "dW[1,2]"
    # An op's values not computed yet can be asked too: h's, in h's group.
    h = teacher.locator(f"{what} option[value='data:t6:0,2']")
    assert (
        h.inner_text() == "h[0,2]"
        and h.evaluate("o => o.parentElement.label") == "h \u00b7 3\u00d73"
    )
    teacher.screenshot(path=str(screenshots_dir / "live-class-tensor-ask-1280x720.png"))
    teacher.click("[data-testid=class-ask]")
    for student in students:
        student.wait_for_selector("[data-testid=class-question][data-open=true]")
    assert students[0].locator("label.class-prompt").inner_text() == "Predict dW[1,2] ="
    hints = [s.locator("[data-testid=class-cell-hint]").inner_text() for s in students]
    assert hints == [
        "dW[1,2] = \u2202loss/\u2202W[1,2]: how fast loss changes as W[1,2] alone changes.",
        "dW[1,2] = \u2202loss/\u2202W[1,2]: как быстро меняется loss, когда меняется только W[1,2].",
    ]

    students[1].screenshot(path=str(screenshots_dir / "live-class-tensor-question-phone.png"))

    # The teacher plays the whole pass; the class waits before the pulse reaches dW.
    teacher.click("#to-end")
    wait_value(teacher, cell("t1", "grad", "1,2"), repr(truth))
    for student in students:
        wait_step(student, brings - 1)
        assert student.get_attribute(cell("t1", "grad", "1,2"), "data-value") == ""
    for student, answer in zip(students, [truth, -truth], strict=True):
        student.fill("[data-testid=class-answer]", repr(answer).replace("-", "\u2212"))
        student.click("[data-testid=class-answer-send]")
        student.wait_for_selector("[data-testid=class-answer-status][data-acked=true]")
    teacher.wait_for_selector("[data-testid=class-answers][data-count='2']")

    teacher.click("[data-testid=class-reveal]")
    board = teacher.locator("#class-board-dialog [data-testid=class-board]")
    board.wait_for()
    assert board.get_attribute("data-total") == "2" and board.get_attribute("data-right") == "1"
    bars = board.locator(".board-bar")
    shown = {
        (bars.nth(i).get_attribute("data-value"), bars.nth(i).get_attribute("data-right"),
         bars.nth(i).get_attribute("data-diagnosis"), bars.nth(i).get_attribute("data-count"))
        for i in range(bars.count())
    }  # fmt: skip
    assert shown == {(repr(truth), "true", "", "1"), (repr(-truth), "false", "sign", "1")}
    assert "wrong sign: 1" in board.locator("[data-testid=class-mistakes]").inner_text()
    assert board.locator(".class-board-title").inner_text().startswith("dW[1,2] = ")
    teacher.screenshot(path=str(screenshots_dir / "live-class-tensor-board-1280x720.png"))

    verdicts = [s.locator("[data-testid=class-verdict]") for s in students]
    for verdict, expected in zip(verdicts, ["right", "wrong"], strict=True):
        verdict.wait_for()
        assert verdict.get_attribute("data-verdict") == expected
    assert "не тот знак" in verdicts[1].inner_text()  # the phone reads Russian
    # Revealed: the class moves on to the teacher's step, dW shown.
    for student in students:
        wait_step(student, step_of(teacher))
        wait_value(student, cell("t1", "grad", "1,2"), repr(truth))

    # A cell outside W's shape is refused, in the teacher's words, and asks nothing.
    bad = {"type": "ask", "kind": "grad", "tensor": "W", "index": [2, 0], "label": "dW[2,0]"}
    assert teacher.evaluate(ASK_RAW, [code.replace("-", ""), bad]) == {
        "type": "BadQuestion",
        "message": "The class's program has no cell W[2,0]: W has shape (2, 3).",
    }
    for student in students:
        assert student.get_attribute("[data-testid=class-question]", "data-open") == "false"
    assert teacher.errors == [] and all(s.errors == [] for s in students)
