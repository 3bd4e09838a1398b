"""The page's render pass: the graph's marks (static/js/graph/marks.js) each own the
attributes they write and are drawn by the player in one pass per frame; the store's update loop
has a cap (static/js/core/store.js)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
# The page's entry module exports its scope (static/js/main.js); the other modules resolve beside it.
ENTRY = "document.querySelector('script[type=module]').src"


def open_preset(page, preset: str = "add-mul") -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=node]').length > 0")


CAP_JS = f"""async () => {{
  const {{ createStore, MAX_ROUNDS }} = await import(new URL('./core/store.js', {ENTRY}).href);
  const store = createStore();
  const seen = [];
  // A listener that answers every change of `count` with another: a loop between two views.
  store.subscribe((s, changed) => {{ if (changed.has('count') && s.count !== undefined) store.update({{ count: s.count + 1 }}); }});
  store.subscribe((s, changed) => {{ if (changed.has('speed')) seen.push(s.speed); }});
  let error = null;
  try {{ store.update({{ count: 0 }}); }} catch (err) {{ error = err.message; }}
  const count = store.state.count;
  store.update({{ speed: 3 }});  // the store still works after the cap
  return {{ error, count, maxRounds: MAX_ROUNDS, speed: store.state.speed, seen }};
}}"""


def test_a_listener_that_keeps_setting_state_stops_at_the_cap(page):
    open_preset(page)
    result = page.evaluate(CAP_JS)
    assert result["error"] == (
        f"state updates did not settle after {result['maxRounds']} rounds; still changing: count"
    )
    # Each round applied one patch (0, 1, …); the one still queued at the cap is dropped.
    assert result["count"] == result["maxRounds"] - 1
    assert result["speed"] == 3 and result["seen"] == [1, 3]


OWNERS_JS = f"""async () => {{
  const {{ scope }} = await import({ENTRY});
  const attempt = (mark) => {{ try {{ scope.graph.marks.register(mark); return 'registered'; }} catch (err) {{ return err.message; }} }};
  return [
    attempt({{ name: 'twin', owns: {{ card: ['data-gradmap'] }}, render: () => null }}),
    attempt({{ name: 'restyle', owns: {{ card: ['class'] }}, render: () => null }}),
    attempt({{ name: 'ring', owns: {{ edge: ['data-lesson'] }}, render: () => null }}),
  ];
}}"""


def test_no_two_marks_and_no_mark_and_the_drawing_own_one_attribute(page):
    open_preset(page)
    assert page.evaluate(OWNERS_JS) == [
        "the twin mark would write the cards' data-gradmap, which the gradmap mark writes",
        "the restyle mark would write the cards' class, which the drawing writes",
        "the ring mark would write the edges' data-lesson, which the lesson-rings mark writes",
    ]


# A new mark in one line: the card being visited carries data-probe, the edges it lights
# data-probe-edge; drawn in the pass of each frame, removed from what it no longer marks.
PROBE_JS = f"""async () => {{
  const {{ scope }} = await import({ENTRY});
  window.probeRenders = 0;
  scope.graph.marks.register({{
    name: 'probe',
    owns: {{ card: ['data-probe'], edge: ['data-probe-edge'] }},
    render({{ view }}) {{
      window.probeRenders += 1;
      if (!view.current) return null;
      return {{ cards: new Map([[view.current, {{ 'data-probe': 'here' }}]]),
               edges: new Map(view.active.map((id) => [id, {{ 'data-probe-edge': 'lit' }}])) }};
    }},
  }});
}}"""

MARKED_JS = """() => ({
  cards: [...document.querySelectorAll('[data-testid=node][data-probe]')].map((c) => c.dataset.label),
  current: [...document.querySelectorAll('[data-testid=node][data-current=true]')].map((c) => c.dataset.label),
  edges: [...document.querySelectorAll('path.edge[data-probe-edge]')].map((e) => e.dataset.edgeId).sort(),
  lit: [...document.querySelectorAll('path.edge.forward-active, path.edge.backward-active')].map((e) => e.dataset.edgeId).sort(),
})"""


def test_a_mark_is_one_registration_drawn_in_the_pass_of_every_frame(page):
    open_preset(page)
    page.evaluate(PROBE_JS)
    seen = set()
    for _ in range(12):
        page.keyboard.press("ArrowRight")
        marked = page.evaluate(MARKED_JS)
        # The mark and the drawing agree at every frame: one card, the visited one; the lit edges.
        assert marked["cards"] == marked["current"] and len(marked["cards"]) <= 1
        assert marked["edges"] == marked["lit"]
        seen.update(marked["cards"])
    assert len(seen) >= 3  # it moved from card to card, leaving none marked behind
    renders = page.evaluate("window.probeRenders")
    # A mark that reads no state key besides the frame is drawn once per frame, and not on a hover.
    page.locator("[data-testid=node][data-label=a]").hover()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=node][data-linked=true]') !== null"
    )
    assert page.evaluate("window.probeRenders") == renders
