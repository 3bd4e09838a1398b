"""`target` on /api/graph and /api/values, and POST /api/paths, through HTTP."""

from __future__ import annotations

import pytest
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


# A student's bad input in each new field (issue 27): the field, the body, the error type and the
# start of the message in each language. Every one a 400 in the one error shape, never a 500.
CHAIN_10_30 = "x0 = 0.5\n" + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(63))
BAD_INPUT = [
    ("/api/graph", {"source": DIAMOND, "pass": "forward", "wrt": "z"}, "BadWrt", None,
     {"en": "'wrt' is 'z', which is no leaf", "ru": "'wrt' равен 'z', а это не лист",
      "et": "'wrt' on 'z', mis ei ole programmi leht"}),
    ("/api/graph", {"source": DIAMOND, "target": "nothing"}, "BadTarget", None,
     {"en": "the target 'nothing' names no node", "ru": "цель 'nothing'",
      "et": "siht 'nothing' ei nimeta ühtki sõlme"}),
    ("/api/graph", {"source": "f(x) = f(x) * 2\nf(a)"}, "BadFunction", (1, 8),
     {"en": "'f' calls itself", "ru": "'f' вызывает саму себя", "et": "'f' kutsub iseennast"}),
    ("/api/paths", {"source": CHAIN_10_30, "leaf": "nope"}, "BadLeaf", None,
     {"en": "the paths start from 'nope', which names no node",
      "ru": "пути начинаются с 'nope', но такого узла нет",
      "et": "teed algavad sõlmest 'nope', mida pole"}),
]  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "ru", "et"])
@pytest.mark.parametrize(
    ("path", "body", "kind", "where", "said"), BAD_INPUT, ids=lambda x: str(x)[:12]
)
def test_a_student_s_bad_input_is_a_clear_400_in_each_language(
    client, lang, path, body, kind, where, said
):
    response = client.post(path, json={**body, "lang": lang})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert set(error) == {
        "type",
        "message",
        "line",
        "column",
        "end_line",
        "end_column",
        "snippet",
        "caret",
    }
    assert error["type"] == kind and error["message"].startswith(said[lang]), error["message"]
    if where:
        assert (error["line"], error["column"]) == where and error["caret"].strip() == "^"


def test_the_paths_of_10_to_the_30_paths_are_counted_exactly_and_the_largest_listed(client):
    reply = client.post("/api/paths", json={"source": CHAIN_10_30, "leaf": "x0", "limit": 3})
    assert reply.status_code == 200
    body = reply.json()
    assert body["count"] == str(3**63) and len(body["count"]) == 31 and body["count_exact"] is True
    assert body["complete"] is False and len(body["paths"]) == 3
