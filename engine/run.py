"""The engine's entry points: `trace` (the full teaching timeline) and `forward_backward`."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .errors import BadOrder, LimitExceeded
from .gradcheck import gradcheck
from .graph import Graph, Limits, build, check_values
from .parser import parse
from .timeline import (
    Narrator,
    backward_pass,
    backward_steps,
    edge_offsets,
    fmt,
    forward_steps,
    number,
    public_op,
    seed_step,
    topo_steps,
)
from .topo import TopoEvent, topo_order
from .value import DERIVED, Value

MODES = ("correct", "overwrite")


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Pause CPython's cycle collector: our graphs hold no reference cycles (refcounting frees
    them), so scanning the many new nodes of a large build is pure overhead."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_graph(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    expand_derived: bool = False,
    limits: Limits | None = None,
) -> Graph:
    """Parse `source` and build its Value graph (forward pass included); raises ProgramError."""
    limits = limits or Limits()
    if limits.max_source_chars is not None and len(source) > limits.max_source_chars:
        raise LimitExceeded(
            f"program is {len(source):,} characters; the limit is {limits.max_source_chars:,}",
            source,
            limits.max_source_chars,
        )
    checked = check_values(values)
    statements = parse(source, limits.max_depth)
    return build(
        source, statements, checked, expand_derived=expand_derived, max_nodes=limits.max_nodes
    )


@dataclass(frozen=True)
class ForwardBackward:
    """The lean result: the root's data and every named leaf's gradient."""

    data: float
    grads: dict[str, float]


def forward_backward(
    source: str, values: dict[str, Any] | None = None, *, limits: Limits | None = None
) -> ForwardBackward:
    """Parse, build (forward) and run the backward pass with no timeline: the fast path."""
    with cycle_collector_paused():
        graph = build_graph(source, values, limits=limits)
        graph.root.backward()
    return ForwardBackward(graph.root.data, {name: node.grad for name, node in graph.leaves})


class Trace:
    """Everything one run computes; `to_dict()` is the JSON-ready body of `POST /api/graph`
    (without layout). Steps are materialised on demand: building a Trace of a 100,000-node
    graph is cheap, its `to_dict()` is not."""

    def __init__(
        self,
        graph: Graph,
        mode: str,
        order: list[str] | None,
    ) -> None:
        self.graph = graph
        self.source = graph.source
        self.mode = mode
        self.order = order
        nodes = graph.nodes
        root = graph.root
        self.events: list[TopoEvent] = []
        self.topo_order: list[Value] = topo_order(root, self.events)
        self.offsets = edge_offsets(nodes)
        reverse = self.topo_order[::-1]
        self.correct_grads, correct_visits = backward_pass(nodes, root, reverse, self.offsets)
        self.warnings: list[dict[str, Any]] = list(graph.warnings)
        self.order_check: dict[str, Any] | None = None
        visit_order = reverse
        if order is not None:
            visit_order = self._resolve_order(order)
            self.order_check = self._check_order(visit_order)
        if mode == "overwrite" or order is not None:
            self.grads, self.visits = backward_pass(
                nodes, root, visit_order, self.offsets, overwrite=mode == "overwrite"
            )
        else:
            self.grads, self.visits = self.correct_grads, correct_visits
        for node, grad in zip(nodes, self.grads, strict=True):
            node.grad = grad
        self._note_variant_warnings()
        self.gradcheck = gradcheck(nodes, self.topo_order, root, graph.leaves, self.correct_grads)
        self._steps: list[dict[str, Any]] | None = None

    def _resolve_order(self, order: list[str]) -> list[Value]:
        by_id = {f"n{node.id}": node for node in self.graph.nodes}
        seen: set[str] = set()
        resolved = []
        for node_id in order:
            if not isinstance(node_id, str) or node_id not in by_id:
                raise BadOrder(f"the visit order names {node_id!r}, which is not a node id")
            if node_id in seen:
                raise BadOrder(f"the visit order lists {node_id} twice")
            seen.add(node_id)
            resolved.append(by_id[node_id])
        return resolved

    def _check_order(self, visit_order: list[Value]) -> dict[str, Any]:
        say = Narrator(self.source, self.graph.nodes)
        position = {node.id: i for i, node in enumerate(visit_order)}
        consumers: dict[int, list[Value]] = {}
        for node in self.graph.nodes:
            for child in node.inputs:
                consumers.setdefault(child.id, []).append(node)
        for node in visit_order:
            for consumer in consumers.get(node.id, []):
                if consumer.id not in position:
                    return {
                        "valid": False,
                        "message": f"{say.text(consumer)} is never visited, so its gradient "
                        f"never reaches {say.text(node)}",
                    }
                if position[consumer.id] > position[node.id]:
                    return {
                        "valid": False,
                        "message": f"{say.text(node)} was visited before {say.text(consumer)}, "
                        f"which feeds it gradient",
                    }
        for node in self.graph.nodes:
            if node.inputs and node.id not in position:
                return {
                    "valid": False,
                    "message": f"{say.text(node)} is never visited, so its inputs never "
                    f"receive its gradient",
                }
        return {
            "valid": True,
            "message": "a valid reverse topological order: every node is visited after "
            "all the nodes that feed it gradient",
        }

    def _note_variant_warnings(self) -> None:
        if self.order is None:
            return
        say = Narrator(self.source, self.graph.nodes)
        listed = {node.id for node, _, _ in self.visits}
        for node in self.graph.nodes:
            if node.inputs and node.id not in listed:
                self.warnings.append(
                    {
                        "type": "never_visited",
                        "message": f"{say.text(node)} is not in the visit order, so its "
                        f"gradient never reaches its inputs",
                        "line": None,
                        "column": None,
                    }
                )
        for node, _, contributions in self.visits:
            for record in contributions:
                target = self.graph.nodes[record[1]]
                if not record[8] or not target.inputs:
                    continue  # in time, or a leaf/constant (a late add still counts there)
                below = ", ".join(
                    dict.fromkeys(say.text(c) for c in target.inputs if c.kind != "const")
                )
                self.warnings.append(
                    {
                        "type": "late",
                        "message": f"the contribution {say.text(node)} → {say.text(target)} "
                        f"({fmt(record[4])}) arrived after {say.text(target)} was visited, so "
                        f"the path {below} → {say.text(target)} → {say.text(node)} never passed it "
                        f"on",
                        "line": None,
                        "column": None,
                    }
                )

    @property
    def root(self) -> Value:
        return self.graph.root

    @property
    def nodes(self) -> list[Value]:
        return self.graph.nodes

    def grad(self, name: str) -> float:
        """The (variant's) gradient of a named leaf or intermediate."""
        for node in self.graph.nodes:
            if node.label == name:
                return self.grads[node.id]
        raise KeyError(name)

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The timeline: topo (unless too large), forward, seed, backward; indexed from 0."""
        if self._steps is None:
            say = Narrator(self.source, self.graph.nodes)
            steps = topo_steps(self.events, say)
            steps += forward_steps(self.topo_order, say)
            steps.append(seed_step(self.graph.root, say))
            steps += backward_steps(self.visits, say, self.graph.nodes, self.mode == "overwrite")
            for index, step in enumerate(steps):
                step["index"] = index
            self._steps = steps
        return self._steps

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready trace described in docs/api.md (non-finite numbers as strings)."""
        with cycle_collector_paused():  # tens of thousands of new dicts, none in a cycle
            return self._json_ready()

    def _json_ready(self) -> dict[str, Any]:
        graph = self.graph
        say = Narrator(self.source, graph.nodes)
        nodes = []
        edges = []
        for node in graph.nodes:
            derived = node.op in DERIVED
            warning = node.warning
            nodes.append(
                {
                    "id": f"n{node.id}",
                    "label": node.label,
                    "text": say.text(node),
                    "op": public_op(node.op),
                    "exponent": number(node.exponent) if node.op == "**k" else None,
                    "kind": node.kind,
                    "data": number(node.data),
                    "grad": number(self.grads[node.id]),
                    "correct_grad": number(self.correct_grads[node.id]),
                    "derived": derived,
                    "expansion": say.expansion(node) if derived else None,
                    "span": [node.start, node.end],
                    "inputs": [f"n{c.id}" for c in node.inputs],
                    "warnings": [{"type": warning, "message": _warning_message(warning, node, say)}]
                    if warning
                    else [],
                }
            )
            base = self.offsets[node.id]
            for index, (child, local) in enumerate(zip(node.inputs, node.local_grads, strict=True)):
                edges.append(
                    {
                        "id": f"e{base + index}",
                        "source": f"n{child.id}",
                        "target": f"n{node.id}",
                        "index": index,
                        "local_grad": number(local),
                    }
                )
        check = dict(self.gradcheck)
        check["results"] = [
            {**r, "analytic": number(r["analytic"]), "numeric": number(r["numeric"])}
            for r in check["results"]
        ]
        return {
            "nodes": nodes,
            "edges": edges,
            "root": f"n{graph.root.id}",
            "leaves": [
                {"name": name, "id": f"n{node.id}", "value": number(node.data)}
                for name, node in graph.leaves
            ],
            "steps": self.steps,
            "gradcheck": check,
            "warnings": self.warnings,
            "mode": self.mode,
            "order": list(self.order) if self.order is not None else None,
            "order_check": self.order_check,
            "source": self.source,
        }


def _warning_message(kind: str, node: Value, say: Narrator) -> str:
    shown = say.formula_of_numbers(node) if node.inputs else say.text(node)
    result = fmt(node.data)
    if kind == "division_by_zero":
        return f"{shown} divides by zero: {result}"
    if kind == "overflow":
        return f"{shown} is too large for a float: {result}"
    return f"{shown} is not a real number: {result}"


def trace(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    expand_derived: bool = False,
    mode: str = "correct",
    order: list[str] | None = None,
    limits: Limits | None = None,
) -> Trace:
    """Parse, build, sort, run forward and backward (and the requested variant) and check the
    gradients. Raises a ProgramError subclass for a bad program, values or order; never
    anything else for any `source` string."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    with cycle_collector_paused():
        graph = build_graph(source, values, expand_derived=expand_derived, limits=limits)
        return Trace(graph, mode, order)
