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

A reply of 40,000 nodes has 160,000 steps, so reading one is linear and a step costs a few C
calls, no Python per slot: each pattern is read once (`Pattern`) into a %-format and the
position of each of its slots among a step's parts; a step's parts are its node's (`node_parts`:
the node, its inputs, its input edges) and, for a backward step, its visit and contributions;
`operator.itemgetter` picks a slot's indices out of them. A pattern whose slots name a part its
step lacks (`in2` of a node with two inputs) is resolved as `resolve` does, index by index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import compress
from operator import itemgetter
from typing import Any

from .gc_pause import cycle_collector_paused

# `{{`, `}}` (kept as they are), or a slot whose INDEX names a part of the step.
REF = re.compile(r"\{\{|\}\}|\{([nft]):([a-z_]+):(?:(node|visit)|(in|e|c)(\d+))\}")
# A slot of a template or a pattern, its INDEX relative (as in REF) or plain (group 6).
SLOT = re.compile(r"\{\{|\}\}|\{([nft]):([a-z_]+):(?:(node|visit)|(in|e|c)(\d+)|(\d+))\}")
# The parts of a step `Pattern.format` is given, in order.
PARTS = ("node", "in", "e", "c", "visit")
# An `e<j>` or `c<j>` is the step's first edge or contribution + j, whatever j is (as the page
# writes it): `resolve` gives them as ranges without an end.
_ENDLESS = 1 << 62

Ref = tuple[str, int]  # a relative INDEX: (part, j); j is 0 for `node` and `visit`


class Pattern:
    """A pattern read once.

    `format(node, inputs, edges, contributions, visit)` writes the template of any step
    (`edges`, `contributions`: sequences of indices). `template` is the template as a %-format
    of its relative slots' indices, `refs` (one per %d); `texts` and `slots` are the narration:
    its text between slots (braces as the narration writes them, `%` doubled) and each slot,
    `(format letter, array, ref)`, the ref None for a plain INDEX (then `(…, None, index)`)."""

    __slots__ = ("format", "refs", "slots", "template", "text", "texts")

    def __init__(self, pattern: str) -> None:
        fields: list[str] = []  # the str.format of `format`
        template: list[str] = []
        texts: list[str] = []
        refs: list[Ref] = []
        slots: list[tuple[str, str, Ref | None, int]] = []
        text = ""  # the narration's text since the last slot
        at = 0
        for match in SLOT.finditer(pattern):
            between = pattern[at : match.start()]
            fields.append(_braced(between))
            template.append(_percent(between))
            text += _percent(between)
            at = match.end()
            letter, array, whole, part, j, plain = match.groups()
            if letter is None:  # `{{` or `}}`: kept in templates, one brace in narration
                fields.append(match.group() * 2)
                template.append(match.group())
                text += match.group()[0]
                continue
            texts.append(text)
            text = ""
            if plain is not None:
                fields.append(_braced(match.group()))
                template.append(match.group())
                slots.append((letter, array, None, int(plain)))
                continue
            ref = (whole, 0) if whole else (part, int(j))
            argument = str(PARTS.index(ref[0])) + ("" if whole else f"[{ref[1]}]")  # {1[0]}
            fields.append(f"{{{{{letter}:{array}:{{{argument}}}}}}}")
            template.append(f"{{{letter}:{array}:%d}}")
            refs.append(ref)
            slots.append((letter, array, ref, 0))
        fields.append(_braced(pattern[at:]))
        template.append(_percent(pattern[at:]))
        texts.append(text + _percent(pattern[at:]))
        self.format: Callable[..., str] = "".join(fields).format
        self.template = "".join(template)
        self.refs = tuple(refs)
        self.texts = tuple(texts)
        self.slots = tuple(slots)
        self.text = pattern

    def picker(self, width: int, visited: bool) -> Callable[[tuple[Any, ...]], Any] | None:
        """What picks the indices of the relative slots, in order, out of a step's parts
        (`Timeline`: its node's parts `width` wide, and with `visited` a backward step's visit
        and contributions after them): one index, or a tuple of them; None when the pattern
        has no relative slot. A slot that names a part the step lacks picks None, or is past
        the end of its parts."""
        base = {"node": 0, "in": 1, "e": 1 + width, "visit": 1 + 2 * width, "c": 2 + 2 * width}
        positions = []
        for part, j in self.refs:
            if part in ("in", "e", "c") and j >= width or part in ("visit", "c") and not visited:
                return _lacking
            positions.append(base[part] + j)
        return itemgetter(*positions) if positions else None


def _lacking(parts: tuple[Any, ...]) -> Any:
    """The picker of a pattern that names a part no step of the reply has."""
    raise LookupError("the pattern names a part the step lacks")


def _braced(text: str) -> str:
    """Pattern text outside the slots as str.format text that writes it as it is."""
    return text.replace("{", "{{").replace("}", "}}") if "{" in text or "}" in text else text


def _percent(text: str) -> str:
    """Pattern text as %-format text that writes it as it is."""
    return text.replace("%", "%%") if "%" in text else text


@lru_cache(maxsize=1024)
def pattern_of(pattern: str) -> Pattern:
    """`pattern` read (once: a timeline reuses a few dozen patterns)."""
    return Pattern(pattern)


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
    return pattern_of(pattern).format(
        node, inputs, range(edge, _ENDLESS), range(contribution, _ENDLESS), visit
    )


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


class Timeline:
    """A reply's timeline as read: its columns, each node's inputs and first input edge, and
    each step's parts (`parts`): its node's (`(node, *inputs, *input edges)`, each padded with
    None to the reply's largest number of inputs, `width`), and after them, for a backward
    step, its visit and its contributions."""

    def __init__(self, reply: Mapping[str, Any]) -> None:
        self.columns = columns = reply["steps"]
        self.phase, self.node = columns["phase"], columns["node"]
        self.template = columns["template"]
        if not len(self.phase) == len(self.node) == len(self.template):
            raise ValueError("the reply's step columns differ in length")
        self.patterns = [pattern_of(pattern) for pattern in columns["templates"]]
        self.inputs = inputs = node_inputs(reply["nodes"])
        self.offsets = offsets = edge_offsets_of(inputs)
        self.width = width = max(map(len, inputs), default=0)
        padding = [(None,) * (width - arity) for arity in range(width + 1)]
        node_parts = [
            (node, *ins, *padding[len(ins)], *range(first, first + len(ins)), *padding[len(ins)])
            for node, (ins, first) in enumerate(zip(inputs, offsets, strict=True))
        ]
        self._counters: list[tuple[int, int]] | None = None
        self.parts: list[tuple[Any, ...]] = list(map(node_parts.__getitem__, self.node))
        visit = first = 0
        for step in compress(range(len(self.phase)), map("backward".__eq__, self.phase)):
            node = self.node[step]
            arity = len(inputs[node])
            self.parts[step] += (visit, *range(first, first + arity))
            visit, first = visit + 1, first + arity

    def resolved(self, step: int) -> str:
        """The template of `step`, as `resolve` writes it (index by index)."""
        if self._counters is None:  # each step's visit and first contribution (as `resolve`'s)
            self._counters = []
            visit = first = 0
            for phase, node in zip(self.phase, self.node, strict=True):
                self._counters.append((visit, first))
                if phase == "backward":
                    visit, first = visit + 1, first + len(self.inputs[node])
        visit, first = self._counters[step]
        node = self.node[step]
        pattern = self.patterns[self.template[step]].text
        return resolve(pattern, node, self.inputs[node], self.offsets[node], first, visit)

    def pickers(self) -> tuple[list[Any], list[Any]]:
        """Each pattern's picker for the steps that are not backward steps, and for those that
        are (`Pattern.picker`)."""
        return (
            [pattern.picker(self.width, False) for pattern in self.patterns],
            [pattern.picker(self.width, True) for pattern in self.patterns],
        )

    def templates(self) -> list[str]:
        """Every step's template (its pattern resolved), in order."""
        formats = [pattern.template for pattern in self.patterns]
        constants = [None if p.refs else p.template % () for p in self.patterns]
        plain, visited = self.pickers()
        written: list[str] = []
        append = written.append
        for step, (phase, template, parts) in enumerate(
            zip(self.phase, self.template, self.parts, strict=True)
        ):
            pick = visited[template] if phase == "backward" else plain[template]
            if pick is None:
                append(constants[template])
                continue
            try:
                append(formats[template] % pick(parts))
            except (LookupError, TypeError):  # a slot names a part this step lacks
                append(self.resolved(step))
        return written


def step_objects(reply: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The steps of a trace's reply, one dict per step (docs/api.md, "Step objects")."""
    columns, nodes, edges = reply["steps"], reply["nodes"], reply["edges"]
    # Step objects hold no reference cycles: scanning the new ones is pure overhead.
    with cycle_collector_paused():
        timeline = Timeline(reply)
        templates = timeline.templates()
        inputs, offsets = timeline.inputs, timeline.offsets
        names = [f"n{index}" for index in range(len(nodes))]
        edge_names = [f"e{index}" for index in range(len(edges))]
        local_grads = [edge["local_grad"] for edge in edges]
        actions, input_index = columns["action"], columns["input_index"]
        step_grad, contribution = columns["step_grad"], columns["contribution"]
        before, after = columns["grad_before"], columns["grad_after"]
        lost, late = set(columns["lost"]), set(columns["late"])
        tangent_contribution = columns["tangent_contribution"]
        found: list[dict[str, Any]] = []
        append = found.append
        visit = first = 0  # the next backward step's visit and first contribution
        for index, (phase, node, template) in enumerate(
            zip(timeline.phase, timeline.node, templates, strict=True)
        ):
            name = names[node]
            if phase == "topo":
                action, at = actions[index], input_index[index]
                if action == "emit":
                    pop, looked, pushed = [name, at], None, []
                elif action == "start":
                    pop, looked, pushed = None, None, [[name, 0]]
                elif action == "visit":
                    looked = names[inputs[node][at]]
                    pop, pushed = [name, at], [[name, at + 1], [looked, 0]]
                elif action == "skip":
                    looked = names[inputs[node][at]]
                    pop, pushed = [name, at], [[name, at + 1]]
                else:
                    raise ValueError(f"the reply's sort has an unknown action {action!r}")
                append(
                    {
                        "phase": phase,
                        "node": name,
                        "template": template,
                        "action": action,
                        "pop": pop,
                        "input": looked,
                        "pushed": pushed,
                        "emitted": name if action == "emit" else None,
                        "index": index,
                    }
                )
                continue
            step: dict[str, Any] = {"phase": phase, "node": name, "template": template}
            if phase == "backward":
                upstream = step["grad"] = step_grad[visit]
                edge = offsets[node]
                step["contributions"] = [
                    {
                        "edge": edge_names[edge + j],
                        "to": names[child],
                        "upstream": upstream,
                        "local": local_grads[edge + j],
                        "contribution": contribution[first + j],
                        "grad_before": before[first + j],
                        "grad_after": after[first + j],
                        "lost": first + j in lost,
                        "late": first + j in late,
                    }
                    for j, child in enumerate(inputs[node])
                ]
                visit, first = visit + 1, first + len(inputs[node])
            elif phase == "seed":
                step["grad"] = 1.0
            else:  # forward, tangent
                written = nodes[node]
                step["op"] = written["op"]
                step["inputs"] = list(written["inputs"])
                step["data"] = written["data"]
                if phase == "tangent":
                    edge = offsets[node]
                    step["tangent"] = written["tangent"]
                    step["contributions"] = [
                        {
                            "edge": edge_names[edge + j],
                            "from": names[child],
                            "tangent_in": nodes[child]["tangent"],
                            "local": local_grads[edge + j],
                            "contribution": tangent_contribution[edge + j],
                        }
                        for j, child in enumerate(inputs[node])
                    ]
            step["index"] = index
            append(step)
    return found
