"""Gradient descent (issue 13): the engine's steps against hand-written loops and its own passes."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainrule import engine
from chainrule.engine import BadTraining, descend
from chainrule.engine.narration import fmt

LINE = "loss = (w*2 + b - 5)**2"


def hand_loop(w: float, b: float, lr: float, steps: int, momentum: float = 0.0):
    """The derivative written out: d/dw = 2·(2w + b − 5)·2, d/db = 2·(2w + b − 5)."""
    roots, values = [], []
    vw = vb = 0.0
    for _ in range(steps):
        r = 2 * w + b - 5
        roots.append(r**2)
        vw = momentum * vw + 2 * r * 2
        vb = momentum * vb + 2 * r
        w, b = w - lr * vw, b - lr * vb
        values.append([w, b])
    roots.append((2 * w + b - 5) ** 2)
    return roots, values


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_fifty_steps_match_a_hand_written_loop(momentum):
    descent = descend(
        LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=0.01, steps=50, momentum=momentum
    )
    roots, values = hand_loop(0.0, 0.0, 0.01, 50, momentum)
    assert descent.stopped is None
    assert len(descent.roots) == 51 and len(descent.values) == 50
    assert descent.roots == pytest.approx(roots, rel=1e-12, abs=1e-12)
    for got, want in zip(descent.values, values, strict=True):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert descent.roots[-1] < descent.roots[0]


def test_batches_continue_where_the_last_stopped():
    """Two calls of 25 steps (values and velocity carried) equal one call of 50."""
    whole = descend(LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=0.01, steps=50, momentum=0.9)
    first = descend(LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=0.01, steps=25, momentum=0.9)
    w, b = first.values[-1]
    second = descend(
        LINE, {"w": w, "b": b}, parameters=["w", "b"], lr=0.01, steps=25, momentum=0.9,
        velocity=first.velocity, baseline=first.roots[0],
    )  # fmt: skip
    assert first.roots + second.roots[1:] == whole.roots
    assert first.values + second.values == whole.values


def test_only_the_chosen_parameters_move():
    descent = descend("y = w*x + b", {"w": 1, "x": 3, "b": 0}, parameters=["w"], lr=0.1, steps=3)
    assert descent.parameters == ["w"]
    assert [w for [w] in descent.values] == pytest.approx([0.7, 0.4, 0.1])  # ∂y/∂w = x = 3
    assert descent.roots == pytest.approx([3.0, 2.1, 1.2, 0.3])


def test_a_rate_that_overshoots_stops_at_the_step_and_says_so():
    descent = descend(LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=1, steps=20)
    assert descent.roots == [25.0, 2025.0]
    assert descent.values == [[20.0, 10.0]]
    assert descent.stopped == {
        "step": 1,
        "reason": "diverged",
        "message": "Stopped at step 1: the root rose from 25 to 2025. "
        "The learning rate 1 is too large here; try 0.1.",
    }


def test_plain_descent_stops_at_the_first_step_that_raises_the_root():
    """Near the minimum a too-large rate overshoots long before the loss passes its start."""
    line = engine.PRESETS[[p["id"] for p in engine.PRESETS].index("line-fit")]["source"]
    trained = descend(line, {}, parameters=["w", "b"], lr=0.01, steps=50)
    w, b = trained.values[-1]
    later = descend(
        line, {"w": w, "b": b}, parameters=["w", "b"], lr=0.05, steps=200,
        baseline=trained.roots[0], first_step=50,
    )  # fmt: skip
    roots = later.roots
    assert all(b < a for a, b in zip(roots[:-1], roots[1:-1], strict=False))  # fell until then
    assert roots[-2] < roots[-1] < trained.roots[0]
    assert later.stopped == {
        "step": 50 + len(roots) - 1,
        "reason": "diverged",
        "message": f"Stopped at step {50 + len(roots) - 1}: the root rose from "
        f"{fmt(roots[-2])} to {fmt(roots[-1])}. The learning rate 0.05 is too large here; "
        "try 0.005.",
    }


def test_with_momentum_the_root_may_rise_but_not_above_its_start():
    calm = descend(LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=0.1, steps=50, momentum=0.9)
    assert calm.stopped is None
    assert any(b > a for a, b in zip(calm.roots, calm.roots[1:], strict=False))  # it rose, on
    descent = descend(LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=0.5, steps=50, momentum=0.9)
    assert descent.stopped["reason"] == "diverged"
    assert descent.stopped["message"] == (
        "Stopped at step 1: the root climbed to 400, above its start 25. "
        "The learning rate 0.5 is too large here; try 0.05."
    )


def test_a_later_batch_counts_its_steps_from_first_step():
    descent = descend(LINE, {"w": 0, "b": 0}, parameters=["w", "b"], lr=1, steps=5, first_step=40)
    assert descent.stopped["step"] == 41
    assert descent.stopped["message"].startswith(
        "Stopped at step 41: the root rose from 25 to 2025"
    )


def test_a_root_that_overflows_stops_with_a_message_not_an_error():
    overflow = descend("y = -exp(a)", {"a": 700}, parameters=["a"], lr=1, steps=5)
    assert overflow.roots == [-math.exp(700), -math.inf]
    assert overflow.stopped == {
        "step": 1,
        "reason": "nonfinite",
        "message": "Stopped at step 1: the root became −inf. "
        "The learning rate 1 is too large here; try 0.1.",
    }


def test_a_root_that_is_not_a_loss_just_descends():
    descent = descend("y = a*b", {"a": 1, "b": 1}, parameters=["a", "b"], lr=0.1, steps=20)
    assert descent.stopped is None
    roots = descent.roots
    assert all(later < earlier for earlier, later in zip(roots, roots[1:], strict=False))


def test_a_root_that_is_not_a_number_at_the_start_cannot_start():
    descent = descend("y = log(a)", {"a": -1}, parameters=["a"], lr=0.1, steps=3)
    assert descent.roots[0] != descent.roots[0]  # nan
    assert descent.values == []
    assert descent.stopped == {
        "step": 0,
        "reason": "nonfinite",
        "message": "Cannot start: the root is nan at these values. "
        "Move the sliders until it is a number.",
    }


@pytest.mark.parametrize(
    ("parameters", "settings_", "message"),
    [
        (["q"], {}, "'q' is not a leaf of this program, so it cannot be trained; "
                    "its leaves are: w, b"),
        (["loss"], {}, "'loss' is not a leaf of this program, so it cannot be trained; "
                       "its leaves are: w, b"),
        (["w", "w"], {}, "'w' is listed twice in the parameters"),
        ([], {}, "choose at least one leaf to train"),
        (["w"], {"lr": 0}, "the learning rate must be a finite number above 0, got 0"),
        (["w"], {"lr": -0.1}, "the learning rate must be a finite number above 0, got -0.1"),
        (["w"], {"lr": math.inf}, "the learning rate must be a finite number above 0, got inf"),
        (["w"], {"lr": math.nan}, "the learning rate must be a finite number above 0, got nan"),
        (["w"], {"lr": True}, "the learning rate must be a finite number above 0, got True"),
        (["w"], {"steps": 0}, "steps must be a whole number from 1 to 200, got 0"),
        (["w"], {"steps": 201}, "steps must be a whole number from 1 to 200, got 201"),
        (["w"], {"steps": 2.0}, "steps must be a whole number from 1 to 200, got 2.0"),
        (["w"], {"momentum": 1}, "momentum must be a number from 0 up to (not including) 1, got 1"),
        (["w"], {"momentum": -0.5},
         "momentum must be a number from 0 up to (not including) 1, got -0.5"),
    ],
)  # fmt: skip
def test_settings_that_cannot_run_are_refused_with_what_to_change(parameters, settings_, message):
    arguments = {"lr": 0.1, "steps": 3} | settings_
    with pytest.raises(BadTraining) as caught:
        descend(LINE, {"w": 0, "b": 0}, parameters=parameters, **arguments)
    assert caught.value.to_dict()["message"] == message
    assert caught.value.to_dict()["type"] == "BadTraining"


def test_program_errors_are_those_of_trace():
    with pytest.raises(engine.SyntaxError_) as caught:
        descend("y = w +* 2", {}, parameters=["w"], lr=0.1, steps=1)
    with pytest.raises(engine.SyntaxError_) as expected:
        engine.trace("y = w +* 2")
    assert caught.value.to_dict() == expected.value.to_dict()


PROGRAMS = [
    "loss = (tanh(w*x + b) - y)**2",
    "loss = relu(w*x + b) + sigmoid(w)*b",
    "loss = (w*x - 1)**2 + (b*b - 4)**2 + exp(w/10)",
]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(PROGRAMS),
    st.floats(-2, 2),
    st.floats(-2, 2),
    st.floats(1e-4, 0.05),
)
def test_every_step_is_the_engine_s_own_forward_and_backward(source, w, b, lr):
    """Each root is the engine's forward pass at that step's values, and each step moves by
    exactly lr × the engine's gradient (no second implementation of the passes)."""
    values = {"w": w, "b": b, "x": 0.5, "y": 1.0}
    descent = descend(source, values, parameters=["w", "b"], lr=lr, steps=5)
    current = dict(values)
    for k, root in enumerate(descent.roots):
        run = engine.forward_backward(source, current)
        assert root == run.data
        if k == len(descent.values):
            break
        step = {name: current[name] - lr * run.grads[name] for name in ("w", "b")}
        assert descent.values[k] == [step["w"], step["b"]]
        current |= step


def test_a_request_s_work_is_bounded_by_nodes_times_steps():
    with pytest.raises(BadTraining) as caught:
        descend(LINE, {"w": 0, "b": 0}, parameters=["w"], lr=0.1, steps=50, max_node_steps=300)
    nodes = len(engine.build_graph(LINE).nodes)
    assert caught.value.to_dict()["message"] == (
        f"50 steps of a graph that stands for {nodes} nodes (a call of the program's function "
        "counts as its body's nodes) is too much work for one request (at most 300 node-steps); "
        f"ask for at most {300 // nodes} steps at a time"
    )
    assert descend(LINE, {}, parameters=["w"], lr=0.1, steps=300 // nodes, max_node_steps=300)


def test_the_reply_is_strict_json():
    reply = descend("y = -exp(a)", {"a": 700}, parameters=["a"], lr=1, steps=5).to_dict()
    assert reply["roots"][1] == "-Infinity"
    assert json.loads(json.dumps(reply, allow_nan=False)) == reply
