"""The graph's drawing (issue 15 items 5 and 6): the dead tag waits for the forward pass, each card
attribute has one writer, and state notifications come in consistent rounds."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
# The relu preset's program with d = 5: e = 2 * -3 + 5 = -1, so f = relu(e) is dead.
DEAD_RELU = "/?source=" + quote("a = 2\nb = -3\nd = 5\nc = a * b\ne = c + d\nf = relu(e)")


def relu_card(page):
    return page.locator("[data-testid=node][data-label=f]")


def step_forward_until(page, condition_js: str) -> None:
    for _ in range(60):
        if page.evaluate(condition_js):
            return
        page.click("[data-testid=step-forward]")
    raise AssertionError(f"never reached: {condition_js}")


def test_dead_tag_appears_only_once_the_forward_pass_computed_the_relu(page):
    page.goto(DEAD_RELU)
    page.wait_for_selector(READY)
    card = relu_card(page)
    assert page.locator("[data-testid=node][data-dead=true]").count() == 0
    assert card.get_attribute("data-data") == ""
    assert not card.locator(".tag-dead").is_visible()
    card.hover()  # the tooltip is the card's <title>, written while the pointer is on the card
    assert "dead" not in (card.locator("title").text_content() or "")
    # Step until the relu's data is on its card: the tag and the tooltip line appear with it.
    step_forward_until(
        page, "() => document.querySelector('[data-testid=node][data-label=f]').dataset.data !== ''"
    )
    assert card.get_attribute("data-data") == "0"
    assert card.get_attribute("data-dead") == "true"
    assert card.locator(".tag-dead").is_visible()
    card.hover()
    assert card.locator("title").text_content().endswith("dead: passes no gradient")
    # And away again when stepping back before its forward step.
    page.click("[data-testid=step-back]")
    assert card.get_attribute("data-dead") == "false"
    assert not card.locator(".tag-dead").is_visible()


REENTRANT_JS = """async () => {
  const entry = document.querySelector('script[type=module]').src;
  const { subscribe, update, state } = (await import(entry)).scope.store;
  const seen = [];
  const offs = [];
  offs.push(subscribe((s, changed) => {
    if (changed.has('speed') && s.speed === 3) update({ speed: 4 });
  }));
  offs.push(subscribe((s, changed) => {
    if (changed.has('speed')) seen.push(s.speed);
  }));
  update({ speed: 3 });
  const after = state.speed;
  update({ speed: 1 });
  offs.forEach((off) => off());
  return { seen, after };
}"""


def test_an_update_made_by_a_subscriber_waits_for_the_round_to_end(page):
    page.goto("/")
    page.wait_for_selector(READY)
    result = page.evaluate(REENTRANT_JS)
    # Initial call (speed 1), then 3, then the subscriber's 4 as its own round, then 1: each once,
    # in order (re-entrant update() made the second subscriber see 4 before 3).
    assert result == {"seen": [1, 3, 4, 1], "after": 4}
