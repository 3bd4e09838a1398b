"""micrograd's demo opens on its overview (issue 42; static/js/graph/overview.js, overview-view.js):
a card a sample, the parameters alone, the loss; one click opens a sample's layers and statements,
one more a neuron's scalar graph. micrograd's demo (chainrule.sandbox.moons: its model and
max-margin loss) on 10 moons, saved by `chainrule.save_html` and opened from file://. The numbers
are checked against micrograd's own forward and backward passes, the slider's against the
engine's."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

import chainrule
from chainrule import engine
from chainrule.engine.flags import grad_flags
from chainrule.sandbox.moons import demo_loss, demo_model, make_moons

pytestmark = pytest.mark.browser

SAMPLES = 10
CARD = "[data-testid=overview-card]"


def micrograd_demo():
    points, labels = make_moons(SAMPLES)
    model = demo_model()
    total_loss, _ = demo_loss(model, points, [2 * label - 1 for label in labels])
    total_loss.backward()
    return points, model, total_loss


def part_pairs(reply) -> set[tuple[str, str]]:
    """The pairs of parts an edge of the graph joins (each drawn once)."""
    part_of_group = {
        g: part["id"]
        for part in reply["overview"]["parts"]
        for layer in part["layers"]
        for g in layer["groups"]
    }
    part_of_node = {
        node: part_of_group[group["id"]]
        for group in reply["groups"]
        if group["id"] in part_of_group
        for node in group["nodes"]
    }
    return {
        (part_of_node[e["source"]], part_of_node[e["target"]])
        for e in reply["edges"]
        if e["source"] in part_of_node
        and e["target"] in part_of_node
        and part_of_node[e["source"]] != part_of_node[e["target"]]
    }


def hidden_outputs(model, point) -> list[list[float]]:
    """Each hidden layer's outputs on `point`, by micrograd's forward pass."""
    from micrograd.engine import Value

    x, outputs = [Value(v) for v in point], []
    for layer in model.layers[:-1]:
        x = [neuron(x) for neuron in layer.neurons]
        outputs.append([v.data for v in x])
    return outputs


def test_the_demo_opens_on_its_overview_and_one_neuron_matches_micrograd(
    page, tmp_path, screenshots_dir
):
    points, model, total_loss = micrograd_demo()
    reply = chainrule.trace_value(total_loss)
    path = tmp_path / "demo.html"
    chainrule.save_html(total_loss, path)
    parts = reply["overview"]["parts"]
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] svg[data-ready=true]")

    # The sort, longer than its table shows, is tabled when the table comes into view (below the
    # first screen): its first 600 steps, and a note saying how many there are.
    topo = sum(phase == "topo" for phase in reply["steps"]["phase"])
    assert page.locator("#panel-sort tbody tr").count() == 0
    page.locator("#panel-sort").scroll_into_view_if_needed()
    expect(page.locator("#panel-sort tbody tr")).to_have_count(600)
    note = page.locator("#panel-sort .table-note").text_content()
    assert topo > 600 and re.sub(r"\D", "", note) == f"600{topo}", note

    # The top level: a card a sample, the parameters alone (the regulariser), the loss.
    cards = page.locator(CARD)
    assert page.get_attribute("[data-testid=overview-path]", "data-level") == "parts"
    kinds = cards.evaluate_all("cards => cards.map((c) => c.dataset.kind)")
    assert kinds == ["sample"] * SAMPLES + ["parameters", "combined"]
    assert page.locator(".overview-edge").count() == len(part_pairs(reply)) == SAMPLES + 1
    assert page.locator("[data-node-id]").count() == 0  # no node of the graph is drawn
    combined = page.locator(f"{CARD}[data-kind=combined]")
    assert combined.get_attribute("data-root") == reply["root"]
    page.click("#to-end")
    assert float(combined.get_attribute("data-data")) == total_loss.data
    assert float(combined.get_attribute("data-grad")) == 1.0

    # Each sample's card counts its hidden neurons whose ReLU is off, as micrograd's forward pass
    # of its point does (the sample's point: its input leaves' values).
    data = {node["id"]: node["data"] for node in reply["nodes"]}
    groups = {group["id"]: group for group in reply["groups"]}
    for part in parts[:SAMPLES]:
        point = [data[groups[g]["root"]] for g in part["inputs"]]
        k = points.index(point)
        card = page.locator(f"{CARD}[data-part={part['id']}]")
        assert card.get_attribute("data-statements") == "33"  # 16 + 16 neurons, the output
        off = sum(v == 0 for layer in hidden_outputs(model, points[k]) for v in layer)
        assert int(card.get_attribute("data-off")) == off, part["id"]
    page.locator("[data-testid=gradmap]").check()
    page.evaluate("window.scrollTo(0, 0)")
    page.get_by_role("button", name="Fit", exact=True).click()
    page.screenshot(path=str(screenshots_dir / "overview-gradmap.png"))
    page.locator("[data-testid=gradmap]").uncheck()
    page.evaluate("window.scrollTo(0, 0)")
    page.get_by_role("button", name="Fit", exact=True).click()
    page.screenshot(path=str(screenshots_dir / "overview.png"))

    # One click: the third sample's layers and statements.
    sample = parts[2]
    page.locator(f"{CARD}[data-part={sample['id']}]").click()
    assert page.get_attribute("[data-testid=overview-path]", "data-level") == "part"
    assert page.locator(f"{CARD}[data-kind=statement]").count() == 33
    assert page.locator(f"{CARD}[data-kind=input]").count() == 2
    heads = page.locator(".overview-head").evaluate_all("heads => heads.map((h) => h.textContent)")
    assert heads == [
        "model.layers[0]",
        "model.layers[1]",
        "model.layers[2]",  # the output neuron, its own statement (not the loss's)
    ]

    # One more: a neuron of its second layer, its scalar graph.
    neuron = next(
        g
        for layer in sample["layers"]
        for g in layer["groups"]
        if re.fullmatch(r"model\.layers\[1\]\.neurons\[3\][₀-₉]*", groups[g]["name"])
    )
    page.locator(f"{CARD}[data-card={neuron}]").focus()
    page.keyboard.press("Enter")
    assert page.get_attribute("[data-testid=overview-path]", "data-level") == "statement"
    drawn = set(
        page.locator("[data-testid=node]").evaluate_all("n => n.map((c) => c.dataset.nodeId)")
    )
    assert set(groups[neuron]["nodes"]) <= drawn
    assert page.locator(CARD).count() == 0
    # Its cards tell its products and running sums apart by the weight each takes (core/names.js
    # shortFormula): their formulas, cut at the card's edge, all read `model_layer…`.
    shown: dict[str, list[str]] = {}
    for node_id in groups[neuron]["nodes"]:
        card = page.locator(f"[data-testid=node][data-node-id={node_id}]")
        shown.setdefault(card.get_attribute("data-op"), []).append(
            card.locator(".label-name").text_content()
        )
    weights = [f"w[{j}]·" for j in range(16)]
    assert sorted(shown["*"]) == sorted(weights), shown["*"]
    assert sorted(shown["+"]) == sorted(["b + w[0]·", *(f"… + {w}" for w in weights[1:])])
    page.evaluate("window.scrollTo(0, 0)")
    for _ in range(3):  # near enough to read the cards' numbers
        page.click("#zoom-in")
    page.screenshot(path=str(screenshots_dir / "overview-neuron.png"))
    point = [data[groups[g]["root"]] for g in sample["inputs"]]
    expected = hidden_outputs(model, point)[1][3]
    root = page.locator(f"[data-testid=node][data-node-id={groups[neuron]['root']}]")
    assert float(root.get_attribute("data-data")) == pytest.approx(expected, rel=1e-12)
    # Its weights, drawn as its inputs, carry micrograd's gradients (`p.grad` after backward()).
    leaf_ids = {leaf["label"]: leaf["id"] for leaf in reply["leaves"]}
    micrograd_neuron = model.layers[1].neurons[3]
    for j, weight in enumerate(micrograd_neuron.w):
        card = page.locator(
            f"[data-testid=node][data-node-id={leaf_ids[f'model.layers[1].neurons[3].w[{j}]']}]"
        )
        assert float(card.get_attribute("data-grad")) == pytest.approx(weight.grad, rel=1e-9)

    # Escape goes back up, a level a press.
    page.keyboard.press("Escape")
    assert page.get_attribute("[data-testid=overview-path]", "data-level") == "part"
    page.locator("[data-testid=overview-path] button[data-depth='0']").click()
    assert page.get_attribute("[data-testid=overview-path]", "data-level") == "parts"

    # A slider: the page recomputes every node, the loss's card shows the engine's number, drawn
    # in the task of the move (read there: before the counts, which wait for the slider to rest,
    # rewrite the cards).
    texts = (
        "cards => cards.map((c) => [c.dataset.data + ' ' + c.dataset.grad,"
        " c.querySelector('.overview-name').textContent,"
        " c.querySelector('.overview-numbers').textContent, c.getAttribute('aria-label')])"
    )
    before = page.locator(CARD).evaluate_all(texts)
    leaf = next(x for x in reply["leaves"] if x["label"] == "model.layers[0].neurons[2].w[1]")
    after = page.locator(f"[data-testid=slider-{leaf['name']}] input.slider-value").evaluate(
        f"""(box) => {{
          box.value = "0.75";
          box.dispatchEvent(new Event("input", {{ bubbles: true }}));
          return ({texts})([...box.getRootNode().querySelectorAll("{CARD}")]);
        }}"""
    )
    expected_root = engine.trace(reply["source"], {leaf["name"]: 0.75}).root.data
    assert expected_root != total_loss.data
    assert after[-1][0].split()[0] == repr(expected_root)
    expect(combined).to_have_attribute("data-data", repr(expected_root))
    # A card whose numbers moved says them, in its text and its accessible name; its caption
    # (written once: overview-view.js) stays.
    moved_texts = 0
    for (numbers_were, name_was, text_was, _), (numbers_are, name, text, label) in zip(
        before, after, strict=True
    ):
        assert name == name_was and text in label and label.startswith(name.lstrip("▸ "))
        assert text == text_was or numbers_are != numbers_were, (text_was, text)
        moved_texts += text != text_was
    assert moved_texts > SAMPLES // 2
    # Every card shows its value's data and grad as the engine computes them for the new weight
    # (the page's evaluator writes no contribution for them: compute/evaluator.js).
    moved = engine.trace(reply["source"], {leaf["name"]: 0.75})
    shown = page.locator(CARD).evaluate_all(
        "cards => cards.map((c) => [c.dataset.root, c.dataset.data, c.dataset.grad])"
    )
    assert len(shown) == SAMPLES + 2
    for root, card_data, card_grad in shown:
        i = int(root[1:])
        assert (float(card_data), float(card_grad)) == (moved.nodes[i].data, moved.grads[i]), root
    # Once the slider rests, each sample's count of ReLUs off is micrograd's with the new weight,
    # and its counts of statements with a dead or vanishing gradient engine/flags.py's.
    model.layers[0].neurons[2].w[1].data = 0.75
    flags = grad_flags(moved)
    for part in parts[:SAMPLES]:
        point = [data[groups[g]["root"]] for g in part["inputs"]]
        off = sum(v == 0 for layer in hidden_outputs(model, point) for v in layer)
        card = page.locator(f"{CARD}[data-part={part['id']}]")
        expect(card).to_have_attribute("data-off", str(off))
        statements = [groups[g] for layer in part["layers"] for g in layer["groups"]]
        for flag in ["dead", "vanishing"]:
            flagged = sum(
                any(flag in flags.get(int(node[1:]), []) for node in group["nodes"])
                for group in statements
            )
            expect(card).to_have_attribute(f"data-{flag}", str(flagged))


def test_a_small_graph_is_drawn_as_before(page, tmp_path):
    """Two samples of the demo (2,314 nodes): below the overview's size (2,500 nodes) the page opens
    as before, every statement a card; the Overview button opens the overview."""
    points, labels = make_moons(2)
    model = demo_model()
    total_loss, _ = demo_loss(model, points, [2 * label - 1 for label in labels])
    total_loss.backward()
    assert chainrule.trace_value(total_loss)["overview"] is not None
    path = tmp_path / "small.html"
    chainrule.save_html(total_loss, path)
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] svg[data-ready=true]")
    assert page.locator(CARD).count() == 0
    assert page.locator("[data-testid=overview-path]").is_hidden()
    assert page.locator("[data-testid=group]").count() > 0
    page.locator("[data-testid=overview-open]").click()
    assert page.locator(CARD).count() == 2 + 2  # two samples, the parameters alone, the loss
    assert page.locator("[data-testid=group]").count() == 0
    page.locator("[data-testid=collapse-all]").click()
    assert page.locator(CARD).count() == 0
    assert page.locator("[data-testid=overview-path]").is_hidden()
    assert page.locator("[data-testid=group]").count() > 0
