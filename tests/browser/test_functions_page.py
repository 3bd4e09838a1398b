"""A program's own functions on the page (issue 27, part 4): typed into the editor, a call is
one card tagged with the function's name; the node panel shows its definition; the edge panel its
local derivative; "expand derived ops" draws its body instead."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
PROGRAM = "softplus(x) = log(1 + exp(x))\na = 2\nb = -0.5\ny = softplus(a*b)\nL = y * a"
CARDS_JS = """() => [...document.querySelectorAll('[data-testid=node]')].map(n => ({
    id: n.dataset.nodeId, label: n.dataset.label, op: n.dataset.op, data: n.dataset.data,
    grad: n.dataset.grad, tag: n.querySelector('.op')?.textContent ?? ''}))"""


def type_program(page, source: str, shown: str) -> None:
    """Replace the program, run it at once (Ctrl+Enter) and wait for `shown` (a selector) to
    be drawn."""
    page.fill("[data-testid=source]", source)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_selector(shown)


def test_a_call_is_one_card_with_its_functions_name_and_expands_to_its_body(page, screenshots_dir):
    page.goto("/")
    page.wait_for_selector(READY)
    type_program(page, PROGRAM, "[data-testid=node][data-op=softplus]")
    assert page.locator("[data-testid=node]").count() == 5  # a, b, a*b, y, L
    page.click("#to-end")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=node]:not(.kind-const)')]"
        ".every(n => n.dataset.grad)"
    )
    cards = {card["label"] or card["id"]: card for card in page.evaluate(CARDS_JS)}
    call = cards["y"]
    assert (call["op"], call["tag"]) == ("softplus", "softplus")
    assert float(call["data"]) == math.log(1 + math.exp(-1.0))
    assert math.isclose(float(call["grad"]), 2.0)
    # ∂L/∂a = y + a·b'·σ(ab)·… : sympy's number, to the digits the card holds in data-grad.
    sigmoid = 1 / (1 + math.exp(1.0))
    assert math.isclose(
        float(cards["a"]["grad"]), math.log(1 + math.exp(-1.0)) + 2 * sigmoid * -0.5
    )
    page.screenshot(path=str(screenshots_dir / "function-call-1280x720.png"))

    # The node panel gives the function's definition; the edge panel its local derivative.
    page.click(f"[data-testid=node][data-node-id={call['id']}]")
    panel = page.locator("[data-testid=explain]")
    panel.wait_for(state="visible")
    assert "softplus(x) = log(1 + exp(x)) (line 1)" in panel.text_content()
    assert "derived: log(1 + exp(a*b))" in panel.text_content()
    page.screenshot(path=str(screenshots_dir / "function-explained-1280x720.png"))
    page.keyboard.press("Escape")

    # Expanded: the body's own nodes, and the same numbers.
    page.check("#toggle-expand")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=node]').length === 8 && "
        "!document.querySelector('[data-testid=node][data-op=softplus]')"
    )
    page.click("#to-end")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=node]:not(.kind-const)')]"
        ".every(n => n.dataset.grad)"
    )
    expanded = page.evaluate(CARDS_JS)
    assert sorted(card["op"] for card in expanded) == sorted(
        ["", "", "", "*", "exp", "+", "log", "*"]
    )
    by_label = {card["label"]: card for card in expanded if card["label"]}
    assert by_label["y"]["op"] == "log" and by_label["y"]["data"] == call["data"]
    assert math.isclose(float(by_label["a"]["grad"]), float(cards["a"]["grad"]), rel_tol=1e-15)
    page.screenshot(path=str(screenshots_dir / "function-expanded-1280x720.png"))


def test_a_bad_definition_is_underlined_where_it_is(page):
    page.goto("/")
    page.wait_for_selector(READY)
    page.fill("[data-testid=source]", "f(x) = f(x) * 2\nf(a)")
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "'f' calls itself: recursion is not supported" in error.text_content()
    snippet = page.text_content("[data-testid=error] pre").splitlines()
    assert snippet[:2] == ["f(x) = f(x) * 2", "       ^"]


def test_presenting_shows_the_whole_explanation_of_a_call(page, screenshots_dir):
    """Presenting's large type made the call's explanation taller than the room under it: its
    last lines (where the local derivative comes from) were cut off by the pane."""
    page.goto("/")
    page.wait_for_selector(READY)
    type_program(page, PROGRAM, "[data-testid=node][data-op=softplus]")
    page.click("#to-end")
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting")
    page.click("[data-testid=node][data-op=softplus]")
    panel = page.locator("[data-testid=explain]")
    panel.wait_for(state="visible")
    assert "backward pass through the body" in panel.text_content()
    box, pane = panel.bounding_box(), page.locator("#graph-wrap").bounding_box()
    assert pane["y"] <= box["y"] and box["y"] + box["height"] <= pane["y"] + pane["height"]
    page.screenshot(path=str(screenshots_dir / "function-explained-presenting.png"))
