"""The page in a real Chromium against the real server (issue 4's acceptance tests)."""

from __future__ import annotations

import math

import httpx
import pytest

from chainrule import engine

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
NODE_ATTRS_JS = """() => [...document.querySelectorAll('[data-testid=node]')].map(n => ({
    id: n.dataset.nodeId, label: n.dataset.label, data: n.dataset.data, grad: n.dataset.grad,
    place: [...n.children].filter(c => c.hasAttribute('x'))
      .map(c => `${c.getAttribute('class')}@${c.getAttribute('x')},${c.getAttribute('y')}`).join(' '),
    cls: n.getAttribute('class')}))"""


def api_graph(base_url: str, source: str, **extra) -> dict:
    response = httpx.post(f"{base_url}/api/graph", json={"source": source, **extra}, timeout=10)
    response.raise_for_status()
    return response.json()


def presets(base_url: str) -> list[dict]:
    """The menu's scalar presets (its tensor programs: test_tensor_page.py)."""
    scalar = {preset["id"] for preset in engine.PRESETS}
    menu = httpx.get(f"{base_url}/api/presets", timeout=10).json()
    return [preset for preset in menu if preset["id"] in scalar]


def open_page(page, preset: str | None = None) -> None:
    page.goto(f"/?preset={preset}" if preset else "/")
    page.wait_for_selector(READY)


def nodes(page) -> list[dict]:
    return page.evaluate(NODE_ATTRS_JS)


def by_label(page) -> dict[str, dict]:
    return {n["label"]: n for n in nodes(page) if n["label"]}


def type_program(page, source: str, node_count: int) -> None:
    """Replace the program, run it at once (Ctrl+Enter) and wait for its graph."""
    page.fill("[data-testid=source]", source)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=node]').length === n && "
        "!document.querySelector('[data-testid=error]').textContent",
        arg=node_count,
    )


def number(text: str) -> float:
    return float(text)  # "Infinity" / "NaN" parse too


def same_number(shown: str, expected) -> bool:
    a, b = number(shown), float(expected)
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_every_preset_ends_on_the_api_final_grads(page, live_server):
    # Every node's card: the MLP would open with its statements collapsed (test_groups.py).
    page.goto("/?collapse_at=never")
    page.wait_for_selector(READY)
    for preset in presets(live_server):
        trace = api_graph(live_server, preset["source"], values=preset.get("values") or None)
        page.select_option("[data-testid=presets]", preset["id"])
        expected_ids = sorted(n["id"] for n in trace["nodes"])
        # Not busy: the preset's own trace is the one shown. The page opens on the first preset,
        # so choosing it again shows the same cards at once, and its trace landing after End
        # below took the step back to 0 (a loaded fresh clone's run).
        page.wait_for_function(
            """ids => JSON.stringify([...document.querySelectorAll('[data-testid=node]')]
                 .map(n => n.dataset.nodeId).sort()) === JSON.stringify(ids)
                 && document.body.dataset.stepIndex === '0'
                 && document.querySelector('#graph-wrap').getAttribute('aria-busy') !== 'true'""",
            arg=expected_ids,
        )
        # Walk every frame before the seed: no gradient may show yet.
        leaked = page.evaluate("""() => {
            const leaks = [];
            const forward = document.querySelector('[data-testid=step-forward]');
            for (let guard = 0; guard < 100000; guard++) {
              const phase = document.body.dataset.phase;
              if (phase === 'seed' || phase === 'backward') break;
              for (const n of document.querySelectorAll('[data-testid=node]'))
                if (n.dataset.grad !== '') leaks.push([phase, n.dataset.nodeId, n.dataset.grad]);
              if (forward.disabled) break;
              forward.click();
            }
            return leaks;
          }""")
        assert leaked == [], (preset["id"], leaked[:5])
        page.keyboard.press("End")
        page.wait_for_selector("[data-testid=step-forward][disabled]")
        # The cards are drawn on a later frame than the transport's buttons: every card but a
        # constant's shows a gradient at the end.
        graded = [n["id"] for n in trace["nodes"] if n["kind"] != "const"]
        page.wait_for_function(
            """ids => ids.every((id) => document.querySelector(
                 `[data-testid=node][data-node-id="${id}"]`)?.dataset.grad)""",
            arg=graded,
        )
        shown = {n["id"]: n for n in nodes(page)}
        for node in trace["nodes"]:
            card = shown[node["id"]]
            assert same_number(card["data"], node["data"]), (preset["id"], node["id"])
            if node["kind"] == "const":
                assert card["grad"] == ""  # constants get a grad, the page does not show it
            else:
                assert card["grad"] == str(node["grad"]) or same_number(
                    card["grad"], node["grad"]
                ), (preset["id"], node["id"], card["grad"], node["grad"])


def test_a_times_a_accumulates_three_then_six(page):
    open_page(page)
    type_program(page, "a = 3; b = a * a", node_count=2)
    page.click("[data-testid=jump-backward]")
    page.keyboard.press("ArrowLeft")  # the seed: only the root has its gradient
    assert by_label(page)["a"]["grad"] == "" and by_label(page)["b"]["grad"] == "1"
    a_grads = []
    while True:
        a_grads.append(by_label(page)["a"]["grad"])
        if page.is_disabled("[data-testid=step-forward]"):
            break
        page.click("[data-testid=step-forward]")
    shown = [g for i, g in enumerate(a_grads) if g and (i == 0 or g != a_grads[i - 1])]
    assert shown == ["3", "6"], a_grads
    assert a_grads[0] == ""


def test_stepping_back_restores_the_start(page):
    open_page(page)
    snapshot = """() => JSON.stringify([
        [...document.querySelectorAll('[data-testid=node]')].map(n => [n.dataset.nodeId,
          n.dataset.data, n.dataset.grad, n.getAttribute('class')]),
        [...document.querySelectorAll('path.edge')].map(e => e.getAttribute('class')),
        document.querySelector('[data-testid=narration]').textContent,
        document.querySelector('[data-testid=phase]').textContent])"""
    start = page.evaluate(snapshot)
    assert page.is_disabled("[data-testid=step-back]")
    for _ in range(5):
        page.click("[data-testid=step-forward]")
    assert page.evaluate(snapshot) != start
    for _ in range(5):
        page.click("[data-testid=step-back]")
    assert page.evaluate(snapshot) == start
    # The same through the end of the timeline and back with the keyboard.
    page.keyboard.press("End")
    page.keyboard.press("Home")
    assert page.evaluate(snapshot) == start


def test_phase_indicator_and_switch(page):
    open_page(page, "add-mul")
    assert page.text_content("[data-testid=phase]").startswith("topo 1 / ")
    page.click("[data-testid=jump-forward]")
    assert page.text_content("[data-testid=phase]") == "forward 1 / 5"
    assert page.get_attribute("[data-testid=jump-forward]", "aria-pressed") == "true"
    page.click("[data-testid=jump-backward]")
    assert page.text_content("[data-testid=phase]") == "backward 1 / 5"
    assert by_label(page)["f"]["grad"] == "1"
    page.keyboard.press("ArrowLeft")
    assert page.text_content("[data-testid=phase]") == "seed"
    assert page.text_content("[data-testid=narration]").strip() != ""


def test_space_plays_to_the_end(page):
    open_page(page, "square")
    page.select_option("#speed", "16")
    page.keyboard.press("End")
    page.keyboard.press("Home")
    page.locator("body").focus()
    page.keyboard.press("Space")
    assert page.get_attribute("[data-testid=play]", "aria-label") == "Pause"
    page.wait_for_function(
        "() => document.querySelector('[data-testid=step-forward]').disabled && "
        "document.querySelector('[data-testid=play]').getAttribute('aria-label') === 'Play'",
        timeout=15_000,
    )
    assert by_label(page)["a"]["grad"] == "6"


def test_slider_changes_values_not_layout(page):
    open_page(page, "add-mul")
    page.click("[data-testid=jump-backward]")
    page.keyboard.press("ArrowRight")
    step = page.get_attribute("body", "data-step-index")
    before = by_label(page)
    box = page.locator("[data-testid=slider-a] input.slider-value")
    box.fill("4")  # fill dispatches `input`
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=node]')]"
        ".find(n => n.dataset.label === 'f').dataset.data === '10'"
    )
    after = by_label(page)
    assert after["e"]["data"] == "1" and after["f"]["data"] == "10"
    assert {k: v["place"] for k, v in after.items()} == {k: v["place"] for k, v in before.items()}
    assert page.get_attribute("body", "data-step-index") == step

    # A real mouse drag on the range: the root's data follows, the cards stay put.
    viewport = page.get_attribute("svg .viewport", "transform")
    slider = page.locator("[data-testid=slider-c] input[type=range]").bounding_box()
    y = slider["y"] + slider["height"] / 2
    page.mouse.move(slider["x"] + slider["width"] / 2, y)
    page.mouse.down()
    for i in range(1, 9):
        page.mouse.move(slider["x"] + slider["width"] * (0.5 + i * 0.05), y)
    page.mouse.up()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=node]')]"
        ".find(n => n.dataset.label === 'f').dataset.data !== '10'"
    )
    c_value = float(page.input_value("[data-testid=slider-c] input.slider-value"))
    page.wait_for_function(
        "v => [...document.querySelectorAll('[data-testid=node]')]"
        ".find(n => n.dataset.label === 'c').dataset.data === String(v)",
        arg=c_value,
    )
    dragged = by_label(page)
    assert float(dragged["f"]["data"]) == pytest.approx(1 * c_value)
    assert {k: v["place"] for k, v in dragged.items()} == {k: v["place"] for k, v in before.items()}
    assert page.get_attribute("svg .viewport", "transform") == viewport
    assert page.get_attribute("body", "data-step-index") == step


def test_a_slider_keeps_a_leafs_exact_value_and_steps_from_it(page):
    """The lecture's b = 6.8813735870195432 (issue 41): the number box shows it as given, the
    range holds it (not 6.9, a point of its 0.1 grid from -6.9), and one step (ArrowRight) moves
    the leaf to b + 0.1, not to 7."""
    b = 6.8813735870195432
    open_page(page, "neuron")
    row = "[data-testid=slider-b]"
    box, slider = f"{row} input.slider-value", f"{row} input[type=range]"
    assert page.input_value(box) == repr(b) == "6.881373587019543"
    assert float(page.input_value(slider)) == pytest.approx(b, abs=1e-13)  # a range: 15 digits
    step = float(page.get_attribute(slider, "step"))
    assert step == 0.1
    page.focus(slider)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "b => Number(document.querySelector('[data-testid=node][data-label=b]').dataset.data) !== b",
        arg=b,
    )
    moved = float(page.input_value(box))
    assert moved == b + step, moved  # 6.981373587019543, not 7.0
    assert float(page.get_attribute("[data-testid=node][data-label=b]", "data-data")) == moved
    page.keyboard.press("ArrowRight")  # the range still focused: a second step from the first
    page.wait_for_function(
        "v => Number(document.querySelector('[data-testid=node][data-label=b]').dataset.data) !== v",
        arg=moved,
    )
    assert float(page.input_value(box)) == (b + step) + step  # 7.0813735870195424


def slider_bounds(page, name: str) -> tuple[str, str, str, str]:
    row = f"[data-testid=slider-{name}]"
    return (
        page.input_value(f"{row} input.slider-min"),
        page.input_value(f"{row} input.slider-max"),
        page.get_attribute(f"{row} input.slider-range", "min"),
        page.get_attribute(f"{row} input.slider-range", "max"),
    )


def test_a_preset_from_the_menu_has_the_sliders_a_fresh_page_gives_it(page):
    # Found on a tour: after "Squared loss over four examples" (b = 0.1), "(a + b) · c" kept b's
    # range from it (-4.9 to 5.1) where a fresh page shows -9 to 3, and a range a user typed
    # stayed too: a preset looked different by what was opened before it.
    open_page(page, "add-mul")
    fresh = {name: slider_bounds(page, name) for name in "abc"}
    page.fill("[data-testid=slider-a] input.slider-min", "-100")
    page.press("[data-testid=slider-a] input.slider-min", "Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=slider-a] input.slider-range').min === '-100'"
    )
    page.select_option("#presets", "four-examples")
    page.wait_for_selector("[data-testid=slider-x11]")
    assert slider_bounds(page, "b")[:2] == ("-4.9", "5.1")
    page.select_option("#presets", "add-mul")
    page.wait_for_selector("[data-testid=node][data-label=f]")
    assert {name: slider_bounds(page, name) for name in "abc"} == fresh


def test_a_number_typed_past_the_range_widens_it_only_while_it_is_there(page):
    # Found by a stranger's test: `1e400` typed into a's box went through `1e40` on the way (a
    # finite value the slider's range was stretched to for good), then was kept silently.
    open_page(page, "relu")
    row = "[data-testid=slider-a]"
    box, card = f"{row} input.slider-value", "[data-testid=node][data-label=a]"
    before = slider_bounds(page, "a")
    page.click(box)
    page.keyboard.press("Control+A")
    page.keyboard.type("1e40")  # every key an `input`: 1, 1e, 1e4, 1e40
    page.wait_for_function(f"() => document.querySelector('{card}').dataset.data === '1e+40'")
    assert float(page.input_value(f"{row} input.slider-max")) >= 1e40  # held while it is there
    page.keyboard.type("0")  # 1e400: no finite number, the leaf keeps 1e40 …
    page.keyboard.press("Tab")  # … and says so when the box is left, showing the leaf's value
    note = page.locator(f"{row} [data-testid=slider-note]")
    assert note.is_visible()
    assert note.inner_text() == "Not a finite number: a keeps 1e+40."
    assert page.get_attribute(box, "aria-invalid") == "true"
    assert page.input_value(box) == "1e+40"
    page.fill(box, "3")  # back inside the bounds the typing began from: they are the slider's
    page.wait_for_function(f"() => document.querySelector('{card}').dataset.data === '3'")
    assert slider_bounds(page, "a")[:2] == before[:2]
    assert float(page.get_attribute(f"{row} input.slider-range", "max")) == float(before[3])
    assert note.is_hidden() and page.get_attribute(box, "aria-invalid") is None
    page.focus(f"{row} input.slider-range")
    page.keyboard.press("ArrowRight")  # one step of the slider's own grid, not 1e38
    page.wait_for_function(f"() => document.querySelector('{card}').dataset.data !== '3'")
    assert abs(float(page.get_attribute(card, "data-data")) - 3) <= 0.1


def test_a_long_leaf_name_is_cut_and_its_slider_keeps_its_width(page):
    # A stranger's test: a 63-character name took the whole row and left the range a dot.
    name = "a_really_really_long_variable_name_for_the_weight_of_layer_one"
    open_page(page)
    type_program(page, f"{name} = 2\nb = {name} * 3", 3)
    row = f"[data-testid=slider-{name}]"
    widths = page.evaluate(
        """row => Object.fromEntries(['slider-name', 'slider-range', 'slider-value'].map((c) =>
             [c, document.querySelector(`${row} .${c}`).getBoundingClientRect().width]))""",
        row,
    )
    whole = page.evaluate(f"() => document.querySelector('{row}').getBoundingClientRect().width")
    assert widths["slider-name"] <= 0.31 * whole, widths
    assert widths["slider-range"] >= 0.3 * whole, widths
    assert page.get_attribute(f"{row} .slider-name", "title") == name  # the whole name on hover


def test_a_running_sum_too_long_for_its_card_says_the_term_it_adds(page):
    # A stranger's reading of the lecture's MLP: cut at the card's edge, `w11*x1 + w12*x2` and
    # `w11*x1 + w12*x2 + b1` both read `w11*x1 +…`. The longer sum says what it adds; both say
    # their whole formula in their accessible names.
    page.goto("/?preset=mlp&collapse_at=never")
    page.wait_for_selector(READY)
    cards = page.locator("[data-testid=node][data-op='+']")
    said = {
        card.get_attribute("aria-label").rsplit("full name ", 1)[-1]: card.locator(
            ".label-name"
        ).text_content()
        for card in cards.all()
    }
    assert said == {
        "w11*x1 + w12*x2": "w11*x1 +",
        "w11*x1 + w12*x2 + b1": "\u2026 + b1",
        "w21*x1 + w22*x2": "w21*x1 +",
        "w21*x1 + w22*x2 + b2": "\u2026 + b2",
        "v1*h1 + v2*h2": "v1*h1 + v2*",
        "v1*h1 + v2*h2 + c": "\u2026 + c",
    }


CARD_PARTS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=node]')]
  .map(n => [n.dataset.nodeId, {
    transform: n.getAttribute('transform'),
    parts: [...n.children].filter(c => c.hasAttribute('x'))
      .map(c => [c.getAttribute('class'), Number(c.getAttribute('x')), Number(c.getAttribute('y'))]),
  }]))"""


def test_cards_sit_at_their_corners_by_their_parts_and_move_whole(page, live_server):
    """Cards are placed by their parts' x and y (no transform per card: each would be a paint
    chunk of its own); a card kept for a new layout moves every part with it, the dead tag that
    graph-hints.js adds included."""
    first = "a = -1.5\nb = relu(a)\nc = b * 2"
    second = first + "\nd = c + a * 3\ne = d * d"
    open_page(page)
    placed = {}
    for source in (first, second):
        layout = {n["id"]: n for n in api_graph(live_server, source)["nodes"]}
        type_program(page, source, len(layout))
        cards = page.evaluate(CARD_PARTS_JS)
        for node_id, card in cards.items():
            node = layout[node_id]
            assert card["transform"] is None
            frame = next(part for part in card["parts"] if part[0] == "card")
            corner = [node["x"] - node["width"] / 2, node["y"] - node["height"] / 2]
            assert frame[1:] == pytest.approx(corner), node_id
        placed[source] = cards
    relu = next(
        i for i, n in placed[first].items() if any(p[0] == "tag tag-dead" for p in n["parts"])
    )
    parts = {part[0]: part[1:] for part in placed[first][relu]["parts"]}
    # The dead tag sits over the card's top-left corner.
    assert parts["tag tag-dead"][0] - parts["card"][0] == pytest.approx(2)
    moved = 0
    for node_id, before in placed[first].items():
        after = placed[second][node_id]
        shift = [a - b for a, b in zip(after["parts"][0][1:], before["parts"][0][1:], strict=True)]
        moved += shift != [0, 0]
        assert [p[0] for p in after["parts"]] == [p[0] for p in before["parts"]]
        for was, now in zip(before["parts"], after["parts"], strict=True):
            assert [now[1] - was[1], now[2] - was[2]] == pytest.approx(shift), (node_id, now[0])
    assert moved and placed[second][relu]["parts"] != placed[first][relu]["parts"]


def test_parse_error_dims_the_graph_until_fixed(page):
    open_page(page, "add-mul")
    page.fill("[data-testid=source]", "a +")
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert error.get_attribute("role") == "alert"
    assert "line 1" in error.text_content()
    snippet = page.text_content("[data-testid=error] pre")
    assert snippet.splitlines()[0] == "a +" and "^" in snippet.splitlines()[1]
    assert "stale" in page.get_attribute("#graph-wrap", "class")
    assert len(nodes(page)) == 5  # the last good graph stays
    assert page.locator("#backdrop mark.error-mark").count() >= 1
    page.fill("[data-testid=source]", "a = 1\nb = a + 2")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length === 3")
    assert error.is_hidden()
    assert "stale" not in (page.get_attribute("#graph-wrap", "class") or "")
    assert page.locator("#backdrop mark").count() == 0


def test_typed_html_is_never_markup(page):
    open_page(page, "add-mul")
    hostile = "a = 1\nb = a + <img src=x onerror=alert(1)>"
    page.fill("[data-testid=source]", hostile)
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "<img src=x onerror=alert(1)>" in error.text_content()
    assert page.locator("[data-testid=error] img, #backdrop img, #gutter img").count() == 0
    assert page.locator("img").count() == 0
    assert page.text_content("#backdrop").startswith(hostile)
    assert "line 2" in error.text_content()
    assert page.dialogs == []


def test_network_failure_is_reported_and_recovers(page):
    open_page(page, "add-mul")
    page.route("**/api/graph", lambda route: route.abort())
    page.fill("[data-testid=source]", "a = 1; b = a * 5")
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "Could not reach the server" in error.text_content()
    page.unroute("**/api/graph")
    page.route(
        "**/api/graph", lambda route: route.fulfill(status=502, body="<html>bad gateway</html>")
    )
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=error]').textContent.includes('not JSON')"
    )
    page.unroute("**/api/graph")
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length === 3")
    assert error.is_hidden()


def test_every_asset_is_local(page, live_server):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    open_page(page)
    assert requests and all(url.startswith(live_server) for url in requests), requests


@pytest.mark.parametrize("size", [(1280, 720), (3840, 2160)], ids=["1280x720", "3840x2160"])
def test_screenshot_neuron_mid_backward(page_at, screenshots_dir, size):
    width, height = size
    page = page_at(width, height)
    open_page(page, "neuron")
    page.click("[data-testid=jump-backward]")
    for _ in range(4):
        page.click("[data-testid=step-forward]")
    assert page.text_content("[data-testid=phase]").startswith("backward")
    grads = [n["grad"] for n in nodes(page)]
    assert "" in grads and any(grads)  # mid-pulse: some reached, some not
    page.screenshot(path=str(screenshots_dir / f"neuron-mid-backward-{width}x{height}.png"))
    # Nothing may overflow the window at either size.
    overflow = page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth")
    assert not overflow
