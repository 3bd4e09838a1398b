"""`POST /api/landscape` (issue 27, part 6): the Train lab's contours, computed by the engine."""

from __future__ import annotations

import pytest
import sympy as sp

from chainrule import engine

LINE = "loss = (w*2 + b - 5)**2"
BODY = {"source": LINE, "parameters": ["w", "b"], "x_range": [-1.0, 3.0],
        "y_range": [-2.0, 2.0], "points": 9}  # fmt: skip


def test_the_grid_is_the_losses_sympy_computes(client):
    response = client.post("/api/landscape", json=BODY)
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["parameters"] == ["w", "b"]
    assert reply["xs"] == [-1.0 + 0.5 * k for k in range(9)]
    assert reply["ys"] == [-2.0 + 0.5 * k for k in range(9)]
    w, b = sp.symbols("w b")
    loss = (2 * w + b - 5) ** 2
    for i, y in enumerate(reply["ys"]):
        for j, x in enumerate(reply["xs"]):
            assert reply["losses"][i][j] == float(loss.subs({w: x, b: y})), (x, y)


def test_other_leaves_are_held_at_the_request_values(client):
    body = {"source": "y = (w*x + b - 3)**2", "values": {"x": 3.0}, "parameters": ["w", "b"],
            "x_range": [0.0, 2.0], "y_range": [-1.0, 1.0], "points": 5}  # fmt: skip
    reply = client.post("/api/landscape", json=body).json()
    for i, y in enumerate(reply["ys"]):
        for j, x in enumerate(reply["xs"]):
            want = engine.trace(body["source"], {"x": 3.0, "w": x, "b": y}).root.data
            assert reply["losses"][i][j] == want


def test_points_outside_the_domain_are_the_api_s_non_finite_strings(client):
    body = BODY | {"source": "y = log(w) + b", "x_range": [-1.0, 1.0], "points": 3}
    reply = client.post("/api/landscape", json=body).json()
    assert [row[:2] for row in reply["losses"]] == [["NaN", "-Infinity"]] * 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"parameters": ["w"]}, "a loss landscape is drawn over exactly two parameters, got 1"),
        ({"parameters": ["w", "q"]},
         "'q' is not a leaf of this program, so it cannot be trained; its leaves are: w, b"),
        ({"parameters": ["b", "b"]}, "'b' is listed twice in the parameters"),
        ({"x_range": [3.0, -1.0]},
         "the range of 'w' must be two finite numbers, the first below the second, got "
         "[3.0, -1.0]"),
        ({"y_range": [1.0, 2.0, 3.0]},
         "the range of 'b' must be two finite numbers, the first below the second, got "
         "[1.0, 2.0, 3.0]"),
        ({"y_range": []},
         "the range of 'b' must be two finite numbers, the first below the second, got []"),
        ({"x_range": [-1e308, 1e308]},
         "the range of 'w' from −1e+308 to 1e+308 is too wide to split into points; narrow it"),
        ({"x_range": [1.0, 1.0000000000000002]},
         "the range of 'w' from 1.0 to 1.0000000000000002 is too narrow to hold 9 different "
         "values; widen it"),
        ({"points": 1}, "points must be a whole number from 2 to 61, got 1"),
        ({"points": 100000}, "points must be a whole number from 2 to 61, got 100000"),
    ],
)  # fmt: skip
def test_landscapes_that_cannot_be_drawn_are_400_bad_landscape(client, change, message):
    response = client.post("/api/landscape", json=BODY | change)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["message"]) == ("BadLandscape", message)
    assert error["line"] is None and error["caret"] == ""


def test_errors_are_said_in_the_request_language(client):
    response = client.post("/api/landscape", json=BODY | {"points": 0, "lang": "et"})
    assert response.json()["error"]["message"] == (
        "punktide arv (points) peab olema täisarv vahemikus 2 kuni 61, aga saadi 0"
    )
    response = client.post("/api/landscape?lang=ru", json=BODY | {"parameters": ["w"]})
    assert response.json()["error"]["message"] == (
        "ландшафт потерь строится ровно по двум параметрам, а получено 1"
    )


@pytest.mark.parametrize(
    "change",
    [{"x_range": "0,1"}, {"x_range": ["0", "1"]}, {"points": 2.5}, {"points": "9"},
     {"parameters": "w"}, {"unknown": 1}, {"x_range": [True, 2.0]}],
)  # fmt: skip
def test_malformed_bodies_are_422(client, change):
    response = client.post("/api/landscape", json=BODY | change)
    assert response.status_code == 422
    assert response.json()["error"]["type"] == "InvalidRequest"


def test_non_finite_ends_are_refused(client):
    for token in ("NaN", "Infinity", "-Infinity"):
        text = (f'{{"source": "y = w*b", "parameters": ["w", "b"], "x_range": [0, {token}], '
                f'"y_range": [0, 1], "points": 3}}')  # fmt: skip
        response = client.post(
            "/api/landscape", content=text, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422, token


def test_program_errors_are_those_of_api_graph(client):
    bad = client.post("/api/landscape", json=BODY | {"source": "y = w +* b"})
    graph = client.post("/api/graph", json={"source": "y = w +* b"})
    assert bad.status_code == graph.status_code == 400
    assert bad.json() == graph.json()


def test_a_request_s_work_is_bounded(make_client):
    client = make_client(landscape_max_node_points=5 * 81)
    nodes = len(engine.trace(LINE).nodes)
    response = client.post("/api/landscape", json=BODY)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        f"9 × 9 points of a graph that stands for {nodes} nodes (a call of the program's function "
        "counts as its body's nodes) is too much work for one request (at most 405 node-points); "
        f"ask for at most {int((5 * 81 // nodes) ** 0.5)} points a side"
    )


def test_a_long_program_is_computed_in_a_helper_process(make_client):
    """Programs past `offload_min_source_chars` leave the event loop's process, as descent's do."""
    client = make_client(offload_min_source_chars=10)
    source = "\n".join(f"c{k} = {k}" for k in range(5)) + "\nloss = (w*2 + b - 5)**2"
    reply = client.post("/api/landscape", json=BODY | {"source": source, "points": 3}).json()
    assert reply["losses"][1][1] == (2 * 1.0 + 0.0 - 5) ** 2


def test_names_that_are_not_text_are_422(client):
    """A lone surrogate in a name (JSON `"\\ud800"`) cannot be said back: refused, as descent
    refuses it."""
    text = ('{"source": "y = w*b", "parameters": ["w", "\\ud800"], "x_range": [0, 1], '
            '"y_range": [0, 1], "points": 3}')  # fmt: skip
    response = client.post(
        "/api/landscape", content=text, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["message"] == (
        "parameters: Value error, must be valid Unicode text (it contains a lone surrogate)"
    )
