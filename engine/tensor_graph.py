"""The scalar graph of a tensor program, compact, for the page's own passes (docs/api.md,
"The scalar graph of a tensor program"): flat lists of the nodes' op keys, inputs, exponents
and starting numbers, each tensor's elements as node ids, and what the numbers choose besides
the ops (softmax's shift, a `max`'s element). The page runs the op table's generated functions
over it in the engine's order of work (static/js/tensor/recompute.js), so a dragged cell
recomputes every tensor with no request, and the one-file HTML recomputes offline."""

from __future__ import annotations

from typing import Any

from .ops import OPS
from .reply import number
from .tensor_program import TensorTrace

LEAF = -1  # a node the program writes (its number in `numbers`): a leaf element
CONSTANT = -2  # a number no gradient reaches: a literal, `mean`'s n, softmax's shift (`maxima`)


def tensor_graph(trace: TensorTrace) -> dict[str, Any]:
    """Every scalar node of `trace` as flat lists, in build order (a topological order: every
    node after its inputs); each tensor's elements by node id, in the reply's node order."""
    keys = list(OPS)
    code = {key: i for i, key in enumerate(keys)}
    op: list[int] = []
    inputs: list[int] = []
    exponents: list[float] = []
    numbers: list[float | str] = []
    for node in trace.elements.nodes:
        if node.op is None:
            op.append(CONSTANT if node.kind == "const" else LEAF)
            numbers.append(number(node.data))
            continue
        op.append(code[node.op])
        inputs.extend([child.id for child in node.inputs])
        if node.op == "**k":
            exponents.append(number(node.exponent))
    elements: list[int] = []
    element_start = [0]
    for tensor in trace.tensors:
        elements.extend([v.id for v in tensor.elements or ()])
        element_start.append(len(elements))
    flat = trace.elements
    return {
        "kind": "tensor-graph",
        "source": trace.source,
        "ops": keys,
        "arity": [OPS[key].arity for key in keys],
        "op": op,
        "inputs": inputs,
        "exponents": exponents,
        "numbers": numbers,
        "elements": elements,
        "element_start": element_start,
        "maxima": _flattened(flat.maxima),
        "choices": _flattened(flat.choices),
        "root": (trace.root.elements or [])[0].id,
        "recomputable": not flat.numbers_shape_it,
    }


def _flattened(groups: dict[int, list[int]]) -> list[int]:
    """`{node: [members]}` as `[node, count, *members, node, count, …]`, by node id."""
    out: list[int] = []
    for node in sorted(groups):
        out.extend([node, len(groups[node]), *groups[node]])
    return out
