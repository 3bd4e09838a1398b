"""In a real Chromium: one number format everywhere the page writes numbers, and
predict mode that nothing spoils (slider moves clear the answers; final gradients, End, the
tables and the explanations wait for the predictions)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
MINUS = "\u2212"

# core/format.js resolved against the page's own module URL (the static path is versioned).
FORMAT_TABLE_JS = """async () => {
  const url = new URL('./core/format.js', document.querySelector('script[type=module]').src);
  const f = await import(url.href);
  const values = [0, -0, 1e-4, -9.9e-4, 12345, 123456, -1.5e-7, 1e21, Infinity, -Infinity, NaN,
    6.8813735870195432, 'Infinity', '-Infinity', 'NaN', null];
  return {
    rows: values.map(v => [f.shortText(v), f.compactText(v), f.preciseText(v), f.fullText(v)]),
    chain: f.chainText({upstream: 1, local: -1, contribution: -1}),
    glyph: f.opGlyph({op: '**', exponent: 2}),
  };
}"""

#  value                 card (short)       label (compact)  tooltip (precise)       data-* (full)
FORMAT_TABLE = [
    ("0", ["0", "0", "0", "0"]),
    ("-0", ["0", "0", "0", "0"]),
    ("1e-4", ["1.000e\u22124", "1e\u22124", "0.0001", "0.0001"]),
    ("-9.9e-4", ["\u22129.900e\u22124", "\u22129.9e\u22124", "\u22120.00099", "-0.00099"]),
    ("12345", ["1.235e4", "1.235e4", "12345", "12345"]),
    ("123456", ["1.235e5", "1.235e5", "123456", "123456"]),
    ("-1.5e-7", ["\u22121.500e\u22127", "\u22121.5e\u22127", "\u22121.5e\u22127", "-1.5e-7"]),
    ("1e21", ["1.000e21", "1e21", "1e21", "1e+21"]),
    ("Infinity", ["\u221e", "\u221e", "\u221e", "Infinity"]),
    ("-Infinity", ["\u2212\u221e", "\u2212\u221e", "\u2212\u221e", "-Infinity"]),
    ("NaN", ["NaN", "NaN", "NaN", "NaN"]),
    ("6.8813735870195432", ["6.881", "6.881", "6.881373587019543", "6.881373587019543"]),
    ("'Infinity' (API)", ["\u221e", "\u221e", "\u221e", "Infinity"]),
    ("'-Infinity' (API)", ["\u2212\u221e", "\u2212\u221e", "\u2212\u221e", "-Infinity"]),
    ("'NaN' (API)", ["NaN", "NaN", "NaN", "NaN"]),
    ("null (unknown)", ["--", "--", "--", ""]),
]

# Shapes no displayed number may take: `e+`, an ASCII minus in an exponent or as a sign, and a
# number mixing the two minus kinds.
FORBIDDEN = {
    "e+ exponent": re.compile(r"\d[eE]\+"),
    "hyphen-minus in an exponent": re.compile(r"\d[eE]-\d"),
    "hyphen-minus as a sign": re.compile(r"(?<![\w.)\]])-\d"),
    "mixed minus kinds": re.compile(r"(\u2212\d[\d.]*[eE]-|-\d[\d.]*[eE]\u2212)"),
}

# Every text the page writes about numbers on the graph: cards (with their tooltips, written as
# the pointer reaches a card), edge labels, lab marks, and the step's narration (the server's
# template filled in the page: its minus sign is the page's, issue 23's `(−3)`; its exponents
# stay Python's `%g`, `e+06`, which this program's numbers never reach).
GRAPH_TEXTS_JS = """() => [
  document.getElementById('narration').textContent,
  ...[...document.querySelectorAll('[data-testid=node]')].flatMap(g => {
      g.dispatchEvent(new PointerEvent('pointerenter'));
      return [...g.querySelectorAll('text, title')].map(t => t.textContent);
  }),
  ...[...document.querySelectorAll('.edge-label, .lab-edge-mark')].map(g => g.textContent),
  ...[...document.querySelectorAll('[data-testid=node]')].map(g => g.getAttribute('aria-label')),
]"""
PANEL_TEXTS_JS = """() => [
  ...[...document.querySelectorAll('#panel-propagation td, #panel-gradients td')]
      .map(td => td.textContent),
  ...[...document.querySelectorAll('.lab-result p, #explain p, #explain h2')].map(p => p.textContent),
]"""

# (a·b + c)·a: a tiny negative, two large numbers; a reaches the root twice, so the = bug loses one.
PROGRAM = "a = -0.00099\nb = 12345\nc = 123456\nd = a * b\ne = d + c\nf = e * a\n"


def type_program(page, source: str) -> None:
    page.fill("[data-testid=source]", source)
    page.press("[data-testid=source]", "Control+Enter")


def grads(page) -> dict[str, str]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('[data-testid=node]')]
            .filter(n => n.dataset.label).map(n => [n.dataset.label, n.dataset.grad]))"""
    )


def node(page, label: str):
    return page.locator(f"[data-testid=node][data-label={label}]")


def open_labs(page, preset: str) -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)
    page.click("#tab-labs")


def start_predicting(page) -> None:
    page.click("[data-testid=lab-predict]")
    page.click("#jump-backward")  # stops at the seed, before the first gradient to predict
    assert page.text_content("[data-testid=phase]") == "seed"


def test_format_rules_table(page):
    page.goto("/")
    page.wait_for_selector(READY)
    result = page.evaluate(FORMAT_TABLE_JS)
    for (value, expected), got in zip(FORMAT_TABLE, result["rows"], strict=True):
        assert got == expected, value
    assert result["chain"] == "1 \u00d7 (\u22121) = \u22121"
    assert result["glyph"] == "**2"


def test_no_number_on_the_page_breaks_the_format_rules(page):
    page.goto("/")
    page.wait_for_selector(READY)
    type_program(page, PROGRAM)
    page.wait_for_selector("[data-testid=node][data-label=f]")
    page.click("#tab-labs")
    page.click("[data-testid=lab-overwrite]")
    page.wait_for_selector("[data-testid=lab-overwrite-result] .lab-bad")
    if page.locator("#to-start").is_enabled():
        page.click("#to-start")
    texts: list[str] = []
    step_forward = page.locator("[data-testid=step-forward]")
    while step_forward.is_enabled():  # every frame: the edge labels and marks of each step
        texts += page.evaluate(GRAPH_TEXTS_JS)
        step_forward.click()
    texts += page.evaluate(GRAPH_TEXTS_JS)
    # The cards, a comparison mark and an edge mark, written by the rules.
    assert node(page, "a").locator(".value.data").text_content() == "\u22129.900e\u22124"
    assert node(page, "b").locator(".value.data").text_content() == "1.235e4"
    assert node(page, "c").locator(".value.data").text_content() == "1.235e5"
    a_id = node(page, "a").get_attribute("data-node-id")
    mark = page.locator(f".lab-deco[data-node-id={a_id}] .lab-grad")
    assert mark.text_content() == "\u221212.22 \u2260 1.234e5"
    assert node(page, "a").get_attribute("data-data") == "-0.00099"  # attributes keep JS text
    node(page, "a").hover()  # the tooltip is written while the pointer is on the card
    assert "data = \u22120.00099" in node(page, "a").locator("title").text_content()
    assert "lost 1.234e5" in texts
    assert any(t.startswith("1 \u00d7 (\u22129.9e\u22124) = ") for t in texts)  # an edge label
    node(page, "a").click()  # the node explanation
    page.wait_for_selector("#explain:not([hidden])")
    page.click("#tab-propagation")
    page.wait_for_selector("#panel-propagation td")
    texts += page.evaluate(PANEL_TEXTS_JS)
    page.click("#tab-gradients")
    page.wait_for_selector("#panel-gradients td")
    texts += page.evaluate(PANEL_TEXTS_JS)
    assert any("\u22129.9e\u22124" in t for t in texts if t)
    bad = [(t, name) for t in texts if t for name, shape in FORBIDDEN.items() if shape.search(t)]
    assert bad == []


def test_predict_answers_reset_when_a_slider_moves(page):
    open_labs(page, "add-mul")
    start_predicting(page)
    answer = page.locator("[data-testid=predict-input]")
    score = page.locator("[data-testid=predict-score]")
    answer.fill("10")
    answer.press("Enter")
    assert score.text_content() == "1 / 1 right"
    assert grads(page)["e"] == "10"
    # c = 4: grad[e] is 4 now, so the answer 10 no longer applies; the run starts again before it.
    page.fill("[data-testid=slider-c] .slider-value", "4")
    page.wait_for_selector("[data-testid=node][data-label=c][data-data='4']")
    assert score.text_content() == "0 / 0 right"
    assert page.text_content("[data-testid=predict-feedback]") == ""
    assert page.text_content("[data-testid=phase]") == "seed"
    assert page.locator("label[for=predict-input]").text_content() == "grad[e] ="
    assert grads(page)["e"] == ""
    answer.fill("4")
    answer.press("Enter")
    assert score.text_content() == "1 / 1 right"
    assert grads(page)["e"] == "4"
    # A new program: new questions, a fresh score.
    type_program(page, "a = 2\nb = a * a\n")
    page.wait_for_selector("[data-testid=node][data-label=b]")
    page.wait_for_function(
        "() => document.querySelector('label[for=predict-input]').textContent === 'grad[a] ='"
    )
    assert score.text_content() == "0 / 0 right"


def test_show_final_gradients_waits_for_the_predictions(page):
    open_labs(page, "add-mul")
    start_predicting(page)
    box = page.locator("#toggle-final-grads")
    assert box.is_disabled()
    assert page.locator("[data-testid=final-grads-note]").is_visible()
    box.click(force=True)  # a disabled box does not change
    assert not box.is_checked()
    unrevealed = {"a": "", "b": "", "c": "", "e": ""}
    assert {k: grads(page)[k] for k in unrevealed} == unrevealed
    # End stops before the first unanswered gradient.
    page.locator("[data-testid=phase]").click()
    page.keyboard.press("End")
    assert page.text_content("[data-testid=phase]") == "seed"
    assert {k: grads(page)[k] for k in unrevealed} == unrevealed
    # Nor do the tooltip, the node explanation and the gradient table.
    node(page, "a").hover()
    assert "grad = --" in node(page, "a").locator("title").text_content()
    node(page, "a").click()
    page.wait_for_selector("#explain:not([hidden])")
    assert "grad[a] = --" in page.text_content("#explain")
    page.keyboard.press("Escape")
    page.click("#tab-gradients")
    assert "Run the backward pass" in page.text_content("#panel-gradients")
    # Predict off: the box works again.
    page.click("#tab-labs")
    page.click("[data-testid=lab-predict]")
    assert box.is_enabled()
    assert page.locator("[data-testid=final-grads-note]").is_hidden()
    box.check()
    assert grads(page)["a"] == "10"


def test_propagation_table_waits_for_the_predictions(page):
    open_labs(page, "add-mul")
    start_predicting(page)
    page.click("#tab-propagation")
    cells_js = """() => [...document.querySelectorAll('#panel-propagation tbody tr')]
        .map(tr => [...tr.cells].slice(1).map(td => td.textContent))"""
    rows = page.evaluate(cells_js)
    assert rows[0] == ["f", "1", "seed: grad[f] = 1"]
    assert rows[1] == ["f", "1", "grad[e] += ?grad[c] += ?"]  # f's own gradient is on its card
    assert all(row[1] == "?" for row in rows[2:])
    assert not any(re.search(r"\d", row[2]) for row in rows[1:])
    # Answer grad[e]: it (and only it) is revealed, in the table too.
    page.click("#tab-labs")
    page.fill("[data-testid=predict-input]", "10")
    page.press("[data-testid=predict-input]", "Enter")
    assert grads(page)["e"] == "10" and grads(page)["c"] == ""
    page.click("#tab-propagation")
    assert page.evaluate(cells_js)[1] == ["f", "1", "grad[e] += 1 \u00d7 10 = 10grad[c] += ?"]
    # Predict off: every row shows its numbers again.
    page.click("#tab-labs")
    page.click("[data-testid=lab-predict]")
    page.click("#tab-propagation")
    rows = page.evaluate(cells_js)
    assert rows[1] == [
        "f",
        "1",
        "grad[e] += 1 \u00d7 10 = 10grad[c] += 1 \u00d7 (\u22121) = \u22121",
    ]
    assert "?" not in "".join(cell for row in rows for cell in row)


def test_predict_mode_starts_before_the_first_question(page):
    open_labs(page, "add-mul")
    page.click("#to-end")
    assert grads(page)["a"] == "10"
    page.click("[data-testid=lab-predict]")  # at the end, every gradient is on screen: go back
    assert page.text_content("[data-testid=phase]") == "seed"
    assert grads(page) == {"a": "", "b": "", "c": "", "e": "", "f": "1"}
    assert page.locator("label[for=predict-input]").text_content() == "grad[e] ="
    page.click("#jump-backward")  # the backward pass starts with the question, not its answer
    assert page.text_content("[data-testid=phase]") == "seed"
    assert grads(page)["e"] == ""


def test_share_link_with_final_grads_does_not_bypass_predict(page):
    page.goto("/?preset=add-mul")
    page.wait_for_selector(READY)
    page.locator("#toggle-final-grads").check()
    page.wait_for_function("() => new URLSearchParams(location.search).get('final') === '1'")
    link = page.url  # the share link carries final=1
    page.goto("about:blank")
    page.goto(link)
    page.wait_for_selector(READY)
    box = page.locator("#toggle-final-grads")
    assert box.is_checked()
    assert grads(page)["a"] == "10"  # final gradients at step 0
    page.click("#tab-labs")
    page.click("[data-testid=lab-predict]")
    assert not box.is_checked() and box.is_disabled()
    assert grads(page) == {"a": "", "b": "", "c": "", "e": "", "f": ""}
    page.click("#jump-backward")
    assert page.text_content("[data-testid=phase]") == "seed"
    assert grads(page)["f"] == "1" and grads(page)["e"] == ""
