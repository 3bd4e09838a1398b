"""One owner for the document's keys. Pick a preset with the mouse, press Space,
it plays; only real text entry swallows the transport keys; the panel tabs take their arrows; an
open dialog or menu takes every key."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
STEP = "document.body.dataset.stepIndex"
ACTIVE = "(() => { const el = document.activeElement; return el.id || el.dataset.testid || el.tagName; })()"


def open_page(page, preset: str | None = None) -> None:
    page.goto(f"/?preset={preset}" if preset else "/")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length > 0")


def step(page) -> int:
    return int(page.evaluate(STEP))


def playing(page) -> bool:
    return page.get_attribute("[data-testid=play]", "aria-pressed") == "true"


def pick_preset_with_the_mouse(page, live_server: str, preset_id: str) -> None:
    """Click the presets menu open, walk its list to `preset_id` and choose it with Enter."""
    ids = [""] + [p["id"] for p in httpx.get(f"{live_server}/api/presets", timeout=10).json()]
    select = page.locator("[data-testid=presets]")
    moves = ids.index(preset_id) - ids.index(select.input_value())
    select.click()  # opens the list; the keys below go to the list, not to the page
    for _ in range(abs(moves)):
        page.keyboard.press("ArrowDown" if moves > 0 else "ArrowUp")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "id => new URLSearchParams(location.search).get('preset') === id && "
        "document.querySelector('[data-testid=presets]').value === id",
        arg=preset_id,
    )
    page.wait_for_function("() => document.querySelector('[data-testid=node][data-label=L]')")
    assert page.evaluate(ACTIVE) == "presets"  # focus stays on the menu, as after any mouse pick


def test_space_plays_after_picking_a_preset_with_the_mouse(page, live_server):
    open_page(page)
    pick_preset_with_the_mouse(page, live_server, "shared")
    assert step(page) == 0 and not playing(page)
    page.keyboard.press("Space")
    page.wait_for_function(f"() => Number({STEP}) >= 2")
    assert playing(page)
    # The menu neither opened nor changed: a second Space reaches the page and pauses.
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=play]').getAttribute('aria-pressed') === 'false'"
    )
    assert page.input_value("[data-testid=presets]") == "shared"
    assert page.evaluate(ACTIVE) == "presets"
    # The phase jumps and the step keys work from the menu too, and do not pick a preset.
    page.keyboard.press("b")
    assert page.text_content("[data-testid=phase]") == "backward 1 / 4"
    page.keyboard.press("ArrowRight")
    assert page.text_content("#phase-part") == "edge 2 of 2"
    page.keyboard.press("f")
    assert page.text_content("[data-testid=phase]") == "forward 1 / 4"
    page.keyboard.press("End")
    assert page.is_disabled("[data-testid=step-forward]")
    page.keyboard.press("Home")
    assert step(page) == 0
    assert page.input_value("[data-testid=presets]") == "shared"


def test_only_text_entry_swallows_the_transport_keys(page):
    open_page(page, "add-mul")
    box = page.locator("[data-testid=scrub]").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 2, y)
    page.mouse.down()
    for i in range(1, 6):
        page.mouse.move(box["x"] + box["width"] * 0.1 * i, y)
    page.mouse.up()
    dragged = step(page)
    assert dragged > 0 and page.evaluate(ACTIVE) == "scrub"
    page.keyboard.press("ArrowRight")
    assert step(page) == dragged + 1
    page.keyboard.press("ArrowLeft")
    assert step(page) == dragged
    page.keyboard.press("Space")
    page.wait_for_function(f"s => Number({STEP}) > s", arg=dragged)
    assert playing(page)
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=play]').getAttribute('aria-pressed') === 'false'"
    )
    page.click("#to-start")
    page.click("[data-testid=step-forward]")
    assert step(page) == 1
    # A number box: the transport keys stay in the box.
    page.locator("[data-testid=slider-a] input.slider-value").click()
    for key in ("Space", "ArrowRight", "ArrowLeft", "End", "Home"):
        page.keyboard.press(key)
    assert step(page) == 1 and not playing(page)
    # A checkbox and a button keep Space: it toggles and presses them.
    page.locator("#toggle-final-grads").focus()
    page.keyboard.press("Space")
    assert page.is_checked("#toggle-final-grads") and not playing(page)
    page.keyboard.press("Space")
    assert not page.is_checked("#toggle-final-grads")
    page.locator("[data-testid=step-forward]").focus()
    page.keyboard.press("Space")
    assert step(page) == 2 and not playing(page)
    # The editor: Space types a space, the arrows move the caret (the edit is a new program).
    editor = page.locator("[data-testid=source]")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Home")
    page.keyboard.press("Space")
    assert editor.input_value().endswith("\n f = e * c ")
    assert not playing(page)


def test_arrow_keys_move_between_the_panel_tabs(page):
    open_page(page, "add-mul")
    tabs = page.evaluate("[...document.querySelectorAll('[role=tab]')].map(t => t.id)")
    assert len(tabs) >= 3
    assert page.get_attribute("#panel-tabs", "role") == "tablist"
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('role')") == "tab":
            break
    assert page.evaluate(ACTIVE) == tabs[0]

    def selected() -> list[str]:
        return page.evaluate(
            "[...document.querySelectorAll('[role=tab]')]"
            ".filter(t => t.getAttribute('aria-selected') === 'true').map(t => t.id)"
        )

    page.keyboard.press("ArrowRight")
    assert selected() == [tabs[1]] and page.evaluate(ACTIVE) == tabs[1]
    controls = page.get_attribute(f"#{tabs[1]}", "aria-controls")
    assert page.is_visible(f"#{controls}")
    assert page.get_attribute(f"#{tabs[1]}", "tabindex") == "0"
    assert page.get_attribute(f"#{tabs[0]}", "tabindex") == "-1"
    page.keyboard.press("End")
    assert selected() == [tabs[-1]]
    page.keyboard.press("ArrowRight")  # wraps to the first
    assert selected() == [tabs[0]]
    page.keyboard.press("ArrowLeft")
    assert selected() == [tabs[-1]]
    page.keyboard.press("Home")
    assert selected() == [tabs[0]]
    assert step(page) == 0  # the timeline never moved


def test_an_open_dialog_or_menu_takes_every_key(page):
    open_page(page, "add-mul")
    page.click("[data-testid=step-forward]")
    assert step(page) == 1
    page.keyboard.press("?")
    assert page.is_visible("#help-dialog")
    for key in ("ArrowRight", "End", "Home", "b", "f", "p", "?"):
        page.keyboard.press(key)
    assert step(page) == 1 and not playing(page)
    assert not page.evaluate("document.body.classList.contains('presenting')")
    page.keyboard.press("Escape")
    assert page.is_hidden("#help-dialog")
    assert page.evaluate(ACTIVE) == "step-forward"  # focus goes back where it was
    page.keyboard.press("ArrowRight")
    assert step(page) == 2

    # The Export menu: arrows move inside it, the timeline stays; Escape returns to its button.
    page.click("#export-button")
    assert page.is_visible("[role=menu]")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("End")
    assert step(page) == 2
    page.keyboard.press("Escape")
    assert page.is_hidden("[role=menu]") and page.evaluate(ACTIVE) == "export-button"

    # The micrograd script dialog (a text field inside): Escape closes it, focus returns.
    page.click("[data-testid=copy-micrograd]")
    page.wait_for_selector("#micrograd-dialog[open]")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Escape")
    page.wait_for_selector("#micrograd-dialog:not([open])", state="attached")
    assert step(page) == 2
    assert page.evaluate(ACTIVE) == "copy-micrograd"
