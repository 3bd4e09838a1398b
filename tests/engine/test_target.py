"""Any node as the target: grads are ∂target/∂x, checked against sympy on random programs;
the nodes the target does not depend on stay at 0; bad targets are clear errors."""

import math

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from chainrule import engine
from chainrule.engine.narration import narrations
from chainrule.engine.step_reader import step_objects
from tests.program_strategies import (
    comparable_oracle,
    derivative_at,
    fuzz_settings,
    sympy_of,
    valid_programs,
)

DIAMOND = "a = 2\nb = a + 1\nc = a * 3\nd = b * c"


@fuzz_settings
@given(valid_programs(), st.data())
def test_any_target_gradients_equal_sympy_s(program, data) -> None:
    oracle = comparable_oracle(program)
    graph_trace = engine.trace(program.source, program.values)
    named = [n.label for n in graph_trace.nodes if n.kind == "op" and n.label]
    if not named:
        return  # no named operation to target (passed over, not assumed away: see below)
    target = data.draw(st.sampled_from(named))
    traced = engine.trace(program.source, program.values, target=target)
    expressions, symbols = sympy_of(program)
    at = {symbols[name]: sp.Float(float(value), 30) for name, value in oracle.leaf_values.items()
          if name in symbols}  # fmt: skip
    for name, leaf in traced.graph.leaves:
        if name not in symbols:  # only the root's statement names it: the target has none of it
            assert traced.grads[leaf.id] == 0.0
            continue
        want = derivative_at(expressions[target], symbols[name], at)
        if abs(want.imag) >= 1e-12 or not math.isfinite(want.real):
            # No real, finite derivative here: this leaf has nothing to compare, the others
            # do (assumed away, with the oracle's refusals, whole programs tripped hypothesis's
            # filter check at random, as in test_forward_mode.py).
            continue
        got = traced.grads[leaf.id]
        assert math.isclose(got, want.real, rel_tol=1e-7, abs_tol=1e-9), (target, name, got, want)


def test_the_target_s_gradients_and_what_it_does_not_depend_on() -> None:
    reply = engine.trace(DIAMOND, target="c").to_dict()
    grads = {node["label"]: node["grad"] for node in reply["nodes"] if node["kind"] != "const"}
    assert grads == {"a": 3.0, "b": 0.0, "c": 1.0, "d": 0.0}  # ∂c/∂a = 3; b and d: off target
    assert reply["target"] == "n4" and reply["root"] == "n5"
    assert reply["off_target"] == ["n1", "n2", "n5"]  # the 1 of a + 1, b, d
    backward = [step["node"] for step in step_objects(reply) if step["phase"] == "backward"]
    assert backward == ["n4", "n3", "n0"]  # only the cone: c, the 3, a
    sorted_ids = [step["emitted"] for step in step_objects(reply) if step["phase"] == "topo"]
    assert [i for i in sorted_ids if i] == ["n0", "n3", "n4"]  # the sort starts at the target
    assert [step["node"] for step in step_objects(reply) if step["phase"] == "forward"] == [
        "n0",
        "n1",
        "n2",
        "n3",
        "n4",
        "n5",
    ]  # fmt: skip  (every node's data is computed)
    seed = next(i for i, step in enumerate(step_objects(reply)) if step["phase"] == "seed")
    assert step_objects(reply)[seed]["node"] == "n4"
    assert narrations(reply)[seed] == (
        "Seed at the target: grad[c] = 1, so every gradient below is ∂c/∂x; the nodes c does "
        "not depend on (greyed out: 3) keep grad 0"
    )
    assert [(r["name"], r["analytic"], r["status"]) for r in reply["gradcheck"]["results"]] == [
        ("a", 3.0, "pass")]  # fmt: skip


@pytest.mark.parametrize("target", ["d", "n5"])
def test_the_root_named_as_target_is_the_usual_trace(target: str) -> None:
    assert engine.trace(DIAMOND, target=target).to_dict() == engine.trace(DIAMOND).to_dict()


def test_a_leaf_as_target_has_gradient_one_and_nothing_else() -> None:
    traced = engine.trace(DIAMOND, target="a")
    assert traced.grads == (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def test_a_later_version_of_a_name_is_named_as_the_page_shows_it() -> None:
    traced = engine.trace("x = 3\nx = x * x\nx = x + 1", target="x₂")
    assert traced.target.label == "x₂" and traced.grad("x") == 6.0


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("q", "the target 'q' names no node: give a node id (n0, n1, …) or a name from the "
              "program (a, b, c, d)"),
        ("n6", "the target 'n6' names no node: give a node id (n0, n1, …) or a name from the "
               "program (a, b, c, d)"),
        ("n01", "the target 'n01' names no node: give a node id (n0, n1, …) or a name from the "
                "program (a, b, c, d)"),
        ("n1", "the target 'n1' is a constant: nothing flows into a constant, so it has no "
               "gradients to show; pick a leaf, a named node or an operation"),
    ],
)  # fmt: skip
def test_bad_targets_are_clear_errors(target: str, message: str) -> None:
    with pytest.raises(engine.BadTarget) as raised:
        engine.trace(DIAMOND, target=target)
    assert raised.value.message == message and raised.value.line is None


def test_a_target_refuses_the_labs_variants_and_says_it_in_russian() -> None:
    with pytest.raises(engine.BadTarget) as raised:
        engine.trace(DIAMOND, target="c", mode="overwrite")
    assert raised.value.message_in("ru") == (
        "цель, отличная от корня, работает только с правильным проходом: уберите 'mode' и "
        "'order' или цель"
    )
