"""Numeric gradient check per leaf: central differences by re-evaluating the built graph."""

from __future__ import annotations

import math
from typing import Any

from .formulas import operator_of
from .ops import OPS
from .value import Value

MAX_LEAVES = 64
MAX_NODES = 5_000
EPS_RULE = "1e-6·max(1,|x|)"
UNIT_ROUNDOFF = 2.0**-53
# Rounding error of one evaluation is taken as ROUNDING_OPS·u·(largest magnitude it touches).
ROUNDING_OPS = 8


def _agrees(analytic: float, numeric: float) -> bool:
    """PyTorch gradcheck's rule: |analytic − numeric| ≤ 1e-5 + 1e-3·|numeric|."""
    return abs(analytic - numeric) <= 1e-5 + 1e-3 * abs(numeric)


def _downstream(order: list[Value], leaf: Value) -> tuple[list[Value], float]:
    """Nodes of `order` (topological) whose data depends on `leaf`, in topological order, and
    the largest finite magnitude among their inputs' unperturbed data (for the rounding bound)."""
    dirty = {leaf.id}
    found = []
    largest = 0.0
    for node in order:
        for child in node.inputs:
            if child.id in dirty:
                dirty.add(node.id)
                found.append(node)
                for other in node.inputs:
                    size = abs(other.data)
                    if size > largest and size != math.inf:
                        largest = size
                break
    return found, largest


# The ops whose forward is one operator on two inputs (`+`, `*`), as C functions: the hot path
# of `_evaluate`, which calls them without going through `apply`.
_OPERATORS = {name: f for name, op in OPS.items() if op.forward and (f := operator_of(op.forward))}


def _evaluate(root: Value, datas: list[float], nodes: list[Value]) -> tuple[float, float]:
    """Recompute `nodes` (topological) into `datas`; the root's data and the largest finite
    magnitude computed on the way."""
    largest = 0.0
    operators = _OPERATORS
    for node in nodes:
        op, inputs = node.op, node.inputs
        compute = operators.get(op)  # type: ignore[arg-type]
        if compute is not None:
            value = compute(datas[inputs[0].id], datas[inputs[1].id])
        else:
            apply = OPS[op].apply  # type: ignore[index]
            value = apply([datas[c.id] for c in inputs], node.exponent or 0.0)[0]  # type: ignore[misc]
        datas[node.id] = value
        if value - value == 0 and abs(value) > largest:  # finite and larger
            largest = abs(value)
    return datas[root.id], largest


def gradcheck(
    nodes: list[Value],
    order: list[Value],
    root: Value,
    leaves: list[tuple[str, Value]],
    analytic: list[float],
) -> dict[str, Any]:
    """`{eps_rule, checked, total, capped, results}`: one result per checked leaf with status
    pass, fail, kink (the one-sided differences disagree: a relu corner or similar),
    imprecise (the disagreement is within what float64 rounding can cause at this eps, because
    the values involved are large: the check cannot judge) or nonfinite. Checks at most
    MAX_LEAVES leaves, and none on graphs over MAX_NODES nodes."""
    results: list[dict[str, Any]] = []
    capped = len(nodes) > MAX_NODES or len(leaves) > MAX_LEAVES
    checked = [] if len(nodes) > MAX_NODES else leaves[:MAX_LEAVES]
    base = [node.data for node in nodes] if checked else []
    f0 = root.data
    for name, leaf in checked:
        x = leaf.data
        h = 1e-6 * max(1.0, abs(x))
        affected, largest_input = _downstream(order, leaf)
        datas = list(base)
        datas[leaf.id] = x + h
        f_plus, largest_plus = _evaluate(root, datas, affected)
        datas[leaf.id] = x - h
        f_minus, largest_minus = _evaluate(root, datas, affected)
        numeric = (f_plus - f_minus) / (2 * h)
        grad = analytic[leaf.id]
        # How far rounding alone can move a one-sided difference at this h.
        rounding = (
            ROUNDING_OPS
            * UNIT_ROUNDOFF
            * max(largest_plus, largest_minus, largest_input, abs(x))
            / h
        )
        if not (math.isfinite(numeric) and math.isfinite(grad)):
            status = "nonfinite"
        elif _agrees(grad, numeric):
            status = "pass"
        elif abs(grad - numeric) <= rounding:
            status = "imprecise"
        elif abs((f_plus - f0) / h - (f0 - f_minus) / h) > 2 * rounding and not _agrees(
            (f_plus - f0) / h, (f0 - f_minus) / h
        ):
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
