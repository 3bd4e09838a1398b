"""Numeric gradient check per leaf: central differences by re-evaluating the built graph."""

from __future__ import annotations

import math
from typing import Any

from .value import OPS, Value

MAX_LEAVES = 64
MAX_NODES = 5_000
EPS_RULE = "1e-6·max(1,|x|)"


def _agrees(analytic: float, numeric: float) -> bool:
    """PyTorch gradcheck's rule: |analytic − numeric| ≤ 1e-5 + 1e-3·|numeric|."""
    return abs(analytic - numeric) <= 1e-5 + 1e-3 * abs(numeric)


def _downstream(order: list[Value], leaf: Value) -> list[Value]:
    """Nodes of `order` (topological) whose data depends on `leaf`, in topological order."""
    dirty = {leaf.id}
    found = []
    for node in order:
        for child in node.inputs:
            if child.id in dirty:
                dirty.add(node.id)
                found.append(node)
                break
    return found


def _evaluate(root: Value, datas: list[float], nodes: list[Value]) -> float:
    for node in nodes:
        arity_fn = OPS[node.op][1]  # type: ignore[index]
        try:
            datas[node.id] = arity_fn([datas[c.id] for c in node.inputs], node.exponent or 0.0)[0]
        except (OverflowError, ValueError, ZeroDivisionError):  # pragma: no cover - guarded ops
            datas[node.id] = math.nan
    return datas[root.id]


def gradcheck(
    nodes: list[Value],
    order: list[Value],
    root: Value,
    leaves: list[tuple[str, Value]],
    analytic: list[float],
) -> dict[str, Any]:
    """`{eps_rule, checked, total, capped, results}`: one result per checked leaf with status
    pass, fail, kink (the one-sided differences disagree: a relu corner or similar) or
    nonfinite. Checks at most MAX_LEAVES leaves, and none on graphs over MAX_NODES nodes."""
    results: list[dict[str, Any]] = []
    capped = len(nodes) > MAX_NODES or len(leaves) > MAX_LEAVES
    checked = [] if len(nodes) > MAX_NODES else leaves[:MAX_LEAVES]
    base = [node.data for node in nodes]
    f0 = root.data
    for name, leaf in checked:
        x = leaf.data
        h = 1e-6 * max(1.0, abs(x))
        affected = _downstream(order, leaf)
        datas = list(base)
        datas[leaf.id] = x + h
        f_plus = _evaluate(root, datas, affected)
        datas[leaf.id] = x - h
        f_minus = _evaluate(root, datas, affected)
        numeric = (f_plus - f_minus) / (2 * h)
        grad = analytic[leaf.id]
        if not (math.isfinite(numeric) and math.isfinite(grad)):
            status = "nonfinite"
        elif _agrees(grad, numeric):
            status = "pass"
        elif not _agrees((f_plus - f0) / h, (f0 - f_minus) / h):
            status = "kink"
        else:
            status = "fail"
        results.append(
            {
                "name": name,
                "id": f"n{leaf.id}",
                "analytic": grad,
                "numeric": numeric,
                "status": status,
            }
        )
    return {
        "eps_rule": EPS_RULE,
        "checked": len(checked),
        "total": len(leaves),
        "capped": capped,
        "results": results,
    }
