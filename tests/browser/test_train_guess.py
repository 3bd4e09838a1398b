"""The Train lab's guessing phase and loss landscape in a real Chromium (issue 27, part 6): the
learner's tries and best guess, descent from that guess, the chart's two series, and the
contours of two parameters with the path on them."""

from __future__ import annotations

import json

import pytest

from chainrule import engine

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
LINE = next(p for p in engine.PRESETS if p["id"] == "line-fit")["source"]
DATA = [(1, 3), (2, 5), (3, 7.5), (4, 9)]  # the line-fit preset's points (x, y)


def line_loss(w: float, b: float) -> float:
    """The preset's loss written out: Σ (w·x + b − y)²."""
    return sum((w * x + b - y) ** 2 for x, y in DATA)


def line_grad(w: float, b: float) -> tuple[float, float]:
    """Its gradient by hand: ∂/∂w = Σ 2(w·x + b − y)·x, ∂/∂b = Σ 2(w·x + b − y)."""
    return (
        sum(2 * (w * x + b - y) * x for x, y in DATA),
        sum(2 * (w * x + b - y) for x, y in DATA),
    )


def open_train(page, preset: str = "line-fit") -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)
    page.click("#tab-labs")
    page.click("[data-testid=lab-train]")
    page.wait_for_selector("[data-testid=train-guess][data-tries='1']")


def guess_data(page) -> dict:
    return page.evaluate("() => ({...document.querySelector('[data-testid=train-guess]').dataset})")


def landscape_data(page) -> dict:
    return page.evaluate("() => ({...document.querySelector('[data-testid=landscape]').dataset})")


def chart_list(page, key: str) -> list:
    return json.loads(page.get_attribute("[data-testid=loss-chart]", f"data-{key}"))


def guess(page, name: str, value: float, w: float, b: float) -> None:
    """Type `value` into the guessing block's box of `name`; wait for the graph's loss at (w, b)."""
    page.fill(f"[data-testid=guess-{name}] .slider-value", str(value))
    page.wait_for_function(
        "want => document.querySelector('[data-testid=train-guess]').dataset.loss === want",
        arg=repr(engine.trace(LINE, {"w": w, "b": b}).root.data),
    )


def step_once(page, expected_losses: int) -> None:
    page.click("[data-testid=train-step]")
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        f".length === {expected_losses} && !document.querySelector('[data-testid=train-step]')"
        f".disabled"
    )


def make_guesses(page) -> None:
    """Three tries after the start: (2, 0), (2, 0.5) (the best), then a worse (3, 0.5)."""
    guess(page, "w", 2, 2, 0)
    guess(page, "b", 0.5, 2, 0.5)
    guess(page, "w", 3, 3, 0.5)


def test_each_point_shown_while_guessing_is_a_try_and_the_best_is_kept(page):
    open_train(page)
    start = guess_data(page)
    assert (start["phase"], start["tries"], start["loss"]) == ("guess", "1", "171.25")
    assert start["loss"] == repr(line_loss(0, 0))
    assert page.is_hidden("[data-testid=guess-best]")  # where it is, it is its best
    make_guesses(page)
    data = guess_data(page)
    assert data["tries"] == "4"
    assert float(data["loss"]) == line_loss(3, 0.5)
    assert (data["bestLoss"], data["bestTry"]) == (repr(line_loss(2, 0.5)), "3")
    assert json.loads(data["best"]) == {"w": 2, "b": 0.5}
    assert page.text_content("[data-testid=guess-readout]") == (
        f"loss now {line_loss(3, 0.5):g} · your best 1.75 (try 3 of 4)"
    )
    # The chart: the tries, each the engine's loss there, and the best as its reference line.
    assert chart_list(page, "tries") == [line_loss(0, 0), line_loss(2, 0), 1.75, line_loss(3, 0.5)]
    assert chart_list(page, "losses") == []
    assert page.get_attribute("[data-testid=loss-chart]", "data-best") == "1.75"
    # The leaves panel's slider is another way to guess, and the same tries.
    page.fill("[data-testid=slider-w] .slider-value", "2.5")
    page.wait_for_function("() => document.querySelector('[data-testid=train-guess]')"
                           ".dataset.tries === '5'")  # fmt: skip
    assert page.input_value("[data-testid=guess-w] .slider-value") == "2.5"
    # Back to the best guess: the sliders move there; nothing new is tried.
    page.click("[data-testid=guess-best]")
    page.wait_for_function("() => document.querySelector('[data-testid=train-guess]')"
                           ".dataset.loss === '1.75'")  # fmt: skip
    assert guess_data(page)["tries"] == "5"
    assert page.input_value("[data-testid=slider-w] .slider-value") == "2"
    assert page.errors == []


def test_descent_starts_from_the_best_guess_and_the_chart_shows_both(page, screenshots_dir):
    open_train(page)
    make_guesses(page)  # the sliders end at (3, 0.5); the best guess is (2, 0.5)
    step_once(page, 2)
    gw, gb = line_grad(2, 0.5)
    w1, b1 = 2 - 0.01 * gw, 0.5 - 0.01 * gb  # guess − lr · grad, the gradient written by hand
    page.wait_for_function(
        "w => document.querySelector('[data-testid=node][data-label=w]').dataset.data === w",
        arg=repr(engine.descend(LINE, {"w": 2, "b": 0.5}, parameters=["w", "b"], lr=0.01,
                                steps=1).values[0][0]),
    )  # fmt: skip
    assert float(page.input_value("[data-testid=slider-w] .slider-value")) == pytest.approx(w1)
    assert float(page.input_value("[data-testid=slider-b] .slider-value")) == pytest.approx(b1)
    assert chart_list(page, "losses")[0] == 1.75  # step 0 is the best guess
    assert chart_list(page, "losses")[1] == pytest.approx(line_loss(w1, b1), rel=1e-12)
    for k in range(3, 7):
        step_once(page, k)
    expected = engine.descend(LINE, {"w": 2, "b": 0.5}, parameters=["w", "b"], lr=0.01, steps=5)
    assert chart_list(page, "losses") == expected.roots  # the server's arithmetic, exactly
    assert chart_list(page, "tries") == [line_loss(0, 0), line_loss(2, 0), 1.75, line_loss(3, 0.5)]
    data = guess_data(page)
    assert (data["phase"], data["tries"]) == ("descent", "4")
    assert page.text_content("[data-testid=guess-intro]").startswith(
        "Descent started from your best guess, try 3 (loss 1.75)."
    )
    # Both series, told apart by their marks and named in the legend.
    chart = page.locator("[data-testid=loss-chart]")
    assert chart.locator("circle.loss-tries-dot").count() == 4
    assert chart.locator("path.loss-line").count() == 1
    assert chart.locator("line.loss-best").count() == 1
    legend = page.locator("[data-testid=loss-legend] li")
    assert legend.evaluate_all("items => items.map((li) => li.dataset.series)") == [
        "tries",
        "steps",
        "best",
    ]
    assert legend.all_text_contents() == [
        "your tries",
        "gradient descent, from your best guess",
        "your best guess: 1.75",
    ]
    # The share link replays the run from the guess.
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('train')?.includes('n=5')"
    )
    page.goto(page.url)
    page.wait_for_selector(READY)
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=loss-chart]').dataset.losses)"
        ".length === 6"
    )
    assert chart_list(page, "losses") == expected.roots
    page.locator("[data-testid=lab-train]").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / "train-guess-link.png"), full_page=True)


def test_a_hand_move_after_descent_starts_guessing_again(page):
    open_train(page)
    step_once(page, 2)
    page.fill("[data-testid=guess-w] .slider-value", "1")
    page.wait_for_function("() => document.querySelector('[data-testid=train-guess]')"
                           ".dataset.phase === 'guess'")  # fmt: skip
    page.wait_for_function("() => document.querySelector('[data-testid=train-guess]')"
                           ".dataset.tries === '1'")  # fmt: skip
    assert chart_list(page, "losses") == []
    assert len(chart_list(page, "tries")) == 1


def test_two_ticked_parameters_get_the_engine_s_landscape_with_the_path(page, screenshots_dir):
    with page.expect_response("**/api/landscape") as answer:
        open_train(page)
    asked = json.loads(answer.value.request.post_data)
    grid = answer.value.json()
    page.wait_for_selector("[data-testid=landscape][data-points='41']")
    # The grid drawn is the engine's: every value the loss at that point (its own oracle is
    # tests/engine/test_landscape.py); here, the hand-written loss.
    assert asked["parameters"] == ["w", "b"] and asked["points"] == 41
    assert asked["x_range"] == [-3, 3] and asked["y_range"] == [-3, 3]  # around (0, 0)
    for i in range(0, 41, 8):
        for j in range(0, 41, 8):
            want = line_loss(grid["xs"][j], grid["ys"][i])
            assert grid["losses"][i][j] == pytest.approx(want, rel=1e-12, abs=1e-12)
    data = landscape_data(page)
    assert json.loads(data["parameters"]) == ["w", "b"]
    assert (json.loads(data["xRange"]), json.loads(data["yRange"])) == ([-3, 3], [-3, 3])
    assert int(data["levels"]) >= 5
    assert page.locator("[data-testid=landscape] path.landscape-band").count() == int(
        data["levels"]
    )
    assert json.loads(data["current"]) == [0, 0] and data["path"] == "[]"
    make_guesses(page)
    for k in range(2, 6):
        step_once(page, k)
    data = landscape_data(page)
    expected = engine.descend(LINE, {"w": 2, "b": 0.5}, parameters=["w", "b"], lr=0.01, steps=4)
    assert json.loads(data["best"]) == [2, 0.5]
    assert json.loads(data["path"]) == [[2, 0.5], *expected.values]
    assert json.loads(data["current"]) == expected.values[-1]
    assert data["tries"] == "4"
    assert page.locator("[data-testid=landscape] path.landscape-path").count() == 1
    assert page.locator("[data-testid=landscape] circle.landscape-step").count() == 4
    assert page.locator("[data-testid=landscape] path.landscape-guess").count() == 1
    assert page.locator("[data-testid=landscape-legend] li").evaluate_all(
        "items => items.map((li) => li.dataset.series)"
    ) == ["handle", "tries", "guess", "path"]
    page.locator("[data-testid=train-landscape]").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / "train-landscape.png"))
    # Zoomed in, the grid is around the point; zoomed out again, it holds the whole path.
    page.click("[data-testid=landscape-zoom-in]")
    page.wait_for_function("() => document.querySelector('[data-testid=landscape]')"
                           ".dataset.xRange !== '[-3,3]'")  # fmt: skip
    lo, hi = json.loads(landscape_data(page)["xRange"])
    assert hi - lo < 6 and lo <= expected.values[-1][0] <= hi
    # Not two parameters: no landscape, and a sentence saying how to get one.
    page.uncheck("[data-testid=train-param-b]")
    page.wait_for_function("() => document.querySelector('.landscape-figure').hidden")
    assert page.text_content(".landscape-hint") == (
        "Tick exactly two parameters to see the loss over both of them as a contour map."
    )
    page.check("[data-testid=train-param-b]")
    page.check("[data-testid=train-param-x1]")
    page.wait_for_function("() => document.querySelector('.landscape-figure').hidden")


def test_the_landscape_point_moves_by_pointer_and_by_keyboard(page):
    open_train(page)
    page.wait_for_selector("[data-testid=landscape][data-points='41']")
    plot = page.locator("[data-testid=landscape]")
    plot.scroll_into_view_if_needed()
    box = plot.bounding_box()
    # The plot area is x 48..350 and y 10..264 of a 360 × 300 view box; its middle is (0, 0).
    page.mouse.click(box["x"] + box["width"] * (48 + 302 * 0.75) / 360,
                     box["y"] + box["height"] * (10 + 254 * 0.25) / 300)  # fmt: skip
    page.wait_for_function("() => document.querySelector('[data-testid=train-guess]')"
                           ".dataset.tries === '2'")  # fmt: skip
    w = float(page.input_value("[data-testid=slider-w] .slider-value"))
    b = float(page.input_value("[data-testid=slider-b] .slider-value"))
    assert w == pytest.approx(1.5, abs=0.05) and b == pytest.approx(1.5, abs=0.05)
    assert float(guess_data(page)["loss"]) == line_loss(w, b)
    # The point has the focus; each arrow moves it by one grid cell (6 / 40), Shift by five.
    assert page.evaluate("document.activeElement.dataset.testid") == "landscape-point"
    step_index = page.evaluate("document.body.dataset.stepIndex")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "w => document.querySelector('[data-testid=node][data-label=w]').dataset.data === w",
        arg=repr(round(w + 0.15, 12)),
    )
    page.keyboard.press("Shift+ArrowDown")
    page.wait_for_function(
        "b => document.querySelector('[data-testid=node][data-label=b]').dataset.data === b",
        arg=repr(round(b - 0.75, 12)),
    )
    assert page.evaluate("document.body.dataset.stepIndex") == step_index  # not the timeline's
    assert json.loads(landscape_data(page)["current"]) == [round(w + 0.15, 12), round(b - 0.75, 12)]
    value_text = page.get_attribute("[data-testid=landscape-point]", "aria-valuetext")
    assert value_text.startswith(f"w = {round(w + 0.15, 12):g}, b = {round(b - 0.75, 12):g}, loss ")


def test_presenting_shows_the_guesses_and_the_landscape_beside_the_graph(page, screenshots_dir):
    open_train(page)
    make_guesses(page)
    step_once(page, 2)
    step_once(page, 3)
    page.click("#present")
    page.wait_for_function("() => document.body.classList.contains('presenting')")
    assert page.locator("[data-testid=train-guess]").is_visible()
    assert page.locator("[data-testid=loss-chart]").is_visible()
    graph = page.locator("#graph-wrap").bounding_box()
    card = page.locator("#panels").bounding_box()
    assert graph["x"] + graph["width"] <= card["x"] + 1
    page.evaluate("document.querySelector('[data-testid=train-guess]').scrollIntoView()")
    page.screenshot(path=str(screenshots_dir / "train-guess-presenting.png"))
    page.locator("[data-testid=landscape]").scroll_into_view_if_needed()
    assert page.locator("[data-testid=landscape]").is_visible()
    page.screenshot(path=str(screenshots_dir / "train-landscape-presenting.png"))


def test_a_landscape_the_server_refuses_says_why(page):
    """A refusal (here: the work bound of a server configured lower than the page assumes) is
    said under the landscape, in the server's words; the rest of the lab goes on."""
    message = ("41 × 41 points of a 29-node graph is too much work for one request; ask for at "
               "most 3 points a side")  # fmt: skip
    body = {"error": {"type": "BadLandscape", "message": message, "line": None, "column": None,
                      "end_line": None, "end_column": None, "snippet": "", "caret": ""}}  # fmt: skip
    page.route("**/api/landscape", lambda route: route.fulfill(status=400, json=body))
    open_train(page)
    page.wait_for_function("() => document.querySelector('[data-testid=landscape-message]')"
                           ".textContent !== ''")  # fmt: skip
    assert page.text_content("[data-testid=landscape-message]") == message
    assert page.get_attribute("[data-testid=landscape]", "data-points") is None
    step_once(page, 2)  # descent does not need the landscape


def test_the_page_s_pieces_of_the_guess_and_the_landscape(page):
    """The pure functions: the contour levels (deciles, each once), the range around points (round
    ends, at least ±3, holding every point), and the trail (dedup, restart when data move)."""
    page.goto("/?preset=line-fit")
    page.wait_for_selector(READY)
    result = page.evaluate(
        """async () => {
             const { levelsOf } = await import('/static/js/train/landscape.js');
             const { rangeAround, pointsFor } = await import('/static/js/train/landscape-range.js');
             const { freshTrail, recordTry, bestIndex } = await import('/static/js/train/guess.js');
             const trail = freshTrail();
             const tried = [
               recordTry(trail, {w: 0, x: 1}, 9, ['w']), recordTry(trail, {w: 1, x: 1}, 4, ['w']),
               recordTry(trail, {w: 0, x: 1}, 9, ['w']), recordTry(trail, {w: 2, x: 1}, 'NaN', ['w']),
             ];
             const best = bestIndex(trail);
             const count = trail.tries.length;
             recordTry(trail, {w: 2, x: 5}, 1, ['w']);  // the data moved: a new trail
             return {
               levels: levelsOf([...Array(100).keys()]), flat: levelsOf([3, 3, 3, NaN]),
               around: rangeAround([[0, 0]]), spread: rangeAround([[2, 0.5], [10, 0.4]]),
               zoomed: rangeAround([[2.2, 0.6]], 0.125), points: [pointsFor(29), pointsFor(2000), pointsFor(1e6)],
               tried, best, count, after: trail.tries.length,
             };
           }"""
    )
    assert result["levels"] == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert result["flat"] == []
    assert result["around"] == {"x": [-3, 3], "y": [-3, 3]}
    assert result["spread"]["x"][0] <= 2 and result["spread"]["x"][1] >= 10
    assert result["zoomed"] == {"x": [1.8, 2.6], "y": [0.2, 1]}
    assert result["points"] == [41, 14, 5]
    assert result["tried"] == [True, True, False, True]
    assert (result["best"], result["count"], result["after"]) == (1, 3, 1)
