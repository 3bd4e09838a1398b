"""The backward pass, once: seed the root's grad with 1, then visit nodes applying
`grad[input] += local × upstream`. Value.backward and the lean path run `backward`; a trace runs
`recorded_backward`, the same additions in the same order, keeping every visit and contribution
(and its teaching variants: a custom visit order, `=` instead of `+=`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .value import Value


def backward(root: Value, visit_order: list[Value]) -> None:
    """Seed `root.grad = 1`, then visit `visit_order` applying `input.grad += local × upstream`
    to the nodes' own `grad`; every grad the pass reaches must start at 0 (the caller resets
    them)."""
    root.grad = 1.0
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


@dataclass(frozen=True, slots=True)
class BackwardRecord:
    """A recorded backward pass, as columns: per visit (in visit order) the node and its grad
    when visited (`upstream`: what it passes on), and `starts[i]:starts[i + 1]` its
    contributions; per contribution (`grad[to] += local × upstream`) the edge, the node it
    reaches, its value and that node's grad before and after; per node (by id) its grad after
    the pass (`grads`). Edges and nodes are indices (the API writes them `e{edge}`, `n{to}`);
    a contribution's local is its edge's.

    The variants' marks, by contribution index: `late` (it arrived after `to` was visited, so it
    is never passed on), `lost` (an overwrite replaced it before `to` was visited) and
    `replaced` (the contribution each overwriting one replaced)."""

    visits: tuple[int, ...]
    upstream: tuple[float, ...]
    starts: tuple[int, ...]
    edge: tuple[int, ...]
    to: tuple[int, ...]
    contribution: tuple[float, ...]
    grad_before: tuple[float, ...]
    grad_after: tuple[float, ...]
    grads: tuple[float, ...]
    late: frozenset[int] = frozenset()
    lost: frozenset[int] = frozenset()
    replaced: Mapping[int, int] | None = None


_inputs = attrgetter("inputs")


def edge_offsets(nodes: list[Value]) -> list[int]:
    """Id of each node's first input edge; edges are numbered in (target, index) order."""
    offsets = list(accumulate(map(len, map(_inputs, nodes)), initial=0))  # in C, no loop here
    offsets.pop()  # the total
    return offsets


def recorded_backward(
    root: Value, visit_order: list[Value], offsets: list[int], *, overwrite: bool = False
) -> BackwardRecord:
    """`backward` in `visit_order`, recording every visit and contribution (`=` instead of
    `+=` when `overwrite`); needs sequential node ids and `offsets` (from `edge_offsets`).
    Its grads are its own (a list by node id, from 0 but the root's 1): the nodes' `grad` is
    not touched, so a record can be made at any time from a built graph."""
    if overwrite:
        return _recorded_overwrite(root, visit_order, offsets)
    grads, visited = _seeded(root, len(offsets))
    visits, upstreams, starts = [], [], [0]
    edges, tos, contributions, befores, afters = [], [], [], [], []
    late = set()
    # The hot loop of every trace: bound appends, a visit's edges as one range.
    visit, pass_on, start = visits.append, upstreams.append, starts.append
    add_edges, reach, give = edges.extend, tos.append, contributions.append
    was, now = befores.append, afters.append
    for node in visit_order:
        node_id = node.id
        upstream = grads[node_id]
        inputs = node.inputs
        if inputs:  # leaves (half the nodes of most graphs) pass nothing on: no zip for them
            edge = offsets[node_id]
            add_edges(range(edge, edge + len(inputs)))
            # Not strict: a Value's local_grads match its inputs, and this is the hot loop.
            for local, child in zip(node.local_grads, inputs):  # noqa: B905
                to = child.id
                contribution = local * upstream
                before = grads[to]
                grads[to] = after = before + contribution
                if visited[to]:
                    late.add(len(contributions))
                reach(to)
                give(contribution)
                was(before)
                now(after)
        visited[node_id] = True
        visit(node_id)
        pass_on(upstream)
        start(len(contributions))
    return BackwardRecord(
        tuple(visits), tuple(upstreams), tuple(starts), tuple(edges), tuple(tos),
        tuple(contributions), tuple(befores), tuple(afters), tuple(grads), frozenset(late),
        frozenset(), {},
    )  # fmt: skip


def _seeded(root: Value, count: int) -> tuple[list[float], list[bool]]:
    """A recorded pass's start over `count` nodes: the grads (the root's 1, the rest 0) and
    which nodes it visited (none yet)."""
    grads = [0.0] * count
    grads[root.id] = 1.0
    return grads, [False] * count


def _recorded_overwrite(
    root: Value, visit_order: list[Value], offsets: list[int]
) -> BackwardRecord:
    """`recorded_backward` with `=` instead of `+=`: each contribution replaces the grad it
    reaches, and one that replaces another not yet passed on is marked (`lost`, `replaced`)."""
    grads, visited = _seeded(root, len(offsets))
    visits, upstreams, starts = [], [], [0]
    edges, tos, contributions, befores, afters = [], [], [], [], []
    last = [-1] * len(offsets)  # each node's latest contribution, for the variants' marks
    late, lost, replaced = set(), set(), {}
    for node in visit_order:
        node_id = node.id
        upstream = grads[node_id]
        inputs = node.inputs
        if inputs:
            edge = offsets[node_id]
            for local, child in zip(node.local_grads, inputs):  # noqa: B905
                to = child.id
                contribution = local * upstream
                before = grads[to]
                grads[to] = after = contribution
                index = len(contributions)
                edges.append(edge)
                tos.append(to)
                contributions.append(contribution)
                befores.append(before)
                afters.append(after)
                edge += 1
                if visited[to]:
                    late.add(index)
                elif last[to] >= 0:
                    lost.add(last[to])
                    replaced[index] = last[to]
                last[to] = index
        visited[node_id] = True
        visits.append(node_id)
        upstreams.append(upstream)
        starts.append(len(contributions))
    return BackwardRecord(
        tuple(visits), tuple(upstreams), tuple(starts), tuple(edges), tuple(tos),
        tuple(contributions), tuple(befores), tuple(afters), tuple(grads),
        frozenset(late), frozenset(lost), replaced,
    )  # fmt: skip
