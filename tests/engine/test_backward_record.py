"""The recorded pass's columns that follow from the visit order alone (visits, starts, edges,
the nodes reached, which contributions are late) are worked out when first read
(engine/backward.py): they must be what a walk of the visits, contribution by contribution,
gives, in every variant and visit order."""

from __future__ import annotations

from typing import Any

import pytest
from engine_cases import CASES, case_id, random_runs
from hypothesis import given

from chainrule import engine
from chainrule.engine.backward import BackwardRecord
from tests.program_strategies import fuzz_settings


def walked(record: BackwardRecord, nodes: list[engine.Value]) -> dict[str, Any]:
    """The order's columns as the pass meets them: each visit in turn, each of its inputs in
    turn, a contribution late when its node was visited before."""
    first_edge, count = [], 0
    for node in nodes:  # edges are numbered node by node, input by input
        first_edge.append(count)
        count += len(node.inputs)
    visited: set[int] = set()
    columns: dict[str, Any] = {"visits": [], "starts": [0], "edge": [], "to": [], "late": set()}
    for node in record.order:
        for j, child in enumerate(node.inputs):
            if child.id in visited:
                columns["late"].add(len(columns["to"]))
            columns["edge"].append(first_edge[node.id] + j)
            columns["to"].append(child.id)
        visited.add(node.id)
        columns["visits"].append(node.id)
        columns["starts"].append(len(columns["to"]))
    return columns


def check(source: str, values: dict[str, float] | None, kwargs: dict[str, Any]) -> None:
    trace = engine.trace(source, values, **kwargs, record=True)
    record = trace.record
    expected = walked(record, trace.nodes)
    assert list(record.visits) == expected["visits"]
    assert list(record.starts) == expected["starts"]
    assert list(record.edge) == expected["edge"]
    assert list(record.to) == expected["to"]
    assert set(record.late) == expected["late"]
    assert len(record.contribution) == len(record.to) == len(record.grad_after)
    assert len(record.upstream) == len(record.visits)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_case_s_order_columns_are_the_walks(case: tuple) -> None:
    check(*case)


@fuzz_settings
@given(random_runs())
def test_random_runs_order_columns_are_the_walks(run: tuple) -> None:
    check(*run)


def test_a_late_contribution_is_found_when_read() -> None:
    # The forward order visits `c` before `a` and `b`: both of c's contributions are late.
    trace = engine.trace("a = 2\nb = 3\nc = a * b", order=["n0", "n1", "n2"], record=True)
    assert trace.record.known_late is None  # a custom order: worked out when read
    assert trace.record.late == frozenset({0, 1})
    assert engine.trace("a = 2\nb = 3\nc = a * b", record=True).record.late == frozenset()
