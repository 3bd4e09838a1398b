"""`target` on /api/graph and /api/values, and POST /api/paths, through HTTP."""

from __future__ import annotations

from test_graph_api import engine_json, without_layout

DIAMOND = "a = 2\nb = a + 1\nc = a * 3\nd = b * c"


def test_a_target_s_trace_is_the_engine_s(client):
    response = client.post("/api/graph", json={"source": DIAMOND, "target": "c"})
    assert response.status_code == 200
    assert without_layout(response.json()) == engine_json(DIAMOND, target="c")


def test_new_values_for_a_target_s_graph_are_its_numbers_and_a_root_s_structure_is_stale(client):
    root = client.post("/api/graph", json={"source": DIAMOND}).json()
    body = {"source": DIAMOND, "target": "c", "values": {"a": 5.0}}
    stale = client.post("/api/values", json={**body, "structure": root["structure"]})
    assert stale.status_code == 409 and stale.json()["error"]["type"] == "StaleStructure"
    target = client.post("/api/graph", json={"source": DIAMOND, "target": "c"}).json()
    fresh = client.post("/api/values", json={**body, "structure": target["structure"]}).json()
    # ∂c/∂a = 3, ∂c/∂3 = a = 5 (a constant has a grad too); b, its 1 and d are off target: 0.
    assert fresh["grad"] == [3.0, 0.0, 0.0, 5.0, 1.0, 0.0]


def test_paths_of_a_program_with_astronomically_many_paths(client):
    # 3ⁿ paths from x0 through n = 3,000 steps: counted to the cap, the 4 largest listed.
    source = "x0 = 0.5\n" + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(3000))
    reply = client.post("/api/paths", json={"source": source, "leaf": "x0", "limit": 4}).json()
    assert reply["count"] == "1" + "0" * 60 and reply["count_exact"] is False
    assert reply["complete"] is False and len(reply["paths"]) == 4
    # The largest goes through every product x_k·x_k (local x_k) once x_k > 1, and takes the
    # direct edge (local 1) at x0 = 0.5 and x1 = 0.75: 6001 nodes less those two product nodes.
    assert len(reply["paths"][0]["nodes"]) == 5999
    assert reply["paths"][0]["text"].count("∂") == 2 * 12 + 0  # the middle elided
