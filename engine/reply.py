"""The JSON-ready replies of a run: the numbers (`numbers_reply`, the body of
`POST /api/values`) and the whole trace (`trace_reply`, the body of `POST /api/graph` without
layout), which reads its numbers from the numbers reply. Non-finite numbers are the strings
"NaN", "Infinity" and "-Infinity"."""

from __future__ import annotations

import math
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .i18n import render
from .narration import Narrator
from .ops import DERIVED
from .timeline import public_op

if TYPE_CHECKING:
    from .run import Trace


def number(x: float) -> float | str:
    """A JSON-ready number: non-finite values become "Infinity", "-Infinity" or "NaN"."""
    if x - x == 0:  # finite
        return x
    if x != x:
        return "NaN"
    return "Infinity" if x > 0 else "-Infinity"


def _numbers(values: list[float]) -> list[float | str]:
    """`values` JSON-ready (the same list when all are finite, as they mostly are)."""
    if all(map(math.isfinite, values)):
        return values  # type: ignore[return-value]
    return [number(x) for x in values]


def _column(records: list[Any], field: str) -> list[float | str]:
    """One numeric field of every record, JSON-ready."""
    return _numbers(list(map(attrgetter(field), records)))


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
    graph = trace.graph
    nodes = graph.nodes
    visits = trace.visits
    records = [record for visit in visits for record in visit.contributions]
    grad = _numbers(list(trace.grads))
    correct_grad = (
        None if trace.grads is trace.correct_grads else _numbers(list(trace.correct_grads))
    )
    if correct_grad is not None and _same(correct_grad, grad):
        correct_grad = None
    say = Narrator(graph.source, nodes, graph.helpers)
    lang = trace.lang
    node_warnings = {
        f"n{node.id}": [
            {"type": node.warning, "message": render(say.warning(node.warning, node), lang)}
        ]
        for node in nodes
        if node.warning
    }
    check = dict(trace.gradcheck)
    check["results"] = [
        {**result, "analytic": number(result["analytic"]), "numeric": number(result["numeric"])}
        for result in check["results"]
    ]
    return {
        "data": _column(nodes, "data"),
        "grad": grad,
        "correct_grad": correct_grad,
        "local_grad": _numbers([local for node in nodes for local in node.local_grads]),
        "step_grad": _column(visits, "upstream"),
        "contribution": _column(records, "contribution"),
        "grad_before": _column(records, "grad_before"),
        "grad_after": _column(records, "grad_after"),
        "gradcheck": check,
        "warnings": [
            {**warning, "message": render(warning["message"], lang)} for warning in trace.warnings
        ],
        "node_warnings": node_warnings,
    }


def graph_reply(trace: Trace) -> dict[str, Any]:
    """The `nodes` and `edges` of the trace's reply (docs/api.md): what a drawing of the graph
    needs, without the timeline (no sort steps, no narration)."""
    graph = trace.graph
    numbers = trace.numbers()
    data, grad = numbers["data"], numbers["grad"]
    correct_grad = numbers["correct_grad"] or grad
    local_grad = numbers["local_grad"]
    node_warnings = numbers["node_warnings"]
    say = Narrator(graph.source, graph.nodes, graph.helpers)
    group_of = [0] * len(graph.nodes)
    for index, group in enumerate(graph.groups):
        for member in group.nodes:
            group_of[member] = index
    nodes = []
    edges = []
    edge = 0
    for node in graph.nodes:
        i = node.id
        nid = f"n{i}"
        derived = node.op in DERIVED
        nodes.append(
            {
                "id": nid,
                "label": node.label,
                "name": node.name,
                "text": say.text(node),
                "op": public_op(node.op),
                "exponent": number(node.exponent) if node.op == "**k" else None,  # type: ignore[arg-type]
                "kind": node.kind,
                "data": data[i],
                "grad": grad[i],
                "correct_grad": correct_grad[i],
                "derived": derived,
                "expansion": say.expansion(node) if derived else None,
                "span": [node.start, node.end],
                "inputs": [f"n{c.id}" for c in node.inputs],
                "warnings": node_warnings.get(nid, []),
                "group": f"g{group_of[i]}",
            }
        )
        for index, child in enumerate(node.inputs):
            edges.append(
                {
                    "id": f"e{edge}",
                    "source": f"n{child.id}",
                    "target": nid,
                    "index": index,
                    "local_grad": local_grad[edge],
                }
            )
            edge += 1
    return {"nodes": nodes, "edges": edges}


def groups_reply(trace: Trace) -> list[dict[str, Any]]:
    """The `groups` of the trace's reply (docs/api.md): each statement's nodes, each leaf alone;
    a group is named as narration names its root."""
    graph = trace.graph
    say = Narrator(graph.source, graph.nodes, graph.helpers)
    return [
        {
            "id": f"g{index}",
            "name": say.text(graph.nodes[group.root]),
            "kind": group.kind,
            "root": f"n{group.root}",
            "nodes": [f"n{member}" for member in group.nodes],
        }
        for index, group in enumerate(graph.groups)
    ]


def trace_reply(trace: Trace) -> dict[str, Any]:
    """The JSON-ready trace described in docs/api.md; its numbers are the numbers reply's."""
    graph = trace.graph
    numbers = trace.numbers()
    data = numbers["data"]
    return {
        **graph_reply(trace),
        "groups": groups_reply(trace),
        "root": f"n{graph.root.id}",
        "leaves": [
            {"name": name, "label": node.label, "id": f"n{node.id}", "value": data[node.id]}
            for name, node in graph.leaves
        ],
        "steps": trace.steps,
        "gradcheck": numbers["gradcheck"],
        "warnings": numbers["warnings"],
        "mode": trace.mode,
        "order": list(trace.order) if trace.order is not None else None,
        "order_check": (
            None
            if trace.order_check is None
            else {**trace.order_check, "message": render(trace.order_check["message"], trace.lang)}
        ),
        "source": trace.source,
    }
