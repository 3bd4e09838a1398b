"""Property tests: random valid programs against finite differences, random text never
raises anything but ProgramError. FUZZ_EXAMPLES sets the number of examples for long runs."""

import json
import math
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategies import Program, valid_programs

from chainrule import engine

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["a", "b", "c"]


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, dict[str, float]]:
    """Smooth programs (no relu kinks, logs of squares plus one) with reuse of names."""
    leaves = st.sampled_from(NAMES)
    consts = st.sampled_from(["2", "0.5", "-1.5", "3"])
    atom = st.one_of(leaves, consts)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(inner, inner).map(lambda t: f"({t[0]}) / (1 + ({t[1]}) ** 2)"),
            inner.map(lambda s: f"tanh({s})"),
            inner.map(lambda s: f"sigmoid({s})"),
            inner.map(lambda s: f"log(1 + ({s}) ** 2)"),
            inner.map(lambda s: f"-{s}"),
            inner.map(lambda s: f"exp(tanh({s}))"),
        )

    expr = st.recursive(atom, extend, max_leaves=8)
    first = draw(expr)
    second = draw(expr)
    values = {name: draw(st.floats(-2, 2).map(lambda v: round(v, 3))) for name in NAMES}
    return f"t = {first}\nu = t * ({second}) + t", values


@FUZZ
@given(programs(), st.booleans())
def test_fuzz_gradients_match_finite_differences(
    program: tuple[str, dict[str, float]], expand: bool
) -> None:
    source, values = program
    result = engine.trace(source, values, expand_derived=expand)
    for check in result.gradcheck.results:
        if math.isfinite(check.analytic) and abs(check.analytic) < 1e6:
            assert check.status in ("pass", "kink"), (source, values, check)
    lean = engine.forward_backward(source, values)
    for name, node in result.graph.leaves:
        assert (
            math.isclose(
                lean.grads[name], result.correct_grads[node.id], rel_tol=1e-9, abs_tol=1e-12
            )
            or expand
        )


ALPHABET = st.sampled_from(
    list("abcxy019.e+-*/^()=,;\n #_\t'\"[]<>:!$")
    + ["**", "relu(", "tanh(", "log(", "exp(", "sigmoid(", "1e309", "\x00", "ｘ", "\ud800"]
)


def trace_or_error(source: str) -> dict | None:
    """The reply for `source` (valid JSON), or None after a ProgramError with a position."""
    try:
        result = engine.trace(source, limits=engine.Limits(1_000, 500, 20))
    except engine.ProgramError as error:
        json.dumps(error.to_dict())
        assert error.line is not None and error.caret.endswith("^")
        return None
    reply = result.to_dict()
    json.dumps(reply, allow_nan=False)
    return reply


@FUZZ
@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_fuzz_random_text_is_a_trace_or_a_program_error(source: str) -> None:
    trace_or_error(source)


@FUZZ
@given(st.text(max_size=30))
def test_fuzz_any_unicode_is_a_trace_or_a_program_error(source: str) -> None:
    try:
        engine.trace(source)
    except engine.ProgramError:
        pass


# What a pasted cell is made of (issue 22): statements chainrule skips or reads as labels, copy
# leftovers, PyTorch, and the Python that must run, in any order and any place.
PASTED = st.sampled_from(
    ["a", "b", " = ", "; ", "\n", "\r\n", " ", "#", "'", '"', "(", ")", "[", "]", ",", "*", "2.0"]
    + ["a.label = 'x*y'", ".label", ".grad", ".data", " = 0.0", " = 1.0", "._backward()"]
    + ["print(", "draw_dot(", "dot", "import ", "from ", " import ", "numpy as np", "\ufeff"]
    + [">>> ", "... ", "In [1]: ", "%", "!", "\u00a0", "Value(", "label=", "torch.", "tensor("]
    + ["Tensor([", "]).double()", "requires_grad", " = True", "tanh(", ".relu()", ".backward()"]
    + ["for ", "def ", "class ", "random.uniform(", "sum(", ".item()", "x1w1", "o"]
)


@FUZZ
@given(st.lists(PASTED, max_size=40).map("".join))
def test_fuzz_a_pasted_cell_is_a_trace_or_a_program_error(source: str) -> None:
    reply = trace_or_error(source)
    for warning in reply["warnings"] if reply else ():  # each note is about a line of the source
        assert warning["line"] is None or 1 <= warning["line"] <= source.count("\n") + 1


def downstream_by_definition(order: list, leaf: object) -> tuple[list, float, int]:
    """The nodes of `order` that reach back to `leaf` through their inputs, walked one leaf at
    a time, the largest finite |data| among their inputs, and what recomputing them costs (a
    plain node 1, a call its body's nodes times CALL_COST_RECOMPUTED): what the gradient
    check's one-pass `_downstream` must find for every leaf."""
    from chainrule.engine.gradcheck import CALL_COST_RECOMPUTED

    def depends(node: object) -> bool:
        return any(child is leaf or depends(child) for child in node.inputs)

    found = [node for node in order if depends(node)]
    sizes = [abs(c.data) for node in found for c in node.inputs if abs(c.data) != math.inf]
    cost = sum(
        1 if node.function is None else node.function.nodes * CALL_COST_RECOMPUTED for node in found
    )
    return found, max([0.0, *(size for size in sizes if size == size)]), cost


@FUZZ
@given(valid_programs(max_statements=5), st.booleans())
def test_the_gradient_check_recomputes_exactly_what_depends_on_each_leaf(
    program: Program, expand: bool
) -> None:
    from chainrule.engine.gradcheck import _downstream

    result = engine.trace(program.source, expand_derived=expand)
    leaves = [leaf for _, leaf in result.graph.leaves]
    order = list(result.cone)
    found = _downstream(order, leaves, len(result.nodes))
    assert found == [downstream_by_definition(order, leaf) for leaf in leaves]
