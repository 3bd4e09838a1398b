"""`engine.numbers` (issue 10 contract, section 2): the numbers of a run, equal to the arrays
read from `trace(...).to_dict()` of the same arguments, exactly as JSON; the same errors; and
none of the work that does not depend on the values."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from engine_cases import CASES, case_id, random_runs
from hypothesis import given
from program_strategies import fuzz_settings

from chainrule import engine
from chainrule.engine.step_reader import step_objects

# A contribution's upstream and local are not repeated: they are its step's grad and its edge's
# local_grad (checked below).
CONTRIBUTION_NUMBERS = ("contribution", "grad_before", "grad_after")


def numbers_of_trace(out: dict[str, Any]) -> dict[str, Any]:
    """The numbers reply as read from a whole trace (contract10.md section 2)."""
    nodes = out["nodes"]
    grad = [node["grad"] for node in nodes]
    correct_grad = [node["correct_grad"] for node in nodes]
    backward = [step for step in step_objects(out) if step["phase"] == "backward"]
    contributions = [c for step in backward for c in step["contributions"]]
    return {
        "data": [node["data"] for node in nodes],
        "grad": grad,
        "correct_grad": None if orjson.dumps(correct_grad) == orjson.dumps(grad) else correct_grad,
        "local_grad": [edge["local_grad"] for edge in out["edges"]],
        "step_grad": [step["grad"] for step in backward],
        **{key: [c[key] for c in contributions] for key in CONTRIBUTION_NUMBERS},
        "gradcheck": out["gradcheck"],
        "warnings": out["warnings"],
        "node_warnings": {node["id"]: node["warnings"] for node in nodes if node["warnings"]},
        "grad_flags": out["grad_flags"],
        **tangents_of_trace(out),
    }


def tangents_of_trace(out: dict[str, Any]) -> dict[str, Any]:
    """Forward mode's numbers as read from a whole trace: each node's tangent and each edge's
    tangent contribution (null in reverse mode)."""
    if out["pass"] != "forward":
        return {"tangent": None, "tangent_contribution": None}
    tangent_steps = [step for step in step_objects(out) if step["phase"] == "tangent"]
    by_edge = {
        c["edge"]: c["contribution"] for step in tangent_steps for c in step["contributions"]
    }
    return {
        "tangent": [node["tangent"] for node in out["nodes"]],
        "tangent_contribution": [by_edge[edge["id"]] for edge in out["edges"]],
    }


def check_numbers(source: str, values: dict[str, float] | None, kwargs: dict[str, Any]) -> None:
    out = engine.trace(source, values, **kwargs).to_dict()
    numbers = engine.numbers(source, values, **kwargs)
    # As JSON: keys in the contract's order, -0.0 apart from 0.0, "NaN" for nan (strict JSON:
    # orjson would write a float nan as null, json refuses it).
    assert orjson.dumps(numbers) == orjson.dumps(numbers_of_trace(out))
    json.dumps(numbers, allow_nan=False)
    backward = [step for step in step_objects(out) if step["phase"] == "backward"]
    for visit, step in enumerate(backward):
        for c in step["contributions"]:
            assert orjson.dumps(c["upstream"]) == orjson.dumps(numbers["step_grad"][visit])
            local = numbers["local_grad"][int(c["edge"][1:])]
            assert orjson.dumps(c["local"]) == orjson.dumps(local)
    # The rest of the reply that carries numbers agrees too.
    assert [leaf["value"] for leaf in out["leaves"]] == [
        numbers["data"][int(leaf["id"][1:])] for leaf in out["leaves"]
    ]
    for step in step_objects(out):
        if step["phase"] == "forward":
            assert orjson.dumps(step["data"]) == orjson.dumps(
                numbers["data"][int(step["node"][1:])]
            )
        elif step["phase"] == "seed":
            assert step["grad"] == 1.0


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_numbers_equal_the_trace_s(case: tuple) -> None:
    check_numbers(*case)


@fuzz_settings
@given(random_runs())
def test_random_runs_numbers_equal_the_trace_s(run: tuple) -> None:
    check_numbers(*run)


# Forward mode (issue 27): the timeline's steps are tangent steps, so the backward arrays are
# empty and the tangents are those the steps carry.
FORWARD_CASES = [
    ("a = 2; b = -3; c = a * b + a; d = tanh(c)", None, {"pass_": "forward", "wrt": "a"}),
    (
        "x = 0.5\ny = exp(x) * x ** 2\nz = y / (1 + y)",
        {"x": -1.25},
        {"pass_": "forward", "wrt": "x"},
    ),
    ("a = 0\nb = log(a)\nc = b * 0", None, {"pass_": "forward", "wrt": "a"}),
]


@pytest.mark.parametrize("case", FORWARD_CASES, ids=lambda case: case[0][:24])
def test_forward_mode_numbers_equal_the_trace_s(case: tuple) -> None:
    check_numbers(*case)
    numbers = engine.numbers(*case[:2], **case[2])
    assert numbers["step_grad"] == numbers["contribution"] == []
    assert len(numbers["tangent"]) == len(numbers["data"])


def test_the_overwrite_example() -> None:
    numbers = engine.numbers("a = 2; b = 3; c = a * b; L = c + a", mode="overwrite")
    assert numbers == {
        "data": [2.0, 3.0, 6.0, 8.0],
        "grad": [3.0, 2.0, 1.0, 1.0],
        "correct_grad": [4.0, 2.0, 1.0, 1.0],
        "local_grad": [3.0, 2.0, 1.0, 1.0],
        "step_grad": [1.0, 1.0, 2.0, 3.0],
        "contribution": [1.0, 1.0, 3.0, 2.0],
        "grad_before": [0.0, 0.0, 1.0, 0.0],
        "grad_after": [1.0, 1.0, 3.0, 2.0],
        "gradcheck": numbers["gradcheck"],
        "warnings": [],
        "node_warnings": {},
        "grad_flags": {},
        "tangent": None,
        "tangent_contribution": None,
    }
    assert [r["analytic"] for r in numbers["gradcheck"]["results"]] == [4.0, 2.0]


def test_non_finite_numbers_and_node_warnings() -> None:
    numbers = engine.numbers("a = 0\nb = log(a)\nc = b * 0")
    assert numbers["data"] == [0.0, "-Infinity", 0.0, "NaN"]
    assert numbers["correct_grad"] is None
    assert numbers["node_warnings"] == {
        "n1": [{"type": "division_by_zero", "message": "log(0) divides by zero: −inf"}],
    }  # -inf·0 = nan warns of nothing new: its input already was not finite


def test_grads_that_differ_only_in_the_sign_of_zero_are_not_equal() -> None:
    source = "a = 0\nb = a * -1\nc = b * a"  # overwrite: grad[a] = 1·(-0.0), correct: 0.0
    numbers = engine.numbers(source, mode="overwrite")
    assert orjson.dumps(numbers["grad"]) == b"[-0.0,0.0,0.0,1.0]"
    assert orjson.dumps(numbers["correct_grad"]) == b"[0.0,0.0,0.0,1.0]"
    assert engine.numbers(source)["correct_grad"] is None


ERRORS = [
    ("a = ", {}, {}),
    ("a + b", {"a": "x"}, {}),
    ("a + b", {"a": float("inf")}, {}),
    ("a = 1\na = 2", {}, {}),
    ("a + b", {}, {"order": ["n0", "n0"]}),
    ("a + b", {}, {"order": ["n9"]}),
    ("a + b", {}, {"order": [3]}),
    ("a + b + c", {}, {"limits": engine.Limits(max_nodes=3)}),
    ("a + b + c", {}, {"limits": engine.Limits(max_source_chars=4)}),
    ("((((a))))", {}, {"limits": engine.Limits(max_depth=2)}),
    ("a + b", {}, {"mode": "sideways"}),
]


@pytest.mark.parametrize(("source", "values", "kwargs"), ERRORS)
def test_numbers_raise_what_trace_raises(source: str, values: dict, kwargs: dict) -> None:
    with pytest.raises(Exception) as traced:
        engine.trace(source, values, **kwargs)
    with pytest.raises(Exception) as numbered:
        engine.numbers(source, values, **kwargs)
    assert type(numbered.value) is type(traced.value)
    assert str(numbered.value) == str(traced.value)
    if isinstance(traced.value, engine.ProgramError):
        assert numbered.value.to_dict() == traced.value.to_dict()


def test_numbers_do_no_sort_steps_narration_or_second_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("numbers built a step or a narration")

    for name in ("topo_columns", "forward_columns", "backward_columns"):
        monkeypatch.setattr(engine.steps, name, refuse)
    monkeypatch.setattr(engine.tracing, "steps", refuse)
    monkeypatch.setattr(engine.narration.Narrator, "formula_pattern", refuse)
    sorts: list[bool] = []
    passes: list[bool] = []  # recorded or not
    real_sort, real_backward = engine.tracing.topo_order, engine.tracing.backward
    real_recorded = engine.tracing.recorded_backward

    def sort(root: engine.Value, events: list | None = None) -> list:
        sorts.append(events is not None)
        return real_sort(root, events)

    def backward(*args: Any) -> None:
        passes.append(False)
        real_backward(*args)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        passes.append(True)
        return real_recorded(*args, **kwargs)

    monkeypatch.setattr(engine.tracing, "topo_order", sort)
    monkeypatch.setattr(engine.tracing, "backward", backward)
    monkeypatch.setattr(engine.tracing, "recorded_backward", recorded)
    preset = engine.PRESETS[0]["source"]
    assert engine.numbers(preset)["data"] == [2.0, -3.0, 10.0, -1.0, -10.0]
    assert (sorts, passes) == ([False], [True])  # one sort, unrecorded; one recorded pass
    sorts.clear()
    passes.clear()
    engine.numbers(preset, mode="overwrite")
    assert (sorts, passes) == ([False], [False, True])  # the correct pass and the variant's
