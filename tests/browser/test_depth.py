"""Teaching depth in the page (issue 27, parts 2, 3 and 5): any node as the target, every path
of the chain rule, and gradient flags, read from the cards' and panels' data-* attributes and
checked against the engine's own numbers."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from chainrule import engine
from chainrule.engine.presets import presets

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
PRESET = {p["id"]: p for p in presets()}


CARDS = "#graph .layer-nodes [data-node-id], #graph .layer-group-cards [data-root]"


def card_id(card) -> str:
    return card.get_attribute("data-node-id") or card.get_attribute("data-root")


def card(page, label: str):
    return page.locator(f'#graph .layer-nodes [data-label="{label}"]')


def open_preset(page, preset: str, extra: str = "") -> None:
    page.goto(f"/?preset={preset}{extra}")
    page.wait_for_selector(READY)


def test_right_click_a_card_for_its_gradients_then_t_and_back_to_the_root(page, screenshots_dir):
    open_preset(page, "diamond")
    card(page, "c").click(button="right")
    page.get_by_test_id("target-choose").click()
    bar = page.get_by_test_id("target-bar")
    bar.wait_for(state="visible")
    assert bar.get_attribute("data-target") == "n4"
    page.keyboard.press("End")
    for label, off in [("a", None), ("b", "true"), ("c", None), ("d", "true")]:
        assert card(page, label).get_attribute("data-off-target") == off, label
    assert card(page, "c").get_attribute("data-target") == "true"
    want = engine.trace(PRESET["diamond"]["source"], target="c")
    assert float(card(page, "a").get_attribute("data-grad")) == want.grad("a") == 3.0  # ∂c/∂a
    assert "∂c/∂x" in bar.inner_text()
    page.screenshot(path=str(screenshots_dir / "depth-target.png"))
    # The seed step says which node was seeded.
    page.click("#jump-backward")
    page.click("[data-testid=step-back]")
    assert page.get_by_test_id("phase").inner_text() == "seed"
    assert (
        page.get_by_test_id("narration").inner_text().startswith("Seed at the target: grad[c] = 1")
    )
    # T on the card under the pointer: b's gradients (∂b/∂a = 1).
    card(page, "b").hover()
    page.keyboard.press("t")
    page.locator("[data-testid=target-bar][data-target=n2]").wait_for()
    page.get_by_test_id("target-root").click()
    bar.wait_for(state="hidden")
    page.wait_for_function("() => !document.querySelector('#graph [data-off-target]')")
    page.keyboard.press("End")
    assert float(card(page, "a").get_attribute("data-grad")) == 15.0


def test_the_paths_of_a_leaf_sum_to_its_gradient_and_light_up(page, screenshots_dir):
    open_preset(page, "diamond", "&step=999")
    page.locator("#tab-paths").click()
    paths = page.get_by_test_id("path")
    paths.nth(1).wait_for()
    assert paths.all_inner_texts() == ["∂d/∂c · ∂c/∂a = 3 · 3 = 9", "∂d/∂b · ∂b/∂a = 6 · 1 = 6"]
    total = page.get_by_test_id("paths-sum")
    assert (total.get_attribute("data-sum"), total.get_attribute("data-grad")) == ("15", "15")
    assert total.inner_text() == "Sum of the products: 15 = grad[a] = 15"
    paths.nth(0).hover()
    lit = page.locator("#graph [data-path-lit=true]")
    assert sorted(e.get_attribute("data-edge-id") or e.get_attribute("data-label") for e in lit.all()) == [
        "a", "c", "d", "e2", "e5"]  # fmt: skip
    page.screenshot(path=str(screenshots_dir / "depth-paths.png"))
    paths.nth(0).blur()
    page.mouse.move(5, 5)
    assert lit.count() == 0


def test_too_many_paths_are_counted_and_the_largest_listed(page):
    source = "x0 = 0.5\n" + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(30))
    page.goto(f"/?source={quote(source)}")
    page.wait_for_selector(READY)
    page.locator("#tab-paths").click()
    page.get_by_test_id("paths-why").wait_for()
    total = page.get_by_test_id("paths-sum")
    assert total.get_attribute("data-count") == str(3**30)
    assert total.get_attribute("data-complete") == "false"
    assert page.get_by_test_id("path").count() == 20
    assert "Reverse mode never lists them" in page.get_by_test_id("paths-why").inner_text()


def test_the_deep_tanh_chain_is_flagged_and_each_flag_explained(page, screenshots_dir):
    open_preset(page, "deep-tanh")
    page.get_by_test_id("gradmap").check()
    page.keyboard.press("End")
    want = engine.trace(PRESET["deep-tanh"]["source"]).to_dict()["grad_flags"]
    page.wait_for_selector("#graph [data-grad-flag]")
    cards = page.locator(CARDS).all()  # a statement's card shows (and is flagged as) its root
    shown = {card_id(c): (c.get_attribute("data-grad-flag") or "").split() for c in cards}
    assert shown == {node: want.get(node, []) for node in shown}
    assert [node for node, flags in shown.items() if flags] == ["n0", "n3", "n6"]  # x, h1, h2
    assert page.locator('#graph [data-root="n3"]').get_attribute("data-grad-flag") == (
        "saturated vanishing")  # h1, its statement folded into one card  # fmt: skip
    legend = page.get_by_test_id("grad-flags-legend")
    assert [li.get_attribute("data-flag") for li in legend.locator("li").all()] == [
        "vanishing", "saturated"]  # fmt: skip
    assert "below a millionth of the largest gradient" in legend.inner_text()
    page.screenshot(path=str(screenshots_dir / "depth-flags.png"))
    page.locator("#tab-gradients").click()
    row = page.locator('.grad-table tr[data-node-id="n3"]')
    assert row.get_attribute("data-flags") == "saturated vanishing"
    assert row.locator("td.flag").inner_text() == "saturated, vanishing"
    notes = page.get_by_test_id("grad-flag-notes")
    assert "1 − t² is below 0.002" in notes.inner_text()


def test_the_relu_chain_dies_below_zero(page):
    open_preset(page, "deep-relu")
    page.get_by_test_id("gradmap").check()
    page.keyboard.press("End")
    assert page.locator("#graph [data-grad-flag]").count() == 0
    number = page.get_by_test_id("slider-x").locator("input.slider-value")
    number.fill("-1")
    number.press("Enter")
    page.wait_for_selector("#graph [data-grad-flag=dead]")
    want = engine.trace(PRESET["deep-relu"]["source"], {"x": -1.0}).to_dict()["grad_flags"]
    cards = page.locator(CARDS).all()
    shown = {card_id(c): (c.get_attribute("data-grad-flag") or "").split() for c in cards}
    assert shown == {node: want.get(node, []) for node in shown}
    assert all(flags == ["dead"] for node, flags in shown.items() if node != "n30")  # all but h10


def test_presenting_mode_shows_the_target_bar_and_the_flags(page, screenshots_dir):
    open_preset(page, "deep-tanh")
    page.get_by_test_id("gradmap").check()
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting")
    page.keyboard.press("End")
    page.locator('#graph [data-root="n15"]').click(button="right")  # h5's card
    page.get_by_test_id("target-choose").click()
    page.get_by_test_id("target-bar").wait_for(state="visible")
    page.keyboard.press("End")
    page.screenshot(path=str(screenshots_dir / "depth-present.png"))
    assert page.locator('#graph [data-root="n30"]').get_attribute("data-off-target") == "true"


def test_presenting_keeps_the_paths_panel_beside_the_graph(page, screenshots_dir):
    open_preset(page, "diamond", "&step=999")
    page.locator("#tab-paths").click()
    page.get_by_test_id("path").nth(1).wait_for()
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting.paths-open")
    panel = page.locator("#panel-paths")
    assert panel.is_visible() and page.locator("#panel-labs").is_hidden()
    graph = page.locator("#graph-wrap").bounding_box()
    assert graph["x"] + graph["width"] <= panel.bounding_box()["x"] + 1  # beside, not over
    page.get_by_test_id("path").nth(1).hover()  # ∂d/∂b · ∂b/∂a lights b's way
    lit = page.locator("#graph [data-path-lit=true]")
    assert sorted(e.get_attribute("data-edge-id") or e.get_attribute("data-label") for e in lit.all()) == [
        "a", "b", "d", "e0", "e4"]  # fmt: skip
    page.screenshot(path=str(screenshots_dir / "depth-paths-presenting.png"))


def test_too_many_paths_say_how_many_and_why_before_the_list(page):
    source = "x0 = -0.3\n" + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(30))
    page.goto(f"/?source={quote(source)}&lang=et")
    page.wait_for_selector(READY)
    page.locator("#tab-paths").click()
    why = page.get_by_test_id("paths-why")
    why.wait_for()
    before = page.evaluate(
        "() => { const first = document.querySelector('[data-testid=path]');"
        " const why = document.querySelector('[data-testid=paths-why]');"
        " return Boolean(why.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING); }"
    )
    assert before  # read first: 3³⁰ paths, the 20 largest listed, and why reverse mode never lists
    assert page.get_by_test_id("paths-sum").inner_text().startswith(
        "Teid sõlmest x0: 205\u2009891\u2009132\u2009094\u2009649;")  # fmt: skip
    assert why.inner_text().startswith("Teed paljunevad")
    assert "Vastassuunaline režiim neid kunagi ei loetle" in why.inner_text()


def test_each_flag_is_a_word_of_its_own_line_as_wide_as_its_card(page):
    open_preset(page, "deep-tanh")
    page.get_by_test_id("gradmap").check()
    page.keyboard.press("End")
    page.wait_for_selector("#graph text.grad-flag")
    words = page.evaluate(
        """() => [...document.querySelectorAll('#graph text.grad-flag')].map((el) => {
          const card = document.querySelector(`#graph [data-root="${el.dataset.nodeId}"] .card,`
            + ` #graph [data-node-id="${el.dataset.nodeId}"] .card`).getBoundingClientRect();
          return {id: el.dataset.nodeId, size: Number(el.getAttribute('font-size')),
                  lines: [...el.querySelectorAll('tspan')].map((t) => t.textContent),
                  width: el.getBoundingClientRect().width, card: card.width}; })"""
    )
    assert {w["id"]: w["lines"] for w in words} == {
        "n0": ["vanishing"], "n3": ["saturated", "vanishing"], "n6": ["vanishing"]}  # fmt: skip
    for word in words:
        assert 11 <= word["size"] <= 20 and word["width"] <= word["card"] + 1, word
    assert max(word["size"] for word in words) > 11  # larger than before where the card allows
