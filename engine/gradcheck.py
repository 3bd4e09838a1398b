"""Numeric gradient check per leaf: central differences by re-evaluating the built graph."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .cancel import check as check_cancelled
from .formulas import operator_of
from .functions import CALL_COST_RECOMPUTED
from .ops import OPS, row_of
from .value import Value

MAX_LEAVES = 64
MAX_NODES = 5_000
# The most nodes the check recomputes, summed over the leaves it checks (each leaf's nudges
# recompute what depends on it twice): 64 leaves of a 5,000-node graph, about half a second.
# A call of the program's function counts as its body's nodes times CALL_COST_RECOMPUTED, so
# `f12(a0 + … + a59)` (8,192 body nodes a call) is checked for no leaf rather than for 24 s.
MAX_WORK = MAX_LEAVES * MAX_NODES
EPS_RULE = "1e-6·max(1,|x|)"
UNIT_ROUNDOFF = 2.0**-53
# Rounding error of one evaluation is taken as ROUNDING_OPS·u·(largest magnitude it touches).
ROUNDING_OPS = 8


def _agrees(analytic: float, numeric: float) -> bool:
    """PyTorch gradcheck's rule: |analytic − numeric| ≤ 1e-5 + 1e-3·|numeric|."""
    return abs(analytic - numeric) <= 1e-5 + 1e-3 * abs(numeric)


def _downstream(
    order: list[Value], leaves: list[Value], count: int
) -> list[tuple[list[Value], float, int]]:
    """For each of `leaves`: the nodes of `order` (topological) whose data depends on it, in
    topological order, the largest finite magnitude among their inputs' unperturbed data
    (for the rounding bound) and what recomputing them costs in plain nodes (`node_cost`).
    One pass for all of them (`count`: nodes in the graph): each node carries a bit per leaf
    it depends on, where a pass per leaf walked the whole graph again."""
    masks = [0] * count
    for bit, leaf in enumerate(leaves):
        masks[leaf.id] |= 1 << bit
    found: list[list[Value]] = [[] for _ in leaves]
    largest = [0.0] * len(leaves)
    costs = [0] * len(leaves)
    for node in order:
        inputs = node.inputs
        mask = 0
        for child in inputs:
            mask |= masks[child.id]
        if not mask:
            continue
        masks[node.id] |= mask
        own = 0.0
        for other in inputs:
            size = abs(other.data)
            if size > own and size != math.inf:
                own = size
        cost = node_cost(node)
        while mask:
            low = mask & -mask
            bit = low.bit_length() - 1
            found[bit].append(node)
            costs[bit] += cost
            if own > largest[bit]:
                largest[bit] = own
            mask ^= low
    return list(zip(found, largest, costs, strict=True))


def node_cost(node: Value) -> int:
    """What recomputing `node` costs, in plain nodes: 1, or for a call of the program's
    function its body's nodes times CALL_COST_RECOMPUTED."""
    function = node.function
    return 1 if function is None else function.nodes * CALL_COST_RECOMPUTED


def _within_work(downstream: list[tuple[list[Value], float, int]]) -> int:
    """How many of the leaves (in order) fit in MAX_WORK together."""
    total = 0
    for fitting, (_, _, cost) in enumerate(downstream):
        total += cost
        if total > MAX_WORK:
            return fitting
    return len(downstream)


# The ops whose forward is one operator on two inputs (`+`, `*`), as C functions: the hot path
# of `evaluate`, which calls them without going through `apply`.
_OPERATORS = {name: f for name, op in OPS.items() if op.forward and (f := operator_of(op.forward))}


# How to recompute one node: its id, then the C operator and its two inputs' ids, or None, the
# op's `apply` and (its inputs' ids, its exponent). Made once, run for every nudge.
Step = tuple[int, Any, Any, Any]


def recomputation(nodes: Sequence[Value]) -> list[Step]:
    """The steps recomputing `nodes` (topological) with the op table's own arithmetic, as
    building the graph computed them (`evaluate` runs them)."""
    steps: list[Step] = []
    for node in nodes:
        inputs = node.inputs
        compute = _OPERATORS.get(node.op)  # type: ignore[arg-type]
        if compute is not None:
            steps.append((node.id, compute, inputs[0].id, inputs[1].id))
        else:
            ids = tuple(child.id for child in inputs)
            steps.append((node.id, None, row_of(node).apply, (ids, node.exponent or 0.0)))
    return steps


def evaluate(root: Value, datas: list[float], steps: Sequence[Step]) -> tuple[float, float]:
    """Run `steps` (`recomputation`) into `datas` (by node id): the root's data and the largest
    finite magnitude computed on the way. (The gradient check and the loss landscape use it.)"""
    largest = 0.0
    for node_id, compute, first, second in steps:
        if compute is not None:
            value = compute(datas[first], datas[second])
        else:
            ids, exponent = second
            value = first([datas[i] for i in ids], exponent)[0]
        datas[node_id] = value
        if value - value == 0 and abs(value) > largest:  # finite and larger
            largest = abs(value)
    return datas[root.id], largest


class LeafCheck(NamedTuple):
    """One leaf's check: its name and node id, the analytic and numeric gradients, and the
    status: pass, fail, kink (the one-sided differences disagree: a relu corner or similar),
    imprecise (the disagreement is within what float64 rounding can cause at this eps, because
    the values involved are large: the check cannot judge) or nonfinite."""

    name: str
    id: int
    analytic: float
    numeric: float
    status: str


@dataclass(frozen=True, slots=True)
class GradCheck:
    """The check of a graph: how many of its `total` leaves were `checked` (all but when
    `capped`) and each one's result."""

    eps_rule: str
    checked: int
    total: int
    capped: bool
    results: tuple[LeafCheck, ...]


def gradcheck(
    nodes: list[Value],
    order: list[Value],
    root: Value,
    leaves: list[tuple[str, Value]],
    analytic: Sequence[float],
) -> GradCheck:
    """Check the `analytic` gradient of each leaf (by node id) against central differences.
    Checks at most MAX_LEAVES leaves, as many as fit in MAX_WORK (the first ones), and none on
    graphs over MAX_NODES nodes."""
    capped = len(nodes) > MAX_NODES or len(leaves) > MAX_LEAVES
    checked = [] if len(nodes) > MAX_NODES else leaves[:MAX_LEAVES]
    downstream = _downstream(order, [leaf for _, leaf in checked], len(nodes)) if checked else []
    fitting = _within_work(downstream)
    if fitting < len(checked):
        capped, checked, downstream = True, checked[:fitting], downstream[:fitting]
    base = [node.data for node in nodes] if checked else []
    operations = [node for node in order if node.inputs] if checked else []
    steps = dict(zip([node.id for node in operations], recomputation(operations), strict=True))
    results = tuple(
        _check_leaf(
            name, leaf, ([steps[n.id] for n in found], largest), root, base, analytic[leaf.id]
        )
        for (name, leaf), (found, largest, _) in zip(checked, downstream, strict=True)
    )
    return GradCheck(EPS_RULE, len(checked), len(leaves), capped, results)


def _check_leaf(
    name: str,
    leaf: Value,
    downstream: tuple[list[Step], float],
    root: Value,
    base: list[float],
    grad: float,
) -> LeafCheck:
    """Nudge `leaf` by ±h, recompute what depends on it (`downstream`: its steps, and the
    largest magnitude of their inputs), and judge the difference quotient."""
    check_cancelled()
    x = leaf.data
    h = 1e-6 * max(1.0, abs(x))
    affected, largest_input = downstream
    datas = list(base)
    datas[leaf.id] = x + h
    f_plus, largest_plus = evaluate(root, datas, affected)
    datas[leaf.id] = x - h
    f_minus, largest_minus = evaluate(root, datas, affected)
    numeric = (f_plus - f_minus) / (2 * h)
    # How far rounding alone can move a one-sided difference at this h.
    largest = max(largest_plus, largest_minus, largest_input, abs(x))
    rounding = ROUNDING_OPS * UNIT_ROUNDOFF * largest / h
    one_sided = ((f_plus - root.data) / h, (root.data - f_minus) / h)
    return LeafCheck(name, leaf.id, grad, numeric, _status(grad, numeric, one_sided, rounding))


def _status(grad: float, numeric: float, one_sided: tuple[float, float], rounding: float) -> str:
    if not (math.isfinite(numeric) and math.isfinite(grad)):
        return "nonfinite"
    if _agrees(grad, numeric):
        return "pass"
    if abs(grad - numeric) <= rounding:
        return "imprecise"
    right, left = one_sided
    if abs(right - left) > 2 * rounding and not _agrees(right, left):
        return "kink"
    return "fail"
