"""micrograd's own demo (demo.ipynb: `MLP(2, [16, 16, 1])` on the moons, max-margin loss and L2
regularisation) read by `chainrule.trace_value`: the engine's gradients are micrograd's, the
limits make room for it, and the moons are scikit-learn's formula (chainrule/sandbox/moons.py).
A smaller batch here (10 points: 7,498 nodes); the whole demo (100 points: 65,818 nodes) is
bench/demo.py's."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest

import chainrule
from chainrule.app.settings import AppSettings
from chainrule.engine import Limits
from chainrule.engine.value_reader import TooManyNodes, program_of
from chainrule.notebook import traces
from chainrule.notebook.traces import caller_places
from chainrule.sandbox.moons import demo_total_loss, make_moons

BATCH = 10


@pytest.fixture(scope="module")
def demo() -> tuple[Any, Any, dict[str, Any]]:
    """The model, micrograd's total loss after `backward()`, and chainrule's reply for it."""
    model, total_loss = demo_total_loss(BATCH)
    return model, total_loss, chainrule.trace_value(total_loss)


def micrograd_nodes(root: Any) -> int:
    seen: set[int] = set()
    stack = [root]
    while stack:
        value = stack.pop()
        if id(value) not in seen:
            seen.add(id(value))
            stack.extend(value._prev)
    return len(seen)


def test_every_parameter_s_gradient_is_micrograd_s(demo: tuple) -> None:
    """337 parameters, each gradient as micrograd's own `backward()` left it (the same sums,
    possibly added in another order: 1e-12 relative); the root is micrograd's loss exactly."""
    model, total_loss, reply = demo
    nodes = {node["id"]: node for node in reply["nodes"]}
    leaf_ids = {leaf["name"]: leaf["id"] for leaf in reply["leaves"]}
    assert nodes[reply["root"]]["data"] == total_loss.data
    assert len(reply["nodes"]) == micrograd_nodes(total_loss) == 7_498
    # The same program the reply says (named from the caller's variables: `model.layers[0]…`).
    program = program_of(total_loss, names=caller_places())
    assert program.source == reply["program"]["source"]
    name_of = {id(value): text for value, text in zip(program.objects, program.texts, strict=True)}
    parameters = model.parameters()
    assert len(parameters) == 337
    grads = [nodes[leaf_ids[name_of[id(p)]]]["grad"] for p in parameters]
    for p, grad in zip(parameters, grads, strict=True):
        assert math.isclose(grad, p.grad, rel_tol=1e-12, abs_tol=0.0), (grad, p.grad)
    assert sum(grad == 0.0 for grad in grads) < 337  # dead units give zeros, not all of them
    # micrograd's set merged each `p*p` of the regulariser into one child: one warning each.
    merged = [w for w in reply["warnings"] if w["type"] == "merged_operand"]
    assert len(merged) == 337


def test_a_value_graph_is_not_bound_by_a_request_s_limits(demo: tuple) -> None:
    """No server parses the program the reader wrote, so only its nodes are bounded (by
    `max_value_nodes`): the whole demo's is more than a request may be (2,158,452 characters,
    past a body's 1 MiB; 177,231 tokens, past 100,000; 65,818 nodes, past 20,000: bench/demo.py)."""
    _, _, reply = demo
    settings = AppSettings()
    assert traces.value_limits() == Limits(
        max_source_chars=None, max_nodes=settings.max_value_nodes, max_depth=settings.max_depth
    )
    assert traces.value_limits().max_tokens is None
    assert len(reply["nodes"]) == 7_498


def test_a_value_graph_past_max_value_nodes_is_refused_before_it_is_written(
    demo: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, total_loss, _ = demo
    monkeypatch.setattr(traces, "get_settings", lambda: AppSettings(max_value_nodes=7_000))
    with pytest.raises(TooManyNodes) as refused:
        chainrule.trace_value(total_loss)
    # What to do, said: a smaller graph, or the limit raised (and when that is read).
    assert str(refused.value) == (
        "the graph has more than 7,000 nodes, more than chainrule reads from a Value: show a "
        "smaller one (one example's loss, or a smaller batch), or raise the limit with the "
        "environment variable CHAINRULE_MAX_VALUE_NODES (read when chainrule is first used: in "
        "a notebook, set it, then restart the kernel)"
    )
    assert len(program_of(total_loss, max_nodes=7_498).objects) == 7_498  # the bound is reached


def test_the_moons_lie_on_scikit_learn_s_half_circles() -> None:
    """Without noise, the first half on the upper unit half circle, the second on the lower one
    shifted by (1, 0.5), each at angles evenly spaced over [0, π], shuffled with their labels."""
    points, labels = make_moons(100, noise=None)
    assert labels.count(0) == labels.count(1) == 50
    assert labels != sorted(labels)  # shuffled
    for (x, y), label in zip(points, labels, strict=True):
        if label == 0:
            assert math.isclose(x * x + y * y, 1.0) and y >= -1e-15
        else:
            assert math.isclose((x - 1) ** 2 + (y - 0.5) ** 2, 1.0) and y <= 0.5 + 1e-15
    angles = sorted(
        math.atan2(y, x) for (x, y), label in zip(points, labels, strict=True) if label == 0
    )
    assert angles == pytest.approx([i * math.pi / 49 for i in range(50)], abs=1e-12)
    assert make_moons(7, noise=None)[1].count(0) == 3  # n // 2 outer, the rest inner


def test_the_moons_noise_is_seeded_gaussian_of_the_given_spread() -> None:
    clean, labels = make_moons(2_000, noise=None, seed=5)
    noisy, same_labels = make_moons(2_000, noise=0.1, seed=5)
    assert same_labels == labels
    offsets = [a - b for p, q in zip(noisy, clean, strict=True) for a, b in zip(p, q, strict=True)]
    assert abs(statistics.fmean(offsets)) < 0.01
    assert 0.095 < statistics.stdev(offsets) < 0.105
    assert make_moons(100) == make_moons(100)  # seeded: the same points every time
    assert make_moons(100) != make_moons(100, seed=1)
