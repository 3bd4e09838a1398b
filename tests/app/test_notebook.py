"""chainrule in Python and Jupyter: `show()` outside a kernel is a drawing, and
examples/micrograd.ipynb, run by nbclient in a real kernel, shows widgets whose state holds
micrograd's own numbers (micrograd, run again in this process, is the oracle)."""

from __future__ import annotations

import base64
import json
import math
import random
import shutil
import zlib
from pathlib import Path

import nbformat
import orjson
import pytest
from micrograd.engine import Value
from micrograd.nn import MLP, Neuron
from nbclient import NotebookClient
from onefile_traces import block_json

import chainrule
from chainrule.app.export.onefile import expanded_trace

ROOT = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_show_outside_a_kernel_is_a_drawing_that_says_how_to_play_it():
    shown = chainrule.show("a = 2\nb = a * a")
    svg = shown._repr_svg_()
    assert "<svg" in svg and "grad 4" in svg.replace("grad=", "grad ").replace("&#160;", " ")
    assert repr(shown) == (
        "<chainrule graph: 2 nodes, b = 4; in Jupyter, show() plays it; save_html(...) "
        "writes a file that plays it anywhere>"
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda source: chainrule.trace(source),
        lambda source: chainrule.show(source),
        lambda source: chainrule.save_html(source, "/dev/null"),
    ],
    ids=["trace", "show", "save_html"],
)
def test_a_bad_program_s_traceback_says_where_as_the_page_does(call):
    """A typo in a program given to the Python API: the traceback's last lines (Python and
    IPython print an exception's notes under its message) say the line, the column and the
    caret, not the message alone."""
    with pytest.raises(chainrule.engine.ProgramError) as raised:
        call("a = 2\nb = a +* 3")
    assert str(raised.value) == "'+' needs a right-hand side, found '*'"
    assert raised.value.__notes__ == ["line 2, column 8:\n  b = a +* 3\n         ^"]


def test_a_bad_program_s_traceback_says_it_in_the_language_asked_for():
    with pytest.raises(chainrule.engine.ProgramError) as raised:
        chainrule.trace("a = 2\nb = a +* 3", lang="ru")
    (note,) = raised.value.__notes__
    said, where, snippet, caret = note.split("\n")
    assert said == raised.value.message_in("ru") and said.isascii() is False
    assert (where, snippet, caret) == ("строка 2, столбец 8:", "  b = a +* 3", "         ^")


@pytest.mark.parametrize(
    "call",
    [
        lambda values: chainrule.trace("c = a * b", values=values),
        lambda values: chainrule.show("c = a * b", values=values),
        lambda values: chainrule.save_html("c = a * b", "/dev/null", values=values),
    ],
    ids=["trace", "show", "save_html"],
)
def test_a_value_that_is_no_number_is_said_as_the_api_says_it(call):
    # It was Python's own "could not convert string to float: 'x'", with no leaf named.
    with pytest.raises(chainrule.engine.BadValue) as raised:
        call({"a": "x"})
    assert str(raised.value) == "the value of 'a' must be a number, got str"
    # A number of numpy's, or of Python's other kinds, is a number.
    numpy = pytest.importorskip("numpy")
    trace = chainrule.trace("c = a * b", values={"a": numpy.float32(2.5), "b": numpy.int64(3)})
    root = next(node for node in trace["nodes"] if node["id"] == trace["root"])
    assert root["data"] == 7.5


def test_a_program_in_a_file_is_read_from_its_path(tmp_path):
    program = tmp_path / "neuron.py"
    program.write_text("a = 2\nb = a * 3\n", encoding="utf-8")
    by_path, by_text = chainrule.trace(program), chainrule.trace(program.read_text("utf-8"))
    del by_path["layout"]["cached"], by_text["layout"]["cached"]  # the second's came from cache
    assert by_path == by_text
    assert "b = 6" in repr(chainrule.show(program))
    written = chainrule.save_html(program, tmp_path / "neuron.html")
    assert written.read_text(encoding="utf-8").startswith("<!doctype html>")


def test_a_file_s_name_given_as_a_program_says_how_to_read_the_file(tmp_path, monkeypatch):
    # A stranger's first try: chainrule.trace("neuron.py") read the name as a program ('.py' is
    # not part of the language) and said nothing of the file.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "neuron.py").write_text("a = 2\nb = a * 3\n", encoding="utf-8")
    with pytest.raises(chainrule.engine.ProgramError) as raised:
        chainrule.trace("neuron.py")
    where, said = raised.value.__notes__
    assert where.startswith("line 1, column 7:")
    assert said == (
        "'neuron.py' names a file, read here as a program's text: pass "
        "pathlib.Path('neuron.py') to read the program it holds"
    )
    with pytest.raises(TypeError) as raised:
        chainrule.trace(42)
    assert str(raised.value) == "expected a program (str) or a file's path (pathlib.Path); got int"


def test_the_widget_s_packed_trace_is_the_one_file_form_s_json_byte_for_byte():
    """packed_trace writes the JSON a field at a time and compresses each while the next is
    written: what it sends inflates to orjson's encoding of the whole compact trace, for a scalar
    reply (its nodes first), a tensor program's reply, and a reply whose fields come in another
    order; a reply past the size budget is still refused."""
    from chainrule.app.export.onefile import compact_trace
    from chainrule.notebook.traces import trace_of
    from chainrule.notebook.widget import packed_trace

    scalar = trace_of("a = 2\nb = a * a + 1\nc = tanh(b) * a")
    tensor = trace_of(
        "X = tensor([[1.0, 2.0], [3.0, -1.0]])\nW = tensor([[0.5], [-0.5]])\nL = sum(X @ W)"
    )
    shuffled = dict(reversed(list(scalar.items())))
    assert next(iter(scalar)) == "nodes" and tensor.get("kind") == "tensor"
    for trace in (scalar, tensor, shuffled):
        assert zlib.decompress(packed_trace(trace)) == orjson.dumps(compact_trace(trace))
    assert compact_trace(scalar) != scalar  # the one-file form: edges as their local derivatives


def test_a_packed_trace_past_its_budget_is_refused_with_its_size(monkeypatch):
    from chainrule.app.export.onefile import compact_trace
    from chainrule.engine import LimitExceeded, reply
    from chainrule.notebook.traces import trace_of
    from chainrule.notebook.widget import packed_trace

    trace = trace_of("a = 2\nb = a * a + 1")
    size = len(orjson.dumps(compact_trace(trace)))
    monkeypatch.setattr(reply, "REPLY_BYTES_FLOOR", 100)
    monkeypatch.setattr(reply, "reply_budget", lambda nodes, source: 100)
    with pytest.raises(LimitExceeded, match=f"reply would be {size:,} bytes"):
        packed_trace(trace)


def test_a_graph_past_the_export_s_limit_is_not_drawn_and_the_drawing_says_so():
    # micrograd's demo on 3 moons: 2,962 nodes (on its 100: 65,818, which Graphviz failed to
    # draw after 18 s of show() in the kernel).
    from chainrule.app.settings import get_settings
    from chainrule.notebook.widget import StaticGraph
    from chainrule.sandbox.moons import demo_total_loss

    _, total_loss = demo_total_loss(3)
    shown = chainrule.show(total_loss)  # outside a kernel: the drawing, or what says there is none
    nodes, limit = len(shown.trace["nodes"]), get_settings().export_max_nodes
    assert nodes == 2962 > limit == 2000
    assert shown._repr_svg_() is None  # IPython shows its repr instead
    assert repr(shown).startswith(f"<chainrule graph: {nodes:,} nodes, total_loss = ")
    html = StaticGraph(shown.trace).fallback_bundle("d")["text/html"]
    assert "<svg" not in html
    assert (
        f"<p>No drawing: its {nodes:,} nodes are more than a drawing holds ({limit:,}, the "
        "export&#x27;s limit).</p><p><small>To play it: run this cell in a trusted notebook"
    ) in html
    russian = StaticGraph(shown.trace).fallback_bundle("d", lang="ru")["text/html"]
    assert "<p>Без рисунка: в графе 2\u00a0962 узлов, больше" in russian


def neuron_out() -> Value:
    random.seed(0)
    x1, x2 = Value(2.0), Value(-1.0)
    out = Neuron(2)([x1, x2])
    out.backward()
    return out


def mlp_loss() -> Value:
    random.seed(1)
    model = MLP(2, [2, 1])
    xs, ys = [[2.0, 3.0], [-1.0, -2.0]], [1.0, -1.0]
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)), Value(0.0))
    loss.backward()
    return loss


def square() -> Value:
    a = Value(3.0)
    out = a * a
    out.backward()
    return out


def saved_trace(model: dict) -> dict:
    """The trace a player's saved widget state holds: its `trace_zlib` buffer (base64 in the
    notebook), zlib-compressed JSON."""
    (buffer,) = [b for b in model["buffers"] if b["path"] == ["trace_zlib"]]
    assert buffer["encoding"] == "base64"
    return expanded_trace(json.loads(zlib.decompress(base64.b64decode(buffer["data"]))))


def leaf_numbers(root: Value) -> list[tuple[float, float]]:
    seen, stack, leaves = set(), [root], []
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(node._prev)
            if not node._prev:
                leaves.append((node.data, node.grad))
    return sorted(leaves)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    where = tmp_path_factory.mktemp("notebook")
    shutil.copy(ROOT / "examples" / "micrograd.ipynb", where / "micrograd.ipynb")
    notebook = nbformat.read(where / "micrograd.ipynb", as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(where)}}
    ).execute()
    return notebook, where


def test_the_example_notebook_runs_and_its_widgets_hold_micrograds_numbers(executed):
    notebook, where = executed
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    shown = [out.data for out in outputs if WIDGET_VIEW in out.get("data", {})]
    views = [data[WIDGET_VIEW]["model_id"] for data in shown]
    assert len(views) == 3
    # Each player is preceded by its drawing, an output of its own (for viewers without widgets,
    # and for JupyterLab once the player's model is gone: tests/browser/test_notebook_fronts.py),
    # one copy of it (the HTML alone, no image/svg+xml beside it), tagged with the id the
    # player's `drawing` trait holds (the player hides it while it works).
    state = notebook.metadata.widgets[WIDGET_STATE]["state"]
    # The player's script is saved once: each player's is a loader of the kernel's one library.
    bundle = (ROOT / "static" / "embed" / "chainrule-embed.js").read_text(encoding="utf-8")
    scripts = [
        model["state"].get("bundle") or model["state"].get("_esm") for model in state.values()
    ]
    assert scripts.count(bundle) == 1, [len(script or "") for script in scripts]
    assert {state[view]["state"]["library"] for view in views} == {
        model_id for model_id, model in state.items() if model["state"].get("bundle") == bundle
    }
    for k, out in enumerate(outputs):
        if WIDGET_VIEW in out.get("data", {}):
            drawing = outputs[k - 1].data
            assert set(drawing) == {"text/html", "text/plain"}
            html = drawing["text/html"].replace("\n", "")
            tag = state[out.data[WIDGET_VIEW]["model_id"]]["state"]["drawing"]
            assert f'<div class="chainrule-static" data-chainrule-drawing="{tag}"><svg' in html
            assert html.count("<svg") == 1
            assert "trusted notebook" in out.data["text/plain"]
    for model_id, root in zip(views, (neuron_out(), mlp_loss(), square()), strict=True):
        widget = state[model_id]["state"]
        trace = saved_trace(state[model_id])
        assert widget["ops"].keys() >= {"+", "*", "**k", "relu"}
        (top,) = [node for node in trace["nodes"] if node["id"] == trace["root"]]
        assert math.isclose(top["data"], root.data, rel_tol=1e-12)
        # A number micrograd wrapped in a Value is a constant (it has its gradient too).
        leaves = sorted(
            (n["data"], n["grad"]) for n in trace["nodes"] if n["kind"] in ("leaf", "const")
        )
        theirs = leaf_numbers(root)
        assert len(leaves) == len(theirs)
        for (data, grad), (mg_data, mg_grad) in zip(leaves, theirs, strict=True):
            assert data == mg_data and math.isclose(grad, mg_grad, rel_tol=1e-9, abs_tol=1e-12)
    square_trace = saved_trace(state[views[2]])
    assert square_trace["warnings"][0]["type"] == "merged_operand"
    assert (where / "micrograd-loss.html").stat().st_size > 10_000


def test_a_widget_recomputes_its_leaves_in_the_kernel():
    pytest.importorskip("anywidget")
    from chainrule.notebook.widget import widget

    shown = widget("a = 2\nb = a * a + 1")
    assert shown.trace["nodes"][0]["grad"] == 4.0
    shown.values = {"a": 5.0}  # what the page sets when the slider moves
    assert shown.error is None
    assert shown.trace["nodes"][0]["data"] == 5.0 and shown.trace["nodes"][0]["grad"] == 10.0
    shown.values = {"a": float("nan")}
    assert shown.error["type"] == "BadValue"


def test_a_player_keeps_a_graph_too_big_to_draw_packed_and_no_value_of_it():
    """ipywidgets keeps every player a kernel showed until it is closed: the player of a graph
    too big to draw keeps the bytes it sent, unpacked when its `trace` is asked for, and keeps
    none of the learner's Values (micrograd's demo: 190 MB more a `show()` in the kernel, for
    good). A small graph's trace is kept as it is (the drawing shown before the player)."""
    pytest.importorskip("anywidget")
    import gc
    import weakref

    from chainrule.app.settings import get_settings
    from chainrule.notebook.widget import unpacked_trace, widget
    from chainrule.sandbox.moons import demo_total_loss

    def shown_and_let_go():  # (a function's frame keeps its locals' snapshot while it runs)
        _, total_loss = demo_total_loss(3)  # 2,962 nodes, over the export's 2,000
        return chainrule.trace_value(total_loss), widget(total_loss), weakref.ref(total_loss)

    reply, shown, graph = shown_and_let_go()
    gc.collect()
    assert graph() is None  # the player held no Value of it
    assert len(reply["nodes"]) > get_settings().export_max_nodes
    assert shown.trace == unpacked_trace(shown.trace_zlib)
    assert {**shown.trace, "layout": None} == {**reply, "layout": None}  # (its layout cached)
    assert shown.trace is not shown.trace  # unpacked each time: nothing but the bytes kept
    assert repr(shown).startswith("<chainrule player: 2,962 nodes, total_loss = ")
    shown.values = {**shown.values, reply["leaves"][0]["name"]: 0.5}  # a slider: kept packed
    assert shown.error is None and shown.trace["leaves"][0]["value"] == 0.5
    small = widget("a = 2\nb = a * a + 1")
    assert small.trace is small.trace


def test_a_widget_traces_its_graph_once_and_again_for_each_slider_move(monkeypatch):
    # traitlets tells the widget of the values it was built with (old value None): that was a
    # second trace of the whole graph in every show() (micrograd's demo: 3 s more).
    pytest.importorskip("anywidget")
    from chainrule.notebook import widget as notebook_widget

    traced, real = [], notebook_widget.traced

    def counted(*args, **kwargs):
        traced.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(notebook_widget, "traced", counted)
    shown = notebook_widget.widget(square())
    assert len(traced) == 1
    shown.values = {"v1": 5.0}
    assert len(traced) == 2 and shown.trace["nodes"][-1]["data"] == 25.0
    given = notebook_widget.widget("a = 2\nb = a * a", values={"a": 3.0})
    assert len(traced) == 3 and given.trace["nodes"][-1]["data"] == 9.0


def test_a_widget_says_the_reader_s_warnings_in_its_language_and_keeps_it(tmp_path):
    pytest.importorskip("anywidget")
    from chainrule.notebook.widget import widget

    a = Value(3.0)
    b = a * a  # micrograd's set keeps one child: the program says a * a, and warns
    shown = widget(b, lang="et")
    merged = (
        "micrograd hoiab sõlme b sisendeid hulgas (set), seega joonistab draw_dot ühe serva "
        "sõlmest a; b = a * a kasutab seda kaks korda ning õiges graafis on kaks serva "
        "(mõlemat mööda liigub gradient)"
    )
    assert [w["message"] for w in shown.trace["warnings"]] == [merged]
    shown.values = {"a": 5.0}  # a slider moved: the kernel traces again, in the same language
    assert shown.error is None and shown.trace["nodes"][0]["data"] == 5.0
    assert [w["message"] for w in shown.trace["warnings"]] == [merged]
    # The one-file HTML carries the trace's warnings as its reply does: in its language.
    html = chainrule.save_html(b, tmp_path / "b.html", lang="ru").read_text(encoding="utf-8")
    assert "micrograd хранит входы b во множестве (set)" in block_json(html)


def test_a_value_with_an_op_chainrule_does_not_know_is_drawn_opaque_and_named():
    a = Value(2.0)
    b = a * 3.0
    b._op = "cosh"  # another library's spelling: the numbers say it is `*` (2 × 3 = 6)
    assert chainrule.trace_value(b)["program"]["source"].endswith("* 3.0\n")
    b.data = 7.0  # an op no row of the table computes from 2 and 3: an opaque node, said
    (warning,) = chainrule.trace_value(b)["warnings"]
    assert warning["type"] == "unknown_op" and "op 'cosh'" in warning["message"]
    with pytest.raises(TypeError, match="expected a program"):
        chainrule.show(3.0)


def test_in_marimo_show_is_the_widget_marimo_wraps(monkeypatch):
    pytest.importorskip("anywidget")
    import types

    import anywidget

    marimo = types.ModuleType("marimo")
    marimo.running_in_notebook = lambda: True  # what a marimo notebook's kernel answers
    monkeypatch.setitem(__import__("sys").modules, "marimo", marimo)
    shown = chainrule.show(square())
    assert isinstance(shown, anywidget.AnyWidget)
    assert shown.trace["program"]["source"] == "v1 = 3.0\nout = v1 * v1\n"


def test_mo_ui_anywidget_wraps_what_show_returns():
    mo = pytest.importorskip("marimo")  # not in the test extra (150 MB): docs/python.md
    from chainrule.notebook.widget import widget

    shown = widget(square())
    wrapped = mo.ui.anywidget(shown)
    sent = json.loads(zlib.decompress(wrapped.value["trace_zlib"]))
    # Held as a one-file HTML holds it (the player writes the rest back): the edges' local
    # derivatives alone, the program without its copy of the source.
    assert sent["onefile"] == {"edges": "local_grad", "program_source": 0}
    assert sent["edges"] == [edge["local_grad"] for edge in shown.trace["edges"]]
    assert expanded_trace(sent) == shown.trace
    assert shown.trace["root"] and wrapped.value["ops"]


def trained_mlp_loss(steps: int = 2):
    """The lecture's training loop (micrograd's MLP(3, [4, 4, 1]) on its 4 examples), whose
    `for p in n.parameters()` leaves `p` holding the last parameter; the loss recomputed after
    it, as the lecture prints it."""
    random.seed(1)
    n = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    for _step in range(steps):
        ypred = [n(x) for x in xs]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred, strict=True))
        for p in n.parameters():
            p.grad = 0.0
        loss.backward()
        for p in n.parameters():
            p.data += -0.05 * p.grad
    ypred = [n(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred, strict=True))
    loss.backward()
    first, again = chainrule.trace_value(loss), chainrule.trace_value(loss)
    return first, again, chainrule.show(loss).trace, n


def test_the_notebook_names_parameters_by_where_they_live_never_by_a_loop_variable():
    # Issue 39 item 4: after the loop, `p` holds n.layers[2].neurons[0].b; it named that leaf.
    traced, again, shown, n = trained_mlp_loss()
    program = traced["program"]
    assert program["source"] == again["program"]["source"] == shown["program"]["source"]
    assert "p" not in program["leaves"] and not any(
        name.startswith("v") and name[1:].isdigit() for name in program["leaves"]
    )
    assert len(program["leaves"]) == len(n.parameters()) == 41
    labels = {node["label"] for node in traced["nodes"] if node["kind"] == "leaf"}
    assert {"n.layers[0].neurons[1].w[0]", "n.layers[2].neurons[0].b"} <= labels
    assert "n_layers0_neurons1_w0 = " in program["source"]


@pytest.fixture
def first_view_cell(monkeypatch):
    """`run(code)`: the code run as a cell of a real IPython shell (its `post_run_cell` event
    and all), standing for a kernel's, with micrograd's demo on 5 moons (4,258 nodes) as
    `total_loss` and a first view from 2,500 nodes on (`first_view_min_nodes`); the shell's
    namespace after it."""
    pytest.importorskip("anywidget")
    from IPython.core.interactiveshell import InteractiveShell

    from chainrule.app.settings import get_settings
    from chainrule.notebook import widget as widget_module
    from chainrule.sandbox.moons import demo_total_loss

    monkeypatch.setenv("CHAINRULE_FIRST_VIEW_MIN_NODES", "2500")
    get_settings.cache_clear()
    monkeypatch.setattr(widget_module, "_in_kernel", lambda: True)
    shell = InteractiveShell.instance()
    model, total_loss = demo_total_loss(5)
    shell.user_ns.update(model=model, total_loss=total_loss, widget=widget_module.widget)

    def run(code: str) -> dict:
        result = shell.run_cell(code)
        result.raise_error()
        return shell.user_ns

    yield run
    InteractiveShell.clear_instance()
    get_settings.cache_clear()


def unpacked_json(packed: bytes) -> dict:
    return orjson.loads(zlib.decompress(packed))


def test_a_big_graph_s_player_sends_its_first_view_in_the_cell_and_its_trace_after_it(
    first_view_cell,
):
    """Issue 42: the player of a graph of `first_view_min_nodes` or more, shown by a cell,
    sends its overview's first view while the cell runs and its trace once the cell has run
    (IPython's post_run_cell): the trace is the one `trace_value` gives, and the first view
    holds the reply's own groups, overview, flags, root, ops, data and edges."""
    ns = first_view_cell(
        "shown = widget(total_loss)\n"
        "during = (bytes(shown.trace_zlib), bytes(shown.first_view), repr(shown))"
    )
    packed, first_packed, said = ns["during"]
    shown = ns["shown"]
    assert packed == b"" and first_packed
    assert shown.first_view == b"" and shown.trace_zlib  # sent after the cell, the first view gone
    assert said == repr(shown) and said.startswith("<chainrule player: 4,258 nodes, total_loss = ")
    reply = first_view_cell("import chainrule\nreply = chainrule.trace_value(total_loss)")["reply"]
    assert {**shown.trace, "layout": None} == {**reply, "layout": None}
    first = unpacked_json(first_packed)
    placed = ("box", "card")  # the layout's, placed after the first view was sent
    assert first["groups"] == [
        {k: v for k, v in group.items() if k not in placed} for group in reply["groups"]
    ]
    assert [first[k] for k in ("overview", "grad_flags", "root")] == [
        reply[k] for k in ("overview", "grad_flags", "root")
    ]
    assert first["count"] == len(reply["nodes"])
    assert first["op"] == [node["op"] for node in reply["nodes"]]
    assert first["data"] == [node["data"] for node in reply["nodes"]]
    pairs = [(int(e["source"][1:]), int(e["target"][1:])) for e in reply["edges"]]
    assert list(zip(first["edges"][::2], first["edges"][1::2], strict=True)) == pairs


def test_a_first_view_s_trace_asked_for_in_its_cell_is_made_then_and_only_once(
    first_view_cell, monkeypatch
):
    from chainrule.app.api import graph_body

    made = []
    placed = graph_body._placed_reply

    def counted(*args, **kwargs):
        made.append(1)
        return placed(*args, **kwargs)

    monkeypatch.setattr(graph_body, "_placed_reply", counted)
    ns = first_view_cell(
        "shown = widget(total_loss)\n"
        "size = len(shown.trace['nodes'])\n"
        "during = (bool(shown.trace_zlib), bytes(shown.first_view))"
    )
    assert ns["size"] == 4_258 and ns["during"] == (True, b"")
    assert made == [1]  # the cell's end made nothing again
    assert not ns["get_ipython"]().events.callbacks["post_run_cell"]  # and left no callback


def test_a_big_graph_s_player_made_outside_a_cell_comes_with_its_trace(first_view_cell):
    """A button's callback, a script: no cell ends to send a trace after, so none is waited for."""
    ns = first_view_cell("")
    shown = ns["widget"](ns["total_loss"])
    assert shown.first_view == b"" and len(shown.trace["nodes"]) == 4_258


def test_a_first_view_s_trace_past_its_budget_is_the_player_s_error(first_view_cell, monkeypatch):
    """The bytes a player sends are bounded after a first view too: made after the cell, a trace
    over its budget is not sent, and the player's `error` says why (the page shows it)."""
    from chainrule.engine import reply

    monkeypatch.setattr(reply, "REPLY_BYTES_FLOOR", 100)
    monkeypatch.setattr(reply, "reply_budget", lambda nodes, source: 100)
    shown = first_view_cell("shown = widget(total_loss)")["shown"]
    assert shown.trace_zlib == b"" and shown.error["type"] == "LimitExceeded"
    assert "reply would be" in shown.error["message"]
    with pytest.raises(RuntimeError, match="could not be made") as raised:
        shown.trace  # noqa: B018 (the property raises)
    assert type(raised.value.__cause__).__name__ == "LimitExceeded"


def test_a_displayed_first_view_s_trace_is_made_when_it_is_displayed(first_view_cell):
    """A cell that displays the player and goes on (a training loop) does not hold its trace
    back: it is made once the first view is on its way, at `display()`."""
    ns = first_view_cell(
        "shown = widget(total_loss)\n"
        "before = bool(shown.trace_zlib)\n"
        "display(shown)\n"
        "after = (bool(shown.trace_zlib), shown.first_view)"
    )
    assert ns["before"] is False and ns["after"] == (True, b"")


def test_a_player_still_waiting_has_its_trace_made_when_another_is_made(first_view_cell):
    """Each waiting player holds its graph's passes: one at a time."""
    ns = first_view_cell(
        "first = widget(total_loss)\n"
        "second = widget(total_loss)\n"
        "during = (bool(first.trace_zlib), bool(second.trace_zlib))"
    )
    assert ns["during"] == (True, False)
    assert ns["second"].trace_zlib and ns["second"].first_view == b""


def test_a_player_closed_before_its_cell_ends_sends_nothing_and_still_has_its_trace(
    first_view_cell,
):
    ns = first_view_cell("shown = widget(total_loss)\nshown.close()")
    shown = ns["shown"]
    assert shown.trace_zlib == b""  # nothing was made for a page that has gone
    assert len(shown.trace["nodes"]) == 4_258  # made when asked for
