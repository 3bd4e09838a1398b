"""engine/tensor_graph.py: a tensor program's scalar graph, compact (docs/api.md, "The scalar
graph of a tensor program"). Read back by the rules docs/api.md gives (here in Python, with the
op table's own `apply` and the one backward pass's order), it gives every element's data and
grad of the engine's trace for other `values`, to the bit: the format carries everything the
page's passes need (static/js/tensor/recompute.js runs the same rules; tests/browser/
test_tensor_drag.py checks it against the server)."""

from __future__ import annotations

import math

import pytest

from chainrule.bench.tensors import makemore
from chainrule.engine.builder import Limits
from chainrule.engine.ops import OPS, apply
from chainrule.engine.tensor_graph import CONSTANT, LEAF, tensor_graph
from chainrule.engine.tensor_program import trace_tensors

MLP = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
W2 = randn(3, 3, seed=1)
h = tanh(X @ W + b)
m = h.max(1).values
loss = cross_entropy(h @ W2, tensor([2, 0, 1])) + (m * m).mean() + (h ** 2).sum() / 7
"""


def groups(flat: list[int]) -> dict[int, list[int]]:
    out, k = {}, 0
    while k < len(flat):
        out[flat[k]] = flat[k + 2 : k + 2 + flat[k + 1]]
        k += 2 + flat[k + 1]
    return out


def first_largest(data: list[float], members: list[int]) -> int:
    best = members[0]
    for node in members[1:]:
        if data[node] > data[best]:
            best = node
    return best


def run(graph: dict, leaf_values: dict[int, float]) -> tuple[list[float], list[float]]:
    """The graph's forward and backward passes as docs/api.md says them."""
    keys, arity = graph["ops"], graph["arity"]
    maxima, choices = groups(graph["maxima"]), groups(graph["choices"])
    count = len(graph["op"])
    data, local = [0.0] * count, [()] * count
    inputs: list[list[int]] = [[] for _ in range(count)]
    edge = exponent = number = 0
    for i, code in enumerate(graph["op"]):
        if code in (LEAF, CONSTANT):
            data[i] = leaf_values.get(i, float(graph["numbers"][number]))
            number += 1
            if i in maxima:
                data[i] = data[first_largest(data, maxima[i])]
            continue
        inputs[i] = graph["inputs"][edge : edge + arity[code]]
        edge += arity[code]
        if i in choices:
            inputs[i] = [first_largest(data, choices[i])]
        k = 0.0
        if keys[code] == "**k":
            k = float(graph["exponents"][exponent])
            exponent += 1
        out, local[i], _ = apply(keys[code], [data[c] for c in inputs[i]], k)
        data[i] = out
    reached = [False] * count
    reached[graph["root"]] = True
    for i in range(graph["root"], -1, -1):
        if reached[i]:
            for c in inputs[i]:
                reached[c] = True
    grad = [0.0] * count
    grad[graph["root"]] = 1.0
    for i in range(graph["root"], -1, -1):
        if reached[i]:
            for c, d in zip(inputs[i], local[i], strict=True):
                grad[c] += d * grad[i]
    return data, grad


def same(x: float, y: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1, x) == math.copysign(1, y)


@pytest.mark.parametrize(
    ("source", "values"),
    [
        (MLP, {"W[1,2]": 0.25}),
        (MLP, {"W[1,2]": 5.0, "W2[0,1]": -4.0, "b[0]": 2.0}),  # other maxima, another max
        (makemore(2), {"C[2,3]": -2.0, "C[0,0]": 1.5}),
    ],
)
def test_the_graph_read_back_gives_the_engine_s_numbers_for_other_values(source, values):
    limits = Limits(100_000, 20_000, 200)
    graph = tensor_graph(trace_tensors(source, limits=limits))
    expected = trace_tensors(source, values, limits=limits)
    named = {t.name: t for t in expected.leaves}
    leaf_values = {}
    for key, value in values.items():
        name, index = key[:-1].split("[")
        tensor = named[name]
        flat = 0
        for i, size in zip(map(int, index.split(",")), tensor.shape, strict=True):
            flat = flat * size + i
        leaf_values[(tensor.elements or [])[flat].id] = value
    data, grad = run(graph, leaf_values)
    assert len(graph["op"]) == len(expected.elements.nodes)
    for t, tensor in enumerate(expected.tensors):
        ids = graph["elements"][graph["element_start"][t] : graph["element_start"][t + 1]]
        assert ids == [v.id for v in tensor.elements or ()]
        for node_id, v in zip(ids, tensor.elements or (), strict=True):
            assert same(data[node_id], v.data), (tensor.label, node_id)
            assert same(grad[node_id], v.grad), (tensor.label, node_id)


def test_the_graph_says_what_the_numbers_choose_and_when_they_shape_it():
    graph = tensor_graph(trace_tensors(MLP))
    assert graph["ops"] == list(OPS)
    assert len(groups(graph["maxima"])) == 3  # cross_entropy's shift, a row each
    assert [len(m) for m in groups(graph["choices"]).values()] == [3, 3, 3]  # h.max(1)
    assert graph["recomputable"] is True
    shaped = "X = randn(3, 4, seed=1)\nY = X[arange(3), X.max(1).indices]\nL = Y.sum()"
    assert tensor_graph(trace_tensors(shaped))["recomputable"] is False
