"""The graph is on screen whatever the sidebar holds (issue 15 item 2).

Every screen size: the graph pane is sized by the viewport, Fit fits the visible pane, the
transport is in the first screen on a desktop; on a phone the header does not overflow and the
graph and transport come before the panels.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from page_boxes import inside

MLP = """x1 = 0.5
x2 = -1.5
w11 = 0.3
w12 = -0.8
b1 = 0.1
w21 = 0.6
w22 = 0.2
b2 = -0.3
v1 = 0.7
v2 = -0.5
c = 0.05
y = 1
h1 = tanh(w11*x1 + w12*x2 + b1)
h2 = tanh(w21*x1 + w22*x2 + b2)
out = tanh(v1*h1 + v2*h2 + c)
d = out - y
loss = d**2
"""
assert len(MLP.splitlines()) == 17
SMALL = "a = 2\nb = -3\nf = a * b\n"
WIDE = (
    "".join(f"a{i} = {i % 7 - 3}\n" for i in range(50))
    + "s = "
    + " + ".join(f"a{i}" for i in range(50))
    + "\n"
)

DESKTOPS = [(1280, 720), (1920, 1080), (3840, 2160)]
PHONE = (390, 844)

BOXES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height }; };
  const q = (s) => document.querySelector(s);
  return {
    pane: box(q('#graph-wrap')), transport: box(q('#transport')), panels: box(q('#panels')),
    header: box(q('.topbar')), narration: box(q('#narration')),
    cards: [...document.querySelectorAll('[data-testid=node] .card')].map(box),
    sidebar: { scrollHeight: q('.sidebar').scrollHeight, clientHeight: q('.sidebar').clientHeight },
    scrollWidth: document.documentElement.scrollWidth,
    headerItems: [...q('.topbar').querySelectorAll('button, select, h1')].filter((e) => e.offsetParent).map(box),
    share: box(q('[data-testid=copy-link]')),
  };
}"""


def open_program(page, source: str) -> dict:
    page.goto("/?source=" + quote(source))
    page.wait_for_selector("#graph[data-ready=true] [data-testid=node]")
    page.wait_for_function("() => !document.querySelector('#panels').hidden")
    # A fit after the layout settles: two frames with no change in the pane's box.
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate(BOXES)


@pytest.fixture
def sized_page(page_at, request):
    width, height = request.param
    page = page_at(width, height)
    page.size = (width, height)
    return page


@pytest.mark.parametrize("sized_page", DESKTOPS, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_desktop_graph_and_transport_fill_the_first_screen(sized_page, screenshots_dir):
    page = sized_page
    width, height = page.size
    small = open_program(page, SMALL)
    mlp = open_program(page, MLP)
    page.screenshot(path=str(screenshots_dir / f"screens-{width}x{height}.png"))
    wide = open_program(page, WIDE)

    pane = mlp["pane"]
    assert pane["top"] < 0.3 * height
    assert pane["bottom"] <= height
    assert pane["left"] >= 0 and pane["right"] <= width
    assert pane["height"] >= 0.4 * height
    # The pane is sized by the viewport, not by the sidebar: 2, 12 or 50 leaves, the same box.
    for other in (small, wide):
        for key in ("top", "bottom", "left", "right"):
            assert abs(other["pane"][key] - pane[key]) < 1, (key, other["pane"], pane)
    # Fit fits the visible pane: every card of the MLP is inside it.
    assert len(mlp["cards"]) > 12
    for card in mlp["cards"]:
        assert inside(card, pane), (card, pane)
    for result in (small, mlp, wide):
        assert inside(result["transport"], {"left": 0, "top": 0, "right": width, "bottom": height})
        assert inside(result["narration"], {"left": 0, "top": 0, "right": width, "bottom": height})
    # The panels come after the workspace (below the fold).
    assert mlp["panels"]["top"] >= mlp["narration"]["bottom"] - 0.5
    # 50 leaves: the sidebar scrolls on its own; the page does not grow sideways.
    assert wide["sidebar"]["scrollHeight"] > wide["sidebar"]["clientHeight"]
    assert wide["scrollWidth"] <= width
    page.locator(".sidebar").hover()
    page.mouse.wheel(0, 2000)
    page.wait_for_function("() => document.querySelector('.sidebar').scrollTop > 0")
    after = page.evaluate(BOXES)
    assert abs(after["pane"]["top"] - wide["pane"]["top"]) < 1


@pytest.mark.parametrize("sized_page", [PHONE], indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_phone_header_fits_and_graph_comes_first(sized_page, screenshots_dir):
    page = sized_page
    width, height = page.size
    mlp = open_program(page, MLP)
    page.screenshot(path=str(screenshots_dir / f"screens-{width}x{height}.png"))
    assert mlp["scrollWidth"] <= width
    viewport = {"left": 0, "top": 0, "right": width, "bottom": height}
    assert inside(mlp["share"], viewport), mlp["share"]
    for item in mlp["headerItems"]:
        assert inside(item, {**viewport, "bottom": mlp["header"]["bottom"]}), item
    # The graph and the transport come before the sidebar's long content and the panels.
    assert mlp["pane"]["top"] < 0.3 * height
    assert mlp["pane"]["bottom"] <= mlp["transport"]["top"] + 0.5
    assert mlp["transport"]["bottom"] <= mlp["panels"]["top"]
    assert mlp["pane"]["height"] >= 0.35 * height
    for card in mlp["cards"]:
        assert inside(card, mlp["pane"]), (card, mlp["pane"])


@pytest.mark.parametrize("sized_page", [PHONE], indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_refit_fits_the_part_of_the_pane_on_screen(sized_page):
    """Scrolled so most of the pane is above the window, a resize refits into the part seen.

    A graph that fits that strip readably: the MLP's 16 cards would need names of 4 px there, and
    Fit keeps names readable and pans instead (issue 11, test_groups.py)."""
    page = sized_page
    width, height = page.size
    small = open_program(page, SMALL)
    page.mouse.move(width / 2, height - 20)
    page.mouse.wheel(0, small["pane"]["top"] + 0.6 * small["pane"]["height"])
    page.wait_for_function(
        "() => document.querySelector('#graph-wrap').getBoundingClientRect().top < -100"
    )
    before = page.get_attribute("#graph .viewport", "transform")
    page.set_viewport_size({"width": width, "height": height - 60})
    page.wait_for_function(
        "(t) => document.querySelector('#graph .viewport').getAttribute('transform') !== t",
        arg=before,
    )
    after = page.evaluate(BOXES)
    pane = after["pane"]
    assert pane["top"] < -100
    seen = {**pane, "top": max(pane["top"], 0), "bottom": min(pane["bottom"], height - 60)}
    for card in after["cards"]:
        assert inside(card, seen), (card, seen)


# What a step shows, read in one call a step (five reads of their own cost a round trip each,
# on about a hundred steps): the boxes, the narration's length and overflow, whether the
# forward button is disabled (the last step), and the step.
STEP_SHOWN = """() => ({
  box: (BOXES)(),
  text: document.querySelector('[data-testid=narration]').textContent.length,
  overflow: (n => n.scrollHeight - n.clientHeight)(document.querySelector('#narration')),
  last: document.querySelector('[data-testid=step-forward]').matches(':disabled'),
  step: document.body.dataset.stepIndex,
})""".replace("BOXES", BOXES)


@pytest.mark.parametrize("sized_page", [(1280, 720)], indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_graph_pane_does_not_jump_while_stepping(sized_page):
    """Short and long narrations, narrow and wide numbers: the pane and the transport stay put."""
    page = sized_page
    open_program(page, MLP)
    seen = set()
    texts = set()
    overflow = set()
    forward = page.locator("[data-testid=step-forward]")
    for _ in range(200):
        shown = page.evaluate(STEP_SHOWN)
        box = shown["box"]
        seen.add(
            (
                round(box["pane"]["height"]),
                round(box["transport"]["top"]),
                round(box["narration"]["bottom"]),
            )
        )
        texts.add(shown["text"])
        overflow.add(shown["overflow"])
        if shown["last"]:
            break
        forward.click()
        page.wait_for_function("(s) => document.body.dataset.stepIndex !== s", arg=shown["step"])
    assert max(texts) > 2 * min(texts)
    # Following the current row of a table never scrolls the graph off the first screen.
    assert page.evaluate("window.scrollY") == 0
    assert len(seen) == 1, seen
    assert max(overflow) <= 1, "every sentence fits the narration's two lines"
