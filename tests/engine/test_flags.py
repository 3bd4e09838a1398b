"""Gradients that vanish, explode or die, flagged per node (engine/flags.py)."""

import math

import pytest
from hypothesis import given

from chainrule import engine
from chainrule.engine.flags import EXPLODING, GATES, SATURATED, VANISHING, grad_flags
from chainrule.engine.ops import OPS, SATURATION
from chainrule.engine.presets import presets
from tests.program_strategies import fuzz_settings, valid_programs

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


def flags_by_definition(trace: engine.Trace) -> dict[int, list[str]]:
    """The flags as the module's docstring defines them, node by node with no shortcut: the
    oracle of grad_flags' fast path (most nodes skip every test there)."""
    grads, cone = trace.correct_grads, trace.cone
    shown = [n for n in cone if n.kind != "const" and n is not trace.target]
    largest = max([abs(grads[n.id]) for n in shown if math.isfinite(grads[n.id])] + [1.0])
    dead: set[int] = set()
    for node in reversed(cone):  # consumers before inputs
        uses = [
            (user, local)
            for user in cone
            for child, local in zip(user.inputs, user.local_grads, strict=True)
            if child is node
        ]
        if (
            grads[node.id] == 0
            and uses
            and all((u.op in GATES and local == 0) or u.id in dead for u, local in uses)
        ):
            dead.add(node.id)

    def saturated(node) -> bool:
        return (node.op == "tanh" and abs(node.data) > SATURATED) or (
            node.op == "sigmoid" and abs(2 * node.data - 1) > SATURATED
        )

    flags = {}
    for node in shown:
        grad, found = grads[node.id], ["saturated"] if saturated(node) else []
        if abs(grad) > EXPLODING:
            found.append("exploding")
        elif node.id in dead:
            found.append("dead")
        elif abs(grad) < VANISHING * largest:
            found.append("vanishing")
        if found:
            flags[node.id] = found
    if saturated(trace.target):
        flags[trace.target.id] = ["saturated"]
    return flags


@fuzz_settings
@given(valid_programs(max_statements=6))
def test_the_flags_are_their_definitions_on_random_programs(program) -> None:
    trace = engine.trace(program.source, program.values)
    assert grad_flags(trace) == flags_by_definition(trace)


@pytest.mark.parametrize(
    "source",
    [
        "x = -1\nh = relu(x)\ny = relu(h*2) + tanh(x*30)",  # dead behind a closed gate, saturated
        "a = 1e-9\nb = a*a*a\nc = b*1e12 + exp(a*800)",  # vanishing and exploding
        "a = 0\nb = a*a + relu(a)",  # zeros that are not dead
    ],
)
def test_the_flags_are_their_definitions_on_gates_and_extremes(source: str) -> None:
    trace = engine.trace(source)
    assert grad_flags(trace) == flags_by_definition(trace)
    assert grad_flags(trace)  # each flags something


@pytest.mark.parametrize("x", [-30.0, -4.0, -0.5, 0.0, 0.25, 3.8, 30.0])
def test_where_a_tanh_or_sigmoid_is_on_its_curve_comes_from_the_table(x: float) -> None:
    # The table's `saturation` column: tanh's result itself, and a sigmoid's 2s - 1, which is
    # tanh(x/2) (the identity that makes the sigmoid a scaled tanh: σ(x) = (1 + tanh(x/2)) / 2).
    assert SATURATION["tanh"]((x, 0.0, 0.0, math.tanh(x))) == math.tanh(x)
    s = OPS["sigmoid"].apply((x,), 0.0)[0]  # type: ignore[misc]
    assert SATURATION["sigmoid"]((x, 0.0, 0.0, s)) == pytest.approx(math.tanh(x / 2), abs=1e-15)
    assert GATES == {"relu", "tanh", "sigmoid"}
