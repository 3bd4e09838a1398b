"""The overview (issue 42): statements by sample, part and layer, read from places and structure."""

from __future__ import annotations

import re

import pytest

from chainrule import engine
from chainrule.engine.narration import fmt
from chainrule.engine.overview import layer_of

# Two samples through one neuron `n` (its parameters at places), its weights' squares, the loss.
TWO_SAMPLES = """\
w0 = 0.5; w0.label = 'n.w[0]'
w1 = -0.3; w1.label = 'n.w[1]'
b = 0.1; b.label = 'n.b'
x1 = 1.0
x2 = 2.0
h1 = (w0 * x1 + w1 * x2 + b).relu(); h1.label = 'n.out[0]'
x3 = 0.5
x4 = -1.0
h2 = (w0 * x3 + w1 * x4 + b).relu(); h2.label = 'n.out[0]₂'
reg = w0 * w0 + w1 * w1
loss = h1 + h2 + reg
"""


def overview(source: str) -> tuple[dict | None, dict[str, str]]:
    reply = engine.trace(source).to_dict()
    return reply["overview"], {group["id"]: group["name"] for group in reply["groups"]}


def test_two_samples_the_parameters_alone_and_the_loss() -> None:
    found, name = overview(TWO_SAMPLES)
    assert found is not None
    parts = [
        (
            part["id"],
            part["kind"],
            part["index"],
            part["name"],
            name[part["root"]],
            [name[g] for g in part["inputs"]],
            [(layer["name"], [name[g] for g in layer["groups"]]) for layer in part["layers"]],
        )
        for part in found["parts"]
    ]
    assert parts == [
        ("p0", "sample", 1, "x1, x2", "n.out[0]", ["x1", "x2"], [("n.out[0]", ["n.out[0]"])]),
        ("p1", "sample", 2, "x3, x4", "n.out[0]₂", ["x3", "x4"], [("n.out[0]", ["n.out[0]₂"])]),
        ("p2", "parameters", 0, "parameters", "reg", [], [("reg", ["reg"])]),
        ("p3", "combined", 0, "combined", "loss", [], [("loss", ["loss"])]),
    ]


def test_every_statement_is_in_exactly_one_part() -> None:
    reply = engine.trace(TWO_SAMPLES).to_dict()
    listed = [
        g
        for part in reply["overview"]["parts"]
        for layer in part["layers"]
        for g in layer["groups"]
    ]
    statements = [group["id"] for group in reply["groups"] if group["kind"] == "statement"]
    assert sorted(listed) == sorted(statements) and len(listed) == len(set(listed))


@pytest.mark.parametrize(
    "source",
    [
        "a = 2.0\nb = -3.0\nc = a * b\nL = c + a",  # no parameter at a place
        TWO_SAMPLES.replace("w0 * x3 + w1 * x4", "w0 * x1 + w1 * x2"),  # one sample read twice
    ],
    ids=["no places", "one sample"],
)
def test_a_graph_without_samples_has_no_overview(source: str) -> None:
    assert overview(source)[0] is None


@pytest.mark.parametrize(
    ("name", "layer"),
    [
        ("model.layers[1].neurons[3]", "model.layers[1]"),
        ("model.layers[1].neurons[3]₁₂", "model.layers[1]"),
        ("model.layers[0].neurons[0].w", "model.layers[0]"),
        ("xs[3]", "xs[3]"),
        ("n.out", "n.out"),
        ("total_loss", "total_loss"),
        ("relu(a*b + d)", "relu(a*b + d)"),
    ],
)
def test_a_statement_is_in_the_layer_of_its_place_up_to_the_first_index(name, layer) -> None:
    assert layer_of(name) == layer


def test_the_lectures_samples_of_plain_numbers_are_samples() -> None:
    """The lecture's MLP (Karpathy's "building micrograd" lecture, nn-zero-to-hero
    lectures/micrograd: `n = MLP(3, [4, 4, 1])`, four examples `xs` as plain floats): micrograd
    wraps each number a weight multiplies in a constant of its own, so no sample is a leaf; the
    numbers each first-layer neuron reads are its sample's, and each example is a part of its
    own, named by its numbers. Before, the graph had no overview."""
    from micrograd.nn import MLP

    import chainrule

    n = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    ypred = [n(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred, strict=True))
    loss.backward()
    reply = chainrule.trace_value(loss)
    name = {group["id"]: group["name"] for group in reply["groups"]}
    parts = [
        (part["kind"], part["index"], part["name"], part["inputs"], [
            (layer["name"], len(layer["groups"])) for layer in part["layers"]
        ])
        for part in reply["overview"]["parts"]
    ]  # fmt: skip
    assert parts == [
        ("sample", k + 1, ", ".join(fmt(x) for x in xs[k]), [], [
            ("n.layers[0]", 4), ("n.layers[1]", 4), (f"ypred[{k}]", 1)
        ])
        for k in range(4)
    ] + [("combined", 0, "combined", [], [("loss", 1)])]  # fmt: skip
    first = reply["overview"]["parts"][2]["layers"][0]["groups"]
    assert [name[g] for g in first] == [f"n.layers[0].neurons[{j}]₃" for j in range(4)]


def test_a_regulariser_of_plain_numbers_is_no_sample() -> None:
    """Samples of numbers are read where a neuron combines parameters with constants; the
    regulariser's `0.0001 * (w0*w0 + …)` combines a constant with a statement, and its sum's
    start (`0 + w0*w0`) adds one to a product: it stays the parameters' part."""
    source = """\
w0 = 0.5; w0.label = 'n.w[0]'
w1 = -0.3; w1.label = 'n.w[1]'
h1 = (w0 * 1.5 + w1 * 2.0).relu(); h1.label = 'n.out[0]'
h2 = (w0 * -1.0 + w1 * 0.5).relu(); h2.label = 'n.out[0]₂'
h3 = (w0 * 1.5 + w1 * 2.0).relu(); h3.label = 'n.out[0]₃'
reg = 0.0001 * (0 + w0 * w0 + w1 * w1)
loss = h1 + h2 + h3 + reg
"""
    found, name = overview(source)
    assert found is not None
    parts = [
        (part["kind"], part["name"], [name[g] for layer in part["layers"] for g in layer["groups"]])
        for part in found["parts"]
    ]
    # The same numbers are one sample: a duplicated row of the data reads as one.
    assert parts == [
        ("sample", "1.5, 2", ["n.out[0]", "n.out[0]₃"]),
        ("sample", "−1, 0.5", ["n.out[0]₂"]),
        ("parameters", "parameters", ["reg"]),
        ("combined", "combined", ["loss"]),
    ]


def _demo_loss_alone(samples: int) -> tuple[object, list[list[float]]]:
    """micrograd's demo made in a function that returns its loss alone (and the moons it ran
    on): its model is out of reach of any name, and garbage once the function returns."""
    from chainrule.sandbox.moons import demo_total_loss, make_moons

    _, total_loss = demo_total_loss(samples)
    points, _ = make_moons(n_samples=samples, noise=0.1)
    return total_loss, [list(point) for point in points]


def test_a_model_out_of_reach_of_names_is_read_by_structure() -> None:
    """No leaf is named after a place (the reader names them `v1`, `v2`…): parameters are told
    from data by the graph's shape (a sample's inputs are read by neurons whose outputs one
    statement reads together). Each moon is a sample of the same statements, its inputs its
    point; layers by depth. Before, the graph (13,978 nodes at 20 moons) had no overview and
    the page drew thousands of statements at once."""
    import chainrule

    samples = 6
    total_loss, points = _demo_loss_alone(samples)
    reply = chainrule.trace_value(total_loss)
    data = {
        group["id"]: reply["nodes"][int(group["root"][1:])]["data"] for group in reply["groups"]
    }
    parts = reply["overview"]["parts"]
    assert [part["kind"] for part in parts] == ["sample"] * samples + ["parameters", "combined"]
    sizes = set()
    for part, point in zip(parts, points, strict=False):
        assert sorted(data[g] for g in part["inputs"]) == sorted(point)
        first = part["layers"][0]
        assert len(first["groups"]) == 16 and re.fullmatch(r"relu\d+ … relu\d+", first["name"])
        sizes.add(sum(len(layer["groups"]) for layer in part["layers"]))
    assert len(sizes) == 1  # the same network on every sample (six moons: one way of cutting)


def test_the_lectures_mlp_out_of_reach_of_names_reads_its_numbers() -> None:
    """The lecture's MLP (as above) made inside a function: no names, no data leaves (its xs
    are floats), and still one part an example."""
    from micrograd.nn import MLP

    import chainrule

    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]

    def loss_alone():
        n = MLP(3, [4, 4, 1])
        ypred = [n(x) for x in xs]
        ys = [1.0, -1.0, -1.0, 1.0]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred, strict=True))
        loss.backward()
        return loss

    reply = chainrule.trace_value(loss_alone())
    parts = reply["overview"]["parts"]
    assert [(part["kind"], part["name"]) for part in parts[:4]] == [
        ("sample", ", ".join(fmt(x) for x in point)) for point in xs
    ]


# Two samples through two neurons and two more, no name a place: `x1`, `x2` go to `h1` and
# `g1`, which `o1` and `p1` both read; `w0`, `w1` are read in both samples. The second sample
# runs one statement more (`q2`), as the reader cuts a long sum in some samples and not others.
UNNAMED = """\
w0 = 0.5
w1 = -0.3
x1 = 1.0
x2 = 2.0
h1 = (w0 * x1 + w1 * x2).relu()
g1 = (w1 * x1 + w0 * x2).relu()
o1 = w0 * h1 + w1 * g1
p1 = w1 * h1 + w0 * g1
x3 = 0.5
x4 = -1.0
h2 = (w0 * x3 + w1 * x4).relu()
g2 = (w1 * x3 + w0 * x4).relu()
o2 = w0 * h2 + w1 * g2
p2 = w1 * h2 + w0 * g2
q2 = o2 * p2
loss = o1 + p1 + q2
"""


def test_parameters_without_places_are_told_by_structure() -> None:
    found, name = overview(UNNAMED)
    assert found is not None
    parts = [
        (part["kind"], part["name"], [name[g] for g in part["inputs"]], [
            (layer["name"], [name[g] for g in layer["groups"]]) for layer in part["layers"]
        ])
        for part in found["parts"]
    ]  # fmt: skip
    assert parts == [
        ("sample", "x1, x2", ["x1", "x2"], [("h1 … g1", ["h1", "g1"]), ("o1 … p1", ["o1", "p1"])]),
        ("sample", "x3, x4", ["x3", "x4"], [
            ("h2 … g2", ["h2", "g2"]), ("o2 … p2", ["o2", "p2"]), ("q2", ["q2"])
        ]),
        ("combined", "combined", [], [("loss", ["loss"])]),
    ]  # fmt: skip


def test_samples_told_by_structure_must_run_alike() -> None:
    """A second sample more than twice the first's statements is no sample of the same model."""
    chain = [f"r{k} = {f'r{k - 1}' if k else 'q2'} * {k + 2}" for k in range(5)]  # 10 against 4
    more = "\n".join(chain) + "\nloss = o1 + p1 + r4\n"
    assert overview(UNNAMED.replace("loss = o1 + p1 + q2\n", more))[0] is None


@pytest.mark.parametrize("preset", [p["id"] for p in engine.PRESETS])
def test_no_preset_gains_an_overview(preset: str) -> None:
    """Small graphs are unchanged: parameters told by structure need two samples or more that
    run alike, which no preset has (the lecture MLP's one pass is no sample)."""
    (found,) = [p for p in engine.PRESETS if p["id"] == preset]
    assert overview(found["source"])[0] is None


def test_micrograd_demo_each_samples_output_neuron_is_in_its_sample() -> None:
    """micrograd's demo.ipynb (its `MLP(2, [16, 16, 1])`, the moons, the max-margin loss and L2;
    chainrule/sandbox/moons.py builds it as the notebook does) read from its Values: every
    sample's part holds its pass through all three layers, 16 + 16 + 1 statements, and what
    combines the samples is the loss alone. Before, the output neuron's statements of all
    samples were one sum, cut where it grew too long, in the combined part."""
    from chainrule.engine.value_reader import places_in, program_of
    from chainrule.sandbox.moons import demo_total_loss

    samples = 6
    model, total_loss = demo_total_loss(samples)
    program = program_of(total_loss, places_in({"model": model, "total_loss": total_loss}))
    reply = engine.trace(program.source).to_dict()
    name = {group["id"]: group["name"] for group in reply["groups"]}
    parts = reply["overview"]["parts"]
    sample_parts = [part for part in parts if part["kind"] == "sample"]
    assert len(sample_parts) == samples
    for k, part in enumerate(sample_parts):
        layers = [(layer["name"], len(layer["groups"])) for layer in part["layers"]]
        assert layers == [("model.layers[0]", 16), ("model.layers[1]", 16), ("model.layers[2]", 1)]
        output = name[part["layers"][2]["groups"][0]]
        assert output == "model.layers[2].neurons[0]" + (
            "" if k == 0 else str(k + 1).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))
        )
    (combined,) = [part for part in parts if part["kind"] == "combined"]
    assert [[name[g] for g in layer["groups"]] for layer in combined["layers"]] == [["total_loss"]]
    # The loss reads as the notebook writes it: each sample's margin `(1 + -y·score).relu()` of
    # its output neuron's statement (the score alone: its `w·x + b`, no part of the loss).
    (loss,) = [line for line in program.source.splitlines() if line.startswith("total_loss =")]
    margins = re.findall(
        r"\((model_layers2_neurons0(?:_\d+)?) \* \(?(-?1\.0)\)? \+ 1\.0\)\.relu\(\)", loss
    )
    assert [m[0] for m in margins] == ["model_layers2_neurons0"] + [
        f"model_layers2_neurons0_{k}" for k in range(2, samples + 1)
    ]
