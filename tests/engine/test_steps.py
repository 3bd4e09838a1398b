"""Timeline invariants, the seed-000 sort table, and the overwrite / visit-order variants."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chainrule import engine
from chainrule.engine.narration import narrations
from chainrule.engine.step_reader import step_objects
from chainrule.engine.steps import replay_topo
from chainrule.engine.topo import topo_order
from tests.program_strategies import fuzz_settings, valid_programs

# Seed 000: stack after each step and the sorted list, for a=2; b=3; c=a*b; L=c+a
SEED_000 = [
    ("start", None, [("L", 0)], []),
    ("visit", ("L", 0), [("L", 1), ("c", 0)], []),
    ("visit", ("c", 0), [("L", 1), ("c", 1), ("a", 0)], []),
    ("emit", ("a", 0), [("L", 1), ("c", 1)], ["a"]),
    ("visit", ("c", 1), [("L", 1), ("c", 2), ("b", 0)], ["a"]),
    ("emit", ("b", 0), [("L", 1), ("c", 2)], ["a", "b"]),
    ("emit", ("c", 2), [("L", 1)], ["a", "b", "c"]),
    ("skip", ("L", 1), [("L", 2)], ["a", "b", "c"]),
    ("emit", ("L", 2), [], ["a", "b", "c", "L"]),
]


def test_topo_steps_reproduce_seed_000() -> None:
    out = engine.trace("a = 2; b = 3; c = a * b; L = c + a").to_dict()
    label = {n["id"]: n["label"] for n in out["nodes"]}
    topo = [s for s in step_objects(out) if s["phase"] == "topo"]
    got = [
        (
            s["action"],
            (label[s["pop"][0]], s["pop"][1]) if s["pop"] else None,
            [(label[i], k) for i, k in stack],
            [label[i] for i in done],
        )
        for s, (stack, done) in zip(topo, replay_topo(step_objects(out)), strict=True)
    ]
    assert got == SEED_000
    assert narrations(out)[1] == (
        "Pop (L, 0): L's input 0 is c, not yet visited: push (L, 1) and (c, 0)"
    )
    assert topo[7]["input"] == "n0"


def test_narrations_hold_the_numbers() -> None:
    text = narrations(engine.trace(engine.PRESETS[0]["source"]).to_dict())
    assert "e = a + b = 2 + (−3) = −1" in text
    assert "Seed: grad[f] = 1 (f changes one-for-one with itself)" in text
    assert "Visit f = e·c: grad[e] += 1 × 10 = 10, grad[c] += 1 × (−1) = −1" in text


PROGRAMS = [p["source"] for p in engine.PRESETS] + [
    "a = 2\nb = a * a * a + a / (a - 3)\nc = relu(b) * tanh(b) + exp(-a) - log(a ** 2)",
    "x = 0.3\ny = sigmoid(x) ** x + x ** sigmoid(x)",
]


@pytest.mark.parametrize("source", PROGRAMS)
@pytest.mark.parametrize("expand", [False, True])
def test_invariants(source: str, expand: bool) -> None:
    check_invariants(engine.trace(source, expand_derived=expand).to_dict())


def check_invariants(out: dict) -> None:
    """Phases in order; indexes sequential; forward in topo order; every node's backward step
    after its consumers'; contributions to each node sum to its grad."""
    steps = step_objects(out)
    assert [s["index"] for s in steps] == list(range(len(steps)))
    phases = [s["phase"] for s in steps]
    first = {p: phases.index(p) for p in ("forward", "seed", "backward")}
    assert phases == sorted(phases, key=["topo", "forward", "seed", "backward"].index)
    inputs = {n["id"]: n["inputs"] for n in out["nodes"]}
    forward = [s["node"] for s in steps[first["forward"] : first["seed"]]]
    assert sorted(forward) == sorted(inputs)
    seen: set = set()
    for node in forward:
        assert set(inputs[node]) <= seen
        seen.add(node)
    topo = [s for s in steps if s["phase"] == "topo"]
    if topo:
        assert replay_topo(steps)[-1] == ([], forward)
    backward = [s["node"] for s in steps if s["phase"] == "backward"]
    position = {node: i for i, node in enumerate(backward)}
    for node, ins in inputs.items():
        for child in ins:
            assert position[node] < position[child]
    totals = {n["id"]: 0.0 for n in out["nodes"]}
    totals[out["root"]] = 1.0
    for step in steps:
        for c in step.get("contributions", []):
            totals[c["to"]] += c["contribution"]
            assert not c["lost"] and not c["late"]
            assert c["contribution"] == c["upstream"] * c["local"]
    for node in out["nodes"]:
        assert math.isclose(totals[node["id"]], node["grad"], rel_tol=1e-12, abs_tol=1e-12)
        assert node["grad"] == node["correct_grad"]


def test_overwrite_a_plus_a() -> None:
    result = engine.trace("a = 3\nb = a + a", mode="overwrite")
    out = result.to_dict()
    a = out["nodes"][0]
    assert (a["grad"], a["correct_grad"]) == (1.0, 2.0)
    (visit,) = [s for s in step_objects(out) if s["phase"] == "backward" and s["contributions"]]
    assert [c["lost"] for c in visit["contributions"]] == [True, False]


def test_overwrite_shared_loses_the_one_from_the_addition() -> None:
    out = engine.trace("a = 2; b = 3; c = a * b; L = c + a", mode="overwrite").to_dict()
    a = out["nodes"][0]
    assert (a["grad"], a["correct_grad"]) == (3.0, 4.0)
    lost = [
        (s["node"], c["to"], c["contribution"])
        for s in step_objects(out)
        if s["phase"] == "backward"
        for c in s["contributions"]
        if c["lost"]
    ]
    assert lost == [("n3", "n0", 1.0)]
    narration = next(
        said
        for s, said in zip(step_objects(out), narrations(out), strict=True)
        if s["node"] == "n2" and s["phase"] == "backward"
    )
    assert "grad[a] was 1 from L = c + a; c = a·b overwrote it with 3: the 1 is lost" in narration
    assert out["mode"] == "overwrite"


def test_overwrite_shared_variables() -> None:
    result = engine.trace("a = -2\nb = 3\nd = a * b\ne = a + b\nf = d * e", mode="overwrite")
    # reverse topo order f, e, d: d (visited last) overwrites what e gave
    assert (result.grad("a"), result.grad("b")) == (3.0, -2.0)
    assert result.correct_grads[0] == -3.0


DIAMOND = "a = 2\nb = a + 1\nc = a * 3\nd = b * c"


def diamond_ids() -> dict:
    return {n.label: f"n{n.id}" for n in engine.trace(DIAMOND).nodes if n.kind != "const"}


@pytest.mark.parametrize(
    ("order", "grad_a", "valid"),
    [
        (["d", "b", "c", "a"], 15.0, True),
        (["d", "c", "b", "a"], 15.0, True),
        (["a", "b", "c", "d"], 0.0, False),
        (["b", "d", "c", "a"], 9.0, False),
    ],
)
def test_visit_order(order: list, grad_a: float, valid: bool) -> None:
    ids = diamond_ids()
    result = engine.trace(DIAMOND, order=[ids[n] for n in order])
    out = result.to_dict()
    assert result.grad("a") == grad_a
    assert out["nodes"][0]["correct_grad"] == 15.0
    assert out["order_check"]["valid"] is valid
    late = [c for s in step_objects(out) for c in s.get("contributions", []) if c["late"]]
    if valid:
        assert late == [] and out["order_check"]["message"].startswith("a valid")
    else:
        assert late and any(w["type"] == "late" for w in out["warnings"])


def test_visit_order_wrong_names_the_first_violation_and_path() -> None:
    ids = diamond_ids()
    out = engine.trace(DIAMOND, order=[ids[n] for n in "abcd"]).to_dict()
    assert out["order_check"]["message"] == "a was visited before b, which feeds it gradient"
    messages = [w["message"] for w in out["warnings"] if w["type"] == "late"]
    assert messages[0] == (
        "the contribution d → b (6) arrived after b was visited, so the path a → b → d "
        "never passed it on"
    )


def test_visit_order_leaving_a_node_out() -> None:
    ids = diamond_ids()
    out = engine.trace(DIAMOND, order=[ids["d"], ids["b"]]).to_dict()
    assert out["nodes"][0]["grad"] == 6.0
    assert [w["type"] for w in out["warnings"]] == ["never_visited"]
    assert out["order_check"]["valid"] is False


@pytest.mark.parametrize("order", [["n0", "n0"], ["n99"], [3]])
def test_bad_order(order: list) -> None:
    with pytest.raises(engine.BadOrder):
        engine.trace(DIAMOND, order=order)


def test_gradcheck_caps() -> None:
    many = " + ".join(f"x{i}" for i in range(70))
    check = engine.trace(many).gradcheck
    assert (check.checked, check.total, check.capped) == (64, 70, True)
    big = engine.trace(" + ".join(f"x{i % 50} * {i}" for i in range(2600))).gradcheck
    assert (big.checked, big.capped) == (0, True)


# The unrecorded sort (topo.py `_order`, every trace's) walks as the recorded one (the timeline's)
# does: the backward pass adds contributions in its order, so the grads depend on it bit for bit.
@fuzz_settings
@given(valid_programs(max_statements=6), st.booleans())
def test_the_unrecorded_sort_gives_the_order_of_the_recorded_one(program, expand) -> None:
    graph = engine.build_graph(program.source, program.values, expand_derived=expand)
    events: list = []
    assert topo_order(graph.root) == topo_order(graph.root, events)
    assert [event[1] for event in events if event[0] == "emit"] == topo_order(graph.root)


@pytest.mark.parametrize(
    "source",
    [
        "x = 1; y = 2; z = y*x",  # the ids' order is not the sort's: y first
        "a = 2\nb = a*a\nc = b + a*b\nd = relu(c) - c/b",  # shared inputs, skips
        " + ".join(f"a{i}*b{i}" for i in range(500)),  # deep: no recursion
        "a",  # a root that is a leaf
    ],
)
def test_the_unrecorded_sort_on_shared_deep_and_single_node_graphs(source: str) -> None:
    root = engine.build_graph(source).root
    assert topo_order(root) == topo_order(root, [])
