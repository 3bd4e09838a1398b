"""The Train lab in a real Chromium (issue 13): steps, play, divergence, reset, share links."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from chainrule import engine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))
from descent_cases import run  # noqa: E402

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
LINE = next(p for p in engine.PRESETS if p["id"] == "line-fit")["source"]


def open_train(page, preset: str = "line-fit") -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)
    page.click("#tab-labs")
    page.click("[data-testid=lab-train]")
    page.wait_for_selector("[data-testid^=train-param-]")


def losses(page) -> list:
    return json.loads(page.get_attribute("[data-testid=loss-chart]", "data-losses"))


def leaf_value(page, name: str) -> float:
    return float(page.input_value(f"[data-testid=slider-{name}] .slider-value"))


def card_data(page, name: str) -> str:
    return page.get_attribute(f"[data-testid=node][data-label={name}]", "data-data")


def step_once(page, expected_losses: int) -> None:
    page.click("[data-testid=train-step]")
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        f".length === {expected_losses} && !document.querySelector('[data-testid=train-step]')"
        f".disabled"
    )


def test_twenty_steps_lower_the_loss_and_move_the_sliders(page, screenshots_dir):
    open_train(page)
    # The data stay put by default: only w and b are ticked.
    assert page.is_checked("[data-testid=train-param-w]")
    assert page.is_checked("[data-testid=train-param-b]")
    assert not page.is_checked("[data-testid=train-param-x1]")
    assert not page.is_checked("[data-testid=train-param-y4]")
    page.click("[data-testid=step-forward]")  # a pulse step, kept while training
    pulse_step = page.evaluate("document.body.dataset.stepIndex")
    for k in range(1, 21):
        step_once(page, k + 1)
    shown = losses(page)
    expected = engine.descend(LINE, {}, parameters=["w", "b"], lr=0.01, steps=20)
    assert shown == expected.roots  # the server's arithmetic, exactly
    assert all(later < earlier for earlier, later in zip(shown, shown[1:], strict=False))
    w, b = expected.values[-1]
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=node][data-label=w]').dataset.data"
        f" === String({w})"
    )
    assert leaf_value(page, "w") == pytest.approx(w, rel=1e-12)
    assert leaf_value(page, "b") == pytest.approx(b, rel=1e-12)
    assert leaf_value(page, "x1") == 1
    assert page.evaluate("document.body.dataset.stepIndex") == pulse_step
    assert page.text_content("[data-testid=train-status]").startswith("step 20 \u00b7 root ")
    assert page.text_content("[data-testid=train-message]") == ""
    page.locator("[data-testid=lab-train]").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / "train-line.png"), full_page=True)

    # Reset: the starting values, an empty curve.
    page.click("[data-testid=train-reset]")
    page.wait_for_function("() => document.querySelector('[data-testid=node][data-label=w]')"
                           ".dataset.data === '0'")  # fmt: skip
    assert losses(page) == []
    assert (leaf_value(page, "w"), leaf_value(page, "b")) == (0, 0)


def server_run(live_server: str, source: str, start: dict, parameters: list[str], lr: float,
               momentum: float, steps: int) -> tuple[list, list]:  # fmt: skip
    """The server's roots and last values for `steps` steps from `start`, asked as the lab's
    Play asks (batches of 10, each from the last one's values and velocity)."""

    def answer(source: str, body: dict, lang: str) -> dict:
        reply = httpx.post(
            f"{live_server}/api/descend", json={"source": source, **body, "lang": lang}, timeout=60
        )
        assert reply.status_code == 200, reply.text
        return reply.json()

    batches = run(source, start, parameters, lr, momentum, steps=steps, batch=10, answer=answer)
    roots = batches[0]["expected"]["roots"][:1]
    for batch in batches:
        roots += batch["expected"]["roots"][1:]
    return roots, batches[-1]["expected"]["values"][-1]


@pytest.mark.parametrize(
    ("preset", "lr", "momentum"), [("line-fit", 0.01, 0.0), ("mlp", 0.05, 0.5)]
)
def test_play_trains_in_the_page_with_no_request_and_the_servers_numbers(
    page, live_server, screenshots_dir, preset, lr, momentum
):
    """Issue 25: the lab's steps are the page's own (descend.js), not one POST /api/descend,
    and every loss and slider is what the server computes for the same run."""
    asked: list[str] = []
    page.on("request", lambda r: "/api/descend" in r.url and asked.append(r.url))
    open_train(page, preset)
    page.fill("[data-testid=train-lr]", str(lr))
    page.fill("[data-testid=train-momentum]", str(momentum))
    page.press("[data-testid=train-momentum]", "Tab")
    page.click("[data-testid=train-play]")
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length > 12"
    )
    page.locator("[data-testid=lab-train]").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / f"train-page-mid-run-{preset}.png"), full_page=True)
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length > 25"
    )
    page.click("[data-testid=train-play]")  # pause
    page.wait_for_function(
        "() => document.querySelector('[data-testid=train-play]').getAttribute('aria-pressed')"
        " === 'false'"
    )
    shown = losses(page)
    p = next(p for p in engine.PRESETS if p["id"] == preset)
    graph = engine.build_graph(p["source"], p["values"])
    start = {name: node.data for name, node in graph.leaves}
    parameters = [name for name in start if not re.match(r"[xy]", name, re.I)]
    roots, last = server_run(
        live_server, p["source"], start, parameters, lr, momentum, len(shown) - 1
    )
    assert shown == roots
    for name, value in zip(parameters, last, strict=True):
        page.wait_for_function(
            f"() => document.querySelector('[data-testid=node][data-label={name}]').dataset.data"
            f" === String({value})"
        )
    assert asked == []
    assert page.get_attribute("body", "data-numbers-mismatches") in (None, "0")


def test_a_huge_rate_stops_play_with_a_message(page):
    open_train(page)
    page.fill("[data-testid=train-lr]", "1")
    page.click("[data-testid=train-play]")
    message = page.locator("[data-testid=train-message]")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=train-message]').textContent !== ''"
    )
    assert message.text_content().startswith("Stopped at step 1: the root rose from 171.25 to ")
    assert message.text_content().endswith("The learning rate 1 is too large here; try 0.1.")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=train-play]').textContent === 'Play'"
    )
    assert len(losses(page)) == 2
    assert page.errors == []


def test_play_runs_batches_and_pause_keeps_the_run_exact(page):
    open_train(page)
    requests: list[str] = []
    page.on("request", lambda r: r.url.endswith("/api/descend") and requests.append(r.url))
    page.click("[data-testid=train-play]")
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length > 14"
    )
    page.click("[data-testid=train-play]")  # pause
    page.wait_for_timeout(400)  # a tick in flight must not show another step
    paused = losses(page)
    page.click("[data-testid=train-play]")  # play on from the queued steps
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        f".length > {len(paused) + 8}"
    )
    page.click("[data-testid=train-play]")
    shown = losses(page)
    assert shown[: len(paused)] == paused
    expected = engine.descend(LINE, {}, parameters=["w", "b"], lr=0.01, steps=len(shown) - 1)
    assert shown == expected.roots
    assert len(requests) <= len(shown) // 10 + 2  # batches, not a request per step


def test_only_ticked_parameters_move(page):
    open_train(page)
    page.uncheck("[data-testid=train-param-b]")
    step_once(page, 2)
    step_once(page, 3)
    expected = engine.descend(LINE, {}, parameters=["w"], lr=0.01, steps=2)
    assert losses(page) == expected.roots
    assert leaf_value(page, "b") == 0
    assert leaf_value(page, "w") == pytest.approx(expected.values[-1][0], rel=1e-12)


def test_a_share_link_reopens_the_run(page):
    open_train(page)
    page.fill("[data-testid=train-lr]", "0.02")
    page.press("[data-testid=train-lr]", "Tab")
    for k in range(1, 6):
        step_once(page, k + 1)
    before = losses(page)
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('train')?.includes('n=5')"
    )
    page.goto(page.url)
    page.wait_for_selector(READY)
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length === 6"
    )
    assert losses(page) == before
    assert page.input_value("[data-testid=train-lr]") == "0.02"
    assert page.get_attribute("[data-testid=lab-train]", "aria-checked") == "true"
    expected = engine.descend(LINE, {}, parameters=["w", "b"], lr=0.02, steps=5)
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=node][data-label=w]').dataset.data"
        f" === String({expected.values[-1][0]})"
    )


def test_moving_a_slider_by_hand_starts_a_new_run(page):
    open_train(page)
    step_once(page, 2)
    page.fill("[data-testid=slider-w] .slider-value", "1")
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length === 0"
    )
    step_once(page, 2)
    b = engine.descend(LINE, {}, parameters=["w", "b"], lr=0.01, steps=1).values[0][1]
    expected = engine.descend(LINE, {"w": 1.0, "b": b}, parameters=["w", "b"], lr=0.01, steps=1)
    assert losses(page) == expected.roots  # from the hand-set w and the trained b


@pytest.mark.parametrize(
    ("preset", "lr", "momentum"), [("line-fit", "0.01", "0"), ("mlp", "0.5", "0.5")]
)
def test_the_micrograd_script_trains_as_the_lab_did(page, tmp_path, preset, lr, momentum):
    open_train(page, preset)
    page.fill("[data-testid=train-lr]", lr)
    page.fill("[data-testid=train-momentum]", momentum)
    page.press("[data-testid=train-momentum]", "Tab")
    for k in range(1, 6):
        step_once(page, k + 1)
    shown = losses(page)
    page.click("[data-testid=copy-micrograd]")
    page.wait_for_selector("#micrograd-dialog[open]")
    script = page.input_value("[data-testid=micrograd-dialog-text]")
    page.keyboard.press("Escape")
    path = tmp_path / "train.py"
    path.write_text(script)
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, (result.stderr, script)
    printed = re.findall(r"^root after step (\d+) = (\S+)$", result.stdout, re.M)
    assert [int(k) for k, _ in printed] == list(range(6))
    for (_, value), want in zip(printed, shown, strict=True):
        assert math.isclose(float(value), want, rel_tol=1e-12, abs_tol=1e-15), (value, want)


def test_presentation_mode_keeps_the_train_card_beside_the_graph(page, screenshots_dir):
    open_train(page, "mlp")
    step_once(page, 2)
    page.click("#present")
    page.wait_for_function("() => document.body.classList.contains('presenting')")
    chart = page.locator("[data-testid=loss-chart]")
    assert chart.is_visible() and page.locator("[data-testid=train-step]").is_visible()
    assert not page.locator("[data-testid=lab-predict]").is_visible()
    graph = page.locator("#graph-wrap").bounding_box()
    card = page.locator("#panels").bounding_box()
    assert graph["x"] + graph["width"] <= card["x"] + 1  # side by side, nothing covered
    step_once(page, 3)
    page.screenshot(path=str(screenshots_dir / "train-presenting.png"))
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.body.classList.contains('presenting')")


def test_a_step_answered_after_reset_is_dropped(page):
    open_train(page)
    # An expanded graph is not the one descent builds: its steps are the server's (the page's
    # own are answered before Reset can be pressed).
    page.check("#toggle-expand")
    page.wait_for_function("() => document.querySelector('[data-testid=node][data-label=w]')")
    held = []
    page.route("**/api/descend", lambda route: held.append(route))
    page.click("[data-testid=train-step]")
    page.wait_for_function("() => document.querySelector('[data-testid=train-step]').disabled")
    # Step is disabled when the request is sent; the route handler sees it when Playwright
    # dispatches the route's event, which may come later: wait for that, as asserted.
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(10)  # lets Playwright dispatch its events meanwhile
    assert len(held) == 1
    page.click("[data-testid=train-reset]")  # while the step's request is still out
    with page.expect_response("**/api/descend"):
        held[0].continue_()
    # The step's handler has finished once Step is enabled again; its reply belongs to the run
    # that Reset ended, so nothing of it is shown.
    page.wait_for_function("() => !document.querySelector('[data-testid=train-step]').disabled")
    assert losses(page) == []
    assert leaf_value(page, "w") == 0 and card_data(page, "w") == "0"
    assert page.text_content("[data-testid=train-status]") == "step 0"
    assert page.text_content("[data-testid=train-message]") == ""


def test_the_loss_chart_reads_out_a_step_under_the_pointer_and_takes_a_log_scale(page):
    open_train(page)
    for k in range(1, 6):
        step_once(page, k + 1)
    shown = losses(page)
    chart = page.locator("[data-testid=loss-chart]")
    box = chart.bounding_box()
    # Near the right end: the last step (5), read out with the page's number format.
    page.mouse.move(box["x"] + box["width"] * 0.97, box["y"] + box["height"] / 2)
    readout = chart.locator(".loss-hover text")
    page.wait_for_function(
        "() => document.querySelector('.loss-hover').getAttribute('visibility') === 'visible'"
    )
    assert readout.text_content().startswith("step 5: ")
    assert float(readout.text_content().split(": ")[1].replace("\u2212", "-")) == pytest.approx(
        shown[5], rel=1e-3
    )
    tick_texts = chart.locator("text").all_text_contents()
    assert not any(t.startswith("1e") for t in tick_texts)
    page.check("[data-testid=train-log]")
    log_ticks = chart.locator("text").all_text_contents()
    assert any(re.fullmatch(r"1e-?\d+", t.replace("\u2212", "-")) for t in log_ticks), log_ticks
    assert "step (loss on a log scale)" in log_ticks
    assert losses(page) == shown  # the data are the same; only the scale changed
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # off the plot: the readout goes
    page.mouse.move(box["x"] - 40, box["y"] - 40)
    page.wait_for_function(
        "() => document.querySelector('.loss-hover').getAttribute('visibility') === 'hidden'"
    )


OWN_FUNCTION = "softplus(x) = log(1 + exp(x))\nw = 0.5\nL = softplus(w * 2)"


def test_a_graph_the_page_cannot_evaluate_trains_on_the_server(page):
    """A program's own function has no row in the op table: the page cannot evaluate its graph
    (compute/instant-numbers.js pageStructure), so the lab's steps are the server's, and the same."""
    page.goto(f"/?source={quote(OWN_FUNCTION)}")
    page.wait_for_selector(READY)
    page.click("#tab-labs")
    page.click("[data-testid=lab-train]")
    with page.expect_request("**/api/descend"):
        page.click("[data-testid=train-step]")
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length === 2"
    )
    assert (
        losses(page) == engine.descend(OWN_FUNCTION, {}, parameters=["w"], lr=0.01, steps=1).roots
    )
