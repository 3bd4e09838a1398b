"""The timeline of a trace: the steps of the sort, the forward pass, the seed and the backward
pass, a function of the trace record (engine/tracing.py), made as columns (`Timeline`): per step
its phase, its node and its narration's pattern, an index into the timeline's table of patterns
in the reader's language (the catalogue's `narration.*` sentences, engine/i18n.py, with slots
for its numbers and the nodes it names, engine/narration.py). Steps alike share a pattern: the
slots of a pattern name the step's own node, inputs, edges and contributions (`{t:text:node}`,
`{f:local_grad:e0}`; engine/step_reader.py), so a timeline of 30,000 steps holds a few dozen
sentences. The reply (engine/reply.py) writes the columns out as they are, and whoever shows
them reads them with the one reader of each side (engine/step_reader.py, the page's
step-columns.js) and fills the templates (`narration.narrations`, the page's narration.js)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .cancel import check as check_cancelled
from .functions import narrated_definition
from .i18n import templates, text
from .narration import NODE_NAME, Narrator, escape, operand_slot, slot, text_slot
from .step_reader import resolve
from .topo import sort_steps

if TYPE_CHECKING:
    from .tracing import Trace
    from .value import Value


@dataclass
class Patterns:
    """The table of a timeline's patterns: each one once, in the order first used."""

    ids: dict[str, int] = field(default_factory=dict)

    def id(self, pattern: str) -> int:
        found = self.ids.get(pattern)
        if found is None:
            found = self.ids[pattern] = len(self.ids)
        return found


@dataclass(frozen=True)
class Timeline:
    """The steps as columns: per step its `phase`, `node` (id) and `template` (an index into
    `templates`, the patterns); per step of the sort (the first `len(action)` steps) its
    `action` (start, visit, skip, emit) and `input_index`, the input it looks at (None at the
    start). A backward step's numbers are the trace record's, in the timeline's order."""

    phase: list[str]
    node: list[int]
    template: list[int]
    templates: list[str]
    action: list[str]
    input_index: list[int | None]

    def __len__(self) -> int:
        return len(self.phase)


def steps(trace: Trace) -> Timeline:
    """The timeline of `trace`: topo (every event of the sort), forward, seed, backward; in
    forward mode, topo then one tangent step per node."""
    say, patterns = trace.narrator, Patterns()
    # the order the backward pass walks: from its target
    action, input_index, node, template = topo_columns(trace.target, trace.lang, patterns)
    phase = ["topo"] * len(node)
    check_cancelled()
    if trace.tangents is not None:
        nodes, ids = tangent_columns(trace, say, patterns)
        phase += ["tangent"] * len(nodes)
    else:
        forward_nodes, forward_ids = forward_columns(trace.topo_order, say, trace.lang, patterns)
        check_cancelled()
        visits, visit_ids = backward_columns(trace, say, patterns)
        nodes = [*forward_nodes, trace.target.id, *visits]
        ids = [*forward_ids, patterns.id(seed_pattern(trace)), *visit_ids]
        phase += ["forward"] * len(forward_nodes) + ["seed"] + ["backward"] * len(visits)
    return Timeline(phase, node + nodes, template + ids, list(patterns.ids), action, input_index)


def seed_pattern(trace: Trace) -> str:
    """The seed's sentence: grad[root] = 1, or for another target, that it is the one seeded
    and how many nodes it does not depend on (they keep grad 0)."""
    if trace.target is trace.root:
        return text(trace.lang, "narration.seed", name=NODE_NAME)
    others = len(trace.nodes) - len(trace.cone)
    return text(trace.lang, "narration.seed_target", name=NODE_NAME, count=others)


def topo_columns(
    root: Value, lang: str, patterns: Patterns
) -> tuple[list[str], list[int | None], list[int], list[int]]:
    """The sort's steps from `root` (`topo.sort_steps`): action, input index, node and pattern.

    Steps carry what they look at, not the whole stack: listing the stack after every step would
    make the timeline grow with the square of the graph. A reader rebuilds what each step pops
    and pushes (engine/step_reader.py), and the stack and sorted list after each step by
    replaying them (`replay_topo`; the page's `timeline.js`). The sort depends on no number,
    so its patterns hold no number slots, only names; they differ by action and input index."""
    actions, indices, nodes = sort_steps(root)
    words = templates(lang, "narration.topo.")
    # Each (action, index) met, in the order first met: the patterns' ids in that order.
    ids = {
        key: patterns.id(_topo_pattern(words, *key))
        for key in dict.fromkeys(zip(actions, indices, strict=True))
    }
    used = [ids[key] for key in zip(actions, indices, strict=True)]
    shown: list[int | None] = list(indices)
    shown[0] = None  # the start looks at no input
    return actions, shown, [node.id for node in nodes], used


def _topo_pattern(words: dict[str, str], action: str, index: int) -> str:
    if action == "start":
        return words["start"].format(name=NODE_NAME)
    if action == "emit" and index:  # a node emits once all its `index` inputs are done
        return words["emit"].format(name=NODE_NAME, index=index, count=index)
    if action == "emit":
        return words["emit_leaf"].format(name=NODE_NAME)
    other = text_slot(f"in{index}")
    return words[action].format(name=NODE_NAME, index=index, input=other, next=index + 1)


def replay_topo(steps: list[dict[str, Any]]) -> list[tuple[list[list[Any]], list[str]]]:
    """The stack (bottom first) and the sorted ids after each `topo` step of a reply's steps
    (`step_reader.step_objects`), rebuilt from what each pops, pushes and emits."""
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


def forward_columns(
    order: tuple[Value, ...], say: Narrator, lang: str, patterns: Patterns
) -> tuple[list[int], list[int]]:
    """One step per node in topological order (its inputs, operation and data): nodes and
    patterns."""
    words = templates(lang, "narration.forward.")
    by_kind = {
        kind: patterns.id(words[kind].format(name=NODE_NAME, value=slot("data", "node")))
        for kind in ("leaf", "const")
    }
    result = slot("data", "node")
    made: dict[tuple[str, str], int] = {}  # each pattern's id by its title and formula
    title, formula = say.title_pattern, say.formula_pattern
    nodes, used = [], []
    for node in order:
        nodes.append(node.id)
        if node.kind == "op":
            key = (title(node), formula(node))
            found = made.get(key)
            if found is None:
                # A formula is read the same in every language: no words to translate.
                found = made[key] = patterns.id(f"{key[0]} = {key[1]} = {result}")
            used.append(found)
        else:
            used.append(by_kind[node.kind])
    return nodes, used


def backward_columns(
    trace: Trace, say: Narrator, patterns: Patterns
) -> tuple[list[int], list[int]]:
    """One step per visit of the recorded pass, its sentence holding its contributions: the
    nodes visited and the patterns. Visits alike (a title, a count of contributions, nothing
    late or overwritten) share one."""
    words = templates(trace.lang, "narration.backward.")
    record, nodes = trace.record, trace.nodes
    marked = bool(record.late or record.replaced)
    sign = "=" if trace.mode == "overwrite" else "+="
    alike: dict[tuple[str, int], int] = {}
    passing = {
        kind: patterns.id(
            words[kind].format(title=NODE_NAME, name=NODE_NAME, grad=slot("step_grad", "visit"))
        )
        for kind in ("leaf", "const")
    }
    used = []
    for visit, node_id in enumerate(record.visits):
        node = nodes[node_id]
        first, last = record.starts[visit], record.starts[visit + 1]
        if first == last:
            used.append(passing["leaf" if node.kind == "leaf" else "const"])
            continue
        title = say.title_pattern(node)
        plain = node.function is None and not (
            marked and any(_marked(record, k) for k in range(first, last))
        )
        key = (title, last - first)
        if plain and key in alike:
            used.append(alike[key])
            continue
        parts = [
            _contribution(trace, say, words, (visit, first, j), title, sign)
            for j in range(last - first)
        ]
        found = patterns.id(words["visit"].format(title=title, contributions=", ".join(parts)))
        if plain:
            alike[key] = found
        used.append(found)
    return list(record.visits), used


def _marked(record: Any, k: int) -> bool:
    return k in record.late or k in (record.replaced or {})


def _contribution(
    trace: Trace,
    say: Narrator,
    words: dict[str, str],
    at: tuple[int, int, int],
    title: str,
    sign: str,
) -> str:
    """Contribution j of a visit (`at`: the visit, its first contribution, j) in words:
    `grad[a] += 2 × 3 = 6`, and what a variant did to it (overwrote an earlier one; arrived too
    late)."""
    visit, first, j = at
    record, k = trace.record, first + j
    target = text_slot(f"in{j}")
    added = slot("contribution", f"c{j}")
    part = upstream_times_local(
        f"grad[{target}] {sign}",
        operand_slot("step_grad", "visit"),
        operand_slot("local_grad", f"e{j}"),
        added,
    )
    function = trace.nodes[record.visits[visit]].function
    if function is not None:  # where the local derivative of the program's function comes from
        part = words["function"].format(
            contribution=part, name=escape(function.name), param=escape(function.params[j]),
            local=slot("local_grad", f"e{j}"), body=escape(narrated_definition(function)),
        )  # fmt: skip
    replaced = (record.replaced or {}).get(k)
    if replaced is not None:  # the one it overwrote: another visit's, named by plain indices
        source = trace.nodes[record.visits[record_visit_of(record, replaced)]]
        part = words["overwritten"].format(
            contribution=part, target=target, lost=slot("contribution", replaced),
            source=resolve(say.title_pattern(source), source.id, [c.id for c in source.inputs]),
            title=title, added=added,
        )  # fmt: skip
    if k in record.late:
        part = words["late"].format(contribution=part, target=target)
    return part


def record_visit_of(record: Any, contribution: int) -> int:
    """The visit whose contributions include `contribution`."""
    return bisect_right(record.starts, contribution) - 1


def upstream_times_local(receiver: str, upstream: str, local: str, contribution: str) -> str:
    """`grad[a] += 2 × 3 = 6`: a contribution's arithmetic, read the same in every language."""
    return f"{receiver} {upstream} × {local} = {contribution}"


def tangent_columns(trace: Trace, say: Narrator, patterns: Patterns) -> tuple[list[int], list[int]]:
    """One step per node in topological order: its value and its tangent, the sum of its
    inputs' tangents times the local derivatives (`ṫ[c] = 1 × 3 + 0 × 2 = 3`): nodes and
    patterns."""
    words = templates(trace.lang, "narration.tangent.")
    tangents = trace.tangents
    wrt = text_slot(tangents.wrt.id)  # type: ignore[union-attr]  # one leaf for every step
    value, tangent = slot("data", "node"), slot("tangent", "node")
    nodes, used = [], []
    for node in trace.topo_order:
        nodes.append(node.id)
        if node.kind == "op":
            products = " + ".join(
                f"{operand_slot('tangent', f'in{j}')} × {operand_slot('local_grad', f'e{j}')}"
                for j in range(len(node.inputs))
            )
            pattern = words["op"].format(
                title=say.title_pattern(node), formula=say.formula_pattern(node), data=value,
                name=NODE_NAME, wrt=wrt, products=products, tangent=tangent,
            )  # fmt: skip
        else:
            kind = "seed" if node is tangents.wrt else node.kind  # type: ignore[union-attr]
            pattern = words[kind].format(name=NODE_NAME, wrt=wrt, value=value)
        used.append(patterns.id(pattern))
    return nodes, used
