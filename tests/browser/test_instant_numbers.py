"""A slider move paints the page's own numbers (static/js/compute/instant-numbers.js, evaluator.js) before the
server answers; the server's numbers follow and confirm them: the body counts the replies
compared (`data-numbers-checked`) and those that disagreed (`data-numbers-mismatches`), and a
disagreement shows the server's numbers and a quiet notice. Never on presets, lessons or random
programs; a tampered reply is reported."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))
from test_numbers_page import RANDOM_RUNS  # noqa: E402

from chainrule import engine  # noqa: E402

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
ROOT_DATA = "() => document.querySelector('[data-testid=node].root').dataset.data"
CARDS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=node]')]
  .map((g) => [g.dataset.nodeId, [g.dataset.data, g.dataset.grad]]))"""
BODY = "(key) => document.body.dataset[key]"


def open_page(page, query: str) -> None:
    page.set_default_timeout(30_000)  # the machine the suite runs on may be loaded
    page.goto("/?" + query)
    page.wait_for_selector(READY)
    page.click("#to-end")  # every grad shown


def press_on_slider(page, name: str, key: str) -> None:
    page.locator(f"[data-testid=slider-{name}] input.slider-range").focus()
    page.keyboard.press(key)


def slider_value(page, name: str) -> float:
    return float(page.input_value(f"[data-testid=slider-{name}] input.slider-value"))


def wait_checked(page, count: int) -> None:
    page.wait_for_function(f"() => document.body.dataset.numbersChecked === '{count}'")


def engine_cards(source: str, values: dict[str, float]) -> dict[str, list[float]]:
    """Each node's data and grad by the engine."""
    trace = engine.trace(source, values)
    return {f"n{node.id}": [node.data, trace.grads[node.id]] for node in trace.nodes}


def page_cards(page) -> dict[str, list[float]]:
    """Each card's data and grad (data-* attributes: JavaScript's full-precision text)."""
    return {node: [float(x) for x in pair] for node, pair in page.evaluate(CARDS_JS).items()}


def test_a_slider_move_paints_the_pages_numbers_before_the_server_answers(page):
    """The server's /api/values is held: the cards show the engine's numbers for the new value
    anyway, from the page; released, the server's reply is compared and agrees."""
    open_page(page, "preset=add-mul")
    held = []
    page.route("**/api/values", lambda route: held.append(route))
    with page.expect_request("**/api/values"):
        press_on_slider(page, "a", "ArrowRight")
    a = slider_value(page, "a")
    preset = next(p for p in engine.PRESETS if p["id"] == "add-mul")
    expected = engine_cards(preset["source"], {**preset["values"], "a": a})
    page.wait_for_function(f"() => Number(({ROOT_DATA})()) === {expected['n4'][0]!r}")
    assert page.evaluate(BODY, "numbers") == "page"
    assert page_cards(page) == expected
    assert page.evaluate(BODY, "numbersChecked") == "0"
    held[-1].continue_()
    wait_checked(page, 1)
    assert page.evaluate(BODY, "numbersMismatches") == "0"
    assert page.is_hidden("[data-testid=numbers-notice]")
    assert page.is_hidden("[data-testid=error]")


def test_a_slider_move_flags_a_saturated_tanh_before_the_server_answers(page):
    """The page computes the gradient flags (engine/flags.py) with its numbers: x moved to 3.9
    puts tanh(x) on its flat tail (|t| > 0.999), and its card is flagged at once on the gradient
    map, with the server's /api/values held; released, the server's flags agree and nothing is
    replaced."""
    source = "x = 3.7\nt = x.tanh()\ny = t * 2"
    open_page(page, urlencode({"source": source, "gradmap": "1"}))
    tanh = next(n for n in engine.trace(source).nodes if n.op == "tanh")
    card = f"[data-testid=node][data-node-id=n{tanh.id}]"
    assert page.get_attribute(card, "data-grad-flag") is None  # tanh(3.7) = 0.99878…
    held = []
    page.route("**/api/values", lambda route: held.append(route))
    with page.expect_request("**/api/values"):
        page.fill("[data-testid=slider-x] input.slider-value", "3.9")
    page.wait_for_function(
        f"() => document.querySelector('{card}').dataset.gradFlag === 'saturated'"
    )
    assert engine.numbers(source, {"x": 3.9})["grad_flags"] == {f"n{tanh.id}": ["saturated"]}
    assert page.evaluate(BODY, "numbers") == "page"
    assert page.evaluate(BODY, "numbersChecked") == "0"
    held[-1].continue_()
    wait_checked(page, 1)
    assert page.evaluate(BODY, "numbersMismatches") == "0"
    assert page.evaluate(BODY, "numbers") == "page"
    assert page.get_attribute(card, "data-grad-flag") == "saturated"


def test_a_reply_that_disagrees_is_shown_and_reported(page):
    """The server's reply with the root's data moved by a millionth: the page shows the server's
    number, counts the disagreement and says so quietly."""
    open_page(page, "preset=add-mul")

    def tampered(route) -> None:
        reply = route.fetch().json()
        root = len(reply["data"]) - 1
        reply["data"][root] *= 1 + 1e-6
        route.fulfill(json=reply)

    page.route("**/api/values", tampered)
    press_on_slider(page, "a", "ArrowRight")
    wait_checked(page, 1)
    assert page.evaluate(BODY, "numbersMismatches") == "1"
    assert page.evaluate(BODY, "numbers") == "server"
    notice = page.locator("[data-testid=numbers-notice]")
    assert notice.is_visible()
    assert (
        notice.text_content()
        == "Numbers that differed from the server's: 1. The server's are shown."
    )
    a = slider_value(page, "a")
    preset = next(p for p in engine.PRESETS if p["id"] == "add-mul")
    root = engine.trace(preset["source"], {**preset["values"], "a": a}).root.data
    assert float(page.evaluate(ROOT_DATA)) == root * (1 + 1e-6)


def move_and_confirm(page, count: int) -> int:
    """Move the first slider right then left; wait for each reply's check; return the count."""
    name = page.locator("[data-testid^=slider-]").first.get_attribute("data-testid")[
        len("slider-") :
    ]
    for key in ("ArrowRight", "ArrowLeft"):
        press_on_slider(page, name, key)
        count += 1
        wait_checked(page, count)
    return count


def test_presets_and_lessons_never_disagree(page):
    """Every preset (the lessons open presets' programs) with each slider moved: the page's
    numbers and the server's agree every time."""
    for preset in engine.PRESETS:
        open_page(page, urlencode({"preset": preset["id"]}))
        if page.locator("[data-testid^=slider-]").count() == 0:
            continue
        move_and_confirm(page, 0)
        assert page.evaluate(BODY, "numbersMismatches") == "0", preset["id"]


def test_random_programs_never_disagree(page):
    for source, values, _ in RANDOM_RUNS[:12]:
        query = {"source": source, "values": ",".join(f"{k}:{v!r}" for k, v in values.items())}
        open_page(page, urlencode(query))
        move_and_confirm(page, 0)
        assert page.evaluate(BODY, "numbersMismatches") == "0", source


def test_a_slider_move_rewrites_no_other_slider(page):
    """A move changes one leaf: the other rows are passed over, not re-stepped. A value off its
    range's grid (micrograd's random weights, -0.7312715117751976) re-stepped its range each move
    (min, max and step written again), 537 rows of micrograd's demo a move; its value stays as
    shown, exactly."""
    source = "a = 0.7312715117751976\nb = -0.1234567891234567\nc = 2.718281828459045\nL = a*b + c"
    open_page(page, urlencode({"source": source}))
    page.evaluate(
        """() => {
          window.rangeWrites = [];
          new MutationObserver((list) => { for (const m of list) window.rangeWrites.push(
            m.target.closest('[data-testid^=slider-]').dataset.testid + ' ' + m.attributeName); })
            .observe(document.querySelector('[data-testid=slider-a]').parentElement,
                     {subtree: true, attributes: true, attributeFilter: ['min', 'max', 'step']});
        }"""
    )
    for _ in range(3):
        press_on_slider(page, "a", "ArrowRight")
        root = engine_cards(source, {"a": slider_value(page, "a")})["n4"][0]
        page.wait_for_function(f"() => Number(({ROOT_DATA})()) === {root!r}")
    assert [w for w in page.evaluate("() => window.rangeWrites") if "slider-a " not in w] == []
    assert slider_value(page, "b") == -0.1234567891234567
    assert slider_value(page, "c") == 2.718281828459045
    assert page_cards(page) == engine_cards(source, {"a": slider_value(page, "a")})
