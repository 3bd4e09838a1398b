"""Statements as groups, and semantic zoom, with a real mouse and keys.

A statement of several nodes is a labelled box (`[data-testid=group][data-collapsed=false]`) or,
collapsed, one card (`data-collapsed=true`, lit with `data-current=true` while the step shown is
inside). Graphs of 25 nodes or more open collapsed. Far out a card is its name and its colour
(`data-zoom=far` on the SVG); Fit keeps names readable and pans instead of shrinking past that.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from page_boxes import inside
from statement_programs import layered_program

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
GROUP = "[data-testid=group][data-group='{}']"
STEP = "document.body.dataset.stepIndex"
MLP_GROUPS = ["h1", "h2", "out", "loss"]

GROUPS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=group]')]
    .map((g) => [g.dataset.group, {collapsed: g.dataset.collapsed, current: g.dataset.current ?? null}]))"""
COUNTS_JS = """() => ({
    nodes: document.querySelectorAll('#graph [data-testid=node]').length,
    cards: document.querySelectorAll('#graph [data-testid=group][data-collapsed=true]').length,
    boxes: document.querySelectorAll('#graph [data-testid=group][data-collapsed=false]').length,
})"""
# Every card's box and the box of its name on screen, and the visible graph pane.
SCREEN_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
  const shown = (el) => getComputedStyle(el).display !== 'none' && el.getBoundingClientRect().height > 0;
  const cards = [...document.querySelectorAll('#graph [data-testid=node], #graph .group-card')];
  return {
    pane: box(document.querySelector('#graph-wrap')),
    cards: cards.map((c) => box(c.querySelector('.card'))),
    names: cards.flatMap((c) => [...c.querySelectorAll('.label, .label-compact')].filter(shown))
      .map((t) => box(t).height),
    zoom: document.querySelector('#graph').dataset.zoom,
  };
}"""


def open_preset(page, preset: str = "mlp") -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=group]').length > 0")


def open_program(page, source: str, query: str = "") -> None:
    page.goto(f"/?source={quote(source)}{query}")
    page.wait_for_selector(READY)
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length > 0"
    )


def groups(page) -> dict:
    return page.evaluate(GROUPS_JS)


def counts(page) -> dict:
    return page.evaluate(COUNTS_JS)


def card_box(page, name: str) -> dict:
    return page.locator(f"{GROUP.format(name)} .card").bounding_box()


def test_the_mlp_opens_with_each_statement_a_collapsed_card(page):
    open_preset(page)
    # The sort starts at the root: the card of `loss` is lit.
    assert groups(page) == {
        name: {"collapsed": "true", "current": str(name == "loss").lower()} for name in MLP_GROUPS
    }
    # 12 leaves and 4 statements: 16 cards for 29 nodes.
    assert counts(page) == {"nodes": 12, "cards": 4, "boxes": 0}
    h1 = page.locator(GROUP.format("h1"))
    assert h1.get_attribute("role") == "button"
    assert re.match(
        r"group h1 tanh: data --, grad --; 5 steps, collapsed", h1.get_attribute("aria-label")
    )
    # A small graph opens with every node and no box around one-node statements.
    page.goto("/?preset=add-mul")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length === 5"
    )
    assert counts(page) == {"nodes": 5, "cards": 0, "boxes": 0}
    assert page.locator("[data-testid=collapse-all]").is_hidden()


def test_a_click_or_enter_toggles_one_group_and_the_rest_keeps_its_order(page):
    open_preset(page)
    before = {name: card_box(page, name) for name in MLP_GROUPS}
    page.locator(GROUP.format("h1")).click()  # a real click, through the pan's pointer capture
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length === 17"
    )
    assert groups(page)["h1"]["collapsed"] == "false"
    assert {n: g["collapsed"] for n, g in groups(page).items() if n != "h1"} == dict.fromkeys(
        ["h2", "out", "loss"], "true"
    )
    # h1 opened where its card was; the others were pushed aside, in the same order.
    after = {name: card_box(page, name) for name in ["h2", "out", "loss"]}
    assert after["h2"]["y"] > before["h2"]["y"] - 0.5  # below h1: pushed down, not up
    assert after["out"]["x"] > before["out"]["x"]  # right of it: pushed right
    assert after["out"]["x"] < after["loss"]["x"]
    # The opened box has focus: Enter closes it again; Enter on a card opens it.
    assert page.evaluate("document.activeElement.dataset.group") == "h1"
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector(`{GROUP.format('h1')}`).dataset.collapsed === 'true'"
    )
    assert counts(page)["nodes"] == 12
    page.locator(GROUP.format("out")).focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector(`{GROUP.format('out')}`).dataset.collapsed === 'false'"
    )
    assert counts(page) == {"nodes": 17, "cards": 3, "boxes": 1}
    # Enter on a group is not the timeline's: the step did not move.
    assert page.evaluate(STEP) == "0"
    # The box's name tab closes it with the mouse.
    page.locator(f"{GROUP.format('out')} .frame-tab").click()
    page.wait_for_function(
        f"() => document.querySelector(`{GROUP.format('out')}`).dataset.collapsed === 'true'"
    )


def test_a_drag_on_a_card_pans_and_does_not_toggle(page):
    open_preset(page)
    box = card_box(page, "h2")
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    page.mouse.down()
    page.mouse.move(box["x"] + 80, box["y"] + 60, steps=5)
    page.mouse.up()
    assert groups(page)["h2"]["collapsed"] == "true"
    assert card_box(page, "h2")["x"] > box["x"] + 40


def test_collapse_all_and_expand_all(page):
    open_preset(page)
    collapsed_view = page.get_attribute("#graph .viewport", "transform")
    page.click("[data-testid=expand-all]")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length === 29"
    )
    assert counts(page) == {"nodes": 29, "cards": 0, "boxes": 4}
    assert page.get_attribute("[data-testid=expand-all]", "disabled") is not None
    # Each box is labelled with its statement as written.
    names = page.locator(".frame-name").all_text_contents()
    assert "\u25be h1 = tanh(w11*x1 + w12*x2 + b1)" in names
    assert "\u25be loss = (out - y)**2" in names
    # The view was fitted again to the bigger drawing.
    assert page.get_attribute("#graph .viewport", "transform") != collapsed_view
    page.click("[data-testid=collapse-all]")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length === 12"
    )
    assert counts(page) == {"nodes": 12, "cards": 4, "boxes": 0}
    assert page.get_attribute("#graph .viewport", "transform") == collapsed_view


def test_collapse_all_on_500_nodes_draws_at_most_a_card_per_statement(page):
    source = layered_program()
    statements = len(source.splitlines())
    assert statements == 60
    open_program(page, source, "&collapse_at=never")  # every node first
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length > 480"
    )
    everything = counts(page)
    assert everything["boxes"] == 50 and everything["cards"] == 0
    page.click("[data-testid=collapse-all]")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length < 100"
    )
    shown = counts(page)
    assert shown["nodes"] + shown["cards"] <= statements, shown
    assert shown == {"nodes": 10, "cards": 50, "boxes": 0}
    # By default a graph this big opens that way.
    open_program(page, source)
    assert counts(page) == shown


# Each drawn edge's two ends in the page's pixels, with the boxes of the cards it joins.
EDGE_ENDS_JS = """() => [...document.querySelectorAll('#graph path.edge')].map((path) => {
  const point = (length) => {
    const p = path.getPointAtLength(length);
    const m = path.getScreenCTM();
    return [p.x * m.a + p.y * m.c + m.e, p.x * m.b + p.y * m.d + m.f];
  };
  return { start: point(0), end: point(path.getTotalLength()) };
})"""
CARD_RECTS_JS = """() => [...document.querySelectorAll('#graph [data-testid=node], #graph [data-testid=group][data-collapsed=true]')]
  .map((card) => { const r = (card.querySelector('.card') ?? card).getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; })"""


@pytest.mark.parametrize("uses", [10, 40, 400])
def test_edges_into_a_collapsed_card_end_on_it_however_many(page, uses):
    # A stranger's test: `y = x*1 + x*2 + … + x*40`, collapsed, drew forty arrows stacked far
    # above and below both cards, touching neither (400: over the whole pane and its buttons).
    source = "x = 1.5\ny = " + " + ".join(f"x*{k}" for k in range(1, uses + 1))
    open_program(page, source, "&collapse_at=2")
    page.wait_for_function(
        "() => document.querySelector('#graph [data-testid=group][data-collapsed=true]')"
    )
    ends = page.evaluate(EDGE_ENDS_JS)
    cards = page.evaluate(CARD_RECTS_JS)
    assert len(ends) == uses and len(cards) == 2

    def on_a_card(x: float, y: float) -> bool:
        return any(x0 - 4 <= x <= x1 + 4 and y0 <= y <= y1 for x0, y0, x1, y1 in cards)

    assert all(on_a_card(*e["start"]) and on_a_card(*e["end"]) for e in ends), ends[:3]
    tools = page.locator("[data-testid=collapse-all]").bounding_box()
    # No edge reaches up over the graph's tools: every path stays within the cards' rows.
    tops = page.evaluate(
        "() => Math.min(...[...document.querySelectorAll('#graph path.edge')]"
        ".map((p) => p.getBoundingClientRect().top))"
    )
    assert tops > tools["y"] + tools["height"]


def test_stepping_through_a_collapsed_group_lights_its_card_and_names_the_inner_step(page):
    open_preset(page)
    page.click("[data-testid=jump-backward]")
    seen_inside = []
    for _ in range(40):
        narration = page.text_content("[data-testid=narration]")
        lit = [name for name, g in groups(page).items() if g["current"] == "true"]
        current_cards = page.locator("#graph [data-testid=node].current").count()
        if lit:
            assert len(lit) == 1 and current_cards == 0, (lit, narration)
            seen_inside.append((lit[0], narration))
        before = page.evaluate(STEP)
        page.keyboard.press("ArrowRight")
        if page.evaluate(STEP) == before:
            break
    inside_out = [text for name, text in seen_inside if name == "out"]
    # The narration keeps naming the inner steps while the card of `out` is lit.
    assert any(text.startswith("Visit v1*h1 + v2*h2 + c:") for text in inside_out), inside_out
    assert any(re.match(r"Visit v1.h1: grad\[v1\] \+=", text) for text in inside_out), inside_out
    assert {name for name, _ in seen_inside} == set(MLP_GROUPS)
    # A step inside a collapsed group refreshes a handful of elements, not the graph.
    refreshed = int(page.get_attribute("#graph", "data-last-draw-refreshed"))
    assert refreshed <= 12


def test_a_collapsed_card_shows_its_statements_value_and_gradient(page, live_server):
    import httpx

    open_preset(page)
    page.keyboard.press("End")
    reply = httpx.post(
        f"{live_server}/api/graph", json={"source": page.input_value("[data-testid=source]")}
    ).json()
    nodes = {n["id"]: n for n in reply["nodes"]}
    for group in reply["groups"]:
        if len(group["nodes"]) < 2:
            continue
        card = page.locator(GROUP.format(group["name"]))
        root = nodes[group["root"]]
        assert float(card.get_attribute("data-data")) == root["data"]
        assert float(card.get_attribute("data-grad")) == root["grad"]


def test_follow_inside_opens_the_group_the_step_is_in(page):
    open_preset(page)
    page.locator("[data-testid=follow-inside]").check()
    page.click("[data-testid=jump-backward]")
    opened = set()
    for _ in range(40):
        state = groups(page)
        shown = [name for name, g in state.items() if g["collapsed"] == "false"]
        assert len(shown) <= 1, state
        opened.update(shown)
        if shown:  # the inner node being visited is drawn, current, in its open box
            assert page.locator("#graph [data-testid=node].current").count() == 1
        before = page.evaluate(STEP)
        page.keyboard.press("ArrowRight")
        if page.evaluate(STEP) == before:
            break
    assert opened == set(MLP_GROUPS)
    assert all(g["collapsed"] == "true" for g in groups(page).values())  # at the end: leaves
    # Off again: the cards stay shut wherever the step is.
    page.locator("[data-testid=follow-inside]").uncheck()
    page.click("[data-testid=jump-backward]")
    page.keyboard.press("ArrowRight")
    assert all(g["collapsed"] == "true" for g in groups(page).values())


@pytest.fixture
def sized_page(page_at, request):
    width, height = request.param
    return page_at(width, height, timeout=15_000)


def settle(page) -> None:
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


@pytest.mark.parametrize("sized_page", [(1280, 720)], indirect=True, ids=["1280x720"])
def test_the_mlp_is_readable_whole_at_1280x720(sized_page):
    page = sized_page
    open_preset(page)
    settle(page)
    screen = page.evaluate(SCREEN_JS)
    assert len(screen["cards"]) == 16
    for card in screen["cards"]:
        assert inside(card, screen["pane"]), (card, screen["pane"])
    assert screen["zoom"] == "near"  # full cards: name, data and grad
    assert min(screen["names"]) >= 11, screen["names"]


@pytest.mark.parametrize("sized_page", [(3840, 2160)], indirect=True, ids=["3840x2160"])
def test_the_mlp_fills_the_pane_at_3840x2160(sized_page, screenshots_dir):
    page = sized_page
    open_preset(page)
    settle(page)
    screen = page.evaluate(SCREEN_JS)
    pane = screen["pane"]
    for card in screen["cards"]:
        assert inside(card, pane), (card, pane)
    left = min(c["left"] for c in screen["cards"])
    right = max(c["right"] for c in screen["cards"])
    top = min(c["top"] for c in screen["cards"])
    bottom = max(c["bottom"] for c in screen["cards"])
    # Fills the pane: across most of its height (the drawing's shape limits the other way).
    assert max((right - left) / pane["width"], (bottom - top) / pane["height"]) > 0.75
    assert min(screen["names"]) >= 30  # crisp: vector text at 3× the laptop's size
    page.screenshot(path=str(screenshots_dir / "groups-mlp-3840x2160.png"))


@pytest.mark.parametrize("sized_page", [(1280, 720)], indirect=True, ids=["1280x720"])
def test_semantic_zoom_far_cards_are_names_near_cards_are_whole(sized_page):
    page = sized_page
    open_preset(page)
    settle(page)
    pane = page.locator("#graph").bounding_box()
    x, y = pane["x"] + pane["width"] / 2, pane["y"] + pane["height"] / 2
    page.mouse.move(x, y)
    for _ in range(6):
        page.mouse.wheel(0, 120)  # zoom out
    page.wait_for_function("() => document.querySelector('#graph').dataset.zoom === 'far'")
    far = page.evaluate(SCREEN_JS)
    assert page.locator("#graph .node .value.data").first.is_hidden()
    assert page.locator("#graph .node .label-compact").first.is_visible()
    assert page.locator(f"{GROUP.format('h1')} .label-compact").text_content() == "h1"
    assert len(far["names"]) == 16  # one name per card, and only that
    for _ in range(12):
        page.mouse.wheel(0, -120)  # zoom in
    page.wait_for_function("() => document.querySelector('#graph').dataset.zoom === 'near'")
    assert page.locator("#graph .node .value.data").first.is_visible()
    assert page.locator("#graph .node .label-compact").first.is_hidden()


@pytest.mark.parametrize("sized_page", [(1280, 720)], indirect=True, ids=["1280x720"])
def test_fit_keeps_names_readable_and_pans_to_the_step(sized_page):
    """Every node of 500: too many to read at once, so Fit stops at the reading size, on the step."""
    page = sized_page
    open_program(page, layered_program(), "&collapse_at=never")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph [data-testid=node]').length > 480"
    )
    page.keyboard.press("End")
    page.click("#fit")
    settle(page)
    screen = page.evaluate(SCREEN_JS)
    assert screen["zoom"] == "far"
    shown_names = [h for h in screen["names"] if h > 0]
    assert min(shown_names) >= 10, min(shown_names)
    outside = [c for c in screen["cards"] if not inside(c, screen["pane"])]
    assert outside, "the graph is bigger than the pane: the reader pans"
    # The step shown (the last: a leaf's visit) is in view.
    current = page.locator("#graph [data-testid=node].current .card").bounding_box()
    assert current is not None
    box = {
        "left": current["x"],
        "top": current["y"],
        "right": current["x"] + current["width"],
        "bottom": current["y"] + current["height"],
    }
    assert inside(box, screen["pane"])


GRAPH_MARKUP_JS = """() => ['.layer-edges', '.layer-labels', '.layer-nodes', '.layer-group-cards']
    .map(s => document.querySelector('svg[data-testid=graph] ' + s).innerHTML).join('\\n')"""


def test_collapsed_frames_drawn_by_difference_equal_a_full_redraw(page):
    """The player's rule holds with groups collapsed: a step refreshes only what it touches."""
    open_preset(page)
    frames = int(page.get_attribute("[data-testid=scrub]", "max")) + 1
    for frame in range(1, frames):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => {STEP} === '{frame}'")
        if frame % 7 and frame < frames - 3:
            continue
        by_difference = page.evaluate(GRAPH_MARKUP_JS)
        for _ in range(2):
            page.click("#toggle-final-grads")
        assert page.evaluate(GRAPH_MARKUP_JS) == by_difference, f"frame {frame}"


@pytest.mark.parametrize("state", ["collapsed", "expanded"])
def test_screenshot_mlp_mid_backward(page_at, screenshots_dir, state):
    page = page_at(1280, 720)
    open_preset(page)
    if state == "expanded":
        page.click("[data-testid=expand-all]")
    page.click("[data-testid=jump-backward]")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    settle(page)
    page.screenshot(path=str(screenshots_dir / f"groups-mlp-{state}-1280x720.png"))
