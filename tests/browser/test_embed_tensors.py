"""A tensor program in the notebook's player (static/embed/chainrule-embed.js, issue 43): the
anywidget contract with chainrule.notebook's Widget for a `kind: "tensor"` trace, driven by a
stand-in model whose "kernel" is the server (its /api/graph for `values`, its /api/fan-in for
the fan-in messages the Widget answers in a real kernel: tests/app/test_notebook_tensors.py).
The player draws the page's tensor view: cards with shapes, the pulse stepped op by op, a
gradient cell's fan-in asked of the kernel, a leaf cell changed and recomputed there."""

from __future__ import annotations

import json

import pytest
from tensor_cells import cell
from test_embed import FAKE_MODEL

from chainrule.app.http.pages import ui_catalogue
from chainrule.engine.ops import page_table
from chainrule.engine.presets import presets

pytestmark = pytest.mark.browser

HARNESS_PATH = "/__embed-tensor-harness__"
PROGRAM = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]
PLAYER = "[data-testid=player]"
TENSORS = "[data-testid=tensor-graph][data-ready=true]"
# The stand-in model, with anywidget's custom messages: `send` records what the page sent, and
# `reply(content)` is a message from the kernel.
MODEL_WITH_MESSAGES = f"""async (traits) => {{
    const model = await ({FAKE_MODEL})(traits);
    model.sent = [];
    model.send = (content) => model.sent.push(structuredClone(content));
    const handlers = [];
    const on = model.on, off = model.off;
    model.on = (event, fn) => event === 'msg:custom' ? handlers.push(fn) : on(event, fn);
    model.off = (event, fn) => event === 'msg:custom' ? handlers.splice(handlers.indexOf(fn), 1) : off(event, fn);
    model.reply = (content) => handlers.forEach((fn) => fn(content));
    model.messageListeners = () => handlers.length;
    return model;
}}"""


@pytest.fixture
def harness(page, live_server):
    """A blank document of the server's origin with `window.api` (the bundle, the op table, the
    words, `post` for /api/graph and `fanIn` for /api/fan-in of PROGRAM, its trace) and a
    player mounted by the anywidget `render` on a stand-in model (`window.model`)."""
    html = f"""<!doctype html><html><head><meta charset="utf-8"></head><body><div id="host"></div>
<script type="application/json" id="ops">{json.dumps(page_table())}</script>
<script type="application/json" id="ui">{json.dumps(ui_catalogue("en"))}</script></body></html>"""
    page.route(
        f"{live_server}{HARNESS_PATH}",
        lambda route: route.fulfill(body=html, content_type="text/html"),
    )
    page.goto(HARNESS_PATH)
    page.evaluate(
        f"""async (source) => {{
            const bundle = await import('/static/embed/chainrule-embed.js');
            const ask = (path) => async (body) => (await fetch(path, {{ method: 'POST',
                headers: {{ 'content-type': 'application/json' }}, body: JSON.stringify({{ source, ...body }}) }})).json();
            const read = (id) => JSON.parse(document.getElementById(id).textContent);
            const post = ask('/api/graph');
            window.api = {{ bundle, post, fanIn: ask('/api/fan-in'), ops: read('ops'), ui: read('ui'), trace: await post({{}}) }};
            window.model = await ({MODEL_WITH_MESSAGES})({{ trace: api.trace, ops: api.ops, ui: api.ui,
                title: 'tensor-mlp', values: {{}}, error: null }});
            window.cleanup = await bundle.default.render({{ model, el: document.getElementById('host') }});
        }}""",
        PROGRAM,
    )
    page.wait_for_selector(TENSORS)
    return page


def test_the_notebook_player_draws_a_tensor_program_and_steps_it(harness):
    page = harness
    trace = page.evaluate("api.trace")
    player = page.locator(PLAYER)
    assert player.get_attribute("data-view") == "tensor"
    cards = page.locator("[data-testid=tensor]").evaluate_all(
        "cs => cs.map(c => [c.dataset.tensorId, c.querySelector('.tensor-shape').textContent])"
    )
    assert cards == [[n["id"], "\u00d7".join(map(str, n["shape"])) or "one number"]
                     for n in trace["nodes"]]  # fmt: skip
    assert page.locator("[data-testid=program]").text_content() == PROGRAM.strip()
    # The scalar graph's pane stays hidden under the tensor view, as on the page.
    assert not page.locator("#graph").is_visible() and page.locator("#tensor-pane").is_visible()
    # The transport steps the tensor timeline: forward ops, the seed, the backward ops.
    assert player.get_attribute("data-phase") == "forward"
    assert page.locator("[data-testid=scrub]").get_attribute("max") == str(len(trace["steps"]) - 1)
    page.locator("#to-end").click()
    assert player.get_attribute("data-phase") == "backward"
    matmul = next(i for i, s in enumerate(trace["steps"])
                  if s["phase"] == "backward" and trace["nodes"][int(s["node"][1:])]["label"] == "X @ W")  # fmt: skip
    page.locator("[data-testid=scrub]").fill(str(matmul))
    narration = page.locator("#narration").text_content()
    assert "dW = X.T @ d(X @ W)" in narration, narration


def test_a_gradient_cell_asks_the_kernel_for_its_fan_in(harness, screenshots_dir):
    page = harness
    trace = page.evaluate("api.trace")
    w = next(n for n in trace["nodes"] if n["name"] == "W")
    page.locator("#to-end").click()
    page.locator(cell(w["id"], "grad", "1,2")).click()
    sent = page.evaluate("model.sent")
    assert sent == [{"fan_in": {"id": 1, "tensor": w["id"], "index": [1, 2], "values": {}}}]
    # The kernel answers (the Widget computes POST /api/fan-in's reply with the engine).
    page.evaluate(
        """async () => { const { id, ...ask } = model.sent[0].fan_in;
            model.reply({ fan_in: { id, reply: await api.fanIn(ask) } }); }"""
    )
    fan = page.locator("[data-testid=fan-in]")
    fan.wait_for(state="visible")
    sentence = page.locator("[data-testid=fan-in-sentence]").text_content()
    assert sentence.startswith("dW[1,2] = \u03a3\u1d62 X[i,1]\u00b7d(X @ W)[i,2] = "), sentence
    assert float(fan.get_attribute("data-sum")) == w["grad"][1][2]
    assert fan.get_attribute("data-terms") == "3"
    lit = page.locator("[data-testid=tensor-cell][class*=lit-]").count()
    assert lit == 7  # the cell, the three d(X @ W)[i,2], the three X[i,1]
    page.set_viewport_size({"width": 1280, "height": 720})
    page.locator(PLAYER).screenshot(path=str(screenshots_dir / "embed-tensor-fan-in.png"))

    # An answer to an older ask is not shown; an error answer is, in the error box.
    b = next(n for n in trace["nodes"] if n["name"] == "b")
    page.locator(cell(b["id"], "grad", "1")).click()
    page.evaluate(
        """() => model.reply({ fan_in: { id: 2, error: { type: 'ShapeError',
            message: 'index [5] is not an element of a tensor of shape (3,)' } } })"""
    )
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "index [5] is not an element" in error.text_content()
    # The cleanup: the message listener goes with the player.
    assert page.evaluate("model.messageListeners()") == 1
    page.evaluate("cleanup()")
    assert page.evaluate("model.messageListeners()") == 0


def test_a_leaf_cell_changed_is_recomputed_by_the_kernel(harness):
    page = harness
    page.locator("#to-end").click()
    w = next(n for n in page.evaluate("api.trace")["nodes"] if n["name"] == "W")
    page.locator(cell(w["id"], "data", "1,2")).click()
    editor = page.locator("[data-testid=tensor-cell-editor]")
    editor.wait_for(state="visible")
    assert editor.get_attribute("data-cell") == "W[1,2]"
    page.locator("[data-testid=tensor-cell-value]").fill("0.25")
    page.locator("[data-testid=tensor-cell-value]").press("Enter")
    assert page.evaluate("model.saves") == [{"W[1,2]": 0.25}]
    page.evaluate("async () => model.sendTrace(await api.post({ values: model.get('values') }))")
    page.wait_for_function(
        "(sel) => document.getElementById('host').shadowRoot.querySelector(sel)?.dataset.value === '0.25'",
        arg=cell(w["id"], "data", "1,2"),
    )
    expected = page.evaluate("api.post({ values: { 'W[1,2]': 0.25 } })")
    grad = next(n for n in expected["nodes"] if n["id"] == w["id"])["grad"]
    assert page.locator(cell(w["id"], "grad", "0,0")).get_attribute("data-value") == repr(
        grad[0][0]
    )
    # Still at the end of the timeline.
    assert page.locator(PLAYER).get_attribute("data-phase") == "backward"


def test_the_player_starts_from_the_values_the_kernel_traced_with(harness):
    """`chainrule.show(source, values={"W[1,2]": 0.25})`: the widget's `values` trait holds
    them, and a cell changed then sends them with it (the kernel traces the program again with
    every value, not the new one alone)."""
    page = harness
    page.evaluate(
        f"""async () => {{
            cleanup();
            const values = {{ 'W[1,2]': 0.25 }};
            window.model = await ({MODEL_WITH_MESSAGES})({{ trace: await api.post({{ values }}), ops: api.ops,
                ui: api.ui, title: 'with values', values, error: null }});
            window.cleanup = await api.bundle.default.render({{ model, el: document.getElementById('host') }});
        }}"""
    )
    page.wait_for_selector(TENSORS)
    assert page.locator(cell("t1", "data", "1,2")).get_attribute("data-value") == "0.25"
    page.locator(cell("t0", "data", "0,0")).click()
    page.locator("[data-testid=tensor-cell-value]").fill("5")
    page.locator("[data-testid=tensor-cell-value]").press("Enter")
    assert page.evaluate("model.saves") == [{"W[1,2]": 0.25, "X[0,0]": 5}]
    # A gradient cell's fan-in is asked with them too.
    page.locator("#to-end").click()
    page.locator(cell("t1", "grad", "0,0")).click()
    assert page.evaluate("model.sent.at(-1).fan_in.values") == {"W[1,2]": 0.25, "X[0,0]": 5}


def test_a_player_without_a_kernel_says_a_gradient_s_sum_needs_one(harness):
    """mountPlayer without `fanIn` (a notebook reopened with its widgets' state, no kernel): the
    player steps and draws, and a gradient cell says where its sum can be had."""
    page = harness
    page.evaluate(
        """() => { cleanup();
            window.player = api.bundle.mountPlayer(document.getElementById('host'),
                { trace: api.trace, ops: api.ops, ui: api.ui, title: 'no kernel' }); }"""
    )
    page.wait_for_selector(TENSORS)
    page.locator("#to-end").click()
    page.locator(cell("t1", "grad", "1,2")).click()
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "show this program with chainrule.show() in a running notebook" in error.text_content()
    assert not page.locator("[data-testid=fan-in]").is_visible()
