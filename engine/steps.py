"""The timeline: the steps of the sort, the forward pass and the backward pass, each with its
narration template (engine/narration.py) in the reader's language (the catalogue's
`narration.*` sentences, engine/i18n.py); `narrate` fills the templates with the numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .backward import Visit
from .i18n import DEFAULT_LANG, templates, text
from .narration import Narrator, escape, filler, operand_slot, slot
from .ops import OPS
from .topo import TopoEvent
from .value import Value


def topo_steps(
    events: list[TopoEvent], say: Narrator, lang: str = DEFAULT_LANG
) -> list[dict[str, Any]]:
    """One step per event of the sort, with what it pushed and emitted.

    Steps carry deltas, not the whole stack: listing the stack after every step would make the
    timeline grow with the square of the graph. `replay_topo` rebuilds the stack and the sorted
    list after each step (the page does the same in `timeline.js`). The sort depends on no
    number, so its templates hold no slots.
    """
    words = templates(lang, "narration.topo.")
    steps: list[dict[str, Any]] = []
    stack: list[list[Any]] = []
    for action, node, index, child in events:
        depth = len(stack) - (0 if action == "start" else 1)
        name = say.name(node)
        nid = f"n{node.id}"
        if action == "start":
            stack.append([nid, 0])
            pop = None
            template = words["start"].format(name=name)
        else:
            stack.pop()
            pop = [nid, index]
            if action == "emit":
                if node.inputs:
                    template = words["emit"].format(name=name, index=index, count=len(node.inputs))
                else:
                    template = words["emit_leaf"].format(name=name)
            else:
                assert child is not None
                stack.append([nid, index + 1])
                other = say.name(child)
                if action == "visit":
                    stack.append([f"n{child.id}", 0])
                template = words[action].format(name=name, index=index, input=other, next=index + 1)
        steps.append(
            {
                "phase": "topo",
                "node": nid,
                "narration": None,
                "template": template,
                "action": action,
                "pop": pop,
                "input": f"n{child.id}" if child is not None else None,
                "pushed": [list(entry) for entry in stack[depth:]],
                "emitted": nid if action == "emit" else None,
            }
        )
    return steps


def replay_topo(steps: list[dict[str, Any]]) -> list[tuple[list[list[Any]], list[str]]]:
    """The stack (bottom first) and the sorted ids after each `topo` step, rebuilt from deltas."""
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


def forward_steps(
    order: list[Value], say: Narrator, data: Sequence[float | str], lang: str = DEFAULT_LANG
) -> list[dict[str, Any]]:
    """One step per node in topological order: its inputs, operation and data (from `data`,
    the numbers reply's array)."""
    words = templates(lang, "narration.forward.")
    steps = []
    for node in order:
        result = slot("data", node.id)
        if node.kind == "leaf":
            template = words["leaf"].format(name=say.name(node), value=result)
        elif node.kind == "const":
            template = words["const"].format(name=say.name(node), value=result)
        else:
            # A formula is read the same in every language: no words to translate.
            template = f"{escape(say.title(node))} = {say.formula_of_slots(node)} = {result}"
        steps.append(
            {
                "phase": "forward",
                "node": f"n{node.id}",
                "narration": None,
                "template": template,
                "op": public_op(node.op),
                "inputs": [f"n{c.id}" for c in node.inputs],
                "data": data[node.id],
            }
        )
    return steps


def seed_step(root: Value, say: Narrator, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    return {
        "phase": "seed",
        "node": f"n{root.id}",
        "narration": None,
        "template": text(lang, "narration.seed", name=say.name(root)),
        "grad": 1.0,
    }


def backward_steps(
    visits: list[Visit],
    say: Narrator,
    nodes: list[Value],
    overwrite: bool,
    numbers: Mapping[str, Sequence[Any]],
    lang: str = DEFAULT_LANG,
) -> list[dict[str, Any]]:
    """One step per visit with its contributions (their numbers from `numbers`, the numbers
    reply, where contributions are flattened in visit order) and a sentence holding the
    numbers."""
    words = templates(lang, "narration.backward.")
    # A contribution's upstream is its visit's grad and its local the edge's: the numbers reply
    # holds each once (`step_grad`, `local_grad`), and the templates point there.
    local_grad, contribution = numbers["local_grad"], numbers["contribution"]
    before, after, step_grad = numbers["grad_before"], numbers["grad_after"], numbers["step_grad"]
    sign = "=" if overwrite else "+="
    # Where each contribution sits in the flattened arrays, for the ones an overwrite replaces.
    position: dict[int, int] = {}
    k = 0
    steps = []
    for visit_index, (node, _, contributions) in enumerate(visits):
        title = escape(say.title(node))
        parts = []
        rows = []
        for record in contributions:
            target = say.name(nodes[record.to])
            added = slot("contribution", k)
            # `upstream × local = contribution` is read the same in every language.
            part = (
                f"grad[{target}] {sign} {operand_slot('step_grad', visit_index)} × "
                f"{operand_slot('local_grad', record.edge)} = {added}"
            )
            replaced = record.replaced
            if replaced is not None:
                part = words["overwritten"].format(
                    contribution=part,
                    target=target,
                    lost=slot("contribution", position[id(replaced)]),
                    source=escape(say.title(nodes[replaced.source])),
                    title=title,
                    added=added,
                )
            if overwrite:
                position[id(record)] = k
            if record.late:
                part = words["late"].format(contribution=part, target=target)
            parts.append(part)
            rows.append(
                {
                    "edge": f"e{record.edge}",
                    "to": f"n{record.to}",
                    "upstream": step_grad[visit_index],
                    "local": local_grad[record.edge],
                    "contribution": contribution[k],
                    "grad_before": before[k],
                    "grad_after": after[k],
                    "lost": record.lost,
                    "late": record.late,
                }
            )
            k += 1
        if parts:
            template = words["visit"].format(title=title, contributions=", ".join(parts))
        else:
            template = words["leaf" if node.kind == "leaf" else "const"].format(
                title=title, name=say.name(node), grad=slot("step_grad", visit_index)
            )
        steps.append(
            {
                "phase": "backward",
                "node": f"n{node.id}",
                "narration": None,
                "template": template,
                "grad": step_grad[visit_index],
                "contributions": rows,
            }
        )
    return steps


def narrate(steps: list[dict[str, Any]], numbers: Mapping[str, Sequence[Any]]) -> None:
    """Fill every step's `narration` from its `template` and `numbers`."""
    fill = filler(numbers)
    for step in steps:
        step["narration"] = fill(step["template"])


def public_op(op: str | None) -> str | None:
    """The op as the API names it (`**` with `exponent` set for a constant power)."""
    return None if op is None else OPS[op].public
