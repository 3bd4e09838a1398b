"""The overview of a model's graph: its statements grouped the way the code is (issue 42).

A model run on several samples and then reduced (micrograd's demo: `MLP(2, [16, 16, 1])` on 100
moons, a max-margin loss, L2 regularisation) is thousands of statements: one a neuron a sample
(the reader names each after where its parameters live, `model.layers[1].neurons[3]₂`). The
overview is the level above them, read from the graph's structure and the names the reader
already gives, never from what the model is:

- a *parameter* is a leaf named after the place it lives (`model.layers[0].neurons[3].w[1]`: a
  name with `.` or `[…]`); every other leaf is *data* (a sample's inputs, `v1`, `v2`). Where no
  leaf has a place (a model made in a function that returned its loss alone), parameters are
  told from data by structure (`_unnamed_parameters`), and the overview is kept only if it
  finds two samples or more, alike (two statements or more each, none more than twice
  another), its layers then by depth;
- data leaves that one statement reads together are one *sample* (a forward pass reads its
  input's coordinates in every neuron of the first layer); where no two samples are leaves, a
  sample's data may be plain numbers (the lecture's `n(x)` of a list of floats: each product
  `w * 0.69` wraps its number in a constant of its own), and the statements that read no other
  and combine parameters with the same constants, in the same order, are one sample;
- each statement belongs to a *part*: the sample whose data it depends on (directly or through
  the statements it reads), the part of the parameters alone (the regulariser: it reads no data)
  or the part that combines samples (the loss);
- inside a part, statements fall into *layers*: the place a statement is named after, cut after
  its first index (`model.layers[1].neurons[3]₂` is in `model.layers[1]`); a statement with no
  place is a layer of its own name (`total_loss`).

A graph without parameters, or whose data make fewer than two samples, has no overview (None):
the page draws it as before. Groups are structure, not numbers: the overview depends on the
graph's shape, its names and its constants (which are the program's, as its ops are: a slider
moves leaves only).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .narration import fmt

# A place: a name followed by attributes and indices (`model.layers[0].neurons[3].w[1]`).
PLACE = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*|\[[^\]]*\])+")
# A layer is the place up to its first index (`model.layers[1]`).
FIRST_INDEX = re.compile(r"^[^\[]*\[[^\]]*\]")
# The version a name's later statements carry (`…neurons[3]₂`).
VERSION = re.compile(r"[₀-₉]+$")
# The kinds of parts, in the order the overview lists them after the samples.
SAMPLE, PARAMETERS, COMBINED = "sample", "parameters", "combined"


def layer_of(name: str) -> str:
    """The layer a statement named `name` is in: its place up to the first index, else itself."""
    place = VERSION.sub("", name)
    if PLACE.fullmatch(place) and (first := FIRST_INDEX.match(place)):
        return first.group(0)
    return name


def overview_of(
    groups: list[tuple[str, int, tuple[int, ...]]],
    inputs: list[tuple[int, ...]],
    names: list[str],
    constants: Mapping[int, float] | None = None,
) -> dict[str, Any] | None:
    """The overview of a graph (module docstring): `groups` as the builder makes them (kind,
    root, members), `inputs[i]` node i's input ids, `names[g]` group g's name, `constants` the
    value of each constant node by id. Returns {parts: [{id, kind, index, name, root, inputs,
    layers: [{name, groups}]}]} (ids as in the reply: `p0`, `g12`), or None when the graph has
    no such level."""
    group_of = [0] * len(inputs)
    for g, (_, _, members) in enumerate(groups):
        for i in members:
            group_of[i] = g
    leaf = [kind == "leaf" for kind, _, _ in groups]
    # Which groups each statement reads, each once: leaves, and statements.
    read_all: dict[int, tuple[list[int], list[int]]] = {}
    for g, (kind, _, members) in enumerate(groups):
        if kind != "statement":
            continue
        read = {group_of[j] for i in members for j in inputs[i]}
        read.discard(g)
        read_all[g] = ([h for h in read if leaf[h]], [h for h in read if not leaf[h]])
    parameter = [leaf[g] and PLACE.fullmatch(names[g]) is not None for g in range(len(groups))]
    unnamed = not any(parameter)
    if unnamed:
        parameter = _unnamed_parameters(read_all, len(groups))
        if not any(parameter):
            return None
    # The data leaves a statement reads together are one sample's.
    parent = {}

    def find(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    reads: dict[int, tuple[list[int], list[int]]] = {}  # statement → (data leaves, statements)
    for g, (leaves, statements) in read_all.items():
        data = [h for h in leaves if not parameter[h]]
        for h in data:
            parent.setdefault(h, h)
        for h in data[1:]:
            parent[find(h)] = find(data[0])
        reads[g] = (data, statements)
    samples: dict[int, int] = {}  # a sample's representative leaf → its number (0-based)
    for data, _ in reads.values():  # numbered by the first statement that reads them
        for h in data:
            samples.setdefault(find(h), len(samples))
    own: dict[int, int] = {}  # statement → the samples it reads itself, as bits
    for g, (data, _) in reads.items():
        for h in data:
            own[g] = own.get(g, 0) | 1 << samples[find(h)]
    inputs_of: list[list[int]] = [[] for _ in samples]
    for h in parent:
        inputs_of[samples[find(h)]].append(h)
    inputs_of = [sorted(leaves) for leaves in inputs_of]
    sample_names = [", ".join(names[h] for h in leaves) for leaves in inputs_of]
    if len(samples) < 2 and constants:
        # No samples of leaves: the data may be plain numbers, which each weight's product wraps
        # in a constant of its own (`w * 0.69`: the lecture's `n(x)` of a list of floats).
        numbers, sample_of = _constant_samples(
            groups, inputs, group_of, parameter, constants, reads
        )
        if len(numbers) >= 2:
            own = {g: 1 << k for g, k in sample_of.items()}
            inputs_of = [[] for _ in numbers]
            sample_names = [", ".join(map(fmt, values)) for values in numbers]
    if len(inputs_of) < 2:
        return None
    depends: dict[int, int] = {}  # statement → the samples it depends on, as bits
    for g, (_, statements) in reads.items():  # groups are in build order: inputs first
        bits = own.get(g, 0)
        for h in statements:
            bits |= depends[h]
        depends[g] = bits
    sample_parts: list[list[int]] = [[] for _ in inputs_of]
    others: dict[str, list[int]] = {PARAMETERS: [], COMBINED: []}
    for g, bits in depends.items():
        if bits and bits & (bits - 1) == 0:
            sample_parts[bits.bit_length() - 1].append(g)
        else:
            others[COMBINED if bits else PARAMETERS].append(g)
    sizes = [len(members) for members in sample_parts if members]
    if unnamed and (len(sizes) < 2 or min(sizes) < 2 or max(sizes) > 2 * min(sizes)):
        # Parameters told from data by structure alone: two samples or more, alike, of a model
        # (two statements a sample or more, `b = a + 1; c = a * 3` are no samples of one; none
        # more than twice another, as the reader writes one network's pass: micrograd's demo's
        # 100 moons are 18 or 19 statements each, as its long sums are cut).
        return None
    layers = _layers_by_depth if unnamed else _layers
    # A sample no statement reads alone (every reader mixes it with another) has no part. A
    # part's name is in the program's words (the page writes its own caption from `kind`): a
    # sample's inputs, or its numbers.
    parts = [
        (SAMPLE, k + 1, members, inputs_of[k], sample_names[k])
        for k, members in enumerate(sample_parts)
        if members
    ]
    parts += [(kind, 0, members, [], kind) for kind, members in others.items() if members]
    return {
        "parts": [
            {
                "id": f"p{index}",
                "kind": kind,
                "index": number,
                "name": name,
                "root": f"g{members[-1]}",
                "inputs": [f"g{h}" for h in leaves],
                "layers": layers(members, names, reads),
            }
            for index, (kind, number, members, leaves, name) in enumerate(parts)
        ]
    }


def _constant_samples(
    groups: list[tuple[str, int, tuple[int, ...]]],
    inputs: list[tuple[int, ...]],
    group_of: list[int],
    parameter: list[bool],
    constants: Mapping[int, float],
    reads: dict[int, tuple[list[int], list[int]]],
) -> tuple[list[tuple[float, ...]], dict[int, int]]:
    """Samples of plain numbers: (each sample's numbers, in the order first read; {statement: its
    sample's number}). A statement that reads no other (a first layer's neuron) and combines
    parameters with constants (`w0 * 0.69 + w1 * 0.51 + b`) reads those constants, in order, as
    its sample's data: the statements of one sample (every neuron of the first layer) read the
    same numbers. A statement of parameters alone (`w0 * w0 + w1 * w1`) reads none."""
    numbers: dict[tuple[float, ...], int] = {}
    sample_of: dict[int, int] = {}
    for g, (_, statements) in reads.items():
        if statements:
            continue
        values = tuple(
            constants[j]
            for i in groups[g][2]
            if len(inputs[i]) == 2 and any(parameter[group_of[k]] for k in inputs[i])
            for j in inputs[i]
            if j in constants
        )
        if values:
            sample_of[g] = numbers.setdefault(values, len(numbers))
    return list(numbers), sample_of


def _unnamed_parameters(read_all: dict[int, tuple[list[int], list[int]]], count: int) -> list[bool]:
    """The parameters of a graph none of whose leaves is named after a place (its model out of
    reach of the caller's names: made in a function that returned the loss alone), told from its
    data by structure (`read_all`: statement → the leaves and statements it reads; `count`
    groups): a sample's data are read by the neurons of its first layer, whose outputs the
    neurons of the next layer, two or more, each read together; a parameter is read in every
    sample, by statements that no two statements read together (the loss reads each sample's
    output, and nothing else does). So a leaf is data when two statements or more read every
    statement that reads it, else a parameter."""
    readers: dict[int, list[int]] = {}  # leaf → the statements that read it
    consumers: dict[int, set[int]] = {}  # statement → the statements that read it
    for g, (leaves, statements) in read_all.items():
        for h in leaves:
            readers.setdefault(h, []).append(g)
        for h in statements:
            consumers.setdefault(h, set()).add(g)
    parameter = [False] * count
    none: set[int] = set()
    for h, statements in readers.items():
        common = consumers.get(statements[0], none)
        for g in statements[1:]:
            if len(common) < 2:
                break
            common = common & consumers.get(g, none)
        parameter[h] = len(common) < 2
    return parameter


def _layers_by_depth(
    members: list[int], names: list[str], reads: dict[int, tuple[list[int], list[int]]]
) -> list[dict[str, Any]]:
    """A part's statements by layer where no statement is named after a place: by depth (a
    statement reading none of the part's is at 1, one reading those at 2…), each layer named
    after its first and last statements (`relu1 … relu16`)."""
    depth: dict[int, int] = {}
    for g in members:  # in build order: what a statement reads comes first
        depth[g] = 1 + max((depth[h] for h in reads[g][1] if h in depth), default=0)
    layers: dict[int, list[int]] = {}
    for g in members:
        layers.setdefault(depth[g], []).append(g)
    return [
        {
            "name": names[groups[0]] + (f" \u2026 {names[groups[-1]]}" if len(groups) > 1 else ""),
            "groups": [f"g{g}" for g in groups],
        }
        for _, groups in sorted(layers.items())
    ]


def _layers(
    members: list[int], names: list[str], _reads: dict[int, tuple[list[int], list[int]]]
) -> list[dict[str, Any]]:
    """A part's statements by layer (`layer_of`), layers in the order their first statement came."""
    layers: dict[str, list[str]] = {}
    for g in members:
        layers.setdefault(layer_of(names[g]), []).append(f"g{g}")
    return [{"name": name, "groups": groups} for name, groups in layers.items()]
