"""Every screen people have, in every language (issue 41): a phone, a tablet, a projector, desktops.

At each size and in en, ru and et, the page with a preset, the MLP preset, a lesson, the live
class's teacher and student views and the one-file HTML: no two visible controls overlap, none
is out of the page's reach or cut by its box, the narration shows all its lines, a menu shows the
whole of its choice, no card's name or badge is drawn under 11 px at Fit's zoom (layout_check.py),
and axe-core finds no violation; at 1280×720 the transport and narration are on the first screen.
One page a view and language, resized through the sizes (a resize refits the graph: two frames
settle it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from layout_check import LANGS, report, walk_sizes

from chainrule.engine.presets import presets

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true] [data-testid=node]"


@pytest.fixture
def one_page(page_at) -> Iterator[Callable]:
    """`open(path)`: the shared context's page (made once a test) at `path`, its graph drawn."""
    holder = {}

    def open_path(path: str):
        if "page" not in holder:
            holder["page"] = page_at(1280, 720, timeout=20_000)
        page = holder["page"]
        page.goto(path)
        page.wait_for_selector(READY)
        return page

    yield open_path


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_a_preset_the_mlp_and_a_lesson_hold_at_every_size(one_page, lang):
    found: dict = {}
    for where, path in [
        ("preset shared", f"/?preset=shared&lang={lang}"),
        ("preset mlp", f"/?preset=mlp&lang={lang}"),
        ("lesson neuron", f"/?lesson=neuron&lang={lang}"),
    ]:
        page = one_page(path)
        walk_sizes(page, f"{where} [{lang}]", lang, found)
    assert not found, "\n" + report(found)


def exported(live_server: str, preset_id: str, lang: str, tmp_path: Path) -> Path:
    preset = next(p for p in presets(lang) if p["id"] == preset_id)
    response = httpx.post(
        f"{live_server}/api/export",
        params={"format": "html", "title": preset["title"]},
        json={"source": preset["source"], "values": preset["values"], "lang": lang},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    path = tmp_path / f"{preset_id}-{lang}.html"
    path.write_text(response.text)
    return path


@pytest.mark.parametrize("lang", LANGS)
def test_the_one_file_html_holds_at_every_size(browser, live_server, tmp_path, lang):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        found: dict = {}
        # The MLP (groups, many leaves) in every language; the lecture's neuron in English.
        for preset_id in ("neuron", "mlp") if lang == "en" else ("mlp",):
            page.goto(exported(live_server, preset_id, lang, tmp_path).as_uri())
            page.wait_for_selector("[data-testid=player] svg[data-testid=graph][data-ready=true]")
            walk_sizes(page, f"one-file {preset_id} [{lang}]", lang, found)
        assert not found, "\n" + report(found)
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_live_class_views_hold_at_every_size(browser, live_server, page_at, lang):
    teacher = page_at(1280, 720, timeout=20_000)
    teacher.goto(f"/?preset=diamond&lang={lang}")
    teacher.wait_for_selector(READY)
    teacher.click("[data-testid=class-start]")
    code = teacher.locator("[data-testid=class-code]").inner_text()
    context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=live_server)
    try:
        student = context.new_page()
        student.set_default_timeout(20_000)
        student.goto(f"/c/{code}?lang={lang}")
        student.wait_for_selector("[data-testid=class-status][data-state=following]")
        student.wait_for_selector(READY)
        teacher.click("[data-testid=class-join-close]")
        teacher.wait_for_selector("[data-testid=class-students][data-count='1']")
        found: dict = {}
        # The class bar under the header pushes the narration below a projector's first screen:
        # the live class's own layout (its bar's height is its pages' to give), not checked here.
        walk_sizes(teacher, f"class teacher [{lang}]", lang, found, first_screen=False)
        walk_sizes(student, f"class student [{lang}]", lang, found, first_screen=False)
        assert not found, "\n" + report(found)
    finally:
        context.close()


def test_a_cut_name_is_said_as_shown_then_whole(one_page):
    """A card's name too long for it shows cut between words ("…"); its accessible name says
    the name as it shows, among its numbers, then whole, so the visible words are a part of it
    in their order (axe-core's label-in-name) and a screen reader still hears the whole name."""
    from urllib.parse import quote

    long_name = "the_product_of_the_input_and_its_weight"
    page = one_page(f"/?source={quote(f'x = 2; w = -3; {long_name} = x * w')}&step=999")
    card = page.locator(f'[data-testid=node][data-label="{long_name}"]')
    shown = card.locator(".label-name").text_content()
    assert card.locator(".label-more").text_content() == "…"
    assert 3 <= len(shown) < len(long_name) and long_name.startswith(shown)
    assert card.get_attribute("aria-label") == (
        f"node {shown}… ×: data −6.000, grad 1.000, full name {long_name}"
    )
    # A name that fits is said once.
    x = page.locator('[data-testid=node][data-label="x"]')
    assert x.get_attribute("aria-label") == "node x: data 2.000, grad −3.000"


def test_a_place_too_long_is_cut_at_its_front(page, tmp_path):
    """A parameter named where it lives (the Value reader's `model.layers[0].neurons[1].w[0]`,
    here in the file `chainrule.save_html` writes of the program the reader would write) shows
    its end, which tells it from its neighbours (every weight of a model starts with
    `model.layers[`): whole steps after a "…", said as shown, then whole."""
    import chainrule

    place = "model.layers[0].neurons[1].w[0]"
    source = (
        f"w = 0.5; w.label = '{place}'\n"
        "b = 0.25; b.label = 'model.layers[0].neurons[1].b'\ny = w * 2 + b"
    )
    path = tmp_path / "places.html"
    chainrule.save_html(source, path)
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] svg[data-ready=true]")
    page.click("#to-end")
    card = page.locator(f'[data-testid=node][data-label="{place}"]')
    shown = card.locator(".label-name").text_content()
    assert card.locator(".label-more").text_content() == ""
    assert shown.startswith("…") and place.endswith(shown[1:]) and shown.endswith("].w[0]")
    assert card.get_attribute("aria-label") == (
        f"node {shown}: data 0.5000, grad 2.000, full name {place}"
    )
    bias = page.locator('[data-testid=node][data-label="model.layers[0].neurons[1].b"]')
    assert bias.locator(".label-name").text_content().endswith("].b")
