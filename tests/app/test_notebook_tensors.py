"""The Python API and the notebook widget with a tensor program (issue 43): `chainrule.trace`
answers a tensor program with its `kind: "tensor"` reply, `chainrule.trace_tensors` gives its
tensors of Values; `chainrule.show` is the widget whose leaf cells recompute in the kernel and
whose gradient cells' fan-in the kernel computes (the player's messages); outside a kernel, the
tensor view's drawing."""

from __future__ import annotations

import base64
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import chainrule
from chainrule.engine.narration import fmt

SOURCE = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
L = tanh(X @ W + b).sum()"""
X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = np.array([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
B = np.array([0.1, 0.1, 0.1])


def reference(w: np.ndarray) -> tuple[float, np.ndarray]:
    """L and dL/dW by NumPy, written out: d tanh(z) = 1 − tanh(z)², dW = Xᵀ · dZ."""
    h = np.tanh(X @ w + B)
    return float(h.sum()), X.T @ (1 - h**2)


def node(trace: dict, name: str) -> dict:
    return next(n for n in trace["nodes"] if n["name"] == name)


def test_trace_answers_a_tensor_program_with_its_tensor_reply():
    trace = chainrule.trace(SOURCE, {"W[1,2]": 0.25})
    assert trace["kind"] == "tensor" and trace["leaves"][1] == {
        "name": "W",
        "id": "t1",
        "shape": [2, 3],
    }
    w = W.copy()
    w[1, 2] = 0.25
    loss, dw = reference(w)
    root = next(n for n in trace["nodes"] if n["id"] == trace["root"])
    assert math.isclose(root["data"], loss, rel_tol=1e-12)
    assert np.allclose(node(trace, "W")["grad"], dw, rtol=1e-12, atol=0)
    # Its words in the language asked for, as a scalar trace's.
    assert chainrule.trace(SOURCE, lang="ru")["kind"] == "tensor"


def test_trace_tensors_gives_the_tensors_of_values():
    trace = chainrule.trace_tensors(SOURCE)
    loss, dw = reference(W)
    assert [v.grad for v in trace.tensor("W").elements] == pytest.approx(dw.ravel(), rel=1e-12)
    assert trace.root.elements[0].data == pytest.approx(loss, rel=1e-12)


def test_show_outside_a_kernel_is_the_tensor_view_s_drawing():
    shown = chainrule.show(SOURCE)
    assert repr(shown).startswith("<chainrule graph: 7 tensors, L = ")
    svg = ET.fromstring(shown._repr_svg_().encode())
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    _, dw = reference(W)
    assert "W" in texts and "2\u00d73" in texts and "dW" in texts
    assert all(fmt(g) in texts for g in dw.ravel())


@pytest.fixture
def player():
    pytest.importorskip("anywidget")
    from chainrule.notebook.widget import widget

    shown = widget(SOURCE)
    shown.sent = []
    shown.send = lambda content, buffers=None: shown.sent.append(content)
    return shown


def ask(player, content: dict) -> dict:
    """What the kernel answers to a message from the page."""
    player._message(player, content, [])
    return player.sent[-1]


def test_the_widget_recomputes_a_leaf_cell_in_the_kernel(player):
    assert player.trace["kind"] == "tensor"
    player.values = {"W[1,2]": 0.25}  # what the page sets when a cell changes
    assert player.error is None
    w = W.copy()
    w[1, 2] = 0.25
    assert np.allclose(node(player.trace, "W")["grad"], reference(w)[1], rtol=1e-12, atol=0)
    player.values = {"W[0,0]": float("nan")}  # refused by the engine: said in the player
    assert player.error["type"] == "BadValue"
    assert player.error["message"] == "the value of 'W[0,0]' must be a finite number, got nan"


def test_the_widget_answers_a_fan_in_message_with_the_engine_s_terms(player):
    answer = ask(player, {"fan_in": {"id": 7, "tensor": "t1", "index": [1, 2], "values": {}}})
    assert set(answer) == {"fan_in"} and answer["fan_in"]["id"] == 7
    reply = answer["fan_in"]["reply"]
    _, dw = reference(W)
    # dW[1,2] = Σᵢ X[i,1]·dZ[i,2]: three terms, each X[i,1] times the upstream, summing to it.
    assert reply["tensor"] == "t1" and reply["index"] == [1, 2]
    assert sorted(c["local"] for c in reply["contributions"]) == sorted(X[:, 1])
    assert math.isclose(reply["sum"], dw[1, 2], rel_tol=1e-12)
    assert reply["sum"] == reply["grad"]
    # With the page's values: the numbers of that program.
    moved = ask(player, {"fan_in": {"id": 8, "tensor": "W", "index": [1, 2],
                                    "values": {"X[0,1]": -4.0}}})["fan_in"]["reply"]  # fmt: skip
    x = X.copy()
    x[0, 1] = -4.0
    h = np.tanh(x @ W + B)
    assert math.isclose(moved["sum"], (x.T @ (1 - h**2))[1, 2], rel_tol=1e-12)


def test_the_widget_answers_a_bad_ask_with_an_error_in_its_language(player):
    answer = ask(player, {"fan_in": {"id": 1, "tensor": "W", "index": [5, 2]}})["fan_in"]
    assert answer == {"id": 1, "error": {**answer["error"], "type": "ShapeError"}}
    assert answer["error"]["message"] == (
        "index [5, 2] is not an element of a tensor of shape (2, 3)"
    )
    malformed = ask(player, {"fan_in": {"id": 2, "tensor": "W", "index": "1,2"}})["fan_in"]
    assert malformed["error"] == {"type": "InvalidRequest", "message": "invalid request"}
    player.sent.clear()
    player._message(player, {"something": "else"}, [])
    assert player.sent == []  # not a fan-in ask: nothing to answer


def test_the_widget_holds_the_values_it_was_traced_with():
    pytest.importorskip("anywidget")
    from chainrule.notebook.widget import widget

    shown = widget(SOURCE, {"W[1,2]": 0.25})
    assert shown.values == {"W[1,2]": 0.25}  # where the page's cells start
    assert node(shown.trace, "W")["data"][1][2] == 0.25 and shown.error is None
    w = W.copy()
    w[1, 2] = 0.25
    shown.values = {"W[1,2]": 0.25, "X[0,0]": 5.0}  # a cell changed on the page: both kept
    x = X.copy()
    x[0, 0] = 5.0
    h = np.tanh(x @ w + B)
    assert np.allclose(node(shown.trace, "W")["grad"], x.T @ (1 - h**2), rtol=1e-12, atol=0)


def test_a_big_tensor_program_s_saved_drawing_is_a_png():
    """makemore's MLP at batch 32: its grids are 4 MB of SVG, saved in the notebook as a PNG."""
    from chainrule.bench.tensors import makemore
    from chainrule.notebook.traces import traced
    from chainrule.notebook.widget import MAX_INLINE_SVG, StaticGraph

    big = StaticGraph(traced(makemore(1))).fallback_bundle("d")["text/html"]
    assert "<svg" not in big and len(big) < MAX_INLINE_SVG
    png = base64.b64decode(big.split('src="data:image/png;base64,')[1].split('"')[0])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    small = StaticGraph(chainrule.trace(SOURCE)).fallback_bundle("d")["text/html"]
    assert "<svg" in small and "<img" not in small
