"""The page in English, Russian and Estonian (issue 14, part 2): `?lang=` (kept in links), else
the browser's Accept-Language, else English; the header's menu switches the language and keeps
the program, its values and the step. Every word is compared with the catalogue
(locales/<lang>.json through engine.i18n), never with a copy of it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from chainrule import engine
from chainrule.engine.i18n import text
from chainrule.engine.narration import narrations
from chainrule.engine.step_reader import step_objects

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
PLAYER = "[data-testid=player]"
BAD_PROGRAM = "a = 2\nb = a +"
# Latin words the Russian page may show: notation and names, as the catalogue's Russian keeps
# them (grad[…], data and grad on the cards, the math functions), file formats, key caps.
NOT_ENGLISH = {
    *("data", "grad", "relu", "tanh", "exp", "log", "sigmoid", "ReLU", "MLP", "ln", "nan", "inf"),
    "max",  # the gradient check's ε rule, 1e-6·max(1,|x|)
    *(
        "NaN",
        "chainrule",
        "micrograd",
        "torch",
        "PyTorch",
        "py",
        "Python",
        "SVG",
        "PNG",
        "PDF",
        "HTML",
    ),
    *("Ctrl", "Shift", "Enter", "Home", "End", "Esc", "Escape", "Tab"),
}


def ui(lang: str, key: str, **params) -> str:
    return text(lang, f"ui.{key}", **params)


def open_page(page, query: str = "") -> None:
    page.goto(f"/{query}")
    page.wait_for_selector(READY)


def api_trace(live_server: str, lang: str, source: str, values: dict | None = None) -> dict:
    body = {"source": source, **({"values": values} if values else {})}
    response = httpx.post(f"{live_server}/api/graph?lang={lang}", json=body, timeout=30)
    response.raise_for_status()
    return response.json()


def add_mul(live_server: str, lang: str) -> dict:
    preset = next(p for p in engine.PRESETS if p["id"] == "add-mul")
    return api_trace(live_server, lang, preset["source"], preset.get("values") or None)


def shown_step(page) -> int:
    """The API step the page shows (the frame's step)."""
    return int(page.evaluate("document.body.dataset.apiStep"))


def narration(page) -> str:
    return page.locator("[data-testid=narration]").text_content()


def aria(page, selector: str) -> str | None:
    return page.locator(selector).get_attribute("aria-label")


def error_of(source: str) -> engine.ProgramError:
    with pytest.raises(engine.ProgramError) as caught:
        engine.trace(source)
    return caught.value


@pytest.mark.parametrize("lang", ["ru", "et"])
def test_the_page_speaks_the_language_of_its_link(page, live_server, lang):
    open_page(page, f"?lang={lang}")
    assert page.evaluate("document.documentElement.lang") == lang
    assert page.title() == ui(lang, "page.title")
    assert page.locator("[data-testid=lang]").input_value() == lang
    # The header
    assert page.locator("[data-testid=copy-link]").text_content() == ui(lang, "share.button")
    assert page.locator("#export-button").text_content() == ui(lang, "export.menu")
    assert page.locator("[data-testid=present]").text_content() == ui(lang, "present.button")
    assert aria(page, "#help") == ui(lang, "help.button")
    mode = ui(lang, "theme.auto")
    assert aria(page, "#theme-toggle") == ui(lang, "theme.label", mode=mode)
    # A preset's title and note, the menus
    presets = page.locator("[data-testid=presets]")
    assert presets.locator("option:checked").text_content() == text(lang, "preset.add-mul.title")
    assert presets.locator("option").first.text_content() == ui(lang, "presets.menu")
    assert page.locator("#preset-note").text_content() == text(lang, "preset.add-mul.note")
    assert page.locator("#lessons option").first.text_content() == ui(lang, "lessons.menu")
    # The transport
    for selector, key in [
        ("#to-start", "transport.first"),
        ("[data-testid=step-back]", "transport.back"),
        ("[data-testid=play]", "transport.play"),
        ("[data-testid=step-forward]", "transport.forward"),
        ("#to-end", "transport.last"),
        ("[data-testid=scrub]", "transport.scrub"),
    ]:
        assert aria(page, selector) == ui(lang, key), selector
    assert page.locator("#jump-forward").text_content() == ui(lang, "transport.jump_forward")
    assert page.locator("#jump-backward").text_content() == ui(lang, "transport.jump_backward")
    # The tabs
    for tab in ("sort", "propagation", "gradients", "labs"):
        assert page.locator(f"#tab-{tab}").text_content() == ui(lang, f"tab.{tab}")

    # A step's narration and phase: the seed, then the first visit.
    trace = add_mul(live_server, lang)
    backward = [k for k, step in enumerate(step_objects(trace)) if step["phase"] == "backward"]
    page.click("#jump-backward")
    page.click("[data-testid=step-back]")
    assert page.locator("[data-testid=phase]").text_content() == ui(lang, "phase.seed")
    assert narration(page) == text(lang, "narration.seed", name="f")
    page.click("[data-testid=step-forward]")
    phase = ui(lang, "phase.backward", position=1, count=len(backward))
    assert page.locator("[data-testid=phase]").text_content() == phase
    assert shown_step(page) == backward[0]
    english = narrations(add_mul(live_server, "en"))[backward[0]]
    assert narration(page) == narrations(trace)[backward[0]] != english

    # A typed program's error, and where it is
    page.fill("[data-testid=source]", BAD_PROGRAM)
    page.press("[data-testid=source]", "Control+Enter")
    box = page.locator("[data-testid=error]")
    box.wait_for(state="visible")
    error = error_of(BAD_PROGRAM)
    assert box.locator(".error-message").text_content() == error.message_in(lang)
    where = ui(lang, "error.where", line=error.line, column=error.column)
    assert box.locator(".error-where").text_content() == where
    assert error.message_in(lang) != error.message_in("en")


def test_the_browsers_language_is_the_pages_without_a_link_language(browser, live_server):
    context = browser.new_context(
        base_url=live_server,
        viewport={"width": 1280, "height": 720},
        extra_http_headers={"Accept-Language": "ru-RU,ru;q=0.9,en;q=0.5"},
    )
    page = context.new_page()
    try:
        open_page(page)
        assert page.evaluate("document.documentElement.lang") == "ru"
        assert page.locator("[data-testid=copy-link]").text_content() == ui("ru", "share.button")
        assert narration(page) == narrations(add_mul(live_server, "ru"))[0]
        # The link leaves the language to whoever opens it: no lang= in it.
        page.click("[data-testid=step-forward]")
        page.wait_for_function("() => location.search.includes('step=1')")
        assert "lang=" not in page.url
    finally:
        context.close()


PROGRAM = "x = 3\nw = -2\ny = x * w + x"


def state_of(page) -> dict:
    return {
        "source": page.locator("[data-testid=source]").input_value(),
        "w": page.locator("[data-testid=slider-w] input.slider-value").input_value(),
        "step": page.evaluate("document.body.dataset.stepIndex"),
        "w_card": page.locator("[data-testid=node][data-label=w]").get_attribute("data-data"),
    }


def test_switching_the_language_keeps_the_program_its_values_and_the_step(page, live_server):
    open_page(page)
    page.fill("[data-testid=source]", PROGRAM)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length === 4")
    page.locator("[data-testid=slider-w] input[type=range]").press("ArrowRight")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=node][data-label=w]').dataset.data !== '-2'"
    )
    for _ in range(3):
        page.click("[data-testid=step-forward]")
    before = state_of(page)
    assert before["step"] == "3" and before["w"] != "-2" and before["w"] == before["w_card"]

    for lang in ("ru", "et"):
        with page.expect_navigation():
            page.select_option("[data-testid=lang]", lang)
        page.wait_for_selector(READY)
        page.wait_for_function("s => document.body.dataset.stepIndex === s", arg=before["step"])
        assert page.evaluate("document.documentElement.lang") == lang
        # The URL follows the state after a pause (io/share.js): wait for it rather than read it now.
        page.wait_for_function("lang => location.search.includes('lang=' + lang)", arg=lang)
        assert state_of(page) == before
        assert page.locator("[data-testid=lang]").input_value() == lang
        assert page.locator("[data-testid=copy-link]").text_content() == ui(lang, "share.button")
        trace = api_trace(live_server, lang, PROGRAM, {"w": float(before["w"])})
        assert narration(page) == narrations(trace)[shown_step(page)]


def test_links_keep_the_language(page):
    open_page(page, "?lang=et")
    page.click("[data-testid=step-forward]")
    page.wait_for_function("() => location.search.includes('step=1')")
    assert "lang=et" in page.url
    page.click("[data-testid=copy-link]")
    page.locator("#link-dialog[open]").wait_for()
    link = page.locator("[data-testid=link-dialog-text]").input_value()
    assert "lang=et" in link and "step=1" in link
    assert page.locator("#link-dialog-title").text_content() == ui("et", "share.dialog_title")
    # An unknown language is no language: the page is English and its links name none.
    open_page(page, "?lang=xx")
    assert page.evaluate("document.documentElement.lang") == "en"
    page.click("[data-testid=step-forward]")
    page.wait_for_function("() => location.search.includes('step=1')")
    assert "lang=" not in page.url


# Every text node and every attribute a person (or a screen reader) reads, with what it is in.
WORDS_SHOWN = """() => {
  const out = [];
  const skip = 'script, style, textarea, pre, code, kbd, #lang';
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip) || !node.textContent.trim()) continue;
    out.push([parent.closest('[data-testid=node]') ? 'card' : 'text', node.textContent]);
  }
  for (const el of document.querySelectorAll('*')) {
    if (el.closest(skip)) continue;
    for (const name of ['aria-label', 'title', 'aria-description', 'placeholder', 'data-empty',
                        'data-stale']) {
      const value = el.getAttribute(name);
      if (value) out.push([name, value]);
    }
  }
  return out;
}"""


def test_no_english_is_left_on_the_russian_page(page, live_server):
    open_page(page, "?lang=ru")
    trace = add_mul(live_server, "ru")
    names = {word for node in trace["nodes"] for word in re.findall(r"[A-Za-z]\w*", node["text"])}
    page.click("#jump-backward")
    page.click("[data-testid=step-forward]")
    shown: list[list[str]] = []
    for tab in ("sort", "propagation", "gradients", "labs"):
        page.click(f"#tab-{tab}")
        shown += page.evaluate(WORDS_SHOWN)
    # Every lab on, in turn (each shows its own words), the order lab with a placed order.
    for lab in ("lab-overwrite", "lab-order", "lab-predict", "lab-train"):
        page.click(f"[data-testid={lab}]")
        page.wait_for_timeout(200)
        shown += page.evaluate(WORDS_SHOWN)
    page.click("[data-testid=lab-order]")
    page.click("[data-testid=node][data-label=f]")
    page.click("[data-testid=order-run]")
    page.locator("[data-testid=order-verdict]").wait_for()
    shown += page.evaluate(WORDS_SHOWN)
    page.click("[data-testid=lab-order]")
    # The end of the pass (the gradient table), an explanation, the dialogs
    page.click("#to-end")
    page.click("#tab-gradients")
    page.locator("[data-testid=node][data-label=e]").click()
    page.locator("[data-testid=explain]").wait_for()
    shown += page.evaluate(WORDS_SHOWN)
    page.keyboard.press("Escape")
    page.click("#help")
    shown += page.evaluate(WORDS_SHOWN)
    page.keyboard.press("Escape")
    page.click("[data-testid=copy-link]")
    page.locator("#link-dialog[open]").wait_for()
    shown += page.evaluate(WORDS_SHOWN)

    assert english_in(shown, NOT_ENGLISH | names) == []
    assert len(shown) > 300  # the walk saw the page, the panels and the dialogs


def english_in(shown: list[list[str]], allowed: set[str]) -> list[tuple[str, str]]:
    """What the walk saw with a Latin word that is not `allowed`: English left on the page."""
    return sorted(
        {
            (where, words)
            for where, words in shown
            if set(re.findall(r"[A-Za-z]{2,}", words)) - allowed
        }
    )


def preset_names(live_server: str, lang: str, preset_id: str) -> set[str]:
    """The names a preset's program writes (its leaves, its statements' names and functions)."""
    preset = next(p for p in engine.PRESETS if p["id"] == preset_id)
    trace = api_trace(live_server, lang, preset["source"], preset.get("values") or None)
    return set(re.findall(r"[A-Za-z]\w*", preset["source"])) | {
        word for node in trace["nodes"] for word in re.findall(r"[A-Za-z]\w*", node["text"])
    }


GROUP_CARD = "#graph [data-testid=group][data-collapsed=true][data-group=h1]"
WEBGL = "() => !!document.createElement('canvas').getContext('webgl2')"


def test_no_english_is_left_on_the_russian_page_of_a_big_program(page, live_server):
    """What a big program brings: the statement groups (their tools, a collapsed statement's
    card and its tooltip, the expanded boxes, the tools' note while a lab is on), the leaf filter
    and its groups, the gradient map's legend, the minimap, the 2D | 3D switch and the 3D view."""
    open_page(page, "?preset=mlp&lang=ru")
    shown: list[list[str]] = []
    assert page.locator(".group-tools").is_visible()
    assert page.locator("[data-testid=leaf-filter]").is_visible()
    # Mid-backward with the gradient map on: every bucket of the legend, "not yet" among them.
    page.click("#jump-backward")
    for _ in range(3):
        page.click("[data-testid=step-forward]")
    page.locator("[data-testid=gradmap]").check()
    page.locator("[data-testid=gradmap-legend]").wait_for()
    # A collapsed statement's card: its tooltip is written when the pointer reaches it (a
    # dispatched event: followed, the view may have left this card under the sidebar).
    page.dispatch_event(GROUP_CARD, "pointerover")
    page.wait_for_function(f"() => document.querySelector('{GROUP_CARD} title').textContent")
    shown += page.evaluate(WORDS_SHOWN)
    # Follow inside, the leaf filter's count, then every statement expanded in its box
    page.locator("[data-testid=follow-inside]").check()
    page.fill("[data-testid=leaf-filter]", "w")
    page.locator(".leaf-filter-count").wait_for()
    shown += page.evaluate(WORDS_SHOWN)
    page.click("[data-testid=expand-all]")
    page.wait_for_selector("#graph [data-testid=group][data-collapsed=false]")
    shown += page.evaluate(WORDS_SHOWN)
    # A lab draws every node: the group tools say so.
    page.click("#tab-labs")
    page.click("[data-testid=lab-overwrite]")
    page.wait_for_function("() => document.querySelector('.group-tools').title")
    shown += page.evaluate(WORDS_SHOWN)
    page.click("[data-testid=lab-overwrite]")
    # The 3D view, where this browser has WebGL (else its note).
    webgl = page.evaluate(WEBGL)
    page.click("[data-testid=view-3d]")
    if webgl:
        page.wait_for_function(
            "() => document.querySelector('[data-testid=graph-3d]').dataset.frame"
            " === document.body.dataset.stepIndex"
        )
    else:
        page.wait_for_selector("[data-testid=view-3d-note]:not([hidden])")
    shown += page.evaluate(WORDS_SHOWN)

    names = preset_names(live_server, "ru", "mlp")
    assert english_in(shown, NOT_ENGLISH | names) == []
    # The walk saw the tools' words, each in Russian.
    said = {words.strip() for _, words in shown}
    for key in ("groups.collapse_all", "groups.expand_all", "groups.follow_inside",
                "groups.locked", "gradmap.not_yet", "gradmap.signs", "leaves.other",
                "leaves.filter_placeholder", "minimap.title", "view3d.switch_label"):  # fmt: skip
        assert ui("ru", key) in said, key
    if webgl:
        assert ui("ru", "view3d.canvas") in said


def test_the_3d_views_notes_speak_the_pages_language(page):
    # three.js does not load: the note says so, in Russian.
    page.route("**/vendor/three/**", lambda route: route.abort())
    open_page(page, "?lang=ru")
    page.click("[data-testid=view-3d]")
    note = page.wait_for_selector("[data-testid=view-3d-note]:not([hidden])")
    assert note.text_content() == ui("ru", "view3d.failed")
    # A count in a note is grouped as Russian writes it (the size note: 1 500 nodes).
    grouped = page.evaluate(
        """async () => {
            const main = document.querySelector('script[type=module][src]').src;
            const format = await import(new URL('core/format.js', main).href);
            return [format.countText(1500), format.countText(20000), format.countText(999)];
        }"""
    )
    assert grouped == ["1\u00a0500", "20\u00a0000", "999"]


def test_a_missing_word_shows_its_key_and_says_so_on_the_console(page):
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    open_page(page, "?lang=ru")
    said = page.evaluate(
        """async () => {
            const main = document.querySelector('script[type=module][src]').src;
            const i18n = await import(new URL('core/i18n.js', main).href);
            return [i18n.lang(), i18n.t('ui.no.such.word'), i18n.t('ui.slider.value'),
                    i18n.t('ui.slider.value', { name: 'a' })];
        }"""
    )
    template = text("ru", "ui.slider.value")
    assert said == ["ru", "ui.no.such.word", template, template.replace("{name}", "a")]
    assert len(errors) == 2
    assert "ui.no.such.word" in errors[0] and "{name}" in errors[1]


def test_the_one_file_player_speaks_the_language_it_was_exported_in(browser, live_server, tmp_path):
    preset = next(p for p in engine.PRESETS if p["id"] == "add-mul")
    response = httpx.post(
        f"{live_server}/api/export?format=html&lang=ru", json={"source": preset["source"]}
    )
    response.raise_for_status()
    path: Path = tmp_path / "ru.html"
    path.write_bytes(response.content)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.wait_for_selector(f"{PLAYER} {READY}")
        assert page.evaluate("document.documentElement.lang") == "ru"
        assert page.locator(PLAYER).get_attribute("lang") == "ru"
        assert aria(page, f"{PLAYER} [data-testid=play]") == ui("ru", "transport.play")
        assert page.locator(f"{PLAYER} #tab-sort").text_content() == ui("ru", "tab.sort")
        assert narration(page) == narrations(add_mul(live_server, "ru"))[0]
    finally:
        context.close()


def screen_state(page) -> dict:
    return page.evaluate(
        """() => ({
            header: document.querySelector('.topbar').scrollWidth - document.querySelector('.topbar').clientWidth,
            page: document.documentElement.scrollWidth - window.innerWidth,
            transport: document.querySelector('#transport').getBoundingClientRect().height,
            items: [...document.querySelectorAll('.topbar button, .topbar select, .topbar h1')]
                .filter((e) => e.offsetParent).map((e) => e.getBoundingClientRect().right),
        })"""
    )


@pytest.mark.parametrize(
    ("lang", "size", "tab"),
    [("ru", (1280, 720), "propagation"), ("et", (1280, 720), "labs"), ("et", (390, 844), "sort")],
    ids=["ru-1280", "et-1280", "et-390"],
)
def test_screenshots_mid_backward_with_a_panel_open(page_at, screenshots_dir, lang, size, tab):
    width, height = size
    page = page_at(width, height)
    open_page(page, f"?lang={lang}&preset=diamond")
    page.click("#jump-backward")
    page.click("[data-testid=step-forward]")
    page.click(f"#tab-{tab}")
    page.evaluate("window.scrollTo(0, 0)")
    seen = screen_state(page)
    assert seen["header"] <= 0 and seen["page"] <= 0, seen  # nothing runs off to the side
    assert max(seen["items"]) <= width, seen
    if width >= 1280:
        assert seen["transport"] < 70, seen  # the transport bar keeps to one row
    page.screenshot(path=str(screenshots_dir / f"lang-{lang}-{width}.png"), full_page=True)


# The graph pane's overlays: the group tools (top left), the view's tools (top right), the
# legend (bottom left) and the minimap; each button, label and legend entry with its words whole.
PANE_STATE = """() => {
  const pane = document.querySelector('#graph-wrap').getBoundingClientRect();
  const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const shown = (el) => el && !el.closest('[hidden]') && el.getClientRects().length > 0;
  const parts = {
    groups: document.querySelector('.group-tools'), tools: document.querySelector('.graph-tools'),
    legend: document.querySelector('.legend'), minimap: document.querySelector('[data-testid=minimap]'),
  };
  const boxes = Object.fromEntries(Object.entries(parts).filter(([, el]) => shown(el)).map(([k, el]) => [k, box(el)]));
  // The lines an element's words take: the distinct tops of its text's line boxes.
  const lines = (el) => {
    const tops = new Set();
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const r of range.getClientRects()) tops.add(Math.round(r.top / 4));
    }
    return tops.size;
  };
  const words = [...document.querySelectorAll('.group-tools button, .group-tools label, .graph-tools button, .legend li > *, .legend > li:not(.legend-gradmap)')]
    .filter(shown);
  return {
    pane: box(document.querySelector('#graph-wrap')), boxes,
    cut: words.filter((el) => el.scrollWidth > el.clientWidth + 1 || lines(el) > 1).map((el) => el.textContent.trim()),
  };
}"""


def overlap(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


@pytest.mark.parametrize(
    ("lang", "preset", "gradmap"),
    [("ru", "mlp", True), ("et", "layer", False)],
    ids=["ru-mlp", "et-layer"],
)
def test_screenshots_of_the_graph_tools_in_each_language(
    page_at, screenshots_dir, lang, preset, gradmap
):
    page = page_at(1280, 720)
    open_page(page, f"?lang={lang}&preset={preset}")
    assert page.locator(".group-tools").is_visible()
    page.click("#jump-backward")
    for _ in range(4):
        page.click("[data-testid=step-forward]")
    if gradmap:
        page.locator("[data-testid=gradmap]").check()
        page.locator("[data-testid=gradmap-legend]").wait_for()
    page.wait_for_timeout(400)  # a glide of follow ends
    page.screenshot(path=str(screenshots_dir / f"lang-{lang}-{preset}.png"))
    seen = page.evaluate(PANE_STATE)
    assert seen["cut"] == [], seen  # no word of a tool or of the legend cut or wrapped
    boxes, pane = seen["boxes"], seen["pane"]
    for name, box in boxes.items():  # everything inside the pane
        assert box["left"] >= pane["left"] and box["right"] <= pane["right"] + 0.5, (name, seen)
    names = sorted(boxes)
    for k, first in enumerate(names):
        for second in names[k + 1 :]:
            assert not overlap(boxes[first], boxes[second]), (first, second, seen)
    state = screen_state(page)
    assert state["header"] <= 0 and state["page"] <= 0, state


# Every entry of the header's Export menu is on screen and is what a click there reaches. The
# header used to clip its own menu (overflow: hidden): focusing the first entry scrolled the header
# and left the rest out of sight.
MENU_ON_SCREEN = """() => {
    const topbar = document.querySelector('.topbar');
    return {
        scrolled: topbar.scrollTop,
        items: [...document.querySelectorAll('#header-actions [role=menuitem]')].map((item) => {
            const box = item.getBoundingClientRect();
            const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
            return { text: item.textContent, reached: hit === item, top: box.top, bottom: box.bottom };
        }),
    };
}"""


@pytest.mark.parametrize("lang", ["en", "ru", "et"])
def test_the_export_menu_opens_whole_below_the_header(page_at, lang):
    page = page_at(1280, 720)
    open_page(page, f"?lang={lang}&preset=mlp")
    page.click("#export-button")
    seen = page.evaluate(MENU_ON_SCREEN)
    assert seen["scrolled"] == 0, seen
    assert [item["text"] for item in seen["items"]] == [
        "SVG",
        "PNG",
        "PDF",
        ui(lang, "export.html"),
        "torch.py",
    ]
    assert all(item["reached"] and item["bottom"] <= 720 for item in seen["items"]), seen
    assert screen_state(page)["header"] <= 0


def test_a_header_too_narrow_for_the_preset_note_hides_it_rather_than_cut_it_to_a_letter(page):
    """Russian buttons are wider: at 1,280 px the header left the note two letters and an
    ellipsis ("Н…"). Too narrow to say a word, it is not shown; given room, it is."""
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, "?preset=neuron&lang=ru")
    note = page.locator("#preset-note")
    cramped = "() => document.querySelector('#preset-note').classList.contains('cramped')"
    page.wait_for_function(cramped)
    assert note.bounding_box()["width"] < 96
    assert note.evaluate("e => getComputedStyle(e).visibility") == "hidden"
    page.set_viewport_size({"width": 1600, "height": 800})
    page.wait_for_function(f"() => !({cramped})()")
    assert note.bounding_box()["width"] >= 96
    assert note.evaluate("e => getComputedStyle(e).visibility") == "visible"
    assert len(note.inner_text()) > 10 and note.get_attribute("title") == note.inner_text()
