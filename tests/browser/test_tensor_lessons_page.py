"""The tensor lessons in a real Chromium, in every language (issue 43, "Learn the rules"):
Space goes through every stop, the tensor timeline lands on each stop's step, the tensors and
cells a stop names are ringed (and only they), a stop with a fan-in opens that cell's sum with
the API's numbers, and ← comes back. Screenshots of each lesson's key stop at 1280×720."""

from __future__ import annotations

import pytest
from tensor_cells import post

from chainrule.app.api.lesson_files import load_lessons

pytestmark = pytest.mark.browser

LANGS = ["en", "ru", "et"]
TENSOR_LESSONS = ["tensor-broadcast", "tensor-matmul", "tensor-softmax-ce"]
BY_LANG = {
    lang: {lesson["id"]: lesson for lesson in load_lessons(lang=lang) if lesson["kind"] == "tensor"}
    for lang in LANGS
}
PANEL = "[data-testid=lesson]"
# The key stop of each lesson: the one its screenshot shows.
KEY_STOP = {"tensor-broadcast": 4, "tensor-matmul": 3, "tensor-softmax-ce": 4}
RINGED_JS = """() => [
  ...[...document.querySelectorAll('[data-testid=tensor][data-lesson=highlight]')]
     .map(c => c.dataset.tensorId),
  ...[...document.querySelectorAll('[data-testid=tensor-cell][data-lesson=highlight]')]
     .map(c => `${c.dataset.tensorId}|${c.dataset.grid}|${c.dataset.index}`),
].sort()"""


def wait_for_stop(page, k: int, lesson: dict) -> None:
    stop = lesson["stops"][k]
    page.wait_for_function(
        """([k, step, ringed]) => {
          const panel = document.querySelector('[data-testid=lesson]');
          if (panel?.dataset.stop !== String(k) || document.body.dataset.apiStep !== String(step))
            return false;
          const cards = [...document.querySelectorAll('[data-lesson=highlight]')];
          return cards.length === ringed;
        }""",
        arg=[k, stop["step"], len(stop["highlight"])],
    )


def element(nested, index: list[int]):
    for i in index:
        nested = nested[i]
    return nested


def check_stop(page, k: int, lesson: dict, reply: dict) -> None:
    stop = lesson["stops"][k]
    wait_for_stop(page, k, lesson)
    assert page.text_content("[data-testid=lesson-text]") == stop["text"].replace("`", "")
    assert page.get_attribute(PANEL, "data-kind") == "tensor"
    assert page.evaluate(RINGED_JS) == sorted(stop["highlight"])
    nodes = {n["id"]: n for n in reply["nodes"]}
    # The step shown is the stop's: its tensor is the current card.
    step = reply["steps"][stop["step"]]
    assert page.get_attribute("[data-testid=tensor].current", "data-tensor-id") == step["node"]
    # A ringed cell shows the reply's number once the timeline has it ("" before).
    for key in stop["highlight"]:
        if "|" not in key:
            continue
        tensor, grid, index = key.split("|")
        shown = page.get_attribute(
            f"[data-testid=tensor-cell][data-tensor-id={tensor}][data-grid={grid}]"
            f"[data-index='{index}']",
            "data-value",
        )
        if shown:
            final = element(nodes[tensor][grid], [int(i) for i in index.split(",")])
            passed = [
                element(g["grad"], [int(i) for i in index.split(",")])
                for s in reply["steps"][: stop["step"] + 1]
                if s["phase"] == "backward"
                for g in s["grads"]
                if g["input"] == tensor
            ]
            assert float(shown) in {float(final), *map(float, passed), float(sum(passed))}
    fan = page.locator("[data-testid=fan-in]")
    if stop["fan_in"]:
        tensor, _, index = stop["fan_in"].split("|")
        page.wait_for_function(
            "([t, i]) => { const f = document.querySelector('[data-testid=fan-in]');"
            " return f && !f.hidden && f.dataset.tensorId === t && f.dataset.index === i; }",
            arg=[tensor, index],
        )
        grad = element(nodes[tensor]["grad"], [int(i) for i in index.split(",")])
        assert float(fan.get_attribute("data-sum")) == grad
        assert float(fan.get_attribute("data-grad")) == grad
    else:
        fan.wait_for(state="hidden")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("lesson_id", TENSOR_LESSONS)
def test_a_tensor_lesson_runs_end_to_end(page, live_server, screenshots_dir, lesson_id, lang):
    lesson = BY_LANG[lang][lesson_id]
    reply = post(live_server, "/api/graph", {"source": lesson["source"], "values": {}})
    page.goto(f"/?lesson={lesson_id}&lang={lang}")
    check_stop(page, 0, lesson, reply)
    assert page.evaluate("document.body.dataset.view") == "tensor"
    assert page.text_content(".lesson-title") == lesson["title"]
    page.locator("[data-testid=lesson-text]").click()
    for k in range(1, len(lesson["stops"])):
        page.keyboard.press("Space")
        check_stop(page, k, lesson, reply)
        if k == KEY_STOP[lesson_id] and lang == "en":
            page.screenshot(path=str(screenshots_dir / f"{lesson_id}-stop-{k}-1280x720.png"))
    for k in range(len(lesson["stops"]) - 2, -1, -1):
        page.keyboard.press("ArrowLeft")
        check_stop(page, k, lesson, reply)


def test_the_fan_in_a_lesson_opens_reads_the_sum_of_the_stop_s_text(page):
    lesson = BY_LANG["en"]["tensor-matmul"]
    page.goto("/?lesson=tensor-matmul&stop=3")
    page.wait_for_selector("[data-testid=fan-in]:not([hidden])")
    sentence = page.text_content("[data-testid=fan-in-sentence]")
    assert sentence.startswith("dW[1,2] = Σᵢ X[i,1]·dY[i,2] = ")
    assert sentence.endswith(" = -1.75") or sentence.endswith(" = −1.75")
    assert "−1.75" in lesson["stops"][3]["text"]
    # Lit: the target, the three dY cells of column 2 and the three X cells of column 1.
    lit = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=tensor-cell][class*=lit-]')]"
        ".map(c => c.getAttribute('class').match(/lit-\\w+/)[0] + ' ' + c.dataset.index).sort()"
    )
    assert lit == sorted(
        ["lit-target 1,2"]
        + [f"lit-upstream {n},2" for n in range(3)]
        + [f"lit-local {n},1" for n in range(3)]
    )
    # The next stop has no fan-in: the sum closes.
    page.locator("[data-testid=lesson-text]").click()
    page.keyboard.press("Space")
    page.locator("[data-testid=fan-in]").wait_for(state="hidden")
