"""Large and deep inputs: no recursion limit, no quadratic parsing, clean limit errors."""

import json
import sys

import pytest

from chainrule import engine
from chainrule.engine import Limits
from chainrule.engine.parser import parse
from chainrule.engine.step_reader import step_objects

SERVER = Limits(100_000, 20_000, 200)


def chain(n: int) -> str:
    lines = ["x = 1.5", "y1 = x * 1.0001"]
    lines += [f"y{i} = y{i - 1} * 1.0001" for i in range(2, n + 1)]
    return "\n".join(lines)


def test_100k_node_chain_without_touching_the_recursion_limit() -> None:
    limit = sys.getrecursionlimit()
    source = chain(50_000)  # 50,000 muls + 50,000 consts + 1 leaf
    lean = engine.forward_backward(source)
    assert abs(lean.grads["x"] - 1.0001**50_000) < 1e-6 * 1.0001**50_000
    result = engine.trace(source)
    assert len(result.nodes) == 100_001
    assert result.grads[0] == lean.grads["x"]
    assert result.gradcheck.capped is True
    assert sys.getrecursionlimit() == limit
    del result  # freeing a deep graph must not overflow the C stack either


def test_long_chain_timeline_grows_linearly() -> None:
    """Topo steps carry deltas, so the timeline of a long chain stays proportional to it."""
    small = len(json.dumps(engine.trace(chain(500)).to_dict()))
    large = len(json.dumps(engine.trace(chain(2_000)).to_dict()))
    out = engine.trace(chain(2_000)).to_dict()
    assert {s["phase"] for s in step_objects(out)} == {"topo", "forward", "seed", "backward"}
    assert out["warnings"] == []
    assert large < 4.5 * small


def test_ten_thousand_term_sum_parses_and_traces() -> None:
    # How fast is bench/engine.py's ("10,000-term sum parse"): no timing in tests.
    source = " + ".join(f"x{i}" for i in range(10_000))
    (statement,) = parse(source)
    assert len(statement.postfix) == 19_999  # every term and every `+`, read without recursion
    result = engine.trace(source, limits=SERVER)
    assert result.grads[0] == 1.0


def test_twenty_thousand_character_program() -> None:
    source = (
        "\n".join(f"v{i} = {i}" for i in range(2_500))
        + "\n"
        + " + ".join(f"v{i}" for i in range(0, 2_500, 7))
    )
    assert len(source) > 20_000
    engine.trace(source, limits=SERVER)


@pytest.mark.parametrize(
    ("source", "column"),
    [("(" * 10_000 + "a" + ")" * 10_000, 201), ("relu(" * 10_000 + "a" + ")" * 10_000, 1005)],
)
def test_deep_nesting_with_a_limit_is_a_clean_error(source: str, column: int) -> None:
    with pytest.raises(engine.LimitExceeded) as caught:
        engine.trace(source, limits=SERVER)
    assert caught.value.message == (
        "nesting is more than 200 levels deep (parentheses and calls): name a part on a line of "
        "its own (t = …) and use its name"
    )
    assert caught.value.column == column  # the first '(' past the limit


def test_deep_nesting_without_a_limit_works() -> None:
    assert engine.trace("(" * 10_000 + "a" + ")" * 10_000).root.data == 1.0
    deep = engine.forward_backward("x = 0.5\n" + "tanh(" * 10_000 + "x" + ")" * 10_000)
    assert 0 < deep.grads["x"] < 1


@pytest.mark.parametrize(
    "source",
    [
        "-" * 10_000 + "a",
        " ** ".join(["a"] * 5_000),
        "a = 1\n" + "-" * 5_000 + "a" + " ** a" * 5_000,
    ],
)
def test_runs_of_unary_minus_and_power_work(source: str) -> None:
    result = engine.trace(source, limits=SERVER)
    assert str(result.root.data) in ("1.0", "-1.0")


def test_source_and_node_limits_name_the_numbers() -> None:
    with pytest.raises(engine.LimitExceeded) as caught:
        engine.trace("a" * 100_001, limits=SERVER)
    assert caught.value.message == "program is 100,001 characters; the limit is 100,000"
    with pytest.raises(engine.LimitExceeded) as caught:
        engine.trace(" + ".join(f"x{i}" for i in range(10_001)), limits=SERVER)
    assert caught.value.message == "the graph needs more than 20,000 nodes; the limit is 20,000"


@pytest.mark.parametrize("preset", engine.PRESETS, ids=lambda p: p["id"])
def test_the_unrecorded_sort_gives_the_recorded_order(preset: dict) -> None:
    """Value.backward's fast sort and the traced sort of the timeline are the same algorithm."""
    from chainrule.engine.topo import topo_order

    root = engine.trace(preset["source"], preset["values"]).graph.root
    assert topo_order(root) == topo_order(root, events=[])
