"""Graphs at real size (issue 11, parts 3 to 6): the view follows the pulse, the minimap, the
gradient map and a leaves panel for 50 leaves, driven with the mouse and the keyboard.

The oracles are the page's geometry (the visited card's box against the pane's, read at every
step), the trace's own numbers (the gradient map's buckets against the |grad| on the cards) and
the link the page would share.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
SCALE_JS = (
    "() => document.querySelector('#graph .viewport').transform.baseVal.consolidate().matrix.a"
)
VIEW_JS = """() => { const m = document.querySelector('#graph .viewport').transform.baseVal.consolidate().matrix;
  return [m.e, m.f, m.a]; }"""
# The visited card's box and the pane's, or null when no card is being visited.
CURRENT_IN_PANE_JS = """() => {
  const card = document.querySelector('[data-current="true"]');
  if (!card) return null;
  const c = card.querySelector('.card').getBoundingClientRect();
  const p = document.querySelector('#graph-wrap').getBoundingClientRect();
  return c.left >= p.left - 0.5 && c.right <= p.right + 0.5 && c.top >= p.top - 0.5 && c.bottom <= p.bottom + 0.5;
}"""


def mlp_loss(examples: int, hidden: int = 3) -> str:
    """A 2-`hidden`-1 tanh MLP's squared loss summed over `examples` examples (11: 320 nodes)."""
    lines = []
    for j in range(1, hidden + 1):
        lines += [f"w{j}1 = {0.1 * j:.1f}", f"w{j}2 = {-0.2 * j:.1f}", f"b{j} = {0.05 * j:.2f}"]
    lines += [f"v{j} = {(-1) ** j * 0.3 * j:.1f}" for j in range(1, hidden + 1)] + ["c = 0.1"]
    terms = []
    for e in range(1, examples + 1):
        lines += [
            f"x{e}a = {((e * 37) % 11) / 5 - 1:.1f}",
            f"x{e}b = {((e * 53) % 7) / 3 - 1:.2f}",
            f"y{e} = {1 if e % 2 else -1}",
        ]
        for j in range(1, hidden + 1):
            lines.append(f"h{e}_{j} = tanh(w{j}1*x{e}a + w{j}2*x{e}b + b{j})")
        weighted = " + ".join(f"v{j}*h{e}_{j}" for j in range(1, hidden + 1))
        lines.append(f"out{e} = tanh({weighted} + c)")
        terms.append(f"(out{e} - y{e})**2")
    lines.append("loss = " + " + ".join(terms))
    return "\n".join(lines)


def fifty_leaves() -> str:
    """50 leaves with three prefixes (w0…w19, b0…b9, x0…x19) in a weighted sum."""
    lines = [f"w{i} = {((i * 7) % 10 - 5) / 10}" for i in range(20)]
    lines += [f"b{i} = {((i * 3) % 7 - 3) / 10}" for i in range(10)]
    lines += [f"x{i} = {((i * 5) % 9 - 4) / 4}" for i in range(20)]
    products = " + ".join(f"w{i}*x{i}" for i in range(20))
    lines.append(f"s = {products} + " + " + ".join(f"b{i}" for i in range(10)))
    return "\n".join(lines)


BIG = mlp_loss(11)


def open_source(page, source: str, *, every_node: bool = False) -> None:
    """Open `source`; `every_node`: with every node drawn (a big graph opens with its statements
    collapsed)."""
    page.goto(("/?collapse_at=never&" if every_node else "/?") + "source=" + quote(source))
    page.wait_for_selector(READY + " [data-testid=node]")


def pane_centre(page) -> tuple[float, float]:
    box = page.locator("#graph-wrap").bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def wheel_to_reading_size(page, scale: float = 0.9) -> None:
    """Zoom in with the mouse wheel over the middle of the pane until cards read at full size."""
    x, y = pane_centre(page)
    page.mouse.move(x, y)
    for _ in range(30):
        if page.evaluate(SCALE_JS) >= scale:
            return
        page.mouse.wheel(0, -300)
    raise AssertionError("the wheel never zoomed in to reading size")


EMPTY_SPOT_JS = """() => {
  const p = document.querySelector('#graph-wrap').getBoundingClientRect();
  for (let fy = 0.3; fy < 0.8; fy += 0.05) for (let fx = 0.3; fx < 0.8; fx += 0.05) {
    const x = p.left + fx * p.width, y = p.top + fy * p.height;
    if (document.elementFromPoint(x, y)?.id === 'graph') return [x, y];
  }
  return null;
}"""


def empty_spot(page) -> tuple[float, float]:
    """A point of the pane over the graph's background (a drag there pans, never a card's click)."""
    spot = page.evaluate(EMPTY_SPOT_JS)
    assert spot, "no empty spot in the pane"
    return spot[0], spot[1]


def wheel_until_in_pane(page, locator) -> None:
    """Zoom out with the mouse wheel over the pane until `locator`'s box is inside the pane."""
    x, y = pane_centre(page)
    page.mouse.move(x, y)
    for _ in range(40):
        pane, box = page.locator("#graph-wrap").bounding_box(), locator.bounding_box()
        if (
            pane["x"] <= box["x"]
            and box["x"] + box["width"] <= pane["x"] + pane["width"]
            and pane["y"] <= box["y"]
            and box["y"] + box["height"] <= pane["y"] + pane["height"] * 0.75
        ):
            return
        page.mouse.wheel(0, 300)
    raise AssertionError("the wheel never brought the card into the pane")


def follow_pressed(page) -> str:
    return page.get_attribute("[data-testid=follow]", "aria-pressed")


def test_follow_keeps_the_visited_card_in_the_pane_at_every_step_of_a_300_node_backward_pass(page):
    page.emulate_media(reduced_motion="reduce")  # each move lands at once: check right after a key
    open_source(page, BIG, every_node=True)
    assert page.locator("[data-testid=node]").count() >= 300
    wheel_to_reading_size(page)
    assert follow_pressed(page) == "false"  # the wheel took control
    assert page.locator("[data-testid=minimap]").is_visible()  # the graph outgrew the pane
    page.get_by_role("button", name="Follow").click()
    assert follow_pressed(page) == "true"
    page.keyboard.press("b")  # the backward phase, from its first step (the seed)
    assert page.evaluate(CURRENT_IN_PANE_JS) is True
    # Every step of the backward phase, by the keyboard: the page records, at each step, whether
    # the visited card is inside the pane, and where the view is.
    page.evaluate(
        """() => {
      window.__seen = [];
      const inPane = (IN_PANE);
      new MutationObserver(() => {
        const m = document.querySelector('#graph .viewport').transform.baseVal.consolidate().matrix;
        window.__seen.push([document.body.dataset.stepIndex, inPane(), `${m.e},${m.f}`]);
      }).observe(document.body, { attributes: true, attributeFilter: ['data-step-index'] });
    }""".replace("IN_PANE", CURRENT_IN_PANE_JS)
    )
    last = int(page.get_attribute("[data-testid=scrub]", "max"))
    start = int(page.evaluate("() => document.body.dataset.stepIndex"))
    # The keys are pressed from inside the page, a task apart: the page's one keydown listener
    # on the document takes them as it takes a person's, and the record is made as the step is
    # shown either way (300 round trips to the browser made this test 27 s of the suite, 12 s).
    seen = page.evaluate(
        """async (presses) => {
      for (let n = 0; n < presses; n++) {
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
        await new Promise((resolve) => setTimeout(resolve));
      }
      return window.__seen;
    }""",
        last - start,
    )
    assert len(seen) == last - start
    outside = [step for step, inside, _ in seen if inside is not True]
    assert outside == [], f"the visited card left the pane at steps {outside[:10]}"
    views = {view for _, _, view in seen}
    assert len(views) > 5  # the view did move along with the pulse
    assert follow_pressed(page) == "true"


STEP_ENDS_JS = """async ([steps, settled]) => {
  // Per step, whether the visited card is in the pane at its last frame from `settled` ms into
  // the step (its glide's end) on; a starved machine may draw no frame that late in a step,
  // which then says nothing either way and is not counted. Each frame is read a task after it,
  // once every callback of the frame has run: the glide's own may run after this one in the
  // same frame, and a stalled machine's late frame was then judged on the view of the frame
  // before it (a fresh clone's run on a loaded machine failed so).
  const inPane = (IN_PANE);
  const verdict = new Map();
  const start = Number(document.body.dataset.stepIndex);
  const t0 = performance.now();
  let shown = start;
  let since = t0;
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      const step = Number(document.body.dataset.stepIndex);
      if (step !== shown) [shown, since] = [step, now];
      else if (now - since >= settled) verdict.set(step, inPane());
      const done = step - start >= steps || now - t0 > steps * 1000;
      if (done) resolve(); else requestAnimationFrame(() => setTimeout(tick));
    };
    requestAnimationFrame(() => setTimeout(tick));
  });
  verdict.delete(Number(document.body.dataset.stepIndex)); // the step still running
  return { steps: verdict.size, late: [...verdict].filter(([, inside]) => inside !== true).map(([s]) => s) };
}""".replace("IN_PANE", CURRENT_IN_PANE_JS)


def test_while_playing_the_view_glides_to_each_card_before_its_step_ends(page):
    open_source(page, BIG)
    wheel_to_reading_size(page)
    page.get_by_role("button", name="Follow").click()
    page.select_option("#speed", "4")  # 225 ms a step: glides of about 110 ms
    page.keyboard.press("b")
    before = page.evaluate(VIEW_JS)
    page.get_by_role("button", name="Play").click()
    result = page.evaluate(STEP_ENDS_JS, [40, 150])  # glides end by about 110 ms; steps at 225
    assert page.evaluate(VIEW_JS) != before  # the view moved along
    page.get_by_role("button", name="Pause").click()
    assert result["steps"] >= 20
    assert result["late"] == []
    assert follow_pressed(page) == "true"


@pytest.mark.parametrize(("preset", "stays_put"), [("four-examples", False), ("diamond", True)])
def test_a_fitted_view_stays_put_while_following(page, preset, stays_put):
    # The diamond's fitted graph is clear of the pane's tools and legend: following has nothing to
    # move, top row included (the MLP's, at 1280 × 720, is fitted at the reading size of its
    # cards, a little larger than the pane: following pans it, issue 41). four-examples' fitted graph reaches under the gradient map's
    # legend, so follow lifts the cards it visits there clear of it; they never leave the pane.
    page.emulate_media(reduced_motion="reduce")
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY + " [data-testid=node]")
    page.get_by_label("gradient map").check()  # a taller legend: the view is fitted again
    page.locator("#fit").click()
    fitted = page.evaluate(VIEW_JS)
    last = int(page.get_attribute("[data-testid=scrub]", "max"))
    page.locator("[data-testid=step-forward]").focus()
    assert page.locator("[data-testid=minimap]").is_hidden()  # the whole graph shows
    for _ in range(last):
        page.keyboard.press("ArrowRight")
        assert page.evaluate(CURRENT_IN_PANE_JS) is True
    if stays_put:
        assert page.evaluate(VIEW_JS) == fitted
    assert follow_pressed(page) == "true"


def test_a_wheel_drag_or_zoom_button_takes_control_and_fit_or_follow_gives_it_back(page):
    open_source(page, BIG)
    assert follow_pressed(page) == "true"
    wheel_to_reading_size(page)
    assert follow_pressed(page) == "false"
    # Stepping moves the pulse, not the view the reader chose.
    page.keyboard.press("End")
    before = page.evaluate(VIEW_JS)
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    assert page.evaluate(VIEW_JS) == before
    page.click("#fit")
    assert follow_pressed(page) == "true"
    # A drag on the graph takes control; so does a zoom button; Follow takes it back.
    x, y = pane_centre(page)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 60, y + 20, steps=4)
    page.mouse.up()
    assert follow_pressed(page) == "false"
    page.get_by_role("button", name="Follow").click()
    assert follow_pressed(page) == "true"
    page.get_by_role("button", name="Zoom in").click()
    assert follow_pressed(page) == "false"
    # A click on a card (no drag) is no pan: follow stays on.
    page.get_by_role("button", name="Follow").click()
    page.locator("[data-testid=node]").first.click()
    assert follow_pressed(page) == "true"


CURRENT_AND_MINIMAP_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const minimap = document.querySelector('[data-testid=minimap]');
  return { card: box(document.querySelector('[data-current="true"] .card')),
           minimap: minimap.hidden ? null : box(minimap) };
}"""


def test_a_new_big_program_opens_with_its_first_card_clear_of_the_minimap(page):
    """Typed after a small program, a 1,000-node chain of statements opens collapsed with its
    root, the sort's first card, at the pane's bottom right: the minimap that appears there with
    it must not cover it (follow once reckoned with the last program's minimap, hidden)."""
    page.emulate_media(reduced_motion="reduce")  # follow's moves land at once
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    chain = "\n".join(["p0 = 0.5"] + [f"p{i}=-w{i}*-x{i}+p{i - 1}" for i in range(1, 166)])
    page.fill("[data-testid=source]", chain)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_selector(READY + " .group-card.root[data-current=true]")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    shown = page.evaluate(CURRENT_AND_MINIMAP_JS)
    assert shown["minimap"] is not None  # the graph outgrew the pane
    (left, top, right, bottom), (m_left, m_top, m_right, m_bottom) = shown["card"], shown["minimap"]
    assert right <= m_left or left >= m_right or bottom <= m_top or top >= m_bottom, shown


def test_the_minimap_shows_only_a_graph_larger_than_the_pane_and_moves_the_view(page):
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY + " [data-testid=node]")
    assert page.locator("[data-testid=minimap]").is_hidden()
    open_source(page, BIG)
    # Fit keeps names at the reading size, so this graph is larger than the pane: the minimap.
    minimap = page.locator("[data-testid=minimap]")
    assert minimap.is_visible()
    wheel_to_reading_size(page)
    assert minimap.is_visible()
    rect = page.locator("[data-testid=minimap-view]")
    pulse = page.locator("[data-testid=minimap-pulse]")
    assert pulse.is_visible()
    box = minimap.bounding_box()
    before = rect.bounding_box()
    assert box["x"] - 0.5 <= before["x"] <= before["x"] + before["width"] <= box["x"] + box["width"]
    # Panning the graph with the mouse moves the rectangle the other way.
    x, y = empty_spot(page)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 200, y, steps=5)
    page.mouse.up()
    after = rect.bounding_box()
    # (the rectangle is clipped by the minimap's edges: its centre is what moves)
    assert after["x"] + after["width"] / 2 < before["x"] + before["width"] / 2 - 1
    # Pressing on the minimap centres the view there (and takes control from follow).
    page.get_by_role("button", name="Follow").click()
    view = page.evaluate(VIEW_JS)
    page.mouse.click(box["x"] + 6, box["y"] + box["height"] / 2)
    assert page.evaluate(VIEW_JS) != view
    assert follow_pressed(page) == "false"
    moved = rect.bounding_box()
    assert abs(moved["x"] + moved["width"] / 2 - (box["x"] + 6)) < moved["width"] / 2 + 2
    # Dragging it drags the view along.
    page.mouse.move(moved["x"] + moved["width"] / 2, moved["y"] + moved["height"] / 2)
    page.mouse.down()
    page.mouse.move(moved["x"] + moved["width"] / 2 + 40, moved["y"] + moved["height"] / 2, steps=4)
    page.mouse.up()
    assert rect.bounding_box()["x"] > moved["x"] + 30
    # Back to Fit: follow takes over again; zoomed far out (the wheel), the whole graph shows
    # and the minimap goes.
    page.click("#fit")
    assert follow_pressed(page) == "true"
    x, y = pane_centre(page)
    page.mouse.move(x, y)
    for _ in range(40):
        if minimap.is_hidden():
            break
        page.mouse.wheel(0, 400)
    assert minimap.is_hidden()


BUCKETS_JS = """() => [...document.querySelectorAll('[data-testid=node]')]
  .filter((g) => g.hasAttribute('data-gradmap'))
  .map((g) => ({ label: g.dataset.label, grad: g.dataset.grad, bucket: g.dataset.gradmap,
                 sign: g.getAttribute('data-grad-sign'), kind: g.getAttribute('class') }))"""
RANK = {"zero": 0, **{str(k): k for k in range(1, 7)}}


def test_the_gradient_map_colours_cards_by_their_gradient_magnitude(page):
    page.goto("/?preset=four-examples&collapse_at=never")  # every node's card
    page.wait_for_selector(READY + " [data-testid=node]")
    toggle = page.locator("[data-testid=gradmap]")
    legend = page.locator("[data-testid=gradmap-legend]")
    assert not toggle.is_checked() and legend.is_hidden()
    assert page.locator("[data-gradmap]").count() == 0
    page.get_by_label("gradient map").check()
    assert legend.is_visible()
    # Before the backward pass no gradient has arrived: every card reads "not yet".
    assert {card["bucket"] for card in page.evaluate(BUCKETS_JS)} == {"none"}
    page.keyboard.press("b")  # the root's visit: its gradient and one contribution have arrived
    cards = page.evaluate(BUCKETS_JS)
    arrived = [c for c in cards if c["bucket"] != "none"]
    assert [c for c in cards if (c["bucket"] == "none") != (c["grad"] == "")] == []
    assert "loss" in {c["label"] for c in arrived} and len(arrived) == 2
    page.keyboard.press("End")
    cards = page.evaluate(BUCKETS_JS)
    assert cards and all(c["bucket"] in RANK for c in cards)
    assert "kind-const" not in " ".join(c["kind"] for c in cards)  # constants show no gradient
    # The buckets agree with the order of |grad|: a larger gradient is never in a lower bucket,
    # the largest is in the top one, and each bucket spans at most half a decade.
    sized = sorted((abs(float(c["grad"])), RANK[c["bucket"]]) for c in cards)
    assert all(a[1] <= b[1] for a, b in zip(sized, sized[1:], strict=False))
    largest = sized[-1][0]
    assert sized[-1][1] == 6
    for size, rank in sized:
        if rank >= 2:  # bucket r holds |grad| / largest in [10^((r − 7) / 2), 10^((r − 6) / 2))
            ratio = size / largest
            low, high = 10 ** ((rank - 7) / 2), 10 ** ((rank - 6) / 2)
            assert low * (1 - 1e-9) <= ratio <= high, (size, rank)
    assert len({rank for _, rank in sized}) >= 4
    # The sign is not colour alone: a badge with a minus on every negative gradient.
    negative = [c for c in cards if float(c["grad"]) < 0]
    assert negative and all(c["sign"] == "-" for c in negative)
    assert all(c["sign"] == "+" for c in cards if float(c["grad"]) > 0)
    w1 = page.locator("[data-testid=node][data-label=w1]")
    assert w1.get_attribute("data-grad-sign") == "-"
    w1_id = w1.get_attribute("data-node-id")
    # The badge is the gradient map's own (its layer over the cards), on w1's card.
    assert page.locator(f".layer-gradmap .gradmap-sign[data-node-id={w1_id}]").is_visible()
    # The legend prints the scale's numbers (two digits): the top bucket starts at largest / √10.
    top = format(float(f"{largest / 10**0.5:.2g}"), "g")
    assert legend.locator("[data-bucket='6']").inner_text() == f"\u2265{top}"
    assert "not yet" in legend.inner_text()
    # The toggle is in the link: opened again, the map is on.
    page.wait_for_function("() => location.search.includes('gradmap=1')")
    page.goto(page.url)
    page.wait_for_selector(READY + " [data-testid=node][data-gradmap]")
    assert page.locator("[data-testid=gradmap]").is_checked()
    page.get_by_label("gradient map").uncheck()
    assert page.locator("[data-gradmap]").count() == 0
    assert legend.is_hidden()
    assert not page.locator(".layer-gradmap .gradmap-sign").first.is_visible()


# Each collapsed statement's card: {name: {root, bucket, sign}}.
GROUP_BUCKETS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=group][data-collapsed=true]')]
  .map((g) => [g.dataset.group, { root: g.dataset.root, bucket: g.dataset.gradmap ?? null,
                                  sign: g.getAttribute('data-grad-sign') }]))"""


def test_the_gradient_map_colours_a_collapsed_statement_as_its_root(page):
    page.goto("/?preset=mlp")  # 29 nodes: its statements open collapsed
    page.wait_for_selector(READY + " [data-testid=group][data-collapsed=true]")
    page.get_by_label("gradient map").check()
    page.click("#to-end")
    cards = page.evaluate(GROUP_BUCKETS_JS)
    assert sorted(cards) == ["h1", "h2", "loss", "out"]
    assert cards["loss"] == {**cards["loss"], "bucket": "6", "sign": "+"}  # the largest: 1
    assert all(card["bucket"] in RANK and card["sign"] in "+-" for card in cards.values())
    # Expanded, each statement's root has the colour and the sign its card had.
    page.click("[data-testid=expand-all]")
    for name, card in cards.items():
        root = page.locator(f"#graph [data-testid=node][data-node-id={card['root']}]")
        assert root.get_attribute("data-gradmap") == card["bucket"], name
        assert root.get_attribute("data-grad-sign") == card["sign"], name
    # Collapsed again: the new cards are coloured at once, without a step.
    page.click("[data-testid=collapse-all]")
    assert page.evaluate(GROUP_BUCKETS_JS) == cards


GROUP_HEIGHTS_JS = """() => [...document.querySelectorAll('[data-testid=leaf-group]')]
  .map((group) => group.getBoundingClientRect().height)"""
TOGGLE_BELOW_PROGRAM_JS = """() => document.querySelector('#toggle-gradmap').getBoundingClientRect().top
  - document.querySelector('.sidebar .program').getBoundingClientRect().top"""


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080), (390, 844)])
def test_leaf_groups_drawn_as_they_scroll_into_view_move_nothing_below_them(page, size):
    # A group out of view is not drawn (content-visibility); its height until then is its rows'.
    # It was a guess once, and the panel grew under a click on the gradient map toggle as the
    # groups came into view: the click landed on what had moved there (a CI run, 2026-12-03).
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_source(page, BIG)
    toggle = page.get_by_label("gradient map")
    estimated = page.evaluate(GROUP_HEIGHTS_JS)
    toggle.scroll_into_view_if_needed()
    top = page.evaluate(TOGGLE_BELOW_PROGRAM_JS)
    for i in range(len(estimated)):  # each group drawn, the toggle kept in view
        page.locator("[data-testid=leaf-group]").nth(i).scroll_into_view_if_needed()
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    drawn = page.evaluate(GROUP_HEIGHTS_JS)
    assert drawn == pytest.approx(estimated, abs=1)
    assert page.evaluate(TOGGLE_BELOW_PROGRAM_JS) == pytest.approx(top, abs=1)
    toggle.check()
    assert page.locator("[data-testid=gradmap-legend]").is_visible()


def test_fifty_leaves_are_filtered_grouped_and_linked_to_their_cards(page):
    open_source(page, fifty_leaves())
    filter_box = page.locator("[data-testid=leaf-filter]")
    assert filter_box.is_visible()
    groups = page.locator("[data-testid=leaf-group]")
    prefixes = [groups.nth(i).get_attribute("data-prefix") for i in range(groups.count())]
    assert prefixes == ["w", "b", "x"]
    assert groups.nth(0).locator(".leaf-group-title").inner_text().split() == ["w\u2026", "20"]
    rows = page.locator(".slider:visible")
    assert rows.count() == 50
    # Compact rows: one line each (the range's bounds show only while a row is worked on).
    heights = page.evaluate(
        "() => [...document.querySelectorAll('.slider')].map((r) => r.offsetHeight)"
    )
    assert max(heights) < 2.4 * 16
    filter_box.click()
    page.keyboard.type("w1")
    assert sorted(rows.nth(i).get_attribute("data-testid") for i in range(rows.count())) == sorted(
        ["slider-w1"] + [f"slider-w{i}" for i in range(10, 20)]
    )
    assert page.locator("[data-testid=leaf-group]:visible").count() == 1
    assert page.locator(".leaf-filter-count").inner_text() == "11 of 50"
    page.keyboard.press("Escape")  # clears the filter (and nothing else)
    assert rows.count() == 50
    page.keyboard.type("X1")  # any case
    assert rows.count() == 11
    assert page.locator("[data-testid=leaf-group]:visible").get_attribute("data-prefix") == "x"
    page.keyboard.press("Escape")
    # Hovering a slider lights its card; hovering a card lights its slider.
    page.locator("[data-testid=slider-b3] .slider-name").hover()
    card = page.locator("[data-testid=node][data-label=b3]")
    assert card.get_attribute("data-linked") == "true"
    assert page.locator("[data-testid=node][data-linked=true]").count() == 1
    x7 = page.locator("[data-testid=node][data-label=x7]")
    wheel_until_in_pane(page, x7)  # Fit keeps the reading size: the card may be out of view
    x7.hover()
    assert page.locator("[data-testid=slider-x7]").get_attribute("data-linked") == "true"
    assert card.get_attribute("data-linked") is None
    assert page.locator(".slider[data-linked=true]").count() == 1
    assert page.locator("[data-testid=slider-x7]").is_visible()  # scrolled into the panel's view
    # Focus works as hover does (the keyboard reaches the sliders).
    page.locator("[data-testid=slider-w5] input.slider-range").focus()
    assert page.locator("[data-testid=node][data-label=w5]").get_attribute("data-linked") == "true"


# (leaves as {name, label} in the program's order, the groups: [prefix, place, names])
LEAF_GROUPS = [
    (  # micrograd's MLP as the reader writes it (engine/value_reader.py): one group a neuron
        [("n_layers0_neurons0_b", "n.layers[0].neurons[0].b"),
         ("n_layers0_neurons0_w0", "n.layers[0].neurons[0].w[0]"),
         ("n_layers0_neurons1_b", "n.layers[0].neurons[1].b"),
         ("n_layers0_neurons1_w0", "n.layers[0].neurons[1].w[0]"),
         ("n_layers1_neurons0_b", "n.layers[1].neurons[0].b"),
         ("n_layers1_neurons0_w0", "n.layers[1].neurons[0].w[0]"),
         ("n_layers1_neurons0_w1", "n.layers[1].neurons[0].w[1]")],
        [["n.layers[0].neurons[0]", True, ["n_layers0_neurons0_b", "n_layers0_neurons0_w0"]],
         ["n.layers[0].neurons[1]", True, ["n_layers0_neurons1_b", "n_layers0_neurons1_w0"]],
         ["n.layers[1].neurons[0]", True,
          ["n_layers1_neurons0_b", "n_layers1_neurons0_w0", "n_layers1_neurons0_w1"]]],
    ),
    (  # names and places together (a place `w` is no prefix `w…`); one alone is "other"
        [("w1", "w1"), ("w_0", "w[0]"), ("xs_0_1", "xs[0][1]"), ("w2", "w2"), ("w_1", "w[1]"),
         ("xs_1_0", "xs[1][0]"), ("c", "c"), ("model_w", "model.w")],
        [["w", False, ["w1", "w2"]], ["w", True, ["w_0", "w_1"]],
         ["xs", True, ["xs_0_1", "xs_1_0"]], ["", False, ["c", "model_w"]]],
    ),
]  # fmt: skip


def test_leaves_named_by_where_they_live_are_grouped_by_what_holds_them(page):
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY + " [data-testid=node]")
    for leaves, groups in LEAF_GROUPS:
        got = page.evaluate(
            """async (leaves) => {
              const { groupLeaves } = await import('/static/js/controls/leaf-groups.js');
              return groupLeaves(leaves.map(([name, label]) => ({ name, label })))
                .map(({ prefix, place, names }) => [prefix, place, names]);
            }""",
            leaves,
        )
        assert got == groups
    parts = page.evaluate(
        """async () => {
          const { placeOf } = await import('/static/js/controls/leaf-groups.js');
          return ['n.layers[0].neurons[1].w[0]', 'n.b', 'xs[0][1]', 'x1*w1', 'w1'].map(placeOf);
        }"""
    )
    assert parts == [
        {"owner": "n.layers[0].neurons[1]", "part": "w[0]"},
        {"owner": "n", "part": "b"},
        {"owner": "xs", "part": "xs[0][1]"},
        None,
        None,
    ]


def test_a_few_leaves_keep_the_plain_panel(page):
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY + " [data-testid=node]")
    assert page.locator("[data-testid=leaf-filter]").is_hidden()
    assert page.locator("[data-testid=leaf-group]").count() == 0
    assert page.locator("#sliders > .slider").count() == 3
    page.locator("[data-testid=slider-a] .slider-name").hover()
    assert page.locator("[data-testid=node][data-label=a]").get_attribute("data-linked") == "true"


@pytest.mark.parametrize(
    ("preset", "leaves", "prefixes"),
    [
        ("layer", 11, ["x", "w", "b"]),
        ("mlp", 12, ["x", "w", "b", "v", ""]),
        ("four-examples", 20, ["w", "x", "y", ""]),
    ],
)
def test_the_real_size_presets_open_with_their_note_and_grouped_leaves(
    page, preset, leaves, prefixes
):
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY + " [data-testid=node]")
    note = page.locator("#preset-note")
    assert len(note.inner_text()) > 40
    assert note.get_attribute("title") == note.inner_text()
    assert page.locator(".slider").count() == leaves
    groups = page.locator("[data-testid=leaf-group]")
    assert [groups.nth(i).get_attribute("data-prefix") for i in range(groups.count())] == prefixes


SHOTS = [("light", False), ("dark", False), ("light", True)]


@pytest.mark.parametrize(("theme", "presenting"), SHOTS, ids=["light", "dark", "presenting"])
def test_screenshot_300_nodes_with_the_minimap_and_the_gradient_map(
    page, screenshots_dir, theme, presenting
):
    page.emulate_media(color_scheme=theme, reduced_motion="reduce")
    open_source(page, BIG)
    page.get_by_label("gradient map").check()
    if presenting:
        page.keyboard.press("p")
        page.wait_for_function("() => document.body.classList.contains('presenting')")
    wheel_to_reading_size(page)
    page.get_by_role("button", name="Follow").click()
    page.keyboard.press("b")
    # 180 steps into the backward pass, by the scrub bar: one move, where 180 key presses (each
    # step's follow checked by the test above) would reach the same step.
    mid_backward = int(page.evaluate("() => document.body.dataset.stepIndex")) + 180
    page.locator("[data-testid=scrub]").fill(str(mid_backward))
    page.wait_for_function(f"() => document.body.dataset.stepIndex === '{mid_backward}'")
    assert page.evaluate(CURRENT_IN_PANE_JS) is True
    assert page.locator("[data-testid=minimap]").is_visible()
    assert page.locator("[data-testid=gradmap-legend]").is_visible()
    name = f"real-size-300-minimap-gradmap-{theme}{'-presenting' if presenting else ''}.png"
    page.screenshot(path=str(screenshots_dir / name))
