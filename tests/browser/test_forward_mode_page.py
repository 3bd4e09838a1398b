"""Forward mode beside reverse mode in the page (issue 27, part 1): the Reverse | Forward switch,
the leaf picker, the cost counter and the every-leaf run, read from data-* attributes and checked
against the engine's own numbers."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from chainrule import engine
from chainrule.engine.narration import narrations
from chainrule.engine.presets import presets
from chainrule.engine.step_reader import step_objects

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
PRESET = {p["id"]: p for p in presets()}


def card(page, label: str):
    return page.locator(f'#graph .layer-nodes [data-label="{label}"]')


def forward_on(page) -> None:
    page.get_by_test_id("pass-switch").click()
    page.locator("[data-testid=pass-counter][data-pass=forward]").wait_for()
    # The forward trace itself, not the switch alone: its cards' grad row names the tangent (a key
    # pressed before it came would move the reverse trace it then replaces).
    page.wait_for_selector('#graph .layer-nodes .grad-name:text-matches("^∂/∂")')


def test_the_switch_and_the_picker_carry_tangents_left_to_right(page, screenshots_dir):
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    counter = page.get_by_test_id("pass-counter")
    assert (counter.get_attribute("data-pass"), counter.get_attribute("data-passes")) == (
        "reverse",
        "1",
    )
    assert counter.get_attribute("data-madds") == counter.get_attribute("data-edges")
    forward_on(page)
    page.wait_for_selector('#graph .layer-nodes .grad-name:text("∂/∂a")')
    page.keyboard.press("End")
    want = engine.trace(
        PRESET["add-mul"]["source"], PRESET["add-mul"]["values"], pass_="forward", wrt="a"
    )
    for node in want.nodes:
        if node.kind == "const" or not node.label:
            continue
        shown = card(page, node.label).get_attribute("data-grad")
        assert float(shown) == want.tangents.tangent[node.id], node.label
    assert page.get_by_test_id("phase").get_attribute("data-phase") == "tangent"
    # The legend names the tangent the cards' second row holds; no gradient flows back.
    assert (
        page.locator(".legend .legend-tangent").inner_text()
        == "∂/∂leaf: the tangent, carried forward"
    )
    assert page.locator(".legend .legend-backward").is_hidden()
    page.get_by_test_id("wrt").select_option("c")
    page.wait_for_selector('#graph .layer-nodes .grad-name:text("∂/∂c")')
    page.keyboard.press("End")
    root = engine.trace(PRESET["add-mul"]["source"], PRESET["add-mul"]["values"]).grad("c")
    assert float(card(page, "f").get_attribute("data-grad")) == root
    said = page.get_by_test_id("narration").inner_text()
    assert said.endswith(f"= {root:g}".replace("-", "\u2212"))  # the page's minus sign
    page.screenshot(path=str(screenshots_dir / "forward-mode.png"))


LABELS_JS = """() => [...document.querySelectorAll('#graph .edge-label.forward')]
  .map((g) => g.querySelector('text').textContent).sort()"""


def test_a_tangent_step_s_edges_read_tangent_in_times_local(page):
    """The pulse carries tangents: at f = e·c's tangent step (by a), e → f reads ∂e/∂a × ∂f/∂e =
    1 × 10 = 10 and c → f reads 0 × (−1) = 0, the terms the engine sums; a reverse-mode forward
    step's edges still read their input's value."""
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    page.click("[data-testid=jump-backward]")  # f's visit, then its seed, then its forward step
    page.click("[data-testid=step-back]")
    page.click("[data-testid=step-back]")
    page.wait_for_function(f"() => ({LABELS_JS})().length === 2")
    assert page.evaluate(LABELS_JS) == ["10", "−1"]
    forward_on(page)
    page.keyboard.press("End")
    assert page.get_by_test_id("phase").get_attribute("data-phase") == "tangent"
    want = engine.trace(
        PRESET["add-mul"]["source"], PRESET["add-mul"]["values"], pass_="forward", wrt="a"
    ).to_dict()
    last = step_objects(want)[-1]
    terms = [(c["tangent_in"], c["local"], c["contribution"]) for c in last["contributions"]]
    assert sorted(terms) == [(0.0, -1.0, -0.0), (1.0, 10.0, 10.0)]
    page.wait_for_function(f"() => ({LABELS_JS})().length === 2")
    assert page.evaluate(LABELS_JS) == ["0 × (−1) = 0", "1 × 10 = 10"]


def test_every_leaf_runs_one_pass_each_and_ends_on_the_backward_gradients(page, screenshots_dir):
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    page.locator("#speed").select_option("16")
    # Every count the counter shows, in order: at 16x a pass of five nodes may show for less time
    # than a wait for one count takes to look again.
    page.evaluate(
        """() => {
      const counter = document.querySelector('[data-testid=pass-counter]');
      window.__passes = [counter.dataset.passes];
      new MutationObserver(() => {
        const passes = counter.dataset.passes;
        if (window.__passes[window.__passes.length - 1] !== passes) window.__passes.push(passes);
      }).observe(counter, { attributes: true, attributeFilter: ['data-passes'] });
    }"""
    )
    page.get_by_test_id("every-leaf").click()
    counter = page.get_by_test_id("pass-counter")
    table = page.get_by_test_id("every-leaf-table")
    table.wait_for(timeout=30_000)
    shown = page.evaluate("() => window.__passes")
    assert shown[-3:] == ["1", "2", "3"], shown  # a pass a leaf, counted one at a time
    reverse = engine.trace(PRESET["add-mul"]["source"], PRESET["add-mul"]["values"])
    rows = table.locator("tbody tr").all()
    assert [row.get_attribute("data-leaf") for row in rows] == ["a", "b", "c"]
    for row in rows:
        assert row.get_attribute("data-same") == "true"
        assert float(row.get_attribute("data-tangent")) == reverse.grad(
            row.get_attribute("data-leaf")
        )
    edges = int(counter.get_attribute("data-edges"))
    assert (counter.get_attribute("data-passes"), counter.get_attribute("data-madds")) == (
        "3",
        str(3 * edges),
    )
    page.screenshot(path=str(screenshots_dir / "forward-every-leaf.png"))
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting")
    page.screenshot(path=str(screenshots_dir / "forward-present.png"))


def test_the_lesson_walks_forward_mode_beside_reverse_mode(page):
    page.goto("/?lesson=forward-mode&stop=1")
    page.get_by_test_id("lesson").wait_for()
    page.wait_for_selector('#graph .layer-nodes .grad-name:text("∂/∂a")')
    assert page.get_by_test_id("phase").get_attribute("data-phase") == "tangent"
    assert page.get_by_test_id("wrt").input_value() == "a"
    page.keyboard.press("ArrowRight")  # ∂e/∂a = 1 × 1 + 0 × 1 = 1
    page.wait_for_function(
        "() => document.querySelector('[data-testid=narration]').textContent.includes('∂e/∂a = 1 × 1 + 0 × 1 = 1')"
    )
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # a pass of its own for c
    page.wait_for_selector('#graph .layer-nodes .grad-name:text("∂/∂c")')
    page.locator('#graph .layer-nodes [data-label="f"][data-grad="-1"]').wait_for()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # back to reverse mode's end
    page.locator("[data-testid=pass-counter][data-pass=reverse]").wait_for()
    page.locator('#graph .layer-nodes [data-label="a"][data-grad="10"]').wait_for()


def test_the_neuron_lesson_s_every_leaf_stop_ends_on_the_backward_gradients(page, screenshots_dir):
    page.goto("/?lesson=forward-neuron&stop=2")
    page.get_by_test_id("lesson").wait_for()
    page.locator("[data-testid=pass-counter][data-pass=forward]").wait_for()
    page.locator("#speed").select_option("16")
    page.get_by_test_id("every-leaf").click()
    table = page.get_by_test_id("every-leaf-table")
    table.wait_for(timeout=60_000)
    rows = table.locator("tbody tr").all()
    assert len(rows) == 7 and all(row.get_attribute("data-same") == "true" for row in rows)
    counter = page.get_by_test_id("pass-counter")
    assert counter.get_attribute("data-passes") == "7"
    page.screenshot(path=str(screenshots_dir / "forward-lesson-neuron.png"))


def test_the_every_leaf_run_started_while_the_lesson_loads_is_not_cancelled_by_it(page):
    """A reader who presses "every leaf" before the lesson's trace has come keeps the run: the
    stop shown on the trace's arrival used to cancel it (CI, under load, found the race)."""
    held: list = []
    page.route("**/api/graph", lambda route: held.append(route))
    page.goto("/?lesson=forward-neuron&stop=2")
    page.get_by_test_id("lesson").wait_for()
    page.wait_for_function("() => document.querySelector('[data-testid=every-leaf]') !== null")
    page.locator("#speed").select_option("16")
    page.wait_for_function("() => performance.getEntriesByType('resource').length > 0")
    assert held, "the lesson's trace is held back"
    page.get_by_test_id("every-leaf").click()
    page.unroute("**/api/graph")  # lets the held request through
    table = page.get_by_test_id("every-leaf-table")
    table.wait_for(timeout=60_000)
    rows = table.locator("tbody tr").all()
    assert len(rows) == 7 and all(row.get_attribute("data-same") == "true" for row in rows)


def test_a_slider_move_in_forward_mode_refreshes_the_tangents_and_their_narration(
    page, screenshots_dir
):
    """New values in forward mode come as numbers only (POST /api/values) merged into the trace
    (compute/merge-numbers.js): the cards' tangents and the tangent step's sentence, filled from the merged
    trace's own arrays (narration.js), read the new numbers: ∂f/∂c = a + b = 2.01 - 3."""
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    forward_on(page)
    page.get_by_test_id("wrt").select_option("c")
    page.wait_for_selector('#graph .layer-nodes .grad-name:text("∂/∂c")')
    page.keyboard.press("End")
    page.locator('#graph .layer-nodes [data-label="f"][data-grad="-1"]').wait_for()
    page.locator("[data-testid=slider-a] input.slider-range").focus()
    page.keyboard.press("ArrowRight")  # a = 2.01
    moved = engine.trace(
        PRESET["add-mul"]["source"], {**PRESET["add-mul"]["values"], "a": 2.01},
        pass_="forward", wrt="c",
    )  # fmt: skip
    tangent = moved.tangents.tangent[moved.root.id]  # type: ignore[union-attr]
    page.locator(f'#graph .layer-nodes [data-label="f"][data-grad="{tangent!r}"]').wait_for()
    said = narrations(moved.to_dict())[-1]
    page.wait_for_function(
        "(said) => document.querySelector('[data-testid=narration]').textContent === said", arg=said
    )
    assert said.endswith(f"= {tangent:g}".replace("-", "\u2212"))
    page.screenshot(path=str(screenshots_dir / "forward-mode-slider.png"))


def test_presenting_keeps_the_pass_bar_the_counter_and_the_every_leaf_table(page, screenshots_dir):
    """Presenting hides the sidebar; in forward mode its pass bar stays (alone) at the left, so
    the class sees the cost and the teacher can press the button a lesson stop asks for."""
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting")
    assert page.get_by_test_id("pass-bar").is_hidden()  # reverse mode: the graph alone
    page.keyboard.press("p")
    page.wait_for_selector("body:not(.presenting)")
    page.locator("#speed").select_option("16")
    page.get_by_test_id("every-leaf").click()
    page.get_by_test_id("every-leaf-table").wait_for(timeout=30_000)
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting.forward-pass")
    for shown in ("pass-bar", "pass-counter", "every-leaf", "every-leaf-table"):
        assert page.get_by_test_id(shown).is_visible(), shown
    assert page.get_by_test_id("source").is_hidden() and page.locator(".leaves").is_hidden()
    bar = page.get_by_test_id("pass-bar").bounding_box()
    graph = page.locator("#graph-wrap").bounding_box()
    assert bar["x"] + bar["width"] <= graph["x"]  # beside the graph, not over it
    transport = page.locator("#transport").bounding_box()
    assert transport["height"] < 100  # one row: the phase switch gives way (F and B still jump)
    page.screenshot(path=str(screenshots_dir / "forward-every-leaf-presenting.png"))


def test_a_presented_lesson_stop_can_press_every_leaf_and_explains_the_name(page, screenshots_dir):
    page.goto("/?lesson=forward-neuron&stop=2")
    page.get_by_test_id("lesson").wait_for()
    page.locator("[data-testid=pass-counter][data-pass=forward]").wait_for()
    page.locator("#speed").select_option("16")  # presenting hides the speed; the run reads it
    page.get_by_test_id("present").click()
    page.wait_for_selector("body.presenting.in-lesson.forward-pass")
    wrap = page.locator("#graph-wrap").bounding_box()
    transport = page.locator("#transport").bounding_box()
    assert wrap["y"] + wrap["height"] <= transport["y"] + 1  # the pane never spills over it
    page.screenshot(path=str(screenshots_dir / "forward-lesson-neuron-presenting.png"))
    page.get_by_test_id("every-leaf").click()
    page.get_by_test_id("every-leaf-table").wait_for(timeout=60_000)
    # The first lesson's last stop says why reverse mode is called so, on reverse mode's pulse.
    page.goto("/?lesson=forward-mode&stop=5")
    page.get_by_test_id("lesson").wait_for()
    page.locator("[data-testid=pass-counter][data-pass=reverse]").wait_for()
    assert page.get_by_test_id("lesson-text").inner_text().startswith("Why “reverse”?")
    assert page.get_by_test_id("phase").get_attribute("data-phase") == "backward"


def test_the_counter_counts_nothing_before_there_is_a_graph(page):
    """A first program that does not parse has no pass to count: the counter is hidden, not
    "0 multiply-adds"; it counts the graph once there is one."""
    page.goto(f"/?source={quote('a = 2 +')}")
    page.get_by_test_id("error").wait_for()
    counter = page.get_by_test_id("pass-counter")
    assert counter.is_hidden()
    page.fill("#source", "a = 2\nb = a * a")
    page.wait_for_selector(READY)
    expect(counter).to_be_visible()
    assert counter.get_attribute("data-madds") == "2"
