"""A model's neurons across its samples (static/js/gradients/neuron-health.js, issue 42: "which
neurons are dead on how many samples"): micrograd's demo (karpathy/micrograd@c911406 demo.ipynb,
its model and max-margin loss, chainrule.sandbox.moons) on 12 moons, saved by
`chainrule.save_html` and opened from file://. The counts of ReLUs off are checked against
micrograd's own forward pass of each point, the gradient counts against the reply's flags."""

from __future__ import annotations

import re

import pytest

import chainrule
from chainrule.sandbox.moons import demo_loss, demo_model, make_moons

pytestmark = pytest.mark.browser

SAMPLES = 12


def relus_off(model, points) -> dict[str, int]:
    """On how many points each hidden neuron's ReLU outputs 0, by micrograd's forward pass."""
    from micrograd.engine import Value

    off: dict[str, int] = {}
    for point in points:
        x = [Value(v) for v in point]
        for layer_index, layer in enumerate(model.layers):
            outputs = [neuron(x) for neuron in layer.neurons]
            for k, (neuron, out) in enumerate(zip(layer.neurons, outputs, strict=True)):
                if neuron.nonlin:
                    name = f"model.layers[{layer_index}].neurons[{k}]"
                    off[name] = off.get(name, 0) + (out.data == 0)
            x = outputs
    return off


def test_the_gradients_tab_counts_each_neuron_s_samples(page, tmp_path, screenshots_dir):
    points, labels = make_moons(SAMPLES)
    model = demo_model()
    total_loss, _ = demo_loss(model, points, [2 * label - 1 for label in labels])
    total_loss.backward()
    reply = chainrule.trace_value(total_loss)
    path = tmp_path / "demo.html"
    chainrule.save_html(total_loss, path)

    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] svg[data-ready=true]")
    page.click("#to-end")
    page.get_by_role("tab", name="Gradients + check").click()
    health = page.locator("[data-testid=neuron-health]")
    health.wait_for()
    # Every row's counts in one read (a locator's attribute a round trip was 35 ms on this page).
    rows = {
        row["neuron"]: row
        for row in health.locator("tr[data-neuron]").evaluate_all(
            "(rows) => rows.map((row) => ({...row.dataset}))"
        )
    }
    expected_off = relus_off(model, points)
    # 16 + 16 hidden neurons, each once a sample (the output's is linear: no gate to count).
    assert list(rows) == [
        f"model.layers[{layer}].neurons[{k}]" for layer in (0, 1) for k in range(16)
    ]
    groups = {group["id"]: group for group in reply["groups"]}
    flags = reply["grad_flags"]
    for name, row in rows.items():
        assert row["samples"] == str(SAMPLES)
        assert int(row["off"]) == expected_off.get(name, 0), name
        # The gradient's counts: the samples whose statement has a node the reply flags.
        mine = [
            group for group in groups.values()
            if re.fullmatch(re.escape(name) + "[₀-₉]*", group["name"])
        ]  # fmt: skip
        dead = sum(any("dead" in flags.get(n, []) for n in group["nodes"]) for group in mine)
        assert int(row["dead"]) == dead, name
    assert sum(expected_off.values()) > 0  # the case is not empty: some ReLUs are off
    dead_neurons = sum(1 for name, count in expected_off.items() if count == SAMPLES)
    assert (
        health.locator(".table-note")
        .inner_text()
        .endswith(
            f"{dead_neurons} of 32 neurons are off on every sample: dead, they no longer learn."
        )
    )
    health.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / "neuron-health-1280x720.png"))


def test_a_program_without_samples_has_no_neuron_table(page, tmp_path):
    """The lecture's neuron is one statement a name: nothing across samples to count."""
    path = tmp_path / "neuron.html"
    chainrule.save_html("x1 = 2\nw1 = -3\nb = 6.88\nn = x1*w1 + b\no = tanh(n)", path)
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] svg[data-ready=true]")
    page.click("#to-end")
    page.get_by_role("tab", name="Gradients + check").click()
    page.wait_for_selector(".grad-table")
    assert page.locator("[data-testid=neuron-health]").count() == 0
