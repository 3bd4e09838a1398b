"""The reply of `POST /api/graph` for a tensor program (docs/api.md, "Tensor programs"): a
serializer of a TensorTrace. A node per tensor with its elements' numbers nested row-major, the
tensor-level timeline (a forward step per op, the seed, a backward step per op with what it
passed back to each input and the rule that made it), and an element's fan-in (`fan_in`): the
exact terms of the one backward pass that sum to its gradient."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .errors import BadLeaf, LimitExceeded, quoted
from .i18n import DEFAULT_LANG, Count, msg, render
from .narration import fmt
from .ops import MINUS, public_op, row_of
from .reply import number
from .tensor_program import TensorTrace
from .tensors import LABEL_MAX, ShapeError, Tensor, nested, short, shown
from .value import Value


def tensor_reply(trace: TensorTrace, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """The body of `POST /api/graph` for a tensor program (docs/api.md, "Tensor programs")."""
    tensors, nodes = trace.tensors, trace.elements.nodes
    contributions = {
        t.id: _contributions(t, nodes) for t in tensors if t.kind == "op" and t.elements
    }
    _label(trace)
    reply_nodes = [_tensor_node(t, trace) for t in tensors]
    steps: list[dict[str, Any]] = [
        {"phase": "forward", "node": f"t{t.id}", "grads": None} for t in tensors if t.op is not None
    ]
    steps.append({"phase": "seed", "node": f"t{trace.root.id}", "grads": None})
    for tensor in reversed(tensors):
        if tensor.id not in contributions or not _reached(tensor, trace.reached):
            continue
        grads = []
        for position, flat in contributions[tensor.id].items():
            source = tensor.inputs[position]
            grads.append(
                {
                    "input": f"t{source.id}",
                    "grad": nested([number(x) for x in flat], source.shape),
                    "rule": _rule(tensor, position),
                }
            )
        steps.append({"phase": "backward", "node": f"t{tensor.id}", "grads": grads})
    return {
        "kind": "tensor",
        "nodes": reply_nodes,
        "root": f"t{trace.root.id}",
        "leaves": [
            {"name": t.name, "id": f"t{t.id}", "shape": list(t.shape)} for t in trace.leaves
        ],
        "steps": steps,
        "size": {"tensors": len(tensors), "elements": trace.elements.element_count,
                 "nodes": len(nodes)},
        "warnings": [
            {**w, "message": render(w["message"], lang)} for w in trace.warnings
        ],
        "source": trace.source,
    }  # fmt: skip


def _label(trace: TensorTrace) -> None:
    """Give every tensor without a label its text (its name is its label already)."""
    for tensor in trace.tensors:
        tensor.label = tensor.label or short(_unwrapped(trace.source[tensor.start : tensor.end]))


def _unwrapped(text: str) -> str:
    """`text` without brackets around the whole of it (`(cat * cat)` is `cat * cat`)."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += (ch == "(") - (ch == ")")
            if depth == 0 and i < len(text) - 1:
                return text  # `(a) * (b)`: the first bracket closes early
        text = text[1:-1].strip()
    return text


def _reached(tensor: Tensor, reached: bytearray) -> bool:
    first, end = tensor.nodes
    return any(reached[first:end])


def _tensor_node(tensor: Tensor, trace: TensorTrace) -> dict[str, Any]:
    elements = tensor.elements
    if elements is not None:
        data = nested([number(v.data) for v in elements], tensor.shape)
        grad = nested([number(v.grad) for v in elements], tensor.shape)
        warned: dict[str, int] = {}
        for v in elements:
            if v.warning:
                warned[v.warning] = warned.get(v.warning, 0) + 1
    else:
        data, grad, warned = nested(tensor.ints or [], tensor.shape), None, {}
    return {
        "id": f"t{tensor.id}",
        "name": tensor.name,
        "label": tensor.label or short(trace.source[tensor.start : tensor.end]),
        "op": tensor.op,
        "kind": tensor.kind,
        "dtype": "int" if tensor.is_int else "float",
        "shape": list(tensor.shape),
        "data": data,
        "grad": grad,
        "span": [tensor.start, tensor.end],
        "inputs": [f"t{t.id}" for t in tensor.inputs],
        "args": {k: v for k, v in tensor.args.items() if k != "argmax"}
        | ({"argmax": tensor.args["argmax"]} if "argmax" in tensor.args else {}),
        "rules": [
            {"input": f"t{tensor.inputs[i].id}", "rule": _rule(tensor, i)}
            for i in sorted(tensor.rules)
        ],
        "elements": [tensor.nodes[0], tensor.nodes[1]],
        "warnings": [{"type": kind, "count": count} for kind, count in sorted(warned.items())],
    }


def _contributions(tensor: Tensor, nodes: list[Value]) -> dict[int, list[float]]:
    """What `tensor`'s op passed back to each of its float inputs: per input (by position, an
    input written twice once), per element, the sum of `local × upstream` over the edges from
    that element into the nodes the op built (`nodes[first:end]`: an input's elements were
    built before them)."""
    first, end = tensor.nodes
    where: dict[int, tuple[int, int]] = {}
    sums: dict[int, list[float]] = {}
    for position, source in enumerate(tensor.inputs):
        if source.elements is None or any(source is t for t in tensor.inputs[:position]):
            continue
        sums[position] = [0.0] * len(source.elements)
        for flat, element in enumerate(source.elements):
            where[element.id] = (position, flat)
    for node in nodes[first:end]:
        upstream = node.grad
        for child, local in zip(node.inputs, node.local_grads, strict=True):
            if child.id < first:
                found = where.get(child.id)
                if found is not None:
                    sums[found[0]][found[1]] += local * upstream
    return sums


def _rule(tensor: Tensor, position: int) -> str:
    """The rule of input `position`'s gradient with the tensors' names in it: `d{i}` a
    tensor's gradient (`dW`, `d(X @ W)`), `{i}` the tensor itself (`W`, `C[X]`, `(X @ W)`)."""
    text = tensor.rules.get(position, "")
    for key, source in [("out", tensor), *((str(i), t) for i, t in enumerate(tensor.inputs))]:
        text = text.replace(f"d{{{key}}}", "d" + _name_in_rule(source, gradient=True))
        text = text.replace(f"{{{key}}}", _name_in_rule(source, gradient=False))
    return text


_ATOMIC = re.compile(r"[A-Za-z_][\w.]*(?:\([^()]*\)|\[[^\[\]]*\])?")


def _name_in_rule(tensor: Tensor, gradient: bool) -> str:
    """A tensor as a rule names it: its name, else its text (in brackets where an operator in
    it would read wrongly, and always after the `d` of a gradient: `d(C[X])`), else its id when
    the text is long."""
    if tensor.name:
        return tensor.name
    if not tensor.label or len(tensor.label) >= LABEL_MAX:
        return f"t{tensor.id}"
    if not gradient and _ATOMIC.fullmatch(tensor.label):
        return tensor.label
    return f"({tensor.label})"


MAX_EXPANDED_NODES = 2_000  # what "Expand" draws of one tensor op's scalar graph


def expand_reply(
    trace: TensorTrace, tensor: str, lang: str = DEFAULT_LANG, graph: bool = False
) -> dict[str, Any]:
    """The body of `POST /api/expand`: the scalar graph one tensor op built, every node with
    its op, numbers, local derivatives and inputs (a node of the op, or an element of an input
    tensor: `{node, tensor, index}`), and for each output element its node. With `graph`, the
    same graph as `POST /api/graph`'s reply draws one (`expanded_graph`: its cards and edges,
    not yet placed). LimitExceeded past MAX_EXPANDED_NODES nodes (it says how many the op
    built); BadLeaf for a tensor no op made."""
    _label(trace)
    found = _tensor_named(trace, tensor)
    first, end = found.nodes
    if found.kind != "op" or end == first:
        raise BadLeaf(msg("error.tensor.expand_leaf", tensor=quoted(tensor)))
    if end - first > MAX_EXPANDED_NODES:
        raise LimitExceeded(
            msg(
                "error.tensor.expand_limit",
                tensor=quoted(found.name or found.label or tensor),
                count=Count(end - first),
                limit=Count(MAX_EXPANDED_NODES),
            )
        )
    where = {
        element.id: (source, flat)
        for source in found.inputs
        for flat, element in enumerate(source.elements or [])
    }
    outputs = {element.id: flat for flat, element in enumerate(found.elements or [])}
    nodes = []
    for node in trace.elements.nodes[first:end]:
        inputs = []
        for child in node.inputs:
            source, flat = where.get(child.id, (None, 0))
            inputs.append(
                {
                    "node": child.id,
                    "tensor": None if source is None else f"t{source.id}",
                    "index": None if source is None else _index(flat, source.shape),
                }
            )
        flat_out = outputs.get(node.id)
        nodes.append(
            {
                "id": node.id,
                "op": public_op(node.op),
                "exponent": node.exponent,
                "kind": node.kind,
                "data": number(node.data),
                "grad": number(node.grad),
                "local_grads": [number(x) for x in node.local_grads],
                "inputs": inputs,
                "output": None if flat_out is None else _index(flat_out, found.shape),
            }
        )
    drawn = expanded_graph(trace, found, lang) if graph else None
    return {
        "tensor": f"t{found.id}",
        "op": found.op,
        "limit": MAX_EXPANDED_NODES,
        "nodes": nodes,
        "graph": drawn,
    }


def expanded_graph(trace: TensorTrace, op: Tensor, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """The scalar graph `op` built as `POST /api/graph`'s reply draws a graph (docs/api.md,
    "Expand"): `nodes` (cards: the op's nodes, and the elements of its input tensors that they
    read as leaves, `X[0,1]`; its output elements named `(X @ W)[2,1]`, `h[0,1]`), in build
    order, and `edges`, one per input of each op node, with its local derivative. The numbers
    are the program's: every card's data and grad are its element's (a tensor card's cell).
    Not placed: the server lays it out as a scalar program's (app/api/tensor_routes.py)."""
    first, end = op.nodes
    inside = trace.elements.nodes[first:end]
    elements: dict[int, tuple[Tensor, int]] = {
        element.id: (source, flat)
        for source in op.inputs
        for flat, element in enumerate(source.elements or [])
    }
    for flat, element in enumerate(op.elements or []):
        elements[element.id] = (op, flat)
    read = {child.id: child for node in inside for child in node.inputs if child.id < first}
    cards: list[dict[str, Any]] = []
    texts: dict[int, str] = {}  # each card's text, and in `bracketed` how an operand writes it
    for node in [*(read[i] for i in sorted(read)), *inside]:
        element = elements.get(node.id)
        label = ""
        if element is not None:
            source, flat = element
            index = _index(flat, source.shape)
            label = _name_in_rule(source, gradient=False)
            label += f"[{','.join(map(str, index))}]" if index else ""
        elif node.kind == "const" or node.id < first:
            label = fmt(node.data)  # a constant as the page writes numbers (softmax's shift)
        text = label or short(_expression(node, texts))
        # An element's name is one operand; a negative number or a formula with blanks is not.
        compound = label.startswith(MINUS) if label else _spaced(text)
        texts[node.id] = f"({text})" if compound and node.inputs else text
        kind = "leaf" if node.id < first and node.kind != "const" else node.kind
        cards.append(
            {
                "id": f"n{node.id}",
                "label": label,
                "name": label if element is not None else "",
                "text": text,
                "op": None if node.id < first else public_op(node.op),
                "exponent": None if node.id < first else node.exponent,
                "kind": kind,
                "data": number(node.data),
                "grad": number(node.grad),
                "derived": False,
                "expansion": None,
                "span": [op.start, op.end],
                "inputs": [] if node.id < first else [f"n{child.id}" for child in node.inputs],
                "warnings": _warnings(node, text, lang),
                "element": None
                if element is None
                else {"tensor": f"t{element[0].id}", "index": _index(element[1], element[0].shape)},
            }
        )
    edges = [
        {"source": f"n{child.id}", "target": f"n{node.id}", "index": index,
         "local_grad": number(local)}
        for node in inside
        for index, (child, local) in enumerate(zip(node.inputs, node.local_grads, strict=True))
    ]  # fmt: skip
    return {
        "nodes": cards,
        "edges": [{"id": f"e{k}", **edge} for k, edge in enumerate(edges)],
    }


def _spaced(text: str) -> bool:
    """Whether `text` has a blank outside its brackets: `a·b + c` does, `exp(a + b)` does not."""
    depth = 0
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if ch == " " and depth == 0:
            return True
    return False


def _warnings(node: Value, text: str, lang: str) -> list[dict[str, str]]:
    """A card's warnings as `/api/graph`'s nodes carry them (the sentence in `lang`)."""
    if not node.warning:
        return []
    message = msg(f"warning.node.{node.warning}", formula=text, result=fmt(node.data))
    return [{"type": node.warning, "message": render(message, lang)}]


def _expression(node: Value, texts: dict[int, str]) -> str:
    """An unnamed node of an expansion as the page's formula writes it in its inputs' texts
    (`X[0,0]·W[0,1]`; `texts`: each input as an operand, in brackets where it is an expression
    of its own or a negative number)."""
    row = row_of(node)
    operands = [texts.get(child.id, f"n{child.id}") for child in node.inputs]
    if row.call:  # a call's own brackets suffice: `exp(a·b)`
        operands = [_unwrapped(text) for text in operands]
    exponent = "" if node.exponent is None else fmt(node.exponent)
    return row.formula.replace("{k}", exponent).format(*operands)


def fan_in_reply(trace: TensorTrace, tensor: str, index: Sequence[int]) -> dict[str, Any]:
    """The body of `POST /api/fan-in`: the fan-in of `tensor[index]` (`tensor` an id, `t3`,
    or a name), its terms and their sum, which is its `grad`. Raises BadLeaf for a tensor that
    is none of the program's or has no gradient, ShapeError for an index outside its shape."""
    found = _tensor_named(trace, tensor)
    if len(index) != len(found.shape) or not all(
        0 <= i < size for i, size in zip(index, found.shape, strict=False)
    ):
        raise ShapeError(
            msg("error.tensor.fan_in_index", index=str(list(index)), shape=shown(found.shape))
        )
    terms = fan_in(trace, found, index)
    total = 0.0
    for term in terms:
        total += term["contribution"]
    element = (found.elements or [])[_flat(index, found.shape)]
    return {
        "tensor": f"t{found.id}",
        "index": list(index),
        "grad": number(element.grad),
        "sum": number(total),
        "contributions": [
            {**term, **{k: number(term[k]) for k in ("upstream", "local", "contribution")}}
            for term in terms
        ],
    }


def _tensor_named(trace: TensorTrace, name: str) -> Tensor:
    """The tensor `name` names: an id (`t3`), else the last tensor assigned to that name."""
    tensors = trace.tensors
    if name.startswith("t") and name[1:].isdigit() and int(name[1:]) < len(tensors):
        found: Tensor | None = tensors[int(name[1:])]
    else:
        found = next((t for t in reversed(tensors) if t.name == name), None)
    if found is None:
        raise BadLeaf(msg("error.tensor.fan_in_unknown", tensor=quoted(name)))
    if found.elements is None:
        raise BadLeaf(msg("error.tensor.fan_in_integers", tensor=quoted(name)))
    return found


def fan_in(trace: TensorTrace, tensor: Tensor, index: Sequence[int]) -> list[dict[str, Any]]:
    """Where the gradient of `tensor[index]` comes from: one `{tensor, output, node, upstream,
    local, contribution}` per edge from the element into a node the result depends on
    (`tensor` the id of the op that built that node, `output` the index of that op's output
    element the node is part of, `node` its scalar id), in the order the backward pass adds
    them (the last node first), so that adding the contributions to 0 in this order gives the
    element's `grad` to the bit (`dW[1,2] = Σᵢ X[i,1]·dY[i,2]`)."""
    element = (tensor.elements or [])[_flat(index, tensor.shape)]
    owners = [t for t in trace.tensors if t.nodes[1] > t.nodes[0] and t.elements]
    outputs: dict[int, dict[int, int]] = {}
    found = []
    for node in reversed(trace.elements.nodes[element.id + 1 :]):
        if not trace.reached[node.id]:
            continue
        for child, local in zip(node.inputs, node.local_grads, strict=True):
            if child is element:
                owner = next(t for t in owners if t.nodes[0] <= node.id < t.nodes[1])
                if owner.id not in outputs:
                    outputs[owner.id] = _output_of(owner)
                flat = outputs[owner.id][node.id]
                found.append(
                    {
                        "tensor": f"t{owner.id}",
                        "output": _index(flat, owner.shape),
                        "node": node.id,
                        "upstream": node.grad,
                        "local": local,
                        "contribution": local * node.grad,
                    }
                )
    return found


def _flat(index: Sequence[int], shape: Sequence[int]) -> int:
    flat = 0
    for i, size in zip(index, shape, strict=True):
        flat = flat * size + i
    return flat


def _index(flat: int, shape: Sequence[int]) -> list[int]:
    """The row-major index of element `flat` of `shape`."""
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return index[::-1]


def _output_of(op: Tensor) -> dict[int, int]:
    """For each node `op` built, the output element (flat) it is part of: the first output
    element whose nodes, within the op, reach it (walked with an explicit stack)."""
    first, end = op.nodes
    owner: dict[int, int] = {}
    for flat, output in enumerate(op.elements or []):
        stack = [output]
        while stack:
            node = stack.pop()
            if first <= node.id < end and node.id not in owner:
                owner[node.id] = flat
                stack.extend(node.inputs)
    return owner
