"""A graph of Values read back as a program (chainrule.trace_value): micrograd's own graphs give
micrograd's numbers (micrograd, run in this process, is the oracle), ours round-trip, and what
no program can say is a clear error."""

from __future__ import annotations

import math
import random

import lecture_cells
import pytest
from hypothesis import given
from hypothesis import strategies as st
from micrograd.engine import Value as MG
from micrograd.nn import MLP, Neuron
from program_strategies import fuzz_settings
from test_micrograd_dialect import MORE_OPS, SANITY_CHECK
from written_statements import statements_difference

import chainrule
from chainrule import engine
from chainrule.engine.tracing import written_parse
from chainrule.engine.value_reader import (
    KNOWN_OPS,
    NotAGraph,
    NotAValue,
    Program,
    TooManyNodes,
    nodes_under,
    places_in,
    program_of,
)


def labelled(data: float, label: str) -> MG:
    value = MG(data)
    value.label = label
    return value


def micrograd_runs(source: str, root: str) -> tuple[MG, dict[str, MG]]:
    """A micrograd snippet the dialect tests paste, run by micrograd itself up to backward()."""
    scope: dict = {"Value": MG}
    exec(
        source.split(f"{root}.backward()")[0].replace("from micrograd.engine import Value", ""),
        scope,
    )
    return scope[root], scope  # the variables hold their Values, as a notebook's do


def sanity_check():
    return micrograd_runs(SANITY_CHECK, "y")


def more_ops():
    return micrograd_runs(MORE_OPS, "g")


def neuron():
    random.seed(0)
    x1, x2 = labelled(2.0, "x1"), labelled(-1.0, "x2")
    neuron = Neuron(2)
    return neuron([x1, x2]), {"x1": x1, "x2": x2, "neuron": neuron}


def mlp_loss():
    random.seed(1)
    model = MLP(2, [2, 1])
    xs, ys = [[2.0, 3.0], [-1.0, -2.0]], [1.0, -1.0]
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)), MG(0.0))
    params = {f"p{i}": p for i, p in enumerate(model.parameters())}
    return loss, params


GRAPHS = {"sanity_check": sanity_check, "more_ops": more_ops, "neuron": neuron, "mlp": mlp_loss}


def leaves_of(root: MG) -> list[MG]:
    seen, stack, leaves = set(), [root], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node._prev:
            leaves.append(node)
        stack.extend(node._prev)
    return leaves


@pytest.mark.parametrize("name", GRAPHS)
def test_micrograd_graphs_give_micrograds_numbers(name):
    root, named = GRAPHS[name]()
    root.backward()
    program = program_of(root)
    traced = engine.trace(program.source)
    assert math.isclose(traced.root.data, root.data, rel_tol=1e-12)
    # Every leaf: the same data and the same gradient as micrograd's (labels keep their names);
    # a number micrograd wrapped in a Value (nothing but the graph holds it) is a constant.
    constants = {id(v) for v, const in zip(program.objects, program.consts, strict=True) if const}
    held = [leaf for leaf in leaves_of(root) if id(leaf) not in constants]
    assert len(constants) == {"sanity_check": 2, "more_ops": 9, "neuron": 0, "mlp": 10}[name]
    ours = sorted((node.data, node.grad) for node in traced.nodes if node.kind == "leaf")
    theirs = sorted((leaf.data, leaf.grad) for leaf in held)
    assert len(ours) == len(theirs)
    for (data, grad), (mg_data, mg_grad) in zip(ours, theirs, strict=True):
        assert data == mg_data
        assert math.isclose(grad, mg_grad, rel_tol=1e-9, abs_tol=1e-12), (data, grad, mg_grad)
    for label, value in named.items():
        if hasattr(value, "label"):
            assert traced.grad(label) == pytest.approx(value.grad, rel=1e-12)


def test_a_reused_operand_micrograd_merged_is_two_edges_and_a_warning():
    a = labelled(3.0, "a")
    square = a * a
    square.label = "square"
    double = square + square
    double.label = "double"
    double.backward()
    program = program_of(double)
    assert program.source == "a = 3.0\nsquare = a * a\ndouble = square + square\n"
    assert [w["line"] for w in program.warnings()] == [2, 3]
    assert program.warnings()[0]["message"] == (
        "micrograd keeps the children of square in a set, so draw_dot draws one edge from a; "
        "square = a * a uses it twice, and the correct graph has two edges (both carry a gradient)"
    )
    traced = engine.trace(program.source)
    assert traced.grad("a") == a.grad == 12.0
    reply = chainrule.trace_value(double)
    assert [w["type"] for w in reply["warnings"]][:2] == ["merged_operand", "merged_operand"]
    assert reply["program"]["source"] == program.source
    assert len([e for e in reply["edges"] if e["target"] == reply["root"]]) == 2


def test_names_labels_and_generated_names():
    x = labelled(1.5, "x")
    bad = labelled(2.0, "not a name")
    twice = labelled(4.0, "x")  # a label already taken
    func = labelled(0.5, "tanh")  # a function's name
    out = (x * bad + twice) * func
    program = program_of(out)
    assert program.leaves == ["x", "v1", "v2", "v3"] or sorted(program.leaves) == [
        "v1",
        "v2",
        "v3",
        "x",
    ]
    assert program.root == "out"
    assert engine.trace(program.source).root.data == out.data


def test_our_values_round_trip():
    source = "a = 2\nb = -3\nc = a * 3 - a / b\nd = tanh(c) + sigmoid(-a) ** 2 + exp(b) * log(a)"
    traced = engine.trace(source)
    program = program_of(traced.root)
    again = engine.trace(program.source)
    assert again.root.data == traced.root.data
    assert again.grad("a") == traced.grad("a") and again.grad("b") == traced.grad("b")
    assert program.leaves == ["a", "b"]


def test_a_deep_chain_needs_no_recursion():
    x = labelled(0.5, "x")
    y = x
    for _ in range(5_000):
        y = y * 1.0001 + 0.0
    program = program_of(y)
    traced = engine.trace(program.source)
    assert math.isclose(traced.root.data, y.data, rel_tol=1e-12)
    assert traced.grad("x") == pytest.approx(1.0001**5000, rel=1e-9)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: 3.0, "float is not a Value: a graph node has a number `data` and its"),
        (lambda: MG(float("nan")), "a leaf's data is nan: a program's numbers are finite"),
        (lambda: _cycle(), "the graph has a cycle"),
    ],
)
def test_what_no_program_can_say_is_a_clear_error(build, message):
    with pytest.raises(NotAGraph) as error:
        program_of(build())
    assert str(error.value).startswith(message)


def _with_op(value: MG, op: str) -> MG:
    value._op = op
    if not value._prev:
        value._prev = {MG(1.0)}
    return value


def _cycle() -> MG:
    a = MG(1.0) + MG(2.0)
    b = a * MG(3.0)
    a._prev = {b, MG(0.0)}
    return b


def test_the_python_docs_examples_run():
    import doctest
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs" / "python.md"
    failures, tried = doctest.testfile(str(docs), module_relative=False, verbose=False)
    assert tried >= 6 and failures == 0


def test_one_neuron_built_thirty_times_reads_as_one_program(kernel_sized_heap):
    # micrograd keeps children in a set: before canonical order, 30 builds gave 4 programs.
    programs = set()
    for _ in range(30):
        random.seed(3)
        out = Neuron(3)([MG(1.0), MG(-2.0), MG(0.5)])
        programs.add(program_of(out).source)
    assert len(programs) == 1


def test_operands_keep_the_order_their_backward_names_them():
    x1, w1 = labelled(2.0, "x1"), labelled(-3.0, "w1")
    assert "out = x1 * w1" in program_of(x1 * w1).source  # not w1 * x1, as labels would sort
    assert "out = w1 * x1" in program_of(w1 * x1).source


class _Bare:
    """A learner's Value with a set of children and no `_backward` closure to read order from."""

    def __init__(self, data, children=(), op="", label=""):
        self.data, self._prev, self._op, self.label = data, set(children), op, label

    def __mul__(self, other):
        return _Bare(self.data * other.data, (self, other), "*")

    def __add__(self, other):
        return _Bare(self.data + other.data, (self, other), "+")


def test_without_a_closure_operands_go_by_label_then_by_structure():
    a, b = _Bare(2.0, label="a"), _Bare(3.0, label="b")
    assert program_of(b * a).source == "a = 2.0\nb = 3.0\nout = a * b\n"
    # Unlabelled: by a key of what each operand is, whatever the order they were made in.
    first = [_Bare(1.5), _Bare(-2.0)]
    one = program_of((first[0] * first[1]) + _Bare(4.0)).source
    second = [_Bare(-2.0), _Bare(1.5)]
    other = program_of(_Bare(4.0) + (second[1] * second[0])).source
    assert one == other


def test_labels_that_are_no_names_are_written_beside_the_name():
    x = labelled(2.0, "x 1")
    y = x * labelled(3.0, "y")
    y.label = "x*y"
    program = program_of(y.relu(), names={id(y): "xy"})
    assert program.source == (
        "v1 = 2.0; v1.label = 'x 1'\ny = 3.0\nxy = v1 * y; xy.label = 'x*y'\nout = xy.relu()\n"
    )
    assert program.values == {"v1": 2.0, "y": 3.0}
    traced = engine.trace(program.source)  # the dialect reads the label lines
    assert traced.root.data == 6.0 and traced.grad("v1") == 3.0


def test_a_label_no_string_can_hold_is_left_out():
    x = labelled(2.0, 'it\'s "quoted"')
    assert program_of(x * x).source == "v1 = 2.0\nout = v1 * v1\n"


def test_a_graph_over_the_node_limit_is_refused_while_read():
    x = labelled(1.0, "x")
    for _ in range(50):
        x = x * 1.01
    with pytest.raises(TooManyNodes):
        program_of(x, max_nodes=40)
    assert program_of(x, max_nodes=200).root == "out"


def test_an_op_no_row_explains_is_an_opaque_node_and_no_value_is_a_type_of_its_own():
    a, b = labelled(1.0, "a"), labelled(2.0, "b")
    odd = _with_op(a + b, "cosh")
    odd.data = 10.0  # no row of the table gives 10 from 1 and 2
    odd.label = "c"
    program = program_of(odd * labelled(3.0, "d"))
    # Issue 38: drawn with its children and its numbers: a call of a function the program
    # defines for it, holding its data, its local derivatives its own `_backward` gives (the
    # `+`'s: 1 and 1), the tangent there.
    assert program.source == (
        "a = 1.0\nb = 2.0\n"
        "unknown_cosh(p1, p2) = 10.0 + 1.0 * (p1 - 1.0) + 1.0 * (p2 - 2.0)\n"
        "c = unknown_cosh(a, b)\nd = 3.0\nout = c * d\n"
    )
    (warning,) = program.warnings()
    assert warning["type"] == "unknown_op" and "op 'cosh'" in warning["message"]
    assert "children (a, b)" in warning["message"] and "(1.0, 1.0)" in warning["message"]
    trace = chainrule.trace(program.source)
    cards = {node["label"]: node for node in trace["nodes"]}
    assert (cards["c"]["op"], cards["c"]["data"], cards["c"]["grad"]) == ("unknown_cosh", 10.0, 3.0)
    assert {(e["source"], e["target"]) for e in trace["edges"]} >= {
        (cards["a"]["id"], cards["c"]["id"]),
        (cards["b"]["id"], cards["c"]["id"]),
    }
    assert cards["a"]["grad"] == cards["b"]["grad"] == 3.0
    assert (a.grad, b.grad, odd.grad) == (0.0, 0.0, 0.0)  # measured, then put back
    with pytest.raises(NotAValue):
        program_of("a string")


def test_the_lecture_s_labels_that_are_no_names_come_back_as_labels():
    """The lecture's neuron (its own Value class, here the tests' stand-in for it), read back:
    `x1*w1` is the card's label, on a node the program names after it (`x1_w1`, never `t1`)."""
    from lecture_cells import CELLS, run

    root, _ = run(next(cell for cell in CELLS if cell.id == "second-half-cell-9"))
    reply = chainrule.trace_value(root)
    cards = {node["label"]: node for node in reply["nodes"]}
    assert set(cards) == {"x1", "x2", "w1", "w2", "b", "x1*w1", "x2*w2", "x1*w1 + x2*w2", "n", "o"}
    assert cards["x1*w1"]["name"] == "x1_w1"
    assert "; x1_w1.label = 'x1*w1'" in reply["program"]["source"]
    assert math.isclose(cards["x1"]["grad"], -1.5, rel_tol=1e-12)
    # A label no program line can hold (a line break, a backslash, both quotes) is left out.
    for label in ("a\nb", "a\\b", 'it\'s "x"'):
        product = labelled(2.0, "x") * labelled(3.0, "y")
        product.label = label
        total = product + labelled(1.0, "z")
        total.backward()
        reply = chainrule.trace_value(total)
        assert ".label" not in reply["program"]["source"]
        # The variables that hold the nodes name them (the caller's namespace: docs/python.md).
        assert sorted(n["label"] for n in reply["nodes"]) == ["product", "total", "x", "y", "z"]


def test_a_graph_whose_leaves_moved_after_its_forward_pass_says_which():
    """Issue 39: twenty steps of zero_grad / backward / `p.data += -0.05 * p.grad`, then
    trace_value(loss). The learner printed the loss of the last forward pass; the leaves have
    moved since. The reply tells them so, naming the leaves that moved, and the graph is the
    one their current leaves give (docs/python.md says why)."""
    random.seed(3)
    model = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    for _ in range(20):
        loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True))
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data += -0.05 * p.grad
    printed = loss.data
    reply = chainrule.trace_value(loss)
    (stale,) = [w for w in reply["warnings"] if w["type"] == "stale_graph"]
    assert "Leaves changed after the forward pass" in stale["message"]
    from chainrule.notebook.traces import caller_places

    program = program_of(loss, names=caller_places())  # named as trace_value names them
    # Every parameter the last step moved (a dead ReLU's kept its place) is named; the inputs
    # (numbers micrograd wrapped: constants) did not move.
    assert len(program.moved) == sum(p.grad != 0 for p in model.parameters())
    assert all(name in stale["message"] for name in program.moved[:8])
    # Named as their cards and sliders name them: where they live, the learner's words.
    assert all(name.startswith("model.layers[") for name in program.moved), program.moved
    assert program.inconsistent[0]["stored"] != program.inconsistent[0]["follows"]
    # The graph drawn is the one the current leaves give: not the printed loss, and said so.
    root = next(n for n in reply["nodes"] if n["id"] == reply["root"])
    assert not math.isclose(root["data"], printed, rel_tol=1e-9)
    # A forward pass run again makes the graph consistent: no warning, the root is the loss.
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True))
    again = chainrule.trace_value(loss)
    assert not [w for w in again["warnings"] if w["type"] == "stale_graph"]
    root = next(n for n in again["nodes"] if n["id"] == again["root"])
    assert math.isclose(root["data"], loss.data, rel_tol=1e-9)


def test_a_value_a_running_functions_variable_holds_is_a_leaf_not_a_constant():
    """A marimo cell is a function: its Values are held by its variables, on the stack, until it
    returns. Read while it runs, `b` (the `other` of `a * b`) is a leaf; the 3 micrograd wrapped
    inside `__add__` is a constant."""

    def cell() -> Program:
        a, b = MG(2.0), MG(-1.5)
        return program_of(a * b + 3)

    assert cell().source == "v1 = 2.0\nv2 = -1.5\nout = v1 * v2 + 3.0\n"


@pytest.mark.parametrize("held_by", ["nothing", "a list", "a slot", "a closure", "a variable"])
def test_a_wrapped_number_anything_but_the_graph_holds_is_a_slider(held_by: str) -> None:
    """The reader counts a leaf's references (engine/value_reader.py `wrapped_numbers`): the
    graph's (its parents' children, their `_backward` closures) and its own; any other holder
    makes the number micrograd wrapped (the 3.0 of `a * 3.0`) a slider: a list, an object with
    __slots__, a learner's closure, a variable of a running function."""

    class Slot:
        __slots__ = ("value",)

    a = MG(2.0)
    product = a * 3.0
    other = next(child for child in product._prev if child is not a)
    keep: list = []
    if held_by == "a list":
        keep.append(other)
    elif held_by == "a slot":
        keep.append(Slot())
        keep[0].value = other
    elif held_by == "a closure":
        keep.append((lambda held: lambda: held)(other))
    root = product + a
    root.backward()
    if held_by != "a variable":
        del other
    program = program_of(root)
    sliders = sorted(program.values.values())
    assert (sliders, sum(program.consts)) == (
        ([2.0], 1) if held_by == "nothing" else ([2.0, 3.0], 0)
    )


def moons_like_loss(keep_topo: bool) -> tuple[MG, list, list]:
    """A small MLP's max-margin loss (as micrograd's demo.ipynb makes it), backward() run with
    the collector off, so its `topo` list and `visited` set are still on the heap (garbage in a
    cycle, or kept as a learner's own list); and what the learner holds (parameters, inputs)."""
    random.seed(3)
    model = MLP(2, [3, 1])
    xs = [[MG(0.5), MG(-1.0)], [MG(1.5), MG(0.25)]]
    losses = [(1 + -y * model(x)).relu() for x, y in zip(xs, [1.0, -1.0], strict=True)]
    total = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in model.parameters())
    del losses
    held: list = []
    topo: list = []
    visited: set = set()

    def build_topo(v: MG) -> None:
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build_topo(child)
            topo.append(v)

    if keep_topo:  # the learner's own `topo`, the lecture's build_topo, kept in a variable
        build_topo(total)
        held += [topo, visited]
    total.backward()  # its own topo and visited: garbage until a full collection
    return total, [*model.parameters(), *(x for row in xs for x in row)], held


@pytest.mark.parametrize("keep_topo", [False, True])
def test_backward_s_own_topo_list_holds_no_leaf_and_needs_no_collection(
    monkeypatch: pytest.MonkeyPatch, keep_topo: bool
) -> None:
    """A list and a set of every node of the graph (backward()'s `topo` and `visited`, garbage
    until a full collection, or the learner's own) name none of them: the numbers micrograd
    wrapped are constants, found without a collection of the heap (0.3 s in a kernel holding
    micrograd's demo), and the parameters and inputs the learner holds are sliders."""
    import gc

    collected = []
    gc.disable()
    try:
        total, learner_s, _held = moons_like_loss(keep_topo)
        monkeypatch.setattr(gc, "collect", lambda *args: collected.append(args) or 0)
        program = program_of(total)
    finally:
        gc.enable()
    assert collected == []
    sliders = {id(v) for v, const in zip(program.objects, program.consts, strict=True)
               if not const and not v._prev} - {id(total)}  # fmt: skip
    assert sliders == {id(v) for v in learner_s}
    wrapped = sum(program.consts)
    gc.collect()  # the same graph, its garbage gone: the same constants
    del _held
    assert sum(program_of(total).consts) == wrapped > 0


def test_garbage_that_holds_part_of_the_graph_is_collected_first() -> None:
    """backward() of a part of the graph (`inner`), then the graph grown on: its garbage holds
    some ops, not all, so the reader collects before counting, and the 3.0 micrograd wrapped
    inside `inner` is a constant all the same."""
    import gc

    gc.disable()
    try:
        a, b = MG(2.0), MG(-1.0)
        inner = a * 3.0
        inner.backward()
        root = (inner + b) * inner
        root.backward()
        program = program_of(root)
    finally:
        gc.enable()
    assert sorted(program.values.values()) == [-1.0, 2.0] and sum(program.consts) == 1


def test_a_cell_two_closures_share_counts_once() -> None:
    """A learner's op may make two Values in one call whose `_backward` closures share one cell
    (`other`): the cell holds its Value once, so a list that also holds it still makes it a
    leaf held by someone (counted twice, the list's reference looked like the graph's)."""
    from chainrule.engine.value_reader import _graph, wrapped_numbers

    a, other = MG(2.0), MG(3.0)
    total = MG(a.data + other.data, (a, other), "+")
    product = MG(a.data * other.data, (a, other), "*")

    def total_backward() -> None:
        a.grad += total.grad
        other.grad += total.grad

    def product_backward() -> None:
        a.grad += other.data * product.grad
        other.grad += a.data * product.grad

    total._backward, product._backward = total_backward, product_backward
    root = total + product
    keep = [other]  # the list holds it, and the one cell, and the graph's two sets
    nodes, objects = _graph(root)
    wrapped = wrapped_numbers(objects, nodes)  # (pytest's rewritten assert would hold keep[0])
    assert id(keep[0]) not in wrapped


def test_a_notebooks_variables_name_the_parameters_by_where_they_live():
    """places_in is the sandbox's naming, for any namespace (a notebook's user namespace): the
    MLP's parameters by their place, a loop's variable naming nothing."""
    random.seed(2)
    namespace = {"model": MLP(2, [2, 1])}
    namespace["loss"] = (namespace["model"]([1.0, -2.0]) - 1.0) ** 2
    namespace["p"] = namespace["model"].parameters()[0]  # `for p in model.parameters()`
    places = places_in(namespace, exclude={"p"})
    program = program_of(namespace["loss"], names=places)
    leaves = program.leaves
    # In the order of their places, layer by layer (not as the loss first reached them).
    assert leaves == [f"model_layers{layer}_neurons{k}_{p}" for layer, k in ((0, 0), (0, 1), (1, 0))
                      for p in ("b", "w0", "w1")]  # fmt: skip
    labels = engine.trace(program.source).nodes
    assert {n.label for n in labels if n.kind == "leaf"} >= {"model.layers[0].neurons[0].w[0]"}


def test_a_big_variable_before_the_model_leaves_its_parameters_named():
    """Each variable has its own share of the objects looked at: a kernel that kept a reply
    (`trace = chainrule.trace_value(loss)`, 200,000 objects and more) before the model still
    names the model's parameters, in `show` and `save_html` as in `trace_value` (the share was
    the whole namespace's, and the reply used it up: every leaf `v1`, `v2`, …)."""
    random.seed(2)
    reply = {"nodes": [{"id": f"n{i}", "inputs": [i, i + 1]} for i in range(120_000)]}
    namespace = {"trace": reply, "model": MLP(2, [2, 1])}
    namespace["loss"] = (namespace["model"]([1.0, -2.0]) - 1.0) ** 2
    places = places_in(namespace)
    assert places[id(namespace["model"].layers[1].neurons[0].w[1])] == (
        "model.layers[1].neurons[0].w[1]"
    )
    assert len(places) == 10  # nine parameters and the loss


def test_a_variable_with_no_value_in_its_first_objects_is_looked_into_no_further():
    """A variable gets the whole share (MAX_PLACES) once a Value is found under it, and only
    MAX_PLACES_BEFORE_A_VALUE objects until then: a kept reply's 200,000 dicts were looked at on
    every `show()` (1.2-2.3 s of micrograd's demo's). A list of Values (a `topo` kept) is named
    past that first share; a Value behind as many objects holding none is left unnamed."""
    from chainrule.engine.value_reader import MAX_PLACES_BEFORE_A_VALUE

    first = MAX_PLACES_BEFORE_A_VALUE
    late, early = MG(1.0), MG(2.0)
    records = [{"x": [0.5, 1.5], "label": None} for _ in range(first)] + [{"v": late}]
    topo = [MG(float(i)) for i in range(first + 5_000)]
    head = [{"x": [0.5]}, {"v": early}]
    places = places_in({"records": records, "topo": topo, "head": head})
    assert id(late) not in places
    assert places[id(early)] == "head[1]['v']"
    assert places[id(topo[-1])] == f"topo[{first + 4_999}]"
    assert len(places) == 1 + len(topo)


def test_a_namespace_whose_objects_raise_or_run_long_still_names_the_model():
    """The walk of a learner's namespace meets what it cannot read: a list whose iteration
    raises part way, an object whose `__class__` raises, a list of millions of numbers. Each
    names what it can (a Value before the raise; none past the first MAX_PLACES items of one
    list) and the model under its own variable is named whatever the others do."""
    from chainrule.engine.value_reader import MAX_PLACES

    class Breaking(list):
        def __iter__(self):
            yield self[0]
            raise RuntimeError("a container that cannot be read through")

    class Hostile:
        @property
        def __class__(self):
            raise RuntimeError("no class to tell")

    random.seed(2)
    model = MLP(2, [2, 1])
    first, hidden = MG(1.0), MG(2.0)
    numbers = [0.5] * (MAX_PLACES + 10) + [hidden]
    namespace = {"broken": Breaking([first, MG(3.0)]), "odd": [Hostile()], "numbers": numbers,
                 "model": model}  # fmt: skip
    places = places_in(namespace)
    assert places[id(first)] == "broken[0]"
    assert id(hidden) not in places
    assert places[id(model.layers[1].neurons[0].w[1])] == "model.layers[1].neurons[0].w[1]"
    assert len(places) == 1 + len(model.parameters())


def test_the_mlp_is_written_one_neuron_a_statement_each_named_where_it_lives():
    """Issue 38: the lecture's `MLP(3, [4, 4, 1])` on its four examples (micrograd's nn). Each
    neuron's `w·x + b` and its activation is one statement, named by where its parameters live
    (`n.layers[0].neurons[1]`, `…₂` for the next example), so the page draws one group a neuron,
    as the real-size view groups statements; the last layer's is `ypred[k]`, the list that holds
    it. No generated `t1`, and the same program on two runs."""
    random.seed(1)
    n = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    ypred = [n(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred, strict=True))
    loss.backward()
    reply = chainrule.trace_value(loss)
    assert reply["program"] == chainrule.trace_value(loss)["program"]
    assert not any(
        line.split(" = ")[0][:1] == "t" and line.split(" = ")[0][1:].isdigit()
        for line in reply["program"]["source"].splitlines()
    )
    assert "\nn_layers0_neurons1_2 = (" in reply["program"]["source"]
    # The parameters come first, in the order of their places (the sliders, the tables and the
    # scripts list them layer by layer, neuron by neuron), not as the loss first reached them.
    places = [
        f"n_layers{layer}_neurons{k}_{p}"
        for layer, (nin, nout) in enumerate(((3, 4), (4, 4), (4, 1)))
        for k in range(nout)
        for p in ["b", *(f"w{i}" for i in range(nin))]
    ]
    assert reply["program"]["leaves"] == places
    lines = reply["program"]["source"].split("\n")
    assert [line.split(" = ")[0] for line in lines[: len(places)]] == places
    assert "n_layers0_neurons1_2.label = 'n.layers[0].neurons[1]₂'" in reply["program"]["source"]
    groups = [group for group in reply["groups"] if group["kind"] == "statement"]
    names = [group["name"] for group in groups]
    neurons = [f"n.layers[{layer}].neurons[{k}]" for layer in (0, 1) for k in range(4)]
    for neuron in neurons:
        assert [name for name in names if name.startswith(neuron)] == [
            neuron,
            f"{neuron}₂",
            f"{neuron}₃",
            f"{neuron}₄",
        ]
    assert sorted(set(names) - {f"{x}{s}" for x in neurons for s in ("", "₂", "₃", "₄")}) == [
        "loss", "ypred[0]", "ypred[1]", "ypred[2]", "ypred[3]"
    ]  # fmt: skip
    # A parameter feeds its own neuron's statements only.
    label = {node["id"]: node["label"] for node in reply["nodes"] if node["kind"] == "leaf"}
    group_of = {node: group["name"] for group in groups for node in group["nodes"]}
    for edge in reply["edges"]:
        place = label.get(edge["source"], "")
        if place.startswith("n.layers[") and place.endswith(("]", ".b")) and "].neurons[" in place:
            owner = place.rsplit(".", 1)[0] if place.endswith(".b") else place.rsplit(".w", 1)[0]
            target = group_of[edge["target"]]
            last_layer = owner.startswith("n.layers[2]") and target.startswith("ypred[")
            assert target.startswith(owner) or last_layer, (place, target)


def test_inputs_the_code_made_values_are_leaves_once_named_where_they_live():
    """An input the learner made a Value (`xs = [[Value(2.0), …]]`) is held by their list: one
    leaf each, named by its place (`xs[0][1]`), used by every neuron of the first layer, and
    the neurons are still named by their parameters (docs/python.md: plain numbers stay
    constants)."""
    random.seed(1)
    n = MLP(3, [4, 1])
    xs = [[MG(2.0), MG(3.0), MG(-1.0)], [MG(3.0), MG(-1.0), MG(0.5)]]
    ypred = [n(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip([1.0, -1.0], ypred, strict=True))
    loss.backward()
    reply = chainrule.trace_value(loss)
    inputs = [node for node in reply["nodes"] if node["label"].startswith("xs[")]
    assert sorted(node["label"] for node in inputs) == sorted(
        f"xs[{i}][{j}]" for i in range(2) for j in range(3)
    )
    assert all(node["kind"] == "leaf" for node in inputs)
    uses = [edge["source"] for edge in reply["edges"]]
    assert all(uses.count(node["id"]) == 4 for node in inputs)  # the four neurons of layer 0
    names = {group["name"] for group in reply["groups"] if group["kind"] == "statement"}
    assert {"n.layers[0].neurons[3]", "n.layers[0].neurons[3]₂"} <= names


def test_the_reader_s_warnings_are_said_in_the_reply_s_language():
    """The reader's three warnings are catalogue sentences, said in `lang` as the trace's own
    warnings are (engine/i18n.py): a merged operand, an op no row explains, leaves that moved."""
    a = MG(3.0)
    square = a * a
    b = MG(2.0)
    odd = b * 3.0
    odd._op, odd.data = "cosh", 7.0  # no row gives 7 from 2 and 3
    w = MG(0.5)
    loss = w * a
    loss.backward()
    w.data = 0.25  # a training step after the forward pass
    # Called here, not in a loop: the caller's variables name the nodes (a loop's would too).
    said = {
        ("square", "ru"): chainrule.trace_value(square, lang="ru")["warnings"][0]["message"],
        ("square", "et"): chainrule.trace_value(square, lang="et")["warnings"][0]["message"],
        ("odd", "ru"): chainrule.trace_value(odd, lang="ru")["warnings"][0]["message"],
        ("odd", "et"): chainrule.trace_value(odd, lang="et")["warnings"][0]["message"],
        ("loss", "ru"): chainrule.trace_value(loss, lang="ru")["warnings"][0]["message"],
        ("loss", "et"): chainrule.trace_value(loss, lang="et")["warnings"][0]["message"],
    }
    assert said[("square", "ru")] == (
        "micrograd хранит входы square во множестве (set), поэтому draw_dot рисует одно ребро "
        "из a; square = a * a использует его дважды, и в правильном графе два ребра (по обоим "
        "идёт градиент)"
    )
    assert said[("square", "et")] == (
        "micrograd hoiab sõlme square sisendeid hulgas (set), seega joonistab draw_dot ühe serva "
        "sõlmest a; square = a * a kasutab seda kaks korda ning õiges graafis on kaks serva "
        "(mõlemat mööda liigub gradient)"
    )
    assert said[("odd", "ru")] == (
        "odd создан операцией 'cosh', и ни одна операция, которую знает chainrule "
        f"({KNOWN_OPS}, '**' с числом), не даёт его значение 7.0 из его входов "
        "(b, 3.0): он нарисован как неизвестная операция (unknown_cosh) со своими входами и с "
        "этим значением, а его локальные производные (3.0, 2.0) — те, что ваш _backward даёт "
        "при этих числах (ползунок двигает его по этой касательной, а не по вашей операции). "
        "Запишите операцию одним из этих имён, чтобы chainrule её вычислял."
    )
    assert said[("odd", "et")] == (
        "odd tehti tehtega 'cosh' ja ükski tehe, mida chainrule tunneb "
        f"({KNOWN_OPS}, '**' arvuga), ei anna selle väärtust 7.0 selle sisenditest (b, "
        "3.0): see on joonistatud tundmatu tehtena (unknown_cosh) koos oma sisenditega ja selle "
        "väärtusega, selle lokaalsed tuletised (3.0, 2.0) on need, mida sinu _backward nende "
        "arvude juures annab (liugur liigutab seda mööda seda puutujat, mitte mööda sinu "
        "tehet). Kirjuta tehe ühe nende nimega, et chainrule seda arvutaks."
    )
    assert said[("loss", "ru")] == (
        "Значения, хранящиеся в узлах (их 1), не следуют из их входов (первый — loss: хранится "
        "1.5, входы дают 0.75). Листья изменились после прямого прохода (шаг обучения обновил "
        "p.data?) — листья под ними: w, a. Граф нарисован при текущих значениях листьев; "
        "выполните прямой проход ещё раз (пересчитайте loss), чтобы нарисовать тот loss, "
        "который вы напечатали."
    )
    assert said[("loss", "et")] == (
        "Sõlmedes (neid on 1) hoitud väärtused ei tulene nende sisenditest (esimene loss: "
        "hoitud 1.5, sisendid annavad 0.75). Lehed muutusid pärast päripassi (treeningsamm "
        "uuendas p.data?) — lehed nende all: w, a. Graaf on joonistatud lehtede praeguste "
        "väärtuste juures; käivita päripass uuesti (arvuta loss uuesti), et joonistada see "
        "loss, mille sa välja trükkisid."
    )
    # The Program keeps the sentence itself (its key and parameters); English is its text.
    (merged,) = program_of(square).warnings()
    assert merged["message"].key == "warning.reader.merged_operand"
    assert merged["message"].startswith("micrograd keeps the children of out in a set")


# ---- The statements written beside the program (the builder reads them instead of a parse) ----


@pytest.mark.parametrize("name", GRAPHS)
def test_the_statements_written_beside_a_program_are_the_parser_s_own(name):
    root, named = GRAPHS[name]()
    root.backward()
    program = program_of(root, names=places_in(named), statements=True)
    assert program.parsed is not None
    assert statements_difference(program.source, program.parsed) is None
    assert program_of(root).parsed is None  # asked for: a reader that only writes makes none
    assert program.written().parsed is None  # a widget keeps no statements


def test_micrograd_s_demo_s_statements_are_the_parser_s_own():
    # micrograd's demo.ipynb (github.com/karpathy/micrograd), its model on 4 moons: every
    # neuron a statement, its places the labels, the loss's terms each a line.
    from chainrule.sandbox.moons import demo_total_loss

    model, total_loss = demo_total_loss(4)
    program = program_of(total_loss, names=places_in({"model": model}), statements=True)
    assert program.parsed is not None
    assert len(program.parsed[0]) == program.source.count("\n")
    assert statements_difference(program.source, program.parsed) is None


def test_what_the_parser_reads_otherwise_is_parsed_from_the_text():
    # A sign before a number the parser folds into the number (`-2.0`): ours can negate a
    # constant; and an opaque node's function. Both are traced from the text, as before.
    negated = engine.trace("a = 3\nb = a * -(2.0)").root
    program = program_of(negated, statements=True)
    assert "-2.0" in program.source
    assert program.parsed is None
    assert engine.trace(program.source).root.data == -6.0
    odd = _with_op(labelled(1.0, "a") + labelled(2.0, "b"), "cosh")
    odd.data = 10.0  # no row of the table gives 10 from 1 and 2: `unknown_cosh(a, b)`
    program = program_of(odd * labelled(3.0, "d"), statements=True)
    assert "unknown_cosh(p1, p2) = " in program.source
    assert program.parsed is None
    assert chainrule.trace_value(odd * labelled(3.0, "d"))["nodes"][-1]["data"] == 30.0


def test_a_statement_nested_deeper_than_the_reader_reads_back_is_parsed():
    # A sum of 280 two-letter leaves is one statement (1,400 characters) whose `+`s nest 279
    # deep, past READ_BACK_DEPTH: its text is parsed, with the same result.
    letters = "abcdefghijklmnopqrstuvwxyz"
    names = [a + b for a in letters for b in letters if a != b][:280]
    leaves = [labelled(float(k), name) for k, name in enumerate(names)]
    total = leaves[0]
    for leaf in leaves[1:]:
        total = total + leaf
    program = program_of(total, statements=True)
    assert program.source.count("\n") == 281  # the leaves and one sum
    assert program.parsed is None
    assert chainrule.trace_value(total)["nodes"][-1]["data"] == total.data == sum(range(280))


def test_a_negative_zero_raised_to_a_power_is_bracketed_as_any_sign():
    # `-0.0 ** 2.0` is -(0.0 ** 2.0): the sign binds looser than `**` (Python's rule and ours),
    # so a constant's sign is bracketed by its text, not by `data >= 0`.
    root = engine.trace("a = 3\nb = a + (-0.0) ** 2 + (-2.0) ** 2").root
    program = program_of(root, statements=True)
    assert program.source.endswith("b = a + (-0.0) ** 2.0 + (-2.0) ** 2.0\n")
    assert statements_difference(program.source, program.parsed) is None
    rebuilt = engine.trace(program.source)
    assert [node.op for node in rebuilt.nodes] == [node.op for node in engine.trace(
        "a = 3\nb = a + (-0.0) ** 2 + (-2.0) ** 2").nodes]  # fmt: skip


def test_labels_that_name_a_tensor_maker_or_a_matmul_are_text():
    # A matrix lesson's scalar graph labels its nodes as the maths writes them: the label is a
    # string in the program written for it, not a tensor program (which refused `a.label`).
    a = labelled(2.0, "randn(2, 3)")
    b = a * a
    b.label = "W @ x"
    reply = chainrule.trace_value(b)
    assert (
        reply["program"]["source"]
        == "a = 2.0; a.label = 'randn(2, 3)'\nb = a * a; b.label = 'W @ x'\n"
    )
    assert [node["label"] for node in reply["nodes"]] == ["randn(2, 3)", "W @ x"]
    assert reply["nodes"][0]["grad"] == 4.0


def test_a_nesting_limit_below_the_written_depth_is_the_parser_s_error(monkeypatch):
    # Written statements are taken only under a nesting limit they keep; below it the text is
    # parsed, and the parser says where it passes the limit, as for any program.
    from chainrule.app.settings import get_settings

    x = LectureValue(0.5, label="x")
    deep = x
    for _ in range(6):
        deep = deep.tanh() * x  # tanh(…) inside tanh(…): a call a level
    program = program_of(deep, statements=True)
    nested = "tanh(tanh(tanh(tanh(tanh(tanh(x) * x) * x) * x) * x) * x) * x"
    assert program.source.endswith(f"out = {nested}\n")
    assert program.parsed is not None and program.parsed[1] == 6
    del program  # (its list of the graph's Values would name every node: `program.objects[3]`)
    monkeypatch.setenv("CHAINRULE_MAX_DEPTH", "5")
    get_settings.cache_clear()
    try:
        with pytest.raises(engine.LimitExceeded) as raised:
            chainrule.trace_value(deep)
        assert "nest" in str(raised.value)
        monkeypatch.setenv("CHAINRULE_MAX_DEPTH", "6")
        get_settings.cache_clear()
        root = chainrule.trace_value(deep)["nodes"][-1]  # (the lecture's tanh is made of exp)
        assert root["data"] == pytest.approx(deep.data, rel=1e-12)
    finally:
        get_settings.cache_clear()


# Any number a leaf or a wrapped constant holds: signs, zeros of both signs, tiny and huge.
NUMBERS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 1e-05, -2e-07, 1e16, 0.1, 7.0])
# Labels with what a program's text must quote or read around: quotes, `;`, `#`, `=`, brackets.
LABELS = st.text(alphabet="ab_ .;#=()'\"[]0₂*+-", max_size=8)


# The micrograd lecture's own `class Value` (tests/lecture_cells.py: nn-zero-to-hero, second
# half, cell 7): tanh and exp, its `**` spelled `**2`, no relu, no `c - a`.
LECTURE_SCOPE: dict = {}
exec("import math\n" + lecture_cells.VALUE_CLASS, LECTURE_SCOPE)
LectureValue = LECTURE_SCOPE["Value"]


@st.composite
def micrograd_graphs(draw) -> tuple[MG, list[MG]]:
    """A graph of micrograd's Values or the lecture's, of a few leaves (some labelled) and up to
    30 operations on them and on numbers the class wraps, operands reused at will; finite at
    every node. With the leaves a variable holds (the rest are numbers the class wrapped)."""
    value_class = draw(st.sampled_from([MG, LectureValue]))
    leaves = draw(st.integers(1, 4))
    pool = [value_class(draw(NUMBERS)) for _ in range(leaves)]
    for value in pool:
        if draw(st.booleans()):
            value.label = draw(LABELS)
    operations = [
        lambda a, b, c: a + b, lambda a, b, c: a * b, lambda a, b, c: a - b,
        lambda a, b, c: a / b, lambda a, b, c: a + c, lambda a, b, c: c * a,
        lambda a, b, c: c - a, lambda a, b, c: a / c, lambda a, b, c: -a,
        lambda a, b, c: a * a, lambda a, b, c: a ** 2, lambda a, b, c: a ** -1,
        lambda a, b, c: a ** 3, lambda a, b, c: a.relu(), lambda a, b, c: a.tanh(),
        lambda a, b, c: a.exp(), lambda a, b, c: type(a)(c) ** 2,
        lambda a, b, c: (a + b) * (b + c),
    ]  # fmt: skip
    for _ in range(draw(st.integers(1, 30))):
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        operation = draw(st.sampled_from(operations))
        try:
            value = operation(a, b, draw(NUMBERS))
        except (ZeroDivisionError, OverflowError, AttributeError, TypeError):
            continue  # a class without the method (the lecture's relu), or no finite number
        if not isinstance(value.data, float) or not math.isfinite(value.data):
            continue
        if draw(st.integers(0, 5)) == 0:
            value.label = draw(LABELS)
        pool.append(value)
    root = pool[-1]
    for value in pool[-4:-1]:  # the last few results, so that most operations are in the graph
        root = root + value
    return root, pool[:leaves]


@fuzz_settings
@given(micrograd_graphs(), st.booleans())
def test_any_micrograd_graph_s_written_statements_are_the_parser_s_own(graph, backward):
    root, held = graph
    if backward:
        root.backward()  # its `topo` left behind: garbage holding the whole graph
    # The numbers the operators wrapped are the leaves the pool did not hold: said here, not
    # counted by the reader (`wrapped_numbers`), whose collection in a whole run's heap would
    # be most of each draw's time.
    kept = {id(leaf) for leaf in held}
    constants = {id(v) for v in nodes_under(root) if not v._prev and id(v) not in kept}
    program = program_of(root, constants=constants, statements=True)
    assert program.parsed is not None  # micrograd's ops, written as the table spells them
    assert statements_difference(program.source, program.parsed) is None
    # Built from the statements, the numbers built from the text, to the last bit.
    with written_parse(program.source, program.parsed):
        written = engine.trace(program.source)
    parsed = engine.trace(program.source)
    assert [(node.data, node.grad) for node in written.nodes] == [
        (node.data, node.grad) for node in parsed.nodes
    ]
