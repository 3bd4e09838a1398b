"""The embeddable player as the notebook widget uses it (static/embed/chainrule-embed.js): live
sliders through `recompute` (latest move wins, failures in the error box), and the anywidget
contract with chainrule.notebook's Widget (traits trace_zlib, ops, title, ui, values, error), driven by a
stand-in model whose "kernel" is the server's /api/graph."""

from __future__ import annotations

import json

import pytest

from chainrule import engine
from chainrule.app.http.pages import ui_catalogue
from chainrule.engine.ops import page_table

pytestmark = pytest.mark.browser

PLAYER = "[data-testid=player]"
HARNESS_PATH = "/__embed-harness__"
SOURCE = "a = 2\nb = -3\nc = 10\ne = a + b\nf = e * c"


@pytest.fixture
def harness(page, live_server):
    """A blank document of the server's origin with `window.api`: the bundle, the op table,
    the words (English), a trace of SOURCE, and `window.host`, the element a player mounts on."""
    html = f"""<!doctype html><html><head><meta charset="utf-8"></head><body>
<button id="outside">outside</button><div id="host"></div>
<script type="application/json" id="ops">{json.dumps(page_table())}</script>
<script type="application/json" id="ui">{json.dumps(ui_catalogue("en"))}</script></body></html>"""
    page.route(
        f"{live_server}{HARNESS_PATH}",
        lambda route: route.fulfill(body=html, content_type="text/html"),
    )
    page.goto(HARNESS_PATH)
    page.evaluate(
        """async (source) => {
            const bundle = await import('/static/embed/chainrule-embed.js');
            const post = async (values) => {
                const reply = await fetch('/api/graph', { method: 'POST', headers: { 'content-type': 'application/json' },
                    body: JSON.stringify({ source, values }) });
                return reply.json();
            };
            const read = (id) => JSON.parse(document.getElementById(id).textContent);
            window.api = { bundle, post, ops: read('ops'), ui: read('ui'), trace: await post({}) };
            window.host = document.getElementById('host');
        }""",
        SOURCE,
    )
    return page


def card(page, label: str):
    return page.locator(f"[data-testid=node][data-label={label}]")


def move_slider(page, name: str) -> None:
    """One step right on leaf `name`'s range, with the keyboard."""
    page.locator(f"[data-testid=slider-{name}] input[type=range]").press("ArrowRight")


def test_live_sliders_ask_recompute_and_the_newest_move_wins(harness):
    page = harness
    page.evaluate(
        """() => {
            window.calls = [];  // [{values, resolve, reject}] in call order
            window.player = api.bundle.mountPlayer(host, { trace: api.trace, ops: api.ops, ui: api.ui, title: 'live',
                recompute: (values) => new Promise((resolve, reject) => calls.push({ values, resolve, reject })) });
        }"""
    )
    assert page.locator("[data-testid=read-only-note]").count() == 0
    assert not page.locator("[data-testid=slider-a] input[type=range]").is_disabled()
    page.locator("[data-testid=graph]").click(position={"x": 8, "y": 8})
    page.keyboard.press("End")
    end = page.locator(PLAYER).get_attribute("data-step-index")

    move_slider(page, "a")
    first = page.evaluate("calls[0].values")
    assert (
        set(first) == {"a", "b", "c"} and first["b"] == -3 and first["c"] == 10 and first["a"] > 2
    )
    move_slider(page, "a")
    move_slider(page, "a")
    assert page.evaluate("calls.length") == 1, "one call at a time: later moves wait"
    # The first reply arrives after newer moves: it is not shown; the newest move is asked next.
    page.evaluate("async () => calls[0].resolve(await api.post(calls[0].values))")
    page.wait_for_function("() => calls.length === 2")
    newest = page.evaluate("calls[1].values")
    assert newest["a"] > first["a"]
    # The cards already read the newest move, from the page's own numbers (compute/instant-numbers.js), and the
    # stale reply did not take them back.
    assert float(card(page, "a").get_attribute("data-data")) == newest["a"]
    page.evaluate("async () => calls[1].resolve(await api.post(calls[1].values))")
    card(page, "a").and_(page.locator(f"[data-data='{newest['a']}']")).wait_for()
    # Same program, new values: the player stays at the end; the cards read the new gradients.
    assert page.locator(PLAYER).get_attribute("data-step-index") == end
    assert float(card(page, "c").get_attribute("data-grad")) == pytest.approx(newest["a"] - 3)

    # A failure is shown in the player's error box; the next trace clears it.
    move_slider(page, "b")
    page.evaluate(
        """() => calls[2].reject({ detail: { type: 'SyntaxError', message: 'expected a value', line: 1,
            column: 5, snippet: 'a = ', caret: '    ^' } })"""
    )
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "expected a value" in error.text_content() and "line 1, column 5" in error.text_content()
    page.evaluate("async () => player.setTrace(await api.post({ b: -2 }))")
    error.wait_for(state="hidden")
    assert card(page, "b").get_attribute("data-data") == "-2"


# The stand-in model (async: it packs the trace): the traits of chainrule.notebook's Widget, its
# `trace` sent as the widget sends it, `trace_zlib` (zlib-compressed JSON, in the DataView
# ipywidgets makes of a message's binary buffer); `sendTrace(trace)` is the kernel's new trace.
FAKE_MODEL = """async ({ trace, ...others }) => {
    const packed = async (trace) => new DataView(await new Response(new Blob([JSON.stringify(trace)])
        .stream().pipeThrough(new CompressionStream('deflate'))).arrayBuffer());
    const traits = { ...others, trace_zlib: await packed(trace) };
    const handlers = {};
    const model = {
        saves: [],
        get: (key) => traits[key],
        set(key, value) { traits[key] = value; for (const fn of handlers[`change:${key}`] ?? []) fn(); },
        async sendTrace(trace) { model.set('trace_zlib', await packed(trace)); },
        on(event, fn) { (handlers[event] ??= []).push(fn); },
        off(event, fn) { handlers[event] = (handlers[event] ?? []).filter((g) => g !== fn); },
        save_changes() { model.saves.push(structuredClone(traits.values)); },
        listeners: () => Object.values(handlers).flat().length,
    };
    return model;
}"""


def test_the_anywidget_contract(harness):
    page = harness
    page.evaluate(
        f"""async () => {{
            document.body.dataset.jpThemeLight = 'false';  // JupyterLab's dark theme
            window.model = await ({FAKE_MODEL})({{ trace: api.trace, ops: api.ops, ui: api.ui, title: 'from the kernel', values: {{}}, error: null }});
            window.cleanup = await api.bundle.default.render({{ model, el: host }});
        }}"""
    )
    assert page.locator("[data-testid=title]").text_content() == "from the kernel"
    assert page.evaluate("host.dataset.theme") == "dark"
    # Lumino (JupyterLab, Notebook 7) runs no shortcut for keys typed inside the widget.
    assert page.evaluate("host.getAttribute('data-lm-suppress-shortcuts')") == "true"
    background = page.evaluate(
        "getComputedStyle(host.shadowRoot.querySelector('[data-testid=player]')).backgroundColor"
    )
    assert background == "rgb(18, 20, 23)"  # app.css's dark --bg, inside the shadow root
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"

    # A slider move sets `values` (every leaf) and saves; the kernel answers with `trace`.
    move_slider(page, "c")
    saves = page.evaluate("model.saves")
    assert len(saves) == 1 and set(saves[0]) == {"a", "b", "c"} and saves[0]["c"] > 10
    page.evaluate("async () => model.sendTrace(await api.post(model.get('values')))")
    card(page, "c").and_(page.locator(f"[data-data='{saves[0]['c']}']")).wait_for()

    # The kernel answers with `error`: shown in the player's error box.
    page.evaluate(
        "() => model.set('error', { type: 'NameError', message: 'name w is not defined', line: 2, column: 1, snippet: 'w', caret: '^' })"
    )
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "name w is not defined" in error.text_content()

    # The cleanup: listeners off, the player gone, its keys unbound.
    assert page.evaluate("model.listeners()") == 3  # trace, error, the kernel's messages
    page.evaluate("cleanup()")
    assert page.evaluate("model.listeners()") == 0
    assert page.evaluate("host.shadowRoot.childElementCount") == 0
    page.evaluate("model.sendTrace(api.trace)")  # no player left to draw it: no error either


def test_the_embedded_player_has_the_pages_features_that_need_no_server(harness, screenshots_dir):
    """Issue 23: every feature mounts on a player's scope, so the embedded player (read-only here,
    as in a one-file HTML) shows the page's gradient map, minimap, follow and predict lab, and its
    micrograd script, and the Train lab (it descends in the player: issue 25); the labs that need
    the server (the = bug, the visit order) and the lessons are the page's alone."""
    page = harness
    page.evaluate(
        "() => { window.player = api.bundle.mountPlayer(host, { trace: api.trace, ops: api.ops, ui: api.ui, title: 'features' }); }"
    )
    player = page.locator(PLAYER)
    assert player.locator("[data-testid=follow]").get_attribute("aria-pressed") == "true"
    assert player.locator("[data-testid=minimap]").count() == 1
    # The gradient map colours this player's cards, from its own toggle and state.
    player.locator("[data-testid=gradmap]").check()
    player.locator("#to-end").click()
    buckets = player.locator("[data-testid=node]").evaluate_all(
        "cs => Object.fromEntries(cs.map(c => [c.dataset.label, c.dataset.gradmap]))"
    )
    assert buckets == {
        "a": "6",
        "b": "6",
        "c": "5",
        "e": "6",
        "f": "5",
    }  # |10|, |10|, |1|, |10|, |1|
    assert player.locator(".layer-gradmap .gradmap-sign").count() == 5
    assert player.locator("[data-testid=gradmap-legend]").is_visible()
    # A Labs tab with the predict lab and the Train lab (the others need the server).
    player.locator("#tab-labs").click()
    cards = player.locator("#panel-labs .lab-card")
    classes = cards.evaluate_all("cs => cs.map(c => c.className)")
    assert len(classes) == 2 and "lab-predict" in classes[0] and "lab-train" in classes[1]
    player.locator("[data-testid=lab-predict]").click()
    player.locator("#to-start").click()
    player.locator("[data-testid=graph]").click(position={"x": 8, "y": 8})
    page.keyboard.press("End")  # held before the first gradient to predict
    assert player.locator("[data-testid=predict-prompt] label").text_content() == "grad[e] ="
    assert "f passes it back next" in player.locator("[data-testid=predict-status]").text_content()
    held = int(player.get_attribute("data-step-index"))
    assert held < int(player.locator("[data-testid=scrub]").get_attribute("max"))
    assert player.locator("[data-testid=node][data-label=e]").get_attribute("data-grad") == ""
    player.locator("[data-testid=predict-input]").fill("10")
    player.locator("[data-testid=predict-input]").press("Enter")
    assert player.locator("[data-testid=node][data-label=e]").get_attribute("data-grad") == "10"
    player.screenshot(path=str(screenshots_dir / "embed-features.png"))
    # The micrograd script of this player's trace, in a dialog inside the player.
    player.locator("[data-testid=copy-micrograd]").click()
    script = player.locator("[data-testid=micrograd-dialog-text]")
    script.wait_for(state="visible")
    assert "from micrograd.engine import Value" in script.input_value()
    page.keyboard.press("Escape")
    # The page's own: no lessons, no labs that need the server, no 3D switch.
    for testid in ("lesson", "lab-overwrite", "lab-order", "view-3d"):
        assert player.locator(f"[data-testid={testid}]").count() == 0, testid


def test_the_train_lab_trains_with_the_kernel_busy(harness, screenshots_dir):
    """Issue 25: the notebook widget's Train lab descends in the page while the kernel is busy
    (its `recompute` never answers): each step moves the sliders and the cards, asks the kernel
    with the step's values (it answers when it can), and the losses are the engine's; nothing
    goes to the server's /api/descend."""
    page = harness
    asked: list[str] = []
    page.on("request", lambda r: "/api/descend" in r.url and asked.append(r.url))
    page.evaluate(
        """() => {
            window.calls = [];
            window.player = api.bundle.mountPlayer(host, { trace: api.trace, ops: api.ops, ui: api.ui,
                title: 'busy kernel', recompute: (values) => new Promise(() => calls.push(values)) });
        }"""
    )
    player = page.locator(PLAYER)
    player.locator("#to-end").click()  # every card shows its data
    player.locator("#tab-labs").click()
    player.locator("[data-testid=lab-train]").click()
    for name in ("a", "b", "c"):
        assert player.locator(f"[data-testid=train-param-{name}]").is_checked()
    player.locator("[data-testid=train-lr]").fill("0.001")
    player.locator("[data-testid=train-lr]").press("Tab")
    for k in range(1, 4):
        player.locator("[data-testid=train-step]").click()
        page.wait_for_function(
            "(n) => JSON.parse(host.shadowRoot.querySelector('[data-testid=loss-chart]')"
            ".dataset.losses).length === n && !host.shadowRoot.querySelector('[data-testid=train-step]').disabled",
            arg=k + 1,
        )
    losses = json.loads(player.locator("[data-testid=loss-chart]").get_attribute("data-losses"))
    expected = engine.descend(SOURCE, {}, parameters=["a", "b", "c"], lr=0.001, steps=3)
    assert losses == expected.roots
    a, b, c = expected.values[-1]
    # Cards off screen (the player's graph is scrolled away from its Train lab) are written just
    # after the frame of the move: the graph counts those still waiting.
    page.wait_for_function(
        "() => host.shadowRoot.querySelector('svg[data-testid=graph]').dataset.cardsWaiting === '0'"
    )
    assert card(page, "a").get_attribute("data-data") == str(a)
    assert card(page, "f").get_attribute("data-data") == str(expected.roots[-1])
    assert page.evaluate("calls.length") >= 1  # the kernel was asked (one call at a time)
    player.screenshot(path=str(screenshots_dir / "embed-train-busy-kernel.png"))
    assert asked == []


def test_a_900_step_mlp_graph_opens_past_the_sort_and_home_goes_back(harness):
    """The lecture's MLP(3, [4, 4, 1]) on its 4 examples, in micrograd: a sort of more than 900
    steps opens where the backward pass starts (the root), its length said; a small graph opens
    at its first step."""
    import random

    from micrograd.engine import Value
    from micrograd.nn import MLP

    import chainrule

    random.seed(39)
    model = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)), Value(0.0))
    loss.backward()
    trace = chainrule.trace_value(loss)
    sort_steps = trace["steps"]["phase"].count("topo")
    assert sort_steps >= 900
    page = harness
    page.evaluate(
        """(trace) => { window.player = api.bundle.mountPlayer(host, { trace, ops: api.ops, ui: api.ui }); }""",
        trace,
    )
    player = page.locator(PLAYER)
    assert player.get_attribute("data-phase") == "seed"
    note = page.locator("[data-testid=sort-note]")
    assert note.is_visible() and f"{sort_steps} steps" in note.text_content()
    page.locator("[data-testid=graph]").click(position={"x": 8, "y": 8})
    page.keyboard.press("Home")
    assert player.get_attribute("data-phase") == "topo"
    # A small graph opens at its first step, with nothing to say.
    page.evaluate(
        """() => { player.destroy(); window.player = api.bundle.mountPlayer(host, { trace: api.trace, ops: api.ops, ui: api.ui }); }"""
    )
    assert (
        player.get_attribute("data-phase") == "topo"
        and player.get_attribute("data-step-index") == "0"
    )
    assert not note.is_visible()
