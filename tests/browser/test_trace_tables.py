"""The tables of a graph longer than a table shows (static/js/controls/trace-tables.js,
grad-table.js; TABLE_ROWS_MAX, 600 rows): the propagation table shows the window of 600 backward
steps the current step is in and moves with it; the gradient table lists the nodes 600 at a time,
the leaves first, and a button shows the next 600. micrograd's demo made 522,000 elements of its
propagation table and 460,000 of its gradient table: 12 s of layout each, on opening the tab."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from chainrule import engine

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
# A recurrent chain of 250 steps: 3 ops a statement, 751 nodes, as many backward steps.
SOURCE = "x = 0.5\nw = 0.9\nh0 = tanh(x * w)\n" + "\n".join(
    f"h{i} = tanh(h{i - 1} * w + x)" for i in range(1, 250)
)
PROPAGATION_ROWS = "#panel-propagation tbody tr"
GRAD_ROWS = "#panel-gradients .grad-table tbody tr"
MOVES = "the table moves along with the current step."


def current_row(page) -> tuple[str, str]:
    """The propagation table's lit row: its step index and its label."""
    row = page.locator(f"{PROPAGATION_ROWS}.current")
    return row.get_attribute("data-step"), row.locator(".row-jump").inner_text()


def test_a_long_backward_pass_is_tabled_a_window_at_a_time_that_follows_the_step(page):
    reply = engine.trace(SOURCE).to_dict()
    backward = [k for k, phase in enumerate(reply["steps"]["phase"]) if phase == "backward"]
    assert len(backward) == len(reply["nodes"]) > 600
    page.goto("/?" + urlencode({"source": SOURCE}))
    page.wait_for_selector(READY)
    page.click("#to-end")
    page.get_by_role("tab", name="Propagation").click()
    note = page.locator("#panel-propagation .table-note")
    count = len(backward)
    # The end: the last window (steps 601 … 751), its last row lit. A table of a sort longer than
    # it shows is filled when it comes into view (an observer's callback): its note is awaited.
    expect(note).to_have_text(f"Backward steps 601–{count} of {count}: {MOVES}")
    assert page.locator(PROPAGATION_ROWS).count() == len(backward) - 600
    assert current_row(page) == (str(backward[-1]), str(count))

    # The backward pass's start: the seed and the first 600 steps.
    page.keyboard.press("b")
    expect(note).to_have_text(f"Backward steps 1–600 of {count}: {MOVES}")
    labels = page.locator(f"{PROPAGATION_ROWS} .row-jump").all_inner_texts()
    assert labels == ["seed", *map(str, range(1, 601))]
    # Step 600's row, then the keys: the step after it is the next window's first row.
    page.locator(f"{PROPAGATION_ROWS}[data-step='{backward[599]}'] .row-jump").click()
    assert current_row(page) == (str(backward[599]), "600")
    step = "() => Number(document.body.dataset.apiStep)"
    for _ in range(10):  # a visit is a frame a contribution (its node's inputs: at most 2 here)
        if page.evaluate(step) >= backward[600]:
            break
        page.keyboard.press("ArrowRight")
    assert page.evaluate(step) == backward[600]
    # The table is refilled when it is in view (an observer's callback, after the key's task).
    expect(note).to_have_text(f"Backward steps 601–{count} of {count}: {MOVES}")
    assert current_row(page) == (str(backward[600]), "601")
    # Its row's gradient is the engine's.
    visited = reply["nodes"][reply["steps"]["node"][backward[600]]]
    grad = page.locator(f"{PROPAGATION_ROWS}.current td.grad").inner_text()
    assert float(grad.replace("\u2212", "-")) == pytest.approx(visited["grad"], rel=1e-3)


def test_a_big_graph_s_gradients_are_listed_600_at_a_time_leaves_first(page):
    reply = engine.trace(SOURCE).to_dict()
    page.goto("/?" + urlencode({"source": SOURCE}))
    page.wait_for_selector(READY)
    page.click("#to-end")
    page.get_by_role("tab", name="Gradients + check").click()
    more = page.locator("[data-testid=grad-table-more]")
    rows = len(reply["nodes"]) - 1  # every node but the root
    expect(more).to_have_text(
        f"The first 600 of {rows} nodes are listed, the leaves first; each card shows its own"
        f" gradient. Show {rows - 600} more"
    )
    ids = page.locator(GRAD_ROWS).evaluate_all("rows => rows.map((r) => r.dataset.nodeId)")
    leaves = [leaf["id"] for leaf in reply["leaves"]]
    assert len(ids) == 600 and ids[: len(leaves)] == leaves
    more.get_by_role("button", name=f"Show {rows - 600} more").click()
    assert page.locator(GRAD_ROWS).count() == rows and more.is_hidden()
    # A slider's new numbers keep the rows listed, and rewrite their gradients once the drag
    # pauses (merge-numbers.js NUMBERS_REST_MS): in the move's own task the table still shows the
    # old ones, and no tab or panel is written (a write of the same `hidden` restyled the table:
    # 80 ms a move on micrograd's demo).
    cell = f"{GRAD_ROWS}[data-node-id=n1] td.grad"
    before = page.locator(cell).inner_text()
    in_the_move = page.locator("[data-testid=slider-w] input.slider-value").evaluate(
        """(box, cell) => {
          const seen = [];
          const observer = new MutationObserver((records) => seen.push(...records));
          for (const el of document.querySelectorAll("[role=tab], [role=tabpanel]")) {
            observer.observe(el, { attributes: true });
          }
          box.value = "0.7";
          box.dispatchEvent(new Event("input", { bubbles: true }));
          seen.push(...observer.takeRecords());
          observer.disconnect();
          return { cell: document.querySelector(cell).textContent, writes: seen.length };
        }""",
        cell,
    )
    assert in_the_move == {"cell": before, "writes": 0}
    expected = engine.trace(SOURCE, {"w": 0.7}).to_dict()["nodes"][1]["grad"]
    page.wait_for_function(
        "([cell, want]) => Math.abs(Number(document.querySelector(cell).textContent"
        ".replace('\u2212', '-')) - want) <= 1e-3 * Math.abs(want)",
        arg=[cell, expected],
    )
    assert page.locator(GRAD_ROWS).count() == rows and more.is_hidden()
