"""The backward pass, once: seed the root's grad with 1, then visit nodes applying
`grad[input] += local × upstream`. Value.backward, the lean path and the teaching timeline
(with its variants: a custom visit order, `=` instead of `+=`) all run this function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .value import Value


@dataclass(slots=True)
class Contribution:
    """One `grad[to] += local × upstream` of the backward pass, with the API's field names.

    `edge` and `to` are indices (the API writes them `e{edge}`, `n{to}`); `lost` is set later
    if an overwrite replaces it before `to` is visited; `replaced` is the contribution this one
    overwrote, and `source` the id of the node whose visit made it."""

    edge: int
    to: int
    upstream: float
    local: float
    contribution: float
    grad_before: float
    grad_after: float
    lost: bool
    late: bool
    replaced: Contribution | None
    source: int


class Visit(NamedTuple):
    """One node's visit in the backward pass: its grad when visited and what it passed on."""

    node: Value
    upstream: float
    contributions: list[Contribution]


def edge_offsets(nodes: list[Value]) -> list[int]:
    """Id of each node's first input edge; edges are numbered in (target, index) order."""
    offsets = []
    total = 0
    for node in nodes:
        offsets.append(total)
        total += len(node.inputs)
    return offsets


def backward(
    root: Value,
    visit_order: list[Value],
    *,
    overwrite: bool = False,
    visits: list[Visit] | None = None,
    offsets: list[int] | None = None,
) -> None:
    """Seed `root.grad = 1`, then visit `visit_order` applying `input.grad += local × upstream`
    (or `=` when `overwrite`) to the nodes' own `grad`; every grad the pass reaches must start
    at 0 (the caller resets them).

    If `visits` is given, appends every visit with its contributions, `lost` (overwritten
    before its target was visited) and `late` (arrived after its target was visited) marked;
    recording needs sequential node ids and `offsets` (from `edge_offsets`) for edge ids."""
    root.grad = 1.0
    if visits is None and not overwrite:
        for node in visit_order:
            inputs = node.inputs
            if not inputs:
                continue
            upstream = node.grad
            if len(inputs) == 2:  # most nodes: unpacked, no zip object
                (left, right), (left_local, right_local) = inputs, node.local_grads
                left.grad += left_local * upstream
                right.grad += right_local * upstream
            else:
                for child, local_grad in zip(inputs, node.local_grads, strict=True):
                    child.grad += local_grad * upstream
        return
    assert offsets is not None
    visited = [False] * len(offsets)
    last: list[Contribution | None] = [None] * len(offsets)
    for node in visit_order:
        upstream = node.grad
        contributions: list[Contribution] = []
        edge = offsets[node.id]
        for index, (child, local) in enumerate(zip(node.inputs, node.local_grads, strict=True)):
            to = child.id
            contribution = local * upstream
            before = child.grad
            after = contribution if overwrite else before + contribution
            child.grad = after
            record = Contribution(
                edge + index, to, upstream, local, contribution, before, after,
                False, visited[to], None, node.id,
            )  # fmt: skip
            previous = last[to]
            if overwrite and not visited[to] and previous is not None:
                previous.lost = True
                record.replaced = previous
            last[to] = record
            contributions.append(record)
        visited[node.id] = True
        if visits is not None:
            visits.append(Visit(node, upstream, contributions))
