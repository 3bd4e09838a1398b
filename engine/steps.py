"""The timeline of a trace: the steps of the sort, the forward pass, the seed and the backward
pass, a function of the trace record (engine/tracing.py). A step holds what it is about (node
ids, the visit it shows) and its narration template in the reader's language (the catalogue's
`narration.*` sentences, engine/i18n.py) with slots for its numbers and the nodes it names
(engine/narration.py); the reply (engine/reply.py) writes it out as it is, and whoever shows
it fills it (`narration.narrations`, the page's narration.js)."""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Any, NamedTuple

from .i18n import templates, text
from .narration import Narrator, escape, name_slot, operand_slot, slot
from .topo import TopoEvent, topo_order
from .value import Value

if TYPE_CHECKING:
    from .tracing import Trace

Entry = tuple[int, int]  # a stack entry of the sort: (node id, input index)


class TopoStep(NamedTuple):
    """A step of the sort: its `action` on `node` (start, visit, skip, emit), the entry it
    popped, the input it looked at, the entries it pushed and the node it emitted."""

    node: int
    action: str
    pop: Entry | None
    input: int | None
    pushed: tuple[Entry, ...]
    emitted: int | None
    template: str


class ForwardStep(NamedTuple):
    node: Value
    template: str


class SeedStep(NamedTuple):
    node: Value
    template: str


class BackwardStep(NamedTuple):
    """The `visit`-th visit of the recorded backward pass (its node and contributions are the
    record's)."""

    visit: int
    node: Value
    template: str


class TangentStep(NamedTuple):
    """A step of forward mode: `node`'s value and its tangent ∂node/∂wrt, from its inputs'."""

    node: Value
    template: str


Step = TopoStep | ForwardStep | SeedStep | BackwardStep | TangentStep


def steps(trace: Trace) -> list[Step]:
    """The timeline of `trace`: topo (every event of the sort), forward, seed, backward; in
    forward mode, topo then one tangent step per node."""
    say = trace.narrator
    events: list[TopoEvent] = []
    topo_order(trace.target, events)  # the order the backward pass walks: from its target
    if trace.tangents is not None:
        return [*topo_steps(events, trace.lang, say.slots), *tangent_steps(trace, say)]
    return [
        *topo_steps(events, trace.lang, say.slots),
        *forward_steps(trace.topo_order, say, trace.lang),
        SeedStep(trace.target, seed_template(trace)),
        *backward_steps(trace, say),
    ]


def seed_template(trace: Trace) -> str:
    """The seed's sentence: grad[root] = 1, or for another target, that it is the one seeded
    and how many nodes it does not depend on (they keep grad 0)."""
    name = name_slot(trace.target)
    if trace.target is trace.root:
        return text(trace.lang, "narration.seed", name=name)
    others = len(trace.nodes) - len(trace.cone)
    return text(trace.lang, "narration.seed_target", name=name, count=others)


def topo_steps(events: list[TopoEvent], lang: str, slots: list[str]) -> list[TopoStep]:
    """One step per event of the sort, with what it pushed and emitted.

    Steps carry deltas, not the whole stack: listing the stack after every step would make the
    timeline grow with the square of the graph. `replay_topo` rebuilds the stack and the sorted
    list after each step (the page does the same in `timeline.js`). The sort depends on no
    number, so its templates hold no number slots, only the nodes' names (`slots`, by id).
    """
    words = templates(lang, "narration.topo.")
    found: list[TopoStep] = []
    stack: list[Entry] = []
    for action, node, index, child in events:
        depth = len(stack) - (0 if action == "start" else 1)
        pop = None if action == "start" else stack.pop()
        if action in ("visit", "skip"):
            stack.append((node.id, index + 1))
        if action == "visit":
            stack.append((child.id, 0))  # type: ignore[union-attr]
        elif action == "start":
            stack.append((node.id, 0))
        template = _topo_template(words, slots, action, node, index, child)
        found.append(
            TopoStep(
                node.id, action, pop, None if child is None else child.id, tuple(stack[depth:]),
                node.id if action == "emit" else None, template,
            )
        )  # fmt: skip
    return found


def _topo_template(
    words: dict[str, str],
    slots: list[str],
    action: str,
    node: Value,
    index: int,
    child: Value | None,
) -> str:
    name = slots[node.id]
    if action == "start":
        return words["start"].format(name=name)
    if action == "emit" and node.inputs:
        return words["emit"].format(name=name, index=index, count=len(node.inputs))
    if action == "emit":
        return words["emit_leaf"].format(name=name)
    other = slots[child.id]  # type: ignore[union-attr]
    return words[action].format(name=name, index=index, input=other, next=index + 1)


def replay_topo(steps: list[dict[str, Any]]) -> list[tuple[list[list[Any]], list[str]]]:
    """The stack (bottom first) and the sorted ids after each `topo` step of a reply's steps,
    rebuilt from their deltas."""
    stack: list[list[Any]] = []
    done: list[str] = []
    states = []
    for step in steps:
        if step["phase"] != "topo":
            continue
        if step["pop"] is not None:
            stack.pop()
        stack.extend(list(entry) for entry in step["pushed"])
        if step["emitted"] is not None:
            done.append(step["emitted"])
        states.append(([list(entry) for entry in stack], list(done)))
    return states


def forward_steps(order: tuple[Value, ...], say: Narrator, lang: str) -> list[ForwardStep]:
    """One step per node in topological order: its inputs, operation and data."""
    words = templates(lang, "narration.forward.")
    found = []
    for node in order:
        result = slot("data", node.id)
        if node.kind == "op":
            # A formula is read the same in every language: no words to translate.
            template = f"{say.title_of_slots(node)} = {say.formula_of_slots(node)} = {result}"
        else:
            template = words[node.kind].format(name=say.slots[node.id], value=result)
        found.append(ForwardStep(node, template))
    return found


def backward_steps(trace: Trace, say: Narrator) -> list[BackwardStep]:
    """One step per visit of the recorded pass, its sentence holding its contributions."""
    words = templates(trace.lang, "narration.backward.")
    record, nodes = trace.record, trace.nodes
    found = []
    for visit, node_id in enumerate(record.visits):
        node = nodes[node_id]
        title = say.title_of_slots(node)
        first, last = record.starts[visit], record.starts[visit + 1]
        parts = [_contribution(trace, say, words, visit, k, title) for k in range(first, last)]
        if parts:
            template = words["visit"].format(title=title, contributions=", ".join(parts))
        else:
            template = words["leaf" if node.kind == "leaf" else "const"].format(
                title=title, name=say.slots[node_id], grad=slot("step_grad", visit)
            )
        found.append(BackwardStep(visit, node, template))
    return found


def _contribution(
    trace: Trace, say: Narrator, words: dict[str, str], visit: int, k: int, title: str
) -> str:
    """Contribution `k` (of the visit `visit`) in words: `grad[a] += 2 × 3 = 6`, and what a
    variant did to it (overwrote an earlier one; arrived too late)."""
    record = trace.record
    target = say.slots[record.to[k]]
    sign = "=" if trace.mode == "overwrite" else "+="
    added = slot("contribution", k)
    part = upstream_times_local(
        f"grad[{target}] {sign}",
        operand_slot("step_grad", visit),
        operand_slot("local_grad", record.edge[k]),
        added,
    )
    function = trace.nodes[record.visits[visit]].function
    if function is not None:  # where the local derivative of the program's function comes from
        part = words["function"].format(
            contribution=part, name=escape(function.name),
            param=escape(function.params[k - record.starts[visit]]),
            local=slot("local_grad", record.edge[k]), body=escape(function.definition),
        )  # fmt: skip
    replaced = (record.replaced or {}).get(k)
    if replaced is not None:
        source = trace.nodes[record.visits[bisect_right(record.starts, replaced) - 1]]
        part = words["overwritten"].format(
            contribution=part, target=target, lost=slot("contribution", replaced),
            source=say.title_of_slots(source), title=title, added=added,
        )  # fmt: skip
    if k in record.late:
        part = words["late"].format(contribution=part, target=target)
    return part


def upstream_times_local(receiver: str, upstream: str, local: str, contribution: str) -> str:
    """`grad[a] += 2 × 3 = 6`: a contribution's arithmetic, read the same in every language."""
    return f"{receiver} {upstream} × {local} = {contribution}"


def tangent_steps(trace: Trace, say: Narrator) -> list[TangentStep]:
    """One step per node in topological order: its value and its tangent, the sum of its
    inputs' tangents times the local derivatives (`ṫ[c] = 1 × 3 + 0 × 2 = 3`)."""
    words = templates(trace.lang, "narration.tangent.")
    wrt = name_slot(trace.tangents.wrt)  # type: ignore[arg-type, union-attr]
    offsets = trace.tangents.first_edge  # type: ignore[union-attr]
    found = []
    for node in trace.topo_order:
        name, tangent = name_slot(node), slot("tangent", node.id)
        if node.kind == "op":
            first = offsets[node.id]
            products = " + ".join(
                f"{operand_slot('tangent', child.id)} × {operand_slot('local_grad', first + k)}"
                for k, child in enumerate(node.inputs)
            )
            template = words["op"].format(
                title=say.title_of_slots(node), formula=say.formula_of_slots(node),
                data=slot("data", node.id), name=name, wrt=wrt, products=products, tangent=tangent,
            )  # fmt: skip
        else:
            kind = "seed" if node is trace.tangents.wrt else node.kind  # type: ignore[union-attr]
            template = words[kind].format(name=name, wrt=wrt, value=slot("data", node.id))
        found.append(TangentStep(node, template))
    return found
