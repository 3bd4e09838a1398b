"""The JSON-ready replies of a trace, written from the trace record (engine/tracing.py) and its
timeline (engine/steps.py) and nothing else: the numbers (`numbers_reply`, the body of
`POST /api/values`) and the whole trace (`trace_reply`, the body of `POST /api/graph`, with the
server's layout when given one as a `Placement`), which reads its numbers from the numbers
reply. Non-finite numbers are the strings "NaN", "Infinity" and "-Infinity"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import LimitExceeded
from .flags import grad_flags
from .functions import ops_used, script_body
from .gradcheck import GradCheck
from .i18n import Count, msg, render, warnings_in
from .ops import DERIVED, row_of
from .overview import overview_of
from .steps import Timeline

if TYPE_CHECKING:
    from .backward import BackwardRecord
    from .tracing import Trace

Box = tuple[float, float, float, float]  # x, y (the centre), width, height

# The byte budget of a whole reply (`POST /api/graph`, layout included, as sent before
# compression; docs/api.md "Reply size"): so much per node, and so much per character of the
# program, whose names a reply sends in a few fields of their nodes (label, name, text, the
# leaves, the groups) but never in every step (narration names nodes by index). A leaf's name
# is sent eight times with the source (its node's label, name and text, its group, the leaves'
# name and label, the gradient check): a program of one name of a million characters (a
# request's body holds one since a program is bounded by its tokens) answers 8,001,717 bytes.
REPLY_BYTES_PER_NODE = 1_500  # about 600 since steps are sent as columns (1,560-1,600 before)
REPLY_BYTES_PER_SOURCE_CHAR = 10


# Below this a reply is never refused: a few nodes of a program of many short definitions
# send each function's spellings (`functions`), more than its few characters' share.
REPLY_BYTES_FLOOR = 1_000_000


def reply_budget(nodes: int, source: str) -> int:
    """The byte budget of the reply of a graph of `nodes` nodes traced from `source`."""
    return REPLY_BYTES_PER_NODE * nodes + REPLY_BYTES_PER_SOURCE_CHAR * len(source)


def check_reply_size(size: int, nodes: int, source: str, expanded: bool = False) -> None:
    """Raise LimitExceeded (naming the budget and how to stay under it) when a reply of `size`
    bytes is over the budget of its graph: never hundreds of MB, whatever the program."""
    budget = reply_budget(nodes, source)
    if size > max(budget, REPLY_BYTES_FLOOR):
        key = "error.reply_too_large_expanded" if expanded else "error.reply_too_large"
        raise LimitExceeded(
            msg(
                key,
                size=Count(size),
                budget=Count(budget),
                per_node=Count(REPLY_BYTES_PER_NODE),
                per_char=REPLY_BYTES_PER_SOURCE_CHAR,
            )
        )


class Placement(NamedTuple):
    """Where the page draws the graph (the server's layout, app/layout/layouter.py): a box per
    node, and
    per group its labelled box (None for a group of one card) and its card when collapsed."""

    boxes: Sequence[Box]
    group_boxes: Sequence[Box | None]
    group_cards: Sequence[Box]


def number(x: float) -> float | str:
    """A JSON-ready number: non-finite values become "Infinity", "-Infinity" or "NaN"."""
    if x - x == 0:  # finite
        return x
    if x != x:
        return "NaN"
    return "Infinity" if x > 0 else "-Infinity"


def json_numbers(values: Sequence[float]) -> list[float | str]:
    """`values` JSON-ready, as a list."""
    if all(map(math.isfinite, values)):
        return list(values)
    return [number(x) for x in values]


def _same(left: list[float | str], right: list[float | str]) -> bool:
    """Whether two JSON-ready arrays are the same JSON (0.0 and -0.0 differ)."""
    if left != right:
        return False
    return all(
        type(x) is str or math.copysign(1.0, x) == math.copysign(1.0, y)  # type: ignore[arg-type]
        for x, y in zip(left, right, strict=True)
        if x == 0
    )


def numbers_reply(trace: Trace) -> dict[str, Any]:
    """Everything in the trace's reply that depends on the leaf values, as arrays in the
    reply's orders (docs/api.md, "The numbers reply")."""
    nodes, record, lang = trace.nodes, trace.record, trace.lang
    grad = json_numbers(trace.grads)
    correct_grad = None if trace.grads is trace.correct_grads else json_numbers(trace.correct_grads)
    if correct_grad is not None and _same(correct_grad, grad):
        correct_grad = None
    return {
        "data": json_numbers([node.data for node in nodes]),
        "grad": grad,
        "correct_grad": correct_grad,
        "local_grad": json_numbers([local for node in nodes for local in node.local_grads]),
        **backward_numbers(record, forward=trace.tangents is not None),
        "gradcheck": gradcheck_reply(trace.gradcheck),
        "warnings": warnings_in(trace.warnings, lang),
        "node_warnings": node_warnings_reply(trace),
        "grad_flags": {f"n{i}": flags for i, flags in grad_flags(trace).items()},
        **tangents_reply(trace),
    }


def backward_numbers(record: BackwardRecord, *, forward: bool) -> dict[str, list[Any]]:
    """The backward steps' numbers in the timeline's order: each step's grad and each of its
    contributions. Empty in forward mode: its timeline has no backward step."""
    if forward:
        return {"step_grad": [], "contribution": [], "grad_before": [], "grad_after": []}
    return {
        "step_grad": json_numbers(record.upstream),
        "contribution": json_numbers(record.contribution),
        "grad_before": json_numbers(record.grad_before),
        "grad_after": json_numbers(record.grad_after),
    }


def tangents_reply(trace: Trace) -> dict[str, Any]:
    """Forward mode's numbers (null in reverse mode): `tangent` per node (∂node/∂wrt) and
    `tangent_contribution` per edge (the input's tangent × the edge's local derivative)."""
    if trace.tangents is None:
        return {"tangent": None, "tangent_contribution": None}
    return {
        "tangent": json_numbers(trace.tangents.tangent),
        "tangent_contribution": json_numbers(trace.tangents.contribution),
    }


def node_warnings_reply(trace: Trace) -> dict[str, list[dict[str, str]]]:
    """Each warned node's warning, by node id, its message in the trace's language."""
    say = trace.narrator
    return {
        f"n{node.id}": [
            {"type": node.warning, "message": render(say.warning(node.warning, node), trace.lang)}
        ]
        for node in trace.nodes
        if node.warning
    }


def gradcheck_reply(check: GradCheck) -> dict[str, Any]:
    return {
        "eps_rule": check.eps_rule,
        "checked": check.checked,
        "total": check.total,
        "capped": check.capped,
        "results": [
            {
                "name": result.name,
                "id": f"n{result.id}",
                "analytic": number(result.analytic),
                "numeric": number(result.numeric),
                "status": result.status,
            }
            for result in check.results
        ],
    }


def graph_reply(trace: Trace, numbers: dict[str, Any]) -> dict[str, Any]:
    """The `nodes` and `edges` of the trace's reply (docs/api.md), their numbers from the
    numbers reply: what a drawing of the graph needs, without the timeline."""
    data, grad, local_grad = numbers["data"], numbers["grad"], numbers["local_grad"]
    correct_grad = numbers["correct_grad"] or grad
    tangent = numbers["tangent"] or [None] * len(data)
    node_warnings = numbers["node_warnings"]
    say = trace.narrator
    ids = node_ids(len(trace.nodes))
    group_of = [""] * len(trace.nodes)
    for index, group in enumerate(trace.graph.groups):
        name = f"g{index}"
        for member in group.nodes:
            group_of[member] = name
    nodes = []
    edges = []
    append_node, append_edge = nodes.append, edges.append
    text, get_warnings = say.text, node_warnings.get
    for node in trace.nodes:
        i = node.id
        nid = ids[i]
        inputs = []  # the node's input ids, and an edge from each (one loop for both)
        op = node.op
        if op is None:  # a leaf or a constant: no input, no op (the most common nodes)
            derived = False
        else:
            index = 0
            for child in node.inputs:
                edge = len(edges)
                source = ids[child.id]
                inputs.append(source)
                append_edge(
                    {
                        "id": f"e{edge}",
                        "source": source,
                        "target": nid,
                        "index": index,
                        "local_grad": local_grad[edge],
                    }
                )
                index += 1
            derived = op in DERIVED or node.function is not None
        append_node(
            {
                "id": nid,
                "label": node.label,
                "name": node.name,
                "text": text(node),
                "op": None if op is None else row_of(node).public,
                "exponent": number(node.exponent) if op == "**k" else None,  # type: ignore[arg-type]
                "kind": node.kind,
                "data": data[i],
                "grad": grad[i],
                "correct_grad": correct_grad[i],
                "derived": derived,
                "expansion": say.expansion(node) if derived else None,
                "span": [node.start, node.end],
                "inputs": inputs,
                "warnings": get_warnings(nid, []),
                "group": group_of[i],
                "tangent": tangent[i],
            }
        )
    return {"nodes": nodes, "edges": edges}


def place(reply: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """`reply` (a trace reply written without a placement) with its cards and groups placed:
    each node's box (`x`, `y`, `width`, `height`), each group's `box` and `card`, last in their
    objects, as if written with the placement. The server writes the reply while its layout
    is still being drawn, and places it then."""
    for written, (x, y, width, height) in zip(reply["nodes"], placement.boxes, strict=True):
        written["x"], written["y"], written["width"], written["height"] = x, y, width, height
    boxes = zip(placement.group_boxes, placement.group_cards, strict=True)
    for written, (box, card) in zip(reply["groups"], boxes, strict=True):
        written["box"] = None if box is None else box_reply(box)
        written["card"] = box_reply(card)
    return reply


def node_ids(count: int) -> list[str]:
    """The ids of nodes 0 to `count` - 1 (`n0`, `n1`, …), written once for a whole reply."""
    return [f"n{i}" for i in range(count)]


def functions_reply(trace: Trace) -> list[dict[str, Any]]:
    """The program's functions the graph calls (docs/api.md, "Function"), by line."""
    return [
        {
            "name": function.name,
            "params": list(function.params),
            "definition": function.definition,
            "line": function.line,
            "span": [function.start, function.end],
            "nodes": function.nodes,
            "formula": function.row.formula,
            "locals": list(function.row.locals),
            "micrograd": script_body(function, "micrograd"),
            "torch": script_body(function, "torch"),
            "uses": ops_used(function),
        }
        for function in trace.graph.functions
    ]


def target_reply(trace: Trace) -> dict[str, Any]:
    """`target`: the node whose gradients the reply holds (the root unless asked otherwise);
    `off_target`: the ids of the nodes it does not depend on (their grads are 0, greyed out)."""
    if trace.target is trace.root:
        return {"target": f"n{trace.root.id}", "off_target": []}
    inside = {node.id for node in trace.cone}
    off = [f"n{node.id}" for node in trace.nodes if node.id not in inside]
    return {"target": f"n{trace.target.id}", "off_target": off}


def pass_reply(trace: Trace) -> dict[str, Any]:
    """`pass`: "reverse" or "forward"; `wrt`: forward mode's leaf (its id), null in reverse mode."""
    return {
        "pass": trace.pass_,
        "wrt": None if trace.tangents is None else f"n{trace.tangents.wrt.id}",
    }


def box_reply(box: Box) -> dict[str, float]:
    x, y, width, height = box
    return {"x": x, "y": y, "width": width, "height": height}


def groups_reply(trace: Trace) -> list[dict[str, Any]]:
    """The `groups` of the trace's reply (docs/api.md): each statement's nodes, each leaf alone;
    a group is named as narration names its root (its `box` and `card`: `place`)."""
    nodes = trace.nodes
    text = trace.narrator.text
    id_of = node_ids(len(nodes)).__getitem__
    return [
        {
            "id": f"g{index}",
            "name": text(nodes[root]),
            "kind": kind,
            "root": id_of(root),
            "nodes": list(map(id_of, members)),
        }
        for index, (kind, root, members) in enumerate(trace.graph.groups)
    ]


def overview_reply(trace: Trace, groups: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The `overview` of the trace's reply (docs/api.md, "Overview"): its statements by sample,
    part and layer (engine/overview.py), or None."""
    inputs = [tuple(child.id for child in node.inputs) for node in trace.nodes]
    constants = {node.id: node.data for node in trace.nodes if node.kind == "const"}
    names = [group["name"] for group in groups]
    return overview_of(trace.graph.groups, inputs, names, constants)


def steps_reply(trace: Trace, timeline: Timeline, numbers: dict[str, Any]) -> dict[str, Any]:
    """The `steps` of the trace's reply (docs/api.md, "Steps"): the timeline's columns and
    patterns as they are, and the backward pass's numbers (the numbers reply's arrays) with the
    contributions a variant lost or delivered late. Read by `step_reader.step_objects` (the
    page: step-columns.js)."""
    record = None if trace.tangents is not None else trace.record
    return {
        "phase": timeline.phase,
        "node": timeline.node,
        "template": timeline.template,
        "templates": timeline.templates,
        "action": timeline.action,
        "input_index": timeline.input_index,
        "step_grad": numbers["step_grad"],
        "contribution": numbers["contribution"],
        "grad_before": numbers["grad_before"],
        "grad_after": numbers["grad_after"],
        "lost": [] if record is None else sorted(record.lost),
        "late": [] if record is None else sorted(record.late),
        "tangent_contribution": numbers["tangent_contribution"],
    }


class ReplyParts(NamedTuple):
    """What a trace's reply and its first view (`first_view_reply`) share, made once: the
    numbers reply, the groups and the overview."""

    numbers: dict[str, Any]
    groups: list[dict[str, Any]]
    overview: dict[str, Any] | None


def reply_parts(trace: Trace) -> ReplyParts:
    numbers = numbers_reply(trace)
    groups = groups_reply(trace)
    return ReplyParts(numbers, groups, overview_reply(trace, groups))


def first_view_reply(trace: Trace, parts: ReplyParts) -> dict[str, Any] | None:
    """What the overview's first view is drawn from before the whole reply (docs/python.md,
    "A big graph's first view"), or None for a trace without an overview: the reply's `groups`,
    `overview`, `grad_flags` and `root` as they are, each node's public `op` and `data` (the
    reply's arrays), its `count`, and the edges as [source, target, source, target, …] node
    indices in the reply's order. What the page computes from a reply (the parts' edges, the
    cards' counts) it computes from these the same way (static/js/graph/overview.js);
    micrograd's demo: 4.1 MB of JSON, where its reply is 55 MB."""
    if parts.overview is None:
        return None
    nodes = trace.nodes
    return {
        "count": len(nodes),
        "op": [None if node.op is None else row_of(node).public for node in nodes],
        "data": parts.numbers["data"],
        "edges": [i for node in nodes for child in node.inputs for i in (child.id, node.id)],
        "groups": parts.groups,
        "overview": parts.overview,
        "grad_flags": parts.numbers["grad_flags"],
        "root": f"n{trace.root.id}",
    }


def trace_reply(
    trace: Trace,
    timeline: Timeline,
    placement: Placement | None = None,
    parts: ReplyParts | None = None,
) -> dict[str, Any]:
    """The JSON-ready trace described in docs/api.md; its numbers are the numbers reply's
    (`parts`, when they were made for a first view)."""
    numbers, groups, overview = reply_parts(trace) if parts is None else parts
    data = numbers["data"]
    order_check = trace.order_check
    reply = {
        **graph_reply(trace, numbers),
        "groups": groups,
        "overview": overview,
        "root": f"n{trace.root.id}",
        **target_reply(trace),
        **pass_reply(trace),
        "leaves": [
            {"name": name, "label": node.label, "id": f"n{node.id}", "value": data[node.id]}
            for name, node in trace.graph.leaves
        ],
        "functions": functions_reply(trace),
        "steps": steps_reply(trace, timeline, numbers),
        "gradcheck": numbers["gradcheck"],
        "warnings": numbers["warnings"],
        "grad_flags": numbers["grad_flags"],
        "mode": trace.mode,
        "order": None if trace.order is None else list(trace.order),
        "order_check": (
            None
            if order_check is None
            else {**order_check, "message": render(order_check["message"], trace.lang)}
        ),
        "source": trace.source,
    }
    return reply if placement is None else place(reply, placement)
