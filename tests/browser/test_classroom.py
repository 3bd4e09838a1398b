"""In a real Chromium: explanations, trace tables, toggles, sharing, export, the micrograd
script, presentation mode, keyboard-only use, axe-core and reduced motion."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from layout_check import axe_violations

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
PYTHON = Path(sys.executable)

EDGE_BY_NAME_JS = """name => [...document.querySelectorAll('[data-testid=edge]')]
    .find(e => e.getAttribute('aria-label').startsWith(name + ':')).dataset.edgeId"""


def open_preset(page, preset: str) -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length > 0")


def to_end(page) -> None:
    page.click("#to-end")
    page.wait_for_function("() => document.querySelector('[data-testid=step-forward]').disabled")


def edge(page, name: str):
    edge_id = page.evaluate(EDGE_BY_NAME_JS, name)
    return page.locator(f"[data-testid=edge][data-edge-id={edge_id}]")


def node(page, label: str):
    return page.locator(f"[data-testid=node][data-label='{label}']")


def explain_text(page) -> str:
    page.wait_for_selector("[data-testid=explain]:not([hidden])")
    return page.inner_text("[data-testid=explain]")


def grads_by_label(page) -> dict[str, str]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('[data-testid=node]')]
             .filter(n => n.dataset.label).map(n => [n.dataset.label, n.dataset.grad]))"""
    )


def test_edge_panel_shows_the_local_derivative_then_the_chain_rule(page):
    open_preset(page, "add-mul")
    page.keyboard.press("f")  # forward phase: the pulse has not come back yet
    edge(page, "edge e \u2192 f").click()
    text = explain_text(page)
    assert "\u2202f/\u2202e = c = 10" in text and "f = e\u00b7c" in text
    assert "\u00d7" not in text.split("\u2202f/\u2202e")[1].split("\n")[0]
    assert "has not reached this edge" in text
    to_end(page)  # the panel follows the timeline
    text = explain_text(page)
    assert "1 \u00d7 10 = 10" in text
    page.keyboard.press("Escape")
    assert page.is_hidden("[data-testid=explain]")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "edge e \u2192 f: \u2202f/\u2202e"
    )
    edge(page, "edge b \u2192 e").click()
    assert "\u2202e/\u2202b = 1" in explain_text(page)


def test_node_panel_sums_the_contributions_so_far(page):
    open_preset(page, "shared")
    page.keyboard.press("b")  # L's visit, first contribution (to c)
    page.keyboard.press("ArrowRight")  # second contribution: a gets 1·1
    node(page, "a").click()
    text = explain_text(page)
    assert "grad[a] = 1\u00b71 (via L = c + a) = 1" in text, text
    to_end(page)
    text = explain_text(page)
    assert "grad[a] = 1\u00b71 (via L = c + a) + 1\u00b73 (via c = a\u00b7b) = 1 + 3 = 4" in text, (
        text
    )


# Seed 000 (the MicroGPT chapter): stack and sortedNodes after each of the eight steps.
SEED_000 = [
    ("(L,0)", "[(L,1), (c,0)]", "[]"),
    ("(c,0)", "[(L,1), (c,1), (a,0)]", "[]"),
    ("(a,0)", "[(L,1), (c,1)]", "[a]"),
    ("(c,1)", "[(L,1), (c,2), (b,0)]", "[a]"),
    ("(b,0)", "[(L,1), (c,2)]", "[a, b]"),
    ("(c,2)", "[(L,1)]", "[a, b, c]"),
    ("(L,1)", "[(L,2)]", "[a, b, c]"),
    ("(L,2)", "[]", "[a, b, c, L]"),
]

TABLE_ROWS_JS = """id => [...document.querySelectorAll(`#panel-${id} tbody tr`)].map(tr =>
    ({step: tr.dataset.step, current: tr.classList.contains('current'),
      cells: [...tr.cells].map(td => td.textContent)}))"""


def test_sort_and_propagation_tables_follow_the_timeline(page, screenshots_dir):
    open_preset(page, "shared")
    page.click("#tab-sort")
    rows = page.evaluate(TABLE_ROWS_JS, "sort")
    assert rows[0]["cells"][1] == "(start)" and rows[0]["cells"][3] == "[(L,0)]"
    assert [(r["cells"][1], r["cells"][3], r["cells"][4]) for r in rows[1:]] == SEED_000
    assert rows[0]["current"] and sum(r["current"] for r in rows) == 1
    page.locator("#panel-sort tbody tr").nth(7).click()  # row 7: (L,1), a already visited
    assert page.evaluate("document.body.dataset.apiStep") == "7"
    assert "a" in page.inner_text("[data-testid=narration]")
    rows = page.evaluate(TABLE_ROWS_JS, "sort")
    assert [r["current"] for r in rows].index(True) == 7
    page.keyboard.press("ArrowRight")
    assert page.evaluate(TABLE_ROWS_JS, "sort")[8]["current"]

    page.click("#tab-propagation")
    page.keyboard.press("b")  # the first backward step: L's visit
    rows = page.evaluate(TABLE_ROWS_JS, "propagation")
    assert [r["cells"][1] for r in rows] == ["L", "L", "c", "b", "a"]
    assert rows[1]["current"] and rows[0]["cells"][0] == "seed"
    assert "grad[a] += 1 \u00d7 3 = 3  (now 4)" in rows[2]["cells"][3]
    # Keyboard: the row's step button jumps there.
    page.focus("#panel-propagation tbody tr:nth-child(3) .row-jump")
    page.keyboard.press("Enter")
    assert page.evaluate(TABLE_ROWS_JS, "propagation")[2]["current"]
    assert page.evaluate("document.body.dataset.apiStep") == rows[2]["step"]
    page.click("#tab-sort")
    page.locator("#panel-sort tbody tr").nth(3).click()
    page.locator("#panels").screenshot(path=str(screenshots_dir / "classroom-sort-table.png"))
    page.click("#tab-propagation")
    page.locator("#panel-propagation tbody tr").nth(2).click()
    page.locator("#panels").screenshot(
        path=str(screenshots_dir / "classroom-propagation-table.png")
    )


def test_the_current_row_is_followed_in_its_panel_never_by_scrolling_the_page(page):
    """Stepping with the keys while the graph is on screen keeps it there: the open table scrolls
    inside its panel to the current row; the document does not move."""
    page.emulate_media(reduced_motion="reduce")  # the panel's scroll is instant
    open_preset(page, "mlp")
    page.click("#tab-sort")
    page.evaluate("window.scrollTo(0, 0)")
    page.locator("[data-testid=graph]").click(position={"x": 8, "y": 8})
    for _ in range(50):  # the mlp's sort takes 60 steps: row 50 is far down its table
        page.keyboard.press("ArrowRight")
    assert page.evaluate("document.body.dataset.phase") == "topo"
    assert page.evaluate("window.scrollY") == 0
    shown = page.evaluate(
        """() => { const panels = document.querySelector('#panels').getBoundingClientRect();
                   const head = document.querySelector('#panel-sort thead').getBoundingClientRect();
                   const row = document.querySelector('#panel-sort tr.current').getBoundingClientRect();
                   return { scrolled: document.querySelector('#panels').scrollTop,
                            inside: row.top >= head.bottom - 1 && row.bottom <= panels.bottom + 1 }; }"""
    )
    assert shown["scrolled"] > 0 and shown["inside"], shown


def test_gradient_table_meaning_and_check(page, screenshots_dir):
    open_preset(page, "add-mul")
    page.click("#tab-gradients")
    assert "Run the backward pass" in page.inner_text("#panel-gradients")
    to_end(page)
    rows = page.evaluate(TABLE_ROWS_JS, "gradients")
    by_name = {r["cells"][0]: r["cells"] for r in rows}
    assert by_name["a"][1] == "10" and "f increases by about 10\u03b5" in by_name["a"][2]
    assert "f decreases by about \u03b5" in by_name["c"][2]
    assert by_name["a"][4].endswith("pass") and by_name["a"][3] == "10"
    page.locator("#panels").screenshot(path=str(screenshots_dir / "classroom-gradient-table.png"))
    page.keyboard.press("Home")
    page.check("#toggle-final-grads")  # final gradients at once fill it too
    assert "Run the backward pass" not in page.inner_text("#panel-gradients")


def test_dead_relu_and_warnings_in_words(page):
    open_preset(page, "add-mul")
    page.fill("[data-testid=source]", "a = -1\nx = 2\nb = relu(a)\nc = log(a)\nd = b * x + c")
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function("() => document.querySelector('[data-label=d]')")
    to_end(page)
    relu = node(page, "b")
    assert "dead" in (relu.get_attribute("class") or "")
    assert relu.locator(".tag-dead").is_visible()
    relu.hover()  # the tooltip is written while the pointer is on the card
    assert "dead: passes no gradient" in relu.locator("title").text_content()
    log = node(page, "c")
    assert log.locator(".tag-warning").text_content() == "\u26a0 not a real number"
    log.click()
    assert "log(\u22121) is not a real number" in explain_text(page)  # a number: the page's minus
    page.keyboard.press("Escape")
    relu.click()
    assert "passes no gradient" in explain_text(page)
    page.keyboard.press("Escape")
    page.click("#tab-gradients")
    assert "does not change d, to first order" in page.inner_text(
        "#panel-gradients tr[data-node-id=n1]"
    )


def test_fold_constants_expand_and_final_toggles(page):
    open_preset(page, "diamond")
    consts = page.locator("[data-testid=node].kind-const")
    assert consts.count() == 2 and consts.first.is_visible()
    page.check("#toggle-fold")
    assert not consts.first.is_visible()
    assert node(page, "b").locator(".op-folded").text_content() == "+ 1"
    assert node(page, "c").locator(".op-folded").text_content() == "\u00d7 3"
    assert node(page, "c").locator(".op-folded").is_visible()
    assert not node(page, "c").locator(".op-plain").is_visible()
    assert page.locator("[data-testid=edge][data-source-kind=const]").first.is_hidden()
    page.wait_for_function("() => location.search.includes('fold=1')")

    page.check("#toggle-final-grads")
    assert grads_by_label(page)["a"] == "15"  # at step 0, every final gradient at once
    page.uncheck("#toggle-final-grads")
    assert grads_by_label(page)["a"] == ""

    page.select_option("[data-testid=presets]", "division")
    page.wait_for_function("() => document.querySelector('[data-label=p]')")
    plain = page.locator("[data-testid=node]").count()
    with page.expect_request(lambda r: "/api/graph" in r.url) as request:
        page.check("#toggle-expand")
    assert request.value.post_data_json.get("expand_derived") is True
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=node]').length > n", arg=plain
    )
    ops = page.evaluate(
        "[...document.querySelectorAll('[data-testid=node].kind-op .op-plain')].map(t => t.textContent)"
    )
    assert "\u2212" not in ops and "\u00f7" not in ops  # primitives only


# The display of each travelling dot over the graph (the overlay, the graph's next sibling).
PULSE_DISPLAY_JS = """() => [...document.querySelectorAll('#graph-overlay circle.pulse')]
  .map((dot) => [dot.dataset.sourceKind, getComputedStyle(dot).display])"""


def test_folded_constants_send_no_dot_over_the_graph(page):
    """diamond's b = a + 1: with constants folded, the dot from the constant 1 to b is hidden
    like the constant's card and edge (classroom.css: a sibling rule, no `body:has()`), the dot
    from a is not."""
    open_preset(page, "diamond")
    page.check("#toggle-fold")
    page.focus("[data-testid=step-forward]")
    for _ in range(40):  # to b's forward step: its two inputs' dots
        page.keyboard.press("ArrowRight")
        dots = page.evaluate(PULSE_DISPLAY_JS)
        if ["const", "none"] in dots or ["const", "inline"] in dots:
            break
    assert sorted(dots) == [["const", "none"], ["leaf", "inline"]]
    page.uncheck("#toggle-fold")
    assert sorted(page.evaluate(PULSE_DISPLAY_JS)) == [["const", "inline"], ["leaf", "inline"]]


def test_a_link_naming_only_a_preset_keeps_its_toggles_values_and_step(page):
    """A hand-written link (`?preset=neuron&gradmap=1`) carries no program: the preset's is shown,
    with the link's toggles, values over the preset's, and step (they were dropped before)."""
    page.goto("/?preset=neuron&gradmap=1&final=1&fold=1&values=x1:3&step=4")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.body.dataset.stepIndex === '4'")
    assert page.is_checked("#toggle-gradmap") and page.is_checked("#toggle-final-grads")
    assert page.is_checked("#toggle-fold") and not page.is_checked("#toggle-expand")
    assert "gradmap" in page.get_attribute("[data-testid=graph]", "class").split()
    assert page.get_attribute("[data-label=x1]", "data-data") == "3"
    assert page.get_attribute("[data-label=w1]", "data-data") == "-3"  # the preset's own
    assert page.get_by_test_id("link-note").is_hidden()
    # The URL the page writes back keeps them, and says nothing of the default (reverse) pass.
    page.wait_for_function("() => location.search.includes('source=')")
    params = page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")
    assert params["preset"] == "neuron" and params["values"] == "x1:3" and params["step"] == "4"
    assert (params["gradmap"], params["final"], params["fold"]) == ("1", "1", "1")
    assert "pass" not in params


def test_shared_link_restores_program_values_toggles_and_step(page, browser, live_server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_preset(page, "shared")
    box = page.locator("[data-testid=slider-a] input.slider-value")
    box.fill("5")
    box.press("Enter")
    page.wait_for_function("() => document.querySelector('[data-label=a]').dataset.data === '5'")
    page.check("#toggle-fold")
    page.check("#toggle-final-grads")
    page.focus("[data-testid=step-forward]")
    for _ in range(7):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "() => /step=7(&|$)/.test(location.search) && location.search.includes('a%3A5')"
    )
    page.click("[data-testid=copy-link]")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=copy-link]').textContent === 'Link copied'"
    )
    link = page.evaluate("navigator.clipboard.readText()")
    assert link == page.url and "final=1" in link and "fold=1" in link

    context = browser.new_context(viewport={"width": 1280, "height": 720})
    other = context.new_page()
    try:
        other.goto(link)
        other.wait_for_selector(READY)
        other.wait_for_function("() => document.body.dataset.stepIndex === '7'")
        assert other.input_value("[data-testid=source]") == page.input_value("[data-testid=source]")
        assert other.get_attribute("[data-label=a]", "data-data") == "5"
        assert other.is_checked("#toggle-fold") and other.is_checked("#toggle-final-grads")
        assert not other.is_checked("#toggle-expand")
        assert other.inner_text("[data-testid=narration]") == page.inner_text(
            "[data-testid=narration]"
        )
        assert grads_by_label(other) == grads_by_label(page)
        assert other.get_by_test_id("link-note").is_hidden()  # the page reads its own links whole
    finally:
        context.close()


def test_a_program_too_long_for_a_link_is_kept_in_its_tab_and_shared_as_a_file(page, browser):
    # Found by a stranger's reload: a program whose query passed 64 KiB made the page's own URL
    # "Invalid HTTP request received." (uvicorn reads a request line of 64 KiB): the work gone.
    # Its text past the bound, its graph small (comments are text the link carries too).
    source = "a = 2\nL = a * 3\n" + "# a note kept with its program\n" * 2_000
    open_preset(page, "shared")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.evaluate("text => navigator.clipboard.writeText(text)", source)
    page.click("[data-testid=source]")
    page.keyboard.press("Control+A")
    page.keyboard.press("Control+V")  # pasted, as a learner does (typing it takes Playwright 17 s)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_selector("[data-testid=node][data-label=L]")
    page.wait_for_function("() => new URLSearchParams(location.search).get('kept') === '1'")
    assert "source=" not in page.url and len(page.url) < 1_000
    page.reload()
    page.wait_for_selector("[data-testid=node][data-label=L]")
    assert page.input_value("[data-testid=source]") == source
    assert page.get_by_test_id("link-note").is_hidden()
    # Shared: no link, but what shares it instead.
    page.click("[data-testid=copy-link]")
    too_long = page.get_by_test_id("link-too-long")
    too_long.wait_for()
    assert too_long.inner_text().startswith(
        f"This program is too long for a link ({len(source):,} characters)"
    )
    assert page.get_by_test_id("link-copy").is_disabled()
    assert page.get_by_test_id("link-dialog-text").is_hidden()
    page.keyboard.press("Escape")
    # The same URL in another browser: nothing is kept there, and its note says where it is.
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    other = context.new_page()
    try:
        other.goto(page.url)
        other.wait_for_selector(READY)
        note = other.get_by_test_id("link-note")
        note.wait_for()
        assert "kept only in the tab that made it" in note.inner_text()
    finally:
        context.close()


def export_download(page, fmt: str):
    page.click("#export-button")
    with page.expect_download() as info:
        page.click(f"[role=menuitem][data-format={fmt}]")
    return info.value


def test_export_downloads_named_by_what_they_are(page):
    """A preset's export is named by its id, a lesson's by its id, an edited program `program`;
    then its format (issue 41: every export was chainrule-graph.<format> or chainrule.html)."""
    open_preset(page, "add-mul")
    for fmt, magic in [("svg", b"<svg"), ("png", b"\x89PNG"), ("pdf", b"%PDF")]:
        download = export_download(page, fmt)
        assert download.suggested_filename == f"add-mul.{fmt}"
        content = Path(download.path()).read_bytes()
        assert magic in content[:400], content[:80]
    page.goto("/?lesson=neuron")
    page.wait_for_selector(READY)
    assert export_download(page, "svg").suggested_filename == "neuron.svg"
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    page.fill("[data-testid=source]", "u = 3\nv = u * u")
    page.wait_for_selector("[data-testid=node][data-label=v]")
    assert export_download(page, "svg").suggested_filename == "program.svg"


MICROGRAD_PRESETS = [
    "add-mul",
    "neuron",
    "shared",
    "relu",
    "softplus",
    "sigmoid-neuron",
    "division",
    "power",
]


def test_micrograd_script_reproduces_the_page_gradients(page, live_server, tmp_path):
    open_preset(page, "add-mul")
    sources = {p["id"]: p["source"] for p in httpx.get(f"{live_server}/api/presets").json()}
    for preset in MICROGRAD_PRESETS:
        trace = httpx.post(f"{live_server}/api/graph", json={"source": sources[preset]}).json()
        labels = sorted(f"{n['id']}:{n['label']}" for n in trace["nodes"])
        page.select_option("[data-testid=presets]", preset)
        page.wait_for_function(
            """labels => JSON.stringify([...document.querySelectorAll('[data-testid=node]')]
                 .map(n => n.dataset.nodeId + ':' + n.dataset.label).sort()) === JSON.stringify(labels)""",
            arg=labels,
        )
        to_end(page)
        leaves = page.evaluate(
            """() => [...document.querySelectorAll('[data-testid=node].kind-leaf')]
                 .map(n => [n.dataset.label, n.dataset.grad])"""
        )
        page.click("[data-testid=copy-micrograd]")
        page.wait_for_selector("#micrograd-dialog[open]")
        script = page.input_value("[data-testid=micrograd-dialog-text]")
        page.keyboard.press("Escape")
        page.wait_for_selector("#micrograd-dialog:not([open])", state="attached")
        assert "from micrograd.engine import Value" in script
        path = tmp_path / f"{preset}.py"
        path.write_text(script)
        result = subprocess.run(
            [str(PYTHON), str(path)], capture_output=True, text=True, timeout=30
        )
        assert result.returncode == 0, (preset, result.stderr, script)
        printed = dict(re.findall(r"^grad\[(\w+)\] = (\S+)$", result.stdout, re.M))
        assert set(printed) == {label for label, _ in leaves}, (preset, result.stdout)
        for label, shown in leaves:
            assert math.isclose(float(printed[label]), float(shown), rel_tol=1e-9, abs_tol=1e-12), (
                preset,
                label,
                printed[label],
                shown,
            )


def run_axe(page) -> list[dict]:
    """axe-core's violations, of every impact (every rule, the cards' label-in-name too)."""
    return axe_violations(page)


@pytest.mark.parametrize("phase", ["forward", "backward"])
def test_the_passes_pass_axe(page, phase):
    """The phase pill and the pressed phase button of each pass, in both themes: no serious
    violation (colour contrast of the coloured labels included)."""
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        page.goto("/?preset=shared")
        page.wait_for_selector(READY)
        page.click(f"[data-testid=jump-{phase}]")
        page.click("[data-testid=step-forward]")
        assert page.evaluate("document.body.dataset.phase") == phase
        assert run_axe(page) == [], theme


def test_keyboard_only_lesson_and_axe(page):
    page.goto("/")
    page.wait_for_selector(READY)
    focused = "document.activeElement"

    def tab_to(condition: str, limit: int = 80) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate(f"(() => {{ const el = {focused}; return Boolean({condition}); }})()"):
                return
        raise AssertionError(f"never focused: {condition}")

    tab_to("el.id === 'presets'")
    page.keyboard.type("c")  # "c = a · b; L = c + a": the shared preset
    page.wait_for_function("() => location.search.includes('preset=shared')")
    page.wait_for_function("() => document.querySelector('[data-label=L]')")
    tab_to("el.id === 'step-forward'")
    page.keyboard.press("b")  # the backward pass, first step: L's visit
    assert page.evaluate("document.body.dataset.phase") == "backward"
    page.keyboard.press("ArrowRight")  # its second contribution: grad[a] += 1 × 1
    assert grads_by_label(page)["a"] == "1"
    tab_to(
        "el.dataset.testid === 'edge' && el.getAttribute('aria-label').startsWith('edge a \u2192 L')",
        120,
    )
    page.keyboard.press("Enter")
    text = explain_text(page)
    assert "\u2202L/\u2202a = 1" in text and "1 \u00d7 1 = 1" in text
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.dataset.testid") == "edge"
    page.keyboard.press("End")
    assert grads_by_label(page)["a"] == "4"
    page.keyboard.press("p")
    assert page.evaluate("document.body.classList.contains('presenting')")
    assert page.is_hidden("#source")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.body.dataset.stepIndex") == "1"
    page.keyboard.press("?")
    assert page.is_visible("#help-dialog")
    assert run_axe(page) == []  # presentation mode with the help dialog open
    page.keyboard.press("Escape")
    assert page.is_hidden("#help-dialog") and page.evaluate(
        "document.body.classList.contains('presenting')"
    )
    page.keyboard.press("Escape")
    assert not page.evaluate("document.body.classList.contains('presenting')")
    assert run_axe(page) == []
    page.click("#tab-sort")
    page.click("#tab-gradients")
    assert run_axe(page) == []


def test_focus_is_visible_on_every_control(page):
    open_preset(page, "add-mul")
    outlines = page.evaluate(
        """() => {
          const out = [];
          for (const el of document.querySelectorAll('button:not([disabled]), select, input, textarea, [tabindex="0"]')) {
            if (!el.checkVisibility()) continue;
            el.focus({focusVisible: true});
            const cs = getComputedStyle(el);
            const visible = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2
              || el.matches('.edge-hit, [data-testid=node], textarea, [role=tab]');
            if (!visible) out.push(el.outerHTML.slice(0, 80));
          }
          return out;
        }"""
    )
    assert outlines == []


def test_presentation_mode_at_1920(page_at, screenshots_dir):
    page = page_at(1920, 1080)
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    page.click("[data-testid=present]")
    assert page.is_hidden(".sidebar") and page.is_hidden("#panels")
    page.keyboard.press("b")
    page.keyboard.press("ArrowRight")
    size = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('[data-testid=narration]')).fontSize)"
    )
    assert size >= 28
    page.screenshot(path=str(screenshots_dir / "classroom-presentation-1920.png"))
    edge(page, "edge e \u2192 f").click()
    page.screenshot(path=str(screenshots_dir / "classroom-presentation-edge-1920.png"))
    page.keyboard.press("Escape")
    page.keyboard.press("p")
    assert page.is_visible(".sidebar")


def test_reduced_motion_runs_no_long_animation(browser, live_server):
    context = browser.new_context(
        viewport={"width": 1280, "height": 720}, base_url=live_server, reduced_motion="reduce"
    )
    page = context.new_page()
    try:
        page.goto("/?preset=neuron")
        page.wait_for_selector(READY)
        page.select_option("#speed", "16")
        page.click("[data-testid=play]")
        samples = page.evaluate(
            """async () => {
              const seen = [];
              const longest = () => {
                for (const a of document.getAnimations()) {
                  const t = a.effect?.getTiming?.();
                  if (t && Number(t.duration) > 50) seen.push(String(a.animationName ?? a.transitionProperty ?? a.id));
                }
                for (const el of document.querySelectorAll('*')) {
                  const cs = getComputedStyle(el);
                  const secs = (v) => Math.max(...v.split(',').map(s => parseFloat(s) * (s.includes('ms') ? 0.001 : 1)));
                  if (secs(cs.transitionDuration) > 0.05 || secs(cs.animationDuration) > 0.05) seen.push(el.tagName + '.' + el.getAttribute('class'));
                }
                if (document.querySelector('animateMotion')) seen.push('animateMotion');
              };
              for (let i = 0; i < 8; i++) {
                longest();
                await new Promise(r => setTimeout(r, 60));
              }
              return seen;
            }"""
        )
        assert samples == []
        assert page.evaluate("Number(document.body.dataset.stepIndex)") > 0
    finally:
        context.close()


def test_micrograd_comments_cannot_end_their_line(page):
    """A lone carriage return ends a Python line: a program with one in a comment (a shared
    link can carry it) must not smuggle code out of the script's `# program:` comment."""
    open_preset(page, "add-mul")
    script = page.evaluate(
        r"""async () => {
             const reply = await fetch('/api/graph', {method: 'POST',
               headers: {'content-type': 'application/json'},
               body: JSON.stringify({source: 'a*b #\r__import__("os").system("id")'})});
             const { microgradScript } = await import('/static/js/io/micrograd.js');
             const { withStepObjects } = await import('/static/js/core/step-columns.js');
             return microgradScript(withStepObjects(await reply.json()));
           }"""
    )
    assert "\r" not in script
    code = [line for line in script.split("\n") if not line.lstrip().startswith("#")]
    assert not any("system" in line for line in code)
    assert "# program: a*b #" in script


def test_hover_span_counts_code_points_like_the_server(page):
    """The server counts positions in code points; an emoji in a comment must not shift marks."""
    open_preset(page, "add-mul")
    index = page.evaluate(
        r"""async () => {
             const { advanceCodePoints } = await import('/static/js/controls/editor.js');
             const source = '# \u{1F642} note\na*b + c';
             return source[advanceCodePoints(source, 0, 9)];
           }"""
    )
    assert index == "a"
