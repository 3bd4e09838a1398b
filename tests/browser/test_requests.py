"""The latest request wins, really; the step is carried across a
new trace as (phase, position in phase); a new program starts at step 0; play survives a slider
drag; an unknown preset in the URL opens the first preset."""

from __future__ import annotations

import re
import time
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
STEP = "document.body.dataset.stepIndex"
ROOT_DATA = "document.querySelector('[data-testid=node][data-label=f]').dataset.data"
RECORD_ROOT_JS = """() => {
  window.rootValues = [];
  const card = document.querySelector('[data-testid=node][data-label=f]');
  new MutationObserver(() => window.rootValues.push(card.dataset.data))
    .observe(card, {attributes: true, attributeFilter: ['data-data']});
}"""


def open_page(page, preset: str | None = None) -> None:
    page.goto(f"/?preset={preset}" if preset else "/")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length > 0")


def step(page) -> int:
    return int(page.evaluate(STEP))


def phase(page) -> tuple[str, str]:
    return page.text_content("[data-testid=phase]"), page.text_content("#phase-part")


def type_value(page, name: str, text: str) -> None:
    box = page.locator(f"[data-testid=slider-{name}] input.slider-value")
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(text)


def test_a_superseded_reply_is_never_applied(page):
    open_page(page, "add-mul")  # f = (a + b) · c with a = 2, b = -3, c = 10: f = -10
    page.click("#to-end")  # the root's data shows once the forward pass computed it
    assert page.evaluate(ROOT_DATA) == "-10"
    page.evaluate(RECORD_ROOT_JS)
    held = []

    def hold_the_first(route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    # A value change asks for numbers (/api/values) when the page has the graph, else the graph.
    traces = re.compile(r".*/api/(graph|values)$")
    page.route(traces, hold_the_first)
    with page.expect_request(traces):
        type_value(page, "a", "4")  # f would be 10: this reply is held back...
    # The request event can come before the route's handler has run: let Playwright dispatch it.
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.evaluate("() => new Promise((resolve) => requestAnimationFrame(resolve))")
    assert len(held) == 1
    type_value(page, "a", "5")  # ...and superseded: f = 20
    held[0].continue_()  # the stale reply arrives now, before the newer one
    page.wait_for_function(f"() => {ROOT_DATA} === '20'")
    # The page paints its own numbers at each move (compute/instant-numbers.js): 10, then 20. The stale reply
    # (10) must never be drawn after 20: give it the time of a few frames to (not) land.
    held_reply_settled = "() => new Promise((r) => setTimeout(r, 300))"
    page.evaluate(held_reply_settled)
    shown = page.evaluate("window.rootValues")
    assert shown[-1] == "20" and "10" not in shown[shown.index("20") :], shown
    assert page.input_value("[data-testid=slider-a] input.slider-value") == "5"


def order_lab(page) -> None:
    page.click("#tab-labs")
    page.click("[data-testid=lab-order]")


def test_the_step_is_carried_as_phase_and_position(page):
    # shared: c = a·b; L = c + a. The order L, a, c visits c third (2 contributions); the
    # default order L, c, b, a visits b third (none): the frame indices differ from there on.
    open_page(page, "shared")
    order_lab(page)
    for label in "Lac":
        page.locator(f"[data-testid=node][data-label='{label}']").click()
    page.click("[data-testid=order-run]")
    page.wait_for_selector("[data-testid=order-verdict]")
    page.click("[data-testid=play]")  # the run replays itself: pause it
    page.wait_for_function(
        "() => document.querySelector('[data-testid=play]').getAttribute('aria-pressed') === 'false'"
    )
    page.click("[data-testid=jump-backward]")
    for _ in range(3):
        page.click("[data-testid=step-forward]")
    assert phase(page) == ("backward 3 / 3", "edge 1 of 2") and step(page) == 17
    page.click("[data-testid=order-clear]")  # the default order: the same program, new trace
    page.wait_for_function(
        "() => document.querySelector('[data-testid=phase]').textContent.endsWith('/ 4')"
    )
    assert phase(page) == ("backward 3 / 4", "")
    assert step(page) == 18
    assert page.text_content("[data-testid=narration]").startswith("Visit b")


def test_a_new_program_starts_at_step_0(page):
    open_page(page, "add-mul")
    page.click("#to-end")
    last = step(page)
    assert last > 10
    # An edited program.
    page.locator("[data-testid=source]").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\ng = f + 1")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("[data-testid=node][data-label=g]")
    page.wait_for_function(f"() => {STEP} === '0'")
    assert phase(page)[0].startswith("topo 1 / ")
    # The expand toggle: a new program too.
    page.click("#to-end")
    assert step(page) > 10
    page.click("#toggle-expand")
    page.wait_for_function(f"() => {STEP} === '0'")
    # Values of the same program keep the step.
    page.click("#to-end")
    last = step(page)
    type_value(page, "a", "7")
    page.wait_for_function("() => document.querySelector('[data-label=g]').dataset.data === '41'")
    assert step(page) == last


def test_play_keeps_playing_while_a_slider_is_dragged(page):
    open_page(page, "neuron")
    page.locator("#speed").select_option("4")
    page.click("[data-testid=play]")
    start = step(page)
    box = page.locator("[data-testid=slider-x1] input[type=range]").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.5, y)
    page.mouse.down()
    moved = 0
    for i in range(600):  # a slow drag, back and forth, until the timeline has moved on
        page.mouse.move(box["x"] + box["width"] * (0.3 + 0.4 * ((i % 20) / 20)), y)
        moved = step(page) - start
        if moved >= 3:
            break
    page.mouse.up()
    assert moved >= 3
    assert page.get_attribute("[data-testid=play]", "aria-pressed") == "true"


def test_an_unknown_preset_opens_the_first_preset(page, live_server):
    open_page(page, "no-such-preset")
    assert page.input_value("[data-testid=presets]") == "add-mul"
    labels = page.evaluate(
        "[...document.querySelectorAll('[data-testid=node]')].map(n => n.dataset.label).sort()"
    )
    assert labels == ["a", "b", "c", "e", "f"]
    assert page.evaluate("document.body.dataset.stepIndex") == "0"
    # It says so: a mistyped teacher's link no longer opens another program as if it were the one.
    note = page.get_by_test_id("link-note")
    expect(note.locator(".link-note-text")).to_have_text(
        "This link names a preset, “no-such-preset”, that is not here: showing “(a + b) · c”"
        " instead."
    )
    # Another program shown, the note is no longer about it.
    page.select_option("[data-testid=presets]", "diamond")
    expect(note).to_be_hidden()


def test_what_a_link_could_not_read_is_said_and_the_rest_is_opened(page):
    """A hand-edited link: what the page reads is opened (the preset, a value, the step), what it
    cannot read is named as written, whatever the link hides."""
    page.goto(
        "/?preset=add-mul&step=two&values=a:3,b:x&gradmap=yes&hide=editor,sidebar&lang=de&utm_source=mail"
    )
    page.wait_for_selector(READY)
    note = page.get_by_test_id("link-note")
    expect(note.locator(".link-note-text")).to_have_text(
        "Left out of this link, as the page cannot read it: values=b:x, step=two, gradmap=yes,"
        " hide=sidebar, lang=de."
    )
    assert page.input_value("[data-testid=presets]") == "add-mul"
    assert page.get_attribute("[data-testid=node][data-label=a]", "data-data") == "3"
    assert note.is_visible()  # the editor is hidden; the note is over the page, not in it
    page.get_by_role("button", name="Close the note about this link").click()
    expect(note).to_be_hidden()


def test_a_links_target_or_leaf_that_names_nothing_is_left_out_not_a_blank_page(page):
    """A hand-edited `target=` or forward mode's `wrt=` that names nothing in the program: the
    server refuses the request, and the page showed nothing (a dimmed pane, an error box; with
    `wrt=`, an empty leaf picker to recover with). It now asks again without it and says so."""
    note = page.get_by_test_id("link-note").locator(".link-note-text")
    page.goto("/?preset=neuron&target=nope&step=3")
    page.wait_for_selector(READY)
    expect(note).to_have_text(
        "This link's target, “nope”, names no node of this program: the gradients shown are"
        " its root's."
    )
    assert page.locator("[data-testid=error]").is_hidden()
    assert page.locator("[data-testid=node]").count() == 10
    page.wait_for_function("() => document.body.dataset.stepIndex === '3'")  # the rest of the link

    page.goto("/?preset=neuron&pass=forward&wrt=zzz")
    expect(note).to_have_text(
        "This link's leaf, “zzz”, is no leaf of this program: forward mode follows x1 instead."
    )
    page.locator("[data-testid=pass-counter][data-pass=forward]").wait_for()
    page.wait_for_selector(READY)
    assert page.input_value("[data-testid=wrt]") == "x1"
    assert page.locator("[data-testid=error]").is_hidden()


def test_a_link_says_what_it_names_twice_and_reads_a_spaced_element(page):
    """A field named twice: the first is read, the others said. A tensor element written with a
    space (`W[1, 2]`) is read as `W[1,2]`; a long name is said in 60 characters."""
    note = page.get_by_test_id("link-note").locator(".link-note-text")
    page.goto("/?preset=neuron&preset=diamond&step=1&step=2")
    page.wait_for_selector(READY)
    assert page.input_value("[data-testid=presets]") == "neuron"
    expect(note).to_have_text(
        "Left out of this link, as the page cannot read it: preset=diamond, step=2."
    )
    page.goto("/?preset=tensor-matmul&values=W[1,%202]:0.5")
    page.wait_for_function("() => location.search.includes('W%5B1%2C2%5D%3A0.5')")
    assert page.get_by_test_id("link-note").is_hidden()
    page.goto("/?preset=" + "x" * 5000)
    page.wait_for_selector(READY)
    expect(note).to_have_text(
        f"This link names a preset, “{'x' * 59}…”, that is not here: showing “(a + b) · c” instead."
    )


def test_a_link_cannot_write_html_into_its_note(page):
    """The note repeats what a link names: as text, never markup (an attack that must fail)."""
    payload = '<img src=x onerror="window.pwned=1">'
    target = "<script>window.pwned=2</script>"
    page.goto(f"/?preset={quote(payload)}&target={quote(target)}&step={quote(payload)}")
    page.wait_for_selector(READY)
    note = page.get_by_test_id("link-note")
    expect(note.locator(".link-note-text")).to_contain_text(f"“{target}”")
    assert payload in note.inner_text()
    assert note.locator("img, script").count() == 0
    assert page.evaluate("window.pwned") is None


def test_a_link_the_page_reads_whole_says_nothing(page):
    page.goto("/?preset=add-mul&step=3&values=a:3&gradmap=1&hide=editor&pass=reverse")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.body.dataset.stepIndex === '3'")
    assert page.get_by_test_id("link-note").is_hidden()


def test_only_the_latest_export_writes_the_status_line(page):
    open_page(page, "add-mul")
    held = []

    def hold_the_first(route) -> None:
        if held:
            body = '{"error": {"type": "Error", "message": "png broke"}}'
            route.fulfill(status=500, content_type="application/json", body=body)
        else:
            held.append(route)

    page.route("**/api/export**", hold_the_first)
    with page.expect_request("**/api/export**"):
        page.click("#export-button")
        page.click("[role=menuitem][data-format=svg]")
    page.click("#export-button")
    page.click("[role=menuitem][data-format=png]")
    status = page.locator(".share-status")
    page.wait_for_function(
        "() => document.querySelector('.share-status').textContent === 'Export failed: png broke'"
    )
    with page.expect_download():  # the older export still arrives, and still downloads...
        held[0].fulfill(status=200, content_type="image/svg+xml", body="<svg/>")
    assert status.text_content() == "Export failed: png broke"  # ...but says nothing over it
