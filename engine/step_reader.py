"""The one reader of a reply's timeline in Python (the page's is static/js/core/step-columns.js).

A trace's reply (`POST /api/graph`, `Trace.to_dict()`) sends its `steps` as columns (docs/api.md,
"Steps"): per step its phase, node and template (an index into `templates`, the patterns), the
sort's action and input index, and the backward pass's numbers as flat arrays. `step_objects`
turns them into one dict per step, the fields a step has always had (`index`, `phase`, `node`,
`template`, and those of its phase), everything else read from the reply's nodes and edges.

A pattern is a template (engine/narration.py) whose slots may name their INDEX relative to the
step: `node` (the step's node), `in<j>` (its j-th input), `e<j>` (its j-th input edge), `c<j>`
(the j-th contribution of its visit) and `visit` (the visit's position among the backward
steps). `resolve` writes them as the plain indices of the step, giving the step's template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# `{{`, `}}` (kept as they are), or a slot whose INDEX names a part of the step.
REF = re.compile(r"\{\{|\}\}|\{([nft]):([a-z_]+):(?:(node|visit)|(in|e|c)(\d+))\}")


def resolve(
    pattern: str,
    node: int,
    inputs: Sequence[int],
    edge: int = 0,
    contribution: int = 0,
    visit: int = 0,
) -> str:
    """`pattern` with each relative INDEX written as the index it names for a step on `node`
    (its `inputs`, its first input `edge`, its visit's first `contribution` and the `visit`)."""
    if "{" not in pattern:
        return pattern

    def index(match: re.Match[str]) -> str:
        whole, numbered = match.group(3), match.group(4)
        if whole is None and numbered is None:
            return match.group()  # a literal brace
        if whole is not None:
            at = node if whole == "node" else visit
        else:
            j = int(match.group(5))
            at = inputs[j] if numbered == "in" else (edge if numbered == "e" else contribution) + j
        return f"{{{match.group(1)}:{match.group(2)}:{at}}}"

    return REF.sub(index, pattern)


def node_inputs(nodes: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """Each node's inputs as node indices (ids are `n` + index)."""
    return [[int(name[1:]) for name in node["inputs"]] for node in nodes]


def edge_offsets_of(inputs: Sequence[Sequence[int]]) -> list[int]:
    """Each node's first input edge (edges are numbered in (target, index) order)."""
    offsets, total = [], 0
    for node_inputs_ in inputs:
        offsets.append(total)
        total += len(node_inputs_)
    return offsets


def _topo_fields(action: str, node: int, at: int | None, inputs: Sequence[int]) -> dict[str, Any]:
    """A sort step's `action`, and what it pops, looks at, pushes and emits."""
    name = f"n{node}"
    looked = None if action in ("start", "emit") else f"n{inputs[at]}"  # type: ignore[index]
    pushed: list[list[Any]] = {
        "start": [[name, 0]],
        "visit": [[name, (at or 0) + 1], [looked, 0]],
        "skip": [[name, (at or 0) + 1]],
        "emit": [],
    }[action]
    return {
        "action": action,
        "pop": None if action == "start" else [name, at],
        "input": looked,
        "pushed": pushed,
        "emitted": name if action == "emit" else None,
    }


def step_objects(reply: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The steps of a trace's reply, one dict per step (docs/api.md, "Step objects")."""
    columns, nodes, edges = reply["steps"], reply["nodes"], reply["edges"]
    inputs = node_inputs(nodes)
    offsets = edge_offsets_of(inputs)
    patterns, actions, input_index = columns["templates"], columns["action"], columns["input_index"]
    step_grad, contribution = columns["step_grad"], columns["contribution"]
    before, after = columns["grad_before"], columns["grad_after"]
    lost, late = set(columns["lost"]), set(columns["late"])
    tangent_contribution = columns["tangent_contribution"]
    found = []
    visit = first = 0  # the next backward step's visit and first contribution
    for index, (phase, node, template) in enumerate(
        zip(columns["phase"], columns["node"], columns["template"], strict=True)
    ):
        ins, edge, written = inputs[node], offsets[node], nodes[node]
        step: dict[str, Any] = {
            "phase": phase,
            "node": f"n{node}",
            "template": resolve(patterns[template], node, ins, edge, first, visit),
        }
        if phase == "topo":
            step.update(_topo_fields(actions[index], node, input_index[index], ins))
        elif phase in ("forward", "tangent"):
            step.update(op=written["op"], inputs=list(written["inputs"]), data=written["data"])
        elif phase == "seed":
            step["grad"] = 1.0
        if phase == "tangent":
            step["tangent"] = written["tangent"]
            step["contributions"] = [
                {
                    "edge": f"e{edge + j}",
                    "from": f"n{child}",
                    "tangent_in": nodes[child]["tangent"],
                    "local": edges[edge + j]["local_grad"],
                    "contribution": tangent_contribution[edge + j],
                }  # fmt: skip
                for j, child in enumerate(ins)
            ]
        if phase == "backward":
            upstream = step_grad[visit]
            step["grad"] = upstream
            step["contributions"] = [
                {
                    "edge": f"e{edge + j}",
                    "to": f"n{child}",
                    "upstream": upstream,
                    "local": edges[edge + j]["local_grad"],
                    "contribution": contribution[k],
                    "grad_before": before[k],
                    "grad_after": after[k],
                    "lost": k in lost,
                    "late": k in late,
                }  # fmt: skip
                for j, child in enumerate(ins)
                for k in (first + j,)
            ]
            visit, first = visit + 1, first + len(ins)
        step["index"] = index
        found.append(step)
    return found
