"""Paste what learners paste (issue 22): the lecture's cells, micrograd's and the tutorials', read
verbatim, with Python's numbers and the labels `draw_dot` would show.

The oracle is CPython itself: tests/lecture_cells.py runs each cell with a small Value class in
the lecture's model (the tests' code; the engine never runs a program) and gives the root's value
and every leaf's gradient."""

from __future__ import annotations

import math

import pytest
from lecture_cells import CELLS, NEEDS_RUNNING, Cell, run

from chainrule import engine
from chainrule.engine.narration import narrations
from chainrule.engine.step_reader import step_objects

IDS = [cell.id for cell in CELLS]


def _graph(trace: engine.Trace) -> list[tuple]:
    """What a graph is, besides where its text sits: every node's kind, op, labels, inputs,
    numbers, and the leaves' names."""
    nodes = [
        (n.kind, n.op, n.exponent, n.label, n.name, [i.id for i in n.inputs], n.data, n.grad)
        for n in trace.nodes
    ]
    return [nodes, [name for name, _ in trace.graph.leaves], trace.root.id]


@pytest.mark.parametrize("cell", CELLS, ids=IDS)
def test_a_straight_line_cell_reads_with_python_s_numbers(cell: Cell):
    root, leaves = run(cell)
    trace = engine.trace(cell.source)
    assert math.isclose(trace.root.data, root.data, rel_tol=1e-12)
    ours = [node for node in trace.nodes if node.kind == "leaf"]
    assert [node.data for node in ours] == [leaf.data for leaf in leaves]
    for node, leaf in zip(ours, leaves, strict=True):
        assert math.isclose(trace.grads[node.id], leaf.grad, rel_tol=1e-12, abs_tol=1e-15), (
            node.name
        )
    # Built from micrograd's primitives, the graph has as many nodes as Python made.
    assert len(engine.trace(cell.source, expand_derived=True).nodes) == len(root.nodes())


@pytest.mark.parametrize("cell", CELLS, ids=IDS)
def test_a_cell_s_labels_are_on_the_cards_as_draw_dot_shows_them(cell: Cell):
    root, _ = run(cell)
    cards = engine.trace(cell.source).to_dict()["nodes"]
    for value in root.nodes():
        if value.label:  # a label the cell sets: the card shows it, with the same numbers
            card = next(card for card in cards if card["label"] == value.label)
            assert math.isclose(card["data"], value.data, rel_tol=1e-12)
            assert math.isclose(card["grad"], value.grad, rel_tol=1e-12, abs_tol=1e-15)


def test_the_neuron_s_labels_name_the_cards_while_the_names_stay_the_handles():
    cell = next(cell for cell in CELLS if cell.id == "first-half-cell-13-neuron")
    reply = engine.trace(cell.source).to_dict()
    named = [(n["name"], n["label"], n["text"]) for n in reply["nodes"] if n["kind"] != "const"]
    assert named == [
        ("x1", "x1", "x1"),
        ("x2", "x2", "x2"),
        ("w1", "w1", "w1"),
        ("w2", "w2", "w2"),
        ("b", "b", "b"),
        ("x1w1", "x1*w1", "x1*w1"),
        ("x2w2", "x2*w2", "x2*w2"),
        ("x1w1x2w2", "x1*w1 + x2*w2", "x1*w1 + x2*w2"),
        ("n", "n", "n"),
        ("o", "o", "o"),
    ]
    assert reply["leaves"][0] == {"name": "x1", "label": "x1", "id": "n0", "value": 2.0}
    narration = [
        said
        for step, said in zip(step_objects(reply), narrations(reply), strict=True)
        if step["phase"] == "backward"
    ]
    assert narration[1].startswith("Visit n = x1*w1 + x2*w2 + b: grad[x1*w1 + x2*w2] += ")


def test_a_label_on_a_leaf_names_its_slider_and_values_still_go_by_name():
    reply = engine.trace(
        "k = Value(0.25, label='κ')\nm = k * 2; m.label = 'двойное κ'", {"k": 4}
    ).to_dict()
    assert reply["leaves"] == [{"name": "k", "label": "κ", "id": "n0", "value": 4.0}]
    assert [(n["name"], n["label"]) for n in reply["nodes"]] == [
        ("k", "κ"),
        ("", "2"),
        ("m", "двойное κ"),
    ]


def test_a_label_follows_python_s_names_at_the_point_it_is_set():
    trace = engine.trace(
        "a = Value(2.0)\nc = a * 3; c.label = 'first'\nc = c + 1\nc.label = 'second'\n"
        "b = c\nb.label = 'both'\nL = c * a"
    )
    assert [(n.name, n.label) for n in trace.nodes if n.kind == "op"] == [
        ("c", "first"),
        ("c₂", "both"),  # `b = c` names the same node: its label is the last one set
        ("L", "L"),
    ]


def test_a_label_whose_name_stands_for_no_node_is_a_note():
    trace = engine.trace("z.label = 'z'\na = Value(1.0)\nb = a * 2\nq.label = 'q'\nb")
    assert [(w["type"], w["message"]) for w in trace.warnings] == [
        ("skipped", "line 1: 'z.label = 'z'' is skipped: 'z' names no node here"),
        ("skipped", "line 4: 'q.label = 'q'' is skipped: 'q' names no node here"),
    ]
    # A label of a statement the result does not use is moot: the unused warning says enough.
    trace = engine.trace("a = Value(1.0)\nu = a * 2; u.label = 'u'\nL = a + 1")
    assert [w["type"] for w in trace.warnings] == ["unused"]


def _variants(source: str) -> dict[str, str]:
    """The cell as it arrives from elsewhere: Windows line ends, an interactive session's
    prompts, a notebook's magic first, a web page's no-break spaces and byte-order mark."""
    lines = source.split("\n")
    return {
        "crlf": source.replace("\n", "\r\n"),
        "prompts": "\n".join(f">>> {line}" if line.strip() else ">>>" for line in lines),
        "ipython": "\n".join(f"In [{k}]: {line}" for k, line in enumerate(lines, 1)),
        "magic": "%matplotlib inline\n!pip install micrograd\n" + source,
        "web page": "\ufeff" + source.replace(" = ", "\u00a0=\u00a0"),
        "all at once": "%matplotlib inline\r\n"
        + "\r\n".join(f">>> {line}" for line in lines).replace(" = ", " =\u00a0"),
    }


@pytest.mark.parametrize("cell", CELLS, ids=IDS)
def test_copy_leftovers_give_the_same_graph(cell: Cell):
    same = _graph(engine.trace(cell.source))
    for kind, variant in _variants(cell.source).items():
        assert _graph(engine.trace(variant)) == same, kind


def test_each_copy_leftover_has_a_note_and_positions_are_those_typed():
    source = "\ufeff>>> a = Value(2.0)\r\n>>> b = a\u00a0* 3\r\n%time\r\n!pip install x\r\n>>> b"
    trace = engine.trace(source)
    assert [(w["type"], w["line"], w["column"], w["message"]) for w in trace.warnings] == [
        ("pasted", 1, 1, "line 1: the byte-order mark at the start is read as a blank"),
        ("pasted", 1, 2, "line 1: the >>> and ... prompts of an interactive session are read as blanks"),
        ("pasted", 2, 10, "line 2: non-breaking spaces (copied from a web page) are read as spaces"),
        ("skipped", 3, 1, "line 3: '%time' is skipped: it is a notebook command, not Python"),
        ("skipped", 4, 1, "line 4: '!pip install x' is skipped: it is a shell command, not Python"),
    ]  # fmt: skip
    b = trace.nodes[-1]
    assert source[b.start : b.end] == "a\u00a0* 3" and b.label == "b"
    error = _error(">>> a = Value(2.0)\r\n>>> b = a $ 3")
    assert (error.line, error.column) == (2, 11)  # the column of `$` as typed, prompt and all
    assert error.snippet == ">>> b = a $ 3" and error.caret == "          ^"


def test_a_session_s_output_lines_are_skipped_not_read_as_code():
    trace = engine.trace(">>> a = Value(2.0)\n>>> b = a * 3\n>>> b\nValue(data=6.0)\n>>> b.grad\n0")
    assert trace.root.label == "b" and trace.root.data == 6.0
    assert [w["message"] for w in trace.warnings if w["type"] == "skipped"] == [
        "line 4: 'Value(data=6.0)' is skipped: it is the session's output, not code",
        "line 5: 'b.grad' is skipped: a notebook shows this value; chainrule shows every value "
        "on its card",
        "line 6: '0' is skipped: it is the session's output, not code",
    ]


SKIPPED = [
    ("import numpy as np", "'import numpy as np' is skipped: chainrule needs no imports"),
    ("import matplotlib.pyplot as plt", "'import matplotlib.pyplot as plt' is skipped: chainrule needs no imports"),
    ("from graphviz import Digraph", "'from graphviz import Digraph' is skipped: chainrule needs no imports"),
    ("import torch", "'import torch' is skipped: chainrule needs no imports"),
    ("print('x', x.grad.item())", "'print('x', x.grad.item())' is skipped: every value is on the graph"),
    ("draw_dot(x)", "'draw_dot(x)' is skipped: chainrule draws the graph itself, every value and gradient on its card"),
    ("nodes, edges = trace(x)", "'nodes, edges = trace(x)' is skipped: chainrule draws the graph itself, every value and gradient on its card"),
    ("dot.render('gout')", "'dot.render('gout')' is skipped: chainrule draws the graph itself, every value and gradient on its card"),
    ("x.grad", "'x.grad' is skipped: a notebook shows this value; chainrule shows every value on its card"),
    ("x.data.item()", "'x.data.item()' is skipped: a notebook shows this value; chainrule shows every value on its card"),
    ("x.grad = 0.0", "'x.grad = 0.0' is skipped: chainrule starts every backward pass from zero gradients"),
    ("model.zero_grad()", "'model.zero_grad()' is skipped: chainrule starts every backward pass from zero gradients"),
    ("x.grad = 1.0", "'x.grad = 1.0' is skipped: chainrule seeds the root's gradient with 1 itself, at the start of the backward pass"),
    ("x.grad = w.data * y.grad", "'x.grad = w.data * y.grad' is skipped: chainrule computes every gradient itself, step by step in the backward pass"),
    ("x.grad += 0.5", "'x.grad += 0.5' is skipped: chainrule computes every gradient itself, step by step in the backward pass"),
    ("x._backward()", "'x._backward()' is skipped: the backward pass plays exactly these _backward() calls, one step each, in reverse topological order"),
    ("x.requires_grad = True", "'x.requires_grad = True' is skipped: every leaf has a gradient in chainrule"),
    ("%matplotlib inline", "'%matplotlib inline' is skipped: it is a notebook command, not Python"),
    ("%%time", "'%%time' is skipped: it is a notebook command, not Python"),
    ("!pip install micrograd", "'!pip install micrograd' is skipped: it is a shell command, not Python"),
]  # fmt: skip


@pytest.mark.parametrize(("statement", "message"), SKIPPED, ids=[s for s, _ in SKIPPED])
@pytest.mark.parametrize("where", ["own line", "after ;"])
def test_each_kind_of_skipped_statement_has_one_note_naming_its_line(statement, message, where):
    if where == "own line":
        source = f"x = Value(2.0)\nw = Value(3.0)\n{statement}\ny = x * w"
        line = 3
    else:
        if statement.startswith(("%", "!")):
            pytest.skip("a magic or a shell command is a whole line")
        source = f"x = Value(2.0)\nw = Value(3.0)\ny = x * w ; {statement}"
        line = 3
    trace = engine.trace(source)
    assert trace.root.data == 6.0 and len(trace.nodes) == 3
    assert list(trace.warnings) == [  # the Trace record keeps them as a tuple
        {
            "type": "skipped",
            "message": f"line {line}: {message}",
            "line": line,
            "column": trace.warnings[0]["column"],
        }
    ]
    column = source.split("\n")[line - 1].index(statement.split()[0][:4]) + 1
    assert trace.warnings[0]["column"] == column


def test_a_drawing_kept_in_a_variable_and_shown_is_no_leaf():
    trace = engine.trace(
        "x = Value(1.0)\ny = (x * 2 + 1).relu()\ny.backward()\n\ndot = draw_dot(y)\ndot"
    )
    assert trace.root.label == "y" and [name for name, _ in trace.graph.leaves] == ["x"]
    trace = engine.trace("x = Value(1.0)\ny = x * 2\ndot = draw_dot(y)\ndot\ndot.render('gout')")
    assert trace.root.label == "y" and [w["line"] for w in trace.warnings] == [3, 4, 5]


def test_a_name_alone_shows_a_value_and_is_the_result_only_at_the_end():
    trace = engine.trace("a = Value(2.0)\nb = a * 3\na\nc = b + a; c")
    assert trace.root.label == "c"
    assert [w["message"] for w in trace.warnings] == [
        "line 3: 'a' is skipped: a notebook shows this value; chainrule shows every value on its card"
    ]
    assert engine.trace("a = Value(2.0)\nb = a * 3\nc = b + a\nb").root.label == "b"


def test_nothing_but_skipped_statements_says_so():
    for source in (
        "o.grad = 1.0\no._backward()",
        "import math\n%matplotlib inline",
        "x.label = 'x'",
    ):
        error = _error(source)
        assert (error.type, str(error)) == (
            "SyntaxError",
            "nothing to trace: every statement is skipped (imports, print(...), draw_dot(...), "
            "x.grad, …); write an expression such as a * b + c",
        )


def _error(source: str) -> engine.ProgramError:
    with pytest.raises(engine.ProgramError) as caught:
        engine.trace(source)
    return caught.value


@pytest.mark.parametrize(
    ("id", "origin", "source", "line", "column", "what"),
    NEEDS_RUNNING,
    ids=[r[0] for r in NEEDS_RUNNING],
)
def test_code_that_must_run_is_a_needs_running_error_naming_its_line(
    id, origin, source, line, column, what
):
    error = _error(source)
    assert (error.type, error.line, error.column) == ("NeedsRunning", line, column)
    assert str(error) == (
        f"line {line}: {what} must run before chainrule can read its graph: chainrule reads "
        "straight-line code as data and never runs it. Run the code first (in a notebook, "
        "chainrule.show(x) reads the graph it built)"
    )
    assert error.to_dict()["type"] == "NeedsRunning"


def test_the_pytorch_cell_reads_as_the_micrograd_neuron():
    pytorch = next(cell for cell in CELLS if cell.id == "second-half-cells-12-13-pytorch")
    micrograd = next(cell for cell in CELLS if cell.id == "second-half-cell-9")
    ours, theirs = engine.trace(pytorch.source), engine.trace(micrograd.source)
    assert [(n.op, n.data) for n in ours.nodes] == [(n.op, n.data) for n in theirs.nodes]
    assert list(ours.grads) == list(theirs.grads)
    assert [w["message"] for w in ours.warnings][:2] == [
        "line 1: 'import torch' is skipped: chainrule needs no imports",
        "line 3: 'x1.requires_grad = True' is skipped: every leaf has a gradient in chainrule",
    ]


def test_a_pytorch_number_keeps_the_number_limits():
    assert "has 402 digits" in str(_error("x = torch.tensor(" + "1" * 401 + ".0)"))
    assert "too large" in str(_error("x = torch.tensor(-1e999)"))
    # A vector is a tensor program (issue 43, docs/tensors.md), which the tensor reader reads.
    error = _error("x = torch.tensor([1.0, 2.0])")
    assert error.type == "TensorProgram"


@pytest.mark.timeout(60)
def test_a_hundred_thousand_line_paste_reads():
    block = (
        ">>> x1 = Value(2.0, label='x1'); x1.requires_grad = True\r\n"
        ">>> x1w1 = x1*x1; x1w1.label = 'x1*x1'\r\n"
        "draw_dot(x1w1)\r\n"
        "%matplotlib inline\r\n"
    )
    source = block * 25_000
    statements, notes = engine.parser.parse_program(source)
    assert len(statements) == 50_000 and len(notes) == 75_001


def test_a_label_is_text_in_the_narration_and_its_templates():
    """Braces in a label are text: the templates name nodes by slot, never by their text, so
    filled they read as written."""
    from chainrule.engine.narration import fill

    trace = engine.trace("a = Value(2.0, label='{n:data:0}')\nb = a * 3; b.label = '{x} }{'")
    reply = trace.to_dict()
    numbers = {**trace.numbers(), "text": [node["text"] for node in reply["nodes"]]}
    said = narrations(reply)
    assert [fill(step["template"], numbers) for step in step_objects(reply)] == said
    assert "{x}" not in "".join(step["template"] for step in step_objects(reply))
    assert said[-3] == (
        "Visit {x} }{ = {n:data:0}·3: grad[{n:data:0}] += 1 × 3 = 3, grad[3] += 1 × 2 = 2"
    )
