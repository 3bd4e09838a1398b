"""chainrule.sandbox.datasets under CPython: micrograd's demo.ipynb pasted as it is runs in the
sandbox, its moons drawn as chainrule.sandbox.moons draws them, and what numpy and scikit-learn
do not stand in for is said by name."""

from __future__ import annotations

import pytest
from lecture_cells import DEMO_CELLS

from chainrule import engine
from chainrule.app.settings import AppSettings
from chainrule.sandbox.datasets import Rows
from chainrule.sandbox.moons import demo_total_loss, make_moons
from chainrule.sandbox.runner import MAX_DEPTH, MAX_NODES, MAX_VALUE_NODES, Session


def test_micrograds_demo_pasted_as_it_is_runs_on_the_same_moons() -> None:
    samples = 6
    result = Session().run(DEMO_CELLS.replace("SAMPLES", str(samples)))
    assert result["ok"], result.get("error")
    assert result["choice"]["name"] == "total_loss"
    # The oracle: chainrule.sandbox.moons's demo, with micrograd under CPython.
    _, total_loss = demo_total_loss(samples)
    trace = engine.trace(result["program"]["source"])
    assert trace.root.data == total_loss.data
    points, _ = make_moons(samples, noise=0.1, seed=1337)
    leaves = {leaf.label or leaf.name: leaf.data for leaf in trace.nodes if leaf.kind == "leaf"}
    assert sorted(v for name, v in leaves.items() if "model" not in name) == sorted(
        x for point in points for x in point
    )


def test_past_the_server_s_bound_the_demo_is_traced_in_the_browser(make_client) -> None:
    """The runner's bounds are the server's (`max_nodes`, past which the runner traces and lays
    out the graph itself: sandbox/local_trace.py; `max_value_nodes`, past which it refuses one).
    The demo on 8 moons (6,202 nodes, a program of 225,016 characters: past the 100,000 that
    bounded a request before issue 42's tokens) is the server's to trace; with a `max_nodes` of
    5,000 the runner traces it, as it traces the whole demo's 65,818 nodes by default
    (bench/sandbox.py `demo`); past a `max_value_nodes` of 5,000 it is refused, said with the
    limit."""
    settings = AppSettings()
    assert (MAX_NODES, MAX_VALUE_NODES) == (settings.max_nodes, settings.max_value_nodes)
    assert MAX_DEPTH == settings.max_depth
    code = DEMO_CELLS.replace("SAMPLES", "8")
    _, total_loss = demo_total_loss(8)
    sent = Session().run(code)
    assert sent["trace"] is None and len(sent["nodes"]) == 6_202
    program = sent["program"]["source"]
    assert len(program) == 225_016
    reply = make_client().post("/api/graph", json={"source": program})
    assert reply.status_code == 200 and len(reply.json()["nodes"]) == 6_202
    here = Session(max_nodes=5_000).run(code)
    trace = here["trace"]
    assert here["program"]["source"] == program and len(trace["nodes"]) == 6_202
    root = trace["nodes"][int(trace["root"][1:])]
    assert root["data"] == total_loss.data and root["grad"] == 1.0
    assert [part["kind"] for part in trace["overview"]["parts"]].count("sample") == 8
    refused = Session(max_value_nodes=5_000).run(code)
    assert refused["error"]["type"] == "TooManyNodes"
    assert refused["error"]["params"] == {"limit": 5_000}


def test_random_state_and_the_numpy_seed_decide_the_moons() -> None:
    code = (
        "import numpy as np\nfrom sklearn.datasets import make_moons\nnp.random.seed(7)\n"
        "A, a = make_moons(10, noise=0.2)\nB, b = make_moons(10, noise=0.2, random_state=3)\n"
    )
    session = Session()
    session.run(code)
    namespace = session.namespace
    assert namespace["A"].tolist() == make_moons(10, noise=0.2, seed=7)[0]
    assert namespace["b"].tolist() == make_moons(10, noise=0.2, seed=3)[1]


def test_rows_do_what_the_demo_does_with_x_and_y() -> None:
    x = Rows([[1.0, 2.0], [3.0, -4.0], [0.5, 0.25]])
    y = Rows([0, 1, 1])
    assert (y * 2 - 1).tolist() == [-1, 1, 1] and (1 - y).tolist() == [1, 0, 0]
    assert x[:, 0].tolist() == [1.0, 3.0, 0.5] and x[:, 1].tolist() == [2.0, -4.0, 0.25]
    assert x.shape == (3, 2) and y.shape == (3,) and len(x) == 3
    assert x[[2, 0]].tolist() == [[0.5, 0.25], [1.0, 2.0]] and x[1, 1] == -4.0
    assert x[:, 0].min() == 0.5 and x.max() == 3.0 and (-x)[1].tolist() == [-3.0, 4.0]
    assert [list(row) for row in x] == x.tolist() and all(type(v) is float for v in x[0])


@pytest.mark.parametrize(
    ("code", "module"),
    [
        ("from sklearn.datasets import make_blobs\nX, y = make_blobs(10)\n", "sklearn"),
        ("import numpy as np\nxx, yy = np.meshgrid([0, 1], [0, 1])\n", "numpy"),
        ("import sklearn.svm\n", "sklearn"),  # a part without a stand-in, at the import
        ("from sklearn.linear_model import LogisticRegression\n", "sklearn"),
    ],
)
def test_what_is_not_stood_in_for_is_said_by_name(code: str, module: str) -> None:
    error = Session().run(code)["error"]
    assert error["type"] == "Unavailable" and error["params"] == {"module": module}
