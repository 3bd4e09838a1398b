"""Forward mode through HTTP (`"pass": "forward"`, `"wrt"` on /api/graph and /api/values): the
engine's reply, the served schema's shape, and a clear 400 BadWrt for each bad request."""

from __future__ import annotations

import pytest
from test_graph_api import engine_json, without_layout
from test_openapi_contract import contract  # noqa: F401  (the fixture)

from chainrule import engine
from chainrule.engine.step_reader import step_objects

ABC = "a = 2\nb = -3\nc = 10\nf = (a + b) * c"
WHOSE = "the leaf whose tangents it carries (a, b, c)"
ADD_PASS = 'add "pass": "forward", or drop \'wrt\''
REVERSE_ONLY = (
    "forward mode runs the correct pass from the root only: drop 'mode', 'order' and "
    "'target', or ask for reverse mode"
)
NO_LEAF = "which is no leaf of the program: forward mode differentiates by a leaf (a, b, c)"


@pytest.mark.parametrize("preset", engine.PRESETS[:8], ids=lambda p: p["id"])
def test_a_forward_reply_is_the_engine_s_and_matches_the_schema(client, contract, preset):  # noqa: F811
    wrt = engine.trace(preset["source"], preset["values"]).graph.leaves[0][0]
    body = {"source": preset["source"], "values": preset["values"], "pass": "forward", "wrt": wrt}
    response = client.post("/api/graph", json=body)
    assert response.status_code == 200
    reply = contract.check(response, "/api/graph")
    assert reply["pass"] == "forward" and {step["phase"] for step in step_objects(reply)} == {
        "topo",
        "tangent",
    }
    want = engine_json(preset["source"], preset["values"], pass_="forward", wrt=wrt)
    assert without_layout(reply) == want


def test_new_values_of_a_forward_trace_are_its_tangents(client, contract):  # noqa: F811
    graph = client.post("/api/graph", json={"source": ABC, "pass": "forward", "wrt": "c"}).json()
    body = {"source": ABC, "pass": "forward", "wrt": "c", "values": {"a": 5.0}}
    response = client.post("/api/values", json={**body, "structure": graph["structure"]})
    numbers = contract.check(response, "/api/values")
    assert numbers["tangent"] == [0.0, 0.0, 1.0, 0.0, 2.0]  # ∂f/∂c = a + b = 5 − 3
    reverse = client.post("/api/graph", json={"source": ABC}).json()
    assert reverse["structure"] != graph["structure"] and reverse["pass"] == "reverse"
    stale = client.post("/api/values", json={**body, "structure": reverse["structure"]})
    assert stale.status_code == 409


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"pass": "forward"}, f"forward mode needs 'wrt': {WHOSE}"),
        ({"pass": "forward", "wrt": "f"}, f"'wrt' is 'f', {NO_LEAF}"),
        ({"wrt": "a"}, f"'wrt' goes with forward mode only: {ADD_PASS}"),
        ({"pass": "forward", "wrt": "a", "order": ["n4"]}, REVERSE_ONLY),
    ],
)  # fmt: skip
def test_a_bad_wrt_is_a_400_in_the_one_error_shape(client, contract, body, message):  # noqa: F811
    response = client.post("/api/graph", json={"source": ABC, **body})
    assert response.status_code == 400
    error = contract.check(response, "/api/graph")["error"]
    assert (error["type"], error["message"], error["line"]) == ("BadWrt", message, None)


def test_forward_mode_s_error_is_said_in_the_reader_s_language(client):
    response = client.post("/api/graph", json={"source": ABC, "pass": "forward", "lang": "et"})
    assert response.json()["error"]["message"].startswith("pärisuunaline režiim vajab 'wrt'")


@pytest.mark.parametrize("body", [{"pass": "sideways", "wrt": "a"}, {"pass": "forward", "wrt": 3}])
def test_a_malformed_pass_or_wrt_is_a_422(client, contract, body):  # noqa: F811
    response = client.post("/api/graph", json={"source": ABC, **body})
    assert response.status_code == 422
    assert contract.check(response, "/api/graph")["error"]["type"] == "InvalidRequest"
