"""Gradients that vanish, explode or die, flagged per node (engine/flags.py)."""

import pytest

from chainrule import engine
from chainrule.engine.presets import presets

PRESET = {p["id"]: p for p in presets()}


def flags_of(source: str, values: dict | None = None, **options) -> dict[str, list[str]]:
    reply = engine.trace(source, values, **options).to_dict()
    label = {node["id"]: node["label"] or node["text"] for node in reply["nodes"]}
    return {label[node]: flags for node, flags in reply["grad_flags"].items()}


def test_the_deep_tanh_chain_vanishes_below_its_third_layer() -> None:
    # grad[h2] = 5.7e-7 < 1e-6 × 1 (the largest is the seed's 1); grad[h3] = 3.5e-6 is not.
    assert flags_of(PRESET["deep-tanh"]["source"]) == {
        "x": ["vanishing"], "2*x": ["vanishing"], "h1": ["saturated", "vanishing"],
        "2*h1": ["vanishing"], "h2": ["vanishing"], "2*h2": ["vanishing"],
    }  # fmt: skip


def test_the_relu_chain_keeps_its_gradient_until_x_goes_below_zero() -> None:
    source = PRESET["deep-relu"]["source"]
    assert flags_of(source) == {}
    dead = flags_of(source, {"x": -1.0})
    assert set(dead) == {"x", "2*x"} | {f"h{k}" for k in range(1, 10)} | {
        f"2*h{k}" for k in range(1, 10)}  # fmt: skip
    assert set(map(tuple, dead.values())) == {("dead",)}


def test_exploding_and_a_zero_that_is_no_dead_relu() -> None:
    assert flags_of("x = 10\ny = x ** 7") == {"x": ["exploding"]}  # 7·10⁶
    # grad[a] = b = 0: a gradient of exactly 0, but no closed gate: vanishing, not dead.
    assert flags_of("a = 2\nb = 0\nc = a * b\nL = relu(c + 1)") == {"a": ["vanishing"]}


@pytest.mark.parametrize(
    ("source", "flags"),
    [
        ("z = 8\ns = sigmoid(z)", {"s": ["saturated"]}),  # s = 0.99966: 2s − 1 = 0.9993
        ("z = 7\ns = sigmoid(z)", {}),  # 2s − 1 = 0.9982
        ("z = 30\nt = tanh(z)", {"z": ["dead"], "t": ["saturated"]}),  # 1 − t² rounds to 0
    ],
)
def test_saturation_of_sigmoid_and_tanh(source: str, flags: dict) -> None:
    assert flags_of(source) == flags


def test_flags_follow_the_target() -> None:
    source = "x = 2\nh = relu(x - 5)\ny = x * 3\nL = h + y"
    assert flags_of(source) == {"x - 5": ["dead"]}  # x still gets 3 through y
    assert flags_of(source, target="y") == {}
