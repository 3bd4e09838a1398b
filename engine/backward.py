"""The backward pass, once: seed the root's grad with 1, then visit nodes applying
`grad[input] += local × upstream`. Value.backward and the lean path run `backward`; a trace runs
`recorded_backward`, the same additions in the same order, keeping every visit and contribution
(and its teaching variants: a custom visit order, `=` instead of `+=`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, chain
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


@dataclass(frozen=True, eq=False)
class BackwardRecord:
    """A recorded backward pass, as columns: per visit (in visit order) the node and its grad
    when visited (`upstream`: what it passes on), and `starts[i]:starts[i + 1]` its
    contributions; per contribution (`grad[to] += local × upstream`) the edge, the node it
    reaches, its value and that node's grad before and after; per node (by id) its grad after
    the pass (`grads`). Edges and nodes are indices (the API writes them `e{edge}`, `n{to}`);
    a contribution's local is its edge's.

    The variants' marks, by contribution index: `late` (it arrived after `to` was visited, so it
    is never passed on), `lost` (an overwrite replaced it before `to` was visited) and
    `replaced` (the contribution each overwriting one replaced).

    The pass records its numbers; the columns that follow from the visit order alone (visits,
    starts, edges, the nodes reached, which contributions are late) are worked out from `order`
    when first read: the numbers reply never reads them."""

    order: Sequence[Value]  # the nodes in visit order
    nodes: Sequence[Value]  # every node, by id
    upstream: tuple[float, ...]
    contribution: tuple[float, ...]
    grad_before: tuple[float, ...]
    grad_after: tuple[float, ...]
    grads: tuple[float, ...]
    lost: frozenset[int] = frozenset()
    replaced: Mapping[int, int] | None = None
    # None until read (`late`), unless the pass knows it: a pass in reverse topological order
    # reaches every node before visiting it, so none of its contributions is late.
    known_late: frozenset[int] | None = None

    @cached_property
    def visits(self) -> tuple[int, ...]:
        return tuple([node.id for node in self.order])

    @cached_property
    def starts(self) -> tuple[int, ...]:
        return tuple(accumulate(map(len, map(_inputs, self.order)), initial=0))

    @cached_property
    def edge(self) -> tuple[int, ...]:
        offsets = edge_offsets(self.nodes)
        return tuple(
            chain.from_iterable(
                range(offsets[node.id], offsets[node.id] + len(node.inputs)) for node in self.order
            )
        )

    @cached_property
    def to(self) -> tuple[int, ...]:
        return tuple([child.id for node in self.order for child in node.inputs])

    @cached_property
    def late(self) -> frozenset[int]:
        if self.known_late is not None:
            return self.known_late
        visited_at = [len(self.order)] * len(self.nodes)  # never visited: never late
        for visit, node in enumerate(self.order):
            visited_at[node.id] = visit
        late, index = set(), 0
        for visit, node in enumerate(self.order):
            for child in node.inputs:
                if visited_at[child.id] < visit:
                    late.add(index)
                index += 1
        return frozenset(late)


_inputs = attrgetter("inputs")


def edge_offsets(nodes: Sequence[Value]) -> list[int]:
    """Id of each node's first input edge; edges are numbered in (target, index) order."""
    offsets = list(accumulate(map(len, map(_inputs, nodes)), initial=0))  # in C, no loop here
    offsets.pop()  # the total
    return offsets


def recorded_backward(
    root: Value,
    visit_order: Sequence[Value],
    nodes: Sequence[Value],
    *,
    overwrite: bool = False,
    topological: bool = False,
) -> BackwardRecord:
    """`backward` in `visit_order`, recording every visit and contribution (`=` instead of
    `+=` when `overwrite`); needs sequential node ids (`nodes`, every node by id). Its grads
    are its own (a list by node id, from 0 but the root's 1): the nodes' `grad` is not
    touched, so a record can be made at any time from a built graph. `topological` says that
    `visit_order` is a reverse topological order (the correct pass): then nothing is late."""
    if overwrite:
        return _recorded_overwrite(root, visit_order, nodes)
    grads = _seeded(root, len(nodes))
    upstreams, contributions, befores, afters = [], [], [], []
    # The hot loop of every trace: bound appends, only the numbers (the rest is the order's).
    pass_on, give, was, now = upstreams.append, contributions.append, befores.append, afters.append
    for node in visit_order:
        upstream = grads[node.id]
        pass_on(upstream)
        inputs = node.inputs
        if inputs:  # leaves (half the nodes of most graphs) pass nothing on: no zip for them
            # Not strict: a Value's local_grads match its inputs, and this is the hot loop.
            for local, child in zip(node.local_grads, inputs):  # noqa: B905
                to = child.id
                contribution = local * upstream
                before = grads[to]
                grads[to] = after = before + contribution
                give(contribution)
                was(before)
                now(after)
    return BackwardRecord(
        visit_order, nodes, tuple(upstreams), tuple(contributions), tuple(befores),
        tuple(afters), tuple(grads), known_late=frozenset() if topological else None,
    )  # fmt: skip


def _seeded(root: Value, count: int) -> list[float]:
    """A recorded pass's grads over `count` nodes at its start: the root's 1, the rest 0."""
    grads = [0.0] * count
    grads[root.id] = 1.0
    return grads


def _recorded_overwrite(
    root: Value, visit_order: Sequence[Value], nodes: Sequence[Value]
) -> BackwardRecord:
    """`recorded_backward` with `=` instead of `+=`: each contribution replaces the grad it
    reaches, and one that replaces another not yet passed on is marked (`lost`, `replaced`)."""
    grads = _seeded(root, len(nodes))
    visited = [False] * len(nodes)
    upstreams, contributions, befores, afters = [], [], [], []
    last = [-1] * len(nodes)  # each node's latest contribution, for the variants' marks
    late, lost, replaced = set(), set(), {}
    for node in visit_order:
        upstream = grads[node.id]
        upstreams.append(upstream)
        for local, child in zip(node.local_grads, node.inputs):  # noqa: B905
            to = child.id
            contribution = local * upstream
            index = len(contributions)
            contributions.append(contribution)
            befores.append(grads[to])
            afters.append(contribution)
            grads[to] = contribution
            if visited[to]:
                late.add(index)
            elif last[to] >= 0:
                lost.add(last[to])
                replaced[index] = last[to]
            last[to] = index
        visited[node.id] = True
    return BackwardRecord(
        visit_order, nodes, tuple(upstreams), tuple(contributions), tuple(befores),
        tuple(afters), tuple(grads), frozenset(lost), replaced, frozenset(late),
    )  # fmt: skip
