"""chainrule.sandbox.runner under CPython (in the page it runs in Pyodide: tests/browser/
test_sandbox.py): lecture cells pasted verbatim run, the Value chosen as the graph is said, the
graph reads as a program whose numbers are Python's own (the same code run here, separately, is
the oracle), and what the autograd check needs is there; errors name their line."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest
from lecture_cells import (
    DATASET,
    DRAW_DOT,
    DRAW_O,
    IMPORTS,
    MLP_CALL,
    MLP_CLASSES,
    NEURON_CELL_9,
    TG_DRAW_DOT,
    TG_IMPORT_GRAPHVIZ,
    TG_IMPORT_VALUE,
    TG_NN_NEURON,
    TRAINING_LOOP,
    VALUE_CLASS,
)

from chainrule import engine
from chainrule.engine.i18n import LANGS
from chainrule.engine.value_reader import KNOWN_OPS
from chainrule.sandbox.runner import Session, as_json

LECTURE_NEURON = "\n".join((IMPORTS, VALUE_CLASS, DRAW_DOT, NEURON_CELL_9, DRAW_O))


def python(code: str) -> dict:
    """`code` run by CPython as it is, in a namespace of its own: the oracle."""
    namespace: dict = {}
    exec(compile(code, "<oracle>", "exec"), namespace)
    return namespace


def traced(result: dict) -> engine.Trace:
    return engine.trace(result["program"]["source"])


def test_the_lecture_neuron_runs_and_its_graph_is_the_lectures():
    result = Session().run(LECTURE_NEURON)
    assert result["ok"], result
    assert result["choice"] == {"kind": "backward", "line": 153, "name": "o"}
    assert result["notes"] == [{"line": 5, "text": "%matplotlib inline"}]
    # The operands keep the lecture's order (the `_backward` closure names them), labels that
    # are names name the nodes, the others are written beside the variable that holds them.
    assert result["program"]["source"] == (
        "x1 = 2.0\nw1 = -3.0\nx1w1 = x1 * w1; x1w1.label = 'x1*w1'\nx2 = 0.0\nw2 = 1.0\n"
        "x2w2 = x2 * w2; x2w2.label = 'x2*w2'\n"
        "x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'\n"
        "b = 6.881373587019543\nn = x1w1x2w2 + b\no = tanh(n)\n"
    )
    oracle = python("import math\n" + VALUE_CLASS + NEURON_CELL_9)
    trace = traced(result)
    assert trace.root.data == pytest.approx(oracle["o"].data, rel=1e-12)  # math.tanh: 1 ulp
    for name in ("x1", "x2", "w1", "w2", "b", "n"):
        assert trace.grad(name) == pytest.approx(oracle[name].grad, rel=1e-12, abs=1e-15)
    # The code's own grads, per node, for the check: the lecture's class is right.
    facts = {node["text"]: node for node in result["nodes"]}
    assert facts["w1"]["grad"] == pytest.approx(oracle["w1"].grad, rel=1e-12)
    assert facts["o"] == {**facts["o"], "op": "tanh", "label": "o", "no_backward": False}
    assert result["backward"] == {"line": 153, "stale": [], "calls": 1}
    assert [c["name"] for c in result["choices"]][-2:] == ["n", "o"]
    json.loads(as_json(result))  # what the worker posts


def test_one_piece_of_code_gives_one_program(kernel_sized_heap):
    code = "import math\nimport random\nrandom.seed(5)\n" + VALUE_CLASS + MLP_CLASSES + MLP_CALL
    session = Session()
    programs = {session.run(code)["program"]["source"] for _ in range(30)}
    assert len(programs) == 1


def test_an_mlp_called_on_the_last_line_is_the_graph_with_pythons_numbers():
    code = "import math\nimport random\nrandom.seed(42)\n" + VALUE_CLASS + MLP_CLASSES + MLP_CALL
    result = Session().run(code)
    assert result["ok"], result
    assert result["choice"]["kind"] == "last"
    assert result["backward"] is None  # nothing to check: backward() was never called
    out = eval("n(x)", python(code))  # noqa: S307 - the oracle: the same code, under CPython
    assert traced(result).root.data == pytest.approx(out.data, rel=1e-12)


def test_the_training_loop_gives_the_last_losss_graph_at_the_values_it_was_computed_at():
    code = "\n".join(("import math\nimport random\nrandom.seed(1)", VALUE_CLASS, MLP_CLASSES,
                      MLP_CALL, DATASET, TRAINING_LOOP))  # fmt: skip
    result = Session().run(code)
    assert result["ok"], result
    assert result["choice"] == {"kind": "backward", "line": code.split("\n").index(
        "  loss.backward()") + 1, "name": "loss"}  # fmt: skip
    assert result["backward"]["calls"] == 20 and result["backward"]["stale"] == []
    printed = result["output"].strip().split("\n")
    assert len(printed) == 20 and printed[-1].startswith("19 ")
    oracle = python(code.replace("print(k, loss.data)", "pass"))
    trace = traced(result)
    # The loss of the last step, though the parameters moved after it was computed.
    assert trace.root.data == pytest.approx(oracle["loss"].data, rel=1e-9)
    assert trace.root.data == pytest.approx(float(printed[-1].split()[1]), rel=1e-9)
    # Each parameter is a leaf at the value it had in the last forward pass (before the update
    # `p.data += -0.1 * p.grad`), with the gradient the code's last backward() left on it.
    leaves = [(node.data, node.grad) for node in trace.nodes if node.kind == "leaf"]
    for p in oracle["n"].parameters():
        before = p.data + 0.1 * p.grad
        (grad,) = [g for data, g in leaves if math.isclose(data, before, rel_tol=1e-9)]
        assert grad == pytest.approx(p.grad, rel=1e-9, abs=1e-12)


def test_micrograds_own_nn_from_the_trace_graph_notebook():
    code = "\n".join((TG_IMPORT_GRAPHVIZ, TG_IMPORT_VALUE, TG_DRAW_DOT, TG_NN_NEURON))
    result = Session().run(code)
    assert result["ok"], result
    assert result["choice"]["kind"] == "backward" and result["choice"]["name"] == "y"
    random.seed(1337)
    from micrograd import nn
    from micrograd.engine import Value

    neuron = nn.Neuron(2)
    x = [Value(1.0), Value(-2.0)]
    y = neuron(x)
    y.backward()
    trace = traced(result)
    assert trace.root.data == y.data
    leaves = sorted((n.data, n.grad) for n in trace.nodes if n.kind == "leaf")
    theirs = sorted((v.data, v.grad) for v in (*neuron.parameters(), *x))
    assert leaves == theirs


def test_draw_dot_or_the_last_line_chooses_the_graph_without_backward():
    drawn = Session().run(VALUE_CLASS + "a = Value(2.0, label='a')\nb = a * a\ndraw_dot(b)\na")
    assert drawn["choice"] == {"kind": "draw_dot", "line": None, "name": "b"}
    last = Session().run(VALUE_CLASS + "a = Value(2.0, label='a')\nb = a * a\nb")
    assert last["choice"]["kind"] == "last" and last["program"]["root"] == "b"


def test_grads_left_from_an_earlier_backward_are_seen():
    code = "import math\n" + VALUE_CLASS + NEURON_CELL_9 + "\no.backward()"
    result = Session().run(code)
    assert result["backward"]["calls"] == 2 and result["backward"]["line"] == code.count("\n") + 1
    stale = {result["nodes"][i]["text"] for i in result["backward"]["stale"]}
    # Every node but the root held its first gradient; w2's is 0 (x2 = 0), which is no trace.
    assert stale == {"x1", "w1", "x1w1", "x2", "x2w2", "x1w1x2w2", "b", "n"}


def test_an_op_whose_backward_was_never_set_is_seen():
    broken = VALUE_CLASS.replace(
        "      self.grad += (1 - t**2) * out.grad\n    out._backward = _backward\n",
        "      self.grad += (1 - t**2) * out.grad\n",
    )
    assert broken != VALUE_CLASS
    result = Session().run("import math\n" + broken + NEURON_CELL_9)
    flagged = [node["text"] for node in result["nodes"] if node["no_backward"]]
    assert flagged == ["o"]


@pytest.mark.parametrize(
    ("code", "kind", "line", "snippet", "caret", "params"),
    [
        ("a = 1\nb = undefined + a\n", "PythonError", 2, "b = undefined + a",
         "    ^^^^^^^^^", {"name": "NameError"}),
        ("a = (1,\n", "PythonSyntaxError", 1, "a = (1,", "    ^", {}),
        ("import numpy as np\nxs = np.arange(3)\n", "Unavailable", 2, "xs = np.arange(3)",
         "     ^^^^^^^^^", {"module": "numpy"}),
        ("import micropip\n", "Unavailable", 1, "import micropip", "^^^^^^^^^^^^^^^",
         {"module": "micropip"}),
        ("from js import fetch\n", "Unavailable", 1, "from js import fetch",
         "^^^^^^^^^^^^^^^^^^^^", {"module": "js"}),
        ("x = 1\n", "NoValue", None, None, None, {}),
    ],
)  # fmt: skip
def test_errors_say_where(code, kind, line, snippet, caret, params):
    result = Session().run(code)
    assert not result["ok"]
    error = result["error"]
    assert (error["type"], error["line"], error["snippet"], error["caret"]) == (
        kind, line, snippet, caret)  # fmt: skip
    assert error["params"] == params


def unplaced(reply: dict) -> dict:
    """`reply` without what the layout adds (docs/api.md: `Trace.to_dict()` is the reply minus
    its layout) and the structure id."""
    nodes = [{k: v for k, v in node.items() if k not in ("x", "y", "width", "height")}
             for node in reply["nodes"]]  # fmt: skip
    groups = [
        {k: v for k, v in group.items() if k not in ("box", "card")} for group in reply["groups"]
    ]
    rest = {k: v for k, v in reply.items() if k not in ("layout", "structure")}
    return {**rest, "nodes": nodes, "groups": groups}


def test_a_graph_too_big_and_an_op_chainrule_does_not_know_are_said():
    code = VALUE_CLASS + "x = Value(1.0)\nfor _ in range(30):\n  x = x * 1.5\nx.backward()"
    big = Session(max_nodes=10, max_value_nodes=20).run(code)
    assert big["error"]["type"] == "TooManyNodes" and big["error"]["params"] == {"limit": 20}
    # Past the server's bound and within the reader's: traced here (sandbox/local_trace.py), as
    # the server would (the same reply for the same program, but the id only a server knows).
    here = Session(max_nodes=10).run(code)
    traced = here["trace"]
    assert traced["structure"] is None and traced["layout"]["engine"] == "sugiyama"
    assert unplaced(traced) == engine.trace(here["program"]["source"]).to_dict()
    assert all(node["width"] > 0 for node in traced["nodes"])
    assert Session(max_nodes=61).run(code)["trace"] is None  # 61 nodes: the server's to trace
    # An op no row of the table explains is an opaque node, said: never a refusal of the graph.
    cosh = Session().run(VALUE_CLASS + "a = Value(1.0)\nb = a * 2\nb._op = 'cosh'\nb.data = 7.0\n"
                         "b.backward()")  # fmt: skip
    assert cosh["ok"] and cosh["program"]["source"] == (
        "a = 1.0\nunknown_cosh(p1, p2) = 7.0 + 2.0 * (p1 - 1.0) + 1.0 * (p2 - 2.0)\n"
        "b = unknown_cosh(a, 2.0)\n"
    )
    (warning,) = cosh["program"]["warnings"]
    assert warning["type"] == "unknown_op" and KNOWN_OPS in warning["message"]


def test_the_reader_s_warnings_are_said_in_the_page_s_language():
    """The worker's Session is made with the page's language (static/js/sandbox/worker.js): the
    reader's warnings come in it, the same sentences as the notebook's (engine/i18n.py)."""
    code = VALUE_CLASS + "a = Value(3.0)\nsquare = a * a\nsquare.backward()"
    english = Session().run(code)["program"]["warnings"]
    (estonian,) = Session(lang="et").run(code)["program"]["warnings"]
    assert estonian == {**english[0], "message": (
        "micrograd hoiab sõlme square sisendeid hulgas (set), seega joonistab draw_dot ühe serva "
        "sõlmest a; square = a * a kasutab seda kaks korda ning õiges graafis on kaks serva "
        "(mõlemat mööda liigub gradient)"
    )}  # fmt: skip
    assert english[0]["message"].startswith("micrograd keeps the children of square in a set")
    session = Session(lang="ru")
    session.run(code)
    (picked,) = session.pick("square")["program"]["warnings"]
    assert picked["message"].startswith("micrograd хранит входы square во множестве (set)")
    assert json.loads(as_json(session.pick("square")))["program"]["warnings"] == [picked]


def test_another_value_is_picked_by_its_name():
    session = Session()
    session.run(LECTURE_NEURON)
    picked = session.pick("n")
    assert picked["ok"] and picked["choice"]["kind"] == "picked"
    assert picked["program"]["root"] == "n" and picked["backward"] is None
    assert picked["backward_root"] == "o" and session.pick("o")["backward_root"] is None
    assert session.pick("nothing")["error"]["type"] == "NoValue"


def test_the_running_line_is_reported_while_a_loop_runs():
    lines: list[int] = []
    Session(report_line=lines.append).run("total = 0\nfor i in range(20000):\n  total += i\n")
    assert set(lines) <= {2, 3} and lines


def test_leaf_data_at_backward_time_is_put_back_after_reading():
    code = VALUE_CLASS + "a = Value(2.0, label='a')\nb = a * a\nb.backward()\na.data = 5.0\n"
    session = Session()
    result = session.run(code)
    assert result["program"]["values"] == {"a": 2.0}
    assert session.namespace["a"].data == 5.0


def test_the_server_never_imports_the_sandbox():
    probe = (
        "import sys, chainrule.app.main, chainrule.notebook.widget\n"
        "print([m for m in sys.modules if m.startswith('chainrule.sandbox')])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_numbers_json_cannot_hold_are_the_apis_strings():
    code = VALUE_CLASS + "a = Value(1e308)\nb = a * a\nc = b * 0.0\nc.backward()"
    result = Session().run(code)
    assert result["ok"]
    data = [node["data"] for node in result["nodes"]]
    grads = [node["grad"] for node in result["nodes"]]
    assert data == [1e308, "Infinity", 0.0, "NaN"] and "Infinity" in grads
    assert json.loads(as_json(result))["nodes"][1]["data"] == "Infinity"
    inf_leaf_code = VALUE_CLASS + "a = Value(0.0)\nb = a * float('inf')\nb.backward()"
    inf_leaf = Session().run(inf_leaf_code)
    assert inf_leaf["error"]["type"] == "NotAGraph" and inf_leaf["error"]["line"] == 101
    assert inf_leaf["error"]["message"] == "a leaf's data is inf: a program's numbers are finite"
    # The reader's words, in the page's language (the page puts them in its own sentence).
    said = {lang: Session(lang=lang).run(inf_leaf_code)["error"]["message"] for lang in LANGS}
    assert said["ru"] == "data листа равно inf: числа программы должны быть конечными"
    assert said["et"] == "lehe data on inf: programmi arvud peavad olema lõplikud"


def test_the_runner_says_when_the_code_has_run_and_its_graph_is_read():
    """`report_ran` is called once the learner's code has run (the page's limit for the code
    ends there: reading the graph has its own), once a run; not for code that failed; at once
    for a pick (it runs no code)."""
    said: list[int] = []
    session = Session(report_line=lambda line: said.append(line), report_ran=lambda: said.append(0))
    session.run(VALUE_CLASS + "a = Value(2.0)\nb = a * a\nb")
    assert said.count(0) == 1 and said[-1] == 0  # after every line it ran
    said.clear()
    failed = session.run("x = 1 / 0")
    assert failed["error"]["type"] == "PythonError" and 0 not in said
    session.run(VALUE_CLASS + "a = Value(2.0)\nb = a * a\nb")
    said.clear()
    assert session.pick("a")["ok"] and said == [0]
